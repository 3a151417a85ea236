/* Wake testdata: waits on many fds, woken through a high one, and reads of
 * a datagram socket (record/qemu.c: parse_chunk's wake keys, poll_wake,
 * pipe_read_msg; record/wake_keys.h wk_wait_keys). The thread "fd-waiter"
 * blocks in each wait below in turn; main waits until the kernel says it
 * sleeps there, spins (long in virtual time at a large --ns-per-insn,
 * short on the host) and then does the action that ends it:
 *   1 poll of 64 pipes                 write to the 64th
 *   2 epoll_wait on 64 pipes           write to the 61st
 *   3 select of 64 pipes               write to the 50th
 *   4 recv of 4 bytes, datagram pair   send of 8 bytes (truncated)
 *   5 recv of 4 bytes, datagram pair   send of 8 bytes: a message of its own
 * Each wait must end no earlier than its action, woken by it
 * (tests/e2e/qemu/fd_limits.sh). Prints "fdlim waits 5" when all went as
 * planned. An argument: the spin count (default 100000). */
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/socket.h>

#include "wake_common.h"

#define NP 64

static int spins = 100000;  /* argv[1]: another (the ptrace stepper is slow) */

static int pfd[NP][2], ep, dg[2];
static volatile int step, ok;
static volatile pid_t wtid;

/* the waiter is about to wait (step K), then sleeps in one of the
 * syscalls NR1, NR2 (qemu-user may do a guest's wait with another) */
static void blocked(int k, long nr1, long nr2)
{
	wait_blocked_any(&step, k, &wtid, nr1, nr2);
	spin(spins);
}

/* the pipe among the NP that has data: its index, -1 none */
static int ready_pipe(void)
{
	struct pollfd p[NP];
	for (int i = 0; i < NP; i++)
		p[i] = (struct pollfd){ pfd[i][0], POLLIN, 0 };
	if (poll(p, NP, 0) != 1)
		return -1;
	for (int i = 0; i < NP; i++)
		if (p[i].revents & POLLIN) {
			char b;
			return read(pfd[i][0], &b, 1) == 1 ? i : -1;
		}
	return -1;
}

static void *waiter(void *arg)
{
	(void)arg;
	char b[4];
	prctl(PR_SET_NAME, "fd-waiter");
	wtid = my_tid();
	struct pollfd p[NP];
	for (int i = 0; i < NP; i++)
		p[i] = (struct pollfd){ pfd[i][0], POLLIN, 0 };
	flag_set(&step, 1);
	ok += poll(p, NP, -1) == 1 && ready_pipe() == NP - 1;
	struct epoll_event ev;
	flag_set(&step, 2);
	ok += epoll_wait(ep, &ev, 1, -1) == 1 && ready_pipe() == NP - 4;
	fd_set s;
	FD_ZERO(&s);
	int hi = 0;
	for (int i = 0; i < NP; i++) {
		FD_SET(pfd[i][0], &s);
		hi = pfd[i][0] > hi ? pfd[i][0] : hi;
	}
	flag_set(&step, 3);
	ok += select(hi + 1, &s, NULL, NULL, NULL) == 1 && ready_pipe() == NP - 15;
	flag_set(&step, 4);
	ok += recv(dg[1], b, sizeof(b), 0) == 4 && !memcmp(b, "AAAA", 4);
	flag_set(&step, 5);
	ok += recv(dg[1], b, sizeof(b), 0) == 4 && !memcmp(b, "BBBB", 4);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		spins = atoi(argv[1]);
	ep = epoll_create1(0);
	for (int i = 0; i < NP; i++) {
		if (pipe(pfd[i]))
			return 1;
		struct epoll_event e = { .events = EPOLLIN, .data.u32 = (uint32_t)i };
		epoll_ctl(ep, EPOLL_CTL_ADD, pfd[i][0], &e);
	}
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, dg))
		return 1;
	pthread_t t;
	if (pthread_create(&t, NULL, waiter, NULL))
		return 1;
	blocked(1, SYS_poll, SYS_ppoll);
	write(pfd[NP - 1][1], "p", 1);
	blocked(2, SYS_epoll_wait, SYS_epoll_pwait);
	write(pfd[NP - 4][1], "e", 1);
	blocked(3, SYS_select, SYS_pselect6);
	write(pfd[NP - 15][1], "s", 1);
	blocked(4, SYS_recvfrom, SYS_recvfrom);
	send(dg[0], "AAAAAAAA", 8, 0);
	blocked(5, SYS_recvfrom, SYS_recvfrom);
	send(dg[0], "BBBBBBBB", 8, 0);
	pthread_join(t, NULL);
	printf("fdlim waits %d\n", ok);
	return 0;
}
