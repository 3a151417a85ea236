/* Demo program for scripts/demo.sh: nested calls, sleeps, and a mutex
 * wait between two threads (main holds the lock while it sleeps; the
 * other thread waits for it). Short enough to emulate in well under a
 * second. */
#include <pthread.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile long total;

static void sleep_us(long us)
{
	struct timespec ts = { 0, us * 1000 };
	nanosleep(&ts, NULL);
}

static long square(long x)
{
	return x * x;
}

static long sum_squares(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += square(i);
	return s;
}

static void compute(long n)
{
	total += sum_squares(n);
}

/* Blocks on the mutex main holds (deterministic: main took it before
 * this thread existed), then computes under it. */
static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);  /* blocks: mutex wait */
	compute(10);
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	pthread_t w;
	compute(30);
	pthread_mutex_lock(&lock);
	pthread_create(&w, NULL, waiter, NULL);
	compute(20);
	sleep_us(2000);             /* holds the lock while sleeping */
	pthread_mutex_unlock(&lock);
	pthread_join(w, NULL);
	sleep_us(1000);
	return total == 0;
}
