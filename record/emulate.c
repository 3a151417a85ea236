/* ptflame - record/emulate.c: the ptrace stepper and scheduler of the
 * emulated Intel PT recorder (see emulate.h for the model).
 *
 * Structure: struct emu holds everything of one recording. Threads are
 * ptrace-stopped whenever the emulator is not stepping them, except
 * "native" threads: those in a syscall that may block (or running to the
 * start symbol), which run freely in the kernel while the others are
 * stepped; waitpid(-1) collects their completion.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <intel-pt.h>

#include "decoder/dc_vec.h"
#include "record/emulate.h"
#include "record/emu_out.h"
#include "record/perfwriter.h"
#include "record/procmaps.h"
#include "record/ptenc.h"
#include "record/qemu_proto.h"  /* RC_QP_KEY_* */
#include "record/wake_keys.h"  /* wk_fd_key, wk_wait_keys */


enum resume { RS_NONE, RS_START, RS_SYSRET, RS_SIGNAL, RS_SIGRETURN };
enum nkind { NK_SYSCALL, NK_TO_START };

struct proc {
	pid_t pid;
	struct rc_map *maps;
	size_t nmaps;
	bool maps_dirty;          /* re-read /proc/PID/maps before resuming */
	uint64_t maps_ns;         /* earliest announcement of maps, or 0 */
	uint64_t bp;              /* start breakpoint address, 0: none */
	long bp_word;             /* original word at bp */
	bool detached;
	uint64_t exit_ns;         /* when it exited (exit_group, a fatal
				   * signal), 0: alive; its threads end then */
};

struct thr {
	struct rc_emu_sthr s;     /* scheduling (first: thr_of) */
	pid_t tid;
	struct proc *proc;
	uint64_t ip;              /* next instruction to execute */
	bool started;
	bool let_go;              /* detached (or found gone) at the end */
	bool unborn;              /* made (its FORK written), then detached at
				   * the stop before it ran: end_threads ends it */
	bool fatal;               /* got a fatal signal: its process dies */
	/* back from a syscall that kept its CPU (native_done), its return to
	 * user mode (truth, PGE) not written yet: written when its CPU's clock
	 * is the smallest (ret_out, the next step), so that an exit_group of
	 * another thread of its process stepped before then kills it in the
	 * syscall (thr_gone), as the kernel does, instead of its return after
	 * the exit */
	bool ret_due;
	/* why the thread resumes user mode next (truth + nothing else) */
	enum resume rs;
	long rs_nr;
	int rs_sig;
	uint64_t rs_from;
	/* native execution */
	enum nkind nk;
	bool async;
	struct timespec t0;
	uint64_t v0;
	/* a syscall run while the thread keeps its CPU: its CPU time and
	 * voluntary switches at the start (thr_usage; usage0: read) */
	bool usage0;
	uint64_t cpu0;
	long vcsw0;
	/* ptrace stops of ours in that syscall (a clone's event stop, ...):
	 * each is a voluntary switch that is no sleep of the program's */
	long our_stops;
	long sys_nr;
	uint64_t futex_addr;      /* futex wait: the address */
	uint64_t sys_arg0;        /* rdi of the pending syscall */
	bool futex_wait;
	/* CLONE_CHILD_CLEARTID: the futex the kernel wakes at its exit
	 * (pthread_join waits there); 0: unknown */
	uint64_t ctid;
	uint64_t clone_ctid;      /* that of the thread its clone is making */
	/* the wake keys its wait waits on (wake_keys.h): a read's pipe, socket
	 * or eventfd, a poll's, select's or epoll_wait's fds, a signal wait's
	 * thread and process; n 0: none */
	struct rc_qp_keyset wk;
	/* the syscall was interrupted by a signal delivered to a handler
	 * (-EINTR, or -ERESTART* at the stop: the kernel fixes rax after) */
	bool sig_intr;
	/* created by a thread still running natively to the start symbol: it
	 * runs natively to the start symbol too */
	bool to_start;
};

struct stash { pid_t tid; int status; };

/* A futex wake (or thread exit: it wakes pthread_join at its clear-tid
 * address, uaddr 0 when unknown: any futex) issued by a traced thread:
 * virtual time, real time of issue, and the waker (its CPU then). */
struct wake { uint64_t uaddr, vtime; struct timespec real; pid_t pid, tid; unsigned cpu; };
#define NWAKES 64

struct emu {
	const struct rc_emu_opts *o;
	char *err;
	size_t errlen;
	struct rc_ptenc_config ecfg;
	struct rc_perf_writer *w;
	FILE *truth, *dump;
	struct rc_emu_syms *syms;
	csh cs;
	struct rc_emu_sched s;    /* its cpu, ncpu: the virtual CPUs */
	struct rc_emu_cpu *cpu;   /* = s.cpu */
	unsigned ncpu;            /* = s.ncpu */
	struct thr **thr;
	size_t nthr, cthr;
	struct proc **proc;
	size_t nproc, cproc;
	struct stash *stash;
	size_t nstash, cstash;
	struct rc_emu_auxsink sink;
	uint64_t insns, slice, vstart;
	uint64_t step_ns;         /* average real cost of one ptrace step */
	struct wake wakes[NWAKES];
	unsigned nwakes;          /* ring: total ever recorded */
	pid_t child;              /* our own child (launch mode), 0 otherwise */
	int child_status;
	bool child_reaped;
	bool stop;                /* max-insns reached, or told to stop */
	bool let_go;              /* let_go ran */
	struct timespec stop_wall; /* when told to stop (0: not so) */
	int fail;                 /* first error (negative errno) */
	struct rc_emu_stats *st;
};

static int efail(struct emu *e, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int efail(struct emu *e, int rc, const char *fmt, ...)
{
	if (e->fail)
		return e->fail;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->err, e->errlen, fmt, ap);
	va_end(ap);
	e->fail = rc < 0 ? rc : -EIO;
	return e->fail;
}

static int wfail(struct emu *e, int rc)
{
	if (rc >= 0)
		return 0;
	return efail(e, rc, "%s", rc_perf_errmsg(e->w));
}

/* Thread TID's CPU time (/proc/TID/schedstat: on-CPU ns) and voluntary
 * context switches (/proc/TID/status); false if either cannot be read. */
static bool thr_usage(pid_t tid, uint64_t *cpu, long *vcsw)
{
	char fn[64], buf[4096];
	unsigned long long ns;
	snprintf(fn, sizeof(fn), "/proc/%d/schedstat", (int)tid);
	FILE *f = fopen(fn, "re");
	if (!f)
		return false;
	bool ok = fscanf(f, "%llu", &ns) == 1;
	fclose(f);
	snprintf(fn, sizeof(fn), "/proc/%d/status", (int)tid);
	if (!ok || !(f = fopen(fn, "re")))
		return false;
	ok = false;
	while (!ok && fgets(buf, sizeof(buf), f))
		ok = sscanf(buf, "voluntary_ctxt_switches: %ld", vcsw) == 1;
	fclose(f);
	*cpu = ns;
	return ok;
}

static uint64_t elapsed_ns(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	int64_t d = (int64_t)(t1.tv_sec - t0->tv_sec) * 1000000000ll + (t1.tv_nsec - t0->tv_nsec);
	return d > 0 ? (uint64_t)d : 0;
}

/* ---- truth log -------------------------------------------------------- */

#define truth(e, t, cpu, th, ...) \
	rc_emu_truth((e)->truth, t, cpu, (th)->proc->pid, (th)->tid, __VA_ARGS__)

/* ---- sideband --------------------------------------------------------- */

