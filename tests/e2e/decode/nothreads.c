/* ptflame - tests/e2e/decode/nothreads.c: LD_PRELOAD'ed by jobs.sh, a
 * pthread_create that always fails as at a process or thread limit
 * (EAGAIN), so that report -j N must go on in one thread. */
#include <errno.h>
#include <pthread.h>

int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	(void)th;
	(void)attr;
	(void)fn;
	(void)arg;
	return EAGAIN;
}
