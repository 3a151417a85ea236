/* ptflame - record/qemu_plugin.c: the TCG plugin of `ptflame record
 * --emulate=qemu`, loaded by qemu-x86_64 (-plugin FILE,fd=N). It only
 * reports what the guest executes, as the stream of record/qemu_proto.h on
 * pipe N: every translated block (address, instruction count, bytes of its
 * last instruction: x86 TCG ends a block at every control transfer; also
 * guest memory there and the instruction before, for qemu.c's page-crossing
 * rule), every
 * execution of a block, syscall entries and exits, new threads and forked
 * processes, and the mapping that holds each new block's code. record/qemu.c
 * turns it into PT packets, sideband, virtual time and the truth log.
 *
 * Per guest thread (= host thread of qemu-user, vCPU index) a buffer of
 * words is written as one chunk when full and at every syscall entry and
 * exit, so that in the pipe a syscall's entry precedes everything it causes
 * in other threads (a futex wake precedes the waiter's return). */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "decoder/dc_vec.h"
#include "record/qemu_plugin_api.h"
#include "record/qemu_proto.h"
#include "record/wake_keys.h"

QP_EXPORT int qemu_plugin_version = QP_API_VERSION;

#define MAX_VCPUS 4096
#define BUF_WORDS ((RC_QP_CHUNK_MAX - sizeof(struct rc_qp_chunk)) / 4)
_Static_assert(1 + RC_QP_WORDS(struct rc_qp_keys) + 2 * RC_QP_KEYS_PER_REC <= BUF_WORDS,
	       "a KEYS record fits a chunk");

struct tbuf {
	struct rc_qp_chunk h;
	uint32_t w[BUF_WORDS];
	uint32_t n;
	int32_t ptid;     /* the thread that created this vCPU */
	unsigned gen;     /* fork generation of tid */
	int born;
	int in_sys;       /* in a syscall: cpu0, vcsw0 are its start */
	uint64_t cpu0;
	long vcsw0;
	struct rc_qp_keyset wk;  /* a wait's keys (wk_wait_keys) */
	uint64_t sys_a1, sys_a2; /* the syscall's first arguments (its return) */
};

static int out_fd = -1;
static int dead;
static pid_t my_pid;
static unsigned fork_gen;
/* The thread that last entered clone/clone3 (a thread creating a thread):
 * qemu may run the vCPU init callback in the new thread itself, which then
 * cannot tell its creator from its own tid. */
static _Atomic pid_t last_cloner;
static struct tbuf *bufs[MAX_VCPUS];
static _Atomic uint32_t *next_id;  /* shared with forked children */
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { uint64_t start, end; } *known;
static size_t nknown, cknown;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The calling host thread's CPU time and voluntary context switches so
 * far (-1: unknown): how much of a syscall's time was work, and whether it
 * slept (rc_qp_ret). Two cheap syscalls of the host. */
