/* Demo program for scripts/demo.sh: nested calls, a sleep, and a mutex
 * wait between two threads (short enough to emulate in a second or two). */
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

static void *holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	compute(20);
	sleep_us(2000);             /* holds the lock while sleeping */
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void *waiter(void *arg)
{
	(void)arg;
	sleep_us(300);              /* let the holder take the lock first */
	pthread_mutex_lock(&lock);  /* blocks: mutex wait */
	compute(10);
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	compute(30);
	pthread_create(&a, NULL, holder, NULL);
	pthread_create(&b, NULL, waiter, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	sleep_us(1000);
	return total == 0;
}
