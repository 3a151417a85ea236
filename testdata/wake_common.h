/* Shared by the wake_* testdata programs (issue 16, wake records): a busy
 * loop that keeps a thread on its CPU for a known number of instructions
 * (about 6 per turn at -O0), so that every wait in these programs is ended
 * by another traced thread, never by a timer. */
#ifndef WAKE_COMMON_H
#define WAKE_COMMON_H

static void spin(int n)
{
	for (volatile int i = 0; i < n; i++)
		;
}

#endif
