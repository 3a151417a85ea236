/* Unit tests: perf.data writer -> reader round trip, record parsing, writer
 * rules (temporary file, attr checks). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "decoder/decoder.h"
#include "record/record.h"
#include "tests/unit/test_perfdata_sample.h"
#include "decoder/ptpkt.h"

struct tmpdir {
	char dir[64];
	char path[128];
};

static void mk_tmp(struct tmpdir *t)
{
	strcpy(t->dir, "/tmp/ptf-perfdata-XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	snprintf(t->path, sizeof(t->path), "%s/perf.data", t->dir);
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void rm_tmp(struct tmpdir *t)
{
	DIR *d = opendir(t->dir);
	struct dirent *e;
	char p[512];

	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", t->dir, e->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(t->dir);
}

static void next_ok(struct dc_perf_file *f, struct dc_perf_record *r, uint32_t type)
{
	int ret = dc_perf_next(f, r);

	if (ret != 1)
		fail_msg("dc_perf_next: %d %s", ret, dc_perf_errmsg(f));
	assert_int_equal(r->type, type);
	assert_true(r->parsed);
}

static void check_sid(const struct dc_perf_record *r, uint64_t id, uint32_t pid, uint32_t tid,
		      uint64_t time, uint32_t cpu)
{
	assert_true(r->sid.valid);
	assert_int_equal(r->sid.id, id);
	assert_int_equal(r->sid.pid, pid);
	assert_int_equal(r->sid.tid, tid);
	assert_int_equal(r->sid.time, time);
	assert_int_equal(r->sid.cpu, cpu);
	assert_non_null(r->attr);
}

static void check_header(struct dc_perf_file *f)
{
	const struct dc_perf_attr *pt, *dummy;
	uint32_t avail, online;
	size_t argc;
	const char *const *argv;
	const struct dc_build_id *b;

	assert_int_equal(dc_perf_nr_attrs(f), 2);
	pt = dc_perf_attr_at(f, 0);
	dummy = dc_perf_attr_at(f, 1);
	assert_null(dc_perf_attr_at(f, 2));
	assert_int_equal(pt->attr.type, SMP_PT_TYPE);
	assert_int_equal(pt->attr.config, 0x300e601);
	assert_int_equal(pt->file_attr_size, PERF_ATTR_SIZE_VER7);
	assert_int_equal(pt->attr.aux_watermark, 0x4000);
	assert_true(pt->attr.exclude_kernel);
	/* The writer forces these on every attr. */
	assert_true(pt->attr.sample_id_all && dummy->attr.sample_id_all);
	assert_true(pt->attr.sample_type & PERF_SAMPLE_IDENTIFIER);
	assert_true(dummy->attr.sample_type & PERF_SAMPLE_IDENTIFIER);
	assert_int_equal(dummy->attr.config, PERF_COUNT_SW_DUMMY);
	assert_true(dummy->attr.context_switch);
	assert_int_equal(pt->nr_ids, 2);
	assert_int_equal(pt->ids[1], SMP_PT_ID1);
	assert_ptr_equal(dc_perf_attr_by_id(f, SMP_PT_ID1), pt);
	assert_ptr_equal(dc_perf_attr_by_id(f, SMP_DUMMY_ID0), dummy);
	assert_null(dc_perf_attr_by_id(f, 77));

	assert_int_equal(dc_perf_nrcpus(f, &avail, &online), 0);
	assert_int_equal(avail, 4);
	assert_int_equal(online, 2);
	assert_int_equal(dc_perf_cmdline(f, &argc, &argv), 0);
	assert_int_equal(argc, 5);
	assert_string_equal(argv[0], "/usr/bin/ptflame");
	assert_string_equal(argv[4], "./prog arg");
	assert_int_equal(dc_perf_nr_build_ids(f), 1);
	b = dc_perf_build_id_at(f, 0);
	assert_int_equal(b->pid, SMP_PID);
	assert_int_equal(b->size, 20);
	assert_int_equal(b->id[0], 0xde);
	assert_int_equal(b->id[19], 16);
	assert_int_equal(b->misc, PERF_RECORD_MISC_USER);
	assert_string_equal(b->filename, SMP_FILE);
	{
		uint64_t sz;
		const char *host = dc_perf_feature(f, HEADER_HOSTNAME, &sz);

		assert_non_null(host);
		assert_int_equal(sz, 4 + 64);
		assert_string_equal(host + 4, "samplehost");
		assert_null(dc_perf_feature(f, HEADER_CPUID, &sz));
	}
}

