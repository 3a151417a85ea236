/* ptflame - fuzz target: the folded reader (flamegraph/folded_read.c) and
 * what diff and tables do with a folded file: the 3-column diff, per-function
 * and per-stack tables, the SVG. Seeds: folded output of `ptflame report`
 * on emulated recordings (tests/fuzz/run.sh). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph/flamegraph.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* max_stack: 0 (the default, 1024 frames) or 1 to 64. By stack, a row is
 * a path of up to max_stack frames, so a deep line makes max_stack^2/2
 * frames of rows, hashed, sorted and written twice: a 2 KB line of 2,040
 * frames took 17 ms a run at 1024, 4.6 ms at 30 (the rest is its SVG);
 * 1 to 64 reach the same code, and bounds the default never tries. */
static void tables(const struct fg_folded *f, enum fg_stats_key by, uint32_t max_stack)
{
	struct fg_stats *st = NULL;
	struct fg_table_options to = { .sort = FG_SORT_P99, .raw = by == FG_BY_STACK };

	if (fg_stats_from_folded_max(f, by, max_stack, &st))
		return;
	fg_table_write(fuzz_sink(), st, NULL, &to);
	fg_table_write(fuzz_sink(), st, st, NULL);
	fg_stats_free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *in = fuzz_stream(data, size);
	struct fg_folded *f = NULL;
	struct fg_svg *svg;
	size_t bad = 0;

	if (!in)
		return 0;
	if (fg_folded_read(in, &f, &bad)) {
		fclose(in);
		return 0;
	}
	fclose(in);
	svg = fg_svg_new();
	for (size_t i = 0; i < fg_folded_count(f); i++) {
		uint64_t v;
		const char *stack = fg_folded_stack(f, i, &v);

		if (!stack || (i && strcmp(fg_folded_stack(f, i - 1, NULL), stack) >= 0)) {
			fprintf(stderr, "fuzz_folded: stacks not sorted and distinct at %zu\n", i);
			abort();
		}
		if (svg)
			fg_svg_add(svg, stack, v);
	}
	(void)fg_folded_total(f);
	(void)fg_folded_annotated(f);
	fg_diff_write(fuzz_sink(), f, f, false);
	fg_diff_write(fuzz_sink(), f, f, true);
	/* the bound comes from the input's length: each is tried */
	tables(f, FG_BY_FUNCTION, (uint32_t)(size % 65));
	tables(f, FG_BY_STACK, (uint32_t)(size % 65));
	if (svg)
		fg_svg_write(svg, fuzz_sink(), NULL);
	fg_svg_free(svg);
	fg_folded_free(f);
	return 0;
}
