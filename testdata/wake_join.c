/* Wake testdata: joins of threads that have already exited on the host.
 * Two "jn-worker" threads spin (a known number of instructions, the
 * second twice as many, so that each exit ends a join of its own; long in
 * virtual time at a large --ns-per-insn); main sleeps until the host says
 * both are gone (tgkill: ESRCH), then joins them: each pthread_join finds
 * the clear-tid word 0 and makes no futex wait. In virtual time main's
 * joins still end no earlier than each worker's exit, which wakes main
 * (tests/e2e/qemu/join.sh). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* about 6 instructions a turn at -O0 (as in wake_common.h) */
static void spin(int n)
{
	for (volatile int i = 0; i < n; i++)
		;
}

static volatile pid_t tids[2];

static void *worker(void *arg)
{
	pthread_setname_np(pthread_self(), "jn-worker");
	tids[(long)arg] = (pid_t)syscall(SYS_gettid);
	spin(200000 * (1 + (int)(long)arg));  /* the second exits later */
	return NULL;
}

static int alive(pid_t tid)
{
	return !tid || syscall(SYS_tgkill, getpid(), tid, 0) == 0 || errno != ESRCH;
}

int main(void)
{
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	struct timespec ms = { 0, 1000000 };
	for (int k = 0; k < 20000 && (alive(tids[0]) || alive(tids[1])); k++)
		nanosleep(&ms, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	puts("joined");
	return 0;
}
