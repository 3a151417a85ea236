/* attach_blocked [SECONDS]: every thread blocked in a syscall for the whole
 * run: main in pthread_join, "reader" in a read of a pipe nobody writes,
 * "waiter" in a pthread_cond_wait nobody signals, "ticker" in one
 * nanosleep of SECONDS (default 3), after which it exits the program with
 * status 7. A target for `record --emulate -p`: threads blocked at the
 * attach show as off-CPU from the recording's start, under their stacks
 * (tests/e2e/emulate/attach.sh). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* pthread_setname_np */
#endif
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static double secs = 3;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

__attribute__((noinline)) static void reader_wait(void)
{
	char c;

	while (read(fds[0], &c, 1) == 1)
		;
}

static void *reader(void *arg)
{
	(void)arg;
	reader_wait();
	return NULL;
}

__attribute__((noinline)) static void waiter_wait(void)
{
	pthread_mutex_lock(&mu);
	for (;;)
		pthread_cond_wait(&cv, &mu);
}

static void *waiter(void *arg)
{
	(void)arg;
	waiter_wait();
	return NULL;
}

static void *ticker(void *arg)
{
	struct timespec ts = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };

	(void)arg;
	nanosleep(&ts, NULL);
	exit(7);
}

int main(int argc, char **argv)
{
	pthread_t th[3];

	if (argc > 1)
		secs = atof(argv[1]);
	if (pipe(fds))
		return 1;
	pthread_create(&th[0], NULL, reader, NULL);
	pthread_setname_np(th[0], "reader");
	pthread_create(&th[1], NULL, waiter, NULL);
	pthread_setname_np(th[1], "waiter");
	pthread_create(&th[2], NULL, ticker, NULL);
	pthread_setname_np(th[2], "ticker");
	pthread_join(th[2], NULL);
	return 1;
}
