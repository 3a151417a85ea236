/* ptflame - fuzz target: the whole report pipeline on a perf.data, as
 * `ptflame report -i FILE` runs it (cmd/report_pipeline.c): sideband, symbols
 * of the binaries the recording names, libipt decoding, the stack machine,
 * then every output (annotated and plain folded, the table, the SVG).
 * Seeds: emulated recordings of testdata programs (tests/fuzz/run.sh). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/report_pipeline.h"
#include "flamegraph/flamegraph.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every frame of an annotated line carries its calls, except "[unknown]"
 * (there are no thread roots without --per-thread): a frame with callees
 * and no call is the stack machine's mistake (flamegraph.h's grammar). */
static bool all_annotated(const char *line)
{
	const char *end = strrchr(line, ' '), *f = line;

	while (end && f < end) {
		const char *semi = memchr(f, ';', (size_t)(end - f));
		size_t len = (size_t)((semi ? semi : end) - f);

		if (!fg_frame_split(f, len, NULL, NULL, NULL, NULL) &&
		    !(len == 9 && !memcmp(f, "[unknown]", 9)))
			return false;
		f += len + 1;
	}
	return true;
}

static void outputs(const struct report_run *r)
{
	const struct sr_cct *cct = report_cct(r);
	const struct sr_symbolizer *sym = report_symbolizer(r);
	struct fg_fold_options plain = { .style = FG_FOLD_PLAIN };
	struct fg_stats *st = NULL;
	struct fg_svg *svg;
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *mem;

	fg_fold(fuzz_sink(), cct, sym, &plain);
	if (!fg_stats_from_cct(cct, sym, FG_BY_FUNCTION, &st))
		fg_table_write(fuzz_sink(), st, NULL, NULL);
	fg_stats_free(st);
	st = NULL;
	if (!fg_stats_from_cct(cct, sym, FG_BY_STACK, &st))
		fg_table_write(fuzz_sink(), st, st, NULL);
	fg_stats_free(st);
	/* annotated folded, checked against its grammar, then drawn */
	mem = open_memstream(&buf, &len);
	if (!mem)
		abort();
	if (fg_fold(mem, cct, sym, NULL)) {
		fclose(mem);
		free(buf);
		return;
	}
	fclose(mem);
	svg = fg_svg_new();
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!fg_folded_line_valid(line) || !all_annotated(line)) {
			fprintf(stderr, "fuzz_report: report wrote a line that is not annotated folded: %s\n",
				line);
			abort();
		}
		if (svg)
			fg_svg_add_line(svg, line);
	}
	if (svg)
		fg_svg_write(svg, fuzz_sink(), NULL);
	fg_svg_free(svg);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report_opts opt = {
		.input = fuzz_file(data, size),
		.format = REPORT_INPUT_PERF,
		.quiet = true,
		.cmd = "report",
		.jobs = 2,     /* one decode-ahead worker, on any machine */
	};
	struct report_run *r = NULL;
	char err[512];

	/* the perf.data path only; perf script text is fuzz_script's */
	if (size < 8 || memcmp(data, "PERFILE2", 8))
		return -1;
	if (report_run(&opt, &r, err, sizeof(err))) {
		if (!err[0] || strchr(err, '\n')) {
			fprintf(stderr, "fuzz_report: an error that is not one line: '%s'\n", err);
			abort();
		}
		return 0;
	}
	outputs(r);
	report_run_free(r);
	return 0;
}
