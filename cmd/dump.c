/* ptflame dump: every perf.data record as one line of text.
 *
 * Output is stable and greppable: '#' lines describe the header, attrs and
 * features; every record is "OFFSET [SIZE] TYPE field value ...", and the
 * sample_id_all trailer, when present, follows " | " as "pid P tid T time N
 * cpu C id I" (only the fields the attr samples). Strings are printed with
 * bytes outside 0x21..0x7e (and '\') escaped as \xHH, so fields split on
 * spaces.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "decoder/decoder.h"

const char cmd_dump_help[] =
	"usage: ptflame dump [options] [FILE]\n"
	"\n"
	"Print a perf.data file (default ./perf.data) as text: the header, the\n"
	"event attrs, the features (NRCPUS, CMDLINE, BUILD_ID, AUXTRACE index, ...)\n"
	"and then every record of the data section, one line each:\n"
	"  0x1a8 [0x38] COMM pid 123 tid 123 comm prog exec | pid 123 tid 123 time 1234\n"
	"AUXTRACE_INFO fields are named; AUXTRACE lines give the payload's size and\n"
	"file offset. A pipe-mode file's build-ids are HEADER_BUILD_ID records; the\n"
	"header's BUILD_ID lines list them too. The records of compressed records\n"
	"(perf record -z, ptflame record -z) are printed decompressed, each with\n"
	"the offset of the compressed record that holds it and 'zstd':\n"
	"  0x2c0 [0x70] zstd MMAP2 pid 123 tid 123 start 0x401000 ...\n"
	"\n"
	"options:\n"
	"  -H, --header-only   print the header, attrs and features only\n"
	"  -h, --help          show this help\n";

/* A string with separators and non-printable bytes escaped. */
static void put_str(FILE *out, const char *s)
{
	if (!*s) {
		fputs("\"\"", out);
		return;
	}
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p <= 0x20 || *p >= 0x7f || *p == '\\')
			fprintf(out, "\\x%02x", *p);
		else
			fputc(*p, out);
	}
}

static const struct {
	uint64_t bit;
	const char *name;
} sample_bits[] = {
	{ PERF_SAMPLE_IP, "IP" }, { PERF_SAMPLE_TID, "TID" }, { PERF_SAMPLE_TIME, "TIME" },
	{ PERF_SAMPLE_ADDR, "ADDR" }, { PERF_SAMPLE_READ, "READ" },
	{ PERF_SAMPLE_CALLCHAIN, "CALLCHAIN" }, { PERF_SAMPLE_ID, "ID" },
	{ PERF_SAMPLE_CPU, "CPU" }, { PERF_SAMPLE_PERIOD, "PERIOD" },
	{ PERF_SAMPLE_STREAM_ID, "STREAM_ID" }, { PERF_SAMPLE_RAW, "RAW" },
	{ PERF_SAMPLE_BRANCH_STACK, "BRANCH_STACK" }, { PERF_SAMPLE_REGS_USER, "REGS_USER" },
	{ PERF_SAMPLE_STACK_USER, "STACK_USER" }, { PERF_SAMPLE_WEIGHT, "WEIGHT" },
	{ PERF_SAMPLE_DATA_SRC, "DATA_SRC" }, { PERF_SAMPLE_IDENTIFIER, "IDENTIFIER" },
	{ PERF_SAMPLE_TRANSACTION, "TRANSACTION" }, { PERF_SAMPLE_REGS_INTR, "REGS_INTR" },
	{ PERF_SAMPLE_PHYS_ADDR, "PHYS_ADDR" }, { PERF_SAMPLE_AUX, "AUX" },
	{ PERF_SAMPLE_CGROUP, "CGROUP" },
};

