/* ptflame - flamegraph/svg: draw an icicle-free, classic bottom-up flame
 * graph as a self-contained SVG from folded stacks. Part of flamegraph.h. */
#ifndef PTFLAME_FG_SVG_H
#define PTFLAME_FG_SVG_H

#include <stdint.h>
#include <stdio.h>

struct fg_svg;

struct fg_svg_options {
	const char *title;     /* NULL: "Flame Graph"                        */
	const char *subtitle;  /* NULL: none                                 */
	const char *unit;      /* value unit for tooltips; NULL: "ns"        */
	unsigned width;        /* 0: 1200 px                                 */
	double min_width_px;   /* frames narrower than this are omitted; 0: 0.1 */
};

/* Collect stacks, then draw once. Frames are split at ';'. */
struct fg_svg *fg_svg_new(void);
void fg_svg_free(struct fg_svg *svg);
/* Add VALUE to the stack "a;b;c". Returns 0 or -ENOMEM. */
int fg_svg_add(struct fg_svg *svg, const char *stack, uint64_t value);
/* Parse one folded line "a;b;c 123" (the last column is the value).
 * Returns 0, -EINVAL for a line that is not folded, or -ENOMEM. */
int fg_svg_add_line(struct fg_svg *svg, const char *line);
/* Write the SVG. Returns 0 or -EIO. */
int fg_svg_write(const struct fg_svg *svg, FILE *out, const struct fg_svg_options *opt);

#endif
