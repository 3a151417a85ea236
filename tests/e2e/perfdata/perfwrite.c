/* ptflame e2e helper: write the sample perf.data (tests/unit/test_perfdata_sample.c)
 * to argv[1], for perf script to read; argv[2]: that many more COMM records. */
#include <stdio.h>
#include <stdlib.h>

#include "tests/unit/test_perfdata_sample.h"

int main(int argc, char **argv)
{
	char err[512];

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: perfwrite OUT [EXTRA_RECORDS]\n");
		return 2;
	}
	if (smp_write_n(argv[1], argc == 3 ? (unsigned)atoi(argv[2]) : 0, err, sizeof(err))) {
		fprintf(stderr, "perfwrite: %s\n", err);
		return 1;
	}
	return 0;
}
