/* flat_diverge: two threads whose traces drift apart in the file.
 *
 * busy calls a_step N times without a pause; sleepy calls b_step M times
 * with a 200 us sleep after each. Recorded with the qemu backend on two
 * virtual CPUs, sleepy's virtual clock runs far ahead of busy's (a sleep
 * moves it by what the sleep took, and busy's moves 1 ns per instruction),
 * while both write their CPU's AUX data as they run. So when report's merge
 * reaches a time, busy's queue is much further on in the file than
 * sleepy's, and the session cannot drop the pages in between: only each
 * queue's own drops keep memory flat (tests/e2e/qemu/flatmem_percpu.sh).
 *
 * flat_diverge [N [M]] (defaults 1000000 and 1000).
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void a_step(unsigned long i)
{
	sink += i * 3 + (i >> 2);
}

__attribute__((noinline)) static void b_step(unsigned long i)
{
	sink ^= i;
}

static void *busy(void *arg)
{
	unsigned long n = (unsigned long)arg;

	for (unsigned long i = 0; i < n; i++)
		a_step(i);
	return NULL;
}

static void *sleepy(void *arg)
{
	unsigned long m = (unsigned long)arg;
	struct timespec ts = { 0, 200000 };

	for (unsigned long i = 0; i < m; i++) {
		b_step(i);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000;
	unsigned long m = argc > 2 ? strtoul(argv[2], NULL, 0) : 1000;
	pthread_t a, b;

	if (pthread_create(&a, NULL, busy, (void *)n) ||
	    pthread_create(&b, NULL, sleepy, (void *)m))
		return 1;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
