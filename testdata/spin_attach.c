/* spin_attach [SECONDS]: a long-running loop for `ptflame record --emulate
 * -p PID` (tests/e2e/emulate/attach.sh). Each iteration calls
 * loop_body -> level_a -> level_b -> level_c and sleeps 1 ms, for SECONDS
 * (default 30) or until killed; then spin_done() (a start symbol reached
 * only at the end: SIGTERM while running natively to it). Not named emu_*: the report e2e's list of
 * emu_* programs records each of them from main. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long level_c(unsigned long x)
{
	for (int i = 0; i < 8; i++)
		x = x * 33 + (unsigned long)i;
	return x;
}

__attribute__((noinline)) static unsigned long level_b(unsigned long x)
{
	return level_c(x + 1) ^ level_c(x + 2);
}

__attribute__((noinline)) static unsigned long level_a(unsigned long x)
{
	return level_b(x) + 1;
}

__attribute__((noinline)) static void loop_body(unsigned long i)
{
	sink += level_a(i);
}

__attribute__((noinline)) static int spin_done(void)
{
	return (int)(sink & 0);
}

int main(int argc, char **argv)
{
	long secs = argc > 1 ? atol(argv[1]) : 30;
	struct timespec t0, now, nap = { 0, 1000000 };
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned long i = 0;; i++) {
		loop_body(i);
		nanosleep(&nap, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec >= secs)
			break;
	}
	return spin_done();
}
