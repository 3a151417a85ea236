/* Emulator testdata: dlopen a library mid-trace and call into it (new
 * executable mappings while tracing). argv[1]: the library's path. */
#include <dlfcn.h>

static int local_work(int x)
{
	return x + 2;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return 3;
	int (*entry)(int) = (int (*)(int))dlsym(h, "plugin_entry");
	if (!entry)
		return 4;
	int s = local_work(1) + entry(3) + entry(4);
	return s == 38 ? 0 : 1;
}
