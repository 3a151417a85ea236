/* Ways a traced program ends (tests/e2e/emulate/ending.sh and
 * tests/e2e/record_pt): one mode per run.
 *   ending status N       main returns N
 *   ending kill SIG       the process sends itself SIG (default action)
 *   ending thread-exit N  a second thread calls exit(N) while main spins
 *   ending thread-segv    a second thread dies of SIGSEGV while main spins
 *   ending join-exit N    a second thread calls exit(N) while main waits
 *                             in pthread_join
 *   ending leader-exit F  main calls pthread_exit; a second thread waits
 *                             for file F to exist, names itself "late-worker"
 *                             and exits 0
 *   ending sleep N        main sleeps N seconds (a recording stopped
 *                             meanwhile ends in the wait)
 *   ending reader-exit N  a second thread waits in a read of a pipe
 *                             nobody writes; main calls exit(N) (its
 *                             exit_group ends the reader too)
 *   ending exec-naps      main execs the program again ("naps": two
 *                             rounds of work and a 1 ms nanosleep, then 0)
 *   ending spin-exit N    a second thread works a while, then calls
 *                             exit(N) while main spins in user code (its
 *                             exit_group ends main where it is)
 * The second thread does a little work first, so that both are traced. */
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile int sink;
static int code;
static int segv;

static int work(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += i;
	return s;
}

static void *second(void *arg)
{
	if (arg)
		sink = work(5000);
	(void)arg;
	sink = work(200);
	if (segv)
		*(volatile int *)(long)sink ^= 1;  /* sink is never a valid address */
	exit(code);
}

static int pipefd[2];

static void *reader(void *arg)
{
	char c;

	(void)arg;
	sink = work(200);
	return read(pipefd[0], &c, 1) == 1 ? arg : NULL;
}

static void *late(void *file)
{
	while (access(file, F_OK))
		usleep(10000);
	prctl(PR_SET_NAME, "late-worker");
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "status";
	int n = argc > 2 ? atoi(argv[2]) : 0;
	pthread_t t;

	if (!strcmp(mode, "status"))
		return work(10) > 0 ? n : 0;
	if (!strcmp(mode, "sleep")) {
		sink = work(10);
		sleep((unsigned)n);
		return 0;
	}
	if (!strcmp(mode, "naps")) {
		struct timespec nap = { 0, 1000000 };

		for (int i = 0; i < 2; i++) {
			sink = work(100);
			nanosleep(&nap, NULL);
		}
		return 0;
	}
	if (!strcmp(mode, "exec-naps")) {
		sink = work(10);
		execl("/proc/self/exe", "ending", "naps", (char *)NULL);
		return 99;
	}
	if (!strcmp(mode, "reader-exit")) {
		struct timespec nap = { 0, 20000000 };

		if (pipe(pipefd) || pthread_create(&t, NULL, reader, NULL))
			return 99;
		nanosleep(&nap, NULL);
		sink = work(10);
		exit(n);
	}
	if (!strcmp(mode, "kill")) {
		sink = work(10);
		kill(getpid(), n);
		return 0;
	}
	if (!strcmp(mode, "leader-exit")) {
		if (argc < 3 || pthread_create(&t, NULL, late, argv[2]))
			return 99;
		pthread_exit(NULL);
	}
	code = n;
	segv = !strcmp(mode, "thread-segv");
	if (pthread_create(&t, NULL, second, strcmp(mode, "spin-exit") ? NULL : argv[1]))
		return 99;
	if (!strcmp(mode, "join-exit"))
		pthread_join(t, NULL);
	for (;;)
		sink = work(50);
}
