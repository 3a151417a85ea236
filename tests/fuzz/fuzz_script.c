/* ptflame - fuzz target: the perf script text importer
 * (decoder/script_parse.c, script_import.c) and what report does with its
 * events: the stack machine, then annotated folded output. Seeds: pieces
 * of the real `perf script` traces in ../shared/realtraces and perf's text
 * of emulated recordings (tests/fuzz/run.sh). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/script_import.h"
#include "flamegraph/flamegraph.h"
#include "stackrebuild/stackrebuild.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *in = fuzz_stream(data, size);
	struct dc_script *s = NULL;
	struct sr_machine *m = NULL;
	struct sr_cct *cct = NULL;
	struct sr_options so = { 0 };
	struct sr_symbolizer sym;
	struct dc_script_stats st;
	struct dc_event ev;
	const char *comm;
	int ret;

	if (!in)
		return 0;
	(void)dc_script_detect((const char *)data, size < 4096 ? size : 4096);
	if (dc_script_new(&s, in))
		goto out;
	sym = (struct sr_symbolizer){
		.ctx = s,
		.func_key = dc_script_func_key,
		.name = dc_script_name,
		.func_start = dc_script_func_start,
	};
	m = sr_machine_new(&sym, &so);
	if (!m)
		goto out;
	while ((ret = dc_script_next(s, &ev, &comm)) > 0) {
		if (comm && sr_machine_comm(m, ev.pid, ev.tid, comm, ev.time_ns))
			goto out;
		if (sr_machine_feed(m, &ev))
			goto out;
	}
	dc_script_get_stats(s, &st);
	if (ret < 0) {
		const char *msg = dc_script_errmsg(s, ret);

		if (!msg || !msg[0] || strchr(msg, '\n')) {
			fprintf(stderr, "fuzz_script: error %d has no one-line message\n", ret);
			abort();
		}
		goto out;
	}
	if (!sr_machine_finish(m, 0, &cct))
		fg_fold(fuzz_sink(), cct, &sym, NULL);
out:
	sr_cct_free(cct);
	sr_machine_free(m);
	dc_script_free(s);
	fclose(in);
	return 0;
}
