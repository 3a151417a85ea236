/* Emulator testdata for inline frames (report's default, --no-inline):
 * built with -O2, `scale` (a static function with a loop and a call in it)
 * is forced inline into main, so its code holds no call or return of its
 * own; only the DWARF says which instructions are its. */
static volatile int sink;

__attribute__((noinline)) static int work(int x)
{
	int s = 0;

	for (int i = 0; i < x; i++)
		sink = s += i;
	return s;
}

static inline __attribute__((always_inline)) int scale(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++) {
		sink = i;          /* code of scale's own: the loop around the call */
		s += work(i + 2);
	}
	return s;
}

int main(int argc, char **argv)
{
	int s;

	(void)argv;
	sink = argc;
	s = work(3);
	s += scale(5 + argc);
	s += work(4);
	return s == 0;
}