static void test_round_trip(void **state)
{
	struct tmpdir t;
	struct dc_perf_file *f;
	struct dc_perf_record r;
	char err[512];
	const struct pf_auxtrace_index_entry *idx;
	size_t nidx;
	uint64_t time = SMP_T0;
	uint64_t auxtrace_off;

	(void)state;
	mk_tmp(&t);
	assert_int_equal(smp_write(t.path, err, sizeof(err)), 0);
	assert_int_equal(count_entries(t.dir), 1); /* no temporary file left */
	if (dc_perf_open(t.path, &f, err, sizeof(err)))
		fail_msg("%s", err);
	check_header(f);

	next_ok(f, &r, PERF_RECORD_AUXTRACE_INFO);
	assert_false(r.sid.valid);
	assert_int_equal(r.auxtrace_info.type, PERF_AUXTRACE_INTEL_PT);
	assert_true(r.auxtrace_info.is_pt);
	assert_int_equal(r.auxtrace_info.nr_priv, PF_PT_PRIV_MAX);
	assert_int_equal(r.auxtrace_info.pt.pmu_type, SMP_PT_TYPE);
	assert_int_equal(r.auxtrace_info.pt.time_mult, smp_pt_info.time_mult);
	assert_int_equal(r.auxtrace_info.pt.time_zero, smp_pt_info.time_zero);
	assert_int_equal(r.auxtrace_info.pt.have_sched_switch, 3);
	assert_int_equal(r.auxtrace_info.pt.tsc_ctc_ratio_n, 2);
	assert_int_equal(r.auxtrace_info.pt.max_non_turbo_ratio, 20);
	assert_int_equal(r.auxtrace_info.pt.cyc_bit, 1);
	assert_string_equal(r.auxtrace_info.pt.filter, "");
	assert_true(memcmp(&r.auxtrace_info.pt, &smp_pt_info,
			   offsetof(struct dc_pt_info, filter)) == 0);

	next_ok(f, &r, PERF_RECORD_TIME_CONV);
	assert_true(r.time_conv.has_ext);
	assert_int_equal(r.time_conv.time_shift, 10);
	assert_int_equal(r.time_conv.time_mask, ~0ULL);
	assert_true(r.time_conv.cap_user_time_zero);

	next_ok(f, &r, PERF_RECORD_COMM);
	check_sid(&r, SMP_DUMMY_ID0, SMP_PID, SMP_TID, time += 1000, 0);
	assert_ptr_equal(r.attr, dc_perf_attr_at(f, 1));
	assert_int_equal(r.comm.pid, SMP_PID);
	assert_int_equal(r.comm.tid, SMP_TID);
	assert_string_equal(r.comm.comm, SMP_COMM);
	assert_true(r.comm.exec);

	next_ok(f, &r, PERF_RECORD_MMAP2);
	check_sid(&r, SMP_DUMMY_ID0, SMP_PID, SMP_TID, time += 1000, 0);
	assert_true(r.mmap.is_mmap2);
	assert_false(r.mmap.has_build_id);
	assert_int_equal(r.mmap.start, SMP_MMAP_START);
	assert_int_equal(r.mmap.len, SMP_MMAP_LEN);
	assert_int_equal(r.mmap.pgoff, SMP_MMAP_PGOFF);
	assert_int_equal(r.mmap.maj, 254);
	assert_int_equal(r.mmap.min, 1);
	assert_int_equal(r.mmap.ino, SMP_MMAP_INO);
	assert_int_equal(r.mmap.prot, 5);
	assert_int_equal(r.mmap.flags, 2);
	assert_int_equal(r.mmap.cpumode, PERF_RECORD_MISC_USER);
	assert_string_equal(r.mmap.filename, SMP_FILE);

	next_ok(f, &r, PERF_RECORD_ITRACE_START);
	check_sid(&r, SMP_PT_ID0, SMP_PID, SMP_TID, time += 1000, 0);
	assert_ptr_equal(r.attr, dc_perf_attr_at(f, 0));
	assert_int_equal(r.itrace_start.pid, SMP_PID);
	assert_int_equal(r.itrace_start.tid, SMP_TID);

	next_ok(f, &r, PERF_RECORD_SWITCH_CPU_WIDE);
	check_sid(&r, SMP_DUMMY_ID0, SMP_PID, SMP_TID, time += 1000, 0);
	assert_false(r.sw.out);
	assert_false(r.sw.preempt);
	assert_true(r.sw.cpu_wide);

	next_ok(f, &r, PERF_RECORD_FORK);
	check_sid(&r, SMP_DUMMY_ID0, SMP_PID, SMP_TID, time += 1000, 0);
	assert_int_equal(r.task.pid, SMP_CHILD);
	assert_int_equal(r.task.ppid, SMP_PID);
	assert_int_equal(r.task.tid, SMP_CHILD);
	assert_int_equal(r.task.ptid, SMP_TID);
	assert_int_equal(r.task.time, time);

	next_ok(f, &r, PERF_RECORD_SWITCH_CPU_WIDE);
	check_sid(&r, SMP_DUMMY_ID0, SMP_PID, SMP_TID, time += 1000, 0);
	assert_true(r.sw.out);
	assert_true(r.sw.preempt);
	assert_int_equal(r.sw.next_prev_pid, SMP_CHILD);
	assert_int_equal(r.sw.next_prev_tid, SMP_CHILD);

	next_ok(f, &r, PERF_RECORD_EXIT);
	check_sid(&r, SMP_DUMMY_ID1, SMP_CHILD, SMP_CHILD, time += 1000, 1);
	assert_int_equal(r.task.pid, SMP_CHILD);

	next_ok(f, &r, PERF_RECORD_AUX);
	check_sid(&r, SMP_PT_ID0, SMP_PID, SMP_TID, time += 1000, 0);
	assert_int_equal(r.aux.aux_size, 0x20);
	assert_int_equal(r.aux.flags, 0);

	next_ok(f, &r, PERF_RECORD_FINISHED_ROUND);

	next_ok(f, &r, PERF_RECORD_AUXTRACE);
	auxtrace_off = r.offset;
	assert_int_equal(r.size, PF_AUXTRACE_HDR_SIZE);
	assert_int_equal(r.auxtrace.size, 24); /* 23 bytes padded to 8 */
	assert_int_equal(r.total_size, 48 + 24);
	assert_int_equal(r.auxtrace.reference, SMP_AUX_REF);
	assert_int_equal(r.auxtrace.tid, (uint32_t)-1);
	assert_int_equal(r.auxtrace.cpu, 0);
	assert_int_equal(r.auxtrace.data_offset, r.offset + 48);
	assert_memory_equal(r.auxtrace.data, smp_aux_payload, smp_aux_payload_size);
	assert_int_equal(((const uint8_t *)r.auxtrace.data)[23], 0);

	assert_int_equal(dc_perf_next(f, &r), 0);
	assert_int_equal(dc_perf_next(f, &r), 0);

	/* The AUXTRACE index points at that record; seek there and re-read. */
	idx = dc_perf_auxtrace_index(f, &nidx);
	assert_int_equal(nidx, 1);
	assert_int_equal(idx[0].file_offset, auxtrace_off);
	assert_int_equal(idx[0].sz, 48);
	assert_int_equal(dc_perf_read_at(f, idx[0].file_offset, &r, err, sizeof(err)), 0);
	assert_int_equal(r.type, PERF_RECORD_AUXTRACE);
	assert_memory_equal(r.auxtrace.data, smp_aux_payload, smp_aux_payload_size);
	assert_int_equal(dc_perf_next(f, &r), 0); /* the cursor did not move */
	assert_true(dc_perf_read_at(f, 1, &r, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "outside the data section"));
	assert_int_equal(dc_perf_seek(f, idx[0].file_offset), 0);
	next_ok(f, &r, PERF_RECORD_AUXTRACE);
	assert_int_equal(r.offset, auxtrace_off);
	assert_int_equal(dc_perf_seek(f, 0), 0);
	next_ok(f, &r, PERF_RECORD_AUXTRACE_INFO);
	assert_true(dc_perf_seek(f, 3) < 0);
	assert_non_null(strstr(dc_perf_errmsg(f), "outside the data section"));
	dc_perf_close(f);
	rm_tmp(&t);
}

