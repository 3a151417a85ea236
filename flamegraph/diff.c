/* ptflame - flamegraph/diff: two folded profiles -> difffolded's 3 columns.
 *
 * Both inputs' plain stacks are sorted, so one merge pass writes the union
 * in order, 0 for the side a stack is missing from; the same pass feeds
 * the differential SVG. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "flamegraph/flamegraph.h"

/* v * num / den without overflow, truncated. */
static uint64_t scale(uint64_t v, uint64_t num, uint64_t den)
{
	return den ? (uint64_t)((unsigned __int128)v * num / den) : v;
}

/* Call fn for every stack of the union of a and b, in order, with its
 * value in each (A scaled to B's total when normalize). Stops at fn's
 * first non-zero return and returns it. */
static int diff_each(const struct fg_folded *a, const struct fg_folded *b, bool normalize,
		     int (*fn)(void *ctx, const char *stack, uint64_t va, uint64_t vb), void *ctx)
{
	size_t i = 0, j = 0, na = fg_folded_count(a), nb = fg_folded_count(b);
	uint64_t ta = fg_folded_total(a), tb = fg_folded_total(b);
	bool scaled = normalize && ta != tb && ta;
	int ret = 0;

	while ((i < na || j < nb) && !ret) {
		uint64_t va = 0, vb = 0;
		const char *sa = i < na ? fg_folded_stack(a, i, &va) : NULL;
		const char *sb = j < nb ? fg_folded_stack(b, j, &vb) : NULL;
		const char *s;
		int c = !sa ? 1 : !sb ? -1 : strcmp(sa, sb);

		if (c < 0) {
			s = sa;
			vb = 0;
			i++;
		} else if (c > 0) {
			s = sb;
			va = 0;
			j++;
		} else {
			s = sa;
			i++;
			j++;
		}
		if (scaled)
			va = scale(va, tb, ta);
		ret = fn(ctx, s, va, vb);
	}
	return ret;
}

static int write_line(void *ctx, const char *stack, uint64_t va, uint64_t vb)
{
	return fprintf(ctx, "%s %" PRIu64 " %" PRIu64 "\n", stack, va, vb) < 0 ? -EIO : 0;
}

int fg_diff_write(FILE *out, const struct fg_folded *a, const struct fg_folded *b,
		  bool normalize)
{
	int ret = diff_each(a, b, normalize, write_line, out);

	return ret ? ret : ferror(out) ? -EIO : 0;
}

static int add_diff(void *ctx, const char *stack, uint64_t va, uint64_t vb)
{
	return fg_svg_add_diff(ctx, stack, va, vb);
}

int fg_diff_svg(FILE *out, const struct fg_folded *a, const struct fg_folded *b,
		bool normalize, const struct fg_svg_options *opt)
{
	struct fg_svg *svg = fg_svg_new();
	int ret;

	if (!svg)
		return -ENOMEM;
	ret = diff_each(a, b, normalize, add_diff, svg);
	if (!ret)
		ret = fg_svg_write(svg, out, opt);
	fg_svg_free(svg);
	return ret;
}
