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
 * + 1. Cached per fd (an eventfd is mostly written and read many times):
 * a close, dup2/dup3 onto the fd or close_range forgets (wk_evfd_forget). */
#define WK_NEVFDS 1024u
static _Atomic uint64_t wk_evfds[WK_NEVFDS];

static inline void wk_evfd_forget(int64_t num, uint64_t a1, uint64_t a2)
{
	if (num == SYS_close && a1 < WK_NEVFDS)
		atomic_store(&wk_evfds[a1], 0);
	else if ((num == SYS_dup2 || num == SYS_dup3) && a2 < WK_NEVFDS)
		atomic_store(&wk_evfds[a2], 0);
	else if (num == SYS_close_range)
		for (unsigned i = 0; i < WK_NEVFDS; i++)
			atomic_store(&wk_evfds[i], 0);
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

enum { WK_READ, WK_WRITE, WK_CONN };

/* The wake key (qemu_proto.h) of fd FD for a read of it (its own
 * queue), a write, close or shutdown (the queue it fills or ends: a
 * socket's peer's) or a connect (the socket itself); 0: none. */
static inline uint64_t wk_fd_key(pid_t pid, uint64_t fd, int role)
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
		if (role == WK_WRITE && !(ino = wk_sock_peer(ino)))
			return 0;
		return RC_QP_KEY_SOCK | RC_QP_KEY_ID(ino);
	}
	if (role != WK_CONN && !strcmp(l, "anon_inode:[eventfd]") && (ino = wk_evfd_id(pid, fd)))
		return RC_QP_KEY_EVFD | RC_QP_KEY_ID(ino);
	return 0;
}

/* The fds an epoll instance watches: its fdinfo's "tfd:" lines */
static inline uint32_t wk_epoll_keys(pid_t pid, uint64_t epfd, struct rc_qp_keys *k)
{
	char fn[64], line[256];
	wk_proc_path(fn, sizeof(fn), pid, "fdinfo", epfd);
	FILE *fp = fopen(fn, "re");
	if (!fp)
		return 0;
	int tfd;
	unsigned ev;
	while (k->n < RC_QP_NKEYS && fgets(line, sizeof(line), fp))
		if (sscanf(line, "tfd: %d events: %x", &tfd, &ev) == 2 &&
		    (ev & (EPOLLIN | EPOLLPRI | EPOLLRDHUP))) {
			uint64_t key = wk_fd_key(pid, (uint64_t)tfd, WK_READ);
			if (key)
				k->key[k->n++] = key;
		}
	fclose(fp);
	return k->n;
}

/* The wake keys of the fds a poll, select or epoll_wait of process PID
 * (0: this one) watches */
static inline uint32_t wk_wait_keys(pid_t pid, int64_t num, uint64_t a1, uint64_t a2,
				    struct rc_qp_keys *k)
{
	pid_t mem = pid ? pid : getpid();
	memset(k, 0, sizeof(*k));
	if (num == SYS_epoll_wait || num == SYS_epoll_pwait || num == SYS_epoll_pwait2)
		return wk_epoll_keys(pid, a1, k);
	if (num == SYS_poll || num == SYS_ppoll) {
		struct pollfd pf;
		for (uint64_t i = 0; i < a2 && i < 4096 && k->n < RC_QP_NKEYS; i++) {
			struct iovec l = { &pf, sizeof(pf) },
				     r = { (void *)(uintptr_t)(a1 + i * sizeof(pf)), sizeof(pf) };
			if (process_vm_readv(mem, &l, 1, &r, 1, 0) != (ssize_t)sizeof(pf))
				break;
			/* (a wait for room to write is no reader's) */
			uint64_t key = pf.fd >= 0 && (pf.events & (POLLIN | POLLPRI | POLLRDHUP)) ?
				       wk_fd_key(pid, (uint64_t)pf.fd, WK_READ) : 0;
			if (key)
				k->key[k->n++] = key;
		}
		return k->n;
	}
	if ((num == SYS_select || num == SYS_pselect6) && a2 && a1 <= 1024) {
		uint64_t set[16] = { 0 };
		struct iovec l = { set, (a1 + 63) / 64 * 8 }, r = { (void *)(uintptr_t)a2, l.iov_len };
		if (process_vm_readv(mem, &l, 1, &r, 1, 0) != (ssize_t)l.iov_len)
			return 0;
		for (uint64_t fd = 0; fd < a1 && k->n < RC_QP_NKEYS; fd++)
			if (set[fd / 64] >> (fd % 64) & 1) {
				uint64_t key = wk_fd_key(pid, fd, WK_READ);
				if (key)
					k->key[k->n++] = key;
			}
	}
	return k->n;
}

#endif