static void read_comm(pid_t tid, char *buf, size_t n)
{
	char fn[64];
	snprintf(fn, sizeof(fn), "/proc/%d/comm", (int)tid);
	FILE *f = fopen(fn, "re");
	buf[0] = 0;
	if (f) {
		if (fgets(buf, (int)n, f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
	if (!buf[0])
		snprintf(buf, n, "%d", (int)tid);
}

static int emit_comm(struct emu *e, struct thr *th, unsigned cpu, uint64_t t, bool exec)
{
	char comm[64];
	read_comm(th->tid, comm, sizeof(comm));
	truth(e, t, -1, th, "comm %s", comm);
	struct dc_sample_id s = rc_emu_sid(cpu, false, th->proc->pid, th->tid, t);
	return wfail(e, rc_perf_comm(e->w, (uint32_t)th->proc->pid, (uint32_t)th->tid, comm,
				     exec, &s));
}

static int emit_mmap(struct emu *e, struct thr *th, const struct rc_map *m, unsigned cpu,
		     uint64_t t)
{
	truth(e, t, -1, th, "mmap %#" PRIx64 " %#" PRIx64 " %#" PRIx64 " %s", m->start,
	      m->end - m->start, m->pgoff, m->path);
	struct dc_rec_mmap r;
	rc_map_mmap2(m, (uint32_t)th->proc->pid, (uint32_t)th->tid, &r);
	struct dc_sample_id s = rc_emu_sid(cpu, false, th->proc->pid, th->tid, t);
	return wfail(e, rc_perf_mmap2(e->w, &r, &s));
}

static bool same_map(const struct rc_map *a, const struct rc_map *b)
{
	return a->start == b->start && a->end == b->end && a->pgoff == b->pgoff &&
	       a->ino == b->ino && !strcmp(a->path, b->path);
}

/* Re-read the process's executable mappings and announce new ones. */
static int sync_maps(struct emu *e, struct thr *th, unsigned cpu, uint64_t t)
{
	struct proc *p = th->proc;
	struct rc_map *maps;
	size_t n;
	int rc = rc_maps_read(p->pid, false, &maps, &n);
	if (rc < 0)
		return efail(e, rc, "cannot read /proc/%d/maps: %s", (int)p->pid, strerror(-rc));
	for (size_t i = 0; i < n && !e->fail; i++) {
		size_t j = 0;
		while (j < p->nmaps && !same_map(&maps[i], &p->maps[j]))
			j++;
		if (j < p->nmaps) {
			maps[i].announced = p->maps[j].announced;
		} else {
			emit_mmap(e, th, &maps[i], cpu, t);
			maps[i].announced = t;
		}
	}
	rc_maps_free(p->maps, p->nmaps);
	p->maps = maps;
	p->nmaps = n;
	p->maps_dirty = false;
	if (!p->maps_ns)
		p->maps_ns = t;
	return e->fail;
}

/* A thread goes on CPU at t, earlier on its CPU's clock than its process's
 * mappings were first announced from another CPU (threads reach --start at
 * different times): announce them again at t, or a decoder meets the
 * thread's code before its MMAP2 records. (Mappings added later, by a
 * syscall, are announced from that syscall's time only.) */
static int maps_at(struct emu *e, struct thr *th, unsigned cpu, uint64_t t)
{
	struct proc *p = th->proc;
	if (!p->maps_ns || t >= p->maps_ns)
		return 0;
	for (size_t i = 0; i < p->nmaps && !e->fail; i++) {
		if (p->maps[i].announced != p->maps_ns)
			continue;
		emit_mmap(e, th, &p->maps[i], cpu, t);
		p->maps[i].announced = t;
	}
	p->maps_ns = t;
	return e->fail;
}

static const struct rc_map *find_map(const struct proc *p, uint64_t addr)
{
	for (size_t i = 0; i < p->nmaps; i++)
		if (addr >= p->maps[i].start && addr < p->maps[i].end)
			return &p->maps[i];
	return NULL;
}

/* ---- AUX chunks --------------------------------------------------------- */

/* Hand out the encoded bytes of CPU c as an AUX chunk once there are
 * sink.chunk of them (all of them when FINAL): rc_emu_drain. */
static int drain(struct emu *e, unsigned c, bool final)
{
	int rc = rc_emu_cpu_drain(&e->s, c, final);
	if (rc == -ENOMEM)
		return efail(e, rc, "out of memory");
	return wfail(e, rc);
}

static int enc_check(struct emu *e, unsigned c, int rc, const char *what)
{
	if (rc < 0)
		return efail(e, rc, "PT encoder (cpu %u, %s): %s", c, what, strerror(-rc));
	return drain(e, c, false);
}

/* ---- scheduling (record/emu_sched.c) --------------------------------------- */

static struct thr *thr_of(struct rc_emu_sthr *s)
{
	return (struct thr *)s;  /* its first member */
}

static int sfail(struct emu *e, int rc)
{
	if (rc >= 0)
		return 0;
	if (e->fail)
		return e->fail;  /* switched_in's own */
	if (rc == -ENOMEM)
		return efail(e, rc, "out of memory");
	return wfail(e, rc);
}

static void make_ready(struct emu *e, struct thr *t, uint64_t when)
{
	rc_emu_make_ready(&e->s, &t->s, when);
}

/* T is on CPU c (the switch records are written at the middle of the
 * switch cost): its trace resumes at the CPU's current time (PGE). */
static int switched_in(void *ctx, unsigned c, struct rc_emu_sthr *st, uint64_t rt)
{
	struct emu *e = ctx;
	struct thr *t = thr_of(st);
	struct rc_emu_cpu *v = &e->cpu[c];
	uint64_t now = v->now;
	if (maps_at(e, t, c, rt) || (t->proc->maps_dirty && sync_maps(e, t, c, rt)))
		return e->fail;
	switch (t->rs) {
	case RS_START:
		truth(e, now, (int)c, t, "start %#" PRIx64, t->ip);
		break;
	case RS_SYSRET:
		truth(e, now, (int)c, t, "sysret %ld %#" PRIx64, t->rs_nr, t->ip);
		break;
	case RS_SIGRETURN:
		truth(e, now, (int)c, t, "sigreturn %#" PRIx64, t->ip);
		break;
	case RS_SIGNAL:
		truth(e, now, (int)c, t, "signal %d %#" PRIx64 " %#" PRIx64, t->rs_sig, t->rs_from,
		      t->ip);
		break;
	case RS_NONE:
		break;
	}
	t->rs = RS_NONE;
	t->started = true;
	v->on = true;
	return enc_check(e, c, rc_ptenc_enable(v->q.enc, now, t->ip), "enable");
}

/* The thread on CPU c leaves it (its trace is already disabled). */
static int cpu_leave(struct emu *e, unsigned c, bool preempt)
{
	return sfail(e, rc_emu_cpu_leave(&e->s, c, preempt));
}

/* Asynchronous TIP.PGD of the thread on CPU c (preemption, exit, stop,
 * fatal signal) before it leaves the CPU. The CPU's clock moves on 1 ns, so
 * that the switch-out or EXIT record that follows is stamped strictly after
 * the thread's last timed packet: perf processes a sideband record before
 * trace data of the same time, and would give the thread's last packets
 * to the next thread. */
static int disable_async(struct emu *e, unsigned c, uint64_t ip)
{
	struct rc_emu_cpu *v = &e->cpu[c];
	int rc = enc_check(e, c, rc_ptenc_disable(v->q.enc, v->now, ip, RC_PTENC_OFF_ASYNC), "disable");
	v->now += 1;
	return rc;
}

static int assign_idle(struct emu *e)
{
	return sfail(e, rc_emu_assign_idle(&e->s));
}

/* ---- threads and processes ------------------------------------------------- */

static struct thr *find_thr(struct emu *e, pid_t tid)
{
	for (size_t i = 0; i < e->nthr; i++)
		if (e->thr[i]->tid == tid && e->thr[i]->s.state != RC_EMU_GONE)
			return e->thr[i];
	return NULL;
}

/* The traced process that T's syscall NR (registers R) sends SIGKILL,
 * or NULL (rc_emu_sigkill_target; kill(0, ...): its own group, its own
 * process among them) */
static struct proc *sigkilled(struct emu *e, const struct thr *t, long nr,
			      const struct user_regs_struct *r)
{
	pid_t pid, tid;
	int k = rc_emu_sigkill_target(nr, r->rdi, r->rsi, r->rdx, &pid, &tid);
	const struct thr *o;

	if (k == 2)
		return (o = find_thr(e, tid)) ? o->proc : NULL;
	if (k == 1 && (!pid || pid == t->proc->pid))
		return t->proc;
	for (size_t i = 0; k == 1 && i < e->nproc; i++)
		if (e->proc[i]->pid == pid && !e->proc[i]->detached)
			return e->proc[i];
	return NULL;
}

static struct proc *new_proc(struct emu *e, pid_t pid)
{
	if (DC_VEC_PUSH_ROOM(e->proc, e->nproc, e->cproc, 4))
		return NULL;
	struct proc *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->maps_dirty = true;
	e->proc[e->nproc++] = p;
	return p;
}

static struct thr *new_thr(struct emu *e, pid_t tid, struct proc *p)
{
	if (DC_VEC_PUSH_ROOM(e->thr, e->nthr, e->cthr, 8))
		return NULL;
	struct thr *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->proc = p;
	t->s.pid = p->pid;
	t->s.tid = tid;
	t->s.cpu = -1;
	t->s.state = RC_EMU_NEW;
	if (rc_emu_sched_add(&e->s, &t->s) < 0) {
		free(t);
		return NULL;
	}
	e->thr[e->nthr++] = t;
	e->st->threads++;
	return t;
}

/* Oldest first: a thread's stop can be followed by its exit (SIGKILL). */
static int stash_take(struct emu *e, pid_t tid, int *status)
{
	for (size_t i = 0; i < e->nstash; i++)
		if (e->stash[i].tid == tid) {
			*status = e->stash[i].status;
			memmove(&e->stash[i], &e->stash[i + 1], (--e->nstash - i) * sizeof(*e->stash));
			return 1;
		}
	return 0;
}

static void note_child_exit(struct emu *e, pid_t tid, int status);

static void stash_put(struct emu *e, pid_t tid, int status)
{
	if (WIFEXITED(status) || WIFSIGNALED(status))
		note_child_exit(e, tid, status);
	if (DC_VEC_PUSH_ROOM(e->stash, e->nstash, e->cstash, 8))
		return;
	e->stash[e->nstash++] = (struct stash){ tid, status };
}

static void note_child_exit(struct emu *e, pid_t tid, int status)
{
	if (tid == e->child) {
		e->child_status = status;
		e->child_reaped = true;
	}
}

/* The current virtual time of a thread that is not on a CPU. */
static uint64_t latest_now(const struct emu *e)
{
	return rc_emu_latest_now(&e->s);
}

static int ret_out(struct emu *e, unsigned c);

/* T exited (or was killed). A thread of a process that exited (exit_group,
 * a fatal signal) ends when its process did, as the kernel kills them
 * then: not when the host reported its end (a thread blocked in a read
 * lived on 40-80 ms after its process's exit_group, the host's teardown
 * under ptrace), nor, on a CPU whose clock fell behind, before it. */
static int thr_gone(struct emu *e, struct thr *t)
{
	uint64_t now, dead = t->proc->exit_ns;
	unsigned c = 0;
	bool oncpu = t->s.state == RC_EMU_ONCPU;
	/* in a syscall that keeps its CPU (tgkill of its own SIGKILL): it
	 * dies there, and the CPU is free (left as its current thread, the
	 * next step found it gone again, and again: a recording that never
	 * ended) */
	bool held = t->s.state == RC_EMU_NATIVE && t->s.cpu >= 0 &&
		    e->cpu[t->s.cpu].cur == &t->s;
	if (oncpu) {
		c = (unsigned)t->s.cpu;
		if (t->ret_due && dead && e->cpu[c].now > dead) {
			/* killed in the syscall it was to return from (ret_due)
			 * when its process exited: it exits then, its trace off
			 * since the syscall; its CPU's clock (the syscall's end)
			 * goes back there, nothing on it was written since */
			t->ret_due = false;
			e->cpu[c].now = dead > t->v0 ? dead : t->v0 + 1;
		} else if (ret_out(e, c)) {
			return e->fail;
		}
		if (dead && e->cpu[c].now + 1 < dead) {
			/* (its PGD, then the exit at dead) */
			if (e->cpu[c].on)
				enc_check(e, c, rc_ptenc_stamp(e->cpu[c].q.enc, e->cpu[c].now, t->ip,
									 dead - 1), "stamp");
			e->cpu[c].now = dead - 1;
		}
		now = e->cpu[c].now;
	} else if (t->s.state == RC_EMU_NATIVE) {
		/* an exit ends the thread at its entry, as on qemu (thr_exit):
		 * the host's teardown under ptrace (milliseconds) is no wait of
		 * the program's, nor is the time the other CPUs were stepped
		 * meanwhile (the record's place in the file does not matter:
		 * readers sort sideband by time, as they do the wakes) */
		bool exits = t->nk == NK_SYSCALL && (t->sys_nr == SYS_exit ||
						     t->sys_nr == SYS_exit_group);
		now = t->v0 + (exits ? e->o->ns_per_insn : elapsed_ns(&t->t0));
		if (!exits && now < latest_now(e))
			now = latest_now(e);
		if (dead && now > dead)
			now = dead > t->v0 ? dead : t->v0;
		if (held) {
			c = (unsigned)t->s.cpu;
			if (now < e->cpu[c].now)
				now = e->cpu[c].now;
			e->cpu[c].now = now;
		}
	} else {
		uint64_t ready = t->s.state == RC_EMU_READY ? t->s.ready_ns : 0;
		/* (ready after a syscall, its return not written yet: killed
		 * in it, at the exit, whenever it would have returned) */
		uint64_t floor = t->s.state != RC_EMU_READY ? 0 :
				 t->rs == RS_NONE || t->rs == RS_START ? ready : t->v0 + 1;
		now = ready > latest_now(e) ? ready : latest_now(e);
		if (dead && now > dead)
			now = dead > floor ? dead : floor;
	}
	if (oncpu && e->cpu[c].on) {
		disable_async(e, c, t->ip);
		now = e->cpu[c].now;
	}
	if (t->fatal && !t->proc->exit_ns)
		t->proc->exit_ns = now;
	truth(e, now, oncpu || held ? (int)c : -1, t, "exit");
	struct dc_sample_id s = rc_emu_sid(c, false, t->proc->pid, t->tid, now);
	wfail(e, rc_perf_exit(e->w, (uint32_t)t->proc->pid, (uint32_t)t->proc->pid,
			      (uint32_t)t->tid, (uint32_t)t->tid, now, &s));
	t->s.state = RC_EMU_GONE;
	if ((oncpu || held) && t->proc->exit_ns) {
		/* its process died: a thread of it ready for a CPU dies where
		 * it waits, as the kernel kills a runnable task, not switched
		 * in onto the CPU this one leaves (it was, and exited there a
		 * switch after the death) */
		for (size_t i = 0; i < e->nthr && !e->fail; i++)
			if (e->thr[i]->proc == t->proc && e->thr[i]->s.state == RC_EMU_READY)
				thr_gone(e, e->thr[i]);
	}
	if (oncpu || held)
		cpu_leave(e, c, false);
	return e->fail;
}

/* T's end reported by the host (STATUS): killed by a signal (a fatal one
 * of its process's, a SIGKILL from outside), its process died then, and
 * its other threads with it (thr_gone: the first one reported sets the
 * time; an exit_group's is set at its entry already). */
static int thr_died(struct emu *e, struct thr *t, int status)
{
	if (WIFSIGNALED(status))
		t->fatal = true;
	return thr_gone(e, t);
}

/* ---- ptrace helpers ---------------------------------------------------------- */

static int getregs(pid_t tid, struct user_regs_struct *r)
{
	return ptrace(PTRACE_GETREGS, tid, 0, r) < 0 ? -errno : 0;
}

static size_t read_mem(pid_t tid, uint64_t addr, uint8_t *buf, size_t n)
{
	struct iovec l = { buf, n }, r = { (void *)(uintptr_t)addr, n };
	ssize_t got = process_vm_readv(tid, &l, 1, &r, 1, 0);
	if (got > 0)
		return (size_t)got;
	/* crosses into an unreadable page, or no process_vm_readv: by words */
	size_t done = 0;
	while (done + 8 <= n) {
		errno = 0;
		long w = ptrace(PTRACE_PEEKTEXT, tid, (void *)(uintptr_t)(addr + done), 0);
		if (errno)
			break;
		memcpy(buf + done, &w, 8);
		done += 8;
	}
	return done;
}

static bool sig_in_mask(pid_t tid, const char *field, int sig)
{
	char fn[64], line[256];
	snprintf(fn, sizeof(fn), "/proc/%d/status", (int)tid);
	FILE *f = fopen(fn, "re");
	if (!f)
		return false;
	bool in = false;
	size_t fl = strlen(field);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, fl)) {
			unsigned long long m = strtoull(line + fl, NULL, 16);
			in = (m >> (sig - 1)) & 1;
			break;
		}
	fclose(f);
	return in;
}

static bool default_ignored(int sig)
{
	return sig == SIGCHLD || sig == SIGCONT || sig == SIGURG || sig == SIGWINCH;
}

static bool is_restart(long rax)
{
	return rax == -512 || rax == -513 || rax == -514 || rax == -516;
}

static int resume(pid_t tid, enum __ptrace_request req, int sig)
{
	return ptrace(req, tid, 0, (void *)(long)sig) < 0 ? -errno : 0;
}

/* ---- native execution: syscalls and the run to the start symbol ------------- */

static int start_native(struct emu *e, struct thr *t, enum nkind nk, bool async, long nr)
{
	t->s.state = RC_EMU_NATIVE;
	t->nk = nk;
	t->async = async;
	t->sys_nr = nr;
	t->usage0 = nk == NK_SYSCALL && !async && thr_usage(t->tid, &t->cpu0, &t->vcsw0);
	t->our_stops = 0;
	clock_gettime(CLOCK_MONOTONIC, &t->t0);
	int rc = resume(t->tid, nk == NK_TO_START ? PTRACE_CONT : PTRACE_SINGLESTEP, 0);
	if (rc < 0 && rc != -ESRCH)
		return efail(e, rc, "ptrace resume of thread %d: %s", (int)t->tid, strerror(-rc));
	return 0;
}

/* Wait for the next event of TID. Never waitpid(TID) alone: when another
 * thread ends the process (exit, a fatal signal), the kernel reports the
 * group leader's exit only after the other threads are reaped, and a traced
 * thread is reaped only by its tracer, us. So reap whatever comes; events
 * of other threads wait in the stash for collect(). */
static int wait_tid(struct emu *e, pid_t tid, int *status)
{
	if (stash_take(e, tid, status))
		return 0;
	for (;;) {
		int st;
		pid_t r = waitpid(-1, &st, __WALL);
		if (r == tid) {
			*status = st;
			return 0;
		}
		if (r > 0)
			stash_put(e, r, st);
		else if (errno != EINTR)
			return -errno;
	}
}

static int set_breakpoint(struct emu *e, struct thr *t, const char *sym)
{
	struct proc *p = t->proc;
	char exe[4096], fn[64];
	snprintf(fn, sizeof(fn), "/proc/%d/exe", (int)p->pid);
	ssize_t n = readlink(fn, exe, sizeof(exe) - 1);
	if (n <= 0)
		return 0;
	exe[n] = 0;
	struct rc_map *maps;
	size_t nm;
	if (rc_maps_read(p->pid, false, &maps, &nm) < 0)
		return 0;
	uint64_t a = rc_emu_sym_addr(e->syms, maps, nm, exe, sym);
	rc_maps_free(maps, nm);
	if (!a)
		return 0;
	errno = 0;
	long w = ptrace(PTRACE_PEEKTEXT, t->tid, (void *)(uintptr_t)a, 0);
	if (errno)
		return -errno;
	long nw = (w & ~0xffL) | 0xcc;
	if (ptrace(PTRACE_POKETEXT, t->tid, (void *)(uintptr_t)a, (void *)nw) < 0)
		return -errno;
	p->bp = a;
	p->bp_word = w;
	return 1;
}

static int bp_poke(const struct thr *t, long word)
{
	return ptrace(PTRACE_POKETEXT, t->tid, (void *)(uintptr_t)t->proc->bp, (void *)word) < 0
		       ? -errno : 0;
}

static int clear_breakpoint(struct thr *t)
{
	struct proc *p = t->proc;
	if (!p->bp)
		return 0;
	int rc = ptrace(PTRACE_POKETEXT, t->tid, (void *)(uintptr_t)p->bp, (void *)p->bp_word) < 0
			 ? -errno : 0;
	p->bp = 0;
	return rc;
}

static int adopt_new(struct emu *e, struct thr *nt, int status);

/* Is a thread of T's process other than T still running natively to the
 * start symbol (or about to: new, created by such a thread)? */
static bool others_to_start(const struct emu *e, const struct thr *t)
{
	for (size_t i = 0; i < e->nthr; i++) {
		const struct thr *o = e->thr[i];
		if (o == t || o->proc != t->proc)
			continue;
		if ((o->s.state == RC_EMU_NATIVE && o->nk == NK_TO_START) ||
		    (o->s.state == RC_EMU_NEW && o->to_start))
			return true;
	}
	return false;
}

/* A clone/fork/vfork event of T: make the new thread known. */
static int on_new_task(struct emu *e, struct thr *t, int ev)
{
	unsigned long msg = 0;
	ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &msg);
	pid_t ntid = (pid_t)msg;
	/* (within the clone as native_done will time it: a clone that does
	 * not sleep lasts its CPU time, so its CPU time so far, not the wall
	 * time, which on a loaded host put the FORK after the clone's return,
	 * the creator's stack there no longer in it) */
	uint64_t d = elapsed_ns(&t->t0), cpu1;
	long vcsw1;
	if (t->usage0 && thr_usage(t->tid, &cpu1, &vcsw1) && cpu1 >= t->cpu0 && cpu1 - t->cpu0 < d)
		d = cpu1 - t->cpu0;
	uint64_t now = t->v0 + d;
	if (!t->async && t->s.state == RC_EMU_NATIVE && t->s.cpu >= 0)
		now = e->cpu[t->s.cpu].now + d;
	struct proc *p = t->proc;
	bool is_thread = ev == PTRACE_EVENT_CLONE;
	/* a thread the host made after its process's death is known (a
	 * SIGKILL from another thread, under load): the kernel made it
	 * before that death, not at the host's late finish */
	if (is_thread && p->exit_ns && now > p->exit_ns)
		now = p->exit_ns > t->v0 ? p->exit_ns : t->v0;
	if (!is_thread) {
		p = new_proc(e, ntid);
		if (!p)
			return efail(e, -ENOMEM, "out of memory");
		/* the child has the parent's mappings: announce them again for
		 * its pid (perf would copy them; our truth log needs them) */
		p->maps_dirty = true;
		/* and its memory: the start breakpoint too */
		p->bp = t->proc->bp;
		p->bp_word = t->proc->bp_word;
	}
	struct thr *nt = new_thr(e, ntid, p);
	if (!nt)
		return efail(e, -ENOMEM, "out of memory");
	nt->s.ready_ns = now;
	if (is_thread) {
		nt->ctid = t->clone_ctid;
		t->clone_ctid = 0;
	}
	nt->to_start = t->s.state == RC_EMU_NATIVE && t->nk == NK_TO_START && p->bp;
	struct dc_sample_id s = rc_emu_sid(0, false, p->pid, ntid, now);
	wfail(e, rc_perf_fork(e->w, (uint32_t)p->pid, (uint32_t)t->proc->pid, (uint32_t)ntid,
			      (uint32_t)t->tid, now, &s));
	if (is_thread)
		truth(e, now, -1, nt, "clone %d", (int)t->tid);
	else
		truth(e, now, -1, nt, "fork %d %d", (int)t->proc->pid, (int)t->tid);
	/* the name it inherited (perf gets it from the FORK record) */
	char comm[64];
	read_comm(ntid, comm, sizeof(comm));
	truth(e, now, -1, nt, "comm %s", comm);
	int status;
	if (!stash_take(e, ntid, &status)) {
		int rc = wait_tid(e, ntid, &status);
		if (rc < 0)
			return efail(e, rc, "waitpid for new thread %d: %s", (int)ntid, strerror(-rc));
	}
	return adopt_new(e, nt, status);
}