/* In-memory records through dc_perf_parse (no file: sid stays invalid). */
static void test_parse_records(void **state)
{
	uint8_t buf[256];
	struct dc_perf_record r;
	char err[256];
	struct perf_event_header h;
	uint64_t v;

	(void)state;
	/* AUX flags */
	memset(buf, 0, sizeof(buf));
	h = (struct perf_event_header){ PERF_RECORD_AUX, 0, 32 };
	memcpy(buf, &h, 8);
	v = PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_COLLISION;
	memcpy(buf + 24, &v, 8);
	assert_int_equal(dc_perf_parse(NULL, buf, 32, &r, err, sizeof(err)), 0);
	assert_false(r.sid.valid);
	assert_int_equal(r.aux.flags, PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_COLLISION);

	/* SWITCH: preempt only counts with out */
	h = (struct perf_event_header){ PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT_PREEMPT, 8 };
	memcpy(buf, &h, 8);
	assert_int_equal(dc_perf_parse(NULL, buf, 8, &r, err, sizeof(err)), 0);
	assert_false(r.sw.out);
	assert_false(r.sw.preempt);
	h.misc |= PERF_RECORD_MISC_SWITCH_OUT;
	memcpy(buf, &h, 8);
	assert_int_equal(dc_perf_parse(NULL, buf, 8, &r, err, sizeof(err)), 0);
	assert_true(r.sw.out && r.sw.preempt);
	assert_false(r.sw.cpu_wide);

	/* MMAP2 with a build id */
	memset(buf, 0, sizeof(buf));
	h = (struct perf_event_header){ PERF_RECORD_MMAP2,
		PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID, 80 };
	memcpy(buf, &h, 8);
	buf[40] = 20;
	buf[44] = 0xab;
	buf[63] = 0xcd;
	memcpy(buf + 72, "/bin/x", 7);
	assert_int_equal(dc_perf_parse(NULL, buf, 80, &r, err, sizeof(err)), 0);
	assert_true(r.mmap.has_build_id);
	assert_int_equal(r.mmap.build_id_size, 20);
	assert_int_equal(r.mmap.build_id[0], 0xab);
	assert_int_equal(r.mmap.build_id[19], 0xcd);
	assert_string_equal(r.mmap.filename, "/bin/x");

	/* An unterminated file name is an error, not a read past the record. */
	memset(buf + 72, 'x', 8);
	assert_true(dc_perf_parse(NULL, buf, 80, &r, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "unterminated"));

	/* Old 32-byte TIME_CONV */
	memset(buf, 0, sizeof(buf));
	h = (struct perf_event_header){ PERF_RECORD_TIME_CONV, 0, 32 };
	memcpy(buf, &h, 8);
	v = 7;
	memcpy(buf + 8, &v, 8);
	assert_int_equal(dc_perf_parse(NULL, buf, 32, &r, err, sizeof(err)), 0);
	assert_int_equal(r.time_conv.time_shift, 7);
	assert_false(r.time_conv.has_ext);

	/* Unknown types come back unparsed, with their size. */
	h = (struct perf_event_header){ 200, 0, 24 };
	memcpy(buf, &h, 8);
	assert_int_equal(dc_perf_parse(NULL, buf, 24, &r, err, sizeof(err)), 0);
	assert_false(r.parsed);
	assert_int_equal(r.total_size, 24);
	assert_null(dc_perf_type_name(200));
	assert_string_equal(dc_perf_type_name(PERF_RECORD_AUXTRACE), "AUXTRACE");
	assert_string_equal(dc_perf_type_name(PERF_RECORD_SWITCH_CPU_WIDE), "SWITCH_CPU_WIDE");

	/* Too short for its type; AUXTRACE payload past the end. */
	h = (struct perf_event_header){ PERF_RECORD_FORK, 0, 16 };
	memcpy(buf, &h, 8);
	assert_true(dc_perf_parse(NULL, buf, 16, &r, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "FORK record too short"));
	memset(buf, 0, sizeof(buf));
	h = (struct perf_event_header){ PERF_RECORD_AUXTRACE, 0, 48 };
	memcpy(buf, &h, 8);
	v = 100;
	memcpy(buf + 8, &v, 8);
	assert_true(dc_perf_parse(NULL, buf, 48 + 99, &r, err, sizeof(err)) < 0);
	assert_int_equal(dc_perf_parse(NULL, buf, 48 + 100, &r, err, sizeof(err)), 0);
	assert_ptr_equal(r.auxtrace.data, buf + 48);
}

