/* ptflame - record/: the hardware Intel PT recorder (see ptrecord.h).
 *
 * Setup: find the intel_pt PMU in sysfs, build its config, open the events
 * (PT + tracking dummy per CPU and target task, a CPU-wide switch dummy per
 * CPU), mmap one data ring + AUX area per CPU (the other events of that
 * CPU redirect into it with PERF_EVENT_IOC_SET_OUTPUT), write attrs,
 * AUXTRACE_INFO and TIME_CONV, synthesize COMM/MMAP2 for what exists.
 * Loop: poll, copy sideband records and AUX data into the file, re-enable
 * a PT event the kernel stopped on a full buffer, stop on target exit,
 * duration or *stop. Every failure before the end aborts the writer, which
 * removes its temporary file: no output file is left.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include "decoder/dc_vec.h"
#include "record/record.h"
#include "record/pt_internal.h"
#include "record/pt_ring.h"
#include "record/procmaps.h"
#include "record/wake.h"

#define MAX_CPUS 4096
#define PT_DIR "/bus/event_source/devices/intel_pt"

enum ev_kind {
	EV_PT = RC_PT_EV_PT, EV_TRACK = RC_PT_EV_TRACK, EV_SWITCH = RC_PT_EV_SWITCH,
	EV_WAKE = RC_PT_EV_WAKE, EV_KINDS = RC_PT_EV_KINDS
};

struct pmu {
	int type;
	uint64_t config;
	uint64_t tsc_bit, noretcomp_bit, mtc_bit, mtc_freq_bits, cyc_bit;
	uint64_t max_nonturbo;
	uint32_t ctc_n, ctc_d;
};

/* One mmap'ed buffer: a CPU (per-CPU mode) or a thread (-t). */
struct buf {
	struct rc_pt_ring rg;        /* what the drain code works on */
	int cpu;                     /* -1 in per-thread mode */
	int tid;                     /* -1 in per-CPU mode    */
	int fd;                      /* the event owning the mmap */
	size_t mmap_len;             /* control page + data ring */
};

struct event {
	int fd;
	enum ev_kind kind;
	size_t buf;
	uint64_t id;
	int pid, cpu;                /* as opened (-1: any) */
};

struct rec {
	const struct rc_pt_opts *o;
	struct rc_pt_stats *st;
	char *err;
	size_t errlen;
	const char *sysfs;
	long page;
	struct pmu pmu;
	int cpus[MAX_CPUS];
	int ncpus;
	bool per_thread;
	int *tasks;                  /* tids to open events for */
	size_t ntasks;
	pid_t child;                 /* -- CMD */
	int go_fd;                   /* write end: lets the child exec */
	int exec_err_fd;             /* read end: child's exec errno */
	struct buf *bufs;
	size_t nbufs;
	struct event *evs;
	size_t nevs, evcap;
	bool cpu_wide;               /* SWITCH_CPU_WIDE via system-wide dummies */
	bool text_poke;              /* --kernel: TEXT_POKE/KSYMBOL on them     */
	bool wakes;                  /* sched:sched_waking on every CPU         */
	uint64_t wake_tp_id;
	uint64_t aux_size;
	struct dc_rec_time_conv tc;  /* from the first buffer's control page */
	struct perf_event_attr attr[EV_KINDS];
	char filter[4400];           /* resolved address filter, "" if none */
	struct rc_perf_writer *w;
	struct rc_pt_sink sk;        /* drained bytes go to w, counted here */
	unsigned char scratch[65536];
	uint64_t round_mark;         /* records written at the last FINISHED_ROUND */
	uint64_t round_ms;           /* ... and when */
};

static int fail(struct rec *r, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Keep the first message: it names the cause; later ones are fallout. */
static int fail(struct rec *r, int rc, const char *fmt, ...)
{
	va_list ap;

	if (r->err[0])
		return rc;
	va_start(ap, fmt);
	vsnprintf(r->err, r->errlen, fmt, ap);
	va_end(ap);
	return rc;
}

/* ---- small file readers --------------------------------------------- */

static int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int pmu_file(struct rec *r, const char *name, char *buf, size_t len)
{
	char path[512];

	snprintf(path, sizeof(path), "%s" PT_DIR "/%s", r->sysfs, name);
	return read_text(path, buf, len);
}

/* A caps value: hex masks (mtc_periods...) or decimals; missing = dflt. */
static uint64_t pmu_cap(struct rec *r, const char *name, int base, uint64_t dflt)
{
	char buf[64];

	if (pmu_file(r, name, buf, sizeof(buf)))
		return dflt;
	return strtoull(buf, NULL, base);
}

static int pmu_format(struct rec *r, const char *name, uint64_t *mask)
{
	char file[64], buf[128];

	snprintf(file, sizeof(file), "format/%s", name);
	if (pmu_file(r, file, buf, sizeof(buf)))
		return -ENOENT;
	return rc_pt_parse_format(buf, mask);
}

static long proc_long(const char *path, long dflt)
{
	char buf[64];

	return read_text(path, buf, sizeof(buf)) ? dflt : strtol(buf, NULL, 10);
}

/* ---- the PMU ---------------------------------------------------------- */

/* Set a period term, checking it against the caps bitmask of valid ones. */
static int pmu_period(struct rec *r, const char *term, const char *caps,
		      const char *opt, int want)
{
	uint64_t mask, valid = pmu_cap(r, caps, 16, 0);
	char vs[128];
	int v;

	if (pmu_format(r, term, &mask))
		return want < 0 ? 0 : fail(r, -EINVAL, "%s: this intel_pt PMU has no '%s' term", opt, term);
	v = want < 0 ? rc_pt_pick_period(valid, 3) : want;
	if (v < 0)
		return 0;            /* nothing valid advertised: leave it 0 */
	if (v > 63 || !(valid & (1ULL << v))) {
		rc_pt_valid_str(valid, vs, sizeof(vs));
		return fail(r, -EINVAL, "%s %d is not supported by this CPU (valid: %s, from %s" PT_DIR "/%s)",
			    opt, v, vs[0] ? vs : "none", r->sysfs, caps);
	}
	return rc_pt_set_field(&r->pmu.config, mask, (uint64_t)v);
}

static int pmu_bit(struct rec *r, const char *term, uint64_t *mask, bool required)
{
	int rc = pmu_format(r, term, mask);

	if (rc && required)
		return fail(r, -EINVAL, "this intel_pt PMU has no '%s' format term (%s" PT_DIR "/format/%s)",
			    term, r->sysfs, term);
	if (rc)
		*mask = 0;
	return 0;
}

static int pmu_setup(struct rec *r)
{
	const struct rc_pt_opts *o = r->o;
	struct pmu *p = &r->pmu;
	char buf[64], dir[512];
	uint64_t m;
	struct stat sb;

	snprintf(dir, sizeof(dir), "%s" PT_DIR, r->sysfs);
	if (stat(dir, &sb))
		return fail(r, -ENODEV, "no Intel PT on this machine (%s missing); "
			    "use 'ptflame record --emulate' to trace without PT hardware", dir);
	if (pmu_file(r, "type", buf, sizeof(buf)))
		return fail(r, -ENODEV, "cannot read %s/type: the intel_pt PMU is not usable", dir);
	p->type = atoi(buf);
	if (pmu_bit(r, "tsc", &p->tsc_bit, true) || pmu_bit(r, "noretcomp", &p->noretcomp_bit, o->noretcomp) ||
	    pmu_bit(r, "mtc", &p->mtc_bit, o->mtc_period >= 0) || pmu_bit(r, "cyc", &p->cyc_bit, o->cyc))
		return -EINVAL;
	p->config = p->tsc_bit;
	/* pt=1 (pass-through) and branch=1: what perf's default config has. */
	if (!pmu_format(r, "pt", &m))
		p->config |= m;
	if (!pmu_format(r, "branch", &m))
		p->config |= m;
	if (o->cyc) {
		if (!pmu_cap(r, "caps/psb_cyc", 10, 0))
			return fail(r, -EINVAL, "--cyc: this CPU has no cycle-accurate mode (%s/caps/psb_cyc is 0)", dir);
		p->config |= p->cyc_bit;
	}
	if (o->noretcomp)
		p->config |= p->noretcomp_bit;
	if (p->mtc_bit && (pmu_cap(r, "caps/mtc", 10, 1) || o->mtc_period >= 0)) {
		p->config |= p->mtc_bit;
		if (pmu_period(r, "mtc_period", "caps/mtc_periods", "--mtc-period", o->mtc_period))
			return -EINVAL;
	}
	if (pmu_cap(r, "caps/psb_cyc", 10, 1) || o->psb_period >= 0)
		if (pmu_period(r, "psb_period", "caps/psb_periods", "--psb-period", o->psb_period))
			return -EINVAL;
	pmu_format(r, "mtc_period", &p->mtc_freq_bits);
	p->max_nonturbo = pmu_cap(r, "max_nonturbo_ratio", 10, 0);
	/* TSC:CTC ratio for MTC timing: CPUID leaf 0x15 (EBX/EAX). */
#if defined(__x86_64__) || defined(__i386__)
	{
		unsigned a = 0, b = 0, c = 0, d = 0;

		if (__get_cpuid(0x15, &a, &b, &c, &d)) {
			p->ctc_n = b;
			p->ctc_d = a;
		}
	}
#endif
	return 0;
}

/* ---- targets ------------------------------------------------------------ */

static int add_task(struct rec *r, int tid)
{
	int *t;

	for (size_t i = 0; i < r->ntasks; i++)
		if (r->tasks[i] == tid)
			return 0;
	t = realloc(r->tasks, (r->ntasks + 1) * sizeof(*t));
	if (!t)
		return fail(r, -ENOMEM, "out of memory");
	r->tasks = t;
	r->tasks[r->ntasks++] = tid;
	return 0;
}

/* A process or thread must exist; say so when it does not. */
static int check_task(struct rec *r, const char *what, int id)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", id);
	if (id <= 0 || access(path, F_OK))
		return fail(r, -ESRCH, "no %s with %s %d (check 'ps -eLf')", what,
			    strcmp(what, "thread") ? "PID" : "TID", id);
	return 0;
}

