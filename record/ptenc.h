/* ptflame - record/: the Intel PT packet encoder of the emulator (internal
 * header of the record room).
 *
 * The ptrace stepper tells the encoder, per virtual CPU, which user-mode
 * instruction retired where it went and at what virtual time; the encoder
 * emits the packets an Intel PT unit configured like `perf record -e
 * intel_pt//u` would (user-only tracing, OS=0), with libipt's encoder.
 *
 * Time: the stepper speaks nanoseconds on the perf clock. The encoder runs a
 * virtual TSC at RC_PTENC_TSC_PER_NS ticks per ns, counted from
 * config.time_zero (tsc = (ns - time_zero) * RC_PTENC_TSC_PER_NS), a crystal
 * clock (CTC) at tsc / RC_PTENC_TSC_PER_CTC and a core clock equal to the TSC
 * (CBR == max non-turbo ratio), so perf and libipt turn TSC/MTC/CYC back
 * into the same nanoseconds with rc_ptenc_perf_info()'s conversion.
 *
 * What decoders get back (checked by tests/unit/test_ptenc.c with libipt
 * and tests/e2e/ptenc with perf script): exactly the instruction sequence
 * passed in; for every branch that has a packet of its own (conditional
 * branch, return, indirect call/jump) a time within one MTC period
 * (2^mtc_freq * RC_PTENC_TSC_PER_CTC / RC_PTENC_TSC_PER_NS ns, 256 ns at
 * mtc_freq 3) of the ns passed in. Direct calls/jumps have no packet: their
 * time is their neighbours' (as with real hardware).
 *
 * AUXTRACE_INFO: rc_ptenc_perf_info's *_bit fields are attr.config MASKS
 * (as perf stores them: tsc_bit = 1 << 10, mtc_freq_bits = 0xf << 14).
 */
#ifndef PTFLAME_RECORD_PTENC_H
#define PTFLAME_RECORD_PTENC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <capstone/capstone.h>

struct pt_config;

/* --- instruction classification ----------------------------------------- */

enum rc_insn_class {
	RC_INSN_OTHER,    /* no control flow change (or rep/string: falls through) */
	RC_INSN_JCC,      /* conditional direct branch incl. jrcxz/loop: one TNT bit */
	RC_INSN_JMP,      /* direct unconditional jump: no packet */
	RC_INSN_JMP_IND,  /* indirect jump: TIP */
	RC_INSN_CALL,     /* direct call: no packet, pushes the return-compression stack */
	RC_INSN_CALL_IND, /* indirect call: TIP, pushes the return-compression stack */
	RC_INSN_RET,      /* near return: TNT bit (compressed) or TIP */
	RC_INSN_SYSCALL,  /* syscall/sysenter: TIP.PGD (IP suppressed) */
	RC_INSN_FAR,      /* far call/jmp/ret, iret staying in user mode: TIP */
	RC_INSN_INT,      /* int n/int3/int1/into: FUP(ip) + TIP.PGD, as for an interrupt
			   * (decoders then do not show the int instruction itself) */
};

struct rc_insn {
	uint64_t ip;      /* address of the instruction */
	uint64_t next_ip; /* where this thread actually went next (fall-through or target) */
	uint64_t target;  /* direct branch target (JCC/JMP/CALL), set by rc_insn_classify; else 0 */
	uint8_t len;      /* instruction length in bytes */
	uint8_t cls;      /* enum rc_insn_class */
};

/* Open a capstone handle suited to rc_insn_classify (x86-64, detail on). */
int rc_insn_cs_open(csh *cs);

/* Decode the instruction at BYTES (N bytes available, at address IP) and
 * fill OUT's ip, len, cls and target (next_ip is left for the caller: it is
 * where the thread went). Returns 0, or -EINVAL if the bytes are no instruction. */
int rc_insn_classify(csh cs, const uint8_t *bytes, size_t n, uint64_t ip,
		     struct rc_insn *out);

