/* ptflame - flamegraph/: reading folded files, the 3-column diff, and the
 * latency tables of `report --table` / `diff --table`. Part of the room's
 * public interface (included by flamegraph/flamegraph.h); names fg_.
 */
#ifndef PTFLAME_FG_TABLE_H
#define PTFLAME_FG_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stackrebuild/stackrebuild.h"

/* ------------------------------------------------------------------------
 * Folded files: ours (annotated or plain) or any FlameGraph folded file.
 *
 * Each line is "frame;frame;... VALUE" (VALUE a decimal integer or decimal
 * fraction, rounded); identical stacks are summed. Annotated frames
 * "name:calls[(inferred)][,avg:ns]" keep their annotation for the table and
 * are reduced to the plain name for stacks (fg_frame_split()). Blank lines
 * and lines starting with '#' are skipped.
 */
struct fg_folded;

/* Read all of in. Returns 0, -ENOMEM, -EIO, -EBADMSG for a line that is
 * not folded, or -EOVERFLOW for the line whose value makes a stack's sum or
 * the total pass 2^64-1 (*bad_line, when not NULL, is its 1-based number). */
int fg_folded_read(FILE *in, struct fg_folded **out, size_t *bad_line);
void fg_folded_free(struct fg_folded *f);
size_t fg_folded_count(const struct fg_folded *f);      /* distinct stacks */
/* The i-th stack (plain names), sorted bytewise; its summed value. */
const char *fg_folded_stack(const struct fg_folded *f, size_t i, uint64_t *value);
uint64_t fg_folded_total(const struct fg_folded *f);
/* True when at least one frame carried a pt-flame annotation. */
bool fg_folded_annotated(const struct fg_folded *f);

/* A frame name's length without a trailing " (inlined)" (the symbolizer's
 * mark of code the compiler inlined): the function it is. */
size_t fg_frame_uninlined_len(const char *name, size_t len);
/* The plain stacks (fg_folded_stack, the diff and the differential SVG)
 * with every frame "X (inlined)" read as X: stacks that differ only in
 * what was inlined become one, their values summed, sorted again. The
 * annotated lines (the tables') are left as read. 0 or -ENOMEM. */
int fg_folded_merge_inlined(struct fg_folded *f);

/* ------------------------------------------------------------------------
 * Diff: FlameGraph's difffolded form, one line per stack of the union of
 * both inputs, sorted bytewise:  "stack VALUE_A VALUE_B"  (0 for a stack
 * missing on one side). normalize (-n): A's values are scaled by
 * total(B)/total(A) (truncated, as difffolded.pl -n does).
 * Returns 0, or -EIO when writing failed.
 */
int fg_diff_write(FILE *out, const struct fg_folded *a, const struct fg_folded *b,
		  bool normalize);

/* One input of a diff, for the notes on the pair: its path, its stacks
 * (stats when the diff is a table: its rows; else folded), whether the
 * file had no byte, and a trace's thread comms (none for folded input). */
struct fg_stats;
struct fg_diff_side {
	const char *path;
	const struct fg_folded *folded;
	const struct fg_stats *stats;
	bool empty;
	char *const *comms;
	size_t ncomms;
};

enum {
	FG_DIFF_NOTE_A_EMPTY = 1, FG_DIFF_NOTE_B_EMPTY = 2,
	FG_DIFF_NOTE_NO_COMM = 4, FG_DIFF_NOTE_NO_FUNCTION = 8,
};

/* Notes to f ("ptflame diff: note: ...") when A or B is an empty profile
 * (not said when filtered: the filters' own note did), A and B ran no comm
 * in common, or share no function name ([pseudo] frames aside; X and
 * "X (inlined)" are one after fg_folded_merge_inlined). Returns the
 * FG_DIFF_NOTE_* given. */
unsigned fg_diff_note_inputs(FILE *f, const struct fg_diff_side *a, const struct fg_diff_side *b,
			     bool filtered);
/* Whether B names a function that A names; *a_has: whether A names any. */
bool fg_diff_shares_function(const struct fg_diff_side *a, const struct fg_diff_side *b,
			     bool *a_has);

