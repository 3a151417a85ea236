/* Shared by the wake_* testdata programs (issue 16, wake records): a busy
 * loop that keeps a thread on its CPU for a known number of instructions
 * (about 6 per turn at -O0), so that every wait in these programs is ended
 * by another traced thread, never by a timer; and a flag a thread sets
 * just before it blocks, which the thread that will wake it waits for
 * (yielding), then for the kernel to say that thread sleeps in the wait, before its
 * own busy loop: so the wait surely blocks, whatever time the emulators
 * give the syscalls before it and however the host schedules the threads
 * (the qemu backend runs them for real). */
#ifndef WAKE_COMMON_H
#define WAKE_COMMON_H

#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

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

static pid_t my_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Thread TID of this process is blocked in syscall NR with its first
 * argument in [LO, HI) (/proc/self/task/TID/syscall: "NR ARG1 ..."; a
 * thread that is not in a syscall reads "running"). The kernel's state
 * alone ("S") would not do: qemu-user's own threads also sleep in host
 * futexes and pipe writes. */
static int blocked_in(pid_t tid, long nr, unsigned long lo, unsigned long hi)
{
	char fn[64];
	long n = -1;
	unsigned long a1 = 0;
	snprintf(fn, sizeof(fn), "/proc/self/task/%d/syscall", (int)tid);
	FILE *f = fopen(fn, "re");
	if (!f)
		return 0;
	int k = fscanf(f, "%ld %lx", &n, &a1);
	fclose(f);
	return k == 2 && n == nr && a1 >= lo && a1 < hi;
}

/* Flag F reached V (thread TID is about to block), then TID blocks in
 * syscall NR on an object in [LO, HI). */
static inline void wait_blocked(volatile int *f, int v, volatile pid_t *tid, long nr,
			 const volatile void *lo, unsigned long size)
{
	flag_wait(f, v);
	while (!blocked_in(*tid, nr, (unsigned long)lo, (unsigned long)lo + size))
		sched_yield();
}

/* Flag F reached V, then TID blocks in syscall NR1 or NR2, whatever its
 * first argument (qemu-user may do a guest's wait with another call:
 * epoll_pwait for epoll_wait, ppoll for poll). */
static inline void wait_blocked_any(volatile int *f, int v, volatile pid_t *tid, long nr1, long nr2)
{
	flag_wait(f, v);
	while (!blocked_in(*tid, nr1, 0, ~0ul) && !blocked_in(*tid, nr2, 0, ~0ul))
		sched_yield();
}

#endif
