/* kill_child: main forks a child that works a little, sets a flag in
 * shared memory and waits (pause); main spins until it sees the flag,
 * kills the child (SIGKILL) and reaps it. Exits 0 when the child died of
 * the SIGKILL (tests/e2e/emulate/ends.sh: the child ends at the kill, not
 * when the host reports its end). */
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long work(unsigned long x)
{
	for (int i = 0; i < 100; i++)
		x = x * 3 + 1;
	return x;
}

int main(void)
{
	volatile int *ran = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				 -1, 0);
	int status;
	pid_t child;

	if (ran == MAP_FAILED)
		return 2;
	child = fork();
	if (child < 0)
		return 2;
	if (!child) {
		unsigned long x = 1;

		for (int i = 0; i < 20; i++)
			sink = x = work(x);
		*ran = 1;
		for (;;)
			pause();
	}
	while (!*ran)
		sink = work(sink);
	kill(child, SIGKILL);
	if (waitpid(child, &status, 0) != child)
		return 2;
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? 0 : 1;
}
