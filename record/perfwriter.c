/* ptflame - record/perfwriter.c: perf.data writer (stub: being written). */
#include <errno.h>
#include <stdio.h>

#include "record/perfwriter.h"

int rc_perf_create(const char *path, struct rc_perf_writer **out, char *err, size_t errlen)
{
	*out = NULL;
	snprintf(err, errlen, "%s: perf.data writer not built yet", path);
	return -ENOSYS;
}
void rc_perf_abort(struct rc_perf_writer *w) { (void)w; }
