/* Emulator testdata: a signal handler that runs in the middle of a
 * function, once synchronously (raise) and once asynchronously (an
 * interval timer firing while a loop spins). */
#include <signal.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t hits;

static int handler_work(int x)
{
	return x + 1;
}

static void on_signal(int sig)
{
	hits = handler_work(hits) + (sig == SIGALRM);
}

static int work(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += i;
	raise(SIGUSR1);             /* the handler runs here, mid-function */
	for (int i = 0; i < n; i++)
		s -= i;
	return s;
}

static void spin_until_alarm(void)
{
	struct itimerval it;
	memset(&it, 0, sizeof(it));
	it.it_value.tv_usec = 2000;
	setitimer(ITIMER_REAL, &it, NULL);
	while (hits < 3)
		;                   /* the timer interrupts this loop */
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	int s = work(10);
	spin_until_alarm();
	return s + (hits < 3);
}
