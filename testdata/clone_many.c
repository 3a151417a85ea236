/* clone_many [N]: main makes N threads one after another, each joined at
 * once; a thread only returns. Its clones are what
 * tests/e2e/emulate/clone_time.sh times. */
#include <pthread.h>
#include <stdlib.h>

static void *nothing(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;

	for (int i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, nothing, NULL))
			return 1;
		pthread_join(t, NULL);
	}
	return 0;
}
