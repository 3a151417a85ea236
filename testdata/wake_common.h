/* Shared by the wake_* testdata programs (issue 16, wake records): a busy
 * loop that keeps a thread on its CPU for a known number of instructions
 * (about 6 per turn at -O0), so that every wait in these programs is ended
 * by another traced thread, never by a timer; and a flag a thread sets
 * just before it blocks, which the thread that will wake it waits for
 * (yielding) before its own busy loop, so that the wait surely blocks
 * whatever time the emulators give the syscalls before it. */
#ifndef WAKE_COMMON_H
#define WAKE_COMMON_H

#include <sched.h>

static void spin(int n)
{
	for (volatile int i = 0; i < n; i++)
		;
}

static void flag_set(volatile int *f, int v)
{
	*f = v;
}

/* sched_yield: the emulators give it its real duration, so waiting for
 * a thread whose syscalls took long (in real time) costs few steps */
static void flag_wait(volatile int *f, int v)
{
	while (*f < v)
		sched_yield();
}

#endif