static void put_sample_type(FILE *out, uint64_t st)
{
	bool first = true;

	fprintf(out, "0x%" PRIx64 " (", st);
	for (size_t i = 0; i < sizeof(sample_bits) / sizeof(sample_bits[0]); i++) {
		if (!(st & sample_bits[i].bit))
			continue;
		fprintf(out, "%s%s", first ? "" : "|", sample_bits[i].name);
		first = false;
	}
	fputc(')', out);
}

/* The attr flag bits worth seeing, by perf's names. */
static void put_attr_flags(FILE *out, const struct perf_event_attr *a)
{
#define FLAG(f) if (a->f) fputs(" " #f, out)
	FLAG(disabled); FLAG(inherit); FLAG(pinned); FLAG(exclusive);
	FLAG(exclude_user); FLAG(exclude_kernel); FLAG(exclude_hv); FLAG(exclude_idle);
	FLAG(mmap); FLAG(comm); FLAG(freq); FLAG(inherit_stat); FLAG(enable_on_exec);
	FLAG(task); FLAG(watermark); FLAG(mmap_data); FLAG(sample_id_all);
	FLAG(exclude_host); FLAG(exclude_guest); FLAG(mmap2); FLAG(comm_exec);
	FLAG(use_clockid); FLAG(context_switch); FLAG(write_backward); FLAG(namespaces);
	FLAG(ksymbol); FLAG(bpf_event); FLAG(aux_output); FLAG(cgroup); FLAG(text_poke);
#undef FLAG
	if (a->precise_ip)
		fprintf(out, " precise_ip=%u", (unsigned)a->precise_ip);
}

static void dump_attrs(FILE *out, const struct dc_perf_file *f)
{
	for (size_t i = 0; i < dc_perf_nr_attrs(f); i++) {
		const struct dc_perf_attr *da = dc_perf_attr_at(f, i);
		const struct perf_event_attr *a = &da->attr;

		fprintf(out, "# attr %zu: type %" PRIu32 " size %" PRIu32 " config 0x%" PRIx64
			" config1 0x%" PRIx64 " config2 0x%" PRIx64 " sample_type ", i, a->type,
			da->file_attr_size, (uint64_t)a->config, (uint64_t)a->config1,
			(uint64_t)a->config2);
		put_sample_type(out, a->sample_type);
		fprintf(out, " read_format 0x%" PRIx64 " %s %" PRIu64,
			(uint64_t)a->read_format, a->freq ? "sample_freq" : "sample_period",
			(uint64_t)a->sample_period);
		if (a->aux_watermark)
			fprintf(out, " aux_watermark %" PRIu32, a->aux_watermark);
		fputs(" flags", out);
		put_attr_flags(out, a);
		if (da->name) {
			fputs(" name ", out);
			put_str(out, da->name);
		}
		if (da->is_wake)
			fputs(" (wakes)", out);
		fprintf(out, " ids %zu", da->nr_ids);
		for (size_t k = 0; k < da->nr_ids; k++)
			fprintf(out, "%s%" PRIu64, k ? "," : " ", da->ids[k]);
		fputc('\n', out);
	}
}

/* One build-id entry, as the header's BUILD_ID lines and a pipe's
 * HEADER_BUILD_ID records both print it (a record's line has its misc
 * already, with the size flag that the entry's misc drops). */
static void put_build_id(FILE *out, const struct dc_build_id *b, bool misc)
{
	fprintf(out, " pid %" PRId32, b->pid);
	if (misc)
		fprintf(out, " misc 0x%x", b->misc);
	fputs(" id ", out);
	for (size_t k = 0; k < b->size; k++)
		fprintf(out, "%02x", b->id[k]);
	fputs(" file ", out);
	put_str(out, b->filename);
}

/* HEADER_COMPRESSED's fields: version, method (1: zstd), level, ratio and
 * the most one compressed record decompresses to. */
