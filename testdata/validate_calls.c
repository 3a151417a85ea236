/* ptflame testdata: known call counts for scripts/validate-pt.sh (ptflame
 * report vs perf script on the same trace): fib(12) makes 465 calls to fib,
 * leaf() is called 100 times directly and 50 times through a function
 * pointer (via_ptr). Single-threaded and short, so the PT emulator
 * (--emulate) can record it in well under a second. */
#include <stdio.h>

__attribute__((noinline)) static int fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) static int leaf(int x)
{
	return x * 7 + 3;
}

static int (*volatile indirect)(int) = leaf;

__attribute__((noinline)) static int via_ptr(int x)
{
	return indirect(x);
}

int main(void)
{
	int sum = fib(12);

	for (int i = 0; i < 100; i++)
		sum += leaf(i);
	for (int i = 0; i < 50; i++)
		sum += via_ptr(i);
	printf("%d\n", sum);
	return 0;
}
