/* ptflame - flamegraph/diff: two folded profiles -> difffolded's 3 columns.
 *
 * Both inputs' plain stacks are sorted, so one merge pass writes the union
 * in order, 0 for the side a stack is missing from. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "flamegraph/flamegraph.h"

/* v * num / den without overflow, truncated. */
static uint64_t scale(uint64_t v, uint64_t num, uint64_t den)
{
	return den ? (uint64_t)((unsigned __int128)v * num / den) : v;
}

int fg_diff_write(FILE *out, const struct fg_folded *a, const struct fg_folded *b,
		  bool normalize)
{
	size_t i = 0, j = 0, na = fg_folded_count(a), nb = fg_folded_count(b);
	uint64_t ta = fg_folded_total(a), tb = fg_folded_total(b);
	bool scaled = normalize && ta != tb && ta;

	while (i < na || j < nb) {
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
		if (fprintf(out, "%s %" PRIu64 " %" PRIu64 "\n", s, va, vb) < 0)
			return -EIO;
	}
	return ferror(out) ? -EIO : 0;
}