static void dump_compressed(FILE *out, const struct dc_perf_file *f)
{
	uint64_t size;
	const uint8_t *p = dc_perf_feature(f, HEADER_COMPRESSED, &size);
	uint32_t v[5];

	if (!p || size < sizeof(v))
		return;
	memcpy(v, p, sizeof(v));
	fprintf(out, "# COMPRESSED version %" PRIu32 " method %" PRIu32 "%s level %" PRIu32
		" ratio %" PRIu32 " mmap_len %" PRIu32 "\n", v[0], v[1],
		v[1] == PF_COMP_ZSTD ? " (zstd)" : "", v[2], v[3], v[4]);
}

static void dump_features(FILE *out, const struct dc_perf_file *f)
{
	const struct pf_file_header *h = dc_perf_header(f);
	uint32_t avail, online;
	const char *const *argv;
	size_t argc, nr;
	const struct pf_auxtrace_index_entry *idx;

	fputs("# features:", out);
	for (int bit = 0; bit < PF_FEAT_BITS; bit++) {
		const char *name = dc_perf_feature_name(bit);
		uint64_t size;

		if (!(h->adds_features[bit / 64] & (UINT64_C(1) << (bit % 64))))
			continue;
		if (name)
			fprintf(out, " %s", name);
		else
			fprintf(out, " FEATURE_%d", bit);
		if (dc_perf_feature(f, bit, &size))
			fprintf(out, "(%" PRIu64 ")", size);
	}
	fputc('\n', out);
	if (!dc_perf_nrcpus(f, &avail, &online))
		fprintf(out, "# NRCPUS avail %" PRIu32 " online %" PRIu32 "\n", avail, online);
	if (!dc_perf_cmdline(f, &argc, &argv)) {
		fprintf(out, "# CMDLINE argc %zu:", argc);
		for (size_t i = 0; i < argc; i++) {
			fputc(' ', out);
			put_str(out, argv[i]);
		}
		fputc('\n', out);
	}
	for (size_t i = 0; i < dc_perf_nr_build_ids(f); i++) {
		fputs("# BUILD_ID", out);
		put_build_id(out, dc_perf_build_id_at(f, i), true);
		fputc('\n', out);
	}
	dump_compressed(out, f);
	idx = dc_perf_auxtrace_index(f, &nr);
	if (dc_perf_feature(f, HEADER_AUXTRACE, NULL)) {
		fprintf(out, "# AUXTRACE index nr %zu\n", nr);
		for (size_t i = 0; i < nr; i++)
			fprintf(out, "# AUXTRACE index %zu: offset 0x%" PRIx64 " sz 0x%" PRIx64 "\n",
				i, idx[i].file_offset, idx[i].sz);
	}
}

static void dump_header(FILE *out, const struct dc_perf_file *f)
{
	const struct pf_file_header *h = dc_perf_header(f);

	fprintf(out, "# ptflame dump of ");
	put_str(out, dc_perf_path(f));
	fprintf(out, "\n# file size %" PRIu64 " header size %" PRIu64 " attr_size %" PRIu64
		" attrs 0x%" PRIx64 "+0x%" PRIx64 " data 0x%" PRIx64 "+0x%" PRIx64
		" nr_attrs %zu\n", dc_perf_file_size(f), h->size, h->attr_size,
		h->attrs.offset, h->attrs.size, h->data.offset, h->data.size,
		dc_perf_nr_attrs(f));
	dump_attrs(out, f);
	dump_features(out, f);
}

static void put_trailer(FILE *out, const struct dc_sample_id *sid)
{
	uint64_t st = sid->sample_type;

	if (!sid->valid)
		return;
	fputs(" |", out);
	if (st & PERF_SAMPLE_TID)
		fprintf(out, " pid %" PRId32 " tid %" PRId32, (int32_t)sid->pid, (int32_t)sid->tid);
	if (st & PERF_SAMPLE_TIME)
		fprintf(out, " time %" PRIu64, sid->time);
	if (st & PERF_SAMPLE_CPU)
		fprintf(out, " cpu %" PRIu32, sid->cpu);
	if (st & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER))
		fprintf(out, " id %" PRIu64, sid->id);
	if (st & PERF_SAMPLE_STREAM_ID)
		fprintf(out, " stream_id %" PRIu64, sid->stream_id);
}

