/* ptflame - record/qemu.h: the qemu-user backend of `ptflame record
 * --emulate` (internal header of the record room; cmd/ calls it).
 *
 * PROG runs under qemu-x86_64 with our TCG plugin (record/qemu_plugin.c),
 * which streams the guest's executed blocks, syscalls, new threads and
 * processes and code mappings over a pipe (record/qemu_proto.h). This side
 * replays the stream per guest thread on virtual CPUs, with the stepper's
 * output layer (record/emu_out.h, record/ptenc.h): PT packets, sideband,
 * truth log, perf.data, as `ptflame record --emulate=ptrace` writes them.
 *
 * Model (what a decoder and the truth log see):
 *  - a block's instructions retire one per ns_per_insn; only its last
 *    instruction can branch (x86 TCG ends blocks at every control
 *    transfer), and where it went is the next block's address;
 *  - a rep-string instruction repeated by qemu (its block starts again at
 *    the same address) retires once;
 *  - an instruction after a block's first that reaches onto another page
 *    than the block's first byte (its whole length, decoded from guest
 *    memory the plugin reads) is not the block's: qemu lists it but ends
 *    the block before it and runs it as the first of a block of its own;
 *    the block has one instruction fewer and falls through;
 *  - a transfer the last instruction does not explain (after a syscall, a
 *    non-branch or a direct branch) is a signal delivery to a handler the
 *    guest installed (rt_sigaction): FUP + TIP.PGD at the interrupted
 *    instruction, TIP.PGE at the handler; a conditional branch before it
 *    went where the handler's rt_sigreturn resumes (read ahead); so is
 *    a handler's entry after a ret (a fault in the block, or a signal
 *    after it: no ret goes to a function's entry), or after an indirect
 *    call or jump whose block the handler's rt_sigreturn resumes in (else
 *    that is a call of the handler through a pointer). Where rt_sigreturn
 *    resumes inside the block (not where its last instruction goes), the
 *    instruction there faulted: FUP there, and neither it nor the rest of
 *    the block retired, nor did their time pass (the plugin sends each
 *    block's instruction lengths to find how many came before it); a
 *    handler that never returns (siglongjmp) after a block ending in a
 *    ret is placed at the ret, which did not retire; a handler whose
 *    rt_sigreturn resumes at
 *    its own entry was entered by a second signal delivered with the
 *    first (qemu, as the kernel, sets up every pending one at once): two
 *    signals, the second at the handler's first instruction;
 *  - virtual time: per virtual CPU as in the stepper (emulate.h); guest
 *    threads run in parallel under qemu, so each thread's events are
 *    replayed in its own order, and threads meet only where they synchronise:
 *    a new thread or process is ready at its creator's clone/fork time, a
 *    futex wait that a traced wake (or thread exit) ended is ready at that
 *    wake's virtual time (the latest wake of the same futex that entered the
 *    pipe between the wait's entry and its return), a read of a pipe,
 *    socket or eventfd, a poll/select/epoll_wait, an accept, a signal
 *    wait or a syscall a signal interrupted at the traced write, close,
 *    connect or signal that ended it (DESIGN.md section 6), any other
 *    blocking syscall lasts its measured duration; syscalls that do not block stay
 *    on the CPU for their measured duration;
 *  - threads run natively (their blocks are dropped) until their first
 *    arrival at the start symbol; threads created by a traced thread are
 *    traced from their first block; forked processes only with
 *    --follow-fork; execve leaves qemu (the new program runs untraced:
 *    the thread's trace stops at the syscall; record warns); a "#!"
 *    script runs under its interpreter, "#!/usr/bin/env NAME" under NAME
 *    found on PATH when that is an ELF file (env's own exec would leave
 *    qemu); argv[0] is the name given (qemu's -0), not the path run.
 */
#ifndef PTFLAME_RECORD_QEMU_H
#define PTFLAME_RECORD_QEMU_H

#include <stdbool.h>
#include <stddef.h>

#include "record/emulate.h"

/* The qemu-x86_64 to run (PATH lookup) or NULL when none is installed. */
char *rc_qemu_find(void);

/* Record OPTS->argv under qemu-user (opts->pid must be 0). As rc_emulate. */
int rc_qemu_emulate(const struct rc_emu_opts *opts, struct rc_emu_stats *stats, char *err,
		    size_t errlen);

#endif
