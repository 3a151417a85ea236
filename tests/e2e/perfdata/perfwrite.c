/* ptflame e2e helper: write the sample perf.data (tests/unit/test_perfdata_sample.c)
 * to OUT, for perf script to read; EXTRA: that many more COMM records.
 * With -z LEVEL: MAPS more MMAP2 records, compressed at LEVEL (0: not). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/test_perfdata_sample.h"

int main(int argc, char **argv)
{
	char err[512];
	int ret;

	if (argc == 5 && !strcmp(argv[1], "-z"))
		ret = smp_write_z(argv[3], (unsigned)atoi(argv[4]), atoi(argv[2]), err, sizeof(err));
	else if (argc == 2 || argc == 3)
		ret = smp_write_n(argv[1], argc == 3 ? (unsigned)atoi(argv[2]) : 0, err, sizeof(err));
	else {
		fprintf(stderr, "usage: perfwrite OUT [EXTRA_RECORDS] | perfwrite -z LEVEL OUT MAPS\n");
		return 2;
	}
	if (ret) {
		fprintf(stderr, "perfwrite: %s\n", err);
		return 1;
	}
	return 0;
}
