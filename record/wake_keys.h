/* ptflame - record/wake_keys.h: the wake keys (record/qemu_proto.h,
 * RC_QP_KEY_*) of a process's fds, from /proc/PID/fd and fdinfo, socket
 * diagnostics and /proc/net/tcp: which pipe, socket queue or eventfd a
 * read, write, close or connect is of, and the fds a poll, select or
 * epoll_wait watches. Used by the qemu plugin (PID 0: itself, the guest)
 * and the ptrace stepper (PID: the tracee). Plain C, static functions. */
#ifndef PTFLAME_RECORD_WAKE_KEYS_H
#define PTFLAME_RECORD_WAKE_KEYS_H

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "record/qemu_proto.h"

/* /proc/PID/WHAT/FD, PID 0: self */
static inline void wk_proc_path(char *fn, size_t n, pid_t pid, const char *what, uint64_t fd)
{
	if (pid)
		snprintf(fn, n, "/proc/%d/%s/%d", (int)pid, what, (int)fd);
	else
		snprintf(fn, n, "/proc/self/%s/%d", what, (int)fd);
}

/* The target of the link /proc/PID/fd/FD (PID 0: self; qemu-user passes
 * guest fds through), empty if none. */
static inline void wk_fd_link(pid_t pid, uint64_t fd, char *l, size_t n)
{
	char fn[64];
	l[0] = 0;
	if (fd > 1u << 30)
		return;
	wk_proc_path(fn, sizeof(fn), pid, "fd", fd);
	ssize_t k = readlink(fn, l, n - 1);
	l[k > 0 ? k : 0] = 0;
}

/* An eventfd's eventfd-id from its fdinfo (0: none, an older kernel),
 * + 1. Cached per fd (an eventfd is mostly written and read many times),
 * as is the read key of every fd a wait watches (wk_rkeys: a poll or
 * epoll_wait of thousands of fds would read as many links each time; 1:
 * no key). Both only for PID 0 (ourselves: the plugin sees every syscall
 * of the guest): a close, dup2/dup3 onto the fd or close_range forgets
 * (wk_evfd_forget, at the entry and again at the return: a wait between
 * them may have cached the fd again). What an fd number reads as (a
 * pipe's, a socket's own inode, an eventfd's id) changes only so. */
#define WK_NEVFDS 1024u
static _Atomic uint64_t wk_evfds[WK_NEVFDS];
#define WK_NRKEYS 65536u
static _Atomic uint64_t wk_rkeys[WK_NRKEYS];

static inline void wk_evfd_forget(int64_t num, uint64_t a1, uint64_t a2)
{
	if (num == SYS_close && a1 < WK_NRKEYS) {
		if (a1 < WK_NEVFDS)
			atomic_store(&wk_evfds[a1], 0);
		atomic_store(&wk_rkeys[a1], 0);
	} else if ((num == SYS_dup2 || num == SYS_dup3) && a2 < WK_NRKEYS) {
		if (a2 < WK_NEVFDS)
			atomic_store(&wk_evfds[a2], 0);
		atomic_store(&wk_rkeys[a2], 0);
	} else if (num == SYS_close_range) {
		for (unsigned i = 0; i < WK_NEVFDS; i++)
			atomic_store(&wk_evfds[i], 0);
		for (uint64_t i = a1; i <= a2 && i < WK_NRKEYS; i++)
			atomic_store(&wk_rkeys[i], 0);
	}
}

