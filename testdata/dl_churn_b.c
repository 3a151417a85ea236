/* The second library of dl_churn: other code than emu_plugin's, laid out
 * longer, at the same offsets where dl_churn maps it over that one. */
__attribute__((noinline)) static int twice(int x)
{
	return 2 * x;
}

__attribute__((noinline)) static int mix(int x)
{
	int s = 0;

	for (int i = 0; i < 8; i++)
		s += twice(x + i) ^ (s >> 1);
	return s;
}

int plugin_entry(int x)
{
	return mix(x) + twice(x) + 1;
}
