/* Emulator testdata: calls into the vDSO (clock_gettime, gettimeofday): the
 * traced code includes the kernel-provided [vdso] mapping. */
#include <sys/time.h>
#include <time.h>

static long stamp(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_nsec;
}

int main(void)
{
	long s = 0;
	for (int i = 0; i < 3; i++)
		s += stamp();
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (s + tv.tv_usec) == 1;
}
