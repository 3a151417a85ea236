/* ptflame - record/qemu_proto.h: the stream from the qemu-user TCG plugin
 * (record/qemu_plugin.c, loaded into qemu-x86_64) to `ptflame record
 * --emulate=qemu` (record/qemu.c). Internal header of the record room,
 * shared by the two sides only; plain C, no project includes.
 *
 * The plugin writes chunks to a pipe: a struct rc_qp_chunk header then
 * `size` bytes of 32-bit words. A chunk is at most RC_QP_CHUNK_MAX bytes
 * (<= PIPE_BUF), so chunks of concurrent guest threads never interleave.
 * Per guest thread the words are in execution order:
 *   id < RC_QP_MARK       the translated block `id` (see DEF) ran
 *   RC_QP_DEF + struct rc_qp_def + N + lengths   a block was translated
 *                         (ids are unique over all processes of the
 *                         recording); then a word N (ninsns, or 0 where
 *                         they did not fit the chunk) and the length of
 *                         each of its first N instructions, a byte each,
 *                         padded to a word
 *   RC_QP_MAP + struct rc_qp_map + path  the host mapping that holds code
 *                         of a new block (the guest's own address space:
 *                         qemu-x86_64 on x86-64 runs with guest_base 0)
 *   RC_QP_SYS + struct rc_qp_sys         syscall entry (flushed at once)
 *   RC_QP_RET + struct rc_qp_ret         syscall exit (flushed at once)
 *   RC_QP_BIRTH + struct rc_qp_birth     first words of a new thread or of
 *                         a forked process's thread
 *   RC_QP_JOIN + struct rc_qp_join       the block before read 0 from a
 *                         thread's clear-tid word: it saw a thread's exit
 *                         (a pthread_join that found it gone needs no
 *                         futex wait; its exit's SYS came first)
 *   RC_QP_KEYS + struct rc_qp_keys + n keys (two words each)  before
 *                         the SYS of a poll, select or epoll_wait: wake
 *                         keys of the fds it watches; a wait with more than
 *                         RC_QP_KEYS_PER_REC sends several in a row, the
 *                         first with first = 1 (the set starts over)
 * 64-bit fields are stored as two words, low first (memcpy on x86-64). */
#ifndef PTFLAME_RECORD_QEMU_PROTO_H
#define PTFLAME_RECORD_QEMU_PROTO_H

#include <stdint.h>
#include <stdlib.h>

/* The stream's version: ptflame passes it to the plugin (proto=N), which
 * refuses another (a plugin left from an older install). */
#define RC_QP_PROTO 6
#define RC_QP_CHUNK_MAX 4096u
#define RC_QP_MARK 0xffffff00u
#define RC_QP_DEF (RC_QP_MARK + 1)
#define RC_QP_MAP (RC_QP_MARK + 2)
#define RC_QP_SYS (RC_QP_MARK + 3)
#define RC_QP_RET (RC_QP_MARK + 4)
#define RC_QP_BIRTH (RC_QP_MARK + 5)
#define RC_QP_JOIN (RC_QP_MARK + 6)
#define RC_QP_KEYS (RC_QP_MARK + 7)

struct rc_qp_chunk {
	uint32_t size;   /* payload bytes (a multiple of 4) */
	int32_t pid, tid;
	uint32_t vcpu;
};

struct rc_qp_def {
	uint32_t id, ninsns;
	uint64_t vaddr;       /* first instruction */
	uint64_t last_ip;     /* last instruction: the only one that may branch */
	uint32_t last_len;
	uint8_t last[16];     /* its bytes, as qemu read them */
	uint64_t prev_ip;     /* the instruction before it (ninsns > 1) */
	uint32_t prev_len;
	uint32_t mem_len;     /* bytes of guest memory read at last_ip (up to
			       * an unreadable page) */
	uint8_t mem[16];      /* them: the last instruction whole, even where
			       * qemu stopped reading it (see qemu.c, page
			       * crossing) */
};