/* ID_INDEX records map more ids to attrs while iterating. */
static void test_id_index(void **state)
{
	struct tmpdir t;
	struct rc_perf_writer *w;
	struct dc_perf_file *f;
	struct dc_perf_record r;
	struct perf_event_attr a;
	uint64_t ids0[] = { 11 }, ids1[] = { 22 };
	uint8_t rec[16 + 32 + 8];
	struct perf_event_header h;
	uint64_t v;
	char err[256];
	struct dc_sample_id sid = { .id = 22, .pid = 5, .tid = 6, .time = 99 };

	(void)state;
	mk_tmp(&t);
	assert_int_equal(rc_perf_create(t.path, &w, err, sizeof(err)), 0);
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	assert_int_equal(rc_perf_add_attr(w, &a, ids0, 1), 0);
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	assert_int_equal(rc_perf_add_attr(w, &a, ids1, 1), 0);
	/* ID_INDEX: id 33 belongs to attr 1 */
	memset(rec, 0, sizeof(rec));
	h = (struct perf_event_header){ PERF_RECORD_ID_INDEX, 0, 16 + 32 };
	memcpy(rec, &h, 8);
	v = 1;
	memcpy(rec + 8, &v, 8);
	v = 33;
	memcpy(rec + 16, &v, 8);
	v = 1;
	memcpy(rec + 24, &v, 8);
	assert_int_equal(rc_perf_write(w, rec), 0);
	/* An ITRACE_START whose trailer carries id 33 (written raw). */
	assert_int_equal(rc_perf_itrace_start(w, 5, 6, &sid), 0);
	memset(rec, 0, sizeof(rec));
	h = (struct perf_event_header){ PERF_RECORD_ITRACE_START, 0, 16 + 24 };
	memcpy(rec, &h, 8);
	v = (6ULL << 32) | 5;
	memcpy(rec + 16, &v, 8);
	v = 1234;
	memcpy(rec + 24, &v, 8);
	v = 33;
	memcpy(rec + 32, &v, 8);
	assert_int_equal(rc_perf_write(w, rec), 0);
	/* attrs are fixed once records started */
	assert_int_equal(rc_perf_add_attr(w, &a, ids1, 1), -EINVAL);
	rc_perf_abort(w);
	assert_int_equal(count_entries(t.dir), 0);

	/* again without the failed add_attr, which poisons the writer */
	assert_int_equal(rc_perf_create(t.path, &w, err, sizeof(err)), 0);
	a.config = PERF_COUNT_SW_DUMMY;
	assert_int_equal(rc_perf_add_attr(w, &a, ids0, 1), 0);
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	assert_int_equal(rc_perf_add_attr(w, &a, ids1, 1), 0);
	memset(rec, 0, sizeof(rec));
	h = (struct perf_event_header){ PERF_RECORD_ID_INDEX, 0, 16 + 32 };
	memcpy(rec, &h, 8);
	v = 1;
	memcpy(rec + 8, &v, 8);
	v = 33;
	memcpy(rec + 16, &v, 8);
	v = 1;
	memcpy(rec + 24, &v, 8);
	assert_int_equal(rc_perf_write(w, rec), 0);
	h = (struct perf_event_header){ PERF_RECORD_ITRACE_START, 0, 16 + 24 };
	memset(rec, 0, sizeof(rec));
	memcpy(rec, &h, 8);
	v = (6ULL << 32) | 5;
	memcpy(rec + 16, &v, 8);
	v = 1234;
	memcpy(rec + 24, &v, 8);
	v = 33;
	memcpy(rec + 32, &v, 8);
	assert_int_equal(rc_perf_write(w, rec), 0);
	assert_int_equal(rc_perf_close(w), 0);

	if (dc_perf_open(t.path, &f, err, sizeof(err)))
		fail_msg("%s", err);
	assert_null(dc_perf_attr_by_id(f, 33));
	next_ok(f, &r, PERF_RECORD_ID_INDEX);
	assert_int_equal(r.id_index.nr, 1);
	assert_ptr_equal(dc_perf_attr_by_id(f, 33), dc_perf_attr_at(f, 1));
	next_ok(f, &r, PERF_RECORD_ITRACE_START);
	assert_ptr_equal(r.attr, dc_perf_attr_at(f, 1));
	assert_true(r.sid.valid);
	assert_int_equal(r.sid.id, 33);
	assert_int_equal(r.sid.time, 1234);
	assert_int_equal(r.sid.tid, 6);
	dc_perf_close(f);
	rm_tmp(&t);
}