/* The first stop of a new thread: it becomes ready where it stands. */
static int adopt_new(struct emu *e, struct thr *nt, int status)
{
	/* (its FORK and clone line are written: its end must be too, or
	 * the trace has a thread that never ends) */
	if (WIFEXITED(status) || WIFSIGNALED(status))
		return thr_gone(e, nt);
	struct user_regs_struct r;
	int rc = getregs(nt->tid, &r);
	if (rc < 0)
		return efail(e, rc, "ptrace getregs of thread %d: %s", (int)nt->tid, strerror(-rc));
	nt->ip = r.rip;
	nt->rs = RS_START;
	if (e->stop) {
		ptrace(PTRACE_DETACH, nt->tid, 0, 0);
		nt->s.state = RC_EMU_GONE;
		nt->unborn = true;
		return 0;
	}
	if (nt->to_start && nt->proc->bp) {
		/* its creator has not reached the start symbol: neither has it */
		nt->v0 = nt->s.ready_ns;
		return start_native(e, nt, NK_TO_START, true, -1);
	}
	make_ready(e, nt, nt->s.ready_ns);
	return 0;
}

static int on_exec(struct emu *e, struct thr *t)
{
	unsigned long former = 0;
	ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &former);
	uint64_t now = t->v0 + elapsed_ns(&t->t0);
	struct proc *p = t->proc;
	rc_maps_free(p->maps, p->nmaps);
	p->maps = NULL;
	p->nmaps = 0;
	p->maps_dirty = true;
	p->maps_ns = 0;
	p->bp = 0;
	char exe[4096], fn[64];
	snprintf(fn, sizeof(fn), "/proc/%d/exe", (int)p->pid);
	ssize_t n = readlink(fn, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	truth(e, now, -1, t, "exec %s", exe);
	emit_comm(e, t, 0, now, true);
	struct user_regs_struct r;
	int rc = getregs(t->tid, &r);
	if (rc < 0)
		return efail(e, rc, "ptrace getregs: %s", strerror(-rc));
	t->ip = r.rip;
	const char *sym = e->o->start_sym ? e->o->start_sym : "main";
	if (*sym) {
		rc = set_breakpoint(e, t, sym);
		if (rc < 0)
			return efail(e, rc, "cannot set the start breakpoint: %s", strerror(-rc));
		if (rc > 0) {
			t->nk = NK_TO_START;
			resume(t->tid, PTRACE_CONT, 0);
			return 0;
		}
		if (e->o->start_sym) {
			/* no start symbol in the new program: it runs untraced */
			truth(e, now, -1, t, "stop");
			ptrace(PTRACE_DETACH, t->tid, 0, 0);
			p->detached = true;
			t->s.state = RC_EMU_GONE;
			return -1;
		}
		/* the default start, main, is not in the new program: from
		 * its exec on, as for the first program */
		rc_emu_note_from_exec(e->st, exe);
	}
	t->rs = RS_START;
	return 1;
}

