/* Wake testdata: waits that end at a traced thread's action on a socket,
 * an eventfd, a watched fd or a signal (record/qemu.c: parse_chunk's wake
 * keys, qemu_proto.h RC_QP_KEY_*). The thread "fd-waiter" blocks in each
 * wait below in turn; main waits until the kernel says it sleeps there,
 * spins (long in virtual time at a large --ns-per-insn, short on the host)
 * and then does the action that ends it:
 *   1 recv of a unix socketpair        send on its peer
 *   2 read of a socketpair (EOF)       shutdown of its peer
 *   3 read of an eventfd               write to it
 *   4 epoll_wait on that eventfd       write to it
 *   5 poll of a pipe                   write to it
 *   6 select of a socketpair           send on its peer
 *   7 accept of a unix socket          connect to it
 *   8 accept of a loopback TCP socket  connect to it
 *   9 recv of the accepted TCP socket  send on the connected one
 *  10 sigwait (SIGUSR2)                pthread_kill
 *  11 sigsuspend (SIGUSR1, a handler)  pthread_kill
 *  12 read of a pipe (EINTR)           pthread_kill (SIGUSR1, no SA_RESTART)
 * Each wait must end no earlier than its action, woken by it
 * (tests/e2e/qemu/fd_wakes.sh). Prints "fd waits 12" when all went as
 * planned. An argument: the spin count (default 100000). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "wake_common.h"

static int spins = 100000;  /* argv[1]: another (the ptrace stepper is slow) */

static int sp1[2], sp2[2], sp3[2], efd, ep, pfd[2], pfd2[2], ulis, tlis, tport;
static volatile int step, ok;
static volatile pid_t wtid;
static struct sockaddr_un uaddr;

static void on_usr1(int s)
{
	(void)s;
}

/* the waiter is about to wait (step K), then sleeps in one of the
 * syscalls NR1, NR2 (qemu-user may do a guest's wait with another) */
static void blocked(int k, long nr1, long nr2)
{
	wait_blocked_any(&step, k, &wtid, nr1, nr2);
	spin(spins);
}

static void *waiter(void *arg)
{
	(void)arg;
	char b[8];
	uint64_t v;
	int sig;
	prctl(PR_SET_NAME, "fd-waiter");
	wtid = my_tid();
	flag_set(&step, 1);
	ok += recv(sp1[1], b, sizeof(b), 0) == 1;
	flag_set(&step, 2);
	ok += read(sp2[1], b, sizeof(b)) == 0;
	flag_set(&step, 3);
	ok += read(efd, &v, 8) == 8;
	struct epoll_event ev;
	flag_set(&step, 4);
	ok += epoll_wait(ep, &ev, 1, -1) == 1 && read(efd, &v, 8) == 8;
	struct pollfd p = { pfd[0], POLLIN, 0 };
	flag_set(&step, 5);
	ok += poll(&p, 1, -1) == 1 && read(pfd[0], b, 1) == 1;
	fd_set s;
	FD_ZERO(&s);
	FD_SET(sp3[1], &s);
	flag_set(&step, 6);
	ok += select(sp3[1] + 1, &s, NULL, NULL, NULL) == 1 && recv(sp3[1], b, 1, 0) == 1;
	flag_set(&step, 7);
	int c = accept(ulis, NULL, NULL);
	ok += c >= 0;
	flag_set(&step, 8);
	int tc = accept(tlis, NULL, NULL);
	ok += tc >= 0;
	flag_set(&step, 9);
	ok += recv(tc, b, sizeof(b), 0) == 5;
	sigset_t m;
	sigemptyset(&m);
	sigaddset(&m, SIGUSR2);
	flag_set(&step, 10);
	ok += sigwait(&m, &sig) == 0 && sig == SIGUSR2;
	sigemptyset(&m);
	flag_set(&step, 11);
	ok += sigsuspend(&m) == -1;
	sigaddset(&m, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &m, NULL);
	flag_set(&step, 12);
	ok += read(pfd2[0], b, 1) == -1;
	close(c);
	close(tc);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		spins = atoi(argv[1]);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;  /* no SA_RESTART: a read it interrupts fails */
	sigaction(SIGUSR1, &sa, NULL);
	sigset_t m;
	sigemptyset(&m);
	sigaddset(&m, SIGUSR1);
	sigaddset(&m, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &m, NULL);  /* (the waiter inherits it) */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp1) || socketpair(AF_UNIX, SOCK_STREAM, 0, sp2) ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, sp3) || pipe(pfd) || pipe(pfd2))
		return 1;
	efd = eventfd(0, 0);
	ep = epoll_create1(0);
	struct epoll_event e = { .events = EPOLLIN };
	epoll_ctl(ep, EPOLL_CTL_ADD, efd, &e);
	/* an abstract unix address (no file), and a TCP port of loopback */
	uaddr.sun_family = AF_UNIX;
	snprintf(uaddr.sun_path + 1, sizeof(uaddr.sun_path) - 1, "ptflame-wake-fd-%d", (int)getpid());
	socklen_t ul = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
				   strlen(uaddr.sun_path + 1));
	ulis = socket(AF_UNIX, SOCK_STREAM, 0);
	tlis = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in ta = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t tl = sizeof(ta);
	if (bind(ulis, (struct sockaddr *)&uaddr, ul) || listen(ulis, 1) ||
	    bind(tlis, (struct sockaddr *)&ta, tl) || getsockname(tlis, (struct sockaddr *)&ta, &tl) ||
	    listen(tlis, 1))
		return 1;
	tport = ntohs(ta.sin_port);
	int uc = socket(AF_UNIX, SOCK_STREAM, 0), tc = socket(AF_INET, SOCK_STREAM, 0);
	pthread_t t;
	if (pthread_create(&t, NULL, waiter, NULL))
		return 1;
	uint64_t one = 1;
	blocked(1, SYS_recvfrom, SYS_recvfrom);
	send(sp1[0], "x", 1, 0);
	blocked(2, SYS_read, SYS_read);
	shutdown(sp2[0], SHUT_WR);
	blocked(3, SYS_read, SYS_read);
	write(efd, &one, 8);
	blocked(4, SYS_epoll_wait, SYS_epoll_pwait);
	write(efd, &one, 8);
	blocked(5, SYS_poll, SYS_ppoll);
	write(pfd[1], "p", 1);
	blocked(6, SYS_select, SYS_pselect6);
	send(sp3[0], "s", 1, 0);
	blocked(7, SYS_accept, SYS_accept4);
	connect(uc, (struct sockaddr *)&uaddr, ul);
	blocked(8, SYS_accept, SYS_accept4);
	connect(tc, (struct sockaddr *)&ta, sizeof(ta));
	blocked(9, SYS_recvfrom, SYS_recvfrom);
	send(tc, "hello", 5, 0);
	blocked(10, SYS_rt_sigtimedwait, SYS_rt_sigtimedwait);
	pthread_kill(t, SIGUSR2);
	blocked(11, SYS_rt_sigsuspend, SYS_rt_sigsuspend);
	pthread_kill(t, SIGUSR1);
	blocked(12, SYS_read, SYS_read);
	pthread_kill(t, SIGUSR1);
	pthread_join(t, NULL);
	printf("fd waits %d\n", ok);
	return 0;
}
