/* Emulator testdata: syscalls that never sleep (getpid) right before one
 * that does (a read, which the emulators take off the CPU for its host
 * time: a short wait), a few instructions apart, after a loop long enough
 * to tell the code's rate. With a long MTC period and no CYC several of
 * them fall in one period, and only the packets at the switch-in (the TSC
 * that perf's per-task event sends when it sets TraceEn again) tell which
 * syscall the thread waited in (tests/e2e/decode/grid.sh). */
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((noinline)) static int step(int x)
{
	return x * 3 + 1;
}

int main(void)
{
	volatile int s = 0;
	char c;
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0)
		return 2;
	for (int i = 0; i < 4000; i++)  /* about 16 us at 1 ns an instruction */
		s += i;
	for (int i = 0; i < 40; i++) {
		s += step(i);
		syscall(SYS_getpid);
		s += step(s);
		if (read(fd, &c, 1) != 1)
			return 3;
	}
	close(fd);
	return s == 12345;   /* (0: s is never that) */
}
