/* ptflame - record/emu_out.h: what both emulators of `record --emulate`
 * (the ptrace stepper, record/emulate.c, and the qemu backend,
 * record/qemu.c) write the same way: the perf.data header of an emulated
 * intel_pt recording, AUX chunks of a virtual CPU's PT encoder (with the
 * --drop-aux loss simulation), sample ids, truth-log lines, and which
 * syscalls block. Internal header of the record room. */
#ifndef PTFLAME_RECORD_EMU_OUT_H
#define PTFLAME_RECORD_EMU_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "record/perfwriter.h"
#include "record/ptenc.h"

#define RC_EMU_PT_ID_BASE 0x1000u    /* sample id of the intel_pt event on cpu c */
#define RC_EMU_DUMMY_ID_BASE 0x2000u /* sample id of the sideband event on cpu c */
#define RC_EMU_WAKE_ID_BASE 0x3000u  /* sample id of the wake event on cpu c */

struct dc_sample_id rc_emu_sid(unsigned cpu, bool pt, pid_t pid, pid_t tid, uint64_t t);

/* attrs (intel_pt + dummy sideband + sched:sched_waking unless !WAKES
 * (--no-wakers), one id per CPU), AUXTRACE_INFO,
 * TIME_CONV, nr_cpus, cmdline (when CMDLINE). 0 or a negative errno code
 * (the writer's message says why). */
int rc_emu_header(struct rc_perf_writer *w, const struct rc_ptenc_config *ecfg, unsigned ncpu,
		  const char *const *cmdline, size_t argc, bool wakes);

/* A wake record (perfwriter.h, "wake records") and its truth line
 * "<t> <cpu> <pid> <tid> wake <wakee_tid>": traced thread PID/TID, on CPU
 * CPU at time T, ended a wait of traced thread WAKEE (named WAKEE_COMM,
 * last on TARGET_CPU). Returns 0 or a writer error. */
int rc_emu_wake(struct rc_perf_writer *w, FILE *truth, unsigned cpu, pid_t pid, pid_t tid,
		uint64_t t, pid_t wakee, const char *wakee_comm, int target_cpu);

/* Where AUX chunks go: shared by all CPUs of a recording. */
struct rc_emu_auxsink {
	struct rc_perf_writer *w;
	FILE *truth;           /* drop-aux lines; may be NULL */
	uint64_t chunk;        /* bytes per AUXTRACE record */
	uint64_t drop_aux;     /* drop every Nth chunk; 0: never */
	uint64_t chunks;       /* chunks handed out so far */
	uint64_t bytes;        /* PT bytes produced (incl. dropped) */
};

/* One CPU's AUX queue. */
struct rc_emu_auxq {
	struct rc_ptenc *enc;
	unsigned cpu;
	uint64_t aux_off;      /* bytes of this queue already handed out */
	bool skip_to_psb;      /* --drop-aux: losing bytes up to the next PSB */
};

/* Hand out Q's encoded bytes as an AUX chunk once there are sink->chunk of
 * them (all of them when FINAL); PID/TID/NOW stamp the AUX record. 0,
 * -ENOMEM, or a writer error (rc_perf_errmsg). */
int rc_emu_drain(struct rc_emu_auxsink *sink, struct rc_emu_auxq *q, bool final, pid_t pid,
		 pid_t tid, uint64_t now);