static void thread_usage(bool entry, uint64_t *cpu, long *vcsw)
{
	struct timespec ts;
	struct rusage ru;
	/* the CPU clock read nearest the syscall: the other read's own time
	 * is not the syscall's */
	bool ok = entry ? getrusage(RUSAGE_THREAD, &ru) == 0 &&
			  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0
			: clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0 &&
			  getrusage(RUSAGE_THREAD, &ru) == 0;
	if (!ok) {
		*vcsw = -1;
		return;
	}
	*cpu = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	*vcsw = ru.ru_nvcsw;
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void write_all(const void *p, size_t n)
{
	const char *c = p;
	while (n && !dead) {
		ssize_t k = write(out_fd, c, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			dead = 1;
			return;
		}
		c += k;
		n -= (size_t)k;
	}
}

static void flush(struct tbuf *b)
{
	if (!b->n)
		return;
	b->h.size = b->n * 4;
	write_all(&b->h, sizeof(b->h) + b->h.size);
	b->n = 0;
}

static void put(struct tbuf *b, const void *rec, uint32_t words)
{
	if (b->n + words > BUF_WORDS)
		flush(b);
	memcpy(b->w + b->n, rec, words * 4);
	b->n += words;
}

static void put_rec(struct tbuf *b, uint32_t mark, const void *rec, uint32_t words)
{
	if (b->n + 1 + words > BUF_WORDS)
		flush(b);
	b->w[b->n++] = mark;
	put(b, rec, words);
}

/* The keys of a wait: KEYS records of up to RC_QP_KEYS_PER_REC keys, each
 * whole in one chunk */
static void put_keys(struct tbuf *b, const struct rc_qp_keyset *k)
{
	for (uint32_t i = 0; i < k->n; i += RC_QP_KEYS_PER_REC) {
		struct rc_qp_keys h = { k->n - i < RC_QP_KEYS_PER_REC ? k->n - i : RC_QP_KEYS_PER_REC,
					i == 0 };
		uint32_t words = 1 + RC_QP_WORDS(h) + h.n * 2;
		if (b->n + words > BUF_WORDS)
			flush(b);
		b->w[b->n++] = RC_QP_KEYS;
		put(b, &h, RC_QP_WORDS(h));
		put(b, k->key + i, h.n * 2);
	}
}

/* The buffer of the running thread; a new thread (or the thread of a new
 * process) first says who made it. */
static struct tbuf *self(unsigned vcpu)
{
	struct tbuf *b = vcpu < MAX_VCPUS ? bufs[vcpu] : NULL;
	if (!b)
		return NULL;
	if (b->born && b->gen == fork_gen)
		return b;
	struct rc_qp_birth br = { 0 };
	if (b->born) {        /* the thread of a forked child */
		br.ptid = b->h.tid;
		br.ppid = b->h.pid;
		br.fork = 1;
		b->n = 0;     /* the parent's words, the parent writes them */
		b->in_sys = 0;  /* the parent's fork: not this thread's times */
	} else {
		br.ptid = b->ptid;
		br.ppid = my_pid;
	}
	b->h.pid = my_pid;
	b->h.tid = gettid_();
	if (!b->born && br.ptid == b->h.tid && b->h.tid != my_pid)
		br.ptid = atomic_load(&last_cloner);  /* init ran in this thread */
	b->h.vcpu = vcpu;
	b->gen = fork_gen;
	b->born = 1;
	if (br.ptid && br.ptid != b->h.tid)
		put_rec(b, RC_QP_BIRTH, &br, RC_QP_WORDS(br));
	return b;
}

/* The clear-tid words that threads were given (clone's child_tid,
 * set_tid_address; the kernel, here qemu, zeroes one at the thread's exit
 * and wakes its futex). A 4-byte read of 0 from one is a thread's exit
 * seen: pthread_join of a thread that is gone reads it and waits for no
 * futex, and qemu.c must still not let the reader go on before that exit
 * in virtual time. Insert-only, lock-free to read; when full, further
 * words are not watched. */
#define NCTIDS 4096u
static _Atomic uint64_t ctids[NCTIDS];
static _Atomic unsigned nctids;
/* a thread was created: from then on new blocks report their loads (one
 * thread alone reads no other thread's word; the callbacks cost time) */
static _Atomic int threaded;

static size_t ctid_slot(uint64_t a)
{
	return (size_t)(((a >> 2) * 0x9e3779b97f4a7c15ull) >> 52) & (NCTIDS - 1);
}

static void ctid_add(uint64_t a)
{
	if (!a || (a & 3))
		return;
	size_t i = ctid_slot(a);
	for (unsigned k = 0; k < NCTIDS; k++, i = (i + 1) & (NCTIDS - 1)) {
		uint64_t cur = atomic_load(&ctids[i]);
		if (!cur && atomic_compare_exchange_strong(&ctids[i], &cur, a)) {
			atomic_fetch_add(&nctids, 1);
			return;
		}
		if (cur == a)
			return;
	}
}

static bool ctid_has(uint64_t a)
{
	size_t i = ctid_slot(a);
	for (unsigned k = 0; k < NCTIDS; k++, i = (i + 1) & (NCTIDS - 1)) {
		uint64_t cur = atomic_load_explicit(&ctids[i], memory_order_relaxed);
		if (cur == a)
			return true;
		if (!cur)
			return false;
	}
	return false;
}

/* after every guest load: a clear-tid word read as 0 (see ctids) */
static void on_mem(unsigned vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *ud)
{
	(void)ud;
	if (!atomic_load_explicit(&nctids, memory_order_relaxed) || (vaddr & 3) ||
	    qemu_plugin_mem_size_shift(info) != 2 || qemu_plugin_mem_is_store(info) ||
	    !ctid_has(vaddr))
		return;
	uint32_t v;
	memcpy(&v, (const void *)(uintptr_t)vaddr, sizeof(v));  /* guest_base 0 */
	if (v)
		return;
	struct tbuf *b = self(vcpu);
	if (!b)
		return;
	struct rc_qp_join j = { vaddr };
	put_rec(b, RC_QP_JOIN, &j, RC_QP_WORDS(j));
}

static void on_vcpu_init(qemu_plugin_id_t id, unsigned vcpu)
{
	(void)id;
	if (vcpu >= MAX_VCPUS)
		return;
	if (!bufs[vcpu])
		bufs[vcpu] = calloc(1, sizeof(struct tbuf));
	struct tbuf *b = bufs[vcpu];
	if (!b)
		return;
	b->n = 0;
	b->born = 0;
	b->in_sys = 0;
	b->ptid = gettid_();  /* runs in the creating thread */
}

static void on_tb_exec(unsigned vcpu, void *ud)
{
	struct tbuf *b = self(vcpu);
	if (!b)
		return;
	if (b->n == BUF_WORDS)
		flush(b);
	b->w[b->n++] = (uint32_t)(uintptr_t)ud;
}

/* The host mapping holding host address A, announced in guest addresses
 * (guest = host - delta) as a MAP record in OUT (room for RC_QP_CHUNK_MAX
 * bytes). Returns the words written, 0 if A is in a known range. */
static uint32_t map_of(uint64_t a, uint64_t delta, uint32_t *out)
{
	for (size_t i = 0; i < nknown; i++)
		if (a >= known[i].start && a < known[i].end)
			return 0;
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return 0;
	char line[4096 + 128];
	uint32_t words = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off, ino;
		unsigned maj, min;
		int pos = 0;
		if (sscanf(line, "%llx-%llx %*s %llx %x:%x %llu %n", &s, &e, &off, &maj, &min, &ino,
			   &pos) < 6 || a < s || a >= e)
			continue;
		const char *path = line + pos;
		size_t len = strcspn(path, "\n");
		if (!len) {
			path = "//anon";
			len = 6;
		}
		if (len > 1024)
			len = 1024;
		struct rc_qp_map m = { 0 };
		m.start = s - delta;
		m.end = e - delta;
		m.pgoff = off;
		m.ino = ino;
		m.maj = maj;
		m.min = min;
		m.pathlen = (uint32_t)len;
		out[0] = RC_QP_MAP;
		memcpy(out + 1, &m, sizeof(m));
		char *p = (char *)(out + 1 + RC_QP_WORDS(m));
		memset(p, 0, (len + 3) & ~(size_t)3);
		memcpy(p, path, len);
		words = 1 + RC_QP_WORDS(m) + (uint32_t)((len + 3) / 4);
		if (DC_VEC_PUSH_ROOM(known, nknown, cknown, 32))
			break;
		known[nknown].start = s;
		known[nknown].end = e;
		nknown++;
		break;
	}
	fclose(f);
	return words;
}

