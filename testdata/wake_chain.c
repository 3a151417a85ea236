/* Wake testdata: a three-thread chain. main ("chain-a") waits for
 * "chain-b", which waits for "chain-c": C works (a busy loop) and signals
 * B (once both A and B are blocked); B then works and signals A. A's wait
 * is ended by B, and B's, inside it, by C. */
#include <pthread.h>

#include "wake_common.h"

struct gate {
	pthread_mutex_t m;
	pthread_cond_t cv;
	int open;
};

static struct gate ab = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 };
static struct gate bc = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 };
static volatile int a_waits, b_waits;
static volatile pid_t a_tid, b_tid;

static void gate_wait(struct gate *g)
{
	pthread_mutex_lock(&g->m);
	while (!g->open)
		pthread_cond_wait(&g->cv, &g->m);
	pthread_mutex_unlock(&g->m);
}

static void gate_open(struct gate *g)
{
	pthread_mutex_lock(&g->m);
	g->open = 1;
	pthread_cond_signal(&g->cv);
	pthread_mutex_unlock(&g->m);
}

static void *thread_c(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "chain-c");
	wait_blocked(&b_waits, 1, &b_tid, SYS_futex, &bc.cv, sizeof(bc.cv));
	/* and A too: so that B's wait lies inside A's (a chain for
	 * report --wakers=N), whatever the scheduler did */
	wait_blocked(&a_waits, 1, &a_tid, SYS_futex, &ab.cv, sizeof(ab.cv));
	spin(5000);
	gate_open(&bc);     /* wakes B */
	return NULL;
}

static void *thread_b(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "chain-b");
	b_tid = my_tid();
	flag_set(&b_waits, 1);
	gate_wait(&bc);     /* C's signal ends it */
	wait_blocked(&a_waits, 1, &a_tid, SYS_futex, &ab.cv, sizeof(ab.cv));
	spin(3000);
	gate_open(&ab);     /* wakes A */
	return NULL;
}

int main(void)
{
	pthread_t b, c;
	pthread_setname_np(pthread_self(), "chain-a");
	a_tid = my_tid();
	pthread_create(&b, NULL, thread_b, NULL);
	pthread_create(&c, NULL, thread_c, NULL);
	flag_set(&a_waits, 1);
	gate_wait(&ab);     /* B's signal ends it */
	pthread_join(b, NULL);
	pthread_join(c, NULL);
	return 0;
}