/* --- encoder configuration --------------------------------------------- */

#define RC_PTENC_TSC_PER_NS 2u   /* virtual TSC: 2 GHz */
#define RC_PTENC_TSC_PER_CTC 64u /* crystal clock: 31.25 MHz (CPUID.15H: eax=1, ebx=64) */
#define RC_PTENC_CBR 20u         /* core:bus ratio == max non-turbo ratio: core clock == TSC */

struct rc_ptenc_config {
	uint64_t psb_period;  /* bytes between PSB+ (a power of 2, >= 256); 0: 16384 (perf's default) */
	bool mtc;             /* emit MTC (and TMA after each TSC) */
	unsigned mtc_freq;    /* MTC every 2^mtc_freq CTC ticks (perf's mtc_period, 0..15); perf default 3 */
	bool cyc;             /* emit CYC before each CYC-eligible packet */
	bool noretcomp;       /* disable return compression: every RET gives a TIP */
	uint64_t time_zero;   /* perf-clock ns at TSC 0 (must be <= every ns passed in) */
};

/* What perf needs in the PT attr and AUXTRACE_INFO to decode our packets
 * the way we encoded them. */
struct rc_ptenc_perf_info {
	uint64_t attr_config;        /* perf_event_attr.config of the intel_pt event */
	uint32_t time_shift;         /* ns = zero + (tsc>>shift)*mult + (((tsc&((1<<shift)-1))*mult)>>shift) */
	uint32_t time_mult;
	uint64_t time_zero;
	uint32_t tsc_ctc_ratio_n;    /* CPUID.15H ebx */
	uint32_t tsc_ctc_ratio_d;    /* CPUID.15H eax */
	uint32_t max_non_turbo_ratio;
	uint64_t cap_user_time_zero; /* 1 */
	uint64_t tsc_bit;            /* attr.config bit for tsc (perf's INTEL_PT_CONFIG tsc) */
	uint64_t noretcomp_bit;
	uint64_t mtc_bit;
	uint64_t mtc_freq_bits;      /* mask of the MTC period field in attr.config */
	uint64_t cyc_bit;
	uint64_t psb_period_bits;    /* mask of the PSB period field */
};

void rc_ptenc_perf_info(const struct rc_ptenc_config *cfg,
			struct rc_ptenc_perf_info *info);

/* Fill the timing and errata-free cpu fields of a libipt decoder config
 * (cpuid_0x15_eax/ebx, mtc_freq, nom_freq) to match CFG. Does not set
 * begin/end/size (the caller owns those). */
void rc_ptenc_ipt_config(const struct rc_ptenc_config *cfg,
			 struct pt_config *ipt);

/* Time conversions of the virtual clock. */
uint64_t rc_ptenc_ns_to_tsc(const struct rc_ptenc_config *cfg, uint64_t ns);
uint64_t rc_ptenc_tsc_to_ns(const struct rc_ptenc_config *cfg, uint64_t tsc);

/* --- the encoder (one per virtual CPU / AUX queue) ----------------------- */

struct rc_ptenc;

/* Returns NULL on allocation failure or a bad config. CPU is informational. */
struct rc_ptenc *rc_ptenc_new(const struct rc_ptenc_config *cfg, int cpu);
void rc_ptenc_free(struct rc_ptenc *enc);

/* A thread starts/resumes running user code at IP on this CPU at time NS
 * (trace start, return from syscall, signal handler entry, sigreturn,
 * switch-in): TSC(+TMA) if time jumped, PSB+ if due, TIP.PGE(ip). */
int rc_ptenc_enable(struct rc_ptenc *enc, uint64_t ns, uint64_t ip);

/* One retired user-mode instruction, retired at time NS (non-decreasing).
 * RC_INSN_SYSCALL: emits TIP.PGD (the kernel target is not traced) and
 * tracing stays off until rc_ptenc_enable() (return to user at next_ip,
 * signal handler entry, sigreturn target...). RC_INSN_FAR: TIP(next_ip).
 * Calling it while tracing is off is an error (-EINVAL). */