static inline uint64_t wk_evfd_id(pid_t pid, uint64_t fd)
{
	uint64_t id = !pid && fd < WK_NEVFDS ? atomic_load(&wk_evfds[fd]) : 0;
	if (id)
		return id;
	char fn[64], buf[512];
	wk_proc_path(fn, sizeof(fn), pid, "fdinfo", fd);
	int f = open(fn, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return 0;
	ssize_t k = read(f, buf, sizeof(buf) - 1);
	close(f);
	buf[k > 0 ? k : 0] = 0;
	const char *p = strstr(buf, "eventfd-id:");
	id = p ? strtoull(p + 11, NULL, 10) + 1 : 0;
	if (id && !pid && fd < WK_NEVFDS)  /* (another's fds: not cached) */
		atomic_store(&wk_evfds[fd], id);
	return id;
}

/* The peer of socket inode INO: a unix socket's from NETLINK_SOCK_DIAG
 * (UNIX_DIAG_PEER), a TCP socket's from /proc/net/tcp{,6} (the socket
 * whose local address is its remote one); 0 unknown. Cached, none too
 * (a UDP socket's sends would ask every time): a connected socket keeps
 * its peer, and a connect forgets what was known (wk_peer_forget). */
#define WK_NPEERS 1024u
static struct { uint64_t ino, peer; } wk_peers[WK_NPEERS];
static unsigned wk_npeers;
static pthread_mutex_t wk_peer_lock = PTHREAD_MUTEX_INITIALIZER;

static inline uint64_t wk_unix_peer(uint64_t ino)
{
	int s = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (s < 0)
		return 0;
	struct {
		struct nlmsghdr nh;
		struct unix_diag_req r;
	} req = { .nh = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			  .nlmsg_flags = NLM_F_REQUEST },
		  .r = { .sdiag_family = AF_UNIX, .udiag_ino = (uint32_t)ino,
			 .udiag_show = UDIAG_SHOW_PEER, .udiag_cookie = { ~0u, ~0u } } };
	uint64_t peer = 0;
	union { char b[4096]; struct nlmsghdr a; } buf;
	if (send(s, &req, sizeof(req), 0) == (ssize_t)sizeof(req)) {
		ssize_t n = recv(s, buf.b, sizeof(buf.b), 0);
		struct nlmsghdr *h = &buf.a;
		if (n > 0 && NLMSG_OK(h, (size_t)n) && h->nlmsg_type == SOCK_DIAG_BY_FAMILY) {
			struct unix_diag_msg *m = NLMSG_DATA(h);
			int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*m));
			for (struct rtattr *a = (struct rtattr *)(m + 1); RTA_OK(a, len);
			     a = RTA_NEXT(a, len))
				if (a->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(a) >= 4)
					peer = *(uint32_t *)RTA_DATA(a);
		}
	}
	close(s);
	return peer;
}

/* /proc/net/tcp{,6}: "sl local rem st ... uid timeout inode" */
static inline uint64_t wk_tcp_peer(uint64_t ino)
{
	static const char *const files[] = { "/proc/self/net/tcp", "/proc/self/net/tcp6" };
	char mine[2][80] = { "", "" };  /* local, remote */
	for (int pass = 0; pass < 2; pass++)
		for (int f = 0; f < 2; f++) {
			FILE *fp = fopen(files[f], "re");
			if (!fp)
				continue;
			char line[512], loc[80], rem[80];
			unsigned long long in;
			uint64_t found = 0;
			while (fgets(line, sizeof(line), fp)) {
				if (sscanf(line, " %*s %79s %79s %*s %*s %*s %*s %*s %*s %llu", loc, rem,
					   &in) != 3)
					continue;
				if (!pass && in == ino) {
					strcpy(mine[0], loc);
					strcpy(mine[1], rem);
					break;
				}
				if (pass && in && in != ino && !strcmp(loc, mine[1]) &&
				    !strcmp(rem, mine[0])) {
					found = in;
					break;
				}
			}
			fclose(fp);
			if (pass && found)
				return found;
			if (!pass && mine[0][0])
				break;
		}
	return 0;
}

static inline uint64_t wk_sock_peer(uint64_t ino)
{
	pthread_mutex_lock(&wk_peer_lock);
	for (unsigned i = 0; i < wk_npeers; i++)
		if (wk_peers[i].ino == ino) {
			uint64_t p = wk_peers[i].peer;
			pthread_mutex_unlock(&wk_peer_lock);
			return p;
		}
	pthread_mutex_unlock(&wk_peer_lock);
	uint64_t p = wk_unix_peer(ino);
	if (!p)
		p = wk_tcp_peer(ino);
	pthread_mutex_lock(&wk_peer_lock);
	if (wk_npeers < WK_NPEERS) {
		wk_peers[wk_npeers].ino = ino;
		wk_peers[wk_npeers++].peer = p;
	}
	pthread_mutex_unlock(&wk_peer_lock);
	return p;
}

