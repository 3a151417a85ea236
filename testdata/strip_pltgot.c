/* A stripped program whose .plt.got holds four 8-byte stubs (functions
 * both called and address-taken) and whose main (-O2: .text.startup)
 * starts .text right after them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile int acc;

__attribute__((noinline)) static void work(int n)
{
	for (int i = 0; i < n; i++)
		acc += i;
}

void *(*volatile alloc_fp)(size_t);
void (*volatile free_fp)(void *);
int (*volatile puts_fp)(const char *);

int main(void)
{
	alloc_fp = malloc;
	free_fp = free;
	puts_fp = puts;
	for (int k = 0; k < 3; k++) {
		char *p = malloc(32);
		work(50);
		free(p);
		p = alloc_fp(16);
		free_fp(p);
	}
	puts("done");
	puts_fp("done");
	printf("%d\n", acc);
	return 0;
}
