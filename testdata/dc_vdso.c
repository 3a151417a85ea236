/* dc_vdso: calls into the [vdso] (clock_gettime, gettimeofday) between
 * plain calls, for the decoder's e2e test (tests/e2e/decode). */
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

static long stamp(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_nsec & 1;
}

static long wall(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return tv.tv_usec & 1;
}

int main(void)
{
	long n = 0;

	for (int i = 0; i < 3; i++)
		n += stamp() + wall();
	return n > 100;
}