/* The same union drawn as a differential flame graph (fg_svg_add_diff):
 * widths are B's values, colours the change from A (red grew, blue shrank),
 * tooltips both values and the change. A stack only in A has no width in B
 * and is not drawn (swap A and B to see what went away). opt NULL:
 * defaults. Returns 0, -ENOMEM or -EIO. */
struct fg_svg_options;
int fg_diff_svg(FILE *out, const struct fg_folded *a, const struct fg_folded *b,
		bool normalize, const struct fg_svg_options *opt);

/* ------------------------------------------------------------------------
 * Per-function (or per-call-path) statistics of one run.
 *
 * From a CCT: calls, inferred calls, total (inclusive; a recursive function
 * counts once per outermost frame), self, and the merged latency histogram
 * of complete calls (so avg, p50, p90, p99 and max are those of individual
 * calls). From a folded file: self and total from the values, calls and avg
 * from annotations when present, and no histogram (percentiles unknown).
 * Pseudo-frames ([kernel], [off-cpu], ...) are rows like functions; thread
 * root frames ("comm-tid") are not.
 */
struct fg_stats;

enum fg_stats_key {
	FG_BY_FUNCTION = 0,     /* rows keyed by display name              */
	FG_BY_STACK,            /* rows keyed by call path "a;b;c"         */
};

int fg_stats_from_cct(const struct sr_cct *cct, const struct sr_symbolizer *sym,
		      enum fg_stats_key by, struct fg_stats **out);
/* The same of a CCT that kept part of the time (--oncpu, --offcpu): rows
 * of no such time are left out, avg is that time per call, and there are
 * no percentiles (the histograms are of whole calls' wall latency). */
int fg_stats_from_cct_part(const struct sr_cct *cct, const struct sr_symbolizer *sym,
			   enum fg_stats_key by, bool part, struct fg_stats **out);
int fg_stats_from_folded(const struct fg_folded *f, enum fg_stats_key by,
			 struct fg_stats **out);
/* The same; by stack, a line's frames deeper than max_stack (0:
 * SR_DEFAULT_MAX_STACK, as fg_stats_from_folded) are one row under the
 * last kept frame, "...;[truncated]", with their time (total and self)
 * and no calls: the rows are paths, and this bounds their size to
 * max_stack frames whatever the depth of a line. */
int fg_stats_from_folded_max(const struct fg_folded *f, enum fg_stats_key by,
			     uint32_t max_stack, struct fg_stats **out);
/* Flags of the _flags forms. */
enum {
	FG_STATS_PART = 1,            /* fg_stats_from_cct_part's part (CCT only) */
	FG_STATS_INLINED_AS_FUNC = 2, /* a frame "X (inlined)" counts as X: one
	                                 row for a function inlined or not (by
	                                 stack: in the path too), as diff
	                                 matches them; calls, times and
	                                 latencies of both summed */
};
int fg_stats_from_cct_flags(const struct sr_cct *cct, const struct sr_symbolizer *sym,
			    enum fg_stats_key by, unsigned flags, struct fg_stats **out);
int fg_stats_from_folded_flags(const struct fg_folded *f, enum fg_stats_key by,
			       uint32_t max_stack, unsigned flags, struct fg_stats **out);
void fg_stats_free(struct fg_stats *st);

struct fg_row {
	const char *name;        /* function name, or "a;b;c" by stack      */
	uint64_t calls;          /* complete + inferred                     */
	uint64_t inferred;
	uint64_t total_ns, self_ns;
	bool has_avg;            /* some complete call (or an annotation)   */
	uint64_t avg_ns;         /* mean over complete calls, rounded       */
	bool has_hist;           /* percentiles and max known               */
	const struct sr_hist *hist;  /* when has_hist                       */
	const char *srcline;     /* "file:line" when the symbolizer gives one
	                            (sr_symbolizer.srcline), else NULL      */
	bool no_calls;           /* calls unknown: a folded file without
	                            annotations (its values need not be ns:
	                            the table prints them without a unit)  */
};