/* Deliver caught signal SIG to T (stopped at a signal-delivery-stop, next
 * instruction FROM): the thread stops at the handler's first instruction.
 * Returns 1 (T->ip = handler, resume reason set), -1 gone, or an error. */
static int deliver_signal(struct emu *e, struct thr *t, int sig, uint64_t from)
{
	for (;;) {
		int rc = resume(t->tid, PTRACE_SINGLESTEP, sig), status = 0;   /* (-O3 cannot tell) */
		if (rc < 0 || (rc = wait_tid(e, t->tid, &status)) < 0)
			return rc == -ESRCH || rc == -ECHILD ? -1 : efail(e, rc, "signal delivery: %s", strerror(-rc));
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			note_child_exit(e, t->tid, status);
			return -1;
		}
		struct user_regs_struct r;
		if ((rc = getregs(t->tid, &r)) < 0)
			return efail(e, rc, "ptrace getregs: %s", strerror(-rc));
		t->ip = r.rip;
		t->rs = RS_SIGNAL;
		t->rs_sig = sig;
		t->rs_from = from;
		int s2 = WIFSTOPPED(status) ? WSTOPSIG(status) : 0;
		if (s2 == SIGTRAP || !sig_in_mask(t->tid, "SigCgt:", s2))
			return 1;  /* at the handler (another uncaught signal is dropped) */
		sig = s2;      /* a second caught signal: nest its handler */
		from = r.rip;
	}
}

/* An event of a native thread. Returns 0 still native, 1 done (T->ip and
 * the resume reason are set), -1 the thread is gone; or an error < -1 is
 * recorded in e->fail. */
static int native_event(struct emu *e, struct thr *t, int status)
{
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		note_child_exit(e, t->tid, status);
		thr_died(e, t, status);
		return -1;
	}
	if (!WIFSTOPPED(status))
		return 0;
	enum __ptrace_request req = t->nk == NK_TO_START ? PTRACE_CONT : PTRACE_SINGLESTEP;
	int sig = WSTOPSIG(status), ev = status >> 16;
	t->our_stops++;
	if (sig == SIGTRAP && ev) {
		if (ev == PTRACE_EVENT_CLONE || ev == PTRACE_EVENT_FORK || ev == PTRACE_EVENT_VFORK) {
			if (on_new_task(e, t, ev))
				return e->fail;
		} else if (ev == PTRACE_EVENT_EXEC) {
			int r = on_exec(e, t);
			if (r != 0)
				return r;
			return 0;
		}
		resume(t->tid, req, 0);
		return 0;
	}
	if (sig == (SIGTRAP | 0x80) || ev == PTRACE_EVENT_STOP) {
		resume(t->tid, req, 0);
		return 0;
	}
	struct user_regs_struct r;
	int rc = getregs(t->tid, &r);
	if (rc < 0) {
		if (rc == -ESRCH)
			return 0;
		return efail(e, rc, "ptrace getregs: %s", strerror(-rc));
	}
	if (sig == SIGTRAP) {
		if (t->nk == NK_TO_START) {
			if (t->proc->bp && r.rip == t->proc->bp + 1) {
				/* every thread starts at its own first arrival; the
				 * breakpoint goes when no thread is still on its way */
				if (!others_to_start(e, t) && (rc = clear_breakpoint(t)) < 0)
					return efail(e, rc, "cannot remove the start breakpoint: %s", strerror(-rc));
				r.rip -= 1;
				ptrace(PTRACE_SETREGS, t->tid, 0, &r);
				t->ip = r.rip;
				t->rs = RS_START;
				return 1;
			}
			resume(t->tid, req, 0);
			return 0;
		}
		if (is_restart((long)r.rax)) {
			/* interrupted: a signal is pending; the syscall restarts */
			resume(t->tid, req, 0);
			return 0;
		}
		if ((t->sys_nr == SYS_accept || t->sys_nr == SYS_accept4) && (long)r.rax >= 0 &&
		    t->nk == NK_SYSCALL) {
			/* the socket it took: ended by its peer's connect (the
			 * key step_syscall noted there), as on qemu */
			char l[64];
			wk_fd_link(t->tid, r.rax, l, sizeof(l));
			uint64_t ino = rc_qp_link_ino(l, "socket:["), peer = ino ? wk_sock_peer(ino) : 0;
			t->wk.n = 0;
			if (peer)
				rc_qp_keyset_add(&t->wk, RC_QP_KEY_CONN | RC_QP_KEY_ID(peer));
		}
		t->ip = r.rip;
		/* attached inside a syscall: its first traced instruction */
		if (t->rs != RS_START)
			t->rs = t->sys_nr == SYS_rt_sigreturn ? RS_SIGRETURN : RS_SYSRET;
		t->rs_nr = t->sys_nr;
		return 1;
	}
	/* another signal */
	if (sig_in_mask(t->tid, "SigCgt:", sig)) {
		if (t->nk == NK_TO_START) {
			resume(t->tid, PTRACE_CONT, sig);
			return 0;
		}
		/* a syscall it interrupted ends at the signal's send
		 * (virtual_duration) */
		if (t->nk == NK_SYSCALL && ((long)r.rax == -EINTR || is_restart((long)r.rax)))
			t->sig_intr = true;
		return deliver_signal(e, t, sig, r.rip);
	}
	bool ignored = sig_in_mask(t->tid, "SigIgn:", sig) || default_ignored(sig) ||
		       sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
	resume(t->tid, req, ignored ? 0 : sig);
	return 0;
}

/* A native thread finished its native part: ready (async) or back on its
 * CPU (sync syscall). */
static uint64_t virtual_duration(struct emu *e, const struct thr *t, uint64_t d,
				 const struct wake **waker);

static int native_done(struct emu *e, struct thr *t)
{
	const struct wake *wk;
	uint64_t d = virtual_duration(e, t, elapsed_ns(&t->t0), &wk);
	uint64_t cpu1;
	long vcsw1;
	/* a syscall on its CPU that did not sleep (one voluntary switch per
	 * ptrace stop: the single-step trap's, which ends it, and those
	 * before, such as a clone's event stop) lasts its CPU time, not its
	 * wall time (the host's run queue, and the tracer's work at those
	 * stops: a clone3 under load took 8 ms, which the other CPUs then
	 * had to single-step through); DESIGN.md section 6 */
	if (t->usage0 && !t->async && t->nk == NK_SYSCALL && thr_usage(t->tid, &cpu1, &vcsw1) &&
	    vcsw1 - t->vcsw0 <= t->our_stops && cpu1 >= t->cpu0)
		d = cpu1 - t->cpu0 > e->o->ns_per_insn ? cpu1 - t->cpu0 : e->o->ns_per_insn;
	t->usage0 = false;
	if (wk && wk->tid != t->tid && !e->o->no_wakers) {
		/* a traced thread ended this wait: its wake record */
		char comm[64];
		read_comm(t->tid, comm, sizeof(comm));
		if (wfail(e, rc_emu_wake(e->w, e->truth, wk->cpu, wk->pid, wk->tid, wk->vtime,
					 t->tid, comm, -1)))
			return e->fail;
	}
	if (t->sys_nr == SYS_mmap || t->sys_nr == SYS_munmap || t->sys_nr == SYS_mprotect ||
	    t->sys_nr == SYS_mremap || t->nk == NK_TO_START)
		t->proc->maps_dirty = true;
	if (t->async || t->s.state != RC_EMU_NATIVE || t->s.cpu < 0) {
		make_ready(e, t, t->v0 + d);
		t->s.cpu = -1;
		if (t->nk == NK_TO_START && !t->started) {
			/* first start: the process's name and code */
			emit_comm(e, t, 0, t->s.ready_ns, false);
		}
		return 0;
	}
	/* sync syscall: the thread never left its CPU */
	unsigned c = (unsigned)t->s.cpu;
	struct rc_emu_cpu *v = &e->cpu[c];
	/* a new name: the kernel writes a COMM record (prctl only; a write
	 * to /proc/.../comm is not noticed) */
	if (t->sys_nr == SYS_prctl && t->sys_arg0 == PR_SET_NAME &&
	    emit_comm(e, t, c, t->v0, false))
		return e->fail;
	v->now += d;
	t->s.state = RC_EMU_ONCPU;
	/* new mappings are stamped when the kernel made them: before the PGE
	 * by the syscall's duration, so even an MTC-precise decoder has them */
	if (t->proc->maps_dirty && sync_maps(e, t, c, t->v0))
		return e->fail;
	t->ret_due = true;
	return 0;
}

/* The thread on CPU c returns to user mode from a syscall that kept its
 * CPU, at the CPU's clock (see ret_due): its truth line and PGE; or, when
 * its process exited before then (another thread's exit_group, stepped
 * meanwhile), it was killed in the syscall (thr_gone; the host reports
 * its end later). */
static int ret_out(struct emu *e, unsigned c)
{
	struct rc_emu_cpu *v = &e->cpu[c];
	struct thr *t = v->cur ? thr_of(v->cur) : NULL;

	if (!t || !t->ret_due || t->s.state != RC_EMU_ONCPU)
		return 0;
	if (t->proc->exit_ns && v->now > t->proc->exit_ns)
		return thr_gone(e, t);
	t->ret_due = false;
	switch (t->rs) {
	case RS_SIGRETURN:
		truth(e, v->now, (int)c, t, "sigreturn %#" PRIx64, t->ip);
		break;
	case RS_SIGNAL:
		truth(e, v->now, (int)c, t, "signal %d %#" PRIx64 " %#" PRIx64, t->rs_sig,
		      t->rs_from, t->ip);
		break;
	default:
		truth(e, v->now, (int)c, t, "sysret %ld %#" PRIx64, t->sys_nr, t->ip);
		break;
	}
	t->rs = RS_NONE;
	v->on = true;
	return enc_check(e, c, rc_ptenc_enable(v->q.enc, v->now, t->ip), "enable");
}

/* A stashed event collect() can take now: of a known thread that is
 * native or new, or its exit (a stop of a stopped thread stays). */
static bool stash_ready(struct emu *e, size_t i)
{
	struct thr *t = find_thr(e, e->stash[i].tid);
	int status = e->stash[i].status;
	return t && (t->s.state == RC_EMU_NATIVE || t->s.state == RC_EMU_NEW || t->s.state == RC_EMU_GONE ||
		     WIFEXITED(status) || WIFSIGNALED(status));
}