int rc_ptenc_insn(struct rc_ptenc *enc, const struct rc_insn *insn, uint64_t ns);

enum rc_ptenc_off {
	/* A far transfer into the kernel that the stepper saw without passing
	 * the instruction (rc_ptenc_insn does this itself for RC_INSN_SYSCALL):
	 * TIP.PGD with the (kernel) IP suppressed. */
	RC_PTENC_OFF_FAR,
	/* Asynchronous exit at IP (the next instruction, not executed):
	 * interrupt, preemption, signal, fault, thread exit, end of trace:
	 * FUP(ip) then TIP.PGD (IP suppressed). */
	RC_PTENC_OFF_ASYNC,
};

/* Tracing stops for this thread (PacketEn 1->0). IP is used by
 * RC_PTENC_OFF_ASYNC only. Pending TNT bits are flushed first. */
int rc_ptenc_disable(struct rc_ptenc *enc, uint64_t ns, uint64_t ip,
		     enum rc_ptenc_off why);

/* A thread's trace stays on at IP (its next instruction) from NS to UNTIL
 * with no instruction (a stretch no code of its was stepped: a spinning
 * thread's last moments before the recording stopped): a PSB+ at NS (its
 * TSC exact at FUP(IP)), then, halted (no cycles, no MTC), a wake at UNTIL
 * (TSC, TMA, CBR). A decoder so times the last instructions by NS, not by
 * the next timing packet far later (without CYC it fits one rate through
 * a stretch of bounds; with CYC libipt calibrated over the stretch's
 * cycles: either spread the stretch over the branches before it). */
int rc_ptenc_stamp(struct rc_ptenc *enc, uint64_t ns, uint64_t ip, uint64_t until);

/* The traced thread leaves its CPU at NS (in the kernel: PacketEn is off):
 * perf schedules its per-task event out, clearing TraceEn. The MTCs up to
 * NS go out; none while TraceEn is clear (MTC needs TriggerEn). */
int rc_ptenc_trace_off(struct rc_ptenc *enc, uint64_t ns);

/* A traced thread comes on the CPU at NS: its event is scheduled in,
 * TraceEn goes 0 -> 1 and the hardware sends TSC, TMA and CBR (SDM,
 * "Enabling and Disabling Packet Generation with TraceEn"); its TIP.PGE
 * follows at its return to user mode. No-op before the first time packet
 * (the first enable's PSB+ carries the time) or while TraceEn is set. */
int rc_ptenc_trace_on(struct rc_ptenc *enc, uint64_t ns);

/* Simulated internal buffer overflow at NS: OVF, then (if tracing is on)
 * FUP(ip) where IP is the next instruction to execute. Return compression
 * restarts. */
int rc_ptenc_ovf(struct rc_ptenc *enc, uint64_t ns, uint64_t ip);

/* Emit pending TNT bits and pad the buffer to a packet boundary (call
 * before taking the last bytes out). */
int rc_ptenc_flush(struct rc_ptenc *enc);

/* Encoded bytes not yet consumed. The pointer is valid until the next call
 * on ENC. */
const uint8_t *rc_ptenc_data(const struct rc_ptenc *enc, size_t *size);
/* Drop the first N bytes of rc_ptenc_data (moved to an AUXTRACE record). */
void rc_ptenc_consume(struct rc_ptenc *enc, size_t n);

/* Total bytes produced so far, and the TSC of the last timing packet
 * (what the stepper puts into an AUXTRACE record's `reference`; never 0). */
uint64_t rc_ptenc_offset(const struct rc_ptenc *enc);
uint64_t rc_ptenc_last_tsc(const struct rc_ptenc *enc);

/* Packet counter: number of packets emitted (for --inject-ovf N). */
uint64_t rc_ptenc_packets(const struct rc_ptenc *enc);

#endif