/* One truth line "<t> <cpu> <pid> <tid> <fmt...>" (nothing when F is NULL). */
void rc_emu_truth(FILE *f, uint64_t t, int cpu, pid_t pid, pid_t tid, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* CLOCK_MONOTONIC in nanoseconds: where a recording's virtual time starts. */
uint64_t rc_emu_mono_ns(void);

/* Stopped (SIGINT/SIGTERM/-d), the program was sent SIGTERM and has not
 * exited RC_TERM_NOTE_NS later: one note on stderr says what record waits
 * for and that a second Ctrl-C kills it (SIGKILL); what was recorded so
 * far is kept either way. PROG: the program's name (NULL: "the program"). */
#define RC_TERM_NOTE_NS 1500000000ull
void rc_note_term_wait(const char *prog, pid_t pid);

/* May syscall NR (arguments A1, A2; CLONE3_FLAGS: clone3's flags) block
 * (the thread leaves its CPU while the kernel runs it)? */
bool rc_emu_may_block(long nr, uint64_t a1, uint64_t a2, uint64_t clone3_flags);
bool rc_emu_yields(long nr);
/* Does syscall NR (arguments A1..A3) send SIGKILL, which no process can
 * catch (qemu-user neither: its host process dies at once, no plugin
 * callback)? 1: to process *PID (kill, tgkill, rt_sigqueueinfo,
 * rt_tgsigqueueinfo; *PID 0: the caller's process group, the caller's
 * process among them), 2: to thread *TID (tkill), 0: neither. */
int rc_emu_sigkill_target(long nr, uint64_t a1, uint64_t a2, uint64_t a3, pid_t *pid, pid_t *tid);
/* Is futex op OP (FUTEX_CMD_MASK applied by the callee) a wake? */
bool rc_emu_futex_wakes(int op);

/* --- the virtual-CPU scheduler of both emulators (record/emu_sched.c) ---
 * Threads wait ready, run on virtual CPUs, leave them (block, preempt,
 * exit). The rules (emulate.h, "Scheduling"): an idle CPU takes the thread
 * ready earliest (FIFO among equals), a whole switch after it became ready;
 * of several idle CPUs the one that starts it soonest (its clock the
 * earliest, none before the thread's ready time); a CPU whose thread leaves
 * takes a thread ready by its own clock at once, RC_EMU_SWITCH_NS later,
 * unless an idle CPU would have started that thread earlier (that one
 * takes it: no ready thread waits while a CPU idles), else idles; switch
 * records are stamped half a switch before the new thread runs. A backend embeds struct rc_emu_sthr
 * as the first member of its thread and keeps its CPUs in sched.cpu. */
enum rc_emu_tstate {
	RC_EMU_NEW,        /* not seen running yet (stepper) */
	RC_EMU_NATIVE,     /* runs untraced or in the kernel (off every CPU) */
	RC_EMU_BLOCKED,    /* in a blocking syscall (qemu backend) */
	RC_EMU_READY,
	RC_EMU_ONCPU,
	RC_EMU_GONE
};

struct rc_emu_sthr {
	pid_t pid, tid;
	enum rc_emu_tstate state;
	int cpu;               /* CPU when ONCPU (a backend may keep it longer) */
	uint64_t ready_ns;     /* ready since (virtual ns) */
	uint64_t seq;          /* FIFO order among equally ready threads */
	uint64_t slice_used;   /* instructions since its switch-in */
};

struct rc_emu_cpu {
	struct rc_emu_auxq q;      /* its encoder and AUX queue */
	uint64_t now;              /* its virtual clock */
	struct rc_emu_sthr *cur;   /* the thread on it, NULL: idle */
	bool on;                   /* encoder tracing (PacketEn) */
	bool itrace_started;
	bool idle_out_pending;     /* next switch-in comes from the idle task */
	uint64_t ovf_mark;         /* --inject-ovf: next overflow at this packet count */
	uint64_t irq_left;         /* --inject-interrupts: instructions to the next */
	uint64_t rng;              /* its random state */
};

struct rc_emu_sched {
	struct rc_emu_cpu *cpu;    /* ncpu of them (rc_emu_start) */
	unsigned ncpu;
	struct rc_emu_sthr **thr;  /* every thread ever added */
	size_t nthr, cthr;
	uint64_t seq;
	const bool *stop;          /* when *stop, a leaving thread's CPU idles */
	/* Busy CPUs whose clock is behind (a backend that does not step the
	 * smallest clock first: qemu) may yet idle before a ready thread's
	 * start elsewhere: no CPU takes a ready thread before they caught up
	 * (rc_emu_assign_idle waits, a leaving CPU idles, a preemption waits),
	 * unless nowait (the backend cannot make them go on: no more data). */
	bool nowait;
	struct rc_perf_writer *w;
	struct rc_emu_auxsink *sink;
	FILE *truth;
	/* T is now on CPU c (state ONCPU, its switch records and truth
	 * "switch-in" written at RT = now - RC_EMU_SWITCH_NS / 2): the backend
	 * announces mappings, may enable the trace. 0 or the backend's
	 * failure (negative). */
	int (*switched_in)(void *ctx, unsigned c, struct rc_emu_sthr *t, uint64_t rt);
	void *ctx;
	uint64_t irq_rate;         /* rc_emu_irq_init */
};

struct rc_emu_opts;

/* What both backends set up alike from O (emulate.h), the recording
 * starting at virtual time VSTART: SINK's chunk size and loss simulation,
 * the PT encoder configuration ECFG, the virtual CPUs in s->cpu, s->ncpu
 * (each with its encoder, clock and --inject-ovf mark), interrupts, the
 * truth log TRUTH (may be NULL: its header line written, set in s and
 * SINK) and the perf.data writer in s->w and SINK. 0, or a negative errno
 * with ERR saying why. rc_emu_sched_free frees the CPUs. */
int rc_emu_start(struct rc_emu_sched *s, struct rc_emu_auxsink *sink,
		 struct rc_ptenc_config *ecfg, const struct rc_emu_opts *o, uint64_t vstart,
		 FILE *truth, char *err, size_t errlen);

/* Functions returning int: 0, -ENOMEM, a writer error (rc_perf_errmsg) or
 * what switched_in returned. */
int rc_emu_sched_add(struct rc_emu_sched *s, struct rc_emu_sthr *t);
/* The thread list, the CPUs and their encoders. */
void rc_emu_sched_free(struct rc_emu_sched *s);
/* T is ready from WHEN on (its cpu is left as it is). */
void rc_emu_make_ready(struct rc_emu_sched *s, struct rc_emu_sthr *t, uint64_t when);
/* The ready thread to run next: earliest ready, then FIFO; with LIMIT only
 * one ready by NOW. NULL: none. */
struct rc_emu_sthr *rc_emu_pick_ready(const struct rc_emu_sched *s, bool limit, uint64_t now);
/* T goes on CPU c at its clock, after PREV (0 0: the idle task). */
int rc_emu_switch_in(struct rc_emu_sched *s, unsigned c, struct rc_emu_sthr *t, pid_t prev_pid,
		     pid_t prev_tid);
/* The thread on CPU c leaves it (its trace already disabled; PREEMPT: it
 * stays ready): first the ready threads an idle CPU starts before c's
 * clock go there (rc_emu_assign_idle's choice); then switch-out, and the
 * next thread ready by the CPU's clock switches in a switch later; else
 * the CPU idles. */
int rc_emu_cpu_leave(struct rc_emu_sched *s, unsigned c, bool preempt);
/* CPU c's encoded bytes as an AUX chunk (rc_emu_drain), stamped with the
 * thread on it and its clock. */
int rc_emu_cpu_drain(struct rc_emu_sched *s, unsigned c, bool final);
/* The recording stops at END, before the program ended: each CPU's last
 * AUX record (of no data, after the final drain) is stamped then, as the
 * kernel's is when tracing is disabled, so that a reader knows until when
 * the threads still waiting waited. */
int rc_emu_stop_at(struct rc_emu_sched *s, uint64_t end);
/* Idle CPUs take the earliest ready threads (their clocks jump forward),
 * each the idle CPU that starts it soonest: max(clock, ready time) the
 * smallest, the lowest index among equals. */
int rc_emu_assign_idle(struct rc_emu_sched *s);
/* Is a preemption of the thread on CPU c due (its time slice is used)?
 * First the ready threads an idle CPU starts before c's clock go there;
 * then 1 when a thread ready by c's clock remains, else 0; <0: error. */
int rc_emu_preempt_due(struct rc_emu_sched *s, unsigned c);
/* --inject-interrupts RATE: asynchronous exits (a timer or device interrupt,
 * a page fault) of the thread on a CPU, as a user-only trace shows them:
 * FUP at the next instruction + TIP.PGD (IP suppressed), the kernel runs
 * for a dwell of RC_EMU_IRQ_MIN_NS..RC_EMU_IRQ_MAX_NS (uniform), then
 * TIP.PGE at the same instruction; truth lines "interrupt <ip>" and
 * "iret <ip>". Each CPU counts the instructions it retires; the gap to the
 * next exit is uniform in 1..2M-1 instructions (mean M = 10^6 / RATE).
 * Random choices come from SEED and the CPU number only, so a recording is
 * repeatable where its schedule is. */
#define RC_EMU_IRQ_MIN_NS 1000u
#define RC_EMU_IRQ_MAX_NS 10000u
void rc_emu_irq_init(struct rc_emu_sched *s, uint64_t rate, uint64_t seed);
/* CPU c retired N more instructions. */
void rc_emu_irq_count(struct rc_emu_sched *s, unsigned c, uint64_t n);
/* The exit, when one is due, of CPU c's thread (tracing, next instruction
 * at IP): 1 if it came, 0 if none was due, or a negative error (an
 * encoder's, -ENOMEM, a writer's). */
int rc_emu_irq_at(struct rc_emu_sched *s, unsigned c, uint64_t ip);
/* The latest clock of all CPUs: the time of a thread that is on none. */
uint64_t rc_emu_latest_now(const struct rc_emu_sched *s);

#endif
