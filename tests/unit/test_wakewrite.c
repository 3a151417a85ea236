/* Unit tests: wake records (sched:sched_waking samples) written by
 * record/perfwriter.c and the tracepoint id lookup of record/wake.c; read
 * back with the decoder's perf.data reader, the RAW payload by its byte
 * offsets (the interface both recorders and the reader keep). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "decoder/decoder.h"
#include "record/record.h"
#include "record/wake.h"

#define WAKE_ID 0x3000u
#define TP_ID 317u

static char dir[64], path[128];

static void mk_tmp(void)
{
	strcpy(dir, "/tmp/ptf-wakewrite-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/perf.data", dir);
}

static void put_file(const char *rel, const char *text)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static void test_wake_round_trip(void **state)
{
	struct rc_perf_writer *w;
	struct dc_perf_file *f;
	struct dc_perf_record r;
	struct perf_event_attr a;
	uint8_t raw[RC_WAKE_RAW_SIZE];
	uint64_t ids[2] = { WAKE_ID, WAKE_ID + 1 }, size;
	char err[512];

	(void)state;
	mk_tmp();
	if (rc_perf_create(path, &w, err, sizeof(err)))
		fail_msg("%s", err);
	rc_perf_wake_attr(&a, TP_ID);
	assert_int_equal(a.type, PERF_TYPE_TRACEPOINT);
	assert_int_equal(a.sample_period, 1);
	assert_int_equal(rc_perf_add_attr_named(w, &a, ids, 2, RC_WAKE_EVENT_NAME), 0);
	/* waker 101/102 on cpu 1 at t=5000 wakes 103 "a-very-long-thread-name" */
	rc_perf_wake_raw(raw, TP_ID, 102, "a-very-long-thread-name", 103, 120, 0);
	struct dc_sample_id s = { .pid = 101, .tid = 102, .time = 5000, .cpu = 1,
				  .id = WAKE_ID + 1 };
	assert_int_equal(rc_perf_wake(w, &s, raw), 0);
	assert_int_equal(rc_perf_close(w), 0);

	if (dc_perf_open(path, &f, err, sizeof(err)))
		fail_msg("%s", err);
	const struct dc_perf_attr *pa = dc_perf_attr_at(f, 0);
	assert_int_equal(pa->attr.type, PERF_TYPE_TRACEPOINT);
	assert_int_equal(pa->attr.config, TP_ID);
	assert_int_equal(pa->attr.sample_type,
			 PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW);
	assert_true(pa->attr.sample_id_all);
	assert_int_equal(dc_perf_next(f, &r), 1);
	assert_int_equal(r.type, PERF_RECORD_SAMPLE);
	assert_true(r.sid.valid);
	assert_int_equal(r.sid.pid, 101);
	assert_int_equal(r.sid.tid, 102);
	assert_int_equal(r.sid.time, 5000);
	assert_int_equal(r.sid.cpu, 1);
	assert_int_equal(r.sid.id, WAKE_ID + 1);
	assert_int_equal(r.size % 8, 0);
	/* header, id, ip, pid/tid, time, cpu, then RAW: u32 size + payload */
	const uint8_t *p = (const uint8_t *)r.raw;
	assert_int_equal(rd64(p + 8), WAKE_ID + 1);
	assert_int_equal(rd64(p + 16), 0);
	const uint8_t *rw = p + 48;
	uint32_t rsz = rd32(rw);
	assert_true(rsz >= RC_WAKE_RAW_SIZE);
	assert_int_equal((4 + rsz) % 8, 0);
	assert_int_equal(48 + 4 + rsz, r.size);
	rw += 4;
	assert_int_equal(rw[0] | rw[1] << 8, TP_ID);
	assert_int_equal((int32_t)rd32(rw + 4), 102);                /* common_pid: waker */
	assert_string_equal((const char *)rw + 8, "a-very-long-thr"); /* comm[16], cut */
	assert_int_equal((int32_t)rd32(rw + 24), 103);               /* pid: wakee */
	assert_int_equal((int32_t)rd32(rw + 28), 120);
	assert_int_equal((int32_t)rd32(rw + 32), 0);
	assert_int_equal(dc_perf_next(f, &r), 0);
	/* perf needs the event's format: HEADER_TRACING_DATA with its id */
	const char *td = dc_perf_feature(f, HEADER_TRACING_DATA, &size);
	assert_non_null(td);
	assert_true(size > 10 && !memcmp(td, "\x17\x08\x44tracing", 10));
	assert_non_null(memmem(td, size, "name: sched_waking\nID: 317\n", 27));
	assert_non_null(memmem(td, size, "field:pid_t pid;\toffset:24;\tsize:4;", 35));
	dc_perf_close(f);
	unlink(path);
	rmdir(dir);
}

/* A sample of a field the writer cannot fill is refused, not garbled. */
static void test_sample_rules(void **state)
{
	struct rc_perf_writer *w;
	struct perf_event_attr a;
	uint64_t id = 7;
	char err[512];

	(void)state;
	mk_tmp();
	assert_int_equal(rc_perf_create(path, &w, err, sizeof(err)), 0);
	rc_perf_wake_attr(&a, TP_ID);
	a.sample_type |= PERF_SAMPLE_CALLCHAIN;
	assert_int_equal(rc_perf_add_attr(w, &a, &id, 1), 0);
	struct dc_sample_id s = { .id = 7 };
	assert_int_equal(rc_perf_sample(w, &s, 0, NULL, 0), -EINVAL);
	assert_non_null(strstr(rc_perf_errmsg(w), "sample_type"));
	rc_perf_abort(w);
	rmdir(dir);
}

static void test_tp_id(void **state)
{
	uint64_t id;

	(void)state;
	mk_tmp();
	assert_int_equal(rc_wake_tp_id(dir, &id), -ENOENT);
	assert_int_equal(id, RC_WAKE_TP_ID_NONE);
	char p[256];
	snprintf(p, sizeof(p), "%s/events", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/events/sched", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/events/sched/sched_waking", dir);
	mkdir(p, 0700);
	put_file("events/sched/sched_waking/id", "317\n");
	assert_int_equal(rc_wake_tp_id(dir, &id), 0);
	assert_int_equal(id, 317);
	put_file("events/sched/sched_waking/id", "junk\n");
	assert_int_equal(rc_wake_tp_id(dir, &id), -EINVAL);
	assert_int_equal(id, RC_WAKE_TP_ID_NONE);
	put_file("events/sched/sched_waking/id", "70000\n");  /* no u16 */
	assert_int_equal(rc_wake_tp_id(dir, &id), -EINVAL);
	snprintf(p, sizeof(p), "%s/events/sched/sched_waking/id", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/events/sched/sched_waking", dir);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/events/sched", dir);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/events", dir);
	rmdir(p);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wake_round_trip),
		cmocka_unit_test(test_sample_rules),
		cmocka_unit_test(test_tp_id),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
