/* Emulator testdata: a signal handler that rewrites the context it
 * returns to (as coroutine and GC libraries do): rt_sigreturn starts
 * resume_here, with the interrupted instruction pushed as its return
 * address, so it runs as a call made from the interrupted code (raise's
 * libc frames) and returns into it. The truth log has no signal line for
 * it: a sigreturn to a function's first byte, not on the stack. */
#include <signal.h>
#include <stdio.h>
#include <ucontext.h>

static volatile int acc;

static void work(int n)
{
	for (int i = 0; i < n; i++)
		acc += i;
}

static void resume_here(void)
{
	work(30);
}

static void handler(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	greg_t *g = uc->uc_mcontext.gregs;

	(void)sig;
	(void)si;
	g[REG_RSP] -= 8;
	*(greg_t *)g[REG_RSP] = g[REG_RIP];
	g[REG_RIP] = (greg_t)resume_here;
	work(10);
}

static void victim(void)
{
	work(5);
	raise(SIGHUP);
	work(5);
}

int main(void)
{
	struct sigaction sa = { 0 };

	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGHUP, &sa, 0);
	for (int k = 0; k < 2; k++)
		victim();
	printf("%d\n", acc);
	return 0;
}