static void test_writer_rules(void **state)
{
	struct tmpdir t;
	struct rc_perf_writer *w;
	struct perf_event_attr a;
	uint64_t id = 1;
	char err[256];
	struct stat st;
	struct dc_sample_id sid = { .id = 1 };

	(void)state;
	mk_tmp(&t);
	assert_int_equal(rc_perf_create(t.path, &w, err, sizeof(err)), 0);
	/* Nothing under the final name until close. */
	assert_int_equal(stat(t.path, &st), -1);
	assert_int_equal(count_entries(t.dir), 1);
	memset(&a, 0, sizeof(a));
	a.size = 136; /* perf 6.1 cannot read it */
	assert_int_equal(rc_perf_add_attr(w, &a, &id, 1), -EINVAL);
	assert_non_null(strstr(rc_perf_errmsg(w), "attr size 136"));
	rc_perf_abort(w);
	assert_int_equal(count_entries(t.dir), 0);

	assert_int_equal(rc_perf_create(t.path, &w, err, sizeof(err)), 0);
	a.size = 0; /* default size */
	assert_int_equal(rc_perf_add_attr(w, &a, &id, 1), 0);
	assert_int_equal(rc_perf_auxtrace(w, "abc", 3, 0, 0, 0, 0, 0), -EINVAL);
	assert_non_null(strstr(rc_perf_errmsg(w), "reference"));
	/* a failed writer cannot be closed into a file */
	assert_true(rc_perf_finish(w, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "reference"));
	assert_int_equal(count_entries(t.dir), 0);

	/* AUXTRACE_INFO must name an attr's type */
	assert_int_equal(rc_perf_create(t.path, &w, err, sizeof(err)), 0);
	assert_int_equal(rc_perf_add_attr(w, &a, &id, 1), 0);
	{
		struct dc_pt_info pt = smp_pt_info;

		pt.pmu_type = 77;
		assert_int_equal(rc_perf_auxtrace_info_pt(w, &pt), -EINVAL);
		assert_non_null(strstr(rc_perf_errmsg(w), "pmu_type 77"));
	}
	rc_perf_abort(w);

	/* a sample id of no attr (with two attrs) is refused */
	assert_int_equal(rc_perf_create(t.path, &w, err, sizeof(err)), 0);
	assert_int_equal(rc_perf_add_attr(w, &a, &id, 1), 0);
	id = 2;
	assert_int_equal(rc_perf_add_attr(w, &a, &id, 1), 0);
	sid.id = 3;
	assert_int_equal(rc_perf_itrace_start(w, 1, 2, &sid), -EINVAL);
	rc_perf_abort(w);

	/* the smallest good file: one attr, no records */
	assert_int_equal(rc_perf_create(t.path, &w, err, sizeof(err)), 0);
	assert_int_equal(rc_perf_add_attr(w, &a, &id, 1), 0);
	assert_int_equal(rc_perf_close(w), 0);
	assert_int_equal(stat(t.path, &st), 0);
	assert_int_equal(count_entries(t.dir), 1);
	{
		struct dc_perf_file *f;
		struct dc_perf_record r;

		assert_int_equal(dc_perf_open(t.path, &f, err, sizeof(err)), 0);
		assert_int_equal(dc_perf_attr_at(f, 0)->file_attr_size, PF_ATTR_SIZE_MAX_PERF61);
		assert_int_equal(dc_perf_next(f, &r), 0);
		dc_perf_close(f);
	}
	rm_tmp(&t);
}