/* Up to N bytes of guest memory at ADDR (guest_base is 0: see guest_u64)
 * into OUT; fewer where a page is not readable. process_vm_readv on
 * ourselves stops at a fault instead of taking it; one piece per page, as
 * it does not split a piece. 0 where it is refused (seccomp). */
static uint32_t guest_read(uint64_t addr, uint8_t *out, size_t n)
{
	uint64_t page_end = (addr | 4095) + 1;
	size_t first = page_end - addr < n ? (size_t)(page_end - addr) : n;
	struct iovec l = { out, n };
	struct iovec r[2] = { { (void *)(uintptr_t)addr, first },
			      { (void *)(uintptr_t)page_end, n - first } };
	ssize_t k = process_vm_readv(my_pid, &l, 1, r, first < n ? 2 : 1, 0);
	return k > 0 ? (uint32_t)k : 0;
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	(void)id;
	size_t n = qemu_plugin_tb_n_insns(tb);
	if (!n || dead)
		return;
	struct qemu_plugin_insn *first = qemu_plugin_tb_get_insn(tb, 0);
	struct qemu_plugin_insn *last = qemu_plugin_tb_get_insn(tb, n - 1);
	struct rc_qp_def d = { 0 };
	d.id = atomic_fetch_add(next_id, 1);
	if (d.id >= RC_QP_MARK)
		return;  /* out of ids: nothing more is reported */
	d.ninsns = (uint32_t)n;
	d.vaddr = qemu_plugin_tb_vaddr(tb);
	d.last_ip = qemu_plugin_insn_vaddr(last);
	size_t len = qemu_plugin_insn_size(last);
	d.last_len = (uint32_t)(len > 16 ? 16 : len);
	memcpy(d.last, qemu_plugin_insn_data(last), d.last_len);
	if (n > 1) {
		struct qemu_plugin_insn *prev = qemu_plugin_tb_get_insn(tb, n - 2);
		d.prev_ip = qemu_plugin_insn_vaddr(prev);
		d.prev_len = (uint32_t)qemu_plugin_insn_size(prev);
	}
	d.mem_len = guest_read(d.last_ip, d.mem, sizeof(d.mem));
	uint64_t delta = (uint64_t)(uintptr_t)qemu_plugin_insn_haddr(first) -
			 qemu_plugin_insn_vaddr(first);

	struct { struct rc_qp_chunk h; uint32_t w[BUF_WORDS]; } c;
	uint32_t nw = 0;
	pthread_mutex_lock(&map_lock);
	nw += map_of(d.vaddr + delta, delta, c.w);
	/* a block may cross into the next mapping (paths <= 1 KiB: both fit) */
	nw += map_of(d.last_ip + d.last_len - 1 + delta, delta, c.w + nw);
	pthread_mutex_unlock(&map_lock);
	c.w[nw++] = RC_QP_DEF;
	memcpy(c.w + nw, &d, sizeof(d));
	nw += RC_QP_WORDS(d);
	/* every instruction's length: where a fault inside the block left it
	 * (the handler's rt_sigreturn says), that many instructions retired */
	uint32_t nlens = nw + 1 + (n + 3) / 4 <= BUF_WORDS ? (uint32_t)n : 0;
	uint8_t *lens = (uint8_t *)(c.w + nw + 1);
	c.w[nw++] = nlens;
	for (uint32_t i = 0; i < nlens; i++)
		lens[i] = (uint8_t)qemu_plugin_insn_size(qemu_plugin_tb_get_insn(tb, i));
	memset(lens + nlens, 0, (4 - nlens % 4) % 4);
	nw += (nlens + 3) / 4;
	c.h.size = nw * 4;
	c.h.pid = my_pid;
	c.h.tid = gettid_();
	c.h.vcpu = 0;
	write_all(&c, sizeof(c.h) + c.h.size);
	qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb_exec, QEMU_PLUGIN_CB_NO_REGS,
					     (void *)(uintptr_t)d.id);
	/* (every access, loads picked in on_mem: QEMU 7.2 reports stores to
	 * a callback registered for QEMU_PLUGIN_MEM_R) */
	for (size_t i = 0; i < n && atomic_load_explicit(&threaded, memory_order_relaxed); i++)
		qemu_plugin_register_vcpu_mem_cb(qemu_plugin_tb_get_insn(tb, i), on_mem,
						 QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, NULL);
}

