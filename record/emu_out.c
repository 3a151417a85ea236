/* ptflame - record/emu_out.c: the output both emulators share (emu_out.h). */
#include "record/emu_out.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <linux/futex.h>
#include <linux/sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>

#include "record/wake.h"

#define PMU_TYPE_FALLBACK 10u

struct dc_sample_id rc_emu_sid(unsigned cpu, bool pt, pid_t pid, pid_t tid, uint64_t t)
{
	struct dc_sample_id s = { 0 };
	s.pid = (uint32_t)pid;
	s.tid = (uint32_t)tid;
	s.time = t;
	s.cpu = cpu;
	s.id = (pt ? RC_EMU_PT_ID_BASE : RC_EMU_DUMMY_ID_BASE) + cpu;
	return s;
}

void rc_emu_truth(FILE *f, uint64_t t, int cpu, pid_t pid, pid_t tid, const char *fmt, ...)
{
	if (!f)
		return;
	fprintf(f, "%" PRIu64 " %d %d %d ", t, cpu, (int)pid, (int)tid);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
}

static unsigned pmu_type(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/intel_pt/type", "re");
	unsigned t = 0;
	if (f) {
		if (fscanf(f, "%u", &t) != 1)
			t = 0;
		fclose(f);
	}
	return t ? t : PMU_TYPE_FALLBACK;
}

/* The machine's sched_waking id when its tracefs tells it, else
 * RC_WAKE_TP_ID_NONE (readers do not depend on it); read once. */
static uint64_t wake_tp_id(void)
{
	static uint64_t id;
	if (!id)
		rc_wake_tp_id(NULL, &id);
	return id;
}

int rc_emu_wake(struct rc_perf_writer *w, FILE *truth, unsigned cpu, pid_t pid, pid_t tid,
		uint64_t t, pid_t wakee, const char *wakee_comm, int target_cpu)
{
	uint8_t raw[RC_WAKE_RAW_SIZE];
	struct dc_sample_id s = rc_emu_sid(cpu, false, pid, tid, t);
	s.id = RC_EMU_WAKE_ID_BASE + cpu;
	rc_perf_wake_raw(raw, wake_tp_id(), (int32_t)tid, wakee_comm, (int32_t)wakee,
			 RC_WAKE_PRIO_NORMAL, target_cpu >= 0 ? target_cpu : (int)cpu);
	rc_emu_truth(truth, t, (int)cpu, pid, tid, "wake %d", (int)wakee);
	return rc_perf_wake(w, &s, raw);
}

int rc_emu_header(struct rc_perf_writer *w, const struct rc_ptenc_config *ecfg, unsigned ncpu,
		  const char *const *cmdline, size_t argc, bool wakes)
{
	struct rc_ptenc_perf_info pi;
	rc_ptenc_perf_info(ecfg, &pi);
	unsigned type = pmu_type();
	uint64_t *ids = calloc(ncpu, sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	struct perf_event_attr a = { 0 };
	a.type = type;
	a.config = pi.attr_config;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			PERF_SAMPLE_IDENTIFIER;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.enable_on_exec = 1;
	a.sample_id_all = 1;
	for (unsigned c = 0; c < ncpu; c++)
		ids[c] = RC_EMU_PT_ID_BASE + c;
	int rc = rc_perf_add_attr(w, &a, ids, ncpu);
	struct perf_event_attr d = { 0 };
	d.type = PERF_TYPE_SOFTWARE;
	d.config = PERF_COUNT_SW_DUMMY;
	d.sample_period = 1;
	d.sample_type = a.sample_type;
	d.exclude_kernel = 1;
	d.exclude_hv = 1;
	d.mmap = 1;
	d.mmap2 = 1;
	d.comm = 1;
	d.comm_exec = 1;
	d.task = 1;
	d.context_switch = 1;
	d.sample_id_all = 1;
	for (unsigned c = 0; c < ncpu; c++)
		ids[c] = RC_EMU_DUMMY_ID_BASE + c;
	if (rc == 0)
		rc = rc_perf_add_attr(w, &d, ids, ncpu);
	/* wake records: the attr is there even when no wake comes, so that a
	 * reader can tell "recorded, nothing woke" from "not recorded" */
	struct perf_event_attr wk;
	rc_perf_wake_attr(&wk, wake_tp_id());
	for (unsigned c = 0; c < ncpu; c++)
		ids[c] = RC_EMU_WAKE_ID_BASE + c;
	if (rc == 0 && wakes)
		rc = rc_perf_add_attr_named(w, &wk, ids, ncpu, RC_WAKE_EVENT_NAME);
	free(ids);
	struct dc_pt_info pt = { 0 };
	pt.pmu_type = type;
	pt.time_shift = pi.time_shift;
	pt.time_mult = pi.time_mult;
	pt.time_zero = pi.time_zero;
	pt.cap_user_time_zero = pi.cap_user_time_zero;
	pt.tsc_bit = pi.tsc_bit;
	pt.noretcomp_bit = pi.noretcomp_bit;
	pt.have_sched_switch = 3;
	pt.per_cpu_mmaps = 1;
	pt.mtc_bit = pi.mtc_bit;
	pt.mtc_freq_bits = pi.mtc_freq_bits;
	pt.tsc_ctc_ratio_n = pi.tsc_ctc_ratio_n;
	pt.tsc_ctc_ratio_d = pi.tsc_ctc_ratio_d;
	pt.cyc_bit = pi.cyc_bit;
	pt.max_non_turbo_ratio = pi.max_non_turbo_ratio;
	pt.filter = "";
	if (rc == 0)
		rc = rc_perf_auxtrace_info_pt(w, &pt);
	struct dc_rec_time_conv tc = { 0 };
	tc.time_shift = pi.time_shift;
	tc.time_mult = pi.time_mult;
	tc.time_zero = pi.time_zero;
	tc.time_mask = ~0ull;
	tc.cap_user_time_zero = true;
	if (rc == 0)
		rc = rc_perf_time_conv(w, &tc);
	if (rc == 0)
		rc = rc_perf_set_nrcpus(w, ncpu, ncpu);
	if (rc == 0 && cmdline)
		rc = rc_perf_set_cmdline(w, argc, cmdline);
	return rc;
}

/* ---- AUX chunks --------------------------------------------------------- */

static const uint8_t psb_bytes[16] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
};

