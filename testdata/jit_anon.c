/* JIT-like code: a function copied into anonymous executable memory and
 * called from main (tests/e2e/emulate/anon.sh). No file holds that code,
 * so a recording names its mapping //anon, as perf does. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static int __attribute__((noinline)) before(int x)
{
	return x * 3;
}

int main(void)
{
	/* lea eax, [rdi + 1]; ret */
	static const unsigned char code[] = { 0x8d, 0x47, 0x01, 0xc3 };
	unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int (*f)(int) = (int (*)(int))(void *)p;
	int s = 0;

	if (p == MAP_FAILED)
		return 1;
	memcpy(p, code, sizeof(code));
	for (int i = 0; i < 20; i++)
		s += f(before(i));
	printf("%d\n", s);
	return 0;
}