size_t fg_stats_count(const struct fg_stats *st);
const struct fg_row *fg_stats_row(const struct fg_stats *st, size_t i);
/* The row named name, NULL when none. */
const struct fg_row *fg_stats_find(const struct fg_stats *st, const char *name);

/* ------------------------------------------------------------------------
 * The table. One run (b NULL): one line per row with calls, inferred,
 * total, self, avg, p50, p90, p99, max. Two runs, to fit 120 columns: the
 * sort metric for A and B, its change (B - A) and the change in percent of
 * A ("new" when A is 0), then A and B of two more of total, avg and calls
 * (those that are not the sort metric); rows matched by name, a row missing
 * on one side counts as zero there ("-" where a value is unknown). The
 * numbers take at most 92 columns (times under 1000 s, counts under 10^10),
 * so names up to 28 columns fit in 120. Percentiles and max come from the
 * histograms; "-" when an input has none (folded).
 */
enum fg_sort {
	FG_SORT_TOTAL = 0,
	FG_SORT_SELF,
	FG_SORT_AVG,
	FG_SORT_P99,
	FG_SORT_CALLS,
};

/* One run's table for scripts (report --table --format): the same rows in
 * the same order as the text table, times in plain ns.
 *   csv:  a header line "function,calls,inferred,total_ns,self_ns,avg_ns,
 *         p50_ns,p90_ns,p99_ns,max_ns[,source]", then one line per row; an
 *         unknown value is empty; a field holding ',', '"' or a line break
 *         is quoted ("" inside), as RFC 4180 says.
 *   json: {"rows":[{"function":NAME,"calls":N,...,"max_ns":N|null
 *         [,"source":S|null]},...]}, names escaped, unknown values null. */
enum fg_table_format {
	FG_TABLE_TEXT = 0,
	FG_TABLE_CSV,
	FG_TABLE_JSON,
};

struct fg_table_options {
	enum fg_sort sort;       /* one run: largest value first; two runs:
	                            largest absolute change first           */
	size_t top;              /* print at most this many rows (0: all)   */
	bool raw;                /* plain ns instead of ns/µs/ms/s          */
	bool srcline;            /* one run: each row's file:line after it  */
	enum fg_table_format format; /* one run only; two runs are text     */
};

/* 0, -ENOMEM, or -EIO when writing failed. */
int fg_table_write(FILE *out, const struct fg_stats *a, const struct fg_stats *b,
		   const struct fg_table_options *opt);

/* report --table --wakers: the wake edges of a CCT (sr_cct_wake_edges),
 * one row per wait site (the innermost user frame of a thread when it
 * blocked) and waker site (the innermost frame of the waker's stack at the
 * wake; "[woken by COMM-TID]" when it had none traced; "[no wake record]"
 * for the blocked time no wake ended): the waits, their blocked time in
 * total, avg, p50 and p99 of one wait's. opt: sort (total, the default;
 * self is total; avg; p99; calls: the waits), top, raw, format (csv:
 * "wait_site,waker_site,waits,total_ns,avg_ns,p50_ns,p99_ns"; json:
 * {"edges":[{"wait_site":S,"waker_site":S,"waits":N,"total_ns":N,...}]}).
 * A CCT without edges gives the header alone. 0, -ENOMEM or -EIO. */
int fg_wake_table_write(FILE *out, const struct sr_cct *cct, const struct sr_symbolizer *sym,
			const struct fg_table_options *opt);

/* "1.234 ms" style: 3 significant decimals, unit ns, µs, ms or s. Returns
 * the length like snprintf. */
int fg_format_ns(char *buf, size_t n, uint64_t ns);
/* Columns s takes on a terminal: its UTF-8 characters ("µs" is 2, in 3
 * bytes), for padding what fg_format_ns wrote. */
size_t fg_text_width(const char *s);

/* Parse a --sort argument; false when unknown. */
bool fg_sort_parse(const char *s, enum fg_sort *out);

#endif
