/* Testdata for report after lost data (tests/e2e/report/loss.sh): step()
 * runs most of the time, called from several places, and which leaf it
 * calls tells from where: main;from_a;step;leaf_a, main;from_b;step;leaf_b,
 * main;from_b;via;step;leaf_c and main;from_c;via;step;leaf_d are the only
 * paths to a leaf. After a loss the trace resumes in a step() that need not
 * be the call the loss interrupted; only the returns that follow tell whose
 * it is, one level (step into via, or into from_b) or two (via into from_b
 * or from_c) further down. */
volatile unsigned long sink;

__attribute__((noinline)) static void leaf_a(int i) { sink += (unsigned)i; }
__attribute__((noinline)) static void leaf_b(int i) { sink ^= (unsigned)i; }
__attribute__((noinline)) static void leaf_c(int i) { sink -= (unsigned)i; }
__attribute__((noinline)) static void leaf_d(int i) { sink *= (unsigned)i | 1; }

__attribute__((noinline)) static void step(int which, int n)
{
	for (int i = 0; i < n; i++) {
		sink += (unsigned)i * 7;
		if (i % 16)
			continue;
		if (which == 0)
			leaf_a(i);
		else if (which == 1)
			leaf_b(i);
		else if (which == 2)
			leaf_c(i);
		else
			leaf_d(i);
	}
}

__attribute__((noinline)) static void via(int which, int n) { step(which, n); }
__attribute__((noinline)) static void from_a(int n) { step(0, n); }
__attribute__((noinline)) static void from_b(int n) { via(2, n); step(1, n); }
__attribute__((noinline)) static void from_c(int n) { via(3, n); }

int main(void)
{
	for (int k = 0; k < 24; k++) {
		from_a(48);
		from_b(48);
		from_c(48);
	}
	return 0;
}
