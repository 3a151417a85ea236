/* ptflame - flamegraph/svg: draw a flame graph (root at the bottom) or an
 * icicle graph (root at the top) as one self-contained, interactive SVG from
 * folded stacks. Part of flamegraph.h.
 *
 * The file embeds its script (flamegraph/svg_script.js): click a frame to
 * zoom into it (it then spans the full width, its ancestors stay as full
 * width bars), "Reset Zoom" (or click the bottom frame) to go back; "Search"
 * (or Ctrl-F) asks for a regular expression, highlights the frames whose
 * name matches and shows the share of all time they cover ("Matched: P%",
 * a frame under another match counted once); Escape clears the search.
 * Every frame has a tooltip: name, time and share, calls and average
 * latency when the folded frame was annotated (name:calls,avg:NS).
 *
 * Colours say what a frame is, with a legend: on-CPU code (warm, per name),
 * [kernel], [off-cpu], [preempted], [lost], [unknown] and [untraced] (frames
 * named so, or starting with that and a space: "[kernel] write") each in a
 * colour family of their own. A differential graph (fg_svg_add_diff) is
 * drawn with the after values and coloured by change: red grew, blue
 * shrank, the deeper the more, as difffolded.pl + flamegraph.pl do.
 */
#ifndef PTFLAME_FG_SVG_H
#define PTFLAME_FG_SVG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct fg_svg;

struct fg_svg_options {
	const char *title;     /* NULL: "Flame Graph" ("Icicle Graph" inverted,
	                          "Differential Flame Graph" for a diff)     */
	const char *subtitle;  /* NULL: none                                 */
	const char *unit;      /* value unit; NULL: "ns" (times formatted)   */
	unsigned width;        /* image width in px; 0: 1200                 */
	double min_width_px;   /* frames narrower are omitted; 0: 0.1;
	                          negative: only frames without time       */
	bool inverted;         /* icicle graph: root at the top              */
};

/* Collect stacks, then draw once. Frames are split at ';'. */
struct fg_svg *fg_svg_new(void);
void fg_svg_free(struct fg_svg *svg);
/* Add VALUE to the stack "a;b;c". Returns 0 or -ENOMEM. */
int fg_svg_add(struct fg_svg *svg, const char *stack, uint64_t value);
/* Differential: the stack had BEFORE in the first run and AFTER in the
 * second. Widths are the after values; the colour is the change. Returns 0
 * or -ENOMEM. */
int fg_svg_add_diff(struct fg_svg *svg, const char *stack, uint64_t before, uint64_t after);
/* The latency distribution of the frame at stack "a;b;c" (as the folded
 * lines name it; merged into what it has). The frame's tooltip then gives
 * its p50, p90, p99 and max and draws its histogram in log2 buckets, one
 * block character each (lowest to highest bucket, height by count). A
 * stack that never gets a value is not drawn. 0 or -ENOMEM. */
struct sr_hist;
int fg_svg_add_hist(struct fg_svg *svg, const char *stack, const struct sr_hist *h);
/* Parse one folded line "a;b;c 123" (the last column is the value).
 * Returns 0, -EINVAL for a line that is not folded, or -ENOMEM. */
int fg_svg_add_line(struct fg_svg *svg, const char *line);
/* Write the SVG. Returns 0, -ENOMEM or -EIO. */
int fg_svg_write(struct fg_svg *svg, FILE *out, const struct fg_svg_options *opt);

/* Parse a --minwidth argument: pixels, 0 or more (0: omit nothing, stored
 * as -1). 0 or -EINVAL. */
int fg_svg_parse_minwidth(const char *s, double *px);

/* The width in px of n characters of frame label text (the SVG's font);
 * labels are cut to fit their frame with "..". */
double fg_svg_text_width(size_t n);

#endif
