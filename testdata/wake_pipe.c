/* Wake testdata: a pipe between two threads. "pp-reader" blocks in read()
 * for each of 3 bytes; main ("wake_pipe") writes each one after a busy
 * loop, then closes its end (the reader's last read returns 0: woken by
 * the close). */
#include <pthread.h>
#include <unistd.h>

#include "wake_common.h"

#define BYTES 3

static int fds[2];
static int got;
static volatile int reading;
static volatile pid_t reader_tid;

static void *reader(void *arg)
{
	char c;
	(void)arg;
	pthread_setname_np(pthread_self(), "pp-reader");
	reader_tid = my_tid();
	flag_set(&reading, 1);
	while (read(fds[0], &c, 1) == 1)    /* blocks until main writes */
		flag_set(&reading, ++got + 1);
	return NULL;
}

static void send_byte(int i)
{
	wait_blocked(&reading, i + 1, &reader_tid, SYS_read, (void *)(long)fds[0], 1);  /* the reader waits */
	spin(4000);
	if (write(fds[1], "x", 1) != 1)
		_exit(2);
}

int main(void)
{
	pthread_t t;
	if (pipe(fds))
		return 1;
	pthread_create(&t, NULL, reader, NULL);
	for (int i = 0; i < BYTES; i++)
		send_byte(i);
	wait_blocked(&reading, BYTES + 1, &reader_tid, SYS_read, (void *)(long)fds[0], 1);
	spin(4000);
	close(fds[1]);
	pthread_join(t, NULL);
	return got != BYTES;
}