static bool alive(int id);

static int collect_targets(struct rec *r)
{
	const struct rc_pt_opts *o = r->o;

	for (size_t i = 0; i < o->nr_pids; i++) {
		char path[64];
		struct dirent *de;
		DIR *d;
		int rc;

		if ((rc = check_task(r, "process", o->pids[i])))
			return rc;
		snprintf(path, sizeof(path), "/proc/%d/task", o->pids[i]);
		d = opendir(path);
		if (!d)
			return fail(r, -ESRCH, "no process with PID %d (it exited)", o->pids[i]);
		/* not the exited ones: a leader that exited stays a zombie
		 * while its other threads run, and has no events to open */
		while ((de = readdir(d)))
			if (de->d_name[0] != '.' && alive(atoi(de->d_name)) &&
			    (rc = add_task(r, atoi(de->d_name)))) {
				closedir(d);
				return rc;
			}
		closedir(d);
		if (!r->ntasks)
			return fail(r, -ESRCH, "no process with PID %d (it exited)", o->pids[i]);
	}
	for (size_t i = 0; i < o->nr_tids; i++) {
		int rc = check_task(r, "thread", o->tids[i]);

		if (rc || (rc = add_task(r, o->tids[i])))
			return rc;
	}
	return 0;
}

/* The owner of a target, for the "another user" message. */
static int task_uid(int pid)
{
	char path[64];
	struct stat sb;

	snprintf(path, sizeof(path), "/proc/%d", pid);
	return stat(path, &sb) ? -1 : (int)sb.st_uid;
}

/* Fork the command stopped before exec: it waits for one byte on a pipe,
 * so the events exist (enable_on_exec) before its first instruction. */
