/* ptflame e2e helper: write the sample perf.data (tests/unit/test_perfdata_sample.c)
 * to argv[1], for perf script to read. */
#include <stdio.h>

#include "tests/unit/test_perfdata_sample.h"

int main(int argc, char **argv)
{
	char err[512];

	if (argc != 2) {
		fprintf(stderr, "usage: perfwrite OUT\n");
		return 2;
	}
	if (smp_write(argv[1], err, sizeof(err))) {
		fprintf(stderr, "perfwrite: %s\n", err);
		return 1;
	}
	return 0;
}