/* A file over 4 GiB: the sample file with its AUXTRACE payload grown to
 * 5 GiB (a sparse hole) and a COMM after it, features moved along. */
static void test_large_file(void **state)
{
	const uint64_t big = 5ULL << 30;
	struct tmpdir t;
	char err[512], small[160];
	FILE *in;
	uint8_t *buf;
	long n;
	struct pf_file_header h;
	struct dc_perf_file *f;
	struct dc_perf_record r;
	uint64_t data_end, aux_off, comm_off = 0, comm_size = 0, new_end, delta;
	size_t nfeat = 0;
	int fd;

	(void)state;
	mk_tmp(&t);
	snprintf(small, sizeof(small), "%s/small.data", t.dir);
	assert_int_equal(smp_write(small, err, sizeof(err)), 0);
	in = fopen(small, "rb");
	assert_non_null(in);
	fseek(in, 0, SEEK_END);
	n = ftell(in);
	rewind(in);
	buf = malloc((size_t)n);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, in), (size_t)n);
	fclose(in);
	memcpy(&h, buf, sizeof(h));
	data_end = h.data.offset + h.data.size;
	aux_off = data_end - 48 - 24; /* the AUXTRACE record is the last one */
	assert_int_equal(buf[aux_off], PERF_RECORD_AUXTRACE);
	for (uint64_t off = h.data.offset; off < aux_off;) { /* find the COMM */
		uint16_t sz;

		memcpy(&sz, buf + off + 6, 2);
		if (buf[off] == PERF_RECORD_COMM && !comm_off) {
			comm_off = off;
			comm_size = sz;
		}
		off += sz;
	}
	assert_true(comm_off);
	new_end = aux_off + 48 + big + comm_size;
	delta = new_end - data_end;
	for (int i = 0; i < PF_FEAT_BITS; i++)
		nfeat += !!(h.adds_features[i / 64] & (1ULL << (i % 64)));
	for (size_t i = 0; i < nfeat; i++) {
		struct pf_file_section s;

		memcpy(&s, buf + data_end + i * 16, 16);
		s.offset += delta;
		memcpy(buf + data_end + i * 16, &s, 16);
	}
	h.data.size += delta;
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + aux_off + 8, &big, 8);

	fd = open(t.path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, buf, aux_off + 48 + 24, 0), (ssize_t)(aux_off + 48 + 24));
	assert_int_equal(pwrite(fd, buf + comm_off, comm_size, (off_t)(aux_off + 48 + big)),
			 (ssize_t)comm_size);
	assert_int_equal(pwrite(fd, buf + data_end, (size_t)n - data_end, (off_t)new_end),
			 (ssize_t)((size_t)n - data_end));
	close(fd);
	free(buf);
	unlink(small);

	if (dc_perf_open(t.path, &f, err, sizeof(err)))
		fail_msg("%s", err);
	assert_true(dc_perf_file_size(f) > (4ULL << 30));
	check_header(f);
	while (dc_perf_next(f, &r) == 1 && r.type != PERF_RECORD_AUXTRACE)
		;
	assert_int_equal(r.type, PERF_RECORD_AUXTRACE);
	assert_int_equal(r.auxtrace.size, big);
	assert_int_equal(((const uint8_t *)r.auxtrace.data)[0], 0x02);
	assert_int_equal(((const uint8_t *)r.auxtrace.data)[big - 1], 0);
	next_ok(f, &r, PERF_RECORD_COMM);
	assert_int_equal(r.offset, aux_off + 48 + big);
	assert_true(r.offset > (4ULL << 30));
	assert_string_equal(r.comm.comm, SMP_COMM);
	check_sid(&r, SMP_DUMMY_ID0, SMP_PID, SMP_TID, SMP_T0 + 1000, 0);
	assert_int_equal(dc_perf_next(f, &r), 0);
	dc_perf_close(f);
	rm_tmp(&t);
}

static void put_file_bytes(const char *path, const void *buf, size_t n)
{
	FILE *o = fopen(path, "wb");

	assert_non_null(o);
	assert_int_equal(fwrite(buf, 1, n, o), n);
	assert_int_equal(fclose(o), 0);
}

/* A pipe-mode stream built here byte by byte (record/ writes file mode
 * only): the 16-byte header, then records appended by pipe_put. */
struct pipebuf {
	uint8_t b[2048];
	size_t n;
};