static int start_child(struct rec *r)
{
	int go[2], ex[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) || pipe2(ex, O_CLOEXEC))
		return fail(r, -errno, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		return fail(r, -errno, "fork: %s", strerror(errno));
	if (!pid) {
		char c;
		int e;

		close(go[1]);
		close(ex[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		/* exec keeps ignored signals ignored: give the command what
		 * ptflame was given, not what ptflame set for itself */
		for (int s = 1; s < NSIG; s++)
			if (s != SIGKILL && s != SIGSTOP)
				signal(s, sigismember(&r->o->child_ignored, s) ? SIG_IGN : SIG_DFL);
		execvp(r->o->argv[0], r->o->argv);
		e = errno;
		if (write(ex[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	r->child = pid;
	r->go_fd = go[1];
	r->exec_err_fd = ex[0];
	return add_task(r, pid);
}

/* Let the child exec; report an exec failure (the CLOEXEC pipe reads
 * empty when exec succeeded). */
static int release_child(struct rec *r)
{
	int e = 0;
	ssize_t n;

	if (write(r->go_fd, "g", 1) != 1)
		return fail(r, -EIO, "cannot start '%s'", r->o->argv[0]);
	close(r->go_fd);
	r->go_fd = -1;
	n = read(r->exec_err_fd, &e, sizeof(e));
	close(r->exec_err_fd);
	r->exec_err_fd = -1;
	if (n == sizeof(e)) {
		waitpid(r->child, NULL, 0);
		r->child = 0;
		return fail(r, -e, "cannot run '%s': %s", r->o->argv[0], strerror(e));
	}
	return 0;
}

/* ---- events ------------------------------------------------------------- */

static void make_attrs(struct rec *r)
{
	const struct rc_pt_opts *o = r->o;
	struct rc_pt_attr_cfg c = {
		.pmu_type = r->pmu.type, .config = r->pmu.config, .aux_size = r->aux_size,
		.kernel = o->kernel, .workload = o->argv != NULL, .per_thread = r->per_thread,
		.cpu_wide = r->cpu_wide, .snapshot = o->snapshot, .text_poke = r->text_poke,
		.wake_tp_id = r->wake_tp_id,
	};

	rc_pt_make_attrs(&c, r->attr);
}

static int perf_open(struct perf_event_attr *a, int pid, int cpu, int group)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

/* One line that says what to do about a failed perf_event_open. */
static int open_error(struct rec *r, enum ev_kind k, int pid, int cpu, int e)
{
	long paranoid = proc_long("/proc/sys/kernel/perf_event_paranoid", 2);
	const struct rc_pt_opts *o = r->o;
	int need = k == EV_SWITCH || pid == -1 ? 0 : o->kernel ? 1 : 2;
	int uid = pid > 0 ? task_uid(pid) : -1;

	if (e == ESRCH)
		return fail(r, -ESRCH, "no process or thread %d (it exited)", pid);
	if (e == EACCES || e == EPERM) {
		if (uid >= 0 && geteuid() != 0 && (uid_t)uid != geteuid())
			return fail(r, -EACCES, "cannot trace PID %d: it belongs to another user (uid %d); "
				    "run ptflame as that user or as root", pid, uid);
		return fail(r, -EACCES, "not allowed to open perf events%s (kernel.perf_event_paranoid = %ld, "
			    "this needs <= %d): run as root, grant CAP_PERFMON, or "
			    "'sysctl kernel.perf_event_paranoid=%d'",
			    o->kernel ? " with --kernel" : "", paranoid, need, need);
	}
	if (e == EMFILE || e == ENFILE)
		return fail(r, -e, "too many open files (%zu tasks x %d CPUs): raise 'ulimit -n'",
			    r->ntasks, r->ncpus);
	if (k == EV_PT) {
		char dir[512], msg[1024];

		snprintf(dir, sizeof(dir), "%s" PT_DIR, r->sysfs);
		rc_pt_open_errmsg(msg, sizeof(msg), e, r->pmu.type, r->pmu.config, cpu, dir);
		return fail(r, -e, "%s", msg);
	}
	return fail(r, -e, "perf_event_open (dummy sideband event, CPU %d): %s", cpu, strerror(e));
}

/* Room for one more event in r->evs. */
static int ev_reserve(struct rec *r)
{
	if (DC_VEC_PUSH_ROOM(r->evs, r->nevs, r->evcap, 16))
		return fail(r, -ENOMEM, "out of memory");
	return 0;
}

static int add_event(struct rec *r, enum ev_kind k, int pid, int cpu, size_t b)
{
	struct event *ev;
	int fd;

	if (ev_reserve(r))
		return -ENOMEM;
	fd = perf_open(&r->attr[k], pid, cpu, -1);
	/* a thread of a -p process that exited meanwhile: go on without it */
	if (fd < 0 && errno == ESRCH && pid > 0 && r->o->nr_pids)
		return 1;
	if (fd < 0)
		return open_error(r, k, pid, cpu, errno);
	ev = &r->evs[r->nevs++];
	ev->fd = fd;
	ev->kind = k;
	ev->buf = b;
	ev->pid = pid;
	ev->cpu = cpu;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &ev->id))
		return fail(r, -errno, "PERF_EVENT_IOC_ID: %s", strerror(errno));
	if (r->bufs[b].fd < 0)
		r->bufs[b].fd = fd;
	if (k == EV_PT)
		r->bufs[b].rg.pt_id = ev->id;
	return 0;
}

/* The other events of a buffer write into its owner's rings; the kernel
 * wants the owner mmap'ed first. */
static int redirect_events(struct rec *r)
{
	for (size_t i = 0; i < r->nevs; i++) {
		int owner = r->bufs[r->evs[i].buf].fd;

		if (r->evs[i].fd != owner && ioctl(r->evs[i].fd, PERF_EVENT_IOC_SET_OUTPUT, owner))
			return fail(r, -errno, "PERF_EVENT_IOC_SET_OUTPUT: %s", strerror(errno));
	}
	return 0;
}

/* Can we see every task's switches on a CPU? Needs paranoid <= 0 or
 * CAP_PERFMON; perf falls back to per-task SWITCH records, and so do we. */
static void probe_cpu_wide(struct rec *r)
{
	struct perf_event_attr a = r->attr[EV_SWITCH];
	int fd;

	a.context_switch = 1;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	fd = perf_open(&a, -1, r->cpus[0], -1);
	if (fd < 0 && r->text_poke) {
		/* a kernel without TEXT_POKE (< 5.9) or KSYMBOL (< 5.1) */
		a.text_poke = a.ksymbol = 0;
		r->text_poke = false;
		fd = perf_open(&a, -1, r->cpus[0], -1);
	}
	r->cpu_wide = fd >= 0;
	if (fd >= 0)
		close(fd);
}

static int open_events(struct rec *r)
{
	bool pt = !r->o->sideband_only;
	int rc = 0;

	r->nbufs = r->per_thread ? r->ntasks : (size_t)r->ncpus;
	r->bufs = calloc(r->nbufs, sizeof(*r->bufs));
	if (!r->bufs)
		return fail(r, -ENOMEM, "out of memory");
	for (size_t b = 0; b < r->nbufs; b++) {
		struct buf *bf = &r->bufs[b];

		bf->fd = -1;
		bf->cpu = r->per_thread ? -1 : r->cpus[b];
		bf->tid = r->per_thread ? r->tasks[b] : -1;
		/* The PT event first: it must own the buffer (AUX area). */
		for (size_t t = 0; t < r->ntasks && !rc; t++) {
			int pid = r->per_thread ? bf->tid : r->tasks[t];

			if (r->per_thread && t)
				break;
			if (pt)
				rc = add_event(r, EV_PT, pid, bf->cpu, b);
			if (!rc)
				rc = add_event(r, EV_TRACK, pid, bf->cpu, b);
			if (rc == 1) {       /* exited: forget it */
				r->tasks[t--] = r->tasks[--r->ntasks];
				rc = r->ntasks ? 0 : fail(r, -ESRCH, "the target exited");
			}
		}
		if (!rc && r->cpu_wide)
			rc = add_event(r, EV_SWITCH, -1, bf->cpu, b);
		if (rc)
			return rc;
	}
	return 0;
}

/* Wake records (issue 16): sched:sched_waking on every CPU, next to the
 * CPU-wide switch events, when tracefs tells its id and the kernel lets us
 * open it (CPU-wide, RAW: paranoid -1 or CAP_PERFMON); otherwise one line
 * in the stats says why and the recording goes on without. */
static void plan_wakes(struct rec *r)
{
	const struct rc_pt_opts *o = r->o;
	long paranoid = proc_long("/proc/sys/kernel/perf_event_paranoid", 2);
	int rc;

	r->wakes = false;
	if (o->no_wakers)
		return;
	if (r->per_thread) {
		snprintf(r->st->wake_note, sizeof(r->st->wake_note),
			 "-t traces threads, not CPUs: recording without wake records "
			 "(-p PID has them)");
		return;
	}
	if ((rc = rc_wake_tp_id(o->tracefs, &r->wake_tp_id))) {
		rc_pt_wake_note(r->st->wake_note, sizeof(r->st->wake_note), rc, o->tracefs,
				r->wake_tp_id, 0, paranoid);
		return;
	}
	if (!r->cpu_wide) {
		rc_pt_wake_note(r->st->wake_note, sizeof(r->st->wake_note), 0, o->tracefs,
				r->wake_tp_id, EACCES, paranoid);
		return;
	}
	r->wakes = true;
}

/* The wake events, one per CPU buffer; on any failure none (and the
 * note). Opened after every other event: the owner of each buffer is
 * already known. */
static int open_wakes(struct rec *r)
{
	size_t first = r->nevs;

	if (!r->wakes)
		return 0;
	for (size_t b = 0; b < r->nbufs; b++) {
		uint64_t id = 0;
		int fd;

		if (ev_reserve(r))
			return -ENOMEM;
		fd = perf_open(&r->attr[EV_WAKE], -1, r->bufs[b].cpu, -1);
		if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_ID, &id)) {
			int e = errno;

			if (fd >= 0)
				close(fd);
			rc_pt_wake_note(r->st->wake_note, sizeof(r->st->wake_note), 0, r->o->tracefs,
					r->wake_tp_id, e,
					proc_long("/proc/sys/kernel/perf_event_paranoid", 2));
			while (r->nevs > first)
				close(r->evs[--r->nevs].fd);
			r->wakes = false;
			return 0;
		}
		r->evs[r->nevs] = (struct event){ .fd = fd, .kind = EV_WAKE, .buf = b, .id = id,
						  .pid = -1, .cpu = r->bufs[b].cpu };
		r->nevs++;
	}
	return 0;
}

static int ioctl_all(struct rec *r, int kind, unsigned long req, size_t only_buf)
{
	for (size_t i = 0; i < r->nevs; i++) {
		if (kind >= 0 && r->evs[i].kind != (enum ev_kind)kind)
			continue;
		if (only_buf != (size_t)-1 && r->evs[i].buf != only_buf)
			continue;
		if (ioctl(r->evs[i].fd, req, 0))
			return -errno;
	}
	return 0;
}

static int set_filters(struct rec *r)
{
	if (!r->filter[0] || r->o->sideband_only)
		return 0;
	for (size_t i = 0; i < r->nevs; i++)
		if (r->evs[i].kind == EV_PT &&
		    ioctl(r->evs[i].fd, PERF_EVENT_IOC_SET_FILTER, r->filter))
			return fail(r, -errno, "the kernel refused the address filter '%s': %s "
				    "(needs caps/ip_filtering; is the function in the traced binary?)",
				    r->filter, strerror(errno));
	return 0;
}

/* ---- the ring buffers ---------------------------------------------------- */

static int map_error(struct rec *r, bool aux, uint64_t bytes, uint64_t aux_size, int e)
{
	struct rc_pt_map_err m = { .err = e, .aux = aux, .bytes = bytes, .aux_size = aux_size };
	char cap[512], msg[1024];
	struct rlimit rl;

	snprintf(cap, sizeof(cap), "%s" PT_DIR "/caps/topa_multiple_entries", r->sysfs);
	m.topa_cap = cap;
	m.topa_multi = (int)pmu_cap(r, "caps/topa_multiple_entries", 10, (uint64_t)-1);
	m.mlock_kb = proc_long("/proc/sys/kernel/perf_event_mlock_kb", -1);
	m.memlock = getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX
										 : (uint64_t)rl.rlim_cur;
	rc_pt_map_errmsg(msg, sizeof(msg), &m);
	return fail(r, -e, "%s", msg);
}

static int map_buffers(struct rec *r, uint64_t data_size, uint64_t aux_size)
{
	bool pt = !r->o->sideband_only;

	for (size_t b = 0; b < r->nbufs; b++) {
		struct buf *bf = &r->bufs[b];
		void *p;

		bf->mmap_len = (size_t)(data_size + (uint64_t)r->page);
		p = mmap(NULL, bf->mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED, bf->fd, 0);
		if (p == MAP_FAILED)
			return map_error(r, false, (uint64_t)bf->mmap_len * r->nbufs, aux_size, errno);
		bf->rg.pc = p;
		bf->rg.data = (unsigned char *)p + r->page;
		bf->rg.data_size = data_size;
		bf->rg.idx = (uint32_t)b;
		bf->rg.tid = (uint32_t)bf->tid;
		bf->rg.cpu = (uint32_t)bf->cpu;
		if (!pt)
			continue;
		bf->rg.pc->aux_offset = bf->mmap_len;
		bf->rg.pc->aux_size = aux_size;
		/* Read-only AUX mapping = overwrite mode (snapshots). */
		p = mmap(NULL, aux_size, PROT_READ | (r->o->snapshot ? 0 : PROT_WRITE),
			 MAP_SHARED, bf->fd, (off_t)bf->mmap_len);
		if (p == MAP_FAILED)
			return map_error(r, true, (aux_size + bf->mmap_len) * r->nbufs, aux_size, errno);
		bf->rg.aux = p;
		bf->rg.aux_size = aux_size;
		if (r->o->snapshot) {
			bf->rg.ref_len = aux_size / 2 < 4096 ? aux_size / 2 : 4096;
			if (!(bf->rg.ref = calloc(1, bf->rg.ref_len)))
				return fail(r, -ENOMEM, "out of memory");
		}
	}
	return 0;
}

static void unmap_buffers(struct rec *r)
{
	for (size_t b = 0; b < r->nbufs; b++) {
		struct rc_pt_ring *rg = &r->bufs[b].rg;

		if (rg->aux)
			munmap(rg->aux, rg->aux_size);
		if (rg->pc)
			munmap(rg->pc, r->bufs[b].mmap_len);
		free(rg->ref);
	}
}

/* perf clock <-> TSC from the first buffer's control page (seqlock). */
static void read_time(struct rec *r, struct dc_rec_time_conv *tc)
{
	struct perf_event_mmap_page *pc = r->bufs[0].rg.pc;
	uint32_t seq;

	memset(tc, 0, sizeof(*tc));
	do {
		seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);
		tc->cap_user_time_zero = pc->cap_user_time_zero;
		tc->cap_user_time_short = pc->cap_user_time_short;
		tc->time_shift = pc->time_shift;
		tc->time_mult = pc->time_mult;
		tc->time_zero = pc->time_zero;
		tc->time_cycles = pc->time_cycles;
		tc->time_mask = pc->time_mask;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (seq != __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE) || (seq & 1));
	tc->has_ext = true;
	if (!tc->cap_user_time_zero) {
		tc->time_shift = 0;
		tc->time_mult = 0;
		tc->time_zero = 0;
	}
}

static uint64_t reference(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint64_t t = __rdtsc();
#else
	struct timespec ts;
	uint64_t t;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
	return t ? t : 1;
}

/* The perf clock now, for records we write ourselves: TSC through the
 * control page's conversion, else CLOCK_MONOTONIC (close to it). */
static uint64_t perf_now(void *ctx)
{
	const struct dc_rec_time_conv *tc = &((struct rec *)ctx)->tc;
	struct timespec ts;

	if (tc->cap_user_time_zero && tc->time_mult) {
		uint64_t t = reference(), q = t >> tc->time_shift;
		uint64_t rem = t & ((UINT64_C(1) << tc->time_shift) - 1);

		return tc->time_zero + q * tc->time_mult + ((rem * tc->time_mult) >> tc->time_shift);
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int write_error(struct rec *r, int rc)
{
	return fail(r, rc, "writing %s: %s", r->o->output, rc_perf_errmsg(r->w));
}

/* Sideband records of one buffer into the file. */
static int drain_data(struct rec *r, size_t b)
{
	struct buf *bf = &r->bufs[b];
	int rc = rc_pt_drain_data(&bf->rg, &r->sk);

	if (rc == -EBADMSG || rc == -EOVERFLOW)
		return fail(r, rc, "corrupt perf data ring on %s %d (%s)",
			    r->per_thread ? "thread" : "CPU", r->per_thread ? bf->tid : bf->cpu,
			    strerror(-rc));
	return rc ? write_error(r, rc) : 0;
}

/* Full trace mode: AUX data into the file; restart a stopped PT event. */
static int drain_aux(struct rec *r, size_t b)
{
	struct buf *bf = &r->bufs[b];
	int rc = rc_pt_drain_aux(&bf->rg, &r->sk);

	if (rc == -EOVERFLOW)
		return fail(r, rc, "bad AUX head on %s %d (more than a buffer ahead of the tail)",
			    r->per_thread ? "thread" : "CPU", r->per_thread ? bf->tid : bf->cpu);
	if (rc)
		return write_error(r, rc);
	if (bf->rg.restart) {
		/* The kernel disabled the event when the buffer filled up
		 * (the TRUNCATED record); there is room again now. */
		bf->rg.restart = false;
		ioctl_all(r, EV_PT, PERF_EVENT_IOC_ENABLE, b);
	}
	return 0;
}

/* Overwrite mode: stop PT, take the newest bytes of every buffer, go on. */
static int snapshot(struct rec *r, bool resume)
{
	int rc = 0;

	ioctl_all(r, EV_PT, PERF_EVENT_IOC_DISABLE, (size_t)-1);
	for (size_t b = 0; b < r->nbufs && !rc; b++)
		rc = rc_pt_snapshot_aux(&r->bufs[b].rg, &r->sk);
	r->st->snapshots++;
	if (resume)
		ioctl_all(r, EV_PT, PERF_EVENT_IOC_ENABLE, (size_t)-1);
	return rc ? write_error(r, rc) : 0;
}

static uint64_t now_ms(void);

static int drain_all(struct rec *r)
{
	uint64_t now;
	int rc;

	for (size_t b = 0; b < r->nbufs; b++) {
		if ((rc = drain_data(r, b)))
			return rc;
		if (r->bufs[b].rg.aux && !r->o->snapshot && (rc = drain_aux(r, b)))
			return rc;
	}
	/* FINISHED_ROUND lets perf sort and flush what came before it. A
	 * record can be committed well after its timestamp was taken (the
	 * writer preempted in between), so leave at least half a second
	 * between rounds: a late record then still lands in a round perf
	 * has not flushed ("out of order events" otherwise). */
	now = now_ms();
	if (r->sk.rs.records + r->sk.auxtrace_records != r->round_mark &&
	    now - r->round_ms >= 500) {
		if ((rc = rc_perf_finished_round(r->w)))
			return fail(r, rc, "writing %s: %s", r->o->output, rc_perf_errmsg(r->w));
		r->round_mark = r->sk.rs.records + r->sk.auxtrace_records;
		r->round_ms = now;
	}
	return 0;
}

/* ---- synthesized sideband ------------------------------------------------ */

static uint64_t first_id(struct rec *r, enum ev_kind k)
{
	for (size_t i = 0; i < r->nevs; i++)
		if (r->evs[i].kind == k)
			return r->evs[i].id;
	return 0;
}

static void sid_for(struct rec *r, int pid, int tid, struct dc_sample_id *sid)
{
	memset(sid, 0, sizeof(*sid));
	sid->valid = true;
	sid->pid = (uint32_t)pid;
	sid->tid = (uint32_t)tid;
	sid->id = first_id(r, EV_TRACK);
	sid->cpu = 0;
	sid->time = 0;
}

/* COMM for every thread of pid. */
static int synth_comms(struct rec *r, int pid)
{
	char path[96], comm[64];
	struct dirent *de;
	DIR *d;
	int rc = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	if (!(d = opendir(path)))
		return 0;            /* gone meanwhile: its EXIT will tell */
	while (!rc && (de = readdir(d))) {
		struct dc_sample_id sid;
		int tid = atoi(de->d_name);

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
		if (read_text(path, comm, sizeof(comm)))
			continue;
		comm[strcspn(comm, "\n")] = '\0';
		sid_for(r, pid, tid, &sid);
		rc = rc_perf_comm(r->w, (uint32_t)pid, (uint32_t)tid, comm, false, &sid);
	}
	closedir(d);
	return rc;
}

/* MMAP2 for every executable mapping in /proc/pid/maps. */
static int synth_mmaps(struct rec *r, int pid)
{
	struct rc_map *maps;
	size_t n;
	int rc = 0;

	if (rc_maps_read(pid, true, &maps, &n) < 0)
		return 0;   /* gone already: its EXIT tells */
	for (size_t i = 0; i < n && !rc; i++) {
		struct dc_rec_mmap m;
		struct dc_sample_id sid;

		rc_map_mmap2(&maps[i], (uint32_t)pid, (uint32_t)pid, &m);
		sid_for(r, pid, pid, &sid);
		rc = rc_perf_mmap2(r->w, &m, &sid);
	}
	rc_maps_free(maps, n);
	return rc;
}

/* --kernel: the kernel's text mapping, as perf synthesizes it
 * ("[kernel.kallsyms]_text", pgoff = start), from /proc/kallsyms, and the
 * modules' from /proc/modules. */
static int synth_kernel(struct rec *r)
{
	unsigned long long a, text = 0, etext = 0;
	char line[512], type, name[256];
	struct dc_sample_id sid;
	struct dc_rec_mmap m;
	FILE *f = fopen("/proc/kallsyms", "re");
	int rc;

	if (!f)
		return 0;
	while ((!text || !etext) && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3) {
			if (!strcmp(name, "_text"))
				text = a;
			else if (!strcmp(name, "_etext"))
				etext = a;
		}
	fclose(f);
	if (!text || etext <= text)
		return 0;            /* addresses hidden (kptr_restrict) */
	memset(&m, 0, sizeof(m));
	m.pid = (uint32_t)-1;
	m.start = text;
	m.len = etext - text;
	m.pgoff = text;
	m.cpumode = PERF_RECORD_MISC_KERNEL;
	m.prot = PROT_READ | PROT_EXEC;
	m.filename = "[kernel.kallsyms]_text";
	sid_for(r, -1, 0, &sid);
	if ((rc = rc_perf_mmap2(r->w, &m, &sid)))
		return rc;
	/* and each loaded module, as perf synthesizes them ("[name]") */
	if (!(f = fopen("/proc/modules", "re")))
		return 0;            /* no module support */
	while (!rc && fgets(line, sizeof(line), f)) {
		char mod[80];
		uint64_t start, size;

		if (rc_pt_parse_module(line, mod, sizeof(mod), &start, &size))
			continue;
		m.start = start;
		m.len = size;
		m.pgoff = 0;
		m.filename = mod;
		rc = rc_perf_mmap2(r->w, &m, &sid);
	}
	fclose(f);
	return rc;
}

static int synthesize(struct rec *r)
{
	const struct rc_pt_opts *o = r->o;
	int rc = 0;

	if (o->kernel && (rc = synth_kernel(r)))
		return fail(r, rc, "writing %s: %s", o->output, rc_perf_errmsg(r->w));

	if (o->argv)    /* the child has not exec'd: its COMM, then the kernel's */
		return synth_comms(r, r->child);
	for (size_t i = 0; i < o->nr_pids && !rc; i++)
		if (!(rc = synth_comms(r, o->pids[i])))
			rc = synth_mmaps(r, o->pids[i]);
	for (size_t i = 0; i < o->nr_tids && !rc; i++) {
		/* A thread's process: its maps are the ones that matter. */
		pid_t tgid = rc_proc_tgid(o->tids[i]);

		if (!tgid)
			tgid = o->tids[i];
		if (!(rc = synth_comms(r, tgid)))
			rc = synth_mmaps(r, tgid);
	}
	if (rc)
		return fail(r, rc, "writing %s: %s", o->output, rc_perf_errmsg(r->w));
	return 0;
}

/* ---- header records ------------------------------------------------------- */

static int write_attrs(struct rec *r)
{
	for (int k = 0; k < EV_KINDS; k++) {
		uint64_t *ids = calloc(r->nevs + 1, sizeof(*ids));
		size_t n = 0;
		int rc;

		if (!ids)
			return fail(r, -ENOMEM, "out of memory");
		for (size_t i = 0; i < r->nevs; i++)
			if (r->evs[i].kind == (enum ev_kind)k)
				ids[n++] = r->evs[i].id;
		rc = !n ? 0 : k == EV_WAKE ? rc_perf_add_attr_named(r->w, &r->attr[k], ids, n,
								      RC_WAKE_EVENT_NAME)
				   : rc_perf_add_attr(r->w, &r->attr[k], ids, n);
		free(ids);
		if (rc)
			return fail(r, rc, "writing %s: %s", r->o->output, rc_perf_errmsg(r->w));
	}
	return 0;
}

/* ID_INDEX, as perf record writes it: where each sample id's events are
 * (buffer, CPU, task), in records of at most 64 KiB. */
static int write_id_index(struct rec *r)
{
	enum { MAXN = (65535 - 16) / sizeof(struct pf_id_index_entry) };
	struct {
		struct perf_event_header h;
		uint64_t nr;
		struct pf_id_index_entry e[MAXN];
	} *rec = malloc(sizeof(*rec));
	int rc = 0;

	if (!rec)
		return fail(r, -ENOMEM, "out of memory");
	for (size_t i = 0; i < r->nevs && !rc; i += MAXN) {
		size_t n = r->nevs - i < MAXN ? r->nevs - i : MAXN;

		rec->h.type = PERF_RECORD_ID_INDEX;
		rec->h.misc = 0;
		rec->h.size = (uint16_t)(16 + n * sizeof(rec->e[0]));
		rec->nr = n;
		for (size_t j = 0; j < n; j++) {
			const struct event *ev = &r->evs[i + j];

			rec->e[j] = (struct pf_id_index_entry){
				ev->id, ev->buf, (uint64_t)(int64_t)ev->cpu, (uint64_t)(int64_t)ev->pid };
		}
		rc = rc_perf_write(r->w, rec);
	}
	free(rec);
	return rc ? write_error(r, rc) : 0;
}

static int write_info(struct rec *r)
{
	struct dc_rec_time_conv tc;
	struct dc_pt_info pt;
	int rc;

	read_time(r, &tc);
	r->tc = tc;
	if (!r->o->sideband_only) {
		memset(&pt, 0, sizeof(pt));
		pt.pmu_type = (uint64_t)r->pmu.type;
		pt.time_shift = tc.time_shift;
		pt.time_mult = tc.time_mult;
		pt.time_zero = tc.time_zero;
		pt.cap_user_time_zero = tc.cap_user_time_zero;
		pt.tsc_bit = r->pmu.tsc_bit;
		pt.noretcomp_bit = r->pmu.noretcomp_bit;
		pt.have_sched_switch = r->per_thread ? 0 : r->cpu_wide ? 3 : 2;
		pt.snapshot_mode = r->o->snapshot;
		pt.per_cpu_mmaps = !r->per_thread;
		pt.mtc_bit = r->pmu.mtc_bit;
		pt.mtc_freq_bits = r->pmu.mtc_freq_bits;
		pt.tsc_ctc_ratio_n = r->pmu.ctc_n;
		pt.tsc_ctc_ratio_d = r->pmu.ctc_d;
		pt.cyc_bit = r->pmu.cyc_bit;
		pt.max_non_turbo_ratio = r->pmu.max_nonturbo;
		pt.filter = r->filter;
		if ((rc = rc_perf_auxtrace_info_pt(r->w, &pt)))
			return fail(r, rc, "writing %s: %s", r->o->output, rc_perf_errmsg(r->w));
	}
	/* Like perf: TIME_CONV only when the kernel gives TSC conversion
	 * (not under e.g. kvm-clock, where the fields are all zero). */
	if (tc.cap_user_time_zero && (rc = rc_perf_time_conv(r->w, &tc)))
		return fail(r, rc, "writing %s: %s", r->o->output, rc_perf_errmsg(r->w));
	return 0;
}

/* --filter FUNC: in the command's executable or the first process's. */
static int resolve_filter(struct rec *r)
{
	const struct rc_pt_opts *o = r->o;
	char exe[4096] = "";
	uint64_t off, size;
	int rc;

	if (!o->filter)
		return 0;
	if (o->argv) {
		const char *cmd = o->argv[0];

		if (strchr(cmd, '/')) {
			if (!realpath(cmd, exe))
				return fail(r, -ENOENT, "cannot run '%s': %s", cmd, strerror(errno));
		} else {
			const char *path = getenv("PATH");
			char *dup = strdup(path ? path : "/usr/bin:/bin"), *save = NULL;

			for (char *d = strtok_r(dup, ":", &save); d && !exe[0]; d = strtok_r(NULL, ":", &save)) {
				char cand[4096];

				snprintf(cand, sizeof(cand), "%s/%s", *d ? d : ".", cmd);
				if (!access(cand, X_OK) && !realpath(cand, exe))
					exe[0] = '\0';
			}
			free(dup);
			if (!exe[0])
				return fail(r, -ENOENT, "cannot run '%s': not found in PATH", cmd);
		}
	} else {
		char link[64];
		int pid = o->nr_pids ? o->pids[0] : o->tids[0];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/%d/exe", pid);
		n = readlink(link, exe, sizeof(exe) - 1);
		if (n < 0)
			return fail(r, -errno, "--filter: cannot read %s: %s", link, strerror(errno));
		exe[n] = '\0';
	}
	rc = rc_pt_resolve_filter(exe, o->filter, &off, &size);
	if (rc == -ENOENT)
		return fail(r, -EINVAL, "--filter: no function '%s' in %s", o->filter, exe);
	if (rc)
		return fail(r, rc, "--filter: cannot read %s: %s", exe, strerror(-rc));
	snprintf(r->filter, sizeof(r->filter), "filter %#llx/%#llx@%s",
		 (unsigned long long)off, (unsigned long long)size, exe);
	return 0;
}

/* ---- the loop ------------------------------------------------------------- */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Is a -p/-t target still there (and not a zombie)? */
static bool alive(int id)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", id);
	if (read_text(path, buf, sizeof(buf)))
		return false;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

/* Is any thread of process pid still there? Its leader may have exited
 * (a zombie until the last thread goes) while other threads run on. */
static bool process_alive(int pid)
{
	char path[64];
	struct dirent *de;
	bool live = false;
	DIR *d;

	if (alive(pid))
		return true;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	if (!(d = opendir(path)))
		return false;
	while (!live && (de = readdir(d)))
		if (de->d_name[0] != '.')
			live = alive(atoi(de->d_name));
	closedir(d);
	return live;
}

static bool targets_gone(struct rec *r)
{
	const struct rc_pt_opts *o = r->o;

	if (o->argv) {
		int status;

		if (r->child && waitpid(r->child, &status, WNOHANG) == r->child) {
			r->st->child_exited = true;
			r->st->child_status = status;
			r->child = 0;
		}
		return !r->child;
	}
	for (size_t i = 0; i < o->nr_pids; i++)
		if (process_alive(o->pids[i]))
			return false;
	for (size_t i = 0; i < o->nr_tids; i++)
		if (alive(o->tids[i]))
			return false;
	return true;
}

static int run_loop(struct rec *r)
{
	const struct rc_pt_opts *o = r->o;
	uint64_t end = o->duration_ms ? now_ms() + o->duration_ms : 0;
	struct pollfd *pfd = calloc(r->nbufs, sizeof(*pfd));
	int rc = 0;

	if (!pfd)
		return fail(r, -ENOMEM, "out of memory");
	for (size_t b = 0; b < r->nbufs; b++) {
		pfd[b].fd = r->bufs[b].fd;
		pfd[b].events = POLLIN;
	}
	for (;;) {
		bool gone = targets_gone(r);

		if ((rc = drain_all(r)))
			break;
		if (o->snap && *o->snap && o->snapshot) {
			*o->snap = 0;
			if ((rc = snapshot(r, true)))
				break;
		}
		if (gone || (o->stop && *o->stop) || (end && now_ms() >= end))
			break;
		/* Wakes on data (watermark), a signal, or every 100 ms. A
		 * buffer whose owning task exited reports POLLHUP for ever:
		 * stop polling it (it is still drained every round). */
		if (poll(pfd, r->nbufs, 100) > 0)
			for (size_t b = 0; b < r->nbufs; b++)
				if (pfd[b].revents & (POLLHUP | POLLERR | POLLNVAL))
					pfd[b].fd = -1;
	}
	free(pfd);
	return rc;
}

/* Stop a command still running when we stop early: TERM, then KILL. */
static void end_child(struct rec *r)
{
	int status;

	if (r->go_fd >= 0) {
		close(r->go_fd);     /* never released: it exits on EOF */
		r->go_fd = -1;
	}
	if (r->exec_err_fd >= 0) {
		close(r->exec_err_fd);
		r->exec_err_fd = -1;
	}
	if (!r->child)
		return;
	r->st->child_stopped = true;
	kill(r->child, SIGTERM);
	for (int i = 0; i < 50; i++) {
		if (waitpid(r->child, &status, WNOHANG) == r->child) {
			r->st->child_exited = true;
			r->st->child_status = status;
			r->child = 0;
			return;
		}
		usleep(20000);
	}
	/* (said: a program that ignores SIGTERM ends by SIGKILL, which its
	 * exit status alone would not explain) */
	fprintf(stderr, "ptflame record: note: %s (pid %d) did not exit 1 s after SIGTERM "
		"(it may ignore it): killed it (SIGKILL)\n",
		r->o->argv && r->o->argv[0] ? r->o->argv[0] : "the program", (int)r->child);
	kill(r->child, SIGKILL);
	waitpid(r->child, &status, 0);
	r->st->child_exited = true;
	r->st->child_status = status;
	r->child = 0;
}

/* ---- setup + teardown -------------------------------------------------------- */

static int check_opts(struct rec *r, uint64_t *data, uint64_t *aux)
{
	const struct rc_pt_opts *o = r->o;
	uint64_t page = (uint64_t)r->page;
	bool priv = geteuid() == 0;

	if (!!o->argv + !!o->nr_pids + !!o->nr_tids != 1)
		return fail(r, -EINVAL, "give exactly one target: -p PID, -t TID or -- CMD");
	/* perf's AUX defaults: 4 MiB for root, 128 KiB otherwise (mlock). The
	 * data ring carries the switches of every task on the CPU: 2 MiB for
	 * root, so a busy machine does not overflow it between wakeups. */
	*aux = o->aux_size ? o->aux_size : priv ? 4u << 20 : 128u << 10;
	*data = o->data_size ? o->data_size : priv ? 2u << 20 : 128u << 10;
	if (*aux < (o->snapshot ? 4096u : 8192u) || (*aux & (*aux - 1)) || *aux % page)
		return fail(r, -EINVAL, "-m/--aux-size %llu: must be a power of two, at least %u KiB",
			    (unsigned long long)*aux, o->snapshot ? 4 : 8);
	if (*data < page || (*data & (*data - 1)) || *data % page)
		return fail(r, -EINVAL, "--data-size %llu: must be a power of two, at least %llu bytes",
			    (unsigned long long)*data, (unsigned long long)page);
	if (o->snapshot && o->sideband_only)
		return fail(r, -EINVAL, "--snapshot needs the PT event (not with the sideband-only mode)");
	return 0;
}

static int read_cpus(struct rec *r)
{
	char path[512], buf[4096];
	int n;

	snprintf(path, sizeof(path), "%s/devices/system/cpu/online", r->sysfs);
	if (read_text(path, buf, sizeof(buf)) &&
	    read_text("/sys/devices/system/cpu/online", buf, sizeof(buf)))
		return fail(r, -ENOENT, "cannot read the online CPU list (%s)", path);
	n = rc_pt_parse_cpulist(buf, r->cpus, MAX_CPUS);
	if (n <= 0)
		return fail(r, -EINVAL, "cannot parse the online CPU list '%.40s'", buf);
	r->ncpus = n;
	return 0;
}

static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* perf's CPUID feature, "GenuineIntel,6,85,4" (vendor,family,model,
 * stepping): perf's PT decoder picks CPU errata workarounds from it. */
static void cpuid_string(char *buf, size_t len)
{
	buf[0] = '\0';
#if defined(__x86_64__) || defined(__i386__)
	{
		unsigned a, b, c, d, fam, model;
		char vendor[13];

		if (!__get_cpuid(0, &a, &b, &c, &d))
			return;
		memcpy(vendor, &b, 4);
		memcpy(vendor + 4, &d, 4);
		memcpy(vendor + 8, &c, 4);
		vendor[12] = '\0';
		if (!__get_cpuid(1, &a, &b, &c, &d))
			return;
		fam = (a >> 8) & 0xf;
		model = (a >> 4) & 0xf;
		if (fam == 0xf)
			fam += (a >> 20) & 0xff;
		if (fam >= 0x6)
			model += ((a >> 16) & 0xf) << 4;
		snprintf(buf, len, "%s,%u,%u,%u", vendor, fam, model, a & 0xf);
	}
#else
	(void)len;
#endif
}

/* The value of the first line of a /proc file starting with key. */
static bool proc_field(const char *path, const char *key, char *val, size_t len)
{
	char line[512];
	bool found = false;
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key))) {
			char *v = strchr(line, ':');

			if (!v)
				continue;
			v += 1 + strspn(v + 1, " \t");
			v[strcspn(v, "\n")] = '\0';
			snprintf(val, len, "%s", v);
			found = true;
		}
	fclose(f);
	return found;
}