static uint64_t guest_u64(uint64_t addr)
{
	/* guest_base is 0 for x86-64 on x86-64 (checked at translation: the
	 * host address of code equals its guest address) */
	uint64_t v = 0;
	if (addr)
		memcpy(&v, (const void *)(uintptr_t)addr, sizeof(v));
	return v;
}


static void on_syscall(qemu_plugin_id_t id, unsigned vcpu, int64_t num, uint64_t a1,
		       uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
		       uint64_t a7, uint64_t a8)
{
	(void)id; (void)a5; (void)a6; (void)a7; (void)a8;
	struct tbuf *b = self(vcpu);
	if (!b)
		return;
	if (num == SYS_clone || num == SYS_clone3)
		atomic_store(&last_cloner, gettid_());
	if ((num == SYS_clone && (a1 & CLONE_THREAD)) ||
	    (num == SYS_clone3 && (guest_u64(a1) & CLONE_THREAD)))
		atomic_store(&threaded, 1);
	struct rc_qp_sys s = { 0 };
	s.nr = num;
	s.a1 = a1;
	s.a2 = a2;
	s.a3 = a3;
	if (num == SYS_rt_sigaction)
		s.extra = a2 ? guest_u64(a2) : ~0ull;
	else if (num == SYS_clone3)
		s.extra = guest_u64(a1);
	if (num == SYS_clone && (a1 & CLONE_CHILD_CLEARTID))
		s.ctid = a4;
	else if (num == SYS_clone3 && (s.extra & CLONE_CHILD_CLEARTID))
		s.ctid = guest_u64(a1 + 16);  /* struct clone_args: child_tid */
	else if (num == SYS_set_tid_address)
		ctid_add(a1);
	else if (num == SYS_read || num == SYS_readv || num == SYS_recvfrom || num == SYS_recvmsg)
		s.extra = wk_fd_key(0, a1, WK_READ);
	else if (num == SYS_write || num == SYS_writev || num == SYS_sendto ||
		 num == SYS_sendmsg || num == SYS_close || num == SYS_shutdown)
		s.extra = wk_fd_key(0, a1, WK_WRITE);  /* (a close: before it makes it go) */
	else if (num == SYS_connect)
		s.extra = wk_fd_key(0, a1, WK_CONN);
	else if (num == SYS_tgkill || num == SYS_rt_tgsigqueueinfo)
		s.extra = (int64_t)a2 > 0 ? RC_QP_KEY_SIG | RC_QP_KEY_ID(a2) : 0;
	else if (num == SYS_tkill)
		s.extra = (int64_t)a1 > 0 ? RC_QP_KEY_SIG | RC_QP_KEY_ID(a1) : 0;
	else if (num == SYS_kill || num == SYS_rt_sigqueueinfo)
		s.extra = (int)a1 > 0 ? RC_QP_KEY_SIGP | RC_QP_KEY_ID(a1) : 0;
	else if (num == SYS_poll || num == SYS_ppoll || num == SYS_select || num == SYS_pselect6 ||
		 num == SYS_epoll_wait || num == SYS_epoll_pwait || num == SYS_epoll_pwait2) {
		if (wk_wait_keys(0, num, a1, a2, &b->wk))
			put_keys(b, &b->wk);
	}
	else if (num == SYS_prctl && a1 == PR_SET_NAME) {
		/* a thread's new name (pthread_setname_np on itself): read
		 * with process_vm_readv, which fails on a bad pointer where a
		 * plain read would crash the guest */
		struct iovec l = { s.name, sizeof(s.name) - 1 }, r = { (void *)(uintptr_t)a2, l.iov_len };
		if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != (ssize_t)l.iov_len)
			memset(s.name, 0, sizeof(s.name));
	}
	if (num == SYS_close || num == SYS_dup2 || num == SYS_dup3 || num == SYS_close_range)
		wk_evfd_forget(num, a1, a2);  /* (a close's key is taken above) */
	b->sys_a1 = a1;
	b->sys_a2 = a2;
	ctid_add(s.ctid);
	s.t_ns = now_ns();
	put_rec(b, RC_QP_SYS, &s, RC_QP_WORDS(s));
	flush(b);
	/* after the flush: writing the stream is not the syscall's work */
	thread_usage(true, &b->cpu0, &b->vcsw0);
	b->in_sys = b->vcsw0 >= 0;
}

