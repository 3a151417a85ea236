/* Unit tests: wake records (sched:sched_waking / sched_wakeup samples) in
 * perf.data: the reader finds the wake attr by its HEADER_EVENT_DESC name,
 * reads the RAW payload by the sample_type bits (ptflame's layout and
 * perf record's), refuses short payloads without crashing, and the session
 * hands wakes over in time order with the other sideband records (a wake
 * first at its time stamp), a bad one counted and said once. Files are
 * written with the record/ writer in the test. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <cmocka.h>

#include "decoder/decoder.h"
#include "record/record.h"
#include "tests/unit/test_perfdata_sample.h"

#define WAKE_ID 3001
#define WAKE_ID_PERF 3002
#define TP_CONFIG 317           /* any tracepoint id: readers ignore it */

struct tmp {
	char dir[64];
	char path[128];
};

static void mk_tmp(struct tmp *t)
{
	strcpy(t->dir, "/tmp/ptf-wake-XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	snprintf(t->path, sizeof(t->path), "%s/perf.data", t->dir);
}

static void rm_tmp(struct tmp *t)
{
	unlink(t->path);
	rmdir(t->dir);
}

/* ---- building a file ---------------------------------------------------- */

struct buf {
	uint8_t b[4096];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	assert_true(b->n + n <= sizeof(b->b));
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void put64(struct buf *b, uint64_t v) { put(b, &v, 8); }

/* A perf string as perf writes it: u32 len, NUL-padded to 64. */
static void put_pstr(struct buf *b, const char *s)
{
	char pad[64] = { 0 };
	uint32_t len = 64;

	strncpy(pad, s, sizeof(pad) - 1);
	put32(b, len);
	put(b, pad, len);
}

static void pt_attr(struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->type = SMP_PT_TYPE;
	a->size = PERF_ATTR_SIZE_VER7;
	a->config = 0x300e601;
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	a->exclude_kernel = 1;
	a->sample_id_all = 1;
	a->aux_watermark = 0x4000;
}

static void dummy_attr(struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->type = PERF_TYPE_SOFTWARE;
	a->size = PERF_ATTR_SIZE_VER7;
	a->config = PERF_COUNT_SW_DUMMY;
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	a->mmap = a->comm = a->task = a->mmap2 = a->comm_exec = a->context_switch = 1;
	a->sample_id_all = 1;
}

/* ptflame's wake attr (the interface) or perf record's (IP, ID, PERIOD and
 * a CALLCHAIN before RAW). */
static void wake_attr(struct perf_event_attr *a, bool perf_style)
{
	memset(a, 0, sizeof(*a));
	a->type = PERF_TYPE_TRACEPOINT;
	a->size = PERF_ATTR_SIZE_VER7;
	a->config = TP_CONFIG;
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_RAW;
	if (perf_style)
		a->sample_type |= PERF_SAMPLE_IP | PERF_SAMPLE_ID | PERF_SAMPLE_PERIOD |
				  PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_READ;
	a->sample_id_all = 1;
}

struct wake_spec {
	uint64_t time;
	uint32_t waker_pid, waker_tid, cpu;
	int32_t wakee;
	const char *wakee_comm;
	uint32_t raw_size;        /* 0: the full 36-byte payload */
	bool perf_style;
};

/* A SAMPLE of the wake attr; raw_size < 36 cuts the payload. */
static void build_wake(struct buf *bp, const struct wake_spec *s)
{
	struct buf b = { .n = 0 };
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE };
	uint8_t raw[40] = { 0 };
	uint32_t rs = s->raw_size ? s->raw_size : 36, padded;
	int32_t pid = (int32_t)s->waker_tid;

	put(&b, &h, sizeof(h));
	put64(&b, s->perf_style ? WAKE_ID_PERF : WAKE_ID);          /* IDENTIFIER */
	if (s->perf_style)
		put64(&b, 0xffffffff81000000ull);                    /* IP */
	put32(&b, s->waker_pid);                                     /* TID */
	put32(&b, s->waker_tid);
	put64(&b, s->time);                                          /* TIME */
	if (s->perf_style)
		put64(&b, WAKE_ID_PERF);                             /* ID */
	put32(&b, s->cpu);                                           /* CPU */
	put32(&b, 0);
	if (s->perf_style) {
		put64(&b, 1);                                        /* PERIOD */
		put64(&b, 7);                                        /* READ: value */
		put64(&b, 2);                                        /* CALLCHAIN */
		put64(&b, 0xffffffffffffff80ull);
		put64(&b, 0xffffffff81000010ull);
	}
	/* the sched_waking payload */
	memcpy(raw + 4, &pid, 4);                                    /* common_pid */
	strncpy((char *)raw + 8, s->wakee_comm, 16);                 /* comm */
	memcpy(raw + 24, &s->wakee, 4);                              /* pid */
	raw[28] = 120;                                               /* prio */
	padded = (rs + 4 + 7) / 8 * 8 - 4;
	put32(&b, rs);
	put(&b, raw, padded);
	h.size = (uint16_t)b.n;
	memcpy(b.b, &h, sizeof(h));
	*bp = b;
}

static void write_wake(struct rc_perf_writer *w, const struct wake_spec *s)
{
	struct buf b;

	build_wake(&b, s);
	assert_int_equal(rc_perf_write(w, b.b), 0);
}

/* Tracing data as perf writes it holds the format files: what matters
 * here is "name: sched_waking\nID: N\n". */
static const char tracing_text[] =
	"\x17\x08\x44tracing0.6\0...header_page...\n"
	"name: sched_switch\nID: 316\nformat:\n\tfield:...\n"
	"name: sched_waking\nID: 317\nformat:\n\tfield:unsigned short common_type;\n";

/* HEADER_EVENT_DESC naming the attrs (names[i] for attr i, NULL: none). */
static void event_desc(struct rc_perf_writer *w, const struct perf_event_attr *const *attrs,
		       const uint64_t *ids, const char *const *names, size_t n)
{
	struct buf b = { .n = 0 };

	put32(&b, (uint32_t)n);
	put32(&b, PERF_ATTR_SIZE_VER7);
	for (size_t i = 0; i < n; i++) {
		put(&b, attrs[i], PERF_ATTR_SIZE_VER7);
		put32(&b, 1);
		put_pstr(&b, names[i] ? names[i] : "");
		put64(&b, ids[i]);
	}
	assert_int_equal(rc_perf_set_feature(w, HEADER_EVENT_DESC, b.b, b.n), 0);
}

static struct dc_sample_id sid(uint64_t id, uint32_t pid, uint32_t tid, uint64_t t)
{
	struct dc_sample_id s = { .id = id, .pid = pid, .tid = tid, .time = t };

	return s;
}

/* pt + dummy + the wake attrs; wake_name NULL: no EVENT_DESC at all. */
static struct rc_perf_writer *new_file(const char *path, const char *wake_name)
{
	struct perf_event_attr pt, dummy, wk, wkp;
	const struct perf_event_attr *attrs[] = { &pt, &dummy, &wk, &wkp };
	const uint64_t ids[] = { SMP_PT_ID0, SMP_DUMMY_ID0, WAKE_ID, WAKE_ID_PERF };
	const char *names[] = { "intel_pt//u", "dummy:u", wake_name, wake_name };
	uint64_t id;
	struct rc_perf_writer *w;
	char err[256];

	assert_int_equal(rc_perf_create(path, &w, err, sizeof(err)), 0);
	pt_attr(&pt);
	dummy_attr(&dummy);
	wake_attr(&wk, false);
	wake_attr(&wkp, true);
	id = SMP_PT_ID0;
	assert_int_equal(rc_perf_add_attr(w, &pt, &id, 1), 0);
	id = SMP_DUMMY_ID0;
	assert_int_equal(rc_perf_add_attr(w, &dummy, &id, 1), 0);
	id = WAKE_ID;
	assert_int_equal(rc_perf_add_attr(w, &wk, &id, 1), 0);
	id = WAKE_ID_PERF;
	assert_int_equal(rc_perf_add_attr(w, &wkp, &id, 1), 0);
	if (wake_name && strcmp(wake_name, "tracing"))
		event_desc(w, attrs, ids, names, 4);
	else
		assert_int_equal(rc_perf_set_feature(w, HEADER_EVENT_DESC, "\0\0\0\0\0\0\0\0", 8), 0);
	if (wake_name && !strcmp(wake_name, "tracing"))
		assert_int_equal(rc_perf_set_feature(w, HEADER_TRACING_DATA, tracing_text,
						     sizeof(tracing_text)), 0);
	assert_int_equal(rc_perf_auxtrace_info_pt(w, &smp_pt_info), 0);
	return w;
}

static void finish(struct rc_perf_writer *w)
{
	char err[256];

	assert_int_equal(rc_perf_auxtrace(w, smp_aux_payload, smp_aux_payload_size, 0,
					  SMP_AUX_REF, 0, (uint32_t)-1, 0), 0);
	assert_int_equal(rc_perf_finish(w, err, sizeof(err)), 0);
}

/* Every SAMPLE of the file through dc_perf_wake. */
static size_t read_wakes(const char *path, struct dc_wake *out, int *res, size_t max)
{
	struct dc_perf_file *f;
	struct dc_perf_record rec;
	char err[256];
	size_t n = 0;
	int ret;

	assert_int_equal(dc_perf_open(path, &f, err, sizeof(err)), 0);
	while ((ret = dc_perf_next(f, &rec)) > 0) {
		if (rec.type != PERF_RECORD_SAMPLE)
			continue;
		assert_true(n < max);
		memset(&out[n], 0, sizeof(out[n]));
		res[n] = dc_perf_wake(&rec, &out[n]);
		n++;
	}
	assert_int_equal(ret, 0);
	dc_perf_close(f);
	return n;
}

/* ---- reader ------------------------------------------------------------- */

static void test_read_wakes(void **state)
{
	struct wake_spec specs[] = {
		{ .time = 5000, .waker_pid = 100, .waker_tid = 101, .cpu = 3, .wakee = 102,
		  .wakee_comm = "consumer" },
		{ .time = 6000, .waker_pid = 100, .waker_tid = 102, .cpu = 1, .wakee = 101,
		  .wakee_comm = "a-very-long-thread-name", .perf_style = true },
	};
	struct dc_wake w[4];
	int res[4];
	struct tmp t;
	struct rc_perf_writer *wr;
	struct dc_perf_file *f;
	char err[256];

	(void)state;
	mk_tmp(&t);
	wr = new_file(t.path, "sched:sched_waking");
	for (size_t i = 0; i < 2; i++)
		write_wake(wr, &specs[i]);
	finish(wr);

	assert_int_equal(dc_perf_open(t.path, &f, err, sizeof(err)), 0);
	assert_true(dc_perf_has_wakes(f));
	assert_string_equal(dc_perf_attr_at(f, 2)->name, "sched:sched_waking");
	assert_true(dc_perf_attr_at(f, 2)->is_wake);
	assert_true(dc_perf_attr_at(f, 3)->is_wake);
	assert_false(dc_perf_attr_at(f, 0)->is_wake);
	assert_string_equal(dc_perf_attr_at(f, 0)->name, "intel_pt//u");
	dc_perf_close(f);

	assert_int_equal(read_wakes(t.path, w, res, 4), 2);
	assert_int_equal(res[0], 1);
	assert_int_equal(w[0].time, 5000);
	assert_int_equal(w[0].waker_pid, 100);
	assert_int_equal(w[0].waker_tid, 101);
	assert_int_equal(w[0].cpu, 3);
	assert_int_equal(w[0].wakee_tid, 102);
	assert_string_equal(w[0].wakee_comm, "consumer");
	/* perf record's layout: READ and CALLCHAIN skipped by their sizes */
	assert_int_equal(res[1], 1);
	assert_int_equal(w[1].time, 6000);
	assert_int_equal(w[1].waker_tid, 102);
	assert_int_equal(w[1].wakee_tid, 101);
	assert_int_equal(w[1].cpu, 1);
	assert_string_equal(w[1].wakee_comm, "a-very-long-thre");   /* 16 bytes */
	rm_tmp(&t);
}

static void test_wakeup_name(void **state)
{
	struct wake_spec s = { .time = 7000, .waker_pid = 1, .waker_tid = 2, .wakee = 3,
			       .wakee_comm = "x" };
	struct dc_wake w[2];
	int res[2];
	struct tmp t;
	struct rc_perf_writer *wr;

	(void)state;
	mk_tmp(&t);
	wr = new_file(t.path, "sched:sched_wakeup");
	write_wake(wr, &s);
	finish(wr);
	assert_int_equal(read_wakes(t.path, w, res, 2), 1);
	assert_int_equal(res[0], 1);
	assert_int_equal(w[0].wakee_tid, 3);
	rm_tmp(&t);
}

/* A tracepoint that is no wake (or no name at all): no wake. */
static void test_other_tracepoint(void **state)
{
	struct wake_spec s = { .time = 7000, .waker_pid = 1, .waker_tid = 2, .wakee = 3,
			       .wakee_comm = "x" };
	const char *names[] = { "sched:sched_switch", NULL };
	struct dc_wake w[2];
	int res[2];

	(void)state;
	for (int k = 0; k < 2; k++) {
		struct tmp t;
		struct rc_perf_writer *wr;
		struct dc_perf_file *f;
		char err[256];

		mk_tmp(&t);
		wr = new_file(t.path, names[k]);
		write_wake(wr, &s);
		finish(wr);
		assert_int_equal(dc_perf_open(t.path, &f, err, sizeof(err)), 0);
		assert_false(dc_perf_has_wakes(f));
		dc_perf_close(f);
		assert_int_equal(read_wakes(t.path, w, res, 2), 1);
		assert_int_equal(res[0], 0);
		rm_tmp(&t);
	}
}

/* No EVENT_DESC name: the tracing data's format names the tracepoint by
 * its id (the attr's config); in a file, and in a pipe-mode stream (perf
 * record -o -), which has no EVENT_DESC at all. */
static void test_tracing_data(void **state)
{
	struct wake_spec s = { .time = 7000, .waker_pid = 1, .waker_tid = 2, .wakee = 3,
			       .wakee_comm = "x" };
	struct dc_wake w[2];
	int res[2];
	struct tmp t;
	struct rc_perf_writer *wr;
	struct dc_perf_file *f;
	char err[256];
	FILE *fp;
	struct buf b = { .n = 0 };
	struct perf_event_attr a;
	struct perf_event_header h;
	uint64_t v;
	uint32_t tsize = (uint32_t)(sizeof(tracing_text) + 7) / 8 * 8;

	(void)state;
	mk_tmp(&t);
	wr = new_file(t.path, "tracing");
	write_wake(wr, &s);
	finish(wr);
	assert_int_equal(dc_perf_open(t.path, &f, err, sizeof(err)), 0);
	assert_string_equal(dc_perf_attr_at(f, 2)->name, "sched:sched_waking");
	assert_true(dc_perf_attr_at(f, 2)->is_wake);
	dc_perf_close(f);
	assert_int_equal(read_wakes(t.path, w, res, 2), 1);
	assert_int_equal(res[0], 1);

	/* the pipe: header, HEADER_ATTR, TRACING_DATA and its bytes, SAMPLE */
	fp = fopen(t.path, "w");
	assert_non_null(fp);
	fwrite("PERFILE2", 1, 8, fp);
	v = 16;
	fwrite(&v, 8, 1, fp);
	wake_attr(&a, false);
	a.sample_type |= PERF_SAMPLE_IDENTIFIER;
	h = (struct perf_event_header){ .type = PERF_RECORD_HEADER_ATTR,
					.size = sizeof(h) + PERF_ATTR_SIZE_VER7 + 8 };
	fwrite(&h, sizeof(h), 1, fp);
	fwrite(&a, PERF_ATTR_SIZE_VER7, 1, fp);
	v = WAKE_ID;
	fwrite(&v, 8, 1, fp);
	h = (struct perf_event_header){ .type = PERF_RECORD_HEADER_TRACING_DATA, .size = 16 };
	fwrite(&h, sizeof(h), 1, fp);
	fwrite(&tsize, 4, 1, fp);
	fwrite("\0\0\0\0", 4, 1, fp);
	fwrite(tracing_text, 1, sizeof(tracing_text), fp);
	fwrite("\0\0\0\0\0\0\0", 1, tsize - sizeof(tracing_text), fp);
	build_wake(&b, &s);
	fwrite(b.b, 1, b.n, fp);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(dc_perf_open(t.path, &f, err, sizeof(err)), 0);
	assert_true(dc_perf_has_wakes(f));
	dc_perf_close(f);
	assert_int_equal(read_wakes(t.path, w, res, 2), 1);
	assert_int_equal(res[0], 1);
	assert_int_equal(w[0].wakee_tid, 3);
	assert_int_equal(w[0].waker_tid, 2);
	rm_tmp(&t);
}

/* Short payloads: -EBADMSG, never a read past the record. */
static void test_short_raw(void **state)
{
	struct wake_spec s[] = {
		{ .time = 1, .waker_tid = 2, .wakee = 3, .wakee_comm = "a", .raw_size = 24 },
		{ .time = 2, .waker_tid = 2, .wakee = 3, .wakee_comm = "a", .raw_size = 27 },
		{ .time = 3, .waker_tid = 2, .wakee = 3, .wakee_comm = "a", .raw_size = 28 },
		{ .time = 4, .waker_tid = 2, .wakee = -1, .wakee_comm = "a" },
		{ .time = 5, .waker_tid = 2, .wakee = 3, .wakee_comm = "a", .perf_style = true,
		  .raw_size = 4 },
	};
	struct dc_wake w[8];
	int res[8];
	struct tmp t;
	struct rc_perf_writer *wr;

	(void)state;
	mk_tmp(&t);
	wr = new_file(t.path, "sched:sched_waking");
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		write_wake(wr, &s[i]);
	finish(wr);
	assert_int_equal(read_wakes(t.path, w, res, 8), 5);
	assert_int_equal(res[0], -EBADMSG);
	assert_int_equal(res[1], -EBADMSG);
	assert_int_equal(res[2], 1);          /* up to the pid is enough */
	assert_int_equal(w[2].wakee_tid, 3);
	assert_int_equal(res[3], -EBADMSG);   /* a negative pid */
	assert_int_equal(res[4], -EBADMSG);
	rm_tmp(&t);
}

/* Records cut anywhere: parsing a wake sample of every length never reads
 * past it (ASan watches) and never calls a cut one a wake. */
static void test_cut_records(void **state)
{
	struct wake_spec s = { .time = 9, .waker_tid = 2, .wakee = 3, .wakee_comm = "abc",
			       .perf_style = true };
	struct tmp t;
	struct rc_perf_writer *wr;
	struct dc_perf_file *f;
	struct dc_perf_record rec;
	char err[256];
	const uint8_t *raw = NULL;
	uint16_t full = 0;

	(void)state;
	mk_tmp(&t);
	wr = new_file(t.path, "sched:sched_waking");
	write_wake(wr, &s);
	finish(wr);
	assert_int_equal(dc_perf_open(t.path, &f, err, sizeof(err)), 0);
	while (dc_perf_next(f, &rec) > 0)
		if (rec.type == PERF_RECORD_SAMPLE) {
			raw = (const uint8_t *)rec.raw;
			full = rec.size;
		}
	assert_non_null(raw);
	for (uint16_t len = 8; len <= full; len += 4) {
		uint8_t *copy = malloc(len);
		struct dc_wake w;
		int r;

		memcpy(copy, raw, len);
		((struct perf_event_header *)copy)->size = len;
		assert_int_equal(dc_perf_parse(f, copy, len, &rec, err, sizeof(err)), 0);
		r = dc_perf_wake(&rec, &w);
		if (len == full) {
			assert_int_equal(r, 1);
			assert_int_equal(w.wakee_tid, 3);
		} else {
			/* (no IDENTIFIER: no attr, so no wake either) */
			assert_int_equal(r, len < 16 ? 0 : -EBADMSG);
		}
		free(copy);
	}
	dc_perf_close(f);
	rm_tmp(&t);
}

/* ---- session ------------------------------------------------------------ */

struct seen {
	char log[1024];
	size_t len;
	int warnings;
};

static void log_add(struct seen *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	s->len += (size_t)vsnprintf(s->log + s->len, sizeof(s->log) - s->len, fmt, ap);
	va_end(ap);
}

static void on_comm(void *ctx, uint32_t pid, uint32_t tid, const char *comm, uint64_t t)
{
	(void)pid;
	log_add(ctx, "comm %u %s @%llu;", tid, comm, (unsigned long long)t);
}

static void on_wake(void *ctx, const struct dc_wake *w, const char *waker_comm)
{
	log_add(ctx, "wake %u(%s)->%u @%llu;", w->waker_tid, waker_comm ? waker_comm : "?",
		w->wakee_tid, (unsigned long long)w->time);
}

static void on_warning(void *ctx, const char *msg)
{
	struct seen *s = ctx;

	s->warnings++;
	assert_non_null(strstr(msg, "wake record"));
}

static int on_event(const struct dc_event *ev, void *ctx)
{
	(void)ev;
	(void)ctx;
	return 0;
}

static void test_session_order(void **state)
{
	struct wake_spec w1 = { .time = SMP_T0 + 300, .waker_pid = 10, .waker_tid = 11,
				.wakee = 12, .wakee_comm = "b" };
	struct wake_spec w2 = { .time = SMP_T0 + 200, .waker_pid = 10, .waker_tid = 12,
				.wakee = 11, .wakee_comm = "a", .perf_style = true };
	struct wake_spec bad = { .time = SMP_T0 + 250, .waker_pid = 10, .waker_tid = 12,
				 .wakee = 11, .wakee_comm = "a", .raw_size = 8 };
	struct seen seen = { .len = 0 };
	struct dc_session_opts so = {
		.on_comm = on_comm, .on_wake = on_wake, .on_warning = on_warning, .ctx = &seen,
		.jobs = 1,
	};
	struct dc_session_stats st;
	struct dc_session *s;
	struct rc_perf_writer *wr;
	struct dc_sample_id id;
	struct tmp t;
	char err[256];

	(void)state;
	mk_tmp(&t);
	wr = new_file(t.path, "sched:sched_waking");
	id = sid(SMP_DUMMY_ID0, 10, 11, SMP_T0 + 100);
	assert_int_equal(rc_perf_comm(wr, 10, 11, "waker", false, &id), 0);
	id = sid(SMP_DUMMY_ID0, 10, 12, SMP_T0 + 100);
	assert_int_equal(rc_perf_comm(wr, 10, 12, "other", false, &id), 0);
	/* a record at w1's time stamp, before it in the file */
	id = sid(SMP_DUMMY_ID0, 10, 11, SMP_T0 + 300);
	assert_int_equal(rc_perf_comm(wr, 10, 11, "renamed", false, &id), 0);
	/* file order is not time order within a round */
	write_wake(wr, &w1);
	write_wake(wr, &bad);
	write_wake(wr, &bad);
	write_wake(wr, &w2);
	assert_int_equal(rc_perf_finished_round(wr), 0);
	finish(wr);

	assert_int_equal(dc_session_open(t.path, &so, &s, err, sizeof(err)), 0);
	assert_int_equal(dc_session_run(s, on_event, NULL), 0);
	dc_session_stats(s, &st);
	dc_session_close(s);
	assert_string_equal(seen.log,
			    "comm 11 waker @1000000100;comm 12 other @1000000100;"
			    "wake 12(other)->11 @1000000200;"
			    "wake 11(waker)->12 @1000000300;comm 11 renamed @1000000300;");
	assert_true(st.wake_attr);
	assert_int_equal(st.wakes, 2);
	assert_int_equal(st.wakes_bad, 2);
	assert_int_equal(seen.warnings, 1);

	/* without on_wake, samples are not read at all */
	so.on_wake = NULL;
	seen.len = 0;
	seen.log[0] = 0;
	assert_int_equal(dc_session_open(t.path, &so, &s, err, sizeof(err)), 0);
	assert_int_equal(dc_session_run(s, on_event, NULL), 0);
	dc_session_stats(s, &st);
	dc_session_close(s);
	assert_int_equal(st.wakes + st.wakes_bad, 0);
	assert_int_equal(seen.warnings, 1);
	assert_null(strstr(seen.log, "->"));
	rm_tmp(&t);
}

/* test_wake --write PATH: a file with wakes of both layouts and an
 * unreadable one, for the dump e2e test. */
static int write_only(const char *path)
{
	struct wake_spec s[] = {
		{ .time = SMP_T0 + 10, .waker_pid = 100, .waker_tid = 101, .cpu = 2, .wakee = 102,
		  .wakee_comm = "consumer" },
		{ .time = SMP_T0 + 20, .waker_pid = 100, .waker_tid = 102, .cpu = 1, .wakee = 101,
		  .wakee_comm = "producer", .perf_style = true },
		{ .time = SMP_T0 + 30, .waker_pid = 100, .waker_tid = 102, .wakee = 101,
		  .wakee_comm = "producer", .raw_size = 12 },
	};
	struct rc_perf_writer *w = new_file(path, "sched:sched_waking");

	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		write_wake(w, &s[i]);
	finish(w);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--write"))
		return write_only(argv[2]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_wakes),
		cmocka_unit_test(test_wakeup_name),
		cmocka_unit_test(test_other_tracepoint),
		cmocka_unit_test(test_tracing_data),
		cmocka_unit_test(test_short_raw),
		cmocka_unit_test(test_cut_records),
		cmocka_unit_test(test_session_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
