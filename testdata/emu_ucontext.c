/* Emulator testdata: two coroutines on stacks of their own (makecontext),
 * switching by swapcontext, which returns into the other context; the
 * first finishes, returns into glibc's __start_context, and setcontext
 * returns into main. Each return into a function not on the stack is an
 * inferred call of it (its entry was not seen), as the truth model says. */
#include <stdio.h>
#include <ucontext.h>

static ucontext_t main_ctx, ctx1, ctx2;
static volatile int acc;
static char stack1[65536], stack2[65536];

static void work(int n)
{
	for (int i = 0; i < n; i++)
		acc += i;
}

static void co1(void)
{
	for (int i = 0; i < 3; i++) {
		work(50);
		swapcontext(&ctx1, &ctx2);
	}
}

static void co2(void)
{
	for (int i = 0; i < 3; i++) {
		work(80);
		swapcontext(&ctx2, &ctx1);
	}
}

int main(void)
{
	getcontext(&ctx1);
	ctx1.uc_stack.ss_sp = stack1;
	ctx1.uc_stack.ss_size = sizeof(stack1);
	ctx1.uc_link = &main_ctx;
	makecontext(&ctx1, co1, 0);
	getcontext(&ctx2);
	ctx2.uc_stack.ss_sp = stack2;
	ctx2.uc_stack.ss_size = sizeof(stack2);
	ctx2.uc_link = &main_ctx;
	makecontext(&ctx2, co2, 0);
	swapcontext(&main_ctx, &ctx1);
	work(20);
	printf("%d\n", acc);
	return 0;
}
