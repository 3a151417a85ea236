/* walker.sh (tests/e2e/decode): a process that runs some calls, then
 * execs itself (argument "x") and runs them again: one pid, its image
 * rebuilt in place at the exec, likely in the same window. */
#include <unistd.h>

__attribute__((noinline)) static int we_f(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) static int we_g(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += we_f(i);
	return s;
}

int main(int argc, char **argv)
{
	char *args[] = { argv[0], "x", NULL };
	int s = we_g(20);

	if (argc > 1)
		return s & 1;
	execv("/proc/self/exe", args);
	return 1;
}
