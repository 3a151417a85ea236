/* kill_spin MODE [N] [MARK]: three threads spin calling small functions
 * while main waits in pthread_join; the program never ends by itself but
 * by a signal (tests/e2e/qemu/kill.sh):
 *   spin  : until killed from outside (SIGINT of the recording); once
 *           every thread made N rounds, MARK (a file) is created (by the
 *           last of them to get there), so that the test knows they all
 *           run
 *   self  : thread 1 raise(SIGKILL)s after N rounds
 *   abort : thread 1 abort()s after N rounds
 * (self and abort wait, spinning on, until every thread has started: on a
 * loaded host qemu-user's thread 1 made its N rounds before main had
 * created thread 2, and the test wants three threads to die) */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NTHR 3

static volatile unsigned long sink;
static atomic_int arrived;     /* threads that made n rounds */
static atomic_int started;     /* threads that run */
static const char *mode = "spin", *mark;
static unsigned long n = 1000;

/* (a loop, so that a round is some 1,500 instructions and few calls: a
 * short truth log) */
__attribute__((noinline)) static unsigned long leaf(unsigned long x)
{
	for (int i = 0; i < 200; i++)
		x = x * 3 + 1;
	return x;
}

__attribute__((noinline)) static unsigned long step(unsigned long x)
{
	return leaf(x) ^ (x >> 1);
}

static void *spin(void *arg)
{
	long id = (long)arg;
	unsigned long x = (unsigned long)id;

	atomic_fetch_add(&started, 1);
	for (unsigned long i = 1;; i++) {
		x = step(x);
		sink = x;
		/* (the last thread there makes the mark: main waits in
		 * pthread_join, where a poll with sleeps cost the ptrace
		 * stepper a million steps of the spinners per 1 ms sleep) */
		if (i == n && mark && atomic_fetch_add(&arrived, 1) == NTHR - 1)
			close(open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
		if (id == 1 && i >= n && atomic_load(&started) == NTHR) {
			if (!strcmp(mode, "self"))
				raise(SIGKILL);
			if (!strcmp(mode, "abort"))
				abort();
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[NTHR];

	if (argc > 1)
		mode = argv[1];
	if (argc > 2)
		n = strtoul(argv[2], NULL, 0);
	if (argc > 3)
		mark = argv[3];
	for (long i = 0; i < NTHR; i++)
		pthread_create(&t[i], NULL, spin, (void *)i);
	for (int i = 0; i < NTHR; i++)
		pthread_join(t[i], NULL);
	return 0;
}
