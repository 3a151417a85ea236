/* Emulator testdata (tests/e2e/report/undecoded.sh): main calls into a
 * shared library (libundec_lib.so, undec_lib.c) that calls back
 * into main's code, and each side makes a syscall, so the trace has
 * TIP.PGEs inside and after the library's code. The test replaces or
 * deletes the library after recording: code that cannot be decoded. */
#include <unistd.h>

void lib_entry(int n);

volatile long sink;

__attribute__((noinline)) void callback(int n)
{
	for (int i = 0; i < n; i++)
		sink += i;
	sink += getppid();
}

__attribute__((noinline)) void work(int n)
{
	for (int i = 0; i < n; i++)
		sink ^= i;
	sink += getpid();
	for (int i = 0; i < n; i++)
		sink ^= i;
}

int main(void)
{
	for (int r = 0; r < 20; r++) {
		lib_entry(200);
		work(300);
	}
	return 0;
}
