/* -O2, -rdynamic: a .cold part whose function has another name (glibc's
 * way: __GI__IO_puts.cold is the cold part of the local __GI__IO_puts, an
 * alias of the global _IO_puts and puts). The symbolizer keeps one name
 * per address (api_process, global, beats process, local) and still
 * links process.cold to that function; -rdynamic puts api_process in
 * .dynsym too (one function by two entries of one name). */
#include <stdlib.h>

volatile int sink;

__attribute__((noinline, cold)) void report_rare(int x)
{
	sink += x * 3;
}

__attribute__((noinline)) static int process(int x)
{
	int r = x;

	if (x % 7 == 0) {
		report_rare(x);
		for (int i = 0; i < x; i++)
			sink ^= i * 3;
		r += sink;
	}
	return r + sink;
}

extern int api_process(int) __attribute__((alias("process")));

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 30, s = 0;

	for (int i = 1; i <= n; i++)
		s += api_process(i);
	return s == 12345;
}