/* HEADER_PMU_MAPPINGS: u32 nr, then per PMU u32 type and its name. */
static int pmu_mappings(struct rec *r)
{
	char dir[512], path[1024], buf[32];
	unsigned char *feat = NULL;
	size_t size = 4, cap = 0;
	uint32_t nr = 0;
	struct dirent *de;
	DIR *d;
	int rc = 0;

	snprintf(dir, sizeof(dir), "%s/bus/event_source/devices", r->sysfs);
	if (!(d = opendir(dir)))
		return 0;
	while ((de = readdir(d)) && !rc) {
		size_t nlen = strlen(de->d_name) + 1, padded = (nlen + 63) & ~(size_t)63;
		uint32_t type, plen = (uint32_t)padded;

		snprintf(path, sizeof(path), "%s/%s/type", dir, de->d_name);
		if (de->d_name[0] == '.' || read_text(path, buf, sizeof(buf)))
			continue;
		type = (uint32_t)strtoul(buf, NULL, 10);
		if (size + 8 + padded > cap) {
			unsigned char *n = realloc(feat, cap = 2 * (size + 8 + padded));

			if (!n) {
				rc = -ENOMEM;
				break;
			}
			feat = n;
		}
		memcpy(feat + size, &type, 4);
		memcpy(feat + size + 4, &plen, 4);
		memset(feat + size + 8, 0, padded);
		memcpy(feat + size + 8, de->d_name, nlen);
		size += 8 + padded;
		nr++;
	}
	closedir(d);
	if (!rc && nr) {
		memcpy(feat, &nr, 4);
		rc = rc_perf_set_feature(r->w, HEADER_PMU_MAPPINGS, feat, size);
	}
	free(feat);
	return rc;
}

