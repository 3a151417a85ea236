/* ptflame - record/qemu.c: the qemu-user backend of the emulated PT
 * recorder (see qemu.h for the model, qemu_proto.h for the stream). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "decoder/dc_vec.h"
#include "record/emu_out.h"
#include "record/qemu.h"
#include "record/qemu_proto.h"

#ifndef PTFLAME_PLUGIN_DIR
#define PTFLAME_PLUGIN_DIR "/usr/local/lib/ptflame"
#endif
#define PLUGIN_NAME "libptflame_qemu.so"

enum qresume { QR_NONE, QR_START, QR_SYSRET, QR_SIGRETURN, QR_IRET };

struct qdef {
	bool ok;
	uint32_t n;
	uint64_t vaddr;
	struct rc_insn last;
	uint32_t lens, nlens;      /* its instructions' lengths: e->lens[lens..+nlens) */
};

struct qproc {
	pid_t pid;
	struct rc_map *maps;
	size_t nmaps;
	uint64_t start;            /* start symbol address, 0: not known yet */
	uint64_t handlers[8];      /* installed signal handlers */
	unsigned nhandlers;
	bool dying;                /* exit_group issued */
	uint64_t exit_ns;          /* its time (the exit_group's entry), 0:
				    * not a traced one's: its threads end then */
	bool unannounced;          /* maps reported but not announced yet */
	/* When its last mmap-like syscall returned (0: none yet). qemu tells
	 * of a code mapping only when it first translates a block in it, so a
	 * new mapping is announced as made by that syscall, just before the
	 * TIP.PGE of its return: as the kernel's MMAP record comes before it,
	 * and at a point where a decoder takes a new image (the block that
	 * first runs the code may come in the middle of a traced run). */
	uint64_t map_sys_ts;
};

/* A time stamp of one syscall entry, set when the scheduler replays it:
 * wakes and creations refer to it. uaddr: a futex's address, the wake
 * key of an fd write, close or connect or of a signal's target
 * (qemu_proto.h, RC_QP_KEY_*), 0 for an exit (it wakes a join: any futex). The thread
 * that issued it and its CPU then (a wake's waker) come with vtime. */
struct qstamp {
	uint64_t uaddr;
	uint64_t vtime;
	bool set, traced;
	bool exit;                 /* a thread's exit (kind 1) */
	int kind;                  /* 1 wake, 2 clone */
	pid_t pid, tid;
	unsigned cpu;
	pid_t child;               /* clone: the tid it returned (parse side) */
	uint64_t ctid;             /* clone: the new thread's clear-tid futex */
	int sig;                   /* a signal send: the signal */
	bool used;                 /* parse side: a signal send that ended a wait */
};

struct qthr {
	struct rc_emu_sthr s;      /* scheduling (first: thr_of) */
	pid_t tid;
	struct qproc *p;
	enum qresume rs;
	long rs_nr;
	bool ret_kept;             /* back from a syscall that kept its CPU,
				    * its return (truth, PGE) not written yet */
	uint64_t ret_at;           /* its CPU's clock then (still there: it did
				    * not leave the CPU since) */
	uint64_t resume_ip;        /* preempted in user mode: where its trace
				    * resumes (PGE), 0: none pending        */
	uint32_t *w;               /* queued words */
	size_t head, n, cap;
	uint64_t base;             /* words dropped before w[0] (base + i: a
				    * word's place in the thread's stream)  */
	struct {                   /* resume_after_signal's scan so far      */
		uint64_t head, at; /* for the word at base + head; up to at  */
		int depth;
		bool after_ret;
		unsigned nlater;
		uint64_t later[8];
	} ra;
	bool traced, started;
	const struct qdef *pend;   /* block whose last instruction is pending
				    * (&pend_copy: e->defs moves when it grows) */
	struct qdef pend_copy;
	uint64_t pend_t;           /* its retire time */
	long sys_nr;               /* syscall in progress */
	bool in_exec;              /* its last syscall record is an execve's
	                              entry, with no return (yet)          */
	uint64_t sys_t, v0;
	bool held;                 /* in a syscall that may block, still on its
				    * CPU: its return tells whether it slept
				    * (the RC_QP_RET case of step) */
	bool sys_thread;           /* the syscall makes a thread (clone) */
	size_t sys_stamp;          /* parse side: stamp of the last syscall entry */
	size_t clone_stamp;        /* parse side: of the clone/fork it is in (+1),
				    * 0 once it returned */
	uint64_t sig_from;         /* a signal interrupted the thread here */
	uint64_t ctid;             /* parse side: its clear-tid futex, 0 unknown */
	struct rc_qp_keyset wk;    /* parse side: the keys its last poll, select or
				    * epoll_wait watches (RC_QP_KEYS) */
	size_t join_stamp;         /* it read 0 from the clear-tid word of the
				    * thread whose exit this is (+1): it may not
				    * go on before that exit (at its next block) */
	size_t join_wait;          /* off its CPU until that exit (+1) */
	uint64_t join_t0;          /* since then */
	char comm[16];             /* its name if it set one (else e->comm) */
};

/* Parse side: a pipe's bytes in flight, to tell which traced write (or
 * close) a read consumed. The plugin writes a write's entry before qemu
 * writes its data and a read's return after qemu read it, so in pipe order
 * the writes whose data a read took are all before its return; the host
 * may have run the write first (the read then did not block), while in
 * virtual time the read may start earlier: it must not end before the
 * write of its last byte. */
struct qpwrite {
	size_t stamp;              /* the write's (SYS) */
	uint64_t len, used;        /* bytes: written (write's count, its
				    * return once known), read since */
	bool known;                /* len known (writev: at its return) */
	bool failed;               /* it returned an error: sent nothing */
};

struct qpipe {
	uint64_t key;              /* the wake key of a reader's queue: a pipe,
				    * a receiving socket, an eventfd */
	struct qpwrite *w;         /* w[head..n): not yet read whole */
	size_t head, n, cap;
	size_t close_stamp;        /* its latest close (either end) */
	pid_t close_tid;
};

struct qemu {
	const struct rc_emu_opts *o;
	char *err;
	size_t errlen;
	int fail;
	struct rc_emu_stats *st;
	struct rc_ptenc_config ecfg;
	struct rc_perf_writer *w;
	struct rc_emu_auxsink sink;
	FILE *truth;
	struct rc_emu_syms *syms;
	csh cs;
	struct rc_emu_sched s;     /* its cpu, ncpu: the virtual CPUs */
	struct rc_emu_cpu *cpu;    /* = s.cpu */
	unsigned ncpu;             /* = s.ncpu */
	struct qdef *defs;
	size_t ndefs;
	uint8_t *lens;             /* the blocks' instruction lengths       */
	size_t nlens, clens;
	struct qthr **thr;
	size_t nthr;
	struct qproc **proc;
	size_t nproc;
	struct qstamp *stamps;
	size_t nstamps, cstamps;
	struct qpipe *pipes;       /* parse side: the pipes written to */
	size_t npipes, cpipes;
	uint64_t vstart, insns, slice;
	char exe[PATH_MAX];        /* the binary qemu runs first            */
	char script[PATH_MAX];     /* a "#!" script it runs (exe: its
	                              interpreter), else empty             */
	char script_arg[256];      /* the "#!" line's argument, if any      */
	char argv0[PATH_MAX];      /* the program's argv[0] (qemu's -0)     */
	char comm[16];
	int fd;
	bool eof, stop;
	bool drained;              /* drain_pipe read the pipe's end */
	bool from_exec;            /* the default start, main, is not in exe:
	                              traced from exec */
	uint64_t stop_wall;        /* when record was told to stop (monotonic;
	                              0: not so, or at --max-insns) */
	pid_t child;
	bool child_reaped;         /* reap waited for it */
	bool termed;               /* sent SIGTERM (stop_child)             */
	bool term_noted;           /* rc_note_term_wait said it             */
	uint64_t termed_ns;        /* when (rc_emu_mono_ns)                 */
	int intr_seen;             /* *interrupted at the last stop_child   */
	uint8_t rbuf[1 << 16];
	size_t rlen;
};

