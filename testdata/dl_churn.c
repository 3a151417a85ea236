/* dl_churn A B N: N rounds of dlopen, call, dlclose, of library A and B in
 * turn. perf records no munmap, so each library's mapping stays in the
 * sideband until the next one is mapped over it (most often at the same
 * address, B's code where A's was): the process's image changes at every
 * round, by mappings that end as well as new ones (decoder/session.c
 * image_patch; tests/e2e/decode/truth.sh). A's file is also mapped whole,
 * executable, once, and its plugin_entry called there at every round: a
 * second mapping of A's file that lives on while the other ends. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef int (*entry_fn)(int);

/* A's plugin_entry in a mapping of A's whole file (its text's file offset
 * is its address less the load base, as the linker lays small libraries
 * out), or NULL */
static entry_fn alias_of(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL), *entry, *at;
	int fd = open(path, O_RDONLY);
	struct stat st;
	Dl_info info;
	entry_fn f = NULL;

	if (h && fd >= 0 && !fstat(fd, &st) && (entry = dlsym(h, "plugin_entry")) &&
	    dladdr(entry, &info) &&
	    (at = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0)) !=
		    MAP_FAILED)
		f = (entry_fn)(void *)((char *)at + ((char *)entry - (char *)info.dli_fbase));
	if (fd >= 0)
		close(fd);
	if (h)
		dlclose(h);
	return f;
}

int main(int argc, char **argv)
{
	int n = argc > 3 ? atoi(argv[3]) : 8, s = 0;

	entry_fn alias;

	if (argc < 3 || !(alias = alias_of(argv[1])))
		return 2;
	for (int i = 0; i < n; i++) {
		void *h = dlopen(argv[1 + (i & 1)], RTLD_NOW | RTLD_LOCAL);
		entry_fn entry;

		if (!h)
			return 3;
		entry = (entry_fn)dlsym(h, "plugin_entry");
		if (!entry)
			return 4;
		s += entry(i) + alias(i);
		dlclose(h);
	}
	return s > 0 ? 0 : 1;
}
