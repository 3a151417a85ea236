/* Emulator testdata: signals that faults raise (SIGSEGV, SIGFPE), in the
 * middle of a block of straight-line code. Twice the handler leaves by
 * siglongjmp out of a function whose block ends in its ret, once it maps
 * the page and returns, so that the faulting load, in the middle of a
 * block that ends in a call, runs again. The qemu backend sees a block
 * start, not a fault: it took the block's ret or call as retired, and the
 * handler as where that ret went (found 2026-11-27: no signal line).
 * Then four timer signals, one at a time, while recursion that is mostly
 * rets runs: a signal after a block that ends in a ret was lost the same
 * way (about half of them). */
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>

static sigjmp_buf jb;
static volatile int faults;
static char *page;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	faults++;
	if (sig == SIGSEGV && si->si_addr == (void *)page) {
		mprotect(page, 4096, PROT_READ | PROT_WRITE);
		return;             /* the load runs again, and works */
	}
	siglongjmp(jb, 1);
}

static int load(const int *p)
{
	return *p;                  /* faults; the block ends in the ret */
}

static int divide(int a, int b)
{
	return a / b;               /* SIGFPE */
}

static int work(int x)
{
	return x + 1;
}

static volatile int ticks;

static void on_tick(int sig)
{
	(void)sig;
	ticks++;
}

static int tiny(int x)
{
	return x + 1;
}

static int rec(int d)
{
	return d ? rec(d - 1) + tiny(d) : 0;
}

static int touch(void)
{
	int v = *(volatile int *)page;  /* faults once; the block calls work */
	return work(v);
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
	page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 2;
	volatile int zero = 0;
	int s = 0;
	if (!sigsetjmp(jb, 1))
		s += load((const int *)16);
	if (!sigsetjmp(jb, 1))
		s += divide(1, zero);
	s += touch();
	struct sigaction st;
	memset(&st, 0, sizeof(st));
	st.sa_handler = on_tick;
	sigaction(SIGALRM, &st, NULL);
	for (int i = 1; i <= 4; i++) {
		struct itimerval it;
		memset(&it, 0, sizeof(it));
		it.it_value.tv_usec = 200;  /* one at a time: none nested */
		setitimer(ITIMER_REAL, &it, NULL);
		while (ticks < i)
			s += rec(8);
	}
	return faults == 3 && s ? 0 : 1;
}
