/* Unit tests for record/pt_drain.c: drain simulated perf buffers (a fake
 * control page, data ring and AUX area in plain memory, filled as the
 * kernel would) into a real perf.data file, read it back with the decoder's
 * reader and check every byte arrived once, in order, with tails released. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include "record/record.h"
#include "record/pt_internal.h"
#include "decoder/decoder.h"

enum { DATA = 1024, AUX = 4096, ID = 77 };
#define SAMPLE_TYPE (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

struct sim {
	struct perf_event_mmap_page pc;
	unsigned char data[DATA];
	unsigned char aux[AUX];
	uint64_t produced_aux;       /* kernel-side aux_head */
	uint64_t produced_data;      /* kernel-side data_head */
	struct rc_pt_ring rg;
	struct rc_pt_sink sk;
	unsigned char scratch[65536];
	unsigned char copybuf[AUX];
	char path[64];
};

static uint64_t fake_ref(void)
{
	return 12345;
}

/* The sample_id trailer of SAMPLE_TYPE: pid, tid, time, cpu, res, id. */
struct trailer { uint32_t pid, tid; uint64_t time; uint32_t cpu, res; uint64_t id; };

static void kernel_put(struct sim *s, const void *rec, uint16_t size)
{
	const unsigned char *b = rec;

	/* the kernel never overwrites what we have not released */
	assert_true(s->produced_data + size - s->pc.data_tail <= DATA);
	for (uint16_t i = 0; i < size; i++)
		s->data[(s->produced_data + i) % DATA] = b[i];
	s->produced_data += size;
	s->pc.data_head = s->produced_data;
}

static void kernel_comm(struct sim *s, uint32_t tid, uint64_t time)
{
	struct { struct perf_event_header h; uint32_t pid, tid; char comm[16]; struct trailer t; } r;

	memset(&r, 0, sizeof(r));
	r.h.type = PERF_RECORD_COMM;
	r.h.size = sizeof(r);
	r.pid = r.tid = tid;
	snprintf(r.comm, sizeof(r.comm), "t%u", tid);
	r.t.pid = r.t.tid = tid;
	r.t.time = time;
	r.t.id = ID;
	kernel_put(s, &r, sizeof(r));
}

static void kernel_aux_record(struct sim *s, uint64_t off, uint64_t size, uint64_t flags)
{
	struct { struct perf_event_header h; uint64_t off, size, flags; struct trailer t; } r;

	memset(&r, 0, sizeof(r));
	r.h.type = PERF_RECORD_AUX;
	r.h.size = sizeof(r);
	r.off = off;
	r.size = size;
	r.flags = flags;
	r.t.id = ID;
	kernel_put(s, &r, sizeof(r));
}

/* Byte k of the trace stream: not periodic in the buffer size (a periodic
 * pattern would look the same after a lap). */
static unsigned char pat(uint64_t k)
{
	return (unsigned char)((k * 2654435761u) >> 11);
}

/* "Hardware" writes n trace bytes of the stream. */
static void kernel_trace(struct sim *s, uint64_t n)
{
	assert_true(s->produced_aux + n - s->pc.aux_tail <= AUX);
	for (uint64_t i = 0; i < n; i++, s->produced_aux++)
		s->aux[s->produced_aux % AUX] = pat(s->produced_aux);
	s->pc.aux_head = s->produced_aux;
}

static struct sim *sim_new(void)
{
	struct sim *s = calloc(1, sizeof(*s));
	struct perf_event_attr attr;
	uint64_t id = ID;
	char err[256];
	int fd;

