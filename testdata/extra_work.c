/* testdata: one function does a known amount of extra work.
 *
 * extra_work [EXTRA [TAG [SCALE [N]]]]: work() runs EXTRA more loop
 * iterations per call than a run with EXTRA 0; everything else is the same,
 * except that TAG "a" or "b" makes main call once_a() or once_b() once (a
 * stack only one of two runs has). busy() calls take several lengths,
 * SCALE times longer (default 1) for percentile tests that need calls much
 * longer than the gaps between PT timing packets; N rounds (default 20).
 */
#include <stdlib.h>
#include <string.h>

static volatile unsigned sink;
static unsigned scale = 1;

static void __attribute__((noinline)) busy(unsigned n)
{
	n *= scale;
	for (unsigned i = 0; i < n; i++)
		sink += i;
}

static void __attribute__((noinline)) work(unsigned extra, unsigned i)
{
	busy(10 + (i % 7) * 4);
	for (unsigned k = 0; k < extra; k++)
		sink ^= k;
}

static void __attribute__((noinline)) other(unsigned i)
{
	busy(12 + i % 3);
}

static void __attribute__((noinline)) once_a(void)
{
	busy(5);
}

static void __attribute__((noinline)) once_b(void)
{
	busy(6);
}

int main(int argc, char **argv)
{
	unsigned extra = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 0;
	const char *tag = argc > 2 ? argv[2] : "";
	unsigned rounds = argc > 4 ? (unsigned)strtoul(argv[4], NULL, 10) : 20;

	if (argc > 3)
		scale = (unsigned)strtoul(argv[3], NULL, 10);
	if (!strcmp(tag, "a"))
		once_a();
	else if (!strcmp(tag, "b"))
		once_b();
	for (unsigned i = 0; i < rounds; i++) {
		work(extra, i);
		other(i);
	}
	return 0;
}
