/* The library undec_main calls (tests/e2e/report/undecoded.sh). */
void callback(int n);

volatile long lib_sink;

__attribute__((noinline)) static void lib_inner(int n)
{
	for (int i = 0; i < n; i++)
		lib_sink += i;
}

void lib_entry(int n)
{
	lib_inner(n);
	callback(n);
	lib_inner(n / 2);
}
