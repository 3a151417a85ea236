/* Wake testdata: a mutex handed back and forth between two threads.
 * main ("wake_mutex") holds the lock while "mx-waiter" blocks on it; main's
 * unlock wakes it; then the waiter holds it while main blocks; its unlock
 * wakes main; main joins it (its exit wakes main if still running). */
#include <pthread.h>

#include "wake_common.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile int waiting, holding, locking;
static volatile pid_t main_tid, waiter_tid;

static void hold_waiter(void)
{
	waiter_tid = my_tid();
	flag_set(&waiting, 1);
	pthread_mutex_lock(&m);     /* blocks: main holds it */
	flag_set(&holding, 1);
	wait_blocked(&locking, 1, &main_tid, SYS_futex, &m, sizeof(m));
	spin(4000);                 /* main blocked on it */
	pthread_mutex_unlock(&m);   /* wakes main */
}

static void *waiter(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "mx-waiter");
	hold_waiter();
	return NULL;
}

static void hold_main(void)
{
	wait_blocked(&waiting, 1, &waiter_tid, SYS_futex, &m, sizeof(m));
	spin(3000);
	pthread_mutex_unlock(&m);   /* wakes the waiter */
}

int main(void)
{
	pthread_t t;
	main_tid = my_tid();
	pthread_mutex_lock(&m);
	pthread_create(&t, NULL, waiter, NULL);
	hold_main();
	/* busily (no syscall, whose real duration could outlast the waiter's
	 * hold): the waiter has the lock */
	while (!holding)
		;
	flag_set(&locking, 1);
	pthread_mutex_lock(&m);     /* blocks until its unlock */
	pthread_mutex_unlock(&m);
	pthread_join(t, NULL);
	return 0;
}