/* Features that say where the file was made (perf report --header-only). */
static int host_features(struct rec *r)
{
	struct utsname u;
	char cpuid[64], val[256];
	int rc = 0;

	if (proc_field("/proc/cpuinfo", "model name", val, sizeof(val)))
		rc = rc_perf_set_string(r->w, HEADER_CPUDESC, val);
	if (!rc && proc_field("/proc/meminfo", "MemTotal", val, sizeof(val))) {
		uint64_t kb = strtoull(val, NULL, 10);

		rc = rc_perf_set_feature(r->w, HEADER_TOTAL_MEM, &kb, sizeof(kb));
	}
	if (!rc)
		rc = pmu_mappings(r);
	if (rc)
		return rc;

	if (!uname(&u)) {
		rc = rc_perf_set_string(r->w, HEADER_HOSTNAME, u.nodename);
		if (!rc)
			rc = rc_perf_set_string(r->w, HEADER_OSRELEASE, u.release);
		if (!rc)
			rc = rc_perf_set_string(r->w, HEADER_ARCH, u.machine);
	}
	cpuid_string(cpuid, sizeof(cpuid));
	if (!rc && cpuid[0])
		rc = rc_perf_set_string(r->w, HEADER_CPUID, cpuid);
	return rc;
}

static int finish_file(struct rec *r)
{
	const struct rc_pt_opts *o = r->o;
	int rc;

	rc = rc_perf_set_nrcpus(r->w, (uint32_t)sysconf(_SC_NPROCESSORS_CONF),
				(uint32_t)sysconf(_SC_NPROCESSORS_ONLN));
	if (!rc)
		rc = host_features(r);
	if (!rc && o->cmdline_argc)
		rc = rc_perf_set_cmdline(r->w, o->cmdline_argc, o->cmdline);
	if (rc)
		return fail(r, rc, "writing %s: %s", o->output, rc_perf_errmsg(r->w));
	char why[512];

	rc = rc_perf_finish(r->w, why, sizeof(why));
	r->w = NULL;
	if (rc)
		return fail(r, rc, "%s; no file written", why);
	return 0;
}

