/* attach_sleepers [SECONDS]: main and 3 threads sleep 20 ms at a time for
 * SECONDS (default 5), then the program exits with status 7: a
 * multi-threaded target for `record --emulate -p` that must outlive the
 * detach with its own exit status (tests/e2e/emulate/attach.sh). */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double secs = 5;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *sleeper(void *arg)
{
	double end = *(double *)arg;

	while (now() < end)
		usleep(20000);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[3];
	double end;

	if (argc > 1)
		secs = atof(argv[1]);
	end = now() + secs;
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, sleeper, &end);
	sleeper(&end);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	return 7;
}
