/* Emulator testdata (-O2): gcc's hot/cold splitting. Blocks that call a
 * cold function go into a .cold part of their caller, a symbol of its own
 * ("process.cold"), that the hot part enters by a jump and that jumps back
 * into its middle, calls, and returns for it. Each is the function's own
 * code (DESIGN.md section 4, "Cold parts"): process is called 40 times,
 * report_rare is its child, and so is everything the cold parts do. */
#include <stdlib.h>

volatile int sink;

__attribute__((noinline, cold)) void report_rare(int x)
{
	sink += x * 3;
}

__attribute__((noinline)) void work(int n)
{
	for (int i = 0; i < n; i++)
		sink += i;
}

/* the cold part loops (its own self time), calls, and jumps back */
__attribute__((noinline)) int process(int x)
{
	int r = x;

	if (x % 7 == 0) {
		report_rare(x);
		for (int i = 0; i < x; i++)
			sink ^= i * 3;
		r += sink;
	}
	work(4);
	return r + sink;
}

/* the cold part returns for the function */
__attribute__((noinline)) int check(int x)
{
	if (x % 5 == 4) {
		report_rare(x);
		return sink - 1;
	}
	return x + 1;
}

__attribute__((noinline)) int twice(int x)
{
	work(x);
	return 2 * x + sink;
}

/* the cold part calls and tail-calls (jumps into another function) */
__attribute__((noinline)) int guard(int x)
{
	if (x % 6 == 5) {
		report_rare(x);
		work(2);
		return twice(x);
	}
	return x - 1;
}

/* recursive: the cold part of an inner call jumps back while outer calls
 * of the function are further down the stack */
__attribute__((noinline)) int walk(int d, int i)
{
	int r = d;

	if (d == 2 && i % 4 == 1) {
		report_rare(d);
		r += sink;
	}
	if (d > 0)
		r += walk(d - 1, i);
	return r ^ sink;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 40, s = 0;

	for (int i = 1; i <= n; i++) {
		s += process(i);
		s += check(i);
		s += guard(i);
		s += walk(3, i);
	}
	return s == 12345;
}
