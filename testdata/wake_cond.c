/* Wake testdata: producer/consumer on a condition variable. "cv-consumer"
 * waits for each of 3 items; main ("wake_cond") makes each one slowly
 * (a busy loop), then signals. */
#include <pthread.h>

#include "wake_common.h"

#define ITEMS 3

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int queued, taken;
static volatile int wanted;
static volatile pid_t consumer_tid;

static void take(void)
{
	flag_set(&wanted, taken + 1);
	pthread_mutex_lock(&m);
	while (queued == 0)
		pthread_cond_wait(&cv, &m);     /* main's signal wakes it */
	queued--;
	taken++;
	pthread_mutex_unlock(&m);
}

static void *consumer(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "cv-consumer");
	consumer_tid = my_tid();
	for (int i = 0; i < ITEMS; i++)
		take();
	return NULL;
}

static void produce(int i)
{
	wait_blocked(&wanted, i + 1, &consumer_tid, SYS_futex, &cv, sizeof(cv));  /* the consumer waits */
	spin(4000);
	pthread_mutex_lock(&m);
	queued++;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&m);
}

int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, consumer, NULL);
	for (int i = 0; i < ITEMS; i++)
		produce(i);
	pthread_join(t, NULL);
	return taken != ITEMS;
}
