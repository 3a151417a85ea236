/* ptflame tests: the sample perf.data (see test_perfdata_sample.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/test_perfdata_sample.h"

const uint8_t smp_aux_payload[] = {
	/* PSB */
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	/* PSBEND */
	0x02, 0x23,
	/* PADs */
	0x00, 0x00, 0x00, 0x00, 0x00,
};
const size_t smp_aux_payload_size = sizeof(smp_aux_payload);

const struct dc_pt_info smp_pt_info = {
	.pmu_type = SMP_PT_TYPE,
	.time_shift = 10,
	.time_mult = 642,
	.time_zero = 0xfffffd3b9c4d1a5bULL,
	.cap_user_time_zero = 1,
	.tsc_bit = 10,
	.noretcomp_bit = 11,
	.have_sched_switch = 3,
	.snapshot_mode = 0,
	.per_cpu_mmaps = 1,
	.mtc_bit = 9,
	.mtc_freq_bits = 3,
	.tsc_ctc_ratio_n = 2,
	.tsc_ctc_ratio_d = 1,
	.cyc_bit = 1,
	.max_non_turbo_ratio = 20,
	.filter = "",
};

static struct dc_sample_id sid(uint64_t id, uint32_t pid, uint32_t tid, uint64_t t, uint32_t cpu)
{
	struct dc_sample_id s = { .id = id, .pid = pid, .tid = tid, .time = t, .cpu = cpu };

	return s;
}

int smp_add_attrs(struct rc_perf_writer *w)
{
	struct perf_event_attr pt, dummy;
	uint64_t pt_ids[] = { SMP_PT_ID0, SMP_PT_ID1 };
	uint64_t dummy_ids[] = { SMP_DUMMY_ID0, SMP_DUMMY_ID1 };
	int ret;

	memset(&pt, 0, sizeof(pt));
	pt.type = SMP_PT_TYPE;
	pt.size = PERF_ATTR_SIZE_VER7;
	pt.config = 0x300e601;
	pt.sample_period = 1;
	pt.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	pt.disabled = 1;
	pt.exclude_kernel = 1;
	pt.exclude_hv = 1;
	pt.enable_on_exec = 1;
	pt.sample_id_all = 1;
	pt.aux_watermark = 0x4000;
	memset(&dummy, 0, sizeof(dummy));
	dummy.type = PERF_TYPE_SOFTWARE;
	dummy.size = PERF_ATTR_SIZE_VER7;
	dummy.config = PERF_COUNT_SW_DUMMY;
	dummy.sample_period = 1;
	dummy.sample_type = pt.sample_type;
	dummy.exclude_kernel = 1;
	dummy.mmap = dummy.comm = dummy.task = dummy.mmap2 = dummy.comm_exec = 1;
	dummy.context_switch = 1;
	dummy.sample_id_all = 1;
	if ((ret = rc_perf_add_attr(w, &pt, pt_ids, 2)))
		return ret;
	return rc_perf_add_attr(w, &dummy, dummy_ids, 2);
}

static int add_records(struct rc_perf_writer *w)
{
	struct dc_rec_time_conv tc = {
		.time_shift = smp_pt_info.time_shift, .time_mult = smp_pt_info.time_mult,
		.time_zero = smp_pt_info.time_zero, .time_mask = ~0ULL,
		.cap_user_time_zero = 1,
	};
	struct dc_rec_mmap m = {
		.pid = SMP_PID, .tid = SMP_TID, .start = SMP_MMAP_START, .len = SMP_MMAP_LEN,
		.pgoff = SMP_MMAP_PGOFF, .maj = 254, .min = 1, .ino = SMP_MMAP_INO,
		.prot = 5, .flags = 2, .filename = SMP_FILE,
	};
	struct dc_sample_id s;
	uint64_t t = SMP_T0;
	int ret = 0;

	ret = ret ?: rc_perf_auxtrace_info_pt(w, &smp_pt_info);
	ret = ret ?: rc_perf_time_conv(w, &tc);
	s = sid(SMP_DUMMY_ID0, SMP_PID, SMP_TID, t += 1000, 0);
	ret = ret ?: rc_perf_comm(w, SMP_PID, SMP_TID, SMP_COMM, true, &s);
	s = sid(SMP_DUMMY_ID0, SMP_PID, SMP_TID, t += 1000, 0);
	ret = ret ?: rc_perf_mmap2(w, &m, &s);
	s = sid(SMP_PT_ID0, SMP_PID, SMP_TID, t += 1000, 0);
	ret = ret ?: rc_perf_itrace_start(w, SMP_PID, SMP_TID, &s);
	s = sid(SMP_DUMMY_ID0, SMP_PID, SMP_TID, t += 1000, 0);
	ret = ret ?: rc_perf_switch_cpu_wide(w, false, false, 0, 0, &s);
	s = sid(SMP_DUMMY_ID0, SMP_PID, SMP_TID, t += 1000, 0);
	ret = ret ?: rc_perf_fork(w, SMP_CHILD, SMP_PID, SMP_CHILD, SMP_TID, t, &s);
	s = sid(SMP_DUMMY_ID0, SMP_PID, SMP_TID, t += 1000, 0);
	ret = ret ?: rc_perf_switch_cpu_wide(w, true, true, SMP_CHILD, SMP_CHILD, &s);
	s = sid(SMP_DUMMY_ID1, SMP_CHILD, SMP_CHILD, t += 1000, 1);
	ret = ret ?: rc_perf_exit(w, SMP_CHILD, SMP_PID, SMP_CHILD, SMP_TID, t, &s);
	s = sid(SMP_PT_ID0, SMP_PID, SMP_TID, t += 1000, 0);
	ret = ret ?: rc_perf_aux(w, 0, 0x20, 0, &s);
	ret = ret ?: rc_perf_finished_round(w);
	ret = ret ?: rc_perf_auxtrace(w, smp_aux_payload, smp_aux_payload_size, 0,
				      SMP_AUX_REF, 0, (uint32_t)-1, 0);
	return ret;
}

