/* Emulator testdata: setjmp/longjmp out of two nested frames. */
#include <setjmp.h>

static jmp_buf env;
static volatile int depth;

static void deepest(int n)
{
	depth = n;
	if (n >= 2)
		longjmp(env, n);
}

static void deeper(int n)
{
	deepest(n + 1);
	depth = -1;  /* never reached */
}

static int try_it(int n)
{
	int r = setjmp(env);
	if (r == 0) {
		deeper(n);
		return 0;
	}
	return r;
}

int main(void)
{
	int s = 0;
	for (int i = 1; i < 3; i++)
		s += try_it(i);
	return s == 0;
}