struct rc_qp_map {
	uint64_t start, end, pgoff, ino;
	uint32_t maj, min, pathlen, pad;  /* then pathlen bytes, padded to 4 */
};

struct rc_qp_sys {
	int64_t nr;
	uint64_t a1, a2, a3;
	uint64_t extra;       /* rt_sigaction: the new handler (~0: none);
			       * clone3: the flags; fd reads, writes,
			       * close, shutdown, connect; signal sends:
			       * the wake key (rc_qp_key_*, 0: none) */
	uint64_t t_ns;        /* CLOCK_MONOTONIC at entry */
	uint64_t ctid;        /* clone, clone3 with CLONE_CHILD_CLEARTID: the
			       * new thread's clear-tid address (the futex
			       * its exit wakes); else 0 */
	char name[16];        /* prctl(PR_SET_NAME): the new name, read at
			       * entry (NUL-padded; empty if unreadable) */
};

struct rc_qp_ret {
	int64_t nr, ret;
	uint64_t t_ns;        /* CLOCK_MONOTONIC at exit */
	uint64_t extra;       /* accept, accept4: RC_QP_KEY_CONN | the inode of
			       * the new socket's peer (the connecting
			       * socket), 0 unknown; else 0 */
	/* The host thread in the syscall, from just after its entry was
	 * reported to its exit: its CPU time (CLOCK_THREAD_CPUTIME_ID) and
	 * its voluntary context switches (getrusage RUSAGE_THREAD ru_nvcsw;
	 * 0: it never slept there, so its wall time beyond cpu_ns is the
	 * host's run queue or qemu's, not the program's). vcsw is
	 * RC_QP_VCSW_UNKNOWN where they were not read (a forked child's
	 * first return, a failed read). */
	uint64_t cpu_ns;
	uint32_t vcsw, pad;
};

/* A KEYS record: n keys follow (at most RC_QP_KEYS_PER_REC, so that a
 * record fits a chunk). A wait sends at most RC_QP_MAXKEYS keys in all
 * (the fds past them: no wake, the wait keeps its measured time); see
 * record/wake_keys.h for what they cost. */
#define RC_QP_KEYS_PER_REC 480u
#define RC_QP_MAXKEYS 16384u
struct rc_qp_keys {
	uint32_t n;
	uint32_t first;       /* 1: the wait's first record */
};
#define RC_QP_VCSW_UNKNOWN 0xffffffffu

struct rc_qp_birth {
	int32_t ptid;         /* the creating thread */
	int32_t ppid;         /* its process */
	uint32_t fork;        /* 1: a new process (fork), 0: a thread */
	uint32_t pad;
};

struct rc_qp_join {
	uint64_t addr;        /* the clear-tid word (clone's child_tid or
			       * set_tid_address) read as 0 */
};

#define RC_QP_WORDS(type) ((uint32_t)((sizeof(type) + 3) / 4))

/* A set of wake keys (a wait's): grown as needed, up to RC_QP_MAXKEYS;
 * sorted (rc_qp_keyset_sort) it is searched by bisection. */
struct rc_qp_keyset {
	uint32_t n, cap;
	uint64_t *key;
	int sorted;
};

/* Add KEY (0: none); -1 when full or out of memory */
static inline int rc_qp_keyset_add(struct rc_qp_keyset *k, uint64_t key)
{
	if (!key)
		return 0;
	if (k->n >= RC_QP_MAXKEYS)
		return -1;
	if (k->n == k->cap) {
		uint32_t c = k->cap ? k->cap * 2 : 8;
		uint64_t *nk = realloc(k->key, c * sizeof(*nk));
		if (!nk)
			return -1;
		k->key = nk;
		k->cap = c;
	}
	k->key[k->n++] = key;
	k->sorted = 0;
	return 0;
}