static void on_syscall_ret(qemu_plugin_id_t id, unsigned vcpu, int64_t num, int64_t ret)
{
	(void)id;
	struct tbuf *b = self(vcpu);
	if (!b)
		return;
	/* first: what follows (the accept's peer) is not the syscall's work */
	uint64_t cpu1 = 0;
	long vcsw1 = -1;
	if (b->in_sys)
		thread_usage(false, &cpu1, &vcsw1);
	struct rc_qp_ret r = { num, ret, now_ns(), 0, 0, RC_QP_VCSW_UNKNOWN, 0 };
	if (b->in_sys && vcsw1 >= b->vcsw0 && cpu1 >= b->cpu0) {
		r.cpu_ns = cpu1 - b->cpu0;
		r.vcsw = vcsw1 - b->vcsw0 < RC_QP_VCSW_UNKNOWN ? (uint32_t)(vcsw1 - b->vcsw0)
							  : RC_QP_VCSW_UNKNOWN - 1;
	}
	b->in_sys = 0;
	if (num == SYS_close || num == SYS_dup2 || num == SYS_dup3 || num == SYS_close_range)
		wk_evfd_forget(num, b->sys_a1, b->sys_a2);  /* (again: see wake_keys.h) */
	if ((num == SYS_accept || num == SYS_accept4) && ret >= 0) {
		/* the new socket's peer: the socket whose connect it took */
		char l[64];
		wk_fd_link(0, (uint64_t)ret, l, sizeof(l));
		uint64_t ino = rc_qp_link_ino(l, "socket:["), peer = ino ? wk_sock_peer(ino) : 0;
		r.extra = peer ? RC_QP_KEY_CONN | RC_QP_KEY_ID(peer) : 0;
	}
	put_rec(b, RC_QP_RET, &r, RC_QP_WORDS(r));
	flush(b);
	if (num == SYS_mmap || num == SYS_munmap || num == SYS_mprotect || num == SYS_mremap) {
		pthread_mutex_lock(&map_lock);
		nknown = 0;  /* mappings changed: look again at the next new block */
		pthread_mutex_unlock(&map_lock);
	}
}