static const char *cpumode_name(uint16_t m)
{
	static const char *const names[] = {
		"unknown", "kernel", "user", "hypervisor", "guest_kernel", "guest_user",
	};
	return m < sizeof(names) / sizeof(names[0]) ? names[m] : "other";
}

static void put_mmap(FILE *out, const struct dc_rec_mmap *m)
{
	fprintf(out, " pid %" PRId32 " tid %" PRId32 " start 0x%" PRIx64 " len 0x%" PRIx64
		" pgoff 0x%" PRIx64, (int32_t)m->pid, (int32_t)m->tid, m->start, m->len, m->pgoff);
	if (m->is_mmap2) {
		if (m->has_build_id) {
			fputs(" build_id ", out);
			for (unsigned i = 0; i < m->build_id_size; i++)
				fprintf(out, "%02x", m->build_id[i]);
		} else {
			fprintf(out, " maj %" PRIu32 " min %" PRIu32 " ino %" PRIu64
				" ino_generation %" PRIu64, m->maj, m->min, m->ino,
				m->ino_generation);
		}
		fprintf(out, " prot 0x%" PRIx32 " flags 0x%" PRIx32 " perm %c%c%c%c", m->prot,
			m->flags, m->prot & 1 ? 'r' : '-', m->prot & 2 ? 'w' : '-',
			m->prot & 4 ? 'x' : '-', m->flags & 1 ? 's' : 'p');
	}
	fprintf(out, " cpumode %s%s file ", cpumode_name(m->cpumode), m->data ? " data" : "");
	put_str(out, m->filename);
}

static void put_pt_info(FILE *out, const struct dc_pt_info *pt)
{
	fprintf(out, " pmu_type %" PRIu64 " time_shift %" PRIu64 " time_mult %" PRIu64
		" time_zero %" PRIu64 " cap_user_time_zero %" PRIu64 " tsc_bit %" PRIu64
		" noretcomp_bit %" PRIu64 " have_sched_switch %" PRIu64 " snapshot_mode %" PRIu64
		" per_cpu_mmaps %" PRIu64 " mtc_bit %" PRIu64 " mtc_freq_bits %" PRIu64
		" tsc_ctc_ratio_n %" PRIu64 " tsc_ctc_ratio_d %" PRIu64 " cyc_bit %" PRIu64
		" max_non_turbo_ratio %" PRIu64 " nr_priv %zu filter ",
		pt->pmu_type, pt->time_shift, pt->time_mult, pt->time_zero,
		pt->cap_user_time_zero, pt->tsc_bit, pt->noretcomp_bit, pt->have_sched_switch,
		pt->snapshot_mode, pt->per_cpu_mmaps, pt->mtc_bit, pt->mtc_freq_bits,
		pt->tsc_ctc_ratio_n, pt->tsc_ctc_ratio_d, pt->cyc_bit, pt->max_non_turbo_ratio,
		pt->nr_priv);
	put_str(out, pt->filter);
}

