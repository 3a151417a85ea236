/* ptflame - fuzz target: the perf.data reader (decoder/perfdata.c).
 * Opens the input, walks every record of the data section, parses every
 * record the AUXTRACE index names (dc_perf_read_at) and every feature the
 * reader parses. Seeds: emulated recordings of testdata programs and real
 * PT recordings (tests/fuzz/run.sh). */
#include <stdint.h>
#include <string.h>

#include "decoder/perfdata.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dc_perf_file *f;
	struct dc_perf_record rec;
	const struct pf_auxtrace_index_entry *idx;
	const char *const *argv;
	char err[512];
	size_t n, argc;
	uint32_t avail, online;
	uint64_t fsize;
	unsigned records = 0;

	/* (the last byte picks dump's reading of a data section cut short) */
	if (dc_perf_open_cut(fuzz_file(data, size), size && (data[size - 1] & 1), &f, err,
			     sizeof(err)))
		return 0;
	dc_perf_nrcpus(f, &avail, &online);
	if (!dc_perf_cmdline(f, &argc, &argv))
		for (size_t i = 0; i < argc; i++)
			(void)strlen(argv[i]);
	for (size_t i = 0; i < dc_perf_nr_build_ids(f); i++)
		(void)strlen(dc_perf_build_id_at(f, i)->filename);
	for (size_t i = 0; i < dc_perf_nr_attrs(f); i++) {
		const struct dc_perf_attr *a = dc_perf_attr_at(f, i);

		for (size_t j = 0; j < a->nr_ids; j++)
			(void)dc_perf_attr_by_id(f, a->ids[j]);
	}
	for (int feat = 0; feat < PF_FEAT_BITS; feat++)
		(void)dc_perf_feature(f, feat, &fsize);
	while (dc_perf_next(f, &rec) > 0) {
		records++;
		if (rec.type == PERF_RECORD_COMM && rec.parsed)
			(void)strlen(rec.comm.comm);
		if ((rec.type == PERF_RECORD_MMAP || rec.type == PERF_RECORD_MMAP2) && rec.parsed)
			(void)strlen(rec.mmap.filename);
		if (rec.type == PERF_RECORD_HEADER_BUILD_ID && rec.parsed)
			(void)strlen(rec.build_id.filename);
		/* a parsed copy of the record, from memory */
		if (rec.total_size && rec.total_size <= dc_perf_file_size(f) - rec.offset) {
			struct dc_perf_record copy;

			dc_perf_parse(f, rec.raw, (size_t)rec.total_size, &copy, err, sizeof(err));
		}
	}
	idx = dc_perf_auxtrace_index(f, &n);
	for (size_t i = 0; i < n; i++)
		dc_perf_read_at(f, idx[i].file_offset, &rec, err, sizeof(err));
	if (records && !dc_perf_seek(f, 0))
		dc_perf_next(f, &rec);
	dc_perf_close(f);
	return 0;
}