/* Lose N bytes at the queue's current offset (--drop-aux). */
static int lose(struct rc_emu_auxsink *sink, struct rc_emu_auxq *q, size_t n, pid_t pid,
		pid_t tid, uint64_t now)
{
	struct dc_sample_id s = rc_emu_sid(q->cpu, true, pid, tid, now);
	if (sink->truth)
		fprintf(sink->truth, "%" PRIu64 " %u %d %d drop-aux %" PRIu64 " %zu\n", now, q->cpu,
			(int)pid, (int)tid, q->aux_off, n);
	rc_ptenc_consume(q->enc, n);
	int rc = rc_perf_aux(sink->w, q->aux_off, n, PERF_AUX_FLAG_TRUNCATED, &s);
	q->aux_off += n;
	return rc;
}

/* A chunk ends at a packet boundary (perf 6.1 on 64-bit does not join a
 * packet split across AUXTRACE records) and is padded with PAD packets to
 * a multiple of 8, so the queue's offsets stay contiguous with perf's
 * 8-byte padding. --drop-aux: a lost chunk is followed by the loss of
 * everything up to the next PSB, as on hardware, where tracing restarts
 * with a PSB after the buffer overflowed (perf glues AUXTRACE records
 * together, so a trace resuming mid-stream would decode as garbage). */
int rc_emu_drain(struct rc_emu_auxsink *sink, struct rc_emu_auxq *q, bool final, pid_t pid,
		 pid_t tid, uint64_t now)
{
	size_t avail;
	const uint8_t *d = rc_ptenc_data(q->enc, &avail);
	if (avail == 0 || (!final && avail < sink->chunk))
		return 0;
	if (q->skip_to_psb) {
		size_t k = 0;
		while (k + sizeof(psb_bytes) <= avail && memcmp(d + k, psb_bytes, sizeof(psb_bytes)))
			k++;
		if (k + sizeof(psb_bytes) > avail)
			k = avail;
		else
			q->skip_to_psb = false;
		int rc = k ? lose(sink, q, k, pid, tid, now) : 0;
		if (rc < 0)
			return rc;
		d = rc_ptenc_data(q->enc, &avail);
		if (avail == 0)
			return 0;
	}
	sink->chunks++;
	if (sink->drop_aux && sink->chunks % sink->drop_aux == 0) {
		q->skip_to_psb = true;
		sink->bytes += avail;
		return lose(sink, q, avail, pid, tid, now);
	}
	size_t n = (avail + 7) & ~(size_t)7;
	uint8_t *buf = malloc(n);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, d, avail);
	memset(buf + avail, 0, n - avail);  /* PAD packets */
	rc_ptenc_consume(q->enc, avail);
	sink->bytes += n;
	struct dc_sample_id s = rc_emu_sid(q->cpu, true, pid, tid, now);
	uint64_t ref = rc_ptenc_last_tsc(q->enc);
	int rc = rc_perf_auxtrace(sink->w, buf, n, q->aux_off, ref ? ref : 1, q->cpu,
				  (uint32_t)-1, q->cpu);
	free(buf);
	if (rc == 0)
		rc = rc_perf_aux(sink->w, q->aux_off, n, 0, &s);
	q->aux_off += n;
	return rc;
}

