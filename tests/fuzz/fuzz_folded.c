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

static void tables(const struct fg_folded *f, enum fg_stats_key by)
{
	struct fg_stats *st = NULL;
	struct fg_table_options to = { .sort = FG_SORT_P99, .raw = by == FG_BY_STACK };

	if (fg_stats_from_folded(f, by, &st))
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
	tables(f, FG_BY_FUNCTION);
	tables(f, FG_BY_STACK);
	if (svg)
		fg_svg_write(svg, fuzz_sink(), NULL);
	fg_svg_free(svg);
	fg_folded_free(f);
	return 0;
}
