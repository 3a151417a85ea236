/* ptflame - record/emulate.h: the ptrace emulator of Intel PT recording
 * (`ptflame record --emulate`). Internal header of the record room; cmd/
 * calls rc_emulate().
 *
 * The emulator forks/execs PROG (or attaches to a PID) under ptrace, runs
 * it natively to a start symbol, then single-steps every thread. Threads
 * are scheduled deterministically onto N virtual CPUs; each CPU has its own
 * PT encoder (ptenc.h) and its own AUX queue (idx = cpu). Time is virtual:
 * ns_per_insn per instruction plus the measured duration of each syscall.
 * The output is a perf.data file as `perf record -e intel_pt//u` (per-CPU
 * mode) writes it: intel_pt attr + dummy sideband attr, AUXTRACE_INFO,
 * AUXTRACE chunks, AUX, ITRACE_START, COMM, MMAP2, FORK, EXIT and
 * SWITCH_CPU_WIDE records.
 *
 * Scheduling (deterministic given the same program behaviour; the CPU side
 * is record/emu_sched.c, which the qemu backend shares):
 *  - the CPU with the smallest virtual clock that has a thread steps next;
 *  - a thread that issues a syscall which may block (futex wait, sleeps,
 *    waits, poll, read, ...) or exit/execve/vfork leaves its CPU (plain
 *    switch-out) and runs natively in the kernel; when it returns after d
 *    real nanoseconds it is ready at (virtual issue time + d), except a
 *    futex wait that a traced thread's futex wake (or exit) ended: it is
 *    ready at the virtual time of that wake (real time runs ~10^5 times
 *    faster than virtual time while stepping);
 *  - other syscalls are stepped in place; the CPU's clock advances by their
 *    measured duration less the average cost of a ptrace step;
 *  - a thread that used its time slice is preempted (switch-out with the
 *    PREEMPT bit) when another thread is ready;
 *  - an idle CPU takes the ready thread with the earliest ready time; of
 *    several idle CPUs, the one that starts it soonest (wake-up balancing),
 *    and a CPU whose thread leaves (or whose thread's slice is over) takes
 *    no thread that an idle CPU would have started earlier (idle
 *    balancing): no ready thread waits while a CPU idles, beyond the
 *    switch;
 *  - a context switch costs RC_EMU_SWITCH_NS of virtual time; a switch-out
 *    (or EXIT) after an asynchronous TIP.PGD (preemption, fatal signal,
 *    stop) is stamped 1 ns after it, never at the same time (perf handles
 *    a sideband record before trace data of equal time).
 *
 * Start symbol: a breakpoint (int3) at it. Every thread runs natively until
 * its own first arrival there, and so do the threads (and, with
 * --follow-fork, processes) it creates on the way; a traced thread creates
 * traced ones. The breakpoint stays while a thread of the process is on its
 * way and is removed at the end. A traced thread at it has its original
 * instruction run by the tracer when it is an endbr64 or a register push
 * (the usual function entries), so the breakpoint never leaves memory;
 * any other instruction is put back for one single-step, and a thread
 * arriving during that step is missed.
 *
 * Asynchronous exits: --inject-interrupts RATE (emu_out.h, rc_emu_irq_at)
 * stops the running thread's trace before its next instruction with FUP +
 * TIP.PGD, as an interrupt or a fault in user mode does, for a random
 * kernel dwell, then TIP.PGE at the same instruction; the thread stays on
 * its CPU (a preemption may follow, as usual). The qemu backend takes them
 * between blocks (the next block's first instruction).
 *
 * Loss simulation: --inject-ovf N puts an OVF (+FUP) into the CPU's trace
 * each time that encoder has emitted N more packets. --drop-aux N drops
 * every Nth AUX chunk (counted over all CPUs, 1-based: chunks N, 2N, ...):
 * its bytes are not written, nor those after it up to the next PSB (as on
 * hardware, where tracing restarts with a PSB after an overflow of the
 * buffer); a PERF_RECORD_AUX record with PERF_AUX_FLAG_TRUNCATED covers
 * each lost range, and the next AUXTRACE record of that queue starts at
 * the offset after the hole.
 *
 * --- Truth log (--truth FILE), also described in tests/TRUTH.md ---------
 * Text, one event per line:  <time_ns> <cpu> <pid> <tid> <event> [args]
 * time_ns: virtual perf-clock ns (an instruction retiring at t is stamped
 * t); cpu: virtual CPU or -1; addresses 0x-hex. Events:
 *   start <ip>                  first traced instruction of the thread
 *   call <from> <to>            call insn at from retired, target to
 *   ret <from> <to>             ret at from retired, back to to
 *   jump <from> <to>            jmp, or a conditional branch taken, into
 *                               another function (symbol ranges; PLT
 *                               entries are functions of their own)
 *   syscall <nr> <ip>           syscall insn at ip issued with rax = nr
 *   sysret <nr> <ip>            back in user mode at ip
 *   signal <signo> <from> <to>  handler entry at to; thread was at from
 *   sigreturn <ip>              rt_sigreturn done, resumed at ip
 *   interrupt <ip> / iret <ip>  --inject-interrupts: an asynchronous exit
 *                               at ip (FUP + TIP.PGD), back there (PGE)
 *   switch-out preempt|block    leaves cpu;  switch-in: put on cpu
 *   clone <ptid> | fork <ppid> <ptid> | exec <path> | comm <name>
 *   mmap <start> <len> <pgoff> <path>   executable mapping of pid
 *   ovf <ip> | drop-aux <offset> <size> | stop | exit
 *   wake <wakee_tid>            this thread (the waker) ended a traced
 *                               wait of wakee_tid (its sched:sched_waking
 *                               sample in the file has the same time)
 * Per thread the lines are in time order, except "wake" lines: written
 * when the wakee's wait ends, stamped with the waker's time.
 *
 * --dump-insns FILE: every stepped (retired) instruction, one line
 * "<tid> <ip_hex>" in stepping order (per thread in program order).
 */