	assert_non_null(s);
	snprintf(s->path, sizeof(s->path), "/tmp/test_ring_drain.XXXXXX");
	fd = mkstemp(s->path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(rc_perf_create(s->path, &s->sk.w, err, sizeof(err)), 0);
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_type = SAMPLE_TYPE;
	attr.sample_id_all = 1;
	attr.comm = 1;
	assert_int_equal(rc_perf_add_attr(s->sk.w, &attr, &id, 1), 0);
	s->rg.pc = &s->pc;
	s->rg.data = s->data;
	s->rg.data_size = DATA;
	s->rg.aux = s->aux;
	s->rg.aux_size = AUX;
	s->rg.idx = 1;
	s->rg.tid = (uint32_t)-1;
	s->rg.cpu = 1;
	s->sk.scratch = s->scratch;
	s->sk.copybuf = s->copybuf;
	s->sk.reference = fake_ref;
	return s;
}

/* Close the file and read it back: the AUXTRACE payloads (by_offset: put
 * at their 'offset' in the stream, perf's padding overwritten by the next
 * one; else concatenated), the COMM tids in order. */
static void read_back(struct sim *s, bool by_offset, unsigned char *trace, uint64_t *ntrace,
		      uint32_t *tids, size_t *ntids, uint64_t *truncated_aux)
{
	struct dc_perf_file *f;
	struct dc_perf_record rec;
	char err[256];
	int rc;

	*ntrace = 0;
	*ntids = 0;
	*truncated_aux = 0;
	assert_int_equal(rc_perf_close(s->sk.w), 0);
	assert_int_equal(dc_perf_open(s->path, &f, err, sizeof(err)), 0);
	while ((rc = dc_perf_next(f, &rec)) == 1) {
		if (rec.type == PERF_RECORD_AUXTRACE) {
			assert_int_equal(rec.auxtrace.cpu, 1);
			assert_int_equal(rec.auxtrace.idx, 1);
			assert_int_equal(rec.auxtrace.reference, 12345);
			if (by_offset) {
				/* each starts where the last one's real data ended,
				 * inside its padding (at most 7 zero bytes) */
				assert_true(rec.auxtrace.offset <= *ntrace);
				assert_true(rec.auxtrace.offset + 8 > *ntrace);
				for (uint64_t i = rec.auxtrace.offset; i < *ntrace; i++)
					assert_int_equal(trace[i], 0);
				memcpy(trace + rec.auxtrace.offset, rec.auxtrace.data, rec.auxtrace.size);
				*ntrace = rec.auxtrace.offset + rec.auxtrace.size;
			} else {
				memcpy(trace + *ntrace, rec.auxtrace.data, rec.auxtrace.size);
				*ntrace += rec.auxtrace.size;
			}
			assert_int_equal(rec.auxtrace.size % 8, 0);
		} else if (rec.type == PERF_RECORD_COMM) {
			tids[(*ntids)++] = rec.comm.tid;
		} else if (rec.type == PERF_RECORD_AUX && (rec.aux.flags & PERF_AUX_FLAG_TRUNCATED)) {
			(*truncated_aux)++;
		}
	}
	assert_int_equal(rc, 0);
	dc_perf_close(f);
	unlink(s->path);
}

static void test_drain_full_mode(void **state)
{
	struct sim *s = sim_new();
	static unsigned char trace[1 << 20];
	uint32_t tids[4096];
	uint64_t ntrace, trunc, want = 0, marked;
	size_t ntids;
	unsigned seed = 1;
	uint32_t next_tid = 100;

	(void)state;
	/* Many rounds: the kernel adds sideband records and trace bytes (both
	 * rings wrap many times), we drain after each. */
	for (int round = 0; round < 300; round++) {
		seed = seed * 1103515245u + 12345u;
		for (unsigned k = 0; k < (seed >> 8) % 5; k++)
			kernel_comm(s, next_tid++, (uint64_t)round);
		uint64_t n = (seed >> 12) % (AUX - (s->produced_aux - s->pc.aux_tail) + 1);

		kernel_trace(s, n);
		want = s->produced_aux;
		assert_int_equal(rc_pt_drain_data(&s->rg, &s->sk), 0);
		assert_int_equal(rc_pt_drain_aux(&s->rg, &s->sk), 0);
		/* only a (nearly) full buffer may have stopped PT */
		assert_int_equal(s->rg.restart, rc_pt_aux_full(AUX, n));
		s->rg.restart = false;
		/* released: the kernel sees our tails */
		assert_int_equal(s->pc.data_tail, s->produced_data);
		assert_int_equal(s->pc.aux_tail, s->produced_aux);
	}
	/* A full buffer: the kernel's TRUNCATED record asks for a restart. */
	kernel_trace(s, AUX - (s->produced_aux - s->pc.aux_tail));
	kernel_aux_record(s, 0, AUX, PERF_AUX_FLAG_TRUNCATED);
	want = s->produced_aux;
	assert_false(s->rg.restart);
	assert_int_equal(rc_pt_drain_data(&s->rg, &s->sk), 0);
	assert_int_equal(s->sk.rs.truncated, 1);
	marked = s->sk.marked;
	assert_int_equal(rc_pt_drain_aux(&s->rg, &s->sk), 0);
	assert_true(s->rg.restart);
	assert_int_equal(s->sk.marked, marked);   /* the kernel's record says it */
	assert_int_equal(s->sk.aux_bytes, want);

	read_back(s, true, trace, &ntrace, tids, &ntids, &trunc);
	assert_true(ntrace >= want && ntrace < want + 8);
	for (uint64_t i = 0; i < want; i++)
		assert_int_equal(trace[i], pat(i));
	for (uint64_t i = want; i < ntrace; i++)
		assert_int_equal(trace[i], 0);     /* padding: PT PAD packets */
	assert_int_equal(ntids, next_tid - 100);
	for (size_t i = 0; i < ntids; i++)
		assert_int_equal(tids[i], 100 + i);
	/* the kernel's AUX record is kept in the file, with ours for the
	 * full buffers it gave none for */
	assert_int_equal(trunc, 1 + marked);
	free(s);
}

static uint64_t fake_clock(void *ctx)
{
	(void)ctx;
	return 999;
}

static void kernel_lost(struct sim *s, uint64_t n)
{
	struct { struct perf_event_header h; uint64_t id, lost; struct trailer t; } r;

	memset(&r, 0, sizeof(r));
	r.h.type = PERF_RECORD_LOST;
	r.h.size = sizeof(r);
	r.id = ID;
	r.lost = n;
	r.t.id = ID;
	kernel_put(s, &r, sizeof(r));
}

/* PT stopped without a TRUNCATED record: re-enable it after the drain and
 * mark the hole in the file (an AUX record with TRUNCATED at the offset
 * where the trace resumes), which the decoder turns into loss. */
static void test_drain_hole_without_record(void **state)
{
	struct sim *s = sim_new();
	struct dc_perf_file *f;
	struct dc_perf_record rec;
	uint64_t offs[4];
	size_t n = 0;
	char err[256];

	(void)state;
	s->rg.pt_id = ID;
	s->sk.clock = fake_clock;
	/* a quiet drain: nothing to restart */
	kernel_trace(s, 1000);
	assert_int_equal(rc_pt_drain_data(&s->rg, &s->sk), 0);
	assert_int_equal(rc_pt_drain_aux(&s->rg, &s->sk), 0);
	assert_false(s->rg.restart);
	/* the data ring overflowed: the AUX record may be among the lost */
	kernel_trace(s, 600);
	kernel_lost(s, 3);
	assert_int_equal(rc_pt_drain_data(&s->rg, &s->sk), 0);
	assert_false(s->rg.restart);
	assert_int_equal(rc_pt_drain_aux(&s->rg, &s->sk), 0);
	assert_true(s->rg.restart);
	s->rg.restart = false;
	/* the buffer filled up and the kernel disabled PT silently */
	kernel_trace(s, AUX);
	assert_int_equal(rc_pt_drain_data(&s->rg, &s->sk), 0);
	assert_int_equal(rc_pt_drain_aux(&s->rg, &s->sk), 0);
	assert_true(s->rg.restart);
	assert_int_equal(s->sk.restarts, 2);
	assert_int_equal(s->sk.marked, 2);
	assert_int_equal(rc_perf_close(s->sk.w), 0);
	assert_int_equal(dc_perf_open(s->path, &f, err, sizeof(err)), 0);
	while (dc_perf_next(f, &rec) == 1)
		if (rec.type == PERF_RECORD_AUX) {
			assert_true(rec.aux.flags & PERF_AUX_FLAG_TRUNCATED);
			assert_int_equal(rec.aux.aux_size, 0);
			assert_true(rec.sid.valid);
			assert_int_equal(rec.sid.cpu, 1);
			assert_int_equal(rec.sid.time, 999);
			assert_true(n < 4);
			offs[n++] = rec.aux.aux_offset;
		}
	dc_perf_close(f);
	unlink(s->path);
	assert_int_equal(n, 2);
	assert_int_equal(offs[0], 1600);
	assert_int_equal(offs[1], 1600 + AUX);
	free(s);
}

static void test_drain_corrupt_ring(void **state)
{
	struct sim *s = sim_new();
	struct perf_event_header bad = { PERF_RECORD_COMM, 0, 4 };   /* size < 8 */
	unsigned char trace[16];
	uint32_t tids[4];
	uint64_t n, t;
	size_t nt;

	(void)state;
	kernel_comm(s, 5, 1);
	kernel_put(s, &bad, sizeof(bad));
	assert_int_equal(rc_pt_drain_data(&s->rg, &s->sk), -EBADMSG);
	/* the good record before it was kept and released */
	assert_int_equal(s->pc.data_tail, s->produced_data - sizeof(bad));
	read_back(s, true, trace, &n, tids, &nt, &t);
	assert_int_equal(nt, 1);
	assert_int_equal(tids[0], 5);
	free(s);
}

static void test_snapshot_mode(void **state)
{
	struct sim *s = sim_new();
	static unsigned char trace[1 << 20];
	unsigned char ref[256];
	uint32_t tids[4];
	uint64_t ntrace, trunc, expect_total = 0;
	size_t ntids;

	(void)state;
	memset(ref, 0, sizeof(ref));
	s->rg.ref = ref;
	s->rg.ref_len = sizeof(ref);
	/* Overwrite mode: the hardware never waits for us; aux_head is an
	 * offset in the buffer. Snapshot 1: 1000 bytes, no wrap. */
	for (uint64_t i = 0; i < 1000; i++, s->produced_aux++)
		s->aux[s->produced_aux % AUX] = pat(s->produced_aux);
	s->pc.aux_head = s->produced_aux % AUX;
	assert_int_equal(rc_pt_snapshot_aux(&s->rg, &s->sk), 0);
	expect_total += 1000;
	/* Snapshot 2: 10000 more bytes (more than two laps): a full buffer. */
	for (uint64_t i = 0; i < 10000; i++, s->produced_aux++)
		s->aux[s->produced_aux % AUX] = pat(s->produced_aux);
	s->pc.aux_head = s->produced_aux % AUX;
	assert_int_equal(rc_pt_snapshot_aux(&s->rg, &s->sk), 0);
	expect_total += AUX;
	/* Snapshot 3: nothing new. */
	assert_int_equal(rc_pt_snapshot_aux(&s->rg, &s->sk), 0);
	assert_int_equal(s->sk.auxtrace_records, 2);
	/* aux_tail is never written in overwrite mode */
	assert_int_equal(s->pc.aux_tail, 0);

	read_back(s, false, trace, &ntrace, tids, &ntids, &trunc);
	assert_int_equal(ntrace, expect_total);
	/* first snapshot: stream bytes 0..999 */
	for (uint64_t i = 0; i < 1000; i++)
		assert_int_equal(trace[i], pat(i));
	/* second: the newest AUX bytes of the stream, oldest first */
	for (uint64_t i = 0; i < AUX; i++)
		assert_int_equal(trace[1000 + i], pat(11000 - AUX + i));
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drain_full_mode),
		cmocka_unit_test(test_drain_corrupt_ring),
		cmocka_unit_test(test_drain_hole_without_record),
		cmocka_unit_test(test_snapshot_mode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
