/* Emulator testdata: the library emu_dlopen loads at run time. */
static int helper(int x)
{
	return x * 5;
}

int plugin_entry(int x)
{
	return helper(x) + 1;
}
