/* ptflame - flamegraph/timeline: every call of every thread as a Chrome
 * trace-event JSON timeline (report --timeline), part of flamegraph.h.
 *
 * The stack machine hands each call over as it ends (sr_options.on_call,
 * fg_timeline_call); the writer formats it at once into its thread's
 * buffer, and a full buffer (FG_TIMELINE_BUF bytes) goes to a spool file, so
 * memory holds at most one buffer per thread, never the trace. At the end
 * fg_timeline_write() prints the JSON object: "M" metadata events naming
 * each process and thread, then each thread's "X" complete events, threads
 * by (pid, tid) and each thread's in the order its calls ended (a call after
 * every call inside it). The output is the same whatever the order in
 * which machines of different threads handed calls in; fg_timeline_call may
 * be called from several threads at once.
 *
 * One event: {"ph":"X","name":NAME,"cat":CAT,"pid":P,"tid":T,"ts":US,
 * "dur":US} with ts/dur in microseconds with 3 decimals (exact ns), cat
 * "call" for functions, "kernel", "off-cpu", "preempted", "lost",
 * "untraced", "truncated" for the pseudo-frames, and "args":{"inferred":1}
 * for a call whose start or end was not seen (or cut by --time). Events of
 * one thread nest: a call lies within its caller. With report --wakers an
 * [off-cpu] span that a wake ended has "args":{"woken by tid":TID,
 * "wake ts":US} and is followed by a flow arrow, {"ph":"s",...,"cat":"wake",
 * "id":ID,"pid":WAKER_PID,"tid":WAKER_TID,"ts":WAKE_US} and {"ph":"f",
 * "bp":"e",...,"ts":US} 1 ns before the span's end, ID = tid << 30 | the
 * thread's count of arrows.
 */
#ifndef PTFLAME_FG_TIMELINE_H
#define PTFLAME_FG_TIMELINE_H

#include <stdint.h>
#include <stdio.h>

#include "stackrebuild/stackrebuild.h"

#define FG_TIMELINE_BUF (16u << 10)

struct fg_timeline_options {
	uint64_t min_ns;          /* drop calls shorter than this            */
	unsigned keep_time;       /* SR_KEEP mask (--oncpu / --offcpu): a call
	                             without time of a kept kind is dropped,
	                             a span of a kept kind ([kernel],
	                             [off-cpu], ...) kept; 0: all            */
};

struct fg_timeline;

/* spool: a read-write file for full buffers (an unlinked temporary file);
 * the timeline does not close it. opt may be NULL. NULL on ENOMEM. */
struct fg_timeline *fg_timeline_new(FILE *spool, const struct fg_timeline_options *opt);
void fg_timeline_free(struct fg_timeline *tl);
/* An sr_options.on_call callback (ctx: the timeline). Applies --root
 * (in_root), --comm (selected), min_ns and keep_time. 0, -ENOMEM or -EIO. */
int fg_timeline_call(void *ctx, const struct sr_call *call);
/* The whole JSON to out. cct gives thread and process names and which
 * threads passed --comm (NULL: every thread, names "tid N"). Calls handed
 * in after this are refused. 0, -ENOMEM or -EIO. */
int fg_timeline_write(struct fg_timeline *tl, FILE *out, const struct sr_cct *cct);
/* Events written so far (for tests and messages). */
uint64_t fg_timeline_events(const struct fg_timeline *tl);

#endif