static bool stash_pending(struct emu *e)
{
	for (size_t i = 0; i < e->nstash; i++)
		if (stash_ready(e, i))
			return true;
	return false;
}

/* Collect events of native threads (and exits); BLOCK waits for at least
 * one. Events stashed by wait_tid() come first. */
static int collect(struct emu *e, bool block)
{
	for (size_t i = 0;;) {
		int status;
		pid_t tid;
		while (i < e->nstash && !stash_ready(e, i))
			i++;
		if (i < e->nstash) {
			tid = e->stash[i].tid;
			stash_take(e, tid, &status);
			i = 0;
		} else {
			tid = waitpid(-1, &status, __WALL | (block ? 0 : WNOHANG));
		}
		if (tid == 0)
			return 0;
		if (tid < 0) {
			if (errno == EINTR && !(e->o->interrupted && *e->o->interrupted))
				continue;
			return 0;  /* ECHILD: nothing left; or interrupted */
		}
		block = false;
		struct thr *t = find_thr(e, tid);
		if (!t) {
			if (WIFEXITED(status) || WIFSIGNALED(status))
				note_child_exit(e, tid, status);
			else
				stash_put(e, tid, status);
			continue;
		}
		if (t->s.state == RC_EMU_GONE) {
			note_child_exit(e, tid, status);
		} else if (t->s.state == RC_EMU_NATIVE) {
			int r = native_event(e, t, status);
			if (r == 1)
				native_done(e, t);
		} else if (WIFEXITED(status) || WIFSIGNALED(status)) {
			note_child_exit(e, tid, status);
			thr_died(e, t, status);
		} else if (t->s.state == RC_EMU_NEW) {
			adopt_new(e, t, status);
		} else {
			stash_put(e, tid, status);
		}
		if (e->fail)
			return e->fail;
	}
}

/* ---- stepping ----------------------------------------------------------------- */

static void note_wake(struct emu *e, const struct thr *t, unsigned c, uint64_t uaddr,
		      uint64_t vtime)
{
	struct wake *w = &e->wakes[e->nwakes++ % NWAKES];
	w->uaddr = uaddr;
	w->vtime = vtime;
	w->pid = t->proc->pid;
	w->tid = t->tid;
	w->cpu = c;
	clock_gettime(CLOCK_MONOTONIC, &w->real);
}

static bool ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* Virtual duration of a native stretch of T that took D real ns. Real time
 * runs ~100,000 times faster than virtual time while threads are stepped,
 * so a futex wait that another traced thread ended would last as long as
 * the emulator took to step the waker there. Instead it ends at the
 * waker's virtual time: the latest wake of the same futex (or a thread
 * exit) issued after the wait began; a read of a pipe, socket or eventfd,
 * a poll, select or epoll_wait, a sigwait, sigsuspend or pause at the
 * first wake of one of its keys (t->wk, record/wake_keys.h: a write to
 * or close of that pipe, the socket's peer, that eventfd, a signal to
 * the thread or its process; an accept's: the connect of the socket it
 * took) by a traced thread after the wait began
 * (the one that gave it data or its end); *WAKER is set to it. Otherwise
 * (sleeps, timeouts, I/O): the measured time, less the ptrace cost of one
 * step. */
/* The first wake since T's wait began (t->t0) of one of the keys K. */
static const struct wake *first_wake(const struct emu *e, const struct thr *t,
				     const struct rc_qp_keyset *k)
{
	const struct wake *best = NULL;
	unsigned n = e->nwakes < NWAKES ? e->nwakes : NWAKES;

	for (unsigned i = 0; i < n; i++) {
		const struct wake *w = &e->wakes[i];
		if (rc_qp_keyset_has(k, w->uaddr) && !ts_before(&w->real, &t->t0) &&
		    (!best || ts_before(&w->real, &best->real)))
			best = w;
	}
	return best;
}

/* The last futex wake of T's address (or of any, uaddr 0) since its wait
 * began. */
static const struct wake *futex_wake(const struct emu *e, const struct thr *t)
{
	const struct wake *best = NULL;
	unsigned n = e->nwakes < NWAKES ? e->nwakes : NWAKES;

	for (unsigned i = 0; i < n; i++) {
		const struct wake *w = &e->wakes[i];
		if ((w->uaddr == t->futex_addr || w->uaddr == 0) && !ts_before(&w->real, &t->t0) &&
		    (!best || ts_before(&best->real, &w->real)))
			best = w;
	}
	return best;
}

static uint64_t virtual_duration(struct emu *e, const struct thr *t, uint64_t d,
				 const struct wake **waker)
{
	const struct wake *best = NULL;

	*waker = NULL;
	if (t->nk == NK_SYSCALL && (t->futex_wait || t->wk.n))
		best = t->wk.n ? first_wake(e, t, &t->wk) : futex_wake(e, t);
	if (!best && t->nk == NK_SYSCALL && t->sig_intr && !t->futex_wait) {
		/* a signal to a handler interrupted it (EINTR, or a restart
		 * after the handler): the first signal send by a traced thread
		 * to it or its process since it began (qemu.c signal_wake) */
		uint64_t sig[2] = { RC_QP_KEY_SIG | RC_QP_KEY_ID((uint64_t)t->tid),
				    RC_QP_KEY_SIGP | RC_QP_KEY_ID((uint64_t)t->proc->pid) };
		struct rc_qp_keyset k = { .n = 2, .cap = 2, .key = sig };

		best = first_wake(e, t, &k);
	}
	*waker = best;
	if (best)
		return best->vtime > t->v0 ? best->vtime - t->v0 + e->o->ns_per_insn
					   : e->o->ns_per_insn;
	if (t->nk == NK_SYSCALL)
		d = d > e->step_ns ? d - e->step_ns : 0;
	return d > e->o->ns_per_insn ? d : e->o->ns_per_insn;
}

static bool may_block(struct thr *t, const struct user_regs_struct *r)
{
	uint64_t flags = 0;
	if ((long)r->rax == SYS_clone3)
		read_mem(t->tid, r->rdi, (uint8_t *)&flags, sizeof(flags));
	return rc_emu_may_block((long)r->rax, r->rdi, r->rsi, flags);
}

/* Does the syscall at r make a process (not a thread)? */
static bool makes_process(struct thr *t, const struct user_regs_struct *r)
{
	long nr = (long)r->rax;
	uint64_t flags = 0;

	if (nr == SYS_fork || nr == SYS_vfork)
		return true;
	if (nr == SYS_clone)
		return !(r->rdi & CLONE_THREAD);
	if (nr == SYS_clone3 && read_mem(t->tid, r->rdi, (uint8_t *)&flags, sizeof(flags)) ==
	    sizeof(flags))
		return !(flags & CLONE_THREAD);
	return false;
}

static void count_insn(struct emu *e)
{
	e->insns++;
	if (e->o->max_insns && e->insns >= e->o->max_insns)
		e->stop = true;
}

/* A syscall instruction of T at insn->ip (T on CPU c): the encoder emits
 * TIP.PGD; the kernel runs the call natively. */
static int step_syscall(struct emu *e, unsigned c, struct thr *t, struct rc_insn *in,
			const struct user_regs_struct *r)
{
	struct rc_emu_cpu *v = &e->cpu[c];
	long nr = (long)r->rax;
	in->next_ip = in->ip + in->len;
	truth(e, v->now, (int)c, t, "syscall %ld %#" PRIx64, nr, in->ip);
	if (e->dump)
		fprintf(e->dump, "%d %#" PRIx64 "\n", (int)t->tid, in->ip);
	if (enc_check(e, c, rc_ptenc_insn(v->q.enc, in, v->now), "syscall"))
		return e->fail;
	v->on = false;
	v->now += e->o->ns_per_insn;
	t->s.slice_used++;
	count_insn(e);
	t->v0 = v->now;
	t->sys_arg0 = r->rdi;
	/* an exit_group, or a SIGKILL of a traced process (its own:
	 * raise(SIGKILL), kill(getpid(), SIGKILL); another: a child it
	 * kills): that process dies in the call, at its entry, and its
	 * threads with it (thr_gone; the host reports them later: the
	 * smallest clock is stepped first, so one on another CPU ran an
	 * instruction or so on) */
	struct proc *dies = nr == SYS_exit_group ? t->proc : sigkilled(e, t, nr, r);
	if (dies && !dies->exit_ns)
		dies->exit_ns = t->v0 + e->o->ns_per_insn;
	t->futex_wait = false;
	t->sig_intr = false;
	t->wk.n = 0;
	t->wk.sorted = 0;
	if (nr == SYS_read || nr == SYS_readv || nr == SYS_recvfrom || nr == SYS_recvmsg) {
		rc_qp_keyset_add(&t->wk, wk_fd_key(t->tid, r->rdi, WK_READ));
	} else if (nr == SYS_write || nr == SYS_writev || nr == SYS_sendto || nr == SYS_sendmsg ||
		   nr == SYS_close || nr == SYS_shutdown) {
		uint64_t k = wk_fd_key(t->tid, r->rdi, WK_WRITE);
		if (k)
			note_wake(e, t, c, k, v->now);
	} else if (nr == SYS_connect) {
		/* it ends the accept that takes this socket (native_event) */
		uint64_t k = wk_fd_key(t->tid, r->rdi, WK_CONN);
		if (k)
			note_wake(e, t, c, k, v->now);
	} else if (nr == SYS_poll || nr == SYS_ppoll || nr == SYS_select || nr == SYS_pselect6 ||
		   nr == SYS_epoll_wait || nr == SYS_epoll_pwait || nr == SYS_epoll_pwait2) {
		wk_wait_keys(t->tid, nr, r->rdi, r->rsi, &t->wk);
	} else if (nr == SYS_tgkill || nr == SYS_rt_tgsigqueueinfo || nr == SYS_tkill) {
		uint64_t to = nr == SYS_tkill ? r->rdi : r->rsi;
		if ((int64_t)to > 0)
			note_wake(e, t, c, RC_QP_KEY_SIG | RC_QP_KEY_ID(to), v->now);
	} else if (nr == SYS_kill || nr == SYS_rt_sigqueueinfo) {
		if ((int)r->rdi > 0)
			note_wake(e, t, c, RC_QP_KEY_SIGP | RC_QP_KEY_ID(r->rdi), v->now);
	} else if (nr == SYS_rt_sigtimedwait || nr == SYS_rt_sigsuspend || nr == SYS_pause) {
		rc_qp_keyset_add(&t->wk, RC_QP_KEY_SIG | RC_QP_KEY_ID((uint64_t)t->tid));
		rc_qp_keyset_add(&t->wk, RC_QP_KEY_SIGP | RC_QP_KEY_ID((uint64_t)t->proc->pid));
	} else if (nr == SYS_futex) {
		if (rc_emu_futex_wakes((int)r->rsi))
			note_wake(e, t, c, r->rdi, v->now);
		else
			t->futex_wait = true;
		t->futex_addr = r->rdi;
	} else if (nr == SYS_exit) {
		/* CLONE_CHILD_CLEARTID wakes the joiner */
		note_wake(e, t, c, t->ctid, v->now);
	} else if (nr == SYS_set_tid_address) {
		t->ctid = r->rdi;
	} else if (nr == SYS_clone && (r->rdi & CLONE_CHILD_CLEARTID)) {
		t->clone_ctid = r->r10;
	} else if (nr == SYS_clone3) {
		uint64_t ca[3] = { 0 };  /* struct clone_args: flags, pidfd, child_tid */
		if (read_mem(t->tid, r->rdi, (uint8_t *)ca, sizeof(ca)) == sizeof(ca) &&
		    (ca[0] & CLONE_CHILD_CLEARTID))
			t->clone_ctid = ca[2];
	}
	if (!e->o->follow_fork && makes_process(t, r))
		e->st->forks_untraced++;
	if (may_block(t, r)) {
		if (start_native(e, t, NK_SYSCALL, true, nr))
			return e->fail;
		t->s.cpu = -1;
		v->cur = &t->s;  /* cpu_leave reads it */
		return cpu_leave(e, c, rc_emu_yields(nr));
	}
	if (start_native(e, t, NK_SYSCALL, false, nr))
		return e->fail;
	for (;;) {
		int status, rc = wait_tid(e, t->tid, &status);
		if (rc < 0)
			return efail(e, rc, "waitpid: %s", strerror(-rc));
		int res = native_event(e, t, status);
		if (res == 1)
			return native_done(e, t);
		if (res < 0 || e->fail)
			return e->fail;
		if (t->s.state != RC_EMU_NATIVE)
			return 0;
	}
}