static inline void wk_peer_forget(uint64_t ino)
{
	pthread_mutex_lock(&wk_peer_lock);
	for (unsigned i = 0; i < wk_npeers; i++)
		if (wk_peers[i].ino == ino)
			wk_peers[i--] = wk_peers[--wk_npeers];
	pthread_mutex_unlock(&wk_peer_lock);
}

/* Does socket INO (fd FD of process PID, 0: self) keep message
 * boundaries (SOCK_DGRAM, SOCK_SEQPACKET)? SO_TYPE of the fd: our own
 * directly, a tracee's through pidfd_getfd (the tracer may). Cached per
 * inode (a socket's type never changes); not known: a stream. */
#define WK_NTYPES 16384u  /* direct-mapped by inode: a wait on thousands of
			   * sockets finds theirs */
static struct { uint64_t ino; int dgram; } wk_types[WK_NTYPES];
static pthread_mutex_t wk_type_lock = PTHREAD_MUTEX_INITIALIZER;

static inline int wk_sock_dgram(pid_t pid, uint64_t fd, uint64_t ino)
{
	unsigned slot = (unsigned)(ino % WK_NTYPES);
	pthread_mutex_lock(&wk_type_lock);
	if (wk_types[slot].ino == ino) {
		int d = wk_types[slot].dgram;
		pthread_mutex_unlock(&wk_type_lock);
		return d;
	}
	pthread_mutex_unlock(&wk_type_lock);
	int f = (int)fd, pfd = -1, type = 0;
	socklen_t len = sizeof(type);
	bool known = false;
	if (pid) {
		/* (pidfd_open takes a process: PID may be a thread's id) */
		char fn[64], line[128];
		snprintf(fn, sizeof(fn), "/proc/%d/status", (int)pid);
		FILE *fp = fopen(fn, "re");
		int tgid = 0;
		while (fp && !tgid && fgets(line, sizeof(line), fp))
			if (sscanf(line, "Tgid: %d", &tgid) != 1)
				tgid = 0;
		if (fp)
			fclose(fp);
		pfd = tgid > 0 ? (int)syscall(SYS_pidfd_open, tgid, 0) : -1;
		f = pfd >= 0 ? (int)syscall(SYS_pidfd_getfd, pfd, (int)fd, 0) : -1;
	}
	if (f >= 0 && getsockopt(f, SOL_SOCKET, SO_TYPE, &type, &len) == 0)
		known = true;
	if (pid && f >= 0)
		close(f);
	if (pfd >= 0)
		close(pfd);
	int d = known && (type == SOCK_DGRAM || type == SOCK_SEQPACKET);
	pthread_mutex_lock(&wk_type_lock);
	if (known) {
		wk_types[slot].ino = ino;
		wk_types[slot].dgram = d;
	}
	pthread_mutex_unlock(&wk_type_lock);
	return d;
}

enum { WK_READ, WK_WRITE, WK_CONN };

/* The wake key (qemu_proto.h) of fd FD for a read of it (its own
 * queue), a write, close or shutdown (the queue it fills or ends: a
 * socket's peer's) or a connect (the socket itself); 0: none. */
static inline uint64_t wk_fd_key_(pid_t pid, uint64_t fd, int role)
{
	char l[64];
	wk_fd_link(pid, fd, l, sizeof(l));
	uint64_t k = rc_qp_pipe_key(l), ino;
	if (k)
		return role == WK_CONN ? 0 : k;
	if ((ino = rc_qp_link_ino(l, "socket:["))) {
		if (role == WK_CONN) {
			wk_peer_forget(ino);  /* (it gets one) */
			return RC_QP_KEY_CONN | RC_QP_KEY_ID(ino);
		}
		/* (a pair's two ends are of one type: the fd's is the peer's) */
		uint64_t dg = wk_sock_dgram(pid, fd, ino) ? RC_QP_KEY_DGRAM : 0;
		if (role == WK_WRITE && !(ino = wk_sock_peer(ino)))
			return 0;
		return RC_QP_KEY_SOCK | dg | RC_QP_KEY_ID(ino);
	}
	if (role != WK_CONN && !strcmp(l, "anon_inode:[eventfd]") && (ino = wk_evfd_id(pid, fd)))
		return RC_QP_KEY_EVFD | RC_QP_KEY_ID(ino);
	return 0;
}

