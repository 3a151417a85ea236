/* Syscalls that never sleep (tests/e2e/qemu/sys_quiet.sh): getpid, a
 * futex wake with no waiter, a write to /dev/null, an uncontended eventfd
 * write, and a futex wait whose word is not the expected value (EAGAIN at
 * once), each from its own function, ROUNDS times. On the host they take a
 * few microseconds of work each; their wall time is whatever the host's
 * run queue adds. */
#include <fcntl.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ROUNDS 1500

static int word;
static int devnull, efd;

__attribute__((noinline)) static void q_getpid(void)
{
	syscall(SYS_getpid);
}

__attribute__((noinline)) static void q_wake(void)
{
	syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

__attribute__((noinline)) static void q_devnull(void)
{
	if (write(devnull, "x", 1) != 1)
		exit(1);
}

__attribute__((noinline)) static void q_eventfd(void)
{
	uint64_t one = 1;
	if (write(efd, &one, sizeof(one)) != sizeof(one))
		exit(1);
}

__attribute__((noinline)) static void q_eagain(void)
{
	syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, word + 1, NULL, NULL, 0);
}

int main(void)
{
	devnull = open("/dev/null", O_WRONLY);
	efd = eventfd(0, 0);
	if (devnull < 0 || efd < 0)
		return 1;
	for (int i = 0; i < ROUNDS; i++) {
		q_getpid();
		q_wake();
		q_devnull();
		q_eventfd();
		q_eagain();
	}
	uint64_t n = 0;
	if (read(efd, &n, sizeof(n)) != sizeof(n))
		return 1;
	printf("quiet %llu\n", (unsigned long long)n);
	return 0;
}