/* Run the start breakpoint's own instruction for a thread already traced,
 * in the tracer: putting the original byte back for one single-step would
 * let a thread still on its way to the start symbol (running natively) pass
 * it unseen. Only the usual first instructions of a function (endbr64, push
 * of a register) are done here; 0 done, -1 not one of them. */
static int run_entry_insn(pid_t tid, const uint8_t *b, size_t n)
{
	struct user_regs_struct r;
	bool rex = n >= 2 && b[0] == 0x41;
	uint8_t op = rex ? b[1] : b[0];

	if (getregs(tid, &r) < 0)
		return -1;
	if (n >= 4 && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa) {
		r.rip += 4;
	} else if (op >= 0x50 && op <= 0x57) {
		const unsigned long long *regs[16] = {
			&r.rax, &r.rcx, &r.rdx, &r.rbx, &r.rsp, &r.rbp, &r.rsi, &r.rdi,
			&r.r8, &r.r9, &r.r10, &r.r11, &r.r12, &r.r13, &r.r14, &r.r15,
		};
		unsigned long long v = *regs[(rex ? 8 : 0) + op - 0x50];

		if (ptrace(PTRACE_POKEDATA, tid, (void *)(uintptr_t)(r.rsp - 8), (void *)(uintptr_t)v) < 0)
			return -1;
		r.rsp -= 8;
		r.rip += rex ? 2 : 1;
	} else {
		return -1;
	}
	return ptrace(PTRACE_SETREGS, tid, 0, &r) < 0 ? -1 : 0;
}

/* Step one instruction of the thread on CPU c. */
static int step(struct emu *e, unsigned c)
{
	struct rc_emu_cpu *v = &e->cpu[c];
	struct thr *t = v->cur ? thr_of(v->cur) : NULL;
	/* Its process died at exit_ns (another thread's exit_group or a
	 * SIGKILL, stepped before this): the kernel runs none of its
	 * instructions after that, however long the host takes to kill it.
	 * (It was stepped on until the host's kill landed: 3-94 ns past the
	 * death on a loaded machine.) Its exit, a PGD's nanosecond after its
	 * clock, then comes at the death at the latest. */
	if (t->proc->exit_ns && v->now + 1 >= t->proc->exit_ns)
		return thr_gone(e, t);
	uint8_t buf[16];
	size_t n = read_mem(t->tid, t->ip, buf, sizeof(buf));
	/* a traced thread at the start breakpoint that other threads still
	 * wait for: it runs the original instruction */
	bool at_bp = t->proc->bp && t->ip == t->proc->bp;
	if (at_bp && n)
		buf[0] = (uint8_t)t->proc->bp_word;
	struct rc_insn in = { 0 };
	if (n == 0 || rc_insn_classify(e->cs, buf, n, t->ip, &in) < 0) {
		/* undecodable: let the thread run into its fault natively */
		memset(&in, 0, sizeof(in));
		in.ip = t->ip;
		in.len = 1;
		in.cls = RC_INSN_OTHER;
	}
	if (in.cls == RC_INSN_SYSCALL) {
		/* syscall/sysenter, or int n/int3: the kernel runs; the step ends
		 * when the thread is back in user mode */
		struct user_regs_struct r;
		int rc = getregs(t->tid, &r);
		if (rc < 0)
			return efail(e, rc, "ptrace getregs: %s", strerror(-rc));
		if (!(n >= 2 && buf[0] == 0x0f && (buf[1] == 0x05 || buf[1] == 0x34)))
			r.rax = (unsigned long long)-1;
		return step_syscall(e, c, t, &in, &r);
	}
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rc = 0, status = 0;
	if (at_bp && run_entry_insn(t->tid, buf, n) == 0) {
		status = (SIGTRAP << 8) | 0x7f;  /* as if single-stepped */
		goto stepped;
	}
	if (at_bp && bp_poke(t, t->proc->bp_word) < 0)
		at_bp = false;
	rc = resume(t->tid, PTRACE_SINGLESTEP, 0);
	if (rc == 0) {
		rc = wait_tid(e, t->tid, &status);
		/* the breakpoint goes back for the threads still running natively
		 * (one that passed it during this step starts late: see --help) */
		if (at_bp && rc == 0 && WIFSTOPPED(status))
			bp_poke(t, (t->proc->bp_word & ~0xffL) | 0xcc);
	}
	if (rc == -ESRCH) {
		/* killed while stopped (SIGKILL, another thread's exit_group):
		 * its exit status is waiting for us */
		if (wait_tid(e, t->tid, &status) < 0)
			return thr_gone(e, t);
		if (!WIFSTOPPED(status)) {
			note_child_exit(e, t->tid, status);
			return thr_died(e, t, status);
		}
		rc = 0;
	}
	/* running average of the ptrace round trip (subtracted from the
	 * measured duration of syscalls) */
	e->step_ns = e->step_ns ? (e->step_ns * 15 + elapsed_ns(&t0)) / 16 : elapsed_ns(&t0);
stepped:
	if (rc < 0)
		return efail(e, rc, "ptrace single-step of thread %d: %s", (int)t->tid, strerror(-rc));
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		note_child_exit(e, t->tid, status);
		return thr_died(e, t, status);
	}
	struct user_regs_struct r;
	if ((rc = getregs(t->tid, &r)) < 0)
		return efail(e, rc, "ptrace getregs: %s", strerror(-rc));
	int sig = WIFSTOPPED(status) ? WSTOPSIG(status) : 0;
	/* Same RIP after a step: a jump to itself retired, or a rep string
	 * instruction did one iteration (PT sees it once, when it is done). */
	bool retired = r.rip != t->ip ||
		       (sig == SIGTRAP && (in.cls == RC_INSN_JMP || in.cls == RC_INSN_JCC));
	if (!retired)
		t->s.slice_used++;
	if (retired) {
		in.next_ip = r.rip;
		if (e->dump)
			fprintf(e->dump, "%d %#" PRIx64 "\n", (int)t->tid, in.ip);
		uint64_t now = v->now;
		switch (in.cls) {
		case RC_INSN_CALL: case RC_INSN_CALL_IND:
			truth(e, now, (int)c, t, "call %#" PRIx64 " %#" PRIx64, in.ip, in.next_ip);
			break;
		case RC_INSN_RET:
			truth(e, now, (int)c, t, "ret %#" PRIx64 " %#" PRIx64, in.ip, in.next_ip);
			break;
		case RC_INSN_JCC:
			if (in.next_ip == in.ip + in.len)
				break;   /* not taken: in flow, wherever it goes */
			/* taken: as a jmp */
			/* fall through */
		case RC_INSN_JMP: case RC_INSN_JMP_IND:
			if (rc_emu_func_key(e->syms, find_map(t->proc, in.ip), in.ip) !=
			    rc_emu_func_key(e->syms, find_map(t->proc, in.next_ip), in.next_ip))
				truth(e, now, (int)c, t, "jump %#" PRIx64 " %#" PRIx64, in.ip, in.next_ip);
			break;
		default:
			break;
		}
		if (enc_check(e, c, rc_ptenc_insn(v->q.enc, &in, now), "insn"))
			return e->fail;
		v->now += e->o->ns_per_insn;
		t->s.slice_used++;
		t->ip = r.rip;
		count_insn(e);
		if (e->o->inject_ovf && rc_ptenc_packets(v->q.enc) >= v->ovf_mark) {
			truth(e, v->now, (int)c, t, "ovf %#" PRIx64, t->ip);
			if (enc_check(e, c, rc_ptenc_ovf(v->q.enc, v->now, t->ip), "ovf"))
				return e->fail;
			v->ovf_mark = rc_ptenc_packets(v->q.enc) + e->o->inject_ovf;
		}
		rc_emu_irq_count(&e->s, c, 1);
	}
	/* --inject-interrupts: an asynchronous exit before the next one */
	if (sig == SIGTRAP || sig == 0 || (status >> 16))
		return retired ? sfail(e, rc_emu_irq_at(&e->s, c, t->ip)) : 0;
	/* a signal for this thread */
	if (sig_in_mask(t->tid, "SigCgt:", sig)) {
		uint64_t from = t->ip;
		int r2 = deliver_signal(e, t, sig, from);
		if (r2 < 0)
			return r2 == -1 ? thr_gone(e, t) : r2;
		if (enc_check(e, c, rc_ptenc_disable(v->q.enc, v->now, from, RC_PTENC_OFF_ASYNC), "disable"))
			return e->fail;
		truth(e, v->now, (int)c, t, "signal %d %#" PRIx64 " %#" PRIx64, t->rs_sig, from, t->ip);
		t->rs = RS_NONE;
		return enc_check(e, c, rc_ptenc_enable(v->q.enc, v->now, t->ip), "enable");
	}
	bool ignored = sig_in_mask(t->tid, "SigIgn:", sig) || default_ignored(sig) ||
		       sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
	if (ignored)
		return 0;
	/* fatal: the process dies natively, and T with it right here, on its
	 * CPU (an EXIT, then the switch-out, as the kernel writes for a task
	 * killed running), not when the host reports its end (an [off-cpu]
	 * until then, to the recording's end when it stopped first) */
	resume(t->tid, PTRACE_CONT, sig);
	t->fatal = true;
	return thr_gone(e, t);
}

static int maybe_preempt(struct emu *e, unsigned c)
{
	struct rc_emu_cpu *v = &e->cpu[c];
	struct thr *t = v->cur ? thr_of(v->cur) : NULL;
	if (t->s.slice_used < e->slice)
		return 0;
	int due = rc_emu_preempt_due(&e->s, c);
	if (due <= 0)
		return sfail(e, due);
	if (disable_async(e, c, t->ip))
		return e->fail;
	make_ready(e, t, v->now);
	t->s.cpu = -1;
	return cpu_leave(e, c, true);
}

static int pick_cpu(struct emu *e)
{
	int best = -1;
	for (unsigned c = 0; c < e->ncpu; c++)
		if (e->cpu[c].cur && (best < 0 || e->cpu[c].now < e->cpu[best].now))
			best = (int)c;
	return best;
}

