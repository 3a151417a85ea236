/* Emulator testdata: fork, the child execs this program again ("child"
 * mode does a little work; $EMU_EXEC names another program to exec), the
 * parent waits. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int child_work(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += i * i;
	return s;
}

static int parent_work(int n)
{
	return n * 2;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "child"))
		return child_work(5) == 30 ? 0 : 1;
	pid_t pid = fork();
	if (pid == 0) {
		char *args[] = { argv[0], "child", NULL };
		const char *other = getenv("EMU_EXEC");

		execv(other ? other : "/proc/self/exe", args);
		_exit(127);
	}
	int st = 0;
	int s = parent_work(3);
	waitpid(pid, &st, 0);
	return (WIFEXITED(st) && WEXITSTATUS(st) == 0 && s == 6) ? 0 : 1;
}