static void put_body(FILE *out, const struct dc_perf_record *r)
{
	switch (r->type) {
	case PERF_RECORD_COMM:
		fprintf(out, " pid %" PRId32 " tid %" PRId32 " comm ", (int32_t)r->comm.pid,
			(int32_t)r->comm.tid);
		put_str(out, r->comm.comm);
		if (r->comm.exec)
			fputs(" exec", out);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		put_mmap(out, &r->mmap);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		fprintf(out, " pid %" PRId32 " ppid %" PRId32 " tid %" PRId32 " ptid %" PRId32
			" time %" PRIu64, (int32_t)r->task.pid, (int32_t)r->task.ppid,
			(int32_t)r->task.tid, (int32_t)r->task.ptid, r->task.time);
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		fputs(r->sw.out ? " out" : " in", out);
		if (r->sw.out)
			fputs(r->sw.preempt ? " preempt" : " not_preempt", out);
		if (r->sw.cpu_wide)
			fprintf(out, " %s_pid %" PRId32 " %s_tid %" PRId32,
				r->sw.out ? "next" : "prev", (int32_t)r->sw.next_prev_pid,
				r->sw.out ? "next" : "prev", (int32_t)r->sw.next_prev_tid);
		break;
	case PERF_RECORD_ITRACE_START:
		fprintf(out, " pid %" PRId32 " tid %" PRId32, (int32_t)r->itrace_start.pid,
			(int32_t)r->itrace_start.tid);
		break;
	case PERF_RECORD_AUX:
		fprintf(out, " aux_offset 0x%" PRIx64 " aux_size 0x%" PRIx64 " flags 0x%" PRIx64,
			r->aux.aux_offset, r->aux.aux_size, r->aux.flags);
		if (r->aux.flags & PERF_AUX_FLAG_TRUNCATED)
			fputs(" truncated", out);
		if (r->aux.flags & PERF_AUX_FLAG_OVERWRITE)
			fputs(" overwrite", out);
		if (r->aux.flags & PERF_AUX_FLAG_PARTIAL)
			fputs(" partial", out);
		if (r->aux.flags & PERF_AUX_FLAG_COLLISION)
			fputs(" collision", out);
		break;
	case PERF_RECORD_AUXTRACE_INFO:
		fprintf(out, " type %" PRIu32, r->auxtrace_info.type);
		if (r->auxtrace_info.is_pt) {
			put_pt_info(out, &r->auxtrace_info.pt);
		} else {
			fprintf(out, " nr_priv %zu priv", r->auxtrace_info.nr_priv);
			for (size_t i = 0; i < r->auxtrace_info.nr_priv && i < DC_PERF_MAX_PRIV; i++)
				fprintf(out, "%s0x%" PRIx64, i ? "," : " ", r->auxtrace_info.priv[i]);
		}
		break;
	case PERF_RECORD_AUXTRACE:
		fprintf(out, " size 0x%" PRIx64 " offset 0x%" PRIx64 " reference 0x%" PRIx64
			" idx %" PRIu32 " tid %" PRId32 " cpu %" PRId32 " payload@0x%" PRIx64,
			r->auxtrace.size, r->auxtrace.offset, r->auxtrace.reference,
			r->auxtrace.idx, (int32_t)r->auxtrace.tid, (int32_t)r->auxtrace.cpu,
			r->auxtrace.data_offset);
		break;
	case PERF_RECORD_TIME_CONV:
		fprintf(out, " time_shift %" PRIu64 " time_mult %" PRIu64 " time_zero %" PRIu64,
			r->time_conv.time_shift, r->time_conv.time_mult, r->time_conv.time_zero);
		if (r->time_conv.has_ext)
			fprintf(out, " time_cycles %" PRIu64 " time_mask 0x%" PRIx64
				" cap_user_time_zero %d cap_user_time_short %d",
				r->time_conv.time_cycles, r->time_conv.time_mask,
				r->time_conv.cap_user_time_zero, r->time_conv.cap_user_time_short);
		break;
	case PERF_RECORD_LOST:
		fprintf(out, " id %" PRIu64 " lost %" PRIu64, r->lost.id, r->lost.lost);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		fprintf(out, " lost %" PRIu64, r->lost_samples.lost);
		break;
	case PERF_RECORD_ID_INDEX:
		fprintf(out, " nr %" PRIu64, r->id_index.nr);
		break;
	case PERF_RECORD_HEADER_BUILD_ID:
		put_build_id(out, &r->build_id, false);
		break;
	case PERF_RECORD_SAMPLE: {
		struct dc_wake w;
		int wake = dc_perf_wake(r, &w);

		if (r->attr && r->attr->name) {
			fputs(" ", out);
			put_str(out, r->attr->name);
		}
		if (wake > 0) {
			/* the waker is the trailer's pid/tid */
			fprintf(out, " wakee %" PRIu32 " wakee_comm ", w.wakee_tid);
			put_str(out, w.wakee_comm);
			break;
		}
		if (wake < 0)
			fputs(" BAD-WAKE (RAW missing or short)", out);
		fprintf(out, " ip 0x%" PRIx64 " addr 0x%" PRIx64 " period %" PRIu64,
			r->sample.ip, r->sample.addr, r->sample.period);
		if (r->sample.raw)
			fprintf(out, " raw %" PRIu32, r->sample.raw_size);
		break;
	}
	default:
		break;
	}
}