static int add_features(struct rc_perf_writer *w)
{
	static const char *const argv[] = { "/usr/bin/ptflame", "record", "--emulate", "--",
					    "./prog arg" };
	static const uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6,
					 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	int ret = 0;

	ret = ret ?: rc_perf_set_nrcpus(w, 4, 2);
	ret = ret ?: rc_perf_set_cmdline(w, 5, argv);
	ret = ret ?: rc_perf_add_build_id(w, SMP_PID, PERF_RECORD_MISC_USER, bid, 20, SMP_FILE);
	ret = ret ?: rc_perf_set_string(w, HEADER_HOSTNAME, "samplehost");
	ret = ret ?: rc_perf_set_string(w, HEADER_OSRELEASE, "6.1.0-sample");
	ret = ret ?: rc_perf_set_string(w, HEADER_VERSION, "6.1");
	ret = ret ?: rc_perf_set_string(w, HEADER_ARCH, "x86_64");
	return ret;
}

static int add_extra(struct rc_perf_writer *w, unsigned extra)
{
	for (unsigned i = 0; i < extra; i++) {
		struct dc_sample_id s = sid(SMP_DUMMY_ID0, SMP_PID, SMP_TID, SMP_T0 + 100000 + i, 0);
		int ret = rc_perf_comm(w, SMP_PID, SMP_TID, SMP_COMM, false, &s);

		if (ret)
			return ret;
	}
	return 0;
}

void smp_extra_file(unsigned i, char name[SMP_EXTRA_NAME])
{
	uint64_t x = 0x9e3779b97f4a7c15ULL * (i + 1);
	size_t n = 0;

	n += (size_t)snprintf(name, SMP_EXTRA_NAME, "/x/%u/", i);
	while (n < SMP_EXTRA_NAME - 1) {
		x ^= x >> 29;
		x *= 0xbf58476d1ce4e5b9ULL;
		x ^= x >> 32;
		name[n++] = "0123456789abcdef"[x & 15];
	}
	name[n] = 0;
}

/* extra MMAP2 records of files with names like noise: what zstd cannot
 * shrink much, so that compressed records are cut inside a record */
static int add_extra_maps(struct rc_perf_writer *w, unsigned extra)
{
	char name[SMP_EXTRA_NAME];

	for (unsigned i = 0; i < extra; i++) {
		struct dc_sample_id s = sid(SMP_DUMMY_ID0, SMP_PID, SMP_TID, SMP_T0 + 100000 + i, 0);
		struct dc_rec_mmap m = {
			.pid = SMP_PID, .tid = SMP_TID, .start = SMP_MMAP_START + (uint64_t)i * 4096,
			.len = 4096, .maj = 254, .min = 1, .ino = i, .prot = 5, .flags = 2,
			.filename = name,
		};
		int ret;

		smp_extra_file(i, name);
		if ((ret = rc_perf_mmap2(w, &m, &s)))
			return ret;
	}
	return 0;
}

int smp_write_z(const char *path, unsigned extra_maps, int level, char *err, size_t errlen)
{
	struct rc_perf_writer *w;
	int ret = rc_perf_create(path, &w, err, errlen);

	if (ret)
		return ret;
	if ((level && (ret = rc_perf_compress(w, level))) || (ret = smp_add_attrs(w)) ||
	    (ret = add_records(w)) || (ret = add_extra_maps(w, extra_maps)) ||
	    (ret = add_features(w))) {
		snprintf(err, errlen, "%s", rc_perf_errmsg(w));
		rc_perf_abort(w);
		return ret;
	}
	return rc_perf_finish(w, err, errlen);
}

int smp_write(const char *path, char *err, size_t errlen)
{
	return smp_write_n(path, 0, err, errlen);
}

int smp_write_n(const char *path, unsigned extra, char *err, size_t errlen)
{
	struct rc_perf_writer *w;
	int ret = rc_perf_create(path, &w, err, errlen);

	if (ret)
		return ret;
	if ((ret = smp_add_attrs(w)) || (ret = add_records(w)) || (ret = add_extra(w, extra)) ||
	    (ret = add_features(w))) {
		snprintf(err, errlen, "%s", rc_perf_errmsg(w));
		rc_perf_abort(w);
		return ret;
	}
	return rc_perf_finish(w, err, errlen);
}