static void pipe_put(struct pipebuf *pb, uint32_t type, uint16_t misc, const void *body,
		     size_t len)
{
	struct perf_event_header h = { type, misc, (uint16_t)(sizeof(h) + len) };

	assert_true(pb->n + sizeof(h) + len <= sizeof(pb->b));
	memcpy(pb->b + pb->n, &h, sizeof(h));
	memcpy(pb->b + pb->n + sizeof(h), body, len);
	pb->n += sizeof(h) + len;
}

static void pipe_start(struct pipebuf *pb)
{
	uint64_t magic = PF_MAGIC2, hsize = PF_PIPE_HEADER_SIZE;
	struct perf_event_attr attr = { .type = PERF_TYPE_SOFTWARE,
					.size = PERF_ATTR_SIZE_VER0,
					.config = PERF_COUNT_SW_DUMMY };
	uint8_t body[PERF_ATTR_SIZE_VER0 + 8] = { 0 };
	uint64_t id = 5;

	pb->n = 0;
	memcpy(pb->b, &magic, 8);
	memcpy(pb->b + 8, &hsize, 8);
	pb->n = 16;
	memcpy(body, &attr, PERF_ATTR_SIZE_VER0);
	memcpy(body + PERF_ATTR_SIZE_VER0, &id, 8);
	pipe_put(pb, PERF_RECORD_HEADER_ATTR, 0, body, sizeof(body));
}

/* A build-id entry's body (after its header): pid, id[24] (byte 20 the
 * id's length), then the name NUL-padded to pad bytes. */
static size_t bid_body(uint8_t *out, int32_t pid, uint8_t first, size_t idlen,
		       const char *name, size_t pad)
{
	memset(out, 0, 28 + pad);
	memcpy(out, &pid, 4);
	for (size_t i = 0; i < idlen; i++)
		out[4 + i] = (uint8_t)(first + i);
	out[4 + 20] = (uint8_t)idlen;
	memcpy(out + 28, name, strlen(name) < pad ? strlen(name) : pad);
	return 28 + pad;
}

static void check_bid(const struct dc_build_id *b, int32_t pid, uint8_t first, size_t size,
		      const char *name)
{
	assert_int_equal(b->pid, pid);
	assert_int_equal(b->misc, PERF_RECORD_MISC_USER);
	assert_int_equal(b->size, size);
	assert_int_equal(b->id[0], first);
	assert_int_equal(b->id[size - 1], (uint8_t)(first + size - 1));
	assert_string_equal(b->filename, name);
}

/* A pipe's HEADER_BUILD_ID records (perf inject -b / --buildid-all) feed
 * the build-id table, in stream order and before a BUILD_ID feature's
 * entries, and dc_perf_next hands each record out parsed; a record too
 * small for an entry, or with an unterminated name, is refused at open
 * with one line naming the record. */
static void test_pipe_build_ids(void **state)
{
	struct tmpdir t;
	struct pipebuf pb;
	struct dc_perf_file *f;
	struct dc_perf_record r;
	uint8_t body[128];
	char err[512];
	size_t len;
	uint64_t feat = HEADER_BUILD_ID;

	(void)state;
	mk_tmp(&t);
	pipe_start(&pb);
	/* 16-byte id, with the size flag (perf 5.11 on) */
	len = bid_body(body, -1, 0x10, 16, "/bin/a", 64);
	pipe_put(&pb, PERF_RECORD_HEADER_BUILD_ID,
		 PERF_RECORD_MISC_USER | PF_BUILD_ID_MISC_SIZE, body, len);
	/* no flag (perf 6.1's inject writes none): 20 bytes */
	len = bid_body(body, 7, 0x40, 20, "/usr/lib/b.so", 16);
	pipe_put(&pb, PERF_RECORD_HEADER_BUILD_ID, PERF_RECORD_MISC_USER, body, len);
	/* the BUILD_ID feature as a HEADER_FEATURE record: feature id, entry */
	memcpy(body, &feat, 8);
	{
		struct perf_event_header eh = { PERF_RECORD_HEADER_BUILD_ID,
						PERF_RECORD_MISC_USER, 36 + 8 };

		memcpy(body + 8, &eh, sizeof(eh));
		bid_body(body + 16, 3, 0x80, 20, "/bin/c", 8);
	}
	pipe_put(&pb, PERF_RECORD_HEADER_FEATURE, 0, body, 16 + 36);
	put_file_bytes(t.path, pb.b, pb.n);

	if (dc_perf_open(t.path, &f, err, sizeof(err)))
		fail_msg("open: %s", err);
	assert_int_equal(dc_perf_nr_build_ids(f), 3);
	check_bid(dc_perf_build_id_at(f, 0), -1, 0x10, 16, "/bin/a");
	check_bid(dc_perf_build_id_at(f, 1), 7, 0x40, 20, "/usr/lib/b.so");
	check_bid(dc_perf_build_id_at(f, 2), 3, 0x80, 20, "/bin/c");
	assert_int_equal(dc_perf_next(f, &r), 1);
	assert_int_equal(r.type, PERF_RECORD_HEADER_ATTR);
	next_ok(f, &r, PERF_RECORD_HEADER_BUILD_ID);
	check_bid(&r.build_id, -1, 0x10, 16, "/bin/a");
	next_ok(f, &r, PERF_RECORD_HEADER_BUILD_ID);
	check_bid(&r.build_id, 7, 0x40, 20, "/usr/lib/b.so");
	dc_perf_close(f);

	/* a record of 32 bytes, too small for an entry, after a good one */
	pipe_start(&pb);
	len = bid_body(body, -1, 0x10, 20, "/bin/a", 8);
	pipe_put(&pb, PERF_RECORD_HEADER_BUILD_ID, PERF_RECORD_MISC_USER, body, len);
	pipe_put(&pb, PERF_RECORD_HEADER_BUILD_ID, PERF_RECORD_MISC_USER, body, 24);
	put_file_bytes(t.path, pb.b, pb.n);
	assert_int_equal(dc_perf_open(t.path, &f, err, sizeof(err)), -EINVAL);
	assert_null(f);
	assert_non_null(strstr(err, t.path));
	assert_non_null(strstr(err, ": HEADER_BUILD_ID record at offset 0x8c: size 32 is "
				    "under the 36 bytes of a build-id entry"));
	assert_null(strchr(err, '\n'));

	/* a name that fills its record with no NUL */
	pipe_start(&pb);
	len = bid_body(body, -1, 0x10, 20, "/bin/abcdefgh", 8);
	pipe_put(&pb, PERF_RECORD_HEADER_BUILD_ID, PERF_RECORD_MISC_USER, body, len);
	put_file_bytes(t.path, pb.b, pb.n);
	assert_int_equal(dc_perf_open(t.path, &f, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ": HEADER_BUILD_ID record at offset 0x60: file name "
				    "not NUL-terminated"));
	rm_tmp(&t);
}