#ifndef PTFLAME_RECORD_EMULATE_H
#define PTFLAME_RECORD_EMULATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/procmaps.h"

struct rc_emu_opts {
	const char *output;        /* perf.data path (required) */
	int compress;              /* zstd level of the sideband (0: none)  */
	const char *start_sym;     /* NULL: "main", or from exec in a program
	                              without main; "": trace from exec */
	uint64_t max_insns;        /* stop tracing after this many; 0: no limit */
	unsigned cpus;             /* virtual CPUs, >= 1 */
	uint64_t ns_per_insn;      /* >= 1 */
	uint64_t slice_insns;      /* time slice in instructions; 0: default */
	const char *truth_path;    /* NULL: none */
	const char *dump_insns_path; /* NULL: none */
	bool follow_fork;          /* trace fork children too */
	bool no_wakers;            /* no wake records (nor truth wake lines) */
	uint64_t inject_ovf;       /* OVF every N packets per CPU; 0: off */
	uint64_t drop_aux;         /* drop every Nth AUX chunk; 0: off */
	uint64_t irq_rate;         /* --inject-interrupts: asynchronous exits per
				    * million instructions (mean); 0: off */
	uint64_t seed;             /* of the random choices of irq_rate */
	uint64_t psb_period;       /* 0: encoder default */
	uint64_t aux_chunk;        /* AUX chunk size in bytes; 0: RC_EMU_AUX_CHUNK */
	bool cyc;                  /* emit CYC packets */
	bool mtc_period_set;       /* mtc_period given (else perf's default 3) */
	unsigned mtc_period;       /* MTC every 2^N CTC ticks, 0..15 */
	pid_t pid;                 /* > 0: attach to this process */
	char *const *argv;         /* PROG and args when pid == 0 */
	const char *const *cmdline; /* our own command line (HEADER_CMDLINE) */
	/* set asynchronously (SIGINT) to stop tracing as --max-insns does;
	 * may be NULL */
	volatile const int *interrupted;
	size_t cmdline_argc;
};

#define RC_EMU_DEFAULT_SLICE 4000u
#define RC_EMU_AUX_CHUNK 4096u
/* Virtual cost of a context switch: the next thread's trace starts (PGE)
 * this long after the previous one's ended; the switch records (and the
 * MMAP2/COMM the new thread needs) are stamped half-way. So a decoder whose
 * time at a PGE is up to one MTC period early (no CYC: 256 ns) still sees
 * the switch before the new thread's packets, and never confuses the two
 * threads' trace by time. */
#define RC_EMU_SWITCH_NS 1000u

/* The clock of an idle virtual CPU (at NOW) that switches in a thread ready
 * since READY_NS: a whole switch after both, so that a thread preempted on
 * another CPU is never switched in here (its switch-in record is stamped
 * half a switch back) before its switch-out there. Both emulators use it. */
static inline uint64_t rc_emu_idle_switch_in(uint64_t now, uint64_t ready_ns)
{
	return (now > ready_ns ? now : ready_ns) + RC_EMU_SWITCH_NS;
}

struct rc_emu_stats {
	uint64_t insns;            /* instructions stepped */
	uint64_t threads;          /* threads traced */
	uint64_t aux_bytes;        /* PT bytes produced (incl. dropped) */
	double seconds;            /* wall time of the traced part */
	int exit_status;           /* of PROG (wait status), -1 if unknown */
	uint64_t execs_untraced;   /* processes whose execve left the trace
	                              (the qemu backend cannot follow one) */
	uint64_t forks_untraced;   /* processes forked (fork, vfork, clone
	                              without CLONE_THREAD) that ran untraced:
	                              no --follow-fork */
	uint64_t from_exec;        /* programs traced from exec because the
	                              default start symbol, main, is not in
	                              them (stripped); the first one's path: */
	char from_exec_path[256];
};

/* The default start symbol is missing from PATH: note it in STATS, which
 * then trace it from exec. */
void rc_emu_note_from_exec(struct rc_emu_stats *stats, const char *path);

/* Record. Returns 0, or a negative errno code with a one-line message in
 * err (no output file is left behind then). */
int rc_emulate(const struct rc_emu_opts *opts, struct rc_emu_stats *stats,
	       char *err, size_t errlen);

/* --- internals shared by the emulate*.c files ---------------------------- */

/* Symbol tables of mapped ELF files, to tell functions apart (truth
 * "jump") and to find the start symbol. */
struct rc_emu_syms;
struct rc_emu_syms *rc_emu_syms_new(void);
void rc_emu_syms_free(struct rc_emu_syms *s);
/* A key naming the function holding ADDR in MAP (map may be NULL): equal
 * keys = same function. */
uint64_t rc_emu_func_key(struct rc_emu_syms *s, const struct rc_map *map,
			 uint64_t addr);
/* Runtime address of SYM in the file mapped by MAPS (path PATH); 0 if
 * absent. SYM is a symbol name, or a demangled C++/Rust name: whole
 * ("ns::f(int)") or up to its '(' ("ns::f": the first such overload). */
uint64_t rc_emu_sym_addr(struct rc_emu_syms *s, const struct rc_map *maps,
			 size_t n, const char *path, const char *sym);
/* Has the ELF file PATH the symbol SYM (as rc_emu_sym_addr finds it)? */
bool rc_emu_has_sym(struct rc_emu_syms *s, const char *path, const char *sym);

#endif
