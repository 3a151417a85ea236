/* testdata: the K-th of N calls of handle() is slow on purpose, for report
 * --slowest (tests/e2e/report/slowest.sh).
 *
 * slow_kth [K [N]]: main calls handle(i) for i = 0..N-1 (default K 7, N 12).
 * Every call does a little work (step); the call with i == K also runs
 * slow_part(), which calls step() 8 times with 20 times the work. No
 * syscall: an emulator's time for one is measured, not virtual, and could
 * outweigh the slow part on a loaded machine; so every other call takes
 * about the same time, and the K-th is the slowest, by its subtree.
 */
#include <stdlib.h>

static volatile unsigned sink;

static void __attribute__((noinline)) step(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		sink += i;
}

static void __attribute__((noinline)) slow_part(void)
{
	for (int j = 0; j < 8; j++)
		step(200);
}

static void __attribute__((noinline)) handle(unsigned i, unsigned k)
{
	step(20 + i % 3);
	if (i == k)
		slow_part();
	step(10);
}

int main(int argc, char **argv)
{
	unsigned k = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 7;
	unsigned n = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 12;

	for (unsigned i = 0; i < n; i++)
		handle(i, k);
	return 0;
}