/* The wake key of fd FD for ROLE; a read's cached for ourselves (PID 0,
 * wk_rkeys) */
static inline uint64_t wk_fd_key(pid_t pid, uint64_t fd, int role)
{
	bool cache = !pid && role == WK_READ && fd < WK_NRKEYS;
	uint64_t c = cache ? atomic_load(&wk_rkeys[fd]) : 0;
	if (c)
		return c == 1 ? 0 : c;
	uint64_t k = wk_fd_key_(pid, fd, role);
	if (cache)
		atomic_store(&wk_rkeys[fd], k ? k : 1);
	return k;
}

/* The fds an epoll instance watches: its fdinfo's "tfd:" lines */
static inline uint32_t wk_epoll_keys(pid_t pid, uint64_t epfd, struct rc_qp_keyset *k)
{
	char fn[64], line[256];
	wk_proc_path(fn, sizeof(fn), pid, "fdinfo", epfd);
	FILE *fp = fopen(fn, "re");
	if (!fp)
		return 0;
	int tfd;
	unsigned ev;
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "tfd: %d events: %x", &tfd, &ev) == 2 &&
		    (ev & (EPOLLIN | EPOLLPRI | EPOLLRDHUP)) &&
		    rc_qp_keyset_add(k, wk_fd_key(pid, (uint64_t)tfd, WK_READ)))
			break;
	fclose(fp);
	return k->n;
}

/* The wake keys of the fds a poll, select or epoll_wait of process PID
 * (0: this one) watches, sorted, at most RC_QP_MAXKEYS (16384): the fds
 * past them are not watched for wakes. Each fd not cached costs a
 * readlink of /proc/PID/fd/N (a socket first seen: a getsockopt of its
 * type), and an epoll set its fdinfo, which the kernel prints whole:
 * about 3 us per fd and wait (doc/DESIGN.md section 6). */
static inline uint32_t wk_wait_keys(pid_t pid, int64_t num, uint64_t a1, uint64_t a2,
				    struct rc_qp_keyset *k)
{
	pid_t mem = pid ? pid : getpid();
	k->n = 0;
	k->sorted = 0;
	if (num == SYS_epoll_wait || num == SYS_epoll_pwait || num == SYS_epoll_pwait2) {
		wk_epoll_keys(pid, a1, k);
	} else if (num == SYS_poll || num == SYS_ppoll) {
		struct pollfd pf[256];
		for (uint64_t i = 0; i < a2 && i < RC_QP_MAXKEYS; i += 256) {
			uint64_t m = a2 - i < 256 ? a2 - i : 256;
			struct iovec l = { pf, m * sizeof(*pf) },
				     r = { (void *)(uintptr_t)(a1 + i * sizeof(*pf)), l.iov_len };
			ssize_t got = process_vm_readv(mem, &l, 1, &r, 1, 0);
			if (got <= 0)
				break;
			m = (uint64_t)got / sizeof(*pf);
			for (uint64_t j = 0; j < m; j++)
				/* (a wait for room to write is no reader's) */
				if (pf[j].fd >= 0 && (pf[j].events & (POLLIN | POLLPRI | POLLRDHUP)) &&
				    rc_qp_keyset_add(k, wk_fd_key(pid, (uint64_t)pf[j].fd, WK_READ)))
					goto done;
			if (got != (ssize_t)l.iov_len)
				break;
		}
	} else if ((num == SYS_select || num == SYS_pselect6) && a2 && a1 <= 1024) {
		uint64_t set[16] = { 0 };
		struct iovec l = { set, (a1 + 63) / 64 * 8 }, r = { (void *)(uintptr_t)a2, l.iov_len };
		if (process_vm_readv(mem, &l, 1, &r, 1, 0) != (ssize_t)l.iov_len)
			return 0;
		for (uint64_t fd = 0; fd < a1; fd++)
			if (set[fd / 64] >> (fd % 64) & 1 &&
			    rc_qp_keyset_add(k, wk_fd_key(pid, fd, WK_READ)))
				break;
	}
done:
	rc_qp_keyset_sort(k);
	return k->n;
}

#endif
