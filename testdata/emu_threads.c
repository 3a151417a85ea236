/* Emulator testdata: two threads contending on a mutex; the holder sleeps
 * while holding it, so the other blocks in futex wait. */
#include <pthread.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void nap(long us)
{
	struct timespec ts = { 0, us * 1000 };
	nanosleep(&ts, NULL);
}

static int bump(int x)
{
	return x + 1;
}

static void *worker(void *arg)
{
	long id = (long)arg;
	for (int i = 0; i < 2; i++) {
		pthread_mutex_lock(&lock);
		counter = bump(counter);
		nap(500 + 100 * id);        /* sleep holding the lock */
		pthread_mutex_unlock(&lock);
		nap(200);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return counter != 4;
}
