/* ptflame - flamegraph/slowest: report --slowest N FUNC, the N slowest
 * single calls of a function and what each spent its time on; part of
 * flamegraph.h.
 *
 * Fed with every call as it ends (sr_options.on_call, fg_slowest_call).
 * Calls made under a call of FUNC are kept (per thread, in the order they
 * ended) until that call of FUNC ends; then, when it is complete and among
 * the N longest so far, its subtree is made from them: the calls inside it
 * grouped by calling context, with their count, total time and first
 * start. Memory: the N subtrees, and the calls inside the open calls of
 * FUNC (at most FG_SLOWEST_MAX_KEPT per thread; a subtree past that is
 * marked cut). Several machines may feed it at once.
 *
 * Output, per call, slowest first:
 *   #R FUNC DURATION, tid TID (COMM), at START,END   (as --time takes it)
 *      on-CPU X (user U, kernel K), off-CPU O (blocked B, preempted P)[, lost L]
 *      OFFSET DURATION CALLS  NAME   (indented two spaces per level, the
 *                                     call itself first)
 * OFFSET is "+T" from the call's start to the context's first call,
 * DURATION the contexts' calls' total, CALLS their number.
 */
#ifndef PTFLAME_FG_SLOWEST_H
#define PTFLAME_FG_SLOWEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stackrebuild/stackrebuild.h"

#define FG_SLOWEST_MAX_KEPT 200000
#define FG_SLOWEST_MAX_LINES 1000

struct fg_slowest;

/* n: how many calls (>= 1); func: the function, matched as --root matches
 * (the name, or a C++ name up to its '('). NULL on ENOMEM. */
struct fg_slowest *fg_slowest_new(size_t n, const char *func);
void fg_slowest_free(struct fg_slowest *s);
/* An sr_options.on_call callback (ctx: the fg_slowest). Honours --root
 * (in_root) and --comm (selected). 0 or -ENOMEM. */
int fg_slowest_call(void *ctx, const struct sr_call *call);
/* The report. cct: thread names (may be NULL). raw: plain ns. 0, -ENOMEM,
 * -EIO. */
int fg_slowest_write(const struct fg_slowest *s, FILE *out, const struct sr_cct *cct, bool raw);
/* Complete calls of FUNC seen. */
uint64_t fg_slowest_calls(const struct fg_slowest *s);

#endif
