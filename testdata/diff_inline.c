/* diff_inline: one program built twice (tests/e2e/diff/cli.sh), the same
 * code but for helper's inlining: noinline, or (-DINLINED) always_inline,
 * where report shows it as "helper (inlined)" frames from the DWARF. diff
 * must see no change of helper's time or calls between the two. */
static volatile long sink;

#ifdef INLINED
static inline __attribute__((always_inline))
#else
__attribute__((noinline))
#endif
void helper(int n)
{
	for (int i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline)) void caller(void)
{
	helper(3000);
	sink++;
}

int main(void)
{
	for (int k = 0; k < 3; k++)
		caller();
	return 0;
}