static void dump_record(FILE *out, const struct dc_perf_record *r)
{
	const char *name = dc_perf_type_name(r->type);

	fprintf(out, "0x%" PRIx64 " [0x%x] %s", r->offset, r->size, r->packed ? "zstd " : "");
	if (name)
		fputs(name, out);
	else
		fprintf(out, "TYPE_%" PRIu32, r->type);
	if (r->misc)
		fprintf(out, " misc 0x%x", r->misc);
	put_body(out, r);
	put_trailer(out, &r->sid);
	fputc('\n', out);
}

/* 0 when stdout took everything, or when the reader went away (EPIPE). */
static int out_status(FILE *out, bool *gone)
{
	if (!ferror(out) && fflush(out) == 0)
		return 0;
	if (errno == EPIPE) {
		*gone = true;
		return 0;
	}
	return cmd_error("dump", "writing output: %s", strerror(errno));
}

static int dump_file(const char *path, bool header_only)
{
	struct dc_perf_file *f;
	struct dc_perf_record rec;
	char err[512];
	uint64_t n = 0;
	bool gone = false;
	int ret;

	/* a file cut short: its records up to the cut, then the error */
	if (dc_perf_open_cut(path, true, &f, err, sizeof(err)) < 0)
		return cmd_error("dump", "%s", err);
	dump_header(stdout, f);
	if (!header_only) {
		while ((ret = dc_perf_next(f, &rec)) > 0) {
			dump_record(stdout, &rec);
			n++;
			if ((n & 1023) == 0 && ferror(stdout))
				break;
		}
		if (ret < 0) {
			fflush(stdout);
			ret = cmd_error("dump", "%s", dc_perf_errmsg(f));
			dc_perf_close(f);
			return ret;
		}
		if (!ferror(stdout))
			printf("# %" PRIu64 " records\n", n);
		if (!dc_perf_cut_end(f) && dc_perf_unfinished(f, err, sizeof(err)))
			fprintf(stderr, "ptflame dump: warning: %s\n", err);
	}
	if (dc_perf_cut_end(f)) {
		fflush(stdout);
		ret = cmd_error("dump", "%s: truncated: data section ends at %" PRIu64 " but file "
				"has %" PRIu64 " bytes%s", path, dc_perf_cut_end(f),
				dc_perf_file_size(f), header_only ? "" :
				" (the records before the cut are printed)");
		dc_perf_close(f);
		return ret;
	}
	dc_perf_close(f);
	ret = out_status(stdout, &gone);
	return ret;
}

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "header-only", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static char outbuf[1 << 16];
	bool header_only = false;
	int c;

	optind = 1;
	while ((c = cmd_getopt("dump", argc, argv, "+Hh", opts)) != -1) {
		if (c == CMD_OPT_HELP)
			return 0;
		if (c == CMD_OPT_ERR)
			return 2;
		if (c == 'H')
			header_only = true;
	}
	if (argc - optind > 1)
		return cmd_usage_error("dump", "too many arguments: '%s'", argv[optind + 1]);
	/* A closed pipe (ptflame dump | head) ends the output quietly. */
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	return dump_file(optind < argc ? argv[optind] : "perf.data", header_only);
}
