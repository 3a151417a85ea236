/* Scheduler testdata (tests/e2e/emulate/idle_ready.sh): more runnable
 * threads than virtual CPUs, and wakes. main makes 4 workers (their
 * clones during main's own work), then, 3 times, works a while and
 * wakes them all at once (a condition variable broadcast); each worker
 * works, then passes a token round the others (a mutex and condition
 * variable handoff) and works again. A real kernel puts each woken or
 * new thread on an idle CPU at once: no thread waits ready while a CPU
 * idles. An argument N divides the work by N (a shorter run for the
 * ptrace stepper). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define WORKERS 4
#define ROUNDS 3

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int go, turn, div_by = 1;
static volatile long sink;

static void work(int n)
{
	for (int i = 0; i < n / div_by; i++)
		sink += i;
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	for (int r = 0; r < ROUNDS; r++) {
		pthread_mutex_lock(&m);
		while (go <= r)
			pthread_cond_wait(&cv, &m);     /* main's broadcast */
		pthread_mutex_unlock(&m);
		work(1500);
		pthread_mutex_lock(&m);
		while (turn % WORKERS != id)
			pthread_cond_wait(&cv, &m);     /* the token */
		turn++;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&m);
		work(1000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[WORKERS];
	if (argc > 1 && atoi(argv[1]) > 0)
		div_by = atoi(argv[1]);
	for (long i = 0; i < WORKERS; i++) {
		pthread_create(&t[i], NULL, worker, (void *)i);
		work(300);
	}
	for (int r = 0; r < ROUNDS; r++) {
		work(2000);
		pthread_mutex_lock(&m);
		go++;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&m);
	}
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	printf("balanced %d\n", turn);
	return 0;
}