static void cleanup(struct rec *r)
{
	end_child(r);
	unmap_buffers(r);
	for (size_t i = 0; i < r->nevs; i++)
		close(r->evs[i].fd);
	free(r->evs);
	free(r->bufs);
	free(r->tasks);
	free(r->sk.copybuf);
	if (r->w)
		rc_perf_abort(r->w);
}

static int setup(struct rec *r, uint64_t data, uint64_t aux)
{
	const struct rc_pt_opts *o = r->o;
	char werr[256] = "";
	int rc;

	if ((rc = read_cpus(r)))
		return rc;
	if (!o->sideband_only && (rc = pmu_setup(r)))
		return rc;
	if ((rc = collect_targets(r)) || (rc = resolve_filter(r)))
		return rc;
	if (!o->sideband_only && !(r->sk.copybuf = malloc(aux)))
		return fail(r, -ENOMEM, "out of memory for a %llu-byte AUX copy", (unsigned long long)aux);
	if ((rc = rc_perf_create(o->output, &r->w, werr, sizeof(werr))))
		return fail(r, rc, "%s", werr[0] ? werr : strerror(-rc));
	if (o->compress && (rc = rc_perf_compress(r->w, o->compress)))
		return fail(r, rc, "%s", rc_perf_errmsg(r->w));
	rc_perf_same_kernel(r->w);
	r->sk.w = r->w;
	r->sk.scratch = r->scratch;
	r->sk.reference = reference;
	r->sk.clock = perf_now;
	r->sk.clock_ctx = r;
	if (o->argv && (rc = start_child(r)))
		return rc;
	r->per_thread = o->nr_tids > 0;
	r->aux_size = aux;
	r->text_poke = o->kernel;
	make_attrs(r);
	if (!r->per_thread)
		probe_cpu_wide(r);
	plan_wakes(r);
	make_attrs(r);
	raise_nofile();
	if ((rc = open_events(r)) || (rc = open_wakes(r)) || (rc = set_filters(r)) ||
	    (rc = map_buffers(r, data, aux)) ||
	    (rc = redirect_events(r)))
		return rc;
	if ((rc = write_attrs(r)) || (rc = write_id_index(r)) || (rc = write_info(r)) ||
	    (rc = synthesize(r)))
		return rc;
	/* perf 6.x: what exists at the start has been written */
	{
		struct perf_event_header h = { PERF_RECORD_FINISHED_INIT, 0, sizeof(h) };

		if ((rc = rc_perf_write(r->w, &h)))
			return write_error(r, rc);
	}
	r->st->cpus = r->per_thread ? 0 : (unsigned)r->ncpus;
	r->st->threads = (unsigned)r->ntasks;
	r->st->cpu_wide_switch = r->cpu_wide;
	r->st->wakes = r->wakes;
	/* CPU-wide switch and wake events start now; the rest on exec (-- CMD)
	 * or now. */
	if ((rc = ioctl_all(r, EV_SWITCH, PERF_EVENT_IOC_ENABLE, (size_t)-1)) ||
	    (rc = ioctl_all(r, EV_WAKE, PERF_EVENT_IOC_ENABLE, (size_t)-1)))
		return fail(r, rc, "enabling the switch events: %s", strerror(-rc));
	if (o->argv)
		return release_child(r);
	if ((rc = ioctl_all(r, -1, PERF_EVENT_IOC_ENABLE, (size_t)-1)))
		return fail(r, rc, "enabling the events: %s", strerror(-rc));
	return 0;
}