static inline int rc_qp_key_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Sort, and drop repeats (an fd watched twice, dup'ed fds) */
static inline void rc_qp_keyset_sort(struct rc_qp_keyset *k)
{
	if (k->sorted)
		return;
	uint32_t i = 1;
	while (i < k->n && k->key[i - 1] <= k->key[i])
		i++;
	if (i < k->n)  /* (the plugin's come sorted) */
		qsort(k->key, k->n, sizeof(*k->key), rc_qp_key_cmp);
	uint32_t m = 0;
	for (i = 0; i < k->n; i++)
		if (!m || k->key[m - 1] != k->key[i])
			k->key[m++] = k->key[i];
	k->n = m;
	k->sorted = 1;
}

static inline int rc_qp_keyset_has(const struct rc_qp_keyset *k, uint64_t key)
{
	if (!k->sorted) {
		for (uint32_t i = 0; i < k->n; i++)
			if (k->key[i] == key)
				return 1;
		return 0;
	}
	uint32_t lo = 0, hi = k->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (k->key[mid] == key)
			return 1;
		if (k->key[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Wake keys of kernel objects a wait can wait on, beside futex addresses
 * (user addresses, far below): the kind in the high bits, an identity
 * below 1 << 48.
 *   PIPE | inode   a pipe (both ends have one inode): a read, write, close
 *   SOCK | inode   the receiving socket: a read of a socket has its own
 *                  inode, a write, close or shutdown its peer's (unix
 *                  sockets: NETLINK_SOCK_DIAG UNIX_DIAG_PEER; TCP: the
 *                  /proc/net/tcp{,6} line whose local address is its
 *                  remote one)
 *   SOCK | DGRAM | inode  the same, of a socket that keeps message
 *                  boundaries (SOCK_DGRAM, SOCK_SEQPACKET): a read takes
 *                  one send, whatever its size
 *   EVFD | id      an eventfd: its fdinfo eventfd-id (an open file's; the
 *                  anon inode is one for all)
 *   CONN | inode   a connect of that socket (the peer of what accept got)
 *   SIG | tid      a signal sent to thread tid (tgkill, tkill,
 *                  rt_tgsigqueueinfo)
 *   SIGP | pid     a signal sent to process pid (kill, rt_sigqueueinfo) */
#define RC_QP_KEY_PIPE (UINT64_C(1) << 62)
#define RC_QP_KEY_SOCK (UINT64_C(1) << 61)
#define RC_QP_KEY_EVFD (UINT64_C(1) << 60)
#define RC_QP_KEY_CONN (UINT64_C(1) << 59)
#define RC_QP_KEY_SIG (UINT64_C(1) << 58)
#define RC_QP_KEY_SIGP (UINT64_C(1) << 57)
#define RC_QP_KEY_DGRAM (UINT64_C(1) << 56)
#define RC_QP_KEY_KIND (UINT64_C(0x7f) << 56)
#define RC_QP_KEY_ID(k) ((k) & ((UINT64_C(1) << 48) - 1))

/* The number in a /proc/PID/fd/N link target "PRE[NUMBER]" (0: another) */
static inline uint64_t rc_qp_link_ino(const char *link, const char *pre)
{
	uint64_t ino = 0;
	const char *p = link;
	for (const char *q = pre; *q; q++, p++)
		if (*p != *q)
			return 0;
	if (*p < '0' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9' && ino < (UINT64_C(1) << 44))
		ino = ino * 10 + (uint64_t)(*p++ - '0');
	if (*p != ']' || p[1])
		return 0;
	return ino;
}

/* The wake key of a pipe, from the target of a /proc/PID/fd/N link
 * ("pipe:[INODE]"): RC_QP_KEY_PIPE | INODE; 0 for anything else. Both
 * emulators use it (the ptrace stepper too). */
static inline uint64_t rc_qp_pipe_key(const char *link)
{
	uint64_t ino = rc_qp_link_ino(link, "pipe:[");
	return ino ? RC_QP_KEY_PIPE | ino : 0;
}

#endif