/* A trace that ends where the file ends, at a page boundary (a pipe-mode
 * file's last record is an AUXTRACE; a cut file): the bytes after its
 * data read as zeros, not a fault (libipt looks one byte past a buffer
 * that ends in PSB pattern, decoder/ptpkt.h's DC_PT_SLACK). Before the
 * zero page after the mapping, this test died of SIGBUS. */
static void test_aux_at_file_end(void **state)
{
	struct tmpdir t;
	struct pipebuf pb;
	struct dc_perf_file *f;
	struct dc_perf_record r;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), len;
	uint64_t body[5] = { 0 };
	uint8_t *file, *aux;
	char err[256];

	(void)state;
	pipe_start(&pb);
	/* (size, offset, reference, idx, tid, cpu, reserved) */
	len = pg - pb.n - 8 - sizeof(body);
	body[0] = len;
	body[3] = 0xffffffff00000000ull;   /* idx 0, tid -1 */
	body[4] = 0;                       /* cpu 0 */
	file = calloc(1, pg);
	assert_non_null(file);
	memcpy(file, pb.b, pb.n);
	{
		struct perf_event_header h = { PERF_RECORD_AUXTRACE, 0, 8 + sizeof(body) };

		memcpy(file + pb.n, &h, sizeof(h));
		memcpy(file + pb.n + sizeof(h), body, sizeof(body));
	}
	aux = file + pb.n + 8 + sizeof(body);
	for (size_t i = 0; i < len; i++)   /* PSB pattern to the end */
		aux[i] = i & 1 ? 0x82 : 0x02;
	mk_tmp(&t);
	put_file_bytes(t.path, file, pg);
	free(file);
	if (dc_perf_open(t.path, &f, err, sizeof(err)))
		fail_msg("open: %s", err);
	while (dc_perf_next(f, &r) == 1 && r.type != PERF_RECORD_AUXTRACE)
		;
	assert_int_equal(r.type, PERF_RECORD_AUXTRACE);
	assert_int_equal(r.auxtrace.size, len);
	assert_int_equal(r.auxtrace.data_offset + len, pg);
	for (size_t i = 0; i < DC_PT_SLACK; i++)
		assert_int_equal(((const uint8_t *)r.auxtrace.data)[len + i], 0);
	dc_perf_close(f);
	rm_tmp(&t);
}

static void test_tsc_to_ns(void **state)
{
	struct dc_pt_info pt = { .time_shift = 10, .time_mult = 642, .time_zero = 1000 };
	uint64_t tsc = 123456789012ULL;
	unsigned __int128 want = (unsigned __int128)tsc * 642;

	(void)state;
	/* (tsc * mult) >> shift, computed without overflow, plus zero */
	assert_int_equal(dc_pt_tsc_to_ns(&pt, tsc), (uint64_t)(want >> 10) + 1000);
	assert_int_equal(dc_pt_tsc_to_ns(&pt, 0), 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_parse_records),
		cmocka_unit_test(test_id_index),
		cmocka_unit_test(test_writer_rules),
		cmocka_unit_test(test_large_file),
		cmocka_unit_test(test_tsc_to_ns),
		cmocka_unit_test(test_pipe_build_ids),
		cmocka_unit_test(test_aux_at_file_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
