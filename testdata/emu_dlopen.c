/* Emulator testdata: dlopen a library mid-trace and call into it (new
 * executable mappings while tracing). argv[1]: the library's path (without
 * it, only local code runs). Exits 0 when the calls gave the expected sum
 * (ptflame record exits with the program's status). */
#include <dlfcn.h>

static int local_work(int x)
{
	return x + 2;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return local_work(1) == 3 ? 0 : 1;
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return 3;
	int (*entry)(int) = (int (*)(int))dlsym(h, "plugin_entry");
	if (!entry)
		return 4;
	int s = local_work(1) + entry(3) + entry(4);
	return s == 3 + 16 + 21 ? 0 : 1;  /* local_work(1), entry(3), entry(4) */
}
