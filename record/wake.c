/* ptflame - record/wake.c: the sched:sched_waking tracepoint's id (wake.h). */
#include "record/wake.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "record/perfwriter.h"

static int read_id(const char *root, uint64_t *id)
{
	char fn[4096], line[64], *end;
	FILE *f;

	snprintf(fn, sizeof(fn), "%s/events/sched/sched_waking/id", root);
	f = fopen(fn, "re");
	if (!f)
		return errno == EACCES || errno == EPERM ? -EACCES : -ENOENT;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -EINVAL;
	}
	fclose(f);
	errno = 0;
	unsigned long long v = strtoull(line, &end, 10);
	if (errno || end == line || (*end && *end != '\n') || v == 0 || v > 0xffff)
		return -EINVAL;  /* common_type is a u16 */
	*id = v;
	return 0;
}

int rc_wake_tp_id(const char *root, uint64_t *id)
{
	int rc;

	*id = RC_WAKE_TP_ID_NONE;
	if (root)
		rc = read_id(root, id);
	else if ((rc = read_id(RC_TRACEFS_ROOT, id)) == -ENOENT)
		rc = read_id(RC_TRACEFS_ROOT_DEBUG, id);
	if (rc)
		*id = RC_WAKE_TP_ID_NONE;
	return rc;
}