static bool any_native(struct emu *e)
{
	for (size_t i = 0; i < e->nthr; i++)
		if (e->thr[i]->s.state == RC_EMU_NATIVE || e->thr[i]->s.state == RC_EMU_NEW)
			return true;
	return false;
}

static int run(struct emu *e)
{
	while (!e->fail && !e->stop) {
		if (e->o->interrupted && *e->o->interrupted) {
			e->stop = true;
			clock_gettime(CLOCK_MONOTONIC, &e->stop_wall);
			break;
		}
		/* nothing runs natively: no event can be pending (saves a
		 * waitpid per step) */
		if (((any_native(e) || stash_pending(e)) && collect(e, false)) || assign_idle(e))
			break;
		int c = pick_cpu(e);
		if (c < 0) {
			if (!any_native(e) && !stash_pending(e))
				break;
			collect(e, true);
			continue;
		}
		const struct rc_emu_sthr *cur = e->cpu[c].cur;
		if (ret_out(e, (unsigned)c))
			break;
		if (e->cpu[c].cur != cur)
			continue;   /* (killed in its syscall: ret_out) */
		if (maybe_preempt(e, (unsigned)c))
			break;
		if (e->cpu[c].cur)
			step(e, (unsigned)c);
	}
	return e->fail;
}

/* ---- start and end ------------------------------------------------------------- */

static int write_header(struct emu *e)
{
	return wfail(e, rc_emu_header(e->w, &e->ecfg, e->ncpu, e->o->cmdline, e->o->cmdline_argc,
					   !e->o->no_wakers));
}

/* fork + PTRACE_TRACEME + exec; a pipe reports exec failure. */
static int launch(struct emu *e)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return efail(e, -errno, "pipe: %s", strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return efail(e, -errno, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(pfd[0]);
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		execvp(e->o->argv[0], e->o->argv);
		int err = errno;
		if (write(pfd[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pfd[1]);
	int err = 0;
	ssize_t got = read(pfd[0], &err, sizeof(err));
	close(pfd[0]);
	e->child = pid;
	int status;
	if (got == (ssize_t)sizeof(err)) {
		waitpid(pid, &status, 0);
		e->child_reaped = true;
		return efail(e, -err, "cannot run %s: %s", e->o->argv[0], strerror(err));
	}
	if (wait_tid(e, pid, &status) < 0 || !WIFSTOPPED(status))
		return efail(e, -ECHILD, "%s did not start under ptrace", e->o->argv[0]);
	long opts = PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL;
	if (e->o->follow_fork)
		opts |= PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK;
	if (ptrace(PTRACE_SETOPTIONS, pid, 0, (void *)opts) < 0)
		return efail(e, -errno, "ptrace setoptions: %s", strerror(errno));
	struct proc *p = new_proc(e, pid);
	struct thr *t = p ? new_thr(e, pid, p) : NULL;
	if (!t)
		return efail(e, -ENOMEM, "out of memory");
	struct user_regs_struct r;
	int rc = getregs(pid, &r);
	if (rc < 0)
		return efail(e, rc, "ptrace getregs: %s", strerror(-rc));
	t->ip = r.rip;
	t->v0 = e->vstart;
	const char *sym = e->o->start_sym ? e->o->start_sym : "main";
	if (*sym) {
		rc = set_breakpoint(e, t, sym);
		if (rc < 0)
			return efail(e, rc, "cannot set a breakpoint at '%s'", sym);
		if (rc == 0) {
			/* (the binary that runs: a script's interpreter, a
			 * link's target) */
			char exe[PATH_MAX], fn[64];
			snprintf(fn, sizeof(fn), "/proc/%d/exe", (int)pid);
			ssize_t n = readlink(fn, exe, sizeof(exe) - 1);
			exe[n > 0 ? n : 0] = 0;
			const char *a0 = e->o->argv[0], *b0 = strrchr(a0, '/'), *b1 = strrchr(exe, '/');
			bool other = n > 0 && strcmp(b0 ? b0 + 1 : a0, b1 ? b1 + 1 : exe);
			if (e->o->start_sym)
				return efail(e, -ENOENT, "start symbol '%s' not found in %s%s%s%s: name "
					     "another with --start=SYMBOL, or trace from exec with --start=",
					     sym, other ? exe : a0, other ? " (the binary that runs " : "",
					     other ? a0 : "", other ? ")" : "");
			/* the default start in a program without main (a
			 * stripped one): from exec, as perf would trace it */
			rc_emu_note_from_exec(e->st, n > 0 ? exe : a0);
		} else {
			return start_native(e, t, NK_TO_START, true, -1);
		}
	}
	emit_comm(e, t, 0, e->vstart, false);
	t->rs = RS_START;
	make_ready(e, t, e->vstart);
	return 0;
}

/* A thread found stopped inside a syscall that the kernel would restart
 * (R: its registers at the stop, rip just after the syscall instruction,
 * rax -ERESTART*): do the restart ourselves, as the kernel would on
 * resuming it (rip back to the syscall instruction, rax the call again, or
 * restart_syscall for -ERESTART_RESTARTBLOCK: the rest of a sleep),
 * with orig_rax -1 so that the kernel does not restart it a second time.
 * The stepper then steps the syscall like any other. -1: not a 2-byte
 * syscall instruction there, or the registers could not be set. */
static int rewind_syscall(struct thr *t, struct user_regs_struct *r)
{
	uint8_t insn[2];

	if (read_mem(t->tid, r->rip - 2, insn, sizeof(insn)) != sizeof(insn) ||
	    insn[0] != 0x0f || insn[1] != 0x05)
		return -1;
	struct user_regs_struct n = *r;
	n.rip -= 2;
	n.rax = (long)r->rax == -516 ? SYS_restart_syscall : r->orig_rax;
	n.orig_rax = (unsigned long long)-1;
	if (ptrace(PTRACE_SETREGS, t->tid, 0, &n) < 0)
		return -1;
	*r = n;
	return 0;
}

/* Attach to every thread of a running process (PTRACE_SEIZE + INTERRUPT). */
static int attach(struct emu *e)
{
	pid_t pid = e->o->pid, tgid = rc_proc_tgid(pid);

	/* -p of a thread that is not its process's leader: the whole process
	 * (its signals and every tgkill go to the process's id; with the
	 * thread's, detaching waited forever on a stop never sent) */
	if (tgid > 0 && tgid != pid) {
		fprintf(stderr, "ptflame record: note: %d is a thread of process %d: "
			"attaching to the whole process\n", (int)pid, (int)tgid);
		pid = tgid;
	}
	struct proc *p = new_proc(e, pid);
	if (!p)
		return efail(e, -ENOMEM, "out of memory");
	long opts = PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC;
	if (e->o->follow_fork)
		opts |= PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK;
	bool added = true;
	while (added) {  /* threads may appear while we attach */
		added = false;
		char dn[64];
		snprintf(dn, sizeof(dn), "/proc/%d/task", (int)pid);
		DIR *dir = opendir(dn);
		if (!dir)
			return efail(e, -ESRCH, "no process %d", (int)pid);
		struct dirent *de;
		while ((de = readdir(dir))) {
			int tid = atoi(de->d_name);
			if (tid <= 0 || find_thr(e, tid))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, (void *)opts) < 0) {
				int err = errno;
				closedir(dir);
				return efail(e, -err, "cannot attach to %d: %s", tid, strerror(err));
			}
			if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0 && errno != ESRCH) {
				int err = errno;
				closedir(dir);
				return efail(e, -err, "cannot stop %d: %s", tid, strerror(err));
			}
			struct thr *t = new_thr(e, tid, p);
			if (!t) {
				closedir(dir);
				return efail(e, -ENOMEM, "out of memory");
			}
			added = true;
		}
		closedir(dir);
	}
	if (e->nthr == 0)
		return efail(e, -ESRCH, "no process %d", (int)pid);
	/* every thread's name, as perf synthesizes one COMM per task of a
	 * process it attaches to (the others showed as "unknown-TID") */
	for (size_t i = 0; i < e->nthr; i++)
		if (emit_comm(e, e->thr[i], 0, e->vstart, false))
			return e->fail;
	for (size_t i = 0; i < e->nthr; i++) {
		struct thr *t = e->thr[i];
		int status;
		if (!stash_take(e, t->tid, &status) && wait_tid(e, t->tid, &status) < 0) {
			t->s.state = RC_EMU_GONE;
			continue;
		}
		struct user_regs_struct r;
		if (getregs(t->tid, &r) < 0) {
			t->s.state = RC_EMU_GONE;
			continue;
		}
		t->ip = r.rip;
		t->rs = RS_START;
		t->v0 = e->vstart;
		if ((long)r.orig_rax >= 0 && is_restart((long)r.rax)) {
			if (rewind_syscall(t, &r) == 0) {
				/* blocked in a syscall: traced from its syscall
				 * instruction on, so it is off-CPU in it from the
				 * start (under its user stack), in the trace and
				 * the truth, not invisible until it returns */
				t->ip = r.rip;
				make_ready(e, t, e->vstart);
				continue;
			}
			/* stopped inside a syscall that will restart: let it finish */
			if (start_native(e, t, NK_SYSCALL, true, (long)r.orig_rax))
				return e->fail;
			t->rs = RS_START;
			continue;
		}
		make_ready(e, t, e->vstart);
	}
	return e->fail;
}

/* End of tracing: disable and switch out every running thread, flush the
 * encoders, detach whatever still lives. */
/* A traced thread in a syscall, running natively? */
static bool in_syscall(const struct thr *t)
{
	return t->started && t->s.state == RC_EMU_NATIVE && t->nk == NK_SYSCALL;
}

/* When a recording stopped before the program ended does: the latest CPU
 * clock, or the end of a syscall still in progress, measured from its
 * start as its duration would have been (virtual_duration), if later. */
static uint64_t stop_time(struct emu *e)
{
	/* (after every CPU's clock: a thread still on one runs on, in its
	 * code, until the stop, its PGD 1 ns before it: end_threads) */
	uint64_t end = latest_now(e) + 1;

	for (size_t i = 0; i < e->nthr && e->stop_wall.tv_sec; i++) {
		const struct thr *t = e->thr[i];
		int64_t d = (int64_t)(e->stop_wall.tv_sec - t->t0.tv_sec) * 1000000000ll +
			    (e->stop_wall.tv_nsec - t->t0.tv_nsec);

		if (in_syscall(t) && d > (int64_t)e->step_ns && t->v0 + (uint64_t)d - e->step_ns > end)
			end = t->v0 + (uint64_t)d - e->step_ns;
	}
	return end;
}

/* T of our own program, killed when the recording stopped: it exits at NOW
 * (CPU c, -1: off every CPU), as the kernel writes a killed task's end. */
static void killed_exit(struct emu *e, struct thr *t, int c, uint64_t now)
{
	truth(e, now, c, t, "exit");
	struct dc_sample_id s = rc_emu_sid(c < 0 ? 0 : (unsigned)c, false, t->proc->pid, t->tid, now);
	wfail(e, rc_perf_exit(e->w, (uint32_t)t->proc->pid, (uint32_t)t->proc->pid,
			      (uint32_t)t->tid, (uint32_t)t->tid, now, &s));
}

