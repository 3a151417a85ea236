/* Wake testdata: pipe reads of data that was already there on the host.
 * main writes "a", spins, writes "b" (a known number of instructions
 * before each write: long in virtual time at a large --ns-per-insn); the
 * reader ("pe-reader": a thread, or with the argument "fork" a child
 * process) sleeps until the host says both bytes are in the pipe
 * (FIONREAD), then reads them one at a time: neither read blocks on the
 * host. In virtual time the first read still ends no earlier than the
 * write of "a", the second than the write of "b", each woken by it, and
 * the first before "b" was written: it took only "a"
 * (tests/e2e/qemu/pipe_early.sh). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* about 6 instructions a turn at -O0 (as in wake_common.h) */
static void spin(int n)
{
	for (volatile int i = 0; i < n; i++)
		;
}

static int pfd[2];

static void *reader(void *arg)
{
	(void)arg;
	char b[2] = { 0, 0 };
	int n = 0;
	struct timespec ms = { 0, 1000000 };

	prctl(PR_SET_NAME, "pe-reader");
	for (int k = 0; k < 20000 && (ioctl(pfd[0], FIONREAD, &n) < 0 || n < 2); k++)
		nanosleep(&ms, NULL);
	if (read(pfd[0], &b[0], 1) != 1 || read(pfd[0], &b[1], 1) != 1)
		return NULL;
	printf("read %c%c\n", b[0], b[1]);
	fflush(stdout);
	return NULL;
}

int main(int argc, char **argv)
{
	int fork_mode = argc > 1 && !strcmp(argv[1], "fork");
	pthread_t t;
	pid_t c = 0;

	if (pipe(pfd))
		return 1;
	if (fork_mode) {
		if ((c = fork()) < 0)
			return 1;
		if (!c) {
			reader(NULL);
			_exit(0);
		}
	} else if (pthread_create(&t, NULL, reader, NULL)) {
		return 1;
	}
	spin(200000);
	if (write(pfd[1], "a", 1) != 1)
		return 1;
	spin(200000);
	if (write(pfd[1], "b", 1) != 1)
		return 1;
	if (fork_mode)
		waitpid(c, NULL, 0);
	else
		pthread_join(t, NULL);
	return 0;
}
