/* ptflame testdata: sideband for `ptflame record --sideband-only` to see and
 * compare with `perf record -e dummy --switch-events`: two named threads
 * that each block a few times (voluntary context switches), a library
 * mapped executable mid-run (dlopen -> MMAP2), and a forked child that
 * blocks and exits (FORK/EXIT). Every thread blocks at least once, so each
 * one has switch records in both recorders. Runs ~30 ms. */
#include <dlfcn.h>
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
	const char *name = arg;

	pthread_setname_np(pthread_self(), name);   /* a COMM record */
	for (int i = 0; i < 3; i++)
		nap(2);
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;
	pid_t child;
	int status = 0;
	void *lib;

	if (pthread_create(&t1, NULL, worker, "sb-one") ||
	    pthread_create(&t2, NULL, worker, "sb-two"))
		return 1;
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	/* A new executable mapping after start (libm is not linked in). */
	lib = dlopen("libm.so.6", RTLD_NOW);
	if (!lib)
		return 2;
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		nap(3);
		_exit(7);
	}
	waitpid(child, &status, 0);
	dlclose(lib);
	return WIFEXITED(status) && WEXITSTATUS(status) == 7 ? 0 : 1;
}
