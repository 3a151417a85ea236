/* Emulator testdata (built with -O2): tail calls (jmp into another
 * function) and PLT calls into libc (call x@plt; jmp *GOT into libc). */
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) int tail_c(int x)
{
	return x * 7 + (int)strlen("tail");
}

__attribute__((noinline)) int tail_b(int x)
{
	if (x > 1000)
		return x;
	return tail_c(x + 1);       /* tail call: jmp */
}

__attribute__((noinline)) int tail_a(int x)
{
	return tail_b(x * 2);       /* tail call: jmp */
}

int main(int argc, char **argv)
{
	(void)argv;
	char buf[32];
	volatile int n = argc + 3;
	int s = 0;
	for (int i = 0; i < 3; i++) {
		s += tail_a(i + n);
		memset(buf, 'a' + i, (size_t)n);   /* PLT call into libc */
		buf[n] = 0;
		s += (int)strlen(buf);             /* PLT call into libc */
		s += abs(-i);                      /* PLT call (or inlined) */
	}
	return s == 0;
}
