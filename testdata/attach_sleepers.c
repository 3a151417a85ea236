/* attach_sleepers [SECONDS]: main and 3 threads (named sleep1..sleep3)
 * sleep 20 ms at a time for SECONDS (default 5), then the program exits
 * with status 7: a multi-threaded target for `record --emulate -p` that must outlive the
 * detach with its own exit status (tests/e2e/emulate/attach.sh). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* pthread_setname_np */
#endif
#include <pthread.h>
#include <stdio.h>
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
	for (int i = 0; i < 3; i++) {
		char name[16];

		pthread_create(&th[i], NULL, sleeper, &end);
		snprintf(name, sizeof(name), "sleep%d", i + 1);
		pthread_setname_np(th[i], name);
	}
	sleeper(&end);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	return 7;
}
