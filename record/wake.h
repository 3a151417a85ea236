/* ptflame - record/wake.h: where the recorders find the sched:sched_waking
 * tracepoint (tracefs). The wake record itself (attr, payload, sample) is
 * the writer's: record/perfwriter.h, "wake records". Internal header of the
 * record room. */
#ifndef PTFLAME_RECORD_WAKE_H
#define PTFLAME_RECORD_WAKE_H

#include <stddef.h>
#include <stdint.h>

/* The tracefs roots tried, in order, when none is given. */
#define RC_TRACEFS_ROOT "/sys/kernel/tracing"
#define RC_TRACEFS_ROOT_DEBUG "/sys/kernel/debug/tracing"

/* The id of sched:sched_waking: ROOT/events/sched/sched_waking/id (ROOT
 * NULL: RC_TRACEFS_ROOT, then RC_TRACEFS_ROOT_DEBUG). 0 and *id; or a
 * negative errno (-ENOENT: no tracefs there has the event, -EACCES: not
 * readable, -EINVAL: not a number) and *id = RC_WAKE_TP_ID_NONE. */
int rc_wake_tp_id(const char *root, uint64_t *id);

#endif
