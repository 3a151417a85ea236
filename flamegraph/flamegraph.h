/* ptflame - flamegraph/: the room's one public header. Names prefixed fg_.
 * Reads only the calling-context tree (stackrebuild.h). */
#ifndef PTFLAME_FLAMEGRAPH_H
#define PTFLAME_FLAMEGRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "stackrebuild/stackrebuild.h"
#include "flamegraph/svg.h"
#include "flamegraph/table.h"
#include "flamegraph/timeline.h"
#include "flamegraph/slowest.h"

const char *fg_room_name(void);

/* ------------------------------------------------------------------------
 * Folded output (FlameGraph's stackcollapse format).
 *
 * One line per distinct stack whose self time is > 0 and >= min_ns:
 *     frame;frame;...;frame VALUE
 * root first, VALUE = self nanoseconds as a decimal integer. Lines come in
 * tree order, printed as they are found (nothing is held but the current
 * path and one level's names): a stack before its callees, the frames of
 * each level sorted bytewise. Nodes that print as the same frame are one
 * frame: calls, latencies, time and callees added up (as the tables do).
 * Annotated output also has a "... 0" line for each leaf context that has
 * calls but no time (when min_ns is 0 and all the time is kept), so every
 * counted call shows.
 *
 * Annotated frames (FG_FOLD_ANNOTATED, the default, pt-flame compatible):
 *     frame    = name [ ":" calls ( "(inferred)" | ",avg:" avg ) ]
 *     calls    = decimal, every call of this context (complete + inferred)
 *     avg      = decimal ns, mean wall latency of the COMPLETE calls,
 *                rounded to nearest
 * ",avg:" is written when at least one call is complete; "(inferred)" when
 * calls > 0 but none is complete (start or end never seen). Frames with no
 * calls are the bare name: thread roots "comm-tid" (--per-thread) and
 * "[unknown]" (traced time of a thread with no stack at all). Examples:
 *     main:1(inferred);work:12,avg:1534;[kernel] write:12,avg:800 9600
 * A name may itself contain ':' (C++ "ns::f"): parse annotations from the
 * right (see fg_frame_split()).
 * FG_FOLD_PLAIN: bare names only.
 *
 * Names are sanitized (fg_frame_sanitize()) so every line fits
 * flamegraph.pl's input grammar (fg_folded_line_valid()).
 */
enum fg_fold_style {
	FG_FOLD_ANNOTATED = 0,
	FG_FOLD_PLAIN,
};

struct fg_fold_options {
	enum fg_fold_style style;
	uint64_t min_ns;          /* drop lines whose self time is below this */
	bool part;                /* the CCT kept part of the time (--oncpu,
	                             --offcpu): no "... 0" lines of calls with
	                             none of that time */
	/* Optional: called for every frame as it is folded (also one with no
	 * line of its own), with its folded path as the lines show it (root
	 * first, annotated per style) and the latency histogram of its
	 * complete calls (all its nodes merged). Non-zero stops the fold and
	 * is returned. The SVG's tooltips take their distributions here. */
	int (*on_frame)(void *ctx, const char *path, const struct sr_hist *lat);
	void *frame_ctx;
};

/* opt NULL: annotated, no minimum. sym NULL: the CCT's symbolizer.
 * Returns 0, -ENOMEM, or -EIO when writing failed. */
int fg_fold(FILE *out, const struct sr_cct *cct, const struct sr_symbolizer *sym,
	    const struct fg_fold_options *opt);

/* Make a display name safe as one folded frame: ';' becomes '_', control
 * characters (newline, tab, ...) become '?', whitespace at the end becomes
 * '_' (so no frame ends in whitespace, hence never in "whitespace digits"),
 * an empty name becomes "[unknown]". Writes at most dstsz bytes including
 * the NUL (truncating); returns the length the full result has (like
 * snprintf). */
size_t fg_frame_sanitize(char *dst, size_t dstsz, const char *name);

/* Split an annotated frame (frame[0..len)) into its parts. Returns true when
 * it carries an annotation; *name_len is then the length of the name part.
 * has_avg false: avg_ns is 0 and the frame was "(inferred)". Returns false
 * for a bare name (*name_len = len, calls 0). Any out pointer may be NULL. */
bool fg_frame_split(const char *frame, size_t len, size_t *name_len,
		    uint64_t *calls, bool *has_avg, uint64_t *avg_ns);

/* True when line (without or with its trailing '\n') is one valid folded
 * line: a non-empty stack of non-empty frames separated by ';', no control
 * characters, one space, a decimal integer value, and no frame ending in
 * whitespace (so flamegraph.pl and difffolded.pl read exactly one value). */
bool fg_folded_line_valid(const char *line);

#endif