int rc_pt_record(const struct rc_pt_opts *o, struct rc_pt_stats *st, char *err, size_t errlen)
{
	struct rec *r = calloc(1, sizeof(*r));
	uint64_t data = 0, aux = 0;
	int rc;

	if (errlen)
		err[0] = '\0';
	memset(st, 0, sizeof(*st));
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r->o = o;
	r->st = st;
	r->err = err;
	r->errlen = errlen;
	r->sysfs = o->sysfs ? o->sysfs : "/sys";
	r->page = sysconf(_SC_PAGESIZE);
	r->go_fd = r->exec_err_fd = -1;
	r->round_ms = now_ms();
	rc = check_opts(r, &data, &aux);
	if (!rc)
		rc = setup(r, data, aux);
	if (!rc)
		rc = run_loop(r);
	if (!rc) {
		ioctl_all(r, -1, PERF_EVENT_IOC_DISABLE, (size_t)-1);
		rc = drain_all(r);
		if (!rc && o->snapshot)
			rc = snapshot(r, false);
	}
	st->sideband_records = r->sk.rs.records;
	st->aux_bytes = r->sk.aux_bytes;
	st->auxtrace_records = r->sk.auxtrace_records;
	st->truncated = r->sk.rs.truncated;
	st->restarts = r->sk.restarts;
	st->marked = r->sk.marked;
	st->aux_watermark = o->sideband_only ? 0 : r->attr[EV_PT].aux_watermark;
	st->lost_records = r->sk.rs.lost;
	st->lost_events = r->sk.rs.lost_events;
	if (!rc) {
		end_child(r);
		rc = finish_file(r);
	}
	cleanup(r);
	free(r);
	return rc;
}
