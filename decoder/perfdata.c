/* ptflame - decoder/perfdata.c: perf.data reader (stub: being written). */
#include <errno.h>
#include <stdio.h>

#include "decoder/perfdata.h"

int dc_perf_open(const char *path, struct dc_perf_file **out, char *err, size_t errlen)
{
	*out = NULL;
	snprintf(err, errlen, "%s: perf.data reader not built yet", path);
	return -ENOSYS;
}
void dc_perf_close(struct dc_perf_file *f) { (void)f; }
const char *dc_perf_errmsg(const struct dc_perf_file *f) { (void)f; return ""; }
