/* ptflame - the branch event: the seam between decoder/ and stackrebuild/.
 *
 * Plain data, no libipt or perf.data types. Both the PT decoder and the
 * `perf script` text importer produce these; the per-thread stack machine
 * consumes them in time order per thread.
 */
#ifndef PTFLAME_BRANCH_H
#define PTFLAME_BRANCH_H

#include <stdint.h>

enum dc_ev_kind {
	DC_EV_CALL = 1,     /* from_ip: the call insn, to_ip: callee entry      */
	DC_EV_RETURN,       /* from_ip: the ret insn,  to_ip: return address    */
	DC_EV_JUMP,         /* a jump that leaves the current function
	                       (tail call, PLT stub -> target); replaces top    */
	DC_EV_TRACE_ON,     /* tracing (re)starts at to_ip; reason dc_on_reason */
	DC_EV_TRACE_OFF,    /* tracing stops after from_ip; reason dc_off_reason */
	DC_EV_LOST,         /* data lost; reason dc_lost_reason. The stack is
	                       unreliable until the next event with an ip.     */
	DC_EV_INLINE,       /* execution went on, with no other event, at to_ip
	                       whose inline context (decoder/inline.c: which
	                       inlined function instances hold the address)
	                       differs from the instruction before; only when
	                       asked for (dc_session_opts.inline_frames)      */
};

/* Why tracing stopped. SWITCH/PREEMPT come from sideband (context switch
 * records), the others from the trace (TIP.PGD, FUP+TIP.PGD, end of data). */
enum dc_off_reason {
	DC_OFF_SYSCALL = 1, /* user-only trace entered the kernel by syscall   */
	DC_OFF_FAULT,       /* interrupt, fault, or other async kernel entry   */
	DC_OFF_SWITCH,      /* thread switched out, blocked (voluntary)        */
	DC_OFF_PREEMPT,     /* thread switched out while runnable (preempted)  */
	DC_OFF_END,         /* end of trace for this thread (exit, stop)       */
	DC_OFF_UNTRACED,    /* stopped for a reason the input does not give
	                       (perf script's bare "tr end" with the thread
	                       resuming elsewhere); it resumes later          */
	DC_OFF_KERNEL,      /* in kernel code that cannot be decoded (a user+
	                       kernel trace without a kernel image) since
	                       tracing started or synchronised: from_ip 0      */
};

enum dc_on_reason {
	DC_ON_START = 1,    /* first event of the thread / trace enabled       */
	DC_ON_RESUME,       /* back to user mode (sysret, iret, sigreturn)     */
	DC_ON_SWITCH,       /* thread switched in                              */
	DC_ON_SYNC,         /* resynchronised after a loss (PSB)               */
};

enum dc_lost_reason {
	DC_LOST_OVF = 1,    /* internal buffer overflow packet                 */
	DC_LOST_TRUNCATED,  /* AUX data dropped (PERF_RECORD_AUX TRUNCATED)    */
	DC_LOST_DECODE,     /* decoder error; resynced at next PSB             */
	DC_LOST_UNDECODED,  /* code that cannot be decoded (its binary missing
	                       or not the one recorded): nothing is known of
	                       the stack until the next sync (TIP.PGE, PSB)    */
	DC_LOST_RETURN,     /* a return at from_ip to a place not known (its
	                       call unseen: decoding went on at a TIP.PGE/TIP after
	                       such code): that frame ends, then as UNDECODED */
};

/* Kernel code (x86-64's upper half). Branches between kernel addresses
 * are the kernel's own calls and returns (a trace with kernel code: perf
 * script text that prints them, perf.data with --kernel); a TRACE_ON to a
 * kernel address means the trace (re)starts in the kernel; a TRACE_OFF
 * (SYSCALL/FAULT) may carry the kernel entry point as to_ip. */
#define DC_KERNEL_START 0xffff800000000000ull
static inline int dc_ip_is_kernel(uint64_t ip)
{
	return ip >= DC_KERNEL_START;
}

/* reason of a CALL, RETURN or JUMP: flags. */
#define DC_BR_JUMPS_SEEN 1  /* its producer emits every jump that leaves a
	                       function (perf script text with jmp/jcc lines):
	                       a branch from outside the top frame's function
	                       got there by falling through (a label or alias
	                       inside it), no call: the same frame            */

struct dc_event {
	uint64_t time_ns;   /* perf clock                                      */
	uint64_t from_ip;   /* 0 when unknown                                  */
	uint64_t to_ip;     /* 0 when unknown                                  */
	uint32_t pid;       /* process (for symbol lookup)                     */
	uint32_t tid;
	uint16_t cpu;
	uint8_t kind;       /* enum dc_ev_kind                                 */
	uint8_t reason;     /* dc_off_reason / dc_on_reason / dc_lost_reason   */
	uint32_t sysno;     /* syscall number for DC_OFF_SYSCALL, else 0; with
	                       UINT32_MAX meaning "unknown"                     */
	uint32_t inl;       /* inline context of to_ip plus one, when the
	                       producer knows it (the PT decoder with
	                       inline_frames); 0: the symbolizer is asked      */
};

#endif