/* ---- syscalls ------------------------------------------------------------ */

bool rc_emu_futex_wakes(int op)
{
	op &= FUTEX_CMD_MASK;
	return op == FUTEX_WAKE || op == FUTEX_WAKE_BITSET || op == FUTEX_WAKE_OP ||
	       op == FUTEX_UNLOCK_PI || op == FUTEX_REQUEUE || op == FUTEX_CMP_REQUEUE;
}

uint64_t rc_emu_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void rc_note_term_wait(const char *prog, pid_t pid)
{
	const char *b = prog ? strrchr(prog, '/') : NULL;

	fprintf(stderr, "ptflame record: note: %s (pid %d) has not exited 1.5 s after SIGTERM "
		"(it may ignore it): waiting for it to exit; Ctrl-C again kills it (SIGKILL), "
		"keeping what is recorded\n", b ? b + 1 : prog ? prog : "the program", (int)pid);
}

/* A thread in sched_yield stays runnable: the kernel marks its switch-out
 * as a preemption (perf's PREEMPT bit: the task is still on the run queue),
 * so its time away shows as [preempted], not as a wait with no wake. */
bool rc_emu_yields(long nr)
{
	return nr == SYS_sched_yield;
}

int rc_emu_sigkill_target(long nr, uint64_t a1, uint64_t a2, uint64_t a3, pid_t *pid, pid_t *tid)
{
	*pid = (pid_t)a1;
	*tid = 0;
	switch (nr) {
	case SYS_kill:
	case SYS_rt_sigqueueinfo:
		/* (-1: every process but the caller's; -PGID another group) */
		return (int)a2 == SIGKILL && (int)a1 >= 0;
	case SYS_tgkill:
	case SYS_rt_tgsigqueueinfo:
		*tid = (pid_t)a2;
		return (int)a3 == SIGKILL && (int)a1 > 0;
	case SYS_tkill:
		*pid = 0;
		*tid = (pid_t)a1;
		return (int)a2 == SIGKILL && (int)a1 > 0 ? 2 : 0;
	}
	return 0;
}

bool rc_emu_may_block(long nr, uint64_t a1, uint64_t a2, uint64_t clone3_flags)
{
	switch (nr) {
	case SYS_futex: {
		int op = (int)a2 & FUTEX_CMD_MASK;
		return op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET || op == FUTEX_LOCK_PI ||
		       op == FUTEX_WAIT_REQUEUE_PI || op == 13 /* FUTEX_LOCK_PI2 */;
	}
	case SYS_clone:
		return (a1 & CLONE_VFORK) != 0;
	case SYS_clone3:
		return (clone3_flags & CLONE_VFORK) != 0;
	case SYS_read: case SYS_readv: case SYS_pread64: case SYS_preadv:
	case SYS_recvfrom: case SYS_recvmsg: case SYS_recvmmsg: case SYS_accept:
	case SYS_accept4: case SYS_connect: case SYS_wait4: case SYS_waitid:
	case SYS_nanosleep: case SYS_clock_nanosleep: case SYS_pause:
	case SYS_rt_sigsuspend: case SYS_rt_sigtimedwait: case SYS_poll: case SYS_ppoll:
	case SYS_select: case SYS_pselect6: case SYS_epoll_wait: case SYS_epoll_pwait:
	case SYS_sched_yield: case SYS_msgrcv: case SYS_semop: case SYS_semtimedop:
	case SYS_flock: case SYS_io_getevents: case SYS_exit: case SYS_exit_group:
	case SYS_execve: case SYS_execveat: case SYS_vfork:
	case SYS_restart_syscall:  /* the rest of a sleep or wait a signal cut */
		return true;
	case SYS_fcntl:
		return a2 == F_SETLKW;
	default:
		return false;
	}
}