/* End: the threads on a CPU leave it and stop; stopped before the program
 * ended, the ones waiting (in a syscall, or for a CPU) stop when the
 * recording does, and the file says when that was. KILLED: stopped by
 * SIGINT/SIGTERM/-d and our program then died of a signal (the one that
 * stopped the recording, or wait_child's SIGTERM): its threads exit there
 * instead (a switch-out and an EXIT, as the kernel writes for a killed
 * task), so report ends them there too, not at the recording's end. */
static void end_threads(struct emu *e, bool killed)
{
	/* (returns from syscalls not written yet: ret_due) */
	for (unsigned c = 0; c < e->ncpu && !e->fail; c++)
		ret_out(e, c);
	uint64_t end = e->stop && !e->fail ? stop_time(e) : 0;

	for (size_t i = 0; i < e->nthr && end; i++) {
		struct thr *t = e->thr[i];
		bool on_cpu = false;

		for (unsigned c = 0; c < e->ncpu; c++)
			on_cpu |= e->cpu[c].cur == &t->s;
		/* (a thread made but not run yet ends too: its FORK is in
		 * the file, and a killed program's threads all get an EXIT) */
		if (on_cpu || !(in_syscall(t) || t->s.state == RC_EMU_READY || t->unborn))
			continue;
		if (killed && t->proc->pid == e->child)
			killed_exit(e, t, -1, end);
		else
			truth(e, end, -1, t, "stop");
	}
	for (unsigned c = 0; c < e->ncpu; c++) {
		struct rc_emu_cpu *v = &e->cpu[c];
		struct thr *t = v->cur ? thr_of(v->cur) : NULL;
		if (t) {
			/* stopped early: it ran on, where it was, until the stop
			 * (a CPU's clock counts the instructions stepped, and a
			 * spinning thread steps slowly: its clock fell behind the
			 * stop, and it ended early, switched out as blocked, and
			 * waited [off-cpu] to the recording's end) */
			if (end && v->now + 1 < end) {
				if (v->on && !e->fail)
					enc_check(e, c, rc_ptenc_stamp(v->q.enc, v->now, t->ip, end - 1), "stamp");
				v->now = end - 1;
			}
			if (v->on && !e->fail)
				disable_async(e, c, t->ip);
			else if (end)
				v->now = end;
			/* (the exit before the switch-out, as thr_gone) */
			if (killed && t->proc->pid == e->child)
				killed_exit(e, t, (int)c, v->now);
			else
				truth(e, v->now, (int)c, t, "stop");
			make_ready(e, t, v->now);
			if (!e->fail)
				cpu_leave(e, c, false);
		}
		if (!e->fail) {
			rc_ptenc_flush(v->q.enc);
			drain(e, c, true);
		}
	}
	if (end && !e->fail)
		wfail(e, rc_emu_stop_at(&e->s, end));
}

/* The threads go: a failed launch's program is killed, the others are
 * detached (stopped threads directly, native ones after a SIGSTOP). Once;
 * the scheduling states stay as they were, for end_threads. */
/* A thread stopped for the detach (our SIGSTOP's group-stop) may still
 * have the trap of its last single step queued (a syscall it stepped over
 * returned as the stop came): after PTRACE_DETACH it would be delivered
 * untraced, and SIGTRAP's default action kills the program. Resume it
 * until that trap's signal-delivery-stop, which the detach then
 * suppresses. -1: the thread is gone. */
static int drain_trap(struct emu *e, struct thr *t)
{
	for (int tries = 0; tries < 8 && sig_in_mask(t->tid, "SigPnd:", SIGTRAP); tries++) {
		int status;

		if (resume(t->tid, PTRACE_CONT, 0) < 0 || wait_tid(e, t->tid, &status) < 0)
			return -1;
		if (!WIFSTOPPED(status)) {
			note_child_exit(e, t->tid, status);
			return -1;
		}
		if (WSTOPSIG(status) == SIGTRAP && !(status >> 16))
			break;   /* at its delivery: the detach drops it */
	}
	return 0;
}

static void let_go(struct emu *e)
{
	if (e->let_go)
		return;
	e->let_go = true;
	/* a failed launch: the program goes (EXITKILL would do it too) */
	if (e->fail && e->child && !e->child_reaped) {
		kill(e->child, SIGKILL);
		return;
	}
	for (size_t i = 0; i < e->nthr; i++) {
		struct thr *t = e->thr[i];
		if (t->s.state == RC_EMU_GONE || t->proc->detached || t->let_go)
			continue;
		t->let_go = true;
		if (t->s.state == RC_EMU_NATIVE || t->s.state == RC_EMU_NEW) {
			/* a thread already gone (ESRCH) has no stop to wait for:
			 * waiting for one hung the detach */
			if (syscall(SYS_tgkill, t->proc->pid, t->tid, SIGSTOP) < 0)
				continue;
			int status;
			if (wait_tid(e, t->tid, &status) < 0 || !WIFSTOPPED(status)) {
				note_child_exit(e, t->tid, status);
				continue;
			}
			if (t->proc->bp) {
				struct user_regs_struct r;
				if (getregs(t->tid, &r) == 0 && r.rip == t->proc->bp + 1) {
					r.rip--;
					ptrace(PTRACE_SETREGS, t->tid, 0, &r);
				}
			}
		}
		if (t->proc->bp)
			clear_breakpoint(t);
		if (drain_trap(e, t) < 0)
			continue;
		ptrace(PTRACE_DETACH, t->tid, 0, 0);
	}
	for (size_t i = 0; i < e->nproc; i++)
		kill(e->proc[i]->pid, SIGCONT);
}

static void free_emu(struct emu *e)
{
	for (size_t i = 0; i < e->nthr; i++) {
		free(e->thr[i]->wk.key);
		free(e->thr[i]);
	}
	free(e->thr);
	for (size_t i = 0; i < e->nproc; i++) {
		rc_maps_free(e->proc[i]->maps, e->proc[i]->nmaps);
		free(e->proc[i]);
	}
	free(e->proc);
	free(e->stash);
	rc_emu_sched_free(&e->s);
	rc_emu_syms_free(e->syms);
	if (e->cs)
		cs_close(&e->cs);
}

static int open_out(struct emu *e, const char *path, FILE **f)
{
	if (!path)
		return 0;
	*f = fopen(path, "we");
	if (!*f)
		return efail(e, -errno, "cannot write %s: %s", path, strerror(errno));
	return 0;
}

static int setup(struct emu *e)
{
	const struct rc_emu_opts *o = e->o;
	if (!o->output || o->cpus < 1 || o->ns_per_insn < 1 || (!o->pid && (!o->argv || !o->argv[0])))
		return efail(e, -EINVAL, "bad emulator options");
	e->slice = o->slice_insns ? o->slice_insns : RC_EMU_DEFAULT_SLICE;
	e->vstart = rc_emu_mono_ns();
	e->syms = rc_emu_syms_new();
	if (!e->syms)
		return efail(e, -ENOMEM, "out of memory");
	if (rc_insn_cs_open(&e->cs) < 0)
		return efail(e, -EINVAL, "cannot open the capstone x86-64 decoder");
	if (open_out(e, o->truth_path, &e->truth) || open_out(e, o->dump_insns_path, &e->dump))
		return e->fail;
	int rc = rc_emu_start(&e->s, &e->sink, &e->ecfg, o, e->vstart, e->truth, e->err, e->errlen);
	e->cpu = e->s.cpu;
	e->ncpu = e->s.ncpu;
	e->w = e->s.w;
	if (rc < 0) {
		e->fail = rc;
		return rc;
	}
	rc_perf_same_kernel(e->w);   /* the traced process runs on our kernel */
	e->s.stop = &e->stop;
	e->s.switched_in = switched_in;
	e->s.ctx = e;
	return write_header(e);
}

/* Like perf record: wait for the program; on an error it is killed, on an
 * interrupt it gets SIGTERM, and SIGKILL at the next interrupt. Reaps with
 * __WALL: a thread we traced that died before the detach is a zombie only
 * its tracer can reap, and until it is reaped the kernel does not report
 * the thread group leader's exit. */
static void wait_child(struct emu *e)
{
	const volatile int *intr = e->o->interrupted;
	int seen = intr ? *intr : 0;
	if (e->fail)
		kill(e->child, SIGKILL);
	else if (seen)
		kill(e->child, SIGTERM);
	/* polled, so that a program that ignores SIGTERM is said (one note) */
	uint64_t t0 = rc_emu_mono_ns();
	bool noted = false;
	while (!e->child_reaped) {
		int status = 0;
		pid_t r = waitpid(-1, &status, __WALL | WNOHANG);
		if (r == e->child && (WIFEXITED(status) || WIFSIGNALED(status))) {
			e->child_status = status;
			e->child_reaped = true;
		} else if (r < 0 && errno != EINTR) {
			break;  /* ECHILD: someone else reaped it */
		} else if (intr && *intr != seen) {
			kill(e->child, seen ? SIGKILL : SIGTERM);
			seen = *intr;
		} else if (r == 0) {
			if (seen && !noted && rc_emu_mono_ns() - t0 >= RC_TERM_NOTE_NS) {
				rc_note_term_wait(e->o->argv ? e->o->argv[0] : NULL, e->child);
				noted = true;
			}
			usleep(10000);
		}
	}
}

int rc_emulate(const struct rc_emu_opts *opts, struct rc_emu_stats *stats, char *err,
	       size_t errlen)
{
	struct emu e = { 0 };
	struct rc_emu_stats dummy;
	e.o = opts;
	e.err = err;
	e.errlen = errlen;
	e.st = stats ? stats : &dummy;
	memset(e.st, 0, sizeof(*e.st));
	e.st->exit_status = -1;
	err[0] = 0;
	uint64_t t0 = 0;
	if (setup(&e) == 0 && (opts->pid ? attach(&e) : launch(&e)) == 0) {
		t0 = rc_emu_mono_ns();
		run(&e);
	}
	/* stopped by SIGINT/SIGTERM/-d: our program gets SIGTERM (wait_child,
	 * as from perf record) before its threads' end is written: killed
	 * (by that signal or the one that stopped us), they exit at the stop */
	bool killed = false;
	if (!e.fail && e.child && e.stop_wall.tv_sec) {
		let_go(&e);
		if (!e.child_reaped)
			wait_child(&e);
		killed = e.child_reaped && WIFSIGNALED(e.child_status);
	}
	end_threads(&e, killed);
	let_go(&e);
	e.st->seconds = t0 ? (double)(rc_emu_mono_ns() - t0) / 1e9 : 0;
	e.st->insns = e.insns;
	e.st->aux_bytes = e.sink.bytes;
	int rc = e.fail;
	if (e.w) {
		if (rc == 0) {
			/* the writer's own line says which write, fsync or rename failed */
			rc = rc_perf_finish(e.w, err, errlen);
		} else {
			rc_perf_abort(e.w);
		}
	}
	for (int i = 0; i < 2; i++) {
		FILE *f = i ? e.dump : e.truth;
		if (f && fclose(f) != 0 && rc == 0) {
			rc = -EIO;
			snprintf(err, errlen, "cannot write %s", i ? opts->dump_insns_path : opts->truth_path);
		}
	}
	if (e.child && !e.child_reaped)
		wait_child(&e);
	if (e.child_reaped)
		e.st->exit_status = e.child_status;
	free_emu(&e);
	return rc;
}