static int qfail(struct qemu *e, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int qfail(struct qemu *e, int rc, const char *fmt, ...)
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

static int wcheck(struct qemu *e, int rc)
{
	if (rc >= 0)
		return 0;
	if (rc == -ENOMEM)
		return qfail(e, rc, "out of memory");
	return qfail(e, rc, "%s", rc_perf_errmsg(e->w));
}

#define TRUTH(e, t, cpu, th, ...) rc_emu_truth((e)->truth, t, cpu, (th)->p->pid, (th)->tid, __VA_ARGS__)

/* ---- finding qemu and the plugin ------------------------------------------ */

char *rc_qemu_find(void)
{
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/bin:/bin";
	char buf[PATH_MAX];
	while (*path) {
		size_t l = strcspn(path, ":");
		snprintf(buf, sizeof(buf), "%.*s/qemu-x86_64", (int)l, path);
		if (access(buf, X_OK) == 0)
			return strdup(buf);
		path += l + (path[l] == ':');
	}
	return NULL;
}

/* PTFLAME_QEMU_PLUGIN, else next to the build tree's ptflame
 * (build/cmd/ptflame -> build/record/), else the install directory. */
static int find_plugin(char *out, size_t n)
{
	const char *env = getenv("PTFLAME_QEMU_PLUGIN");
	if (env && *env) {
		snprintf(out, n, "%s", env);
		return access(out, R_OK) == 0 ? 0 : -ENOENT;
	}
	char self[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (k > 0) {
		self[k] = 0;
		char *s = strrchr(self, '/');
		if (s) {
			*s = 0;
			int k2 = snprintf(out, n, "%s/../record/%s", self, PLUGIN_NAME);
			if (k2 > 0 && (size_t)k2 < n && access(out, R_OK) == 0)
				return 0;
		}
	}
	snprintf(out, n, "%s/%s", PTFLAME_PLUGIN_DIR, PLUGIN_NAME);
	return access(out, R_OK) == 0 ? 0 : -ENOENT;
}

/* prog found as execvp would (PATH); *out its real path, *given (if not
 * NULL) the path as found, which is what a script's interpreter gets. */
static int resolve_exe(const char *prog, char *out, size_t n, char *given)
{
	char buf[PATH_MAX];
	if (strchr(prog, '/')) {
		snprintf(buf, sizeof(buf), "%s", prog);
	} else {
		const char *path = getenv("PATH");
		buf[0] = 0;
		while (path && *path) {
			size_t l = strcspn(path, ":");
			snprintf(buf, sizeof(buf), "%.*s/%s", (int)l, path, prog);
			if (access(buf, X_OK) == 0)
				break;
			buf[0] = 0;
			path += l + (path[l] == ':');
		}
		if (!buf[0])
			return -ENOENT;
	}
	if (!realpath(buf, out) || access(out, X_OK) != 0)
		return -errno;
	if (given)
		snprintf(given, n, "%s", buf);
	return 0;
}

/* A "#!" script's interpreter and its one optional argument, split as the
 * kernel splits the line (qemu-user runs ELF files only, so the backend
 * does what execve would). 1: a script, 0: not one, or a negative errno. */
static int script_interp(const char *path, char *interp, size_t n, char *arg, size_t an)
{
	char line[256];
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	size_t k = fread(line, 1, sizeof(line) - 1, f);
	fclose(f);
	line[k] = 0;
	if (k < 2 || line[0] != '#' || line[1] != '!')
		return 0;
	line[strcspn(line, "\n")] = 0;
	char *p = line + 2 + strspn(line + 2, " \t");
	size_t il = strcspn(p, " \t");
	if (!il || il >= n)
		return -ENOEXEC;
	memcpy(interp, p, il);
	interp[il] = 0;
	p += il;
	p += strspn(p, " \t");
	size_t al = strlen(p);
	while (al && (p[al - 1] == ' ' || p[al - 1] == '\t'))
		al--;
	if (al >= an)
		return -ENOEXEC;
	memcpy(arg, p, al);
	arg[al] = 0;
	return 1;
}

/* The file name in PATH (after its last '/'). */
static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* The process's name as the kernel sets it at an exec of PATH: its file
 * name, cut to what comm holds. */
static void set_comm(struct qemu *e, const char *path)
{
	const char *base = base_name(path);
	size_t bl = strnlen(base, sizeof(e->comm) - 1);
	memcpy(e->comm, base, bl);
	e->comm[bl] = 0;
}

/* Is the "#!" line "env NAME" (INTERP, as written there, names env; NAME a
 * program and nothing else: no option, no VAR=value)? */
static bool env_name(const char *interp, const char *arg)
{
	return !strcmp(base_name(interp), "env") && arg[0] && arg[0] != '-' &&
	       !strpbrk(arg, "= \t");
}

/* Does the file at PATH start as an ELF file (what qemu-user can run)? */
static bool is_elf(const char *path)
{
	unsigned char m[4] = { 0 };
	FILE *f = fopen(path, "re");
	size_t k = f ? fread(m, 1, sizeof(m), f) : 0;
	if (f)
		fclose(f);
	return k == 4 && !memcmp(m, "\177ELF", 4);
}

/* "#!/usr/bin/env NAME": env would exec NAME found on PATH, and qemu-user
 * cannot follow an exec (NAME would run natively, untraced), so the
 * backend runs NAME itself with the script, as env would: NAME is its
 * argv[0], and the process is named after it, as env's exec names it.
 * 0, 1 when NAME is no ELF file (a script itself, such as a pyenv shim:
 * qemu cannot run it, env runs as written), or -ENOENT. */
static int env_resolve(struct qemu *e)
{
	char given[PATH_MAX], real[PATH_MAX];
	if (resolve_exe(e->script_arg, real, sizeof(real), given) < 0)
		return -ENOENT;
	if (!is_elf(real))
		return 1;
	memcpy(e->exe, real, sizeof(e->exe));
	snprintf(e->argv0, sizeof(e->argv0), "%s", e->script_arg);
	set_comm(e, given);
	e->script_arg[0] = 0;
	return 0;
}

/* ---- threads, processes, stamps ------------------------------------------- */

static struct qproc *find_proc(struct qemu *e, pid_t pid)
{
	for (size_t i = 0; i < e->nproc; i++)
		if (e->proc[i]->pid == pid)
			return e->proc[i];
	return NULL;
}

static struct qproc *new_proc(struct qemu *e, pid_t pid)
{
	struct qproc **np = realloc(e->proc, (e->nproc + 1) * sizeof(*np));
	struct qproc *p = calloc(1, sizeof(*p));
	if (!np || !p) {
		free(p);
		if (np)
			e->proc = np;
		qfail(e, -ENOMEM, "out of memory");
		return NULL;
	}
	e->proc = np;
	p->pid = pid;
	e->proc[e->nproc++] = p;
	return p;
}

static struct qthr *find_thr(struct qemu *e, pid_t tid)
{
	for (size_t i = 0; i < e->nthr; i++)
		if (e->thr[i]->tid == tid && e->thr[i]->s.state != RC_EMU_GONE)
			return e->thr[i];
	return NULL;
}

static struct qthr *new_thr(struct qemu *e, pid_t tid, struct qproc *p)
{
	struct qthr **nt = realloc(e->thr, (e->nthr + 1) * sizeof(*nt));
	struct qthr *t = calloc(1, sizeof(*t));
	if (!nt || !t) {
		free(t);
		if (nt)
			e->thr = nt;
		qfail(e, -ENOMEM, "out of memory");
		return NULL;
	}
	e->thr = nt;
	t->tid = tid;
	t->p = p;
	t->s.pid = p->pid;
	t->s.tid = tid;
	t->s.cpu = -1;
	t->s.state = RC_EMU_NATIVE;
	if (rc_emu_sched_add(&e->s, &t->s) < 0) {
		free(t);
		qfail(e, -ENOMEM, "out of memory");
		return NULL;
	}
	e->thr[e->nthr++] = t;
	e->st->threads++;
	return t;
}

static size_t new_stamp(struct qemu *e, int kind, uint64_t uaddr)
{
	if (DC_VEC_PUSH_ROOM(e->stamps, e->nstamps, e->cstamps, 256)) {
		qfail(e, -ENOMEM, "out of memory");
		return 0;
	}
	struct qstamp *s = &e->stamps[e->nstamps];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->uaddr = uaddr;
	return ++e->nstamps;  /* 1-based: 0 is none */
}

/* The pipe of KEY; a new one if CREATE (NULL: none, or out of memory:
 * e->fail). Newest first: a pipe is mostly used soon after it is made. */
static struct qpipe *pipe_of(struct qemu *e, uint64_t key, bool create)
{
	for (size_t i = e->npipes; i > 0; i--)
		if (e->pipes[i - 1].key == key)
			return &e->pipes[i - 1];
	if (!create)
		return NULL;
	if (DC_VEC_PUSH_ROOM(e->pipes, e->npipes, e->cpipes, 16)) {
		qfail(e, -ENOMEM, "out of memory");
		return NULL;
	}
	struct qpipe *pp = &e->pipes[e->npipes++];
	memset(pp, 0, sizeof(*pp));
	pp->key = key;
	return pp;
}

/* A write of LEN bytes (known: write's count; writev: at its return) to
 * pipe PP, its entry STAMP. */
static int pipe_write(struct qemu *e, struct qpipe *pp, size_t stamp, uint64_t len, bool known)
{
	if (pp->head && pp->head == pp->n)
		pp->head = pp->n = 0;
	if (pp->n - pp->head >= 65536)
		pp->head++;  /* no reader seen (not followed): the oldest go */
	if (pp->head > 4096 && pp->head * 2 > pp->n) {
		memmove(pp->w, pp->w + pp->head, (pp->n - pp->head) * sizeof(*pp->w));
		pp->n -= pp->head;
		pp->head = 0;
	}
	if (DC_VEC_PUSH_ROOM(pp->w, pp->n, pp->cap, 64))
		return qfail(e, -ENOMEM, "out of memory");
	pp->w[pp->n++] = (struct qpwrite){ .stamp = stamp, .len = len, .known = known };
	return 0;
}

/* The write whose entry was STAMP returned RET: its true length. */
static void pipe_write_ret(struct qpipe *pp, size_t stamp, int64_t ret)
{
	for (size_t k = pp->n; k > pp->head; k--)
		if (pp->w[k - 1].stamp == stamp) {
			pp->w[k - 1].len = ret > 0 ? (uint64_t)ret : 0;
			pp->w[k - 1].known = true;
			pp->w[k - 1].failed = ret < 0;
			return;
		}
}

/* A read took N bytes of pipe PP: the entry stamp of the write of its
 * last byte (bytes from writes not seen: the last one seen), 0 none. */
static size_t pipe_read(struct qpipe *pp, uint64_t n)
{
	size_t stamp = 0;
	while (n && pp->head < pp->n) {
		struct qpwrite *w = &pp->w[pp->head];
		if (!w->known) {
			stamp = w->stamp;
			w->used += n;  /* its length comes at its return */
			break;
		}
		uint64_t avail = w->len > w->used ? w->len - w->used : 0;
		pp->head += !avail;
		if (!avail)
			continue;  /* (a failed or empty write, or read whole) */
		stamp = w->stamp;
		if (n < avail) {
			w->used += n;
			break;
		}
		n -= avail;
		w->used = w->len;
		pp->head++;
	}
	return stamp;
}

/* A read of a socket that keeps message boundaries (a datagram socket,
 * RC_QP_KEY_DGRAM) took one message: the oldest send not yet read, whatever
 * the bytes it took (a smaller buffer truncates it; the rest is dropped),
 * its entry stamp; 0 none. */
static size_t pipe_read_msg(struct qpipe *pp)
{
	while (pp->head < pp->n) {
		struct qpwrite *w = &pp->w[pp->head++];
		if (w->failed)
			continue;
		w->used = w->len;  /* (unknown yet: behind head all the same) */
		return w->stamp;
	}
	return 0;
}

/* The entry stamp of the oldest write to PP not read whole, 0 none */
static size_t pipe_pending(const struct qpipe *pp)
{
	for (size_t k = pp->head; k < pp->n; k++)
		if (!pp->w[k].known || pp->w[k].len > pp->w[k].used)
			return pp->w[k].stamp;
	return 0;
}

static int push(struct qemu *e, struct qthr *t, const uint32_t *w, size_t n)
{
	if (t->head && t->head == t->n) {
		t->base += t->head;
		t->head = t->n = 0;
	}
	if (t->n + n > t->cap) {
		if (t->head) {
			memmove(t->w, t->w + t->head, (t->n - t->head) * 4);
			t->base += t->head;
			t->n -= t->head;
			t->head = 0;
		}
		if (dc_vec_reserve((void **)&t->w, &t->cap, t->n + n, sizeof(*t->w), 4096))
			return qfail(e, -ENOMEM, "out of memory");
	}
	memcpy(t->w + t->n, w, n * 4);
	t->n += n;
	return 0;
}

/* ---- sideband -------------------------------------------------------------- */

/* The name of T: the program's, or what T set (prctl PR_SET_NAME, as
 * pthread_setname_np on itself does; a new thread inherits its creator's). */
static const char *tcomm(const struct qemu *e, const struct qthr *t)
{
	return t->comm[0] ? t->comm : e->comm;
}

static int emit_comm(struct qemu *e, struct qthr *t, unsigned cpu, uint64_t ts)
{
	TRUTH(e, ts, -1, t, "comm %s", tcomm(e, t));
	struct dc_sample_id s = rc_emu_sid(cpu, false, t->p->pid, t->tid, ts);
	return wcheck(e, rc_perf_comm(e->w, (uint32_t)t->p->pid, (uint32_t)t->tid, tcomm(e, t),
				      false, &s));
}

static int emit_mmap(struct qemu *e, struct qthr *t, struct rc_map *m, unsigned cpu, uint64_t ts)
{
	TRUTH(e, ts, -1, t, "mmap %#" PRIx64 " %#" PRIx64 " %#" PRIx64 " %s", m->start,
	      m->end - m->start, m->pgoff, m->path);
	struct dc_rec_mmap r;
	rc_map_mmap2(m, (uint32_t)t->p->pid, (uint32_t)t->tid, &r);
	struct dc_sample_id s = rc_emu_sid(cpu, false, t->p->pid, t->tid, ts);
	m->announced = ts;
	return wcheck(e, rc_perf_mmap2(e->w, &r, &s));
}

static int add_map(struct qemu *e, struct qproc *p, const struct rc_qp_map *qm, const char *path,
		   size_t len)
{
	for (size_t i = 0; i < p->nmaps; i++) {
		struct rc_map *m = &p->maps[i];
		if (m->start == qm->start && m->end == qm->end && m->pgoff == qm->pgoff &&
		    strlen(m->path) == len && !memcmp(m->path, path, len))
			return 0;
	}
	struct rc_map *nm = realloc(p->maps, (p->nmaps + 1) * sizeof(*nm));
	if (!nm)
		return qfail(e, -ENOMEM, "out of memory");
	p->maps = nm;
	struct rc_map *m = &p->maps[p->nmaps];
	memset(m, 0, sizeof(*m));
	m->start = qm->start;
	m->end = qm->end;
	m->pgoff = qm->pgoff;
	m->maj = qm->maj;
	m->min = qm->min;
	m->ino = qm->ino;
	m->prot = 5;  /* PROT_READ | PROT_EXEC: qemu maps guest code non-executable */
	m->flags = 2; /* MAP_PRIVATE */
	m->path = strndup(path, len);
	if (!m->path)
		return qfail(e, -ENOMEM, "out of memory");
	p->nmaps++;
	p->unannounced = true;
	if (!p->start && !e->from_exec && !strcmp(m->path, e->exe)) {
		const char *sym = e->o->start_sym ? e->o->start_sym : "main";
		if (*sym && !(p->start = rc_emu_sym_addr(e->syms, p->maps, p->nmaps, e->exe, sym)))
			return qfail(e, -ENOENT, "start symbol '%s' not found in %s%s%s%s: name "
				     "another with --start=SYMBOL, or trace from exec with --start=",
				     sym, e->exe, e->script[0] ? " (the binary that runs " : "",
				     e->script, e->script[0] ? ")" : "");
	}
	return 0;
}

/* Announce P's mappings not yet announced (or announced after TS) at TS. */
static int maps_at(struct qemu *e, struct qthr *t, unsigned cpu, uint64_t ts)
{
	for (size_t i = 0; i < t->p->nmaps && !e->fail; i++)
		if (!t->p->maps[i].announced || t->p->maps[i].announced > ts)
			emit_mmap(e, t, &t->p->maps[i], cpu, ts);
	return e->fail;
}

static const struct rc_map *find_map(const struct qproc *p, uint64_t a)
{
	for (size_t i = 0; i < p->nmaps; i++)
		if (a >= p->maps[i].start && a < p->maps[i].end)
			return &p->maps[i];
	return NULL;
}

/* ---- virtual CPUs ------------------------------------------------------------ */

static int drain(struct qemu *e, unsigned c, bool final)
{
	return wcheck(e, rc_emu_cpu_drain(&e->s, c, final));
}

static int enc(struct qemu *e, unsigned c, int rc, const char *what)
{
	if (rc < 0)
		return qfail(e, rc, "PT encoder (cpu %u, %s): %s", c, what, strerror(-rc));
	return drain(e, c, false);
}

static struct qthr *thr_of(struct rc_emu_sthr *s)
{
	return (struct qthr *)s;  /* its first member */
}

static int sfail(struct qemu *e, int rc)
{
	if (rc >= 0)
		return 0;
	return e->fail ? e->fail : wcheck(e, rc);  /* e->fail: switched_in's own */
}

static void make_ready(struct qemu *e, struct qthr *t, uint64_t when)
{
	rc_emu_make_ready(&e->s, &t->s, when);
	t->s.cpu = -1;
}

/* T is on CPU c (the PGE comes with T's next block). */
static int switched_in(void *ctx, unsigned c, struct rc_emu_sthr *t, uint64_t rt)
{
	struct qemu *e = ctx;
	return maps_at(e, thr_of(t), c, rt);
}

static int cpu_leave(struct qemu *e, unsigned c, bool preempt)
{
	return sfail(e, rc_emu_cpu_leave(&e->s, c, preempt));
}

static int assign_idle(struct qemu *e)
{
	return sfail(e, rc_emu_assign_idle(&e->s));
}

static uint64_t latest_now(const struct qemu *e)
{
	return rc_emu_latest_now(&e->s);
}

/* Asynchronous TIP.PGD at IP; the clock moves on 1 ns (emulate.c). */
static int disable_async(struct qemu *e, unsigned c, uint64_t ip)
{
	struct rc_emu_cpu *v = &e->cpu[c];
	int rc = enc(e, c, rc_ptenc_disable(v->q.enc, v->now, ip, RC_PTENC_OFF_ASYNC), "disable");
	v->now += 1;
	v->on = false;
	return rc;
}

static int thr_exit(struct qemu *e, struct qthr *t, uint64_t now)
{
	TRUTH(e, now, -1, t, "exit");
	struct dc_sample_id s = rc_emu_sid(0, false, t->p->pid, t->tid, now);
	t->s.state = RC_EMU_GONE;
	return wcheck(e, rc_perf_exit(e->w, (uint32_t)t->p->pid, (uint32_t)t->p->pid,
				      (uint32_t)t->tid, (uint32_t)t->tid, now, &s));
}

/* Process P died (its exit_ns set): a thread of it ready for a CPU dies
 * where it waits, as the kernel kills a runnable task, at the death (or
 * its syscall's entry, if later: killed in it), the rest of its stream
 * dropped; before a thread of P leaves its CPU, or a ready one would be
 * switched in there and exit a switch after the death. */
static void kill_ready(struct qemu *e, struct qproc *p)
{
	for (size_t i = 0; i < e->nthr && p->exit_ns; i++) {
		struct qthr *t = e->thr[i];

		if (t->p == p && t->traced && t->s.state == RC_EMU_READY)
			thr_exit(e, t, p->exit_ns > t->v0 ? p->exit_ns : t->v0);
	}
}

/* ---- the pipe ------------------------------------------------------------------- */

/* Whether block D's last instruction is one that qemu (7.2, x86) reports
 * but does not run in D: an instruction after a block's first that reaches
 * onto another page than the block's first byte is dropped from the block
 * (target/i386 advance_pc: the block ends before it, by falling through)
 * and translated again as the first of a block of its own; the plugin API
 * still lists it, with the bytes read before qemu gave up (none when it
 * starts on the next page). Its true length comes from guest memory. */
static bool page_crossing(struct qemu *e, const struct rc_qp_def *d)
{
	if (d->ninsns < 2)
		return false;
	uint64_t page = d->vaddr & ~(uint64_t)4095;
	if ((d->last_ip & ~(uint64_t)4095) != page)
		return true;
	struct rc_insn full;
	if (!d->mem_len || rc_insn_classify(e->cs, d->mem, d->mem_len, d->last_ip, &full) < 0)
		return false;
	return ((d->last_ip + full.len - 1) & ~(uint64_t)4095) != page;
}

enum { IO_NONE, IO_READ, IO_WRITE, IO_CLOSE, IO_CONNECT, IO_SIGNAL };

/* What a syscall with a wake key (rc_qp_sys.extra) does with it */
static int io_kind(int64_t nr)
{
	switch (nr) {
	case SYS_read: case SYS_readv: case SYS_recvfrom: case SYS_recvmsg:
		return IO_READ;
	case SYS_write: case SYS_writev: case SYS_sendto: case SYS_sendmsg:
		return IO_WRITE;
	case SYS_close: case SYS_shutdown:
		return IO_CLOSE;
	case SYS_connect:
		return IO_CONNECT;
	case SYS_tgkill: case SYS_tkill: case SYS_kill: case SYS_rt_sigqueueinfo:
	case SYS_rt_tgsigqueueinfo:
		return IO_SIGNAL;
	default:
		return IO_NONE;
	}
}

static bool is_poll(int64_t nr)
{
	return nr == SYS_poll || nr == SYS_ppoll || nr == SYS_select || nr == SYS_pselect6 ||
	       nr == SYS_epoll_wait || nr == SYS_epoll_pwait || nr == SYS_epoll_pwait2;
}

/* The signal send (its stamp) that ended the wait of thread T (process
 * PID) whose entry was stamp ENTRY, 0 none: the first not yet taken after
 * the entry (in pipe order, so before the return) to T or its process, of
 * signal SIG (0: any); else, for an explicit signal wait (EXPLICIT:
 * sigwait, sigsuspend, pause, whose signal may have been sent before the
 * entry: pending), the latest one not taken before it. */
static size_t signal_wake(struct qemu *e, pid_t tid, pid_t pid, size_t entry, int sig,
			  bool explicit)
{
	uint64_t k1 = RC_QP_KEY_SIG | RC_QP_KEY_ID((uint64_t)tid),
		 k2 = RC_QP_KEY_SIGP | RC_QP_KEY_ID((uint64_t)pid);
	for (size_t k = entry + 1; k <= e->nstamps; k++) {
		struct qstamp *q = &e->stamps[k - 1];
		if (q->kind == 1 && !q->used && (q->uaddr == k1 || q->uaddr == k2) &&
		    (!sig || q->sig == sig)) {
			q->used = true;
			return k;
		}
	}
	size_t lo = entry > 65536 ? entry - 65536 : 0;
	for (size_t k = entry - 1; explicit && k > lo; k--) {
		struct qstamp *q = &e->stamps[k - 1];
		if (q->kind == 1 && !q->used && (q->uaddr == k1 || q->uaddr == k2) &&
		    (!sig || q->sig == sig)) {
			q->used = true;
			return k;
		}
	}
	return 0;
}

/* A poll, select or epoll_wait of thread T that returned ready: the write
 * whose data it found (the oldest not read on any key it watches, the
 * host may have run it before the wait's entry), else the first write
 * to or close of one of them after its entry; 0 none (a timer, a fd of
 * no key, a writer not traced) */
static size_t poll_wake(struct qemu *e, struct qthr *t)
{
	size_t best = 0;
	if (!t->wk.n)
		return 0;
	/* (sorted: a wait may watch thousands of fds, a process have
	 * thousands of pipes and sockets) */
	rc_qp_keyset_sort(&t->wk);
	if (t->wk.n <= 8) {
		for (uint32_t i = 0; i < t->wk.n; i++) {
			struct qpipe *pp = pipe_of(e, t->wk.key[i], false);
			size_t st = pp ? pipe_pending(pp) : 0;
			if (st && (!best || st < best))
				best = st;
		}
	} else {
		for (size_t i = 0; i < e->npipes; i++) {
			struct qpipe *pp = &e->pipes[i];
			size_t st = pp->head < pp->n && rc_qp_keyset_has(&t->wk, pp->key) ?
				    pipe_pending(pp) : 0;
			if (st && (!best || st < best))
				best = st;
		}
	}
	for (size_t k = t->sys_stamp + 1; !best && k <= e->nstamps; k++) {
		const struct qstamp *q = &e->stamps[k - 1];
		if (q->kind == 1 && q->uaddr && rc_qp_keyset_has(&t->wk, q->uaddr))
			best = k;
	}
	return best;
}

/* Parse one chunk: words go to their thread's queue; maps, definitions,
 * stamps and births are handled here, in pipe order. */
static int parse_chunk(struct qemu *e, const struct rc_qp_chunk *h, const uint32_t *w, size_t nw)
{
	struct qproc *p = find_proc(e, h->pid);
	struct qthr *t = find_thr(e, h->tid);
	size_t i = 0;
	if (!p && nw && w[0] == RC_QP_BIRTH && nw >= 1 + RC_QP_WORDS(struct rc_qp_birth)) {
		struct rc_qp_birth b;
		memcpy(&b, w + 1, sizeof(b));
		struct qproc *pp = find_proc(e, b.ppid);
		if (!e->o->follow_fork || !pp)
			return 0;  /* a child process we do not follow */
		if (!(p = new_proc(e, h->pid)))
			return e->fail;
		for (size_t k = 0; k < pp->nmaps; k++) {
			struct rc_qp_map m = { .start = pp->maps[k].start, .end = pp->maps[k].end,
					       .pgoff = pp->maps[k].pgoff, .ino = pp->maps[k].ino,
					       .maj = pp->maps[k].maj, .min = pp->maps[k].min };
			if (add_map(e, p, &m, pp->maps[k].path, strlen(pp->maps[k].path)))
				return e->fail;
		}
		p->start = pp->start;
		memcpy(p->handlers, pp->handlers, sizeof(p->handlers));
		p->nhandlers = pp->nhandlers;
	}
	if (!p) {
		if (e->nproc)
			return 0;  /* an unfollowed process */
		if (!(p = new_proc(e, h->pid)))
			return e->fail;
	}
	while (i < nw && !e->fail) {
		uint32_t m = w[i];
		if (m < RC_QP_MARK) {
			size_t j = i;
			while (j < nw && w[j] < RC_QP_MARK)
				j++;
			if (!t && !(t = new_thr(e, h->tid, p)))
				return e->fail;
			if (push(e, t, w + i, j - i))
				return e->fail;
			i = j;
			continue;
		}
		i++;
		if (m == RC_QP_DEF) {
			struct rc_qp_def d;
			if (i + RC_QP_WORDS(d) > nw)
				break;
			memcpy(&d, w + i, sizeof(d));
			i += RC_QP_WORDS(d);
			uint32_t nlens = i < nw ? w[i] : 0;
			if (i + 1 + (nlens + 3) / 4 > nw || nlens > d.ninsns)
				break;
			i++;
			if (d.id >= e->ndefs) {
				size_t old = e->ndefs;

				if (DC_VEC_PUSH_ROOM(e->defs, d.id, e->ndefs, 4096))
					return qfail(e, -ENOMEM, "out of memory");
				memset(e->defs + old, 0, (e->ndefs - old) * sizeof(*e->defs));
			}
			struct qdef *q = &e->defs[d.id];
			q->ok = true;
			q->n = d.ninsns;
			q->vaddr = d.vaddr;
			if (dc_vec_reserve((void **)&e->lens, &e->clens, e->nlens + nlens, 1, 4096))
				return qfail(e, -ENOMEM, "out of memory");
			memcpy(e->lens + e->nlens, w + i, nlens);
			q->lens = (uint32_t)e->nlens;
			q->nlens = nlens;
			e->nlens += nlens;
			i += (nlens + 3) / 4;
			if (rc_insn_classify(e->cs, d.last, d.last_len, d.last_ip, &q->last) < 0) {
				memset(&q->last, 0, sizeof(q->last));
				q->last.ip = d.last_ip;
				q->last.len = (uint8_t)d.last_len;
				q->last.cls = RC_INSN_OTHER;
			}
			if (page_crossing(e, &d)) {
				/* qemu left it to the next block: this one ends
				 * with the instruction before, falling through */
				q->n--;
				memset(&q->last, 0, sizeof(q->last));
				q->last.ip = d.prev_ip;
				q->last.len = (uint8_t)d.prev_len;
				q->last.cls = RC_INSN_OTHER;
			}
		} else if (m == RC_QP_MAP) {
			struct rc_qp_map mp;
			if (i + RC_QP_WORDS(mp) > nw)
				break;
			memcpy(&mp, w + i, sizeof(mp));
			i += RC_QP_WORDS(mp);
			size_t pw = (mp.pathlen + 3) / 4;
			if (i + pw > nw)
				break;
			if (add_map(e, p, &mp, (const char *)(w + i), mp.pathlen))
				return e->fail;
			i += pw;
		} else if (m == RC_QP_KEYS) {
			/* parse side only: keys of the wait whose SYS follows
			 * (several records: a first, then more of the set) */
			struct rc_qp_keys kh;
			if (i + RC_QP_WORDS(kh) > nw)
				break;
			memcpy(&kh, w + i, sizeof(kh));
			if (kh.n > RC_QP_KEYS_PER_REC || i + RC_QP_WORDS(kh) + 2 * (size_t)kh.n > nw)
				break;
			i += RC_QP_WORDS(kh);
			if (!t && !(t = new_thr(e, h->tid, p)))
				return e->fail;
			if (kh.first)
				t->wk.n = 0;
			for (uint32_t k = 0; k < kh.n; k++) {
				uint64_t key;
				memcpy(&key, w + i + 2 * k, sizeof(key));
				if (rc_qp_keyset_add(&t->wk, key))
					break;  /* (more than RC_QP_MAXKEYS: not sent) */
			}
			i += 2 * (size_t)kh.n;
		} else if (m == RC_QP_SYS || m == RC_QP_RET || m == RC_QP_BIRTH || m == RC_QP_JOIN) {
			if (!t && !(t = new_thr(e, h->tid, p)))
				return e->fail;
			_Static_assert(sizeof(struct rc_qp_sys) >= sizeof(struct rc_qp_ret) &&
				       sizeof(struct rc_qp_sys) >= sizeof(struct rc_qp_birth) &&
				       sizeof(struct rc_qp_sys) >= sizeof(struct rc_qp_join),
				       "rec below holds any of them");
			uint32_t words = m == RC_QP_SYS ? RC_QP_WORDS(struct rc_qp_sys) :
					 m == RC_QP_RET ? RC_QP_WORDS(struct rc_qp_ret) :
					 m == RC_QP_JOIN ? RC_QP_WORDS(struct rc_qp_join) :
					 RC_QP_WORDS(struct rc_qp_birth);
			if (i + words > nw)
				break;
			/* the record, then one word: the stamp it sets or waits for */
			uint32_t rec[2 + RC_QP_WORDS(struct rc_qp_sys)];  /* the largest record */
			rec[0] = m;
			memcpy(rec + 1, w + i, words * 4);
			uint32_t stamp = 0;
			/* (traced or not: any execve that does not return) */
			t->in_exec = false;
			if (m == RC_QP_SYS) {
				struct rc_qp_sys s;
				memcpy(&s, w + i, sizeof(s));
				t->in_exec = s.nr == SYS_execve || s.nr == SYS_execveat;
				int io = s.extra ? io_kind(s.nr) : IO_NONE;
				bool pipe = io != IO_NONE;  /* (an fd's or a signal's key) */
				bool wake = (s.nr == SYS_futex && rc_emu_futex_wakes((int)s.a2)) ||
					    s.nr == SYS_exit || (pipe && io != IO_READ);
				if (!is_poll(s.nr))
					t->wk.n = 0;
				bool clone = s.nr == SYS_clone || s.nr == SYS_clone3 ||
					     s.nr == SYS_fork || s.nr == SYS_vfork;
				/* an exit wakes its clear-tid futex (a join);
				 * unknown (0): any futex */
				stamp = (uint32_t)new_stamp(e, wake ? 1 : clone ? 2 : 0,
							    s.nr == SYS_futex ? s.a1 :
							    pipe ? s.extra :
							    s.nr == SYS_exit ? t->ctid : 0);
				if (clone)
					e->stamps[stamp - 1].ctid = s.ctid;
				if (s.nr == SYS_exit)
					e->stamps[stamp - 1].exit = true;
				if (io == IO_SIGNAL)
					e->stamps[stamp - 1].sig = (int)(s.nr == SYS_tgkill ||
									 s.nr == SYS_rt_tgsigqueueinfo ? s.a3 : s.a2);
				if (s.nr == SYS_set_tid_address)
					t->ctid = s.a1;
				if (io == IO_WRITE || io == IO_CLOSE) {
					struct qpipe *pp = pipe_of(e, s.extra, true);
					if (!pp)
						return e->fail;
					bool known = s.nr == SYS_write || s.nr == SYS_sendto;
					if (io == IO_CLOSE) {
						pp->close_stamp = stamp;
						pp->close_tid = h->tid;
					} else if (pipe_write(e, pp, stamp, known ? s.a3 : 0, known)) {
						return e->fail;
					}
				}
				t->sys_stamp = stamp;
				if (clone)
					t->clone_stamp = stamp;
			} else if (m == RC_QP_RET) {
				struct rc_qp_ret r;
				memcpy(&r, w + i, sizeof(r));
				if (t->clone_stamp && (r.nr == SYS_clone || r.nr == SYS_clone3 ||
						       r.nr == SYS_fork || r.nr == SYS_vfork)) {
					e->stamps[t->clone_stamp - 1].child = r.ret > 0 ? (pid_t)r.ret : 0;
					t->clone_stamp = 0;
				}
				/* a futex wait ends at the latest wake of its futex
				 * (or a thread exit) between its entry and return;
				 * a wake (kind 1) is no wait: it takes its time */
				if (r.nr == SYS_futex && t->sys_stamp &&
				    e->stamps[t->sys_stamp - 1].kind != 1) {
					uint64_t ua = e->stamps[t->sys_stamp - 1].uaddr;
					for (size_t k = e->nstamps; k > t->sys_stamp; k--) {
						const struct qstamp *q = &e->stamps[k - 1];
						if (q->kind == 1 && (q->uaddr == ua || q->uaddr == 0)) {
							stamp = (uint32_t)k;
							break;
						}
					}
					/* none: the wake may still have come before the
					 * entry in the pipe, as the plugin writes a
					 * syscall's entry before the kernel (qemu) does it:
					 * a wait that was woken (0) or found the word
					 * changed (EAGAIN) waited for the latest wake of
					 * its futex before it, and any wait on a thread's
					 * clear-tid word for that thread's exit (the word
					 * stays 0: a join of a thread that was exiting) */
					size_t lo = t->sys_stamp > 65536 ? t->sys_stamp - 65536 : 0;
					for (size_t k = t->sys_stamp - 1; !stamp && ua && k > lo; k--) {
						const struct qstamp *q = &e->stamps[k - 1];
						if (q->kind == 1 && q->uaddr == ua) {
							if (q->exit || r.ret == 0 || r.ret == -EAGAIN)
								stamp = (uint32_t)k;
							break;
						}
					}
				}
				if (io_kind(r.nr) == IO_WRITE && t->sys_stamp &&
				    e->stamps[t->sys_stamp - 1].uaddr) {
					struct qpipe *pp = pipe_of(e, e->stamps[t->sys_stamp - 1].uaddr, false);
					if (pp)
						pipe_write_ret(pp, t->sys_stamp, r.ret);
				}
				/* a read of a pipe that took bytes at the write of
				 * its last byte, before its entry in the pipe or
				 * after (the host may have run the write first: the
				 * read then did not block, but in virtual time it
				 * may have begun before the write); else (EOF, an
				 * error, bytes of writes not seen) at the first
				 * write to or close of it between its entry and
				 * return, else (EOF) at its latest close by
				 * another thread before; an error (EAGAIN) took
				 * no write. The same for a socket (the queue of
				 * the socket read: its peer's writes) and an
				 * eventfd (a read takes all its writes so far) */
				if (io_kind(r.nr) == IO_READ && t->sys_stamp &&
				    e->stamps[t->sys_stamp - 1].uaddr) {
					uint64_t key = e->stamps[t->sys_stamp - 1].uaddr;
					struct qpipe *pp = pipe_of(e, key, false);
					if (pp && r.ret >= 0 && (key & RC_QP_KEY_DGRAM))
						stamp = (uint32_t)pipe_read_msg(pp);
					else if (pp && r.ret > 0)
						stamp = (uint32_t)pipe_read(pp, key & RC_QP_KEY_EVFD ? UINT64_MAX
										   : (uint64_t)r.ret);
					for (size_t k = t->sys_stamp + 1; !stamp && r.ret >= 0 && k <= e->nstamps; k++) {
						const struct qstamp *q = &e->stamps[k - 1];
						if (q->kind == 1 && q->uaddr == key) {
							stamp = (uint32_t)k;
							break;
						}
					}
					if (!stamp && r.ret == 0 && pp && pp->close_tid != h->tid)
						stamp = (uint32_t)pp->close_stamp;
				}
				/* a poll, select, epoll_wait that found a fd ready */
				if (!stamp && is_poll(r.nr) && r.ret > 0 && t->sys_stamp)
					stamp = (uint32_t)poll_wake(e, t);
				if (is_poll(r.nr))
					t->wk.n = 0;  /* (the next may send none) */
				/* accept: at the connect of the socket it took */
				if (!stamp && (r.nr == SYS_accept || r.nr == SYS_accept4) && r.extra) {
					size_t lo = e->nstamps > 65536 ? e->nstamps - 65536 : 0;
					for (size_t k = e->nstamps; k > lo; k--)
						if (e->stamps[k - 1].kind == 1 &&
						    e->stamps[k - 1].uaddr == r.extra) {
							stamp = (uint32_t)k;
							break;
						}
				}
				/* a signal from a traced thread ended a signal
				 * wait, or interrupted a blocking syscall */
				bool sigw = r.nr == SYS_rt_sigtimedwait && r.ret > 0;
				bool explicit = sigw || r.nr == SYS_rt_sigsuspend || r.nr == SYS_pause;
				if (!stamp && t->sys_stamp && r.nr != SYS_futex &&
				    (explicit || r.ret == -EINTR))
					stamp = (uint32_t)signal_wake(e, h->tid, h->pid, t->sys_stamp,
								      sigw ? (int)r.ret : 0, explicit);
			} else if (m == RC_QP_JOIN) {
				struct rc_qp_join j;
				memcpy(&j, w + i, sizeof(j));
				/* the exit that zeroed the word: the latest one of a
				 * thread with that word (its SYS came first) */
				size_t lo = e->nstamps > 65536 ? e->nstamps - 65536 : 0;
				for (size_t k = e->nstamps; j.addr && k > lo; k--)
					if (e->stamps[k - 1].exit && e->stamps[k - 1].uaddr == j.addr) {
						stamp = (uint32_t)k;
						break;
					}
			} else {
				struct rc_qp_birth b;
				memcpy(&b, w + i, sizeof(b));
				/* the clone that made it: the one that returned its
				 * tid (its creator may be in another clone by now:
				 * the host runs a new thread when it likes), else
				 * the one its creator is still in */
				struct qthr *pt = find_thr(e, b.ptid);
				/* (a thread's first words follow its clone soon: a
				 * bounded look back) */
				size_t lo = e->nstamps > 65536 ? e->nstamps - 65536 : 0;
				for (size_t k = e->nstamps; pt && k > lo; k--)
					if (e->stamps[k - 1].kind == 2 &&
					    e->stamps[k - 1].child == h->tid) {
						stamp = (uint32_t)k;
						break;
					}
				if (pt && !stamp)
					stamp = (uint32_t)pt->clone_stamp;
				if (stamp && !b.fork) {
					if (!t && !(t = new_thr(e, h->tid, p)))
						return e->fail;
					t->ctid = e->stamps[stamp - 1].ctid;
				}
			}
			rec[1 + words] = stamp;
			if (push(e, t, rec, 2 + words))
				return e->fail;
			i += words;
		} else {
			return qfail(e, -EPROTO, "bad data from the qemu plugin (word %#x)", m);
		}
	}
	return e->fail;
}

/* Read what the pipe has (BLOCK: wait for some); parse whole chunks. */
static int read_pipe(struct qemu *e, bool block)
{
	if (e->eof)
		return 0;
	int fl = fcntl(e->fd, F_GETFL);
	fcntl(e->fd, F_SETFL, block ? fl & ~O_NONBLOCK : fl | O_NONBLOCK);
	ssize_t k = read(e->fd, e->rbuf + e->rlen, sizeof(e->rbuf) - e->rlen);
	if (k == 0) {
		e->eof = true;
		return 0;
	}
	if (k < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : qfail(e, -errno, "pipe: %s", strerror(errno));
	e->rlen += (size_t)k;
	size_t off = 0;
	while (e->rlen - off >= sizeof(struct rc_qp_chunk) && !e->fail) {
		struct rc_qp_chunk h;
		memcpy(&h, e->rbuf + off, sizeof(h));
		if (h.size % 4 || h.size > RC_QP_CHUNK_MAX)
			return qfail(e, -EPROTO, "bad data from the qemu plugin (chunk of %u bytes)", h.size);
		if (e->rlen - off < sizeof(h) + h.size)
			break;
		uint32_t w[RC_QP_CHUNK_MAX / 4];
		memcpy(w, e->rbuf + off + sizeof(h), h.size);
		parse_chunk(e, &h, w, h.size / 4);
		off += sizeof(h) + h.size;
	}
	memmove(e->rbuf, e->rbuf + off, e->rlen - off);
	e->rlen -= off;
	return e->fail;
}

/* ---- replay ----------------------------------------------------------------------- */

static uint64_t u64at(const uint32_t *w)
{
	uint64_t v;
	memcpy(&v, w, 8);
	return v;
}

static bool is_handler(const struct qproc *p, uint64_t a)
{
	for (unsigned i = 0; i < p->nhandlers; i++)
		if (p->handlers[i] == a)
			return true;
	return false;
}

/* Emit T's pending last instruction L, which went to NEXT. */
static int retire(struct qemu *e, unsigned c, struct qthr *t, uint64_t next)
{
	struct rc_emu_cpu *v = &e->cpu[c];
	struct rc_insn in = t->pend->last;
	in.next_ip = next;
	uint64_t now = t->pend_t;
	switch (in.cls) {
	case RC_INSN_CALL: case RC_INSN_CALL_IND:
		TRUTH(e, now, (int)c, t, "call %#" PRIx64 " %#" PRIx64, in.ip, next);
		break;
	case RC_INSN_RET:
		TRUTH(e, now, (int)c, t, "ret %#" PRIx64 " %#" PRIx64, in.ip, next);
		break;
	case RC_INSN_JCC:
		if (next == in.ip + in.len)
			break;   /* not taken: in flow, wherever it goes */
		/* taken: as a jmp */
		/* fall through */
	case RC_INSN_JMP: case RC_INSN_JMP_IND:
		if (rc_emu_func_key(e->syms, find_map(t->p, in.ip), in.ip) !=
		    rc_emu_func_key(e->syms, find_map(t->p, next), next))
			TRUTH(e, now, (int)c, t, "jump %#" PRIx64 " %#" PRIx64, in.ip, next);
		break;
	default:
		break;
	}
	t->pend = NULL;
	return enc(e, c, rc_ptenc_insn(v->q.enc, &in, now), "insn");
}

/* The index in block Q of its instruction at IP (how many before it
 * retired when it faulted), or -1 when not known. */
static long insn_index(const struct qemu *e, const struct qdef *q, uint64_t ip)
{
	uint64_t a = q->vaddr;

	for (uint32_t i = 0; i < q->nlens && a <= ip; a += e->lens[q->lens + i], i++)
		if (a == ip)
			return i;
	return -1;
}

/* How far the read-ahead for a handler's rt_sigreturn looks (words of the
 * thread's queue, 16 MiB) before it takes the handler as one that does not
 * return (it siglongjmps), as at the end of the stream: the memory held
 * while it waits is bounded, and a handler that runs longer than that
 * before it returns is misplaced (its signal taken as a fault). */
#define SIGRET_AHEAD (1u << 22)

/* Whether to wait for more of T's stream before deciding where its
 * handler's rt_sigreturn resumes. */
static bool sigret_wait(const struct qemu *e, const struct qthr *t)
{
	return !e->eof && t->n - t->head < SIGRET_AHEAD;
}

/* Where a conditional branch before a signal went: the address at which
 * the handler's rt_sigreturn resumes (read ahead in T's queue), after
 * SKIP such returns at the same depth (signals delivered at once: each
 * but the first interrupted the handler's first instruction). 0: not
 * there yet. The scan for SKIP 0 goes on where the last one for the same
 * head stopped (a handler that siglongjmps is waited for up to
 * SIGRET_AHEAD words, and the queue grows by a chunk at a time: scanning
 * from the head each time was quadratic). */
static uint64_t resume_after_signal(struct qemu *e, struct qthr *t, unsigned skip)
{
	int depth = 0;
	size_t i = t->head;
	bool after_ret = false;
	/* handlers installed later in the queue are handlers there too (a
	 * signal of one of them ends with an rt_sigreturn that is not ours) */
	uint64_t later[8];
	unsigned nlater = 0;
	if (!skip && t->ra.head == t->base + t->head + 1) {
		i = (size_t)(t->ra.at - t->base);
		depth = t->ra.depth;
		after_ret = t->ra.after_ret;
		nlater = t->ra.nlater;
		memcpy(later, t->ra.later, sizeof(later));
	}
	while (i < t->n) {
		uint32_t m = t->w[i];
		if (m < RC_QP_MARK) {
			if (after_ret && depth == 0) {
				if (!skip)
					return m < e->ndefs ? e->defs[m].vaddr : 0;
				skip--;       /* a resume, no new signal */
				after_ret = false;
				i++;
				continue;
			}
			after_ret = false;
			if (m < e->ndefs && e->defs[m].ok && i != t->head) {
				uint64_t a = e->defs[m].vaddr;
				bool h = is_handler(t->p, a);
				for (unsigned k = 0; k < nlater && !h; k++)
					h = later[k] == a;
				if (h)
					depth++;
			}
			i++;
			continue;
		}
		if (m == RC_QP_RET) {
			int64_t nr = (int64_t)u64at(t->w + i + 1);
			if (nr == SYS_rt_sigreturn) {
				if (depth == 0)
					after_ret = true;
				else
					depth--;
			}
			i += 2 + RC_QP_WORDS(struct rc_qp_ret);
		} else if (m == RC_QP_SYS) {
			struct rc_qp_sys sy;
			memcpy(&sy, t->w + i + 1, sizeof(sy));
			if (sy.nr == SYS_rt_sigaction && sy.extra > 1 && sy.extra != ~0ull && nlater < 8)
				later[nlater++] = sy.extra;
			i += 2 + RC_QP_WORDS(struct rc_qp_sys);
		} else if (m == RC_QP_JOIN) {
			i += 2 + RC_QP_WORDS(struct rc_qp_join);
		} else {
			i += 2 + RC_QP_WORDS(struct rc_qp_birth);
		}
	}
	if (!skip && i == t->n) {   /* (a record cut by the queue's end: again) */
		t->ra.head = t->base + t->head + 1;
		t->ra.at = t->base + i;
		t->ra.depth = depth;
		t->ra.after_ret = after_ret;
		t->ra.nlater = nlater;
		memcpy(t->ra.later, later, sizeof(later));
	}
	return 0;
}

static void count(struct qemu *e, uint64_t n)
{
	e->insns += n;
	if (e->o->max_insns && e->insns >= e->o->max_insns)
		e->stop = true;
}

/* T, on CPU c before its block at X, saw a thread's exit (read its
 * clear-tid word as 0: a pthread_join that found the thread gone on the
 * host and made no futex wait): it may not go on before that exit in
 * virtual time. If the exit is later (or not replayed yet), T blocks here,
 * in user mode, as in a fault that sleeps: "interrupt" (FUP + TIP.PGD),
 * off its CPU until the exit's wake (step), "iret" at X. 2: it left its
 * CPU; 0: it goes on. */
static int join_wait(struct qemu *e, unsigned c, struct qthr *t, uint64_t x)
{
	struct rc_emu_cpu *v = &e->cpu[c];
	const struct qstamp *q = &e->stamps[t->join_stamp - 1];
	size_t stamp = t->join_stamp;

	t->join_stamp = 0;
	if (q->set && (!q->traced || q->vtime <= v->now))
		return 0;
	if (v->on) {
		TRUTH(e, v->now, (int)c, t, "interrupt %#" PRIx64, x);
		if (disable_async(e, c, x))
			return e->fail;
		t->rs = QR_IRET;
	}
	t->join_wait = stamp;
	t->join_t0 = v->now;
	t->s.state = RC_EMU_BLOCKED;
	return cpu_leave(e, c, false) ? e->fail : 2;
}

/* One block of T on CPU c. 1 done, 2 T was preempted before it, 0 must
 * wait for more data. */
static int run_block(struct qemu *e, unsigned c, struct qthr *t, const struct qdef *d)
{
	struct rc_emu_cpu *v = &e->cpu[c];
	int r;
	uint64_t x = d->vaddr;
	/* code mappings reported since: announced before their use, as made
	 * by the last mmap-like syscall (see map_sys_ts), else now */
	if (t->p->unannounced) {
		uint64_t ts = v->now;

		if (t->p->map_sys_ts && t->p->map_sys_ts <= v->now)
			ts = t->p->map_sys_ts - 1;
		t->p->unannounced = false;
		if (maps_at(e, t, c, ts))
			return e->fail;
	}
	if (t->pend) {
		const struct rc_insn *l = &t->pend->last;
		uint64_t fall = l->ip + l->len;
		if (x == l->ip && l->cls == RC_INSN_OTHER)
			return 1;  /* qemu repeats a rep-string instruction */
		bool explained;
		switch (l->cls) {
		case RC_INSN_JCC: explained = x == fall || x == l->target; break;
		case RC_INSN_JMP: case RC_INSN_CALL: explained = x == l->target; break;
		case RC_INSN_OTHER: explained = x == fall; break;
		default: explained = true; break;
		}
		/* A handler's entry after a ret, an indirect call or jump: the
		 * last instruction may have gone there (a handler called
		 * through a pointer), or a fault in the block, or a signal
		 * after it, started the handler: qemu runs a block that faults
		 * as far as the fault and then the handler, and the plugin saw
		 * the block start, so its last instruction looks retired. */
		bool indirect = l->cls == RC_INSN_RET || l->cls == RC_INSN_CALL_IND ||
				l->cls == RC_INSN_JMP_IND;
		if ((!explained || indirect) && is_handler(t->p, x)) {
			/* where the handler's rt_sigreturn resumes (0: it does
			 * not, as when it siglongjmps) */
			uint64_t y = resume_after_signal(e, t, 0);
			if (!y && sigret_wait(e, t))
				return 0;
			/* resumed at the handler's entry: another signal came
			 * with this one, before the handler's first instruction
			 * (qemu delivers what is pending at once); the return
			 * after it is where this one resumes */
			unsigned nested = 0;
			while (y == x && nested < 64) {
				y = resume_after_signal(e, t, ++nested);
				if (!y && sigret_wait(e, t))
					return 0;
			}
			bool went = y == l->target || (l->cls == RC_INSN_JCC && y == fall);
			/* resumed inside the block, where its last instruction
			 * did not go: the instruction there faulted, and none
			 * from it on retired (their time stays counted) */
			bool fault = y && y >= t->pend->vaddr && y <= l->ip && !went;
			uint64_t to;
			if (fault)
				to = y;
			else if (l->cls == RC_INSN_RET)
				to = y ? y : l->ip;   /* the ret went to Y; else it faulted */
			else if (indirect)
				to = 0;       /* a call or jump to the handler */
			else if (l->cls == RC_INSN_JCC)
				to = y ? y : fall;
			else
				to = l->cls == RC_INSN_JMP || l->cls == RC_INSN_CALL ? l->target : fall;
			if (!to) {
				if (retire(e, c, t, x))
					return e->fail;
				goto retired;
			}
			/* a signal: L went its way (unless it or one before it
			 * faulted), then the handler; as the stepper: the
			 * handler starts at the interrupted instruction's time
			 * (FUP + TIP.PGD, then TIP.PGE) */
			if (fault || (l->cls == RC_INSN_RET && !y)) {
				/* the block ran up to TO, which did not retire: nor
				 * did the time of it and those after it pass (the
				 * decoder counts instructions up to the FUP) */
				long k = insn_index(e, t->pend, to);

				if (k >= 0 && (uint64_t)k < t->pend->n) {
					v->now -= (t->pend->n - (uint64_t)k) * e->o->ns_per_insn;
					/* (a mapping announced at the later time) */
					if (maps_at(e, t, c, v->now))
						return e->fail;
				}
				t->pend = NULL;
			} else if (retire(e, c, t, to)) {
				return e->fail;
			}
			if (enc(e, c, rc_ptenc_disable(v->q.enc, v->now, to, RC_PTENC_OFF_ASYNC), "disable"))
				return e->fail;
			TRUTH(e, v->now, (int)c, t, "signal 0 %#" PRIx64 " %#" PRIx64, to, x);
			v->on = true;
			if (enc(e, c, rc_ptenc_enable(v->q.enc, v->now, x), "enable"))
				return e->fail;
			for (; nested; nested--) {
				if (enc(e, c, rc_ptenc_disable(v->q.enc, v->now, x, RC_PTENC_OFF_ASYNC),
					"disable"))
					return e->fail;
				TRUTH(e, v->now, (int)c, t, "signal 0 %#" PRIx64 " %#" PRIx64, x, x);
				if (enc(e, c, rc_ptenc_enable(v->q.enc, v->now, x), "enable"))
					return e->fail;
			}
		} else if (retire(e, c, t, x)) {
			return e->fail;
		}
retired:
		if (t->join_stamp && (r = join_wait(e, c, t, x)) != 0)
			return r;
		/* --inject-ovf N: an overflow every N packets, before X */
		if (e->o->inject_ovf && rc_ptenc_packets(v->q.enc) >= v->ovf_mark) {
			TRUTH(e, v->now, (int)c, t, "ovf %#" PRIx64, x);
			if (enc(e, c, rc_ptenc_ovf(v->q.enc, v->now, x), "ovf"))
				return e->fail;
			v->ovf_mark = rc_ptenc_packets(v->q.enc) + e->o->inject_ovf;
		}
		/* --inject-interrupts: an asynchronous exit before X */
		int ir = rc_emu_irq_at(&e->s, c, x);
		if (ir < 0)
			return sfail(e, ir);
		/* time slice used and another thread ready: preempted before X */
		int due = t->s.slice_used >= e->slice ? rc_emu_preempt_due(&e->s, c) : 0;
		if (due < 0)
			return sfail(e, due);
		if (due) {
			if (disable_async(e, c, x))
				return e->fail;
			t->resume_ip = x;
			make_ready(e, t, v->now);
			return cpu_leave(e, c, true) ? e->fail : 2;
		}
	}
	if (t->join_stamp && (r = join_wait(e, c, t, x)) != 0)
		return r;
	if (!v->on) {
		/* trace (re)starts here */
		switch (t->rs) {
		case QR_START:
			TRUTH(e, v->now, (int)c, t, "start %#" PRIx64, x);
			break;
		case QR_SIGRETURN:
			TRUTH(e, v->now, (int)c, t, "sigreturn %#" PRIx64, x);
			break;
		case QR_SYSRET:
			/* a handler right at the return: the signal came with it */
			if (x != t->sig_from && is_handler(t->p, x))
				TRUTH(e, v->now, (int)c, t, "signal 0 %#" PRIx64 " %#" PRIx64,
				      t->sig_from, x);
			else
				TRUTH(e, v->now, (int)c, t, "sysret %ld %#" PRIx64, t->rs_nr, x);
			if (t->rs_nr == SYS_mmap || t->rs_nr == SYS_mremap || t->rs_nr == SYS_mprotect)
				t->p->map_sys_ts = v->now;
			break;
		case QR_IRET:
			TRUTH(e, v->now, (int)c, t, "iret %#" PRIx64, x);
			break;
		case QR_NONE:
			break;
		}
		t->rs = QR_NONE;
		t->ret_kept = false;
		t->resume_ip = 0;
		t->started = true;
		v->on = true;
		if (enc(e, c, rc_ptenc_enable(v->q.enc, v->now, x), "enable"))
			return e->fail;
	}
	t->pend_copy = *d;
	t->pend = &t->pend_copy;
	t->pend_t = v->now + (uint64_t)(d->n - 1) * e->o->ns_per_insn;
	v->now += (uint64_t)d->n * e->o->ns_per_insn;
	t->s.slice_used += d->n;
	count(e, d->n);
	rc_emu_irq_count(&e->s, c, d->n);
	return 1;
}

static uint64_t measured(struct qemu *e, uint64_t t0, uint64_t t1)
{
	uint64_t d = t1 > t0 ? t1 - t0 : 0;
	return d > e->o->ns_per_insn ? d : e->o->ns_per_insn;
}

/* Whether the host thread slept in the syscall that R ends (entered by T):
 * a voluntary context switch between its entry and return. Unknown counts
 * as slept (its wall time, as before stream version 4). */
static bool slept(const struct qthr *t, const struct rc_qp_ret *r)
{
	return !t->sys_t || r->vcsw != 0;
}

/* A clone that makes a thread, in virtual time: about what the kernel's
 * clone(CLONE_VM|CLONE_THREAD|...) takes natively (a task and its kernel
 * stack; the stack's mmap is a syscall of its own). On the host that
 * clone is mostly qemu's work (a CPU state, a host thread it waits for,
 * on the first one a flush of all translated code): 117-188 us of CPU
 * time measured on pool.c, wall time up to 5 ms on a loaded host. */
#define QEMU_CLONE_THREAD_NS 10000u

/* How long the syscall that R ends lasts when it did not sleep: its kernel
 * work, the host thread's CPU time in it. Not its wall time: on a loaded
 * host that is mostly the time qemu's thread spent waiting for a CPU. A
 * clone of a thread sleeps in qemu itself (it waits for the new host
 * thread to start) and is mostly qemu's work: QEMU_CLONE_THREAD_NS. One
 * that slept on the host (or where the plugin could not tell) lasts its
 * wall time. */
static uint64_t sys_duration(struct qemu *e, const struct qthr *t, const struct rc_qp_ret *r)
{
	if (t->sys_thread && r->ret > 0 && t->sys_t)
		return QEMU_CLONE_THREAD_NS;
	if (!t->sys_t || r->vcsw == RC_QP_VCSW_UNKNOWN || slept(t, r))
		return t->sys_t ? measured(e, t->sys_t, r->t_ns) : e->o->ns_per_insn;
	return r->cpu_ns > e->o->ns_per_insn ? r->cpu_ns : e->o->ns_per_insn;
}

/* Whether a syscall NR that may block keeps its CPU until its return
 * (step): the ones that often do not sleep (a futex wait that finds its
 * word changed, a read or poll of data already there). Sleeps, waits for
 * children and signals nearly always sleep: they leave at the entry, as
 * a held CPU would only stand idle. */
static bool holds(int64_t nr)
{
	return nr != SYS_nanosleep && nr != SYS_clock_nanosleep && nr != SYS_pause &&
	       nr != SYS_rt_sigsuspend && nr != SYS_wait4 && nr != SYS_waitid &&
	       nr != SYS_vfork && nr != SYS_clone && nr != SYS_clone3;
}

/* The next event of thread T (not necessarily on a CPU). 1 consumed, 0
 * waiting (for data or for another thread). */
static int step(struct qemu *e, struct qthr *t);
static int step(struct qemu *e, struct qthr *t)
{
	if (t->head >= t->n)
		return 0;
	if (t->join_wait && t->s.state == RC_EMU_BLOCKED) {
		/* off its CPU until the exit it saw (run_block) */
		const struct qstamp *q = &e->stamps[t->join_wait - 1];
		if (!q->set)
			return 0;
		t->join_wait = 0;
		uint64_t when = t->join_t0;
		if (q->traced && q->vtime > t->join_t0) {
			when = q->vtime;
			if (q->tid != t->tid && !e->o->no_wakers &&
			    wcheck(e, rc_emu_wake(e->w, e->truth, q->cpu, q->pid, q->tid,
						  q->vtime, t->tid, tcomm(e, t), -1)))
				return e->fail;
		}
		make_ready(e, t, when + e->o->ns_per_insn);
		return 1;
	}
	uint32_t m = t->w[t->head];
	unsigned c = t->s.cpu >= 0 ? (unsigned)t->s.cpu : 0;
	struct rc_emu_cpu *v = t->s.state == RC_EMU_ONCPU ? &e->cpu[c] : NULL;
	if (m < RC_QP_MARK) {
		const struct qdef *d = m < e->ndefs && e->defs[m].ok ? &e->defs[m] : NULL;
		if (!d)
			return qfail(e, -EPROTO, "bad data from the qemu plugin (block %u)", m);
		if (!t->traced) {
			const char *sym = e->o->start_sym ? e->o->start_sym : "main";
			if (t->s.state == RC_EMU_NATIVE && (((!*sym || e->from_exec) && e->nthr == 1) ||
						  (t->p->start && d->vaddr == t->p->start))) {
				t->traced = true;
				t->rs = QR_START;
				make_ready(e, t, latest_now(e));
				if (!t->started)
					emit_comm(e, t, 0, t->s.ready_ns);
				return 1;  /* the block runs on a CPU */
			}
			t->head++;
			return 1;
		}
		if (!v)
			return 0;
		int r = run_block(e, c, t, d);
		if (r == 1)
			t->head++;
		return r > 0;
	}
	const uint32_t *rec = t->w + t->head + 1;
	if (m == RC_QP_SYS) {
		struct rc_qp_sys s;
		memcpy(&s, rec, sizeof(s));
		uint32_t stamp = rec[RC_QP_WORDS(s)];
		size_t len = 2 + RC_QP_WORDS(s);
		if (s.nr == SYS_rt_sigaction && s.extra > 1 && s.extra != ~0ull &&
		    t->p->nhandlers < 8 && !is_handler(t->p, s.extra))
			t->p->handlers[t->p->nhandlers++] = s.extra;
		/* a SIGKILL of its own process (raise(SIGKILL)): qemu dies
		 * in the call (no return, no plugin callback); it ends the
		 * process at its entry, as an exit_group (ended, finish). One
		 * of another traced process ends that one then. */
		pid_t kp, kt;
		int k = rc_emu_sigkill_target((long)s.nr, s.a1, s.a2, s.a3, &kp, &kt);
		struct qthr *kill_t = k == 2 ? find_thr(e, kt) : NULL;
		struct qproc *kill_p = kill_t ? kill_t->p : k == 1 ? kp ? find_proc(e, kp) : t->p : NULL;
		bool kills = kill_p == t->p;
		if (kill_p && !kills && t->traced && v && !kill_p->exit_ns) {
			kill_p->exit_ns = v->now;
			kill_p->dying = true;
		}
		if (s.nr == SYS_exit_group || kills)
			t->p->dying = true;
		if (!t->traced || !v) {
			if (t->traced && t->s.state != RC_EMU_ONCPU)
				return 0;
			if (stamp) {
				e->stamps[stamp - 1].vtime = latest_now(e);
				e->stamps[stamp - 1].traced = false;
				e->stamps[stamp - 1].set = true;
				e->stamps[stamp - 1].pid = t->p->pid;
				e->stamps[stamp - 1].tid = t->tid;
			}
			t->head += len;
			if (s.nr == SYS_exit || s.nr == SYS_exit_group || kills)
				t->s.state = RC_EMU_GONE;
			return 1;
		}
		if (!t->pend || t->pend->last.cls != RC_INSN_SYSCALL) {
			/* no syscall instruction last: end the block's trace here */
			uint64_t ip = t->pend ? t->pend->last.ip + t->pend->last.len : 0;
			if ((t->pend && retire(e, c, t, ip)) || disable_async(e, c, ip))
				return e->fail;
		} else {
			uint64_t ip = t->pend->last.ip, fall = ip + t->pend->last.len;
			TRUTH(e, t->pend_t, (int)c, t, "syscall %" PRId64 " %#" PRIx64, s.nr, ip);
			if (retire(e, c, t, fall))
				return e->fail;
			t->sig_from = fall;
		}
		v->on = false;
		if (stamp) {
			e->stamps[stamp - 1].vtime = v->now;
			e->stamps[stamp - 1].traced = true;
			e->stamps[stamp - 1].set = true;
			e->stamps[stamp - 1].pid = t->p->pid;
			e->stamps[stamp - 1].tid = t->tid;
			e->stamps[stamp - 1].cpu = c;
		}
		if (s.nr == SYS_prctl && s.a1 == PR_SET_NAME && s.name[0]) {
			/* the kernel writes a COMM record for the new name */
			memcpy(t->comm, s.name, sizeof(t->comm) - 1);
			if (emit_comm(e, t, c, v->now))
				return e->fail;
		}
		t->sys_nr = (long)s.nr;
		t->sys_t = s.t_ns;
		t->sys_thread = (s.nr == SYS_clone && (s.a1 & CLONE_THREAD)) ||
				(s.nr == SYS_clone3 && (s.extra & CLONE_THREAD));
		if (!e->o->follow_fork && !t->sys_thread &&
		    (s.nr == SYS_clone || s.nr == SYS_clone3 || s.nr == SYS_fork || s.nr == SYS_vfork))
			e->st->forks_untraced++;
		t->v0 = v->now;
		t->head += len;
		if (s.nr == SYS_exit || s.nr == SYS_exit_group || s.nr == SYS_execve ||
		    s.nr == SYS_execveat || kills) {
			if ((s.nr == SYS_exit_group || kills) && !t->p->exit_ns) {
				t->p->exit_ns = t->v0;
				kill_ready(e, t->p);
			}
			if (cpu_leave(e, c, false))
				return e->fail;
			if (s.nr == SYS_execve || s.nr == SYS_execveat)
				t->s.state = RC_EMU_BLOCKED;  /* returns only if it failed */
			else
				thr_exit(e, t, t->v0);
			return 1;
		}
		if (rc_emu_yields((long)s.nr)) {
			t->s.state = RC_EMU_BLOCKED;
			return cpu_leave(e, c, true) ? e->fail : 1;
		}
		/* one that may block keeps its CPU (its clock stands still) until
		 * its return says whether it slept: only then does it leave, at
		 * its entry's time (the RET below) */
		if (rc_emu_may_block((long)s.nr, s.a1, s.a2, s.extra)) {
			if (!holds(s.nr)) {
				t->s.state = RC_EMU_BLOCKED;
				return cpu_leave(e, c, false) ? e->fail : 1;
			}
			t->held = true;
		}
		return 1;  /* stays on its CPU until the return */
	}
	if (m == RC_QP_RET) {
		struct rc_qp_ret r;
		memcpy(&r, rec, sizeof(r));
		uint32_t stamp = rec[RC_QP_WORDS(r)];
		size_t len = 2 + RC_QP_WORDS(r);
		if (!t->traced) {
			t->head += len;
			return 1;
		}
		/* (a forked child's first record is the return of the fork it
		 * did not enter: it goes on at its birth, one instruction
		 * later; measured from no entry it came back a whole host
		 * clock after it, twice the time of the recording) */
		uint64_t d = sys_duration(e, t, &r);
		/* the traced action that ended this wait (parse_chunk) */
		bool waits = stamp != 0;
		if (t->held) {
			/* a syscall that may block, its thread still on its CPU
			 * (clock at the entry): it sleeps, leaving the CPU from
			 * its entry, when a traced thread ended its wait later
			 * in virtual time, or when one did not get there yet
			 * (the wait holds no CPU then: the waker may need it),
			 * or when no traced thread's earlier wake made its wait
			 * none and it slept on the host. Else it did not sleep:
			 * it takes its kernel work on its CPU, as one that
			 * cannot block does. */
			const struct qstamp *q = waits ? &e->stamps[stamp - 1] : NULL;
			bool woken_before = q && q->set && q->traced && q->vtime <= t->v0;
			if ((q && (!q->set || (q->traced && q->vtime > t->v0))) ||
			    (!woken_before && slept(t, &r))) {
				t->held = false;
				t->s.state = RC_EMU_BLOCKED;
				return cpu_leave(e, c, false) ? e->fail : 1;  /* then this RET */
			}
			t->held = false;
			waits = false;
			if (woken_before && slept(t, &r))
				d = r.cpu_ns > e->o->ns_per_insn ? r.cpu_ns : e->o->ns_per_insn;
		}
		if (waits) {
			const struct qstamp *q = &e->stamps[stamp - 1];
			if (!q->set)
				return 0;  /* the waker has not got there yet */
			if (q->traced) {
				d = q->vtime > t->v0 ? q->vtime - t->v0 + e->o->ns_per_insn
						     : e->o->ns_per_insn;
				/* a traced thread ended this wait: its wake record.
				 * Not when the waker's clock was behind the wait's
				 * start: in virtual time the wake came first, so it
				 * ended no sleep (the wait took one instruction),
				 * and a reader must never see a wake before the
				 * switch-out of the sleep it ends. */
				if (q->tid != t->tid && !e->o->no_wakers && q->vtime > t->v0 &&
				    wcheck(e, rc_emu_wake(e->w, e->truth, q->cpu, q->pid, q->tid,
							  q->vtime, t->tid, tcomm(e, t), -1)))
					return e->fail;
			}
		}
		if (r.ret > 0 && (t->sys_thread || (e->o->follow_fork && (r.nr == SYS_clone ||
		    r.nr == SYS_clone3 || r.nr == SYS_fork || r.nr == SYS_vfork)))) {
			/* the new thread is ready from the clone on, whenever qemu
			 * reports its first words: wait for them, so that the
			 * schedule does not depend on when they come */
			struct qthr *nt = find_thr(e, (pid_t)r.ret);
			if (!nt && !e->eof)
				return 0;
			if (nt && nt->head < nt->n && nt->w[nt->head] == RC_QP_BIRTH && step(e, nt) <= 0)
				return 0;
		}
		t->rs = r.nr == SYS_rt_sigreturn ? QR_SIGRETURN : QR_SYSRET;
		t->rs_nr = (long)r.nr;
		t->head += len;
		if (t->s.state == RC_EMU_ONCPU) {
			v->now += d;
			t->ret_kept = true;
			t->ret_at = v->now;
			return 1;
		}
		make_ready(e, t, t->v0 + d);
		return 1;
	}
	if (m == RC_QP_JOIN) {
		uint32_t stamp = rec[RC_QP_WORDS(struct rc_qp_join)];
		if (t->traced && stamp && e->stamps[stamp - 1].tid != t->tid)
			t->join_stamp = stamp;  /* (tid: 0 until set) */
		t->head += 2 + RC_QP_WORDS(struct rc_qp_join);
		return 1;
	}
	/* BIRTH */
	struct rc_qp_birth b;
	memcpy(&b, rec, sizeof(b));
	uint32_t stamp = rec[RC_QP_WORDS(b)];
	const struct qstamp *q = stamp ? &e->stamps[stamp - 1] : NULL;
	if (q && !q->set)
		return 0;
	uint64_t now = q ? q->vtime : latest_now(e);
	t->head += 2 + RC_QP_WORDS(b);
	struct dc_sample_id s = rc_emu_sid(0, false, t->p->pid, t->tid, now);
	if (wcheck(e, rc_perf_fork(e->w, (uint32_t)t->p->pid, (uint32_t)b.ppid, (uint32_t)t->tid,
				   (uint32_t)b.ptid, now, &s)))
		return e->fail;
	if (b.fork)
		TRUTH(e, now, -1, t, "fork %d %d", (int)b.ppid, (int)b.ptid);
	else
		TRUTH(e, now, -1, t, "clone %d", (int)b.ptid);
	struct qthr *pt = find_thr(e, (pid_t)b.ptid);  /* fork and clone inherit the name */
	if (pt && pt != t)
		memcpy(t->comm, pt->comm, sizeof(t->comm));
	TRUTH(e, now, -1, t, "comm %s", tcomm(e, t));
	if (q && q->traced) {
		t->traced = true;
		t->rs = QR_START;
		t->started = true;
		t->v0 = now;
		make_ready(e, t, now);
	}
	return 1;
}

static bool any_ready(const struct qemu *e)
{
	for (size_t i = 0; i < e->nthr; i++)
		if (e->thr[i]->s.state == RC_EMU_READY)
			return true;
	return false;
}

static bool any_idle(const struct qemu *e)
{
	for (unsigned c = 0; c < e->ncpu; c++)
		if (!e->cpu[c].cur)
			return true;
	return false;
}

/* Should T, on a CPU, wait for another CPU to catch up? qemu hands the
 * threads' blocks over as the host runs them, not in virtual-time order:
 * a CPU whose thread has not got as far (its clock more than a switch
 * behind T's) may yet idle before T's clock, and a ready thread that T's
 * CPU took (a preemption, a leave) would have waited while it idled. So
 * while a thread is ready, T steps only while no busy CPU lags it (the
 * stepper's order: the smallest clock first), and with FORCE anyway. */
static bool hold(const struct qemu *e, const struct qthr *t, bool force)
{
	if (force || t->s.state != RC_EMU_ONCPU || t->s.cpu < 0)
		return false;
	uint64_t now = e->cpu[t->s.cpu].now;
	bool lag = false, kin = false;
	for (unsigned c = 0; c < e->ncpu; c++) {
		if (!e->cpu[c].cur || (int)c == t->s.cpu || e->cpu[c].now + RC_EMU_SWITCH_NS >= now)
			continue;
		lag = true;
		/* a thread of its own process behind it (not asleep in a held
		 * syscall): its exit_group, before T's clock, kills T then
		 * (the kernel interrupts a thread on another CPU): T must not
		 * have run on past it (it ran 0.3-2 ms past its process's
		 * exit, in the trace and the truth) */
		const struct qthr *o = thr_of(e->cpu[c].cur);
		kin |= o->p == t->p && !o->held;
	}
	return lag && (kin || any_ready(e));
}

/* A syscall held on its CPU (t->held: its return will say whether it
 * slept) whose host thread has been in it this long has slept: it leaves
 * its CPU from its entry now, as a wait did before it was held. Else its
 * CPU, its clock frozen at the entry, would lag the others for as long as
 * the host blocks, and hold() would stall the replay behind it (a read of
 * a pipe that another process writes 2 s later: 30 % more recording time,
 * the other threads' streams piling up in memory). */
#define QEMU_HELD_MAX_NS 10000000ull

/* Is host thread TID asleep (S or D in /proc/TID/stat), not running or
 * waiting for a host CPU (R)? */
static bool host_asleep(pid_t tid)
{
	char fn[64], buf[256];
	snprintf(fn, sizeof(fn), "/proc/%d/stat", (int)tid);
	FILE *f = fopen(fn, "re");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')');  /* (the comm may hold anything) */
	return p && (p[1] == ' ') && (p[2] == 'S' || p[2] == 'D');
}

static int release_held(struct qemu *e)
{
	uint64_t now = rc_emu_mono_ns();

	for (size_t i = 0; i < e->nthr; i++) {
		struct qthr *t = e->thr[i];

		/* (a host thread kept from a CPU that long on a loaded host
		 * did not sleep: only one asleep in the syscall goes) */
		if (!t->held || t->s.state != RC_EMU_ONCPU || t->s.cpu < 0 || !t->sys_t ||
		    now < t->sys_t + QEMU_HELD_MAX_NS || !host_asleep(t->tid))
			continue;
		t->held = false;
		t->s.state = RC_EMU_BLOCKED;
		if (cpu_leave(e, (unsigned)t->s.cpu, false))
			return e->fail;
	}
	return 0;
}

/* T's process exited (another thread's exit_group) and T's CPU's clock is
 * there: it exits then, as the kernel kills it, and nothing of the rest of
 * its stream (what qemu ran until the host killed it) is in the trace. */
static bool ended(struct qemu *e, struct qthr *t)
{
	if (!t->traced || !t->p->exit_ns || t->s.state != RC_EMU_ONCPU || t->s.cpu < 0 ||
	    t->held || e->cpu[t->s.cpu].now < t->p->exit_ns)
		return false;
	unsigned c = (unsigned)t->s.cpu;
	struct rc_emu_cpu *v = &e->cpu[c];
	if (!v->on && t->ret_kept && t->ret_at == v->now) {
		/* back from a syscall, its return not written yet (the
		 * next block does it): killed in the syscall, at the exit;
		 * nothing on its CPU was written since the entry */
		uint64_t dead = t->p->exit_ns;
		v->now = dead > t->v0 ? dead : t->v0 + 1;
	}
	if (v->on)
		disable_async(e, c, t->pend ? t->pend->last.ip : t->resume_ip);
	thr_exit(e, t, v->now);
	kill_ready(e, t->p);
	cpu_leave(e, c, false);
	return true;
}

/* At the pipe's end: a traced thread on a CPU, not in a syscall, whose
 * stream is done died there, and its process with it, if no exit_group
 * (nor a SIGKILL of its own, step) ended it: qemu died of a fatal signal
 * (a fault, abort(), one from outside; qemu-user 7.2 calls no plugin
 * callback then, its host process just dies) and every thread of the
 * process ends at this CPU's clock, as at an exit_group (ended, finish).
 * hold keeps a thread of the process on another CPU from running more
 * than a switch past it meanwhile: the first thread to run dry is the
 * earliest (it ran on 0.03-2 ms past the death, in the trace and truth,
 * or ended that far before it, before 2026-11-28). */
static struct qthr *dry(struct qemu *e, unsigned c)
{
	struct qthr *t = e->cpu[c].cur ? thr_of(e->cpu[c].cur) : NULL;

	return t && t->traced && t->s.state == RC_EMU_ONCPU && !t->held && t->head >= t->n &&
	       !t->p->exit_ns && !t->in_exec ? t : NULL;
}

static void died(struct qemu *e)
{
	for (unsigned c = 0; c < e->ncpu && e->eof; c++) {
		struct qthr *t = dry(e, c), *o;
		bool first = t != NULL;

		/* (of two of a process, the earlier) */
		for (unsigned k = 0; k < e->ncpu && first; k++)
			if (k != c && (o = dry(e, k)) && o->p == t->p &&
			    (e->cpu[k].now < e->cpu[c].now || (e->cpu[k].now == e->cpu[c].now && k < c)))
				first = false;
		if (first) {
			t->p->exit_ns = e->cpu[c].now;
			t->p->dying = true;
		}
	}
}

/* How long the replay waits, without progress, for a CPU behind (hold)
 * before one round goes on without holding: host time, not rounds. A
 * round ends as soon as any data comes, and the held thread's own host
 * thread keeps sending, so 100 rounds (the old limit) could pass in well
 * under a millisecond while the lagging thread's host thread waited for a
 * host CPU: on a loaded machine a thread ran on 4-6 us past its process's
 * exit_group (ends.sh thread-exit on qemu). */
#define QEMU_HOLD_WAIT_NS 500000000ull

static int run(struct qemu *e)
{
	/* since when no round made progress while a thread was held (0:
	 * progress); give_up: the next round goes on without holding
	 * (e->s.nowait), after QEMU_HOLD_WAIT_NS or at the end of the data */
	uint64_t held_since = 0;
	bool give_up = false;
	while (!e->fail && !e->stop) {
		if (e->o->interrupted && *e->o->interrupted) {
			e->stop = true;
			e->stop_wall = rc_emu_mono_ns();
			break;
		}
		bool progress = false, held = false, force = give_up;
		e->s.nowait = force;
		if (release_held(e) || assign_idle(e))
			break;
		died(e);
		for (size_t i = 0; i < e->nthr && !e->fail && !e->stop; i++) {
			struct qthr *t = e->thr[i];
			if (t->s.state == RC_EMU_GONE || t->s.state == RC_EMU_READY)
				continue;
			for (int k = 0; k < 4096 && !e->stop; k++) {
				/* a thread made ready (a clone's new one) takes an
				 * idle CPU at its ready time before T runs past it */
				if (any_idle(e) && any_ready(e) && assign_idle(e))
					break;
				if (ended(e, t))
					break;
				if (hold(e, t, force)) {
					held = true;
					break;
				}
				int r = step(e, t);
				if (r <= 0)
					break;
				progress = true;
				if (t->s.state != RC_EMU_ONCPU && t->s.state != RC_EMU_NATIVE)
					break;
			}
			/* ready now (its wait ended): an idle CPU takes it at its
			 * ready time before the threads after it run on, or one of
			 * them whose slice ends would take it at its own clock,
			 * maybe far later (a spinning thread's runs ahead of a
			 * thread whose syscalls last their work) */
			if (t->s.state == RC_EMU_READY && assign_idle(e))
				break;
		}
		if (e->fail || e->stop)
			break;
		if (progress) {
			held_since = 0;
			give_up = false;
			read_pipe(e, false);
			continue;
		}
		if (any_ready(e)) {
			if (assign_idle(e))
				break;
			if (any_idle(e) && !any_ready(e))
				continue;
		}
		/* waiting for a CPU behind (held, or a ready thread beside an
		 * idle CPU): for its data, 10 ms at most a round; at the end,
		 * or after QEMU_HOLD_WAIT_NS, the next round goes on without
		 * (never a hang when that thread waits on the host for a held
		 * one) */
		if (held || (any_ready(e) && any_idle(e))) {
			uint64_t now = rc_emu_mono_ns();

			if (!held_since)
				held_since = now;
			if (e->eof || now - held_since >= QEMU_HOLD_WAIT_NS) {
				give_up = true;
				continue;
			}
			struct pollfd pfd = { .fd = e->fd, .events = POLLIN };
			poll(&pfd, 1, 10);
			if (read_pipe(e, false))
				break;
			continue;
		}
		if (e->eof)
			break;
		read_pipe(e, true);
	}
	return e->fail;
}

/* When a recording stopped before the program ended does: the latest CPU
 * clock, or the end of a wait still in progress, measured from its start
 * as its syscall's duration would have been, if later. */
static uint64_t stop_time(struct qemu *e)
{
	/* (after every CPU's clock: a thread still on one runs on, in its
	 * code, until the stop, its PGD 1 ns before it: finish) */
	uint64_t end = latest_now(e) + 1;

	for (size_t i = 0; i < e->nthr && e->stop_wall; i++) {
		const struct qthr *t = e->thr[i];

		if (t->traced && (t->s.state == RC_EMU_BLOCKED || t->held) && t->sys_t &&
		    !t->join_wait) {
			uint64_t v = t->v0 + measured(e, t->sys_t, e->stop_wall);

			end = v > end ? v : end;
		}
	}
	return end;
}

/* End: every thread still on a CPU leaves it (a switch-out) and stops, or
 * exits when its process did; no thread is switched in any more (e->stop:
 * one would be left on its CPU, with no switch-out, to the file's end).
 * Stopped before the program ended, the ones waiting (for an event or a
 * CPU) stop when the recording does, and the file says when that was.
 * KILLED: stopped by SIGINT/SIGTERM/-d, and the program then died of a
 * signal (the one that stopped the recording, or record's SIGTERM): its
 * threads exit where they would have stopped (a switch-out and an EXIT, as
 * the kernel writes for a killed task), so report ends them there too. */
static void finish(struct qemu *e, bool killed)
{
	uint64_t stop = e->eof ? 0 : stop_time(e);

	e->stop = true;
	for (unsigned c = 0; c < e->ncpu && !e->fail; c++) {
		struct rc_emu_cpu *v = &e->cpu[c];
		struct qthr *t = v->cur ? thr_of(v->cur) : NULL;
		/* (its process exited: it runs on, as at a stop, to then) */
		uint64_t end = stop ? stop : t && t->traced ? t->p->exit_ns : 0;
		if (t && t->held && t->p->dying && t->p->exit_ns > v->now) {
			/* asleep in a held syscall when its process exited:
			 * blocked from its entry, killed at the exit */
			t->held = false;
			t->s.state = RC_EMU_BLOCKED;
			cpu_leave(e, c, false);
			thr_exit(e, t, t->p->exit_ns);
			continue;
		}
		if (t) {
			/* stopped early: it ran on, where it was, until the stop
			 * (a CPU's clock counts the instructions the plugin sent,
			 * the stop's time the host's: a spinning thread's clock
			 * fell behind it, and it ended, or exited when killed,
			 * long before the threads that waited) */
			if (end && !t->held && v->now + 1 < end) {
				/* (switched in after a preemption in user mode, its
				 * next block not seen yet: its trace resumes there
				 * now, as the truth has it 500 ns after the switch-in) */
				if (!v->on && t->rs == QR_NONE && t->resume_ip) {
					v->on = true;
					enc(e, c, rc_ptenc_enable(v->q.enc, v->now, t->resume_ip), "enable");
				}
				if (v->on)
					enc(e, c, rc_ptenc_stamp(v->q.enc, v->now, t->pend ?
						t->pend->last.ip : t->resume_ip, end - 1), "stamp");
				v->now = end - 1;
			}
			if (v->on) {
				uint64_t ip = t->pend ? t->pend->last.ip : t->resume_ip;
				disable_async(e, c, ip);
			} else if (end && !t->held && v->now < end) {
				v->now = end;
			}
			bool gone = t->p->dying || e->eof;
			/* (a held syscall of a killed thread: it sleeps there
			 * until the kill, at the stop, as a blocked one) */
			if (!t->held && killed && t->p->pid == e->child)
				gone = true;
			if (t->held && !gone) {
				/* in a syscall with no return yet: it sleeps
				 * there (from its entry) until the stop */
				t->held = false;
				t->s.state = RC_EMU_BLOCKED;
				cpu_leave(e, c, false);
				continue;
			}
			/* (the exit before the switch-out, as a stop: the
			 * kernel entry of a thread killed in user mode is the
			 * asynchronous PGD just written; the stepper's thr_gone
			 * writes it so) */
			if (gone)
				thr_exit(e, t, v->now);
			else
				TRUTH(e, v->now, (int)c, t, "stop");
			cpu_leave(e, c, false);
		}
	}
	for (size_t i = 0; i < e->nthr && !e->fail; i++) {
		struct qthr *t = e->thr[i];
		if (t->s.state != RC_EMU_GONE && t->traced && e->eof) {
			/* (waiting when its process exited: killed then) */
			uint64_t now = latest_now(e);
			if (t->p->exit_ns && now > t->p->exit_ns)
				now = t->p->exit_ns > t->v0 ? t->p->exit_ns : t->v0;
			thr_exit(e, t, now);
		} else if (stop && t->traced && (t->s.state == RC_EMU_BLOCKED ||
					      t->s.state == RC_EMU_READY)) {
			if (killed && t->p->pid == e->child)
				thr_exit(e, t, stop);
			else
				TRUTH(e, stop, -1, t, "stop");
		}
	}
	for (unsigned c = 0; c < e->ncpu && !e->fail; c++) {
		rc_ptenc_flush(e->cpu[c].q.enc);
		drain(e, c, true);
	}
	if (stop && !e->fail)
		wcheck(e, rc_emu_stop_at(&e->s, stop));
}

/* ---- start ---------------------------------------------------------------------- */

static int launch(struct qemu *e, const char *qemu, const char *plugin)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return qfail(e, -errno, "pipe: %s", strerror(errno));
	fcntl(pfd[0], F_SETPIPE_SZ, 1 << 20);
	size_t argc = 0;
	while (e->o->argv[argc])
		argc++;
	char **av = calloc(argc + 10, sizeof(*av));
	char parg[PATH_MAX + 32];
	if (!av)
		return qfail(e, -ENOMEM, "out of memory");
	snprintf(parg, sizeof(parg), "%s,fd=%d,proto=%d", plugin, pfd[1], RC_QP_PROTO);
	av[0] = (char *)qemu;
	av[1] = (char *)"-plugin";
	av[2] = parg;
	size_t a = 3;
	av[a++] = (char *)"-0";
	av[a++] = e->argv0;
	av[a++] = e->exe;
	if (e->script[0]) {   /* interp [arg] script args..., as execve makes it */
		if (e->script_arg[0])
			av[a++] = e->script_arg;
		av[a++] = e->script;
	}
	for (size_t i = 1; i < argc; i++)
		av[a++] = e->o->argv[i];
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		free(av);
		return qfail(e, -errno, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fcntl(pfd[1], F_SETFD, 0);
		execv(qemu, av);
		_exit(127);
	}
	free(av);
	close(pfd[1]);
	e->fd = pfd[0];
	e->child = pid;
	return 0;
}

static int setup(struct qemu *e)
{
	const struct rc_emu_opts *o = e->o;
	if (!o->output || o->cpus < 1 || o->ns_per_insn < 1 || !o->argv || !o->argv[0])
		return qfail(e, -EINVAL, "bad emulator options");
	int rx = resolve_exe(o->argv[0], e->exe, sizeof(e->exe), e->script);
	if (rx < 0)
		return qfail(e, rx, "cannot run %s: %s", o->argv[0],
			     rx == -ENOENT ? "no such program" :
			     rx == -EACCES ? "not executable (Permission denied)" : strerror(-rx));
	/* (the kernel names the process after the script, not its interpreter) */
	set_comm(e, e->exe);
	char interp[PATH_MAX];
	int sc = script_interp(e->exe, interp, sizeof(interp), e->script_arg,
			       sizeof(e->script_arg));
	if (sc < 0)
		return qfail(e, sc, "cannot run %s: %s", o->argv[0],
			     sc == -ENOEXEC ? "bad \"#!\" line" : strerror(-sc));
	/* (argv[0]: the name as given, the interpreter as the "#!" line
	 * writes it; qemu would give the path it runs) */
	snprintf(e->argv0, sizeof(e->argv0), "%s", sc == 1 ? interp : o->argv[0]);
	if (sc == 0)
		e->script[0] = 0;
	else if (resolve_exe(interp, e->exe, sizeof(e->exe), NULL) < 0)
		return qfail(e, -ENOENT, "cannot run %s: its interpreter %s is not there", o->argv[0],
			     interp);
	else if (env_name(interp, e->script_arg) && env_resolve(e) < 0)
		return qfail(e, -ENOENT, "cannot run %s: its \"#!\" line's env finds no %s",
			     o->argv[0], e->script_arg);
	e->slice = o->slice_insns ? o->slice_insns : RC_EMU_DEFAULT_SLICE;
	e->vstart = rc_emu_mono_ns();
	e->syms = rc_emu_syms_new();
	if (!e->syms)
		return qfail(e, -ENOMEM, "out of memory");
	/* the default start in a program without main (a stripped one):
	 * from exec, as perf would trace it (known before qemu runs a block,
	 * which it does before it tells the program's mappings) */
	if (!o->start_sym && !rc_emu_has_sym(e->syms, e->exe, "main")) {
		e->from_exec = true;
		rc_emu_note_from_exec(e->st, e->exe);
	}
	if (rc_insn_cs_open(&e->cs) < 0)
		return qfail(e, -EINVAL, "cannot open the capstone x86-64 decoder");
	if (o->truth_path && !(e->truth = fopen(o->truth_path, "we")))
		return qfail(e, -errno, "cannot write %s: %s", o->truth_path, strerror(errno));
	int rc = rc_emu_start(&e->s, &e->sink, &e->ecfg, o, e->vstart, e->truth, e->err, e->errlen);
	e->cpu = e->s.cpu;
	e->ncpu = e->s.ncpu;
	e->w = e->s.w;
	if (rc < 0) {
		e->fail = rc;
		return rc;
	}
	e->s.stop = &e->stop;   /* (stopped: no more switch-ins) */
	e->s.switched_in = switched_in;
	e->s.ctx = e;
	return wcheck(e, rc_emu_header(e->w, &e->ecfg, e->ncpu, o->cmdline, o->cmdline_argc,
					    !o->no_wakers));
}

/* Threads whose execve succeeded (no return came: a failed one returns),
 * traced or not yet: each went on natively, untraced. */
static uint64_t execs_untraced(const struct qemu *e)
{
	uint64_t n = 0;
	for (size_t i = 0; i < e->nthr; i++)
		n += e->thr[i]->in_exec;
	return n;
}

/* Stop the program: SIGTERM, as from perf record; SIGKILL when it was
 * sent one already (it ignores it, and we were interrupted again: a
 * second Ctrl-C kills). Never to a pid reaped already (it may be
 * another process's now). */
static void stop_child(struct qemu *e)
{
	if (!e->child || e->child_reaped)
		return;
	if (!e->termed)
		e->termed_ns = rc_emu_mono_ns();
	e->intr_seen = e->o->interrupted ? *e->o->interrupted : 0;
	kill(e->child, e->termed ? SIGKILL : SIGTERM);
	e->termed = true;
}

/* Interrupted again since the last stop_child: the next signal (a second
 * Ctrl-C kills). */
static void intr_tick(struct qemu *e)
{
	const volatile int *intr = e->o->interrupted;

	if (intr && *intr && *intr != e->intr_seen)
		stop_child(e);
}

/* Waiting for a program sent SIGTERM: a note once when it is slow to go. */
static void term_wait_tick(struct qemu *e)
{
	if (e->termed && !e->term_noted && e->child && !e->child_reaped &&
	    rc_emu_mono_ns() - e->termed_ns >= RC_TERM_NOTE_NS) {
		rc_note_term_wait(e->o->argv ? e->o->argv[0] : NULL, e->child);
		e->term_noted = true;
	}
}

/* Tracing stopped (--max-insns, SIGINT): the program runs on untraced;
 * its reports are read and dropped (a closed pipe would give the guest
 * SIGPIPE), to the pipe's end (every writer gone). */
static void drain_pipe(struct qemu *e)
{
	while (e->fd >= 0 && !e->eof && !e->drained) {
		struct pollfd p = { .fd = e->fd, .events = POLLIN };

		/* (polled: a program slow to go after SIGTERM gets its note,
		 * and a second Ctrl-C its SIGKILL) */
		int n = poll(&p, 1, 100);

		term_wait_tick(e);
		intr_tick(e);
		if (n < 0 && errno != EINTR) {
			e->drained = true;
			break;
		}
		if (n <= 0)
			continue;
		int fl = fcntl(e->fd, F_GETFL);
		fcntl(e->fd, F_SETFL, fl & ~O_NONBLOCK);
		ssize_t k = read(e->fd, e->rbuf, sizeof(e->rbuf));
		if (k == 0 || (k < 0 && errno != EINTR)) {
			e->drained = true;
			break;
		}
	}
}

/* Wait for the program (qemu) once: its status in e->st->exit_status. */
static void reap(struct qemu *e)
{
	int status = 0;

	if (!e->child || e->child_reaped)
		return;
	for (;;) {
		pid_t r = waitpid(e->child, &status, WNOHANG);

		if (r == e->child)
			break;
		if (r < 0 && errno != EINTR)
			return;
		if (r == 0) {
			term_wait_tick(e);
			usleep(10000);
		}
		intr_tick(e);
	}
	e->child_reaped = true;
	e->st->exit_status = status;
}

int rc_qemu_emulate(const struct rc_emu_opts *opts, struct rc_emu_stats *stats, char *err,
		    size_t errlen)
{
	struct qemu *e = calloc(1, sizeof(*e));
	struct rc_emu_stats dummy;
	if (!e) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	e->o = opts;
	e->err = err;
	e->errlen = errlen;
	e->fd = -1;
	e->st = stats ? stats : &dummy;
	memset(e->st, 0, sizeof(*e->st));
	e->st->exit_status = -1;
	err[0] = 0;
	char plugin[PATH_MAX];
	char *qemu = rc_qemu_find();
	uint64_t t0 = rc_emu_mono_ns();
	if (!qemu)
		qfail(e, -ENOENT, "--emulate=qemu needs qemu-x86_64: install qemu-user "
		      "(apt-get install qemu-user), or use --emulate=ptrace");
	else if (find_plugin(plugin, sizeof(plugin)) < 0)
		qfail(e, -ENOENT, "cannot find the qemu plugin %s (set PTFLAME_QEMU_PLUGIN)", PLUGIN_NAME);
	else if (setup(e) == 0 && launch(e, qemu, plugin) == 0)
		run(e);
	/* (before finish, which ends every thread left) */
	e->st->execs_untraced = execs_untraced(e);
	free(qemu);
	/* stopped by SIGINT/SIGTERM/-d: the program gets SIGTERM, as from
	 * perf record, and its end decides how finish ends its threads:
	 * killed (by that signal or the one that stopped us), they exit at
	 * the stop */
	bool killed = false;
	if (!e->fail && e->child && e->stop_wall) {
		stop_child(e);
		drain_pipe(e);
		reap(e);
		killed = e->st->exit_status != -1 && WIFSIGNALED(e->st->exit_status);
	}
	if (!e->fail)
		finish(e, killed);
	if (e->fail && e->child && !e->child_reaped)
		kill(e->child, SIGKILL);
	else if (opts->interrupted && *opts->interrupted)
		stop_child(e);
	drain_pipe(e);
	if (e->fd >= 0)
		close(e->fd);
	e->st->seconds = (double)(rc_emu_mono_ns() - t0) / 1e9;
	e->st->insns = e->insns;
	e->st->aux_bytes = e->sink.bytes;
	int rc = e->fail;
	if (e->w) {
		if (rc == 0)
			rc = rc_perf_finish(e->w, err, errlen);
		else
			rc_perf_abort(e->w);
	}
	if (e->truth && fclose(e->truth) != 0 && rc == 0) {
		rc = -EIO;
		snprintf(err, errlen, "cannot write %s", opts->truth_path);
	}
	reap(e);
	for (size_t i = 0; i < e->nthr; i++) {
		free(e->thr[i]->w);
		free(e->thr[i]->wk.key);
		free(e->thr[i]);
	}
	free(e->thr);
	for (size_t i = 0; i < e->nproc; i++) {
		rc_maps_free(e->proc[i]->maps, e->proc[i]->nmaps);
		free(e->proc[i]);
	}
	free(e->proc);
	free(e->defs);
	free(e->lens);
	free(e->stamps);
	for (size_t i = 0; i < e->npipes; i++)
		free(e->pipes[i].w);
	free(e->pipes);
	rc_emu_sched_free(&e->s);
	rc_emu_syms_free(e->syms);
	if (e->cs)
		cs_close(&e->cs);
	free(e);
	return rc;
}
