/* ptflame testdata: a little sideband for perf record to see: a second
 * thread, a sleep (switch out/in), a fork whose child exits, and an exec'd
 * shared library already mapped by the loader. */
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
	(void)arg;
	nap(2);
	return NULL;
}

int main(void)
{
	pthread_t t;
	pid_t child;
	int status = 0;

	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	nap(5);
	pthread_join(t, NULL);
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		nap(1);
		_exit(7);
	}
	waitpid(child, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 7 ? 0 : 1;
}
