/* Emulator testdata: short stretches of user code between syscalls that
 * never sleep (getpid), after a loop long enough to tell the code's rate.
 * At 1 ns per instruction each stretch is shorter than an MTC period of
 * 32 ns, so without CYC its times come from that rate and the bounds
 * around it (tests/e2e/decode/grid.sh). */
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((noinline)) static int step(int x)
{
	return x * 3 + 1;
}

int main(void)
{
	volatile int s = 0;

	for (int i = 0; i < 4000; i++)  /* about 16 us at 1 ns an instruction */
		s += i;
	for (int i = 0; i < 24; i++) {
		s += step(i);
		syscall(SYS_getpid);
	}
	return s & 1;
}
