/* Testdata, linked stripped (no symtab: every function of it is unnamed
 * code, one key to the stack machine): a signal made pending while
 * blocked is delivered on the return of the sigprocmask that unblocks it,
 * into a handler that calls more unnamed code. The handler's frames go on
 * top of the interrupted stack, whose frames below are unnamed too. */
#include <signal.h>

static volatile int got;

__attribute__((noinline)) static int count(int s)
{
	return s == SIGUSR1 ? 1 : 0;
}

static void on_usr1(int s)
{
	got += count(s);
}

__attribute__((noinline)) static void deliver(void)
{
	sigset_t m, old;

	sigemptyset(&m);
	sigaddset(&m, SIGUSR1);
	sigprocmask(SIG_BLOCK, &m, &old);
	raise(SIGUSR1);
	sigprocmask(SIG_SETMASK, &old, 0);   /* delivered on its return */
}

__attribute__((noinline)) static void outer(void)
{
	deliver();
	deliver();
}

int main(void)
{
	signal(SIGUSR1, on_usr1);
	outer();
	return got != 2;
}