/* exit_group: QEMU has stopped the other vCPUs; write what they hold. */
static void on_atexit(qemu_plugin_id_t id, void *ud)
{
	(void)id; (void)ud;
	for (unsigned v = 0; v < MAX_VCPUS; v++)
		if (bufs[v] && bufs[v]->born && bufs[v]->gen == fork_gen)
			flush(bufs[v]);
}

static void after_fork(void)
{
	my_pid = getpid();
	fork_gen++;
	nknown = 0;
	pthread_mutex_init(&map_lock, NULL);
}

QP_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
				  char **argv)
{
	char msg[256];
	if (info->version.cur < QP_API_VERSION || info->version.min > QP_API_VERSION) {
		snprintf(msg, sizeof(msg), "ptflame plugin: QEMU offers plugin API versions %d..%d, "
			 "this plugin speaks %d: use a matching qemu-user or rebuild ptflame\n",
			 info->version.min, info->version.cur, QP_API_VERSION);
		fputs(msg, stderr);
		return -1;
	}
	if (info->system_emulation || strcmp(info->target_name, "x86_64")) {
		fputs("ptflame plugin: only qemu-x86_64 (user mode) is supported\n", stderr);
		return -1;
	}
	int proto = 0;
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "fd=", 3))
			out_fd = atoi(argv[i] + 3);
		else if (!strncmp(argv[i], "proto=", 6))
			proto = atoi(argv[i] + 6);
	}
	if (out_fd < 0 || fcntl(out_fd, F_SETFD, FD_CLOEXEC) < 0) {
		fputs("ptflame plugin: wants fd=N, an open pipe to ptflame\n", stderr);
		return -1;
	}
	if (proto != RC_QP_PROTO) {
		snprintf(msg, sizeof(msg), "ptflame plugin: ptflame speaks stream version %d, this "
			 "plugin %d: use the plugin built with this ptflame (PTFLAME_QEMU_PLUGIN)\n",
			 proto, RC_QP_PROTO);
		fputs(msg, stderr);
		return -1;
	}
	next_id = mmap(NULL, sizeof(*next_id), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);
	if (next_id == MAP_FAILED)
		return -1;
	my_pid = getpid();
	pthread_atfork(NULL, NULL, after_fork);
	qemu_plugin_register_vcpu_init_cb(id, on_vcpu_init);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
	qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
	qemu_plugin_register_vcpu_syscall_ret_cb(id, on_syscall_ret);
	qemu_plugin_register_atexit_cb(id, on_atexit, NULL);
	return 0;
}
