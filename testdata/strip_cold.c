// Emulator testdata, linked with -s (strip_cold) and without (unstrip_cold):
// -O2 code whose functions no symbol names but their .eh_frame FDEs, with
// the shapes that make FDEs other than whole functions or functions entered
// other than by a call: a hot function's unlikely blocks split out into a
// .cold part of their own (an FDE of its own, entered by a jump and jumping
// back into the middle of the hot part), also in a recursive function (the
// cold part jumps back while another call of the function is further down
// the stack), and tail calls from one unnamed function into another.
#include <stdio.h>
#include <stdlib.h>

volatile int sink;

__attribute__((noinline, cold)) static void rare(int x)
{
	sink += x;
}

// the cold part rejoins the hot one (i % 8 == 7)
__attribute__((noinline)) static int hot(int i)
{
	int r = i * 3;
	if (__builtin_expect(i % 8 == 7, 0)) {
		rare(i);
		r += sink;
	}
	return r + sink;
}

// recursive, with a cold part that jumps back at depth 2
__attribute__((noinline)) static int walk(int d, int i)
{
	int r = d;
	if (__builtin_expect(d == 2 && i % 4 == 1, 0)) {
		rare(d);
		r += sink;
	}
	if (d > 0)
		r += walk(d - 1, i);
	return r ^ sink;
}

// tail calls: a -> b -> c, each a jmp
__attribute__((noinline)) static int c3(int x)
{
	sink ^= x;
	return sink + 1;
}

__attribute__((noinline)) static int b2(int x)
{
	sink += x;
	return c3(x * 5);
}

__attribute__((noinline)) static int a1(int x)
{
	sink -= x;
	return b2(x + 7);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 40, s = 0;

	(void)argv;
	for (int i = 0; i < n; i++) {
		s += hot(i);
		s += walk(3, i);
		s += a1(i);
	}
	if (s == 12345)
		puts("unlikely");
	return 0;
}
