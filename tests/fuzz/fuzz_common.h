/* ptflame - tests/fuzz: what the libFuzzer targets share.
 * The readers under test take a path (they mmap the file) or a FILE, so an
 * input is handed to them as a memfd ("/proc/self/fd/N", one per process,
 * rewritten for every input) or as an fmemopen stream. */
#ifndef PTFLAME_FUZZ_COMMON_H
#define PTFLAME_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* The input as a file; its path stays valid until the next call. */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	size_t done = 0;

	if (fd < 0) {
		fd = memfd_create("ptflame-fuzz", MFD_CLOEXEC);
		if (fd < 0) {
			perror("memfd_create");
			abort();
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0)) {
		perror("ftruncate");
		abort();
	}
	while (done < size) {
		ssize_t n = pwrite(fd, data + done, size - done, (off_t)done);

		if (n <= 0) {
			perror("pwrite");
			abort();
		}
		done += (size_t)n;
	}
	return path;
}

/* Where the outputs go (written, never read back). */
static inline FILE *fuzz_sink(void)
{
	static FILE *f;

	if (!f && !(f = fopen("/dev/null", "w"))) {
		perror("/dev/null");
		abort();
	}
	return f;
}

/* A read-only stream over the input (NULL for an empty one: fmemopen
 * refuses size 0). */
static inline FILE *fuzz_stream(const uint8_t *data, size_t size)
{
	return size ? fmemopen((void *)data, size, "r") : NULL;
}

#endif
