/* Unit tests for record/pt_ring.c: AUX-area and data-ring arithmetic with
 * simulated head/tail states (no PT hardware needed). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include "record/pt_ring.h"

/* ---- AUX, full trace mode -------------------------------------------- */

static void test_full_empty(void **state)
{
	struct rc_aux_plan p;

	(void)state;
	assert_int_equal(rc_aux_plan_full(4096, 4096, 1024, 0, &p), 0);
	assert_int_equal(p.total, 0);
	assert_int_equal(p.nseg, 0);
	assert_int_equal(p.new_tail, 4096);
}

static void test_full_no_wrap(void **state)
{
	struct rc_aux_plan p;

	(void)state;
	assert_int_equal(rc_aux_plan_full(300, 100, 1024, 0, &p), 0);
	assert_int_equal(p.nseg, 1);
	assert_int_equal(p.seg[0].off, 100);
	assert_int_equal(p.seg[0].len, 200);
	assert_int_equal(p.total, 200);
	assert_int_equal(p.stream, 100);
	assert_int_equal(p.new_tail, 300);
}

static void test_full_wrap(void **state)
{
	struct rc_aux_plan p;

	(void)state;
	/* Third lap of the buffer: offsets are counters modulo the size. */
	assert_int_equal(rc_aux_plan_full(3 * 1024 + 76, 2 * 1024 + 1000, 1024, 0, &p), 0);
	assert_int_equal(p.nseg, 2);
	assert_int_equal(p.seg[0].off, 1000);
	assert_int_equal(p.seg[0].len, 24);
	assert_int_equal(p.seg[1].off, 0);
	assert_int_equal(p.seg[1].len, 76);
	assert_int_equal(p.total, 100);
	assert_int_equal(p.new_tail, 3 * 1024 + 76);
}

static void test_full_exactly_full(void **state)
{
	struct rc_aux_plan p;

	(void)state;
	/* A full buffer (the kernel then sets TRUNCATED): everything. */
	assert_int_equal(rc_aux_plan_full(1024 + 512, 512, 1024, 0, &p), 0);
	assert_int_equal(p.total, 1024);
	assert_int_equal(p.seg[0].off, 512);
	assert_int_equal(p.seg[0].len, 512);
	assert_int_equal(p.seg[1].off, 0);
	assert_int_equal(p.seg[1].len, 512);
}

static void test_full_partial_reads(void **state)
{
	struct rc_aux_plan p;
	uint64_t tail = 1000;

	(void)state;
	/* 100 bytes waiting across the end; copy 50 now, the rest later. */
	assert_int_equal(rc_aux_plan_full(1100, tail, 1024, 50, &p), 0);
	assert_int_equal(p.total, 50);
	assert_int_equal(p.nseg, 2);
	assert_int_equal(p.seg[0].len, 24);
	assert_int_equal(p.seg[1].len, 26);
	assert_int_equal(p.new_tail, 1050);
	tail = p.new_tail;
	assert_int_equal(rc_aux_plan_full(1100, tail, 1024, 50, &p), 0);
	assert_int_equal(p.nseg, 1);
	assert_int_equal(p.seg[0].off, 26);
	assert_int_equal(p.seg[0].len, 50);
	assert_int_equal(p.stream, 1050);
	assert_int_equal(p.new_tail, 1100);
	assert_int_equal(rc_aux_plan_full(1100, p.new_tail, 1024, 50, &p), 0);
	assert_int_equal(p.total, 0);
}

static void test_full_bad_heads(void **state)
{
	struct rc_aux_plan p;

	(void)state;
	assert_int_equal(rc_aux_plan_full(2049, 1024, 1024, 0, &p), -EOVERFLOW);
	assert_int_equal(rc_aux_plan_full(100, 200, 1024, 0, &p), -EOVERFLOW);
	assert_int_equal(rc_aux_plan_full(0, 0, 0, 0, &p), -EINVAL);
}

static void test_full_counter_wrap(void **state)
{
	struct rc_aux_plan p;
	uint64_t tail = UINT64_MAX - 9;   /* 64-bit counters wrap too */

	(void)state;
	assert_int_equal(rc_aux_plan_full(tail + 20, tail, 4096, 0, &p), 0);
	assert_int_equal(p.total, 20);
	assert_int_equal(p.seg[0].off, tail % 4096);
	assert_int_equal(p.new_tail, 10);
}

/* Producer/consumer simulation: a fake kernel writes a known byte stream
 * into a small AUX buffer in random chunks (never past our tail), we drain
 * with random partial reads; the bytes we reassemble must be the stream. */
static void test_full_simulation(void **state)
{
	enum { SIZE = 64, TOTAL = 20000 };
	unsigned char buf[SIZE], *out = malloc(TOTAL);
	uint64_t head = 0, tail = 0, got = 0;
	unsigned seed = 12345;

	(void)state;
	assert_non_null(out);
	while (got < TOTAL) {
		uint64_t room = SIZE - (head - tail), n;
		struct rc_aux_plan p;

		seed = seed * 1103515245u + 12345u;
		n = (seed >> 8) % (room + 1);
		if (head + n > TOTAL)
			n = TOTAL - head;
		for (uint64_t i = 0; i < n; i++, head++)
			buf[head % SIZE] = (unsigned char)(head * 7 + (head >> 8));
		seed = seed * 1103515245u + 12345u;
		assert_int_equal(rc_aux_plan_full(head, tail, SIZE, (seed >> 8) % 40, &p), 0);
		for (int s = 0; s < p.nseg; s++) {
			assert_true(p.seg[s].off + p.seg[s].len <= SIZE);
			memcpy(out + got, buf + p.seg[s].off, p.seg[s].len);
			got += p.seg[s].len;
		}
		assert_int_equal(p.stream + p.total, p.new_tail);
		tail = p.new_tail;
	}
	for (uint64_t i = 0; i < TOTAL; i++)
		assert_int_equal(out[i], (unsigned char)(i * 7 + (i >> 8)));
	free(out);
}

/* ---- AUX, overwrite (snapshot) mode ---------------------------------- */

static void test_snapshot_first_lap(void **state)
{
	struct rc_aux_plan p;

	(void)state;
	assert_int_equal(rc_aux_plan_snapshot(300, 0, 1024, 0, 0, &p), 0);
	assert_int_equal(p.nseg, 1);
	assert_int_equal(p.seg[0].off, 0);
	assert_int_equal(p.seg[0].len, 300);
	assert_int_equal(p.new_tail, 300);
	/* Second snapshot, no wrap since: only the new bytes. */
	assert_int_equal(rc_aux_plan_snapshot(500, p.new_tail, 1024, 0, 0, &p), 0);
	assert_int_equal(p.seg[0].off, 300);
	assert_int_equal(p.seg[0].len, 200);
	/* Head went past the end since the last snapshot (less than a lap). */
	assert_int_equal(rc_aux_plan_snapshot(20, 1000, 1024, 0, 0, &p), 0);
	assert_int_equal(p.nseg, 2);
	assert_int_equal(p.seg[0].off, 1000);
	assert_int_equal(p.seg[0].len, 24);
	assert_int_equal(p.seg[1].off, 0);
	assert_int_equal(p.seg[1].len, 20);
}

static void test_snapshot_wrapped(void **state)
{
	struct rc_aux_plan p;

	(void)state;
	/* Wrapped: the whole buffer, oldest byte at head. */
	assert_int_equal(rc_aux_plan_snapshot(300, 300, 1024, 1, 0, &p), 0);
	assert_int_equal(p.total, 1024);
	assert_int_equal(p.seg[0].off, 300);
	assert_int_equal(p.seg[0].len, 724);
	assert_int_equal(p.seg[1].off, 0);
	assert_int_equal(p.seg[1].len, 300);
	assert_int_equal(p.skipped, 0);
	/* Limited snapshot size keeps the newest bytes, across the end. */
	assert_int_equal(rc_aux_plan_snapshot(30, 0, 1024, 1, 100, &p), 0);
	assert_int_equal(p.total, 100);
	assert_int_equal(p.skipped, 924);
	assert_int_equal(p.seg[0].off, 954);
	assert_int_equal(p.seg[0].len, 70);
	assert_int_equal(p.seg[1].off, 0);
	assert_int_equal(p.seg[1].len, 30);
	/* A head reported beyond the size is taken modulo the size. */
	assert_int_equal(rc_aux_plan_snapshot(1024 + 30, 0, 1024, 1, 100, &p), 0);
	assert_int_equal(p.seg[0].off, 954);
	assert_int_equal(rc_aux_plan_snapshot(0, 0, 0, 1, 0, &p), -EINVAL);
}

/* Overwrite-mode simulation: the fake hardware writes a stream round and
 * round the buffer; at each snapshot the copied bytes must be exactly the
 * newest ones of the stream (all of them when not wrapped since the last
 * snapshot, the last buffer-full when wrapped). */
static void test_snapshot_simulation(void **state)
{
	enum { SIZE = 256 };
	unsigned char buf[SIZE], copy[SIZE];
	uint64_t written = 0, last_snap = 0, old = 0;
	unsigned seed = 99;

	(void)state;
	memset(buf, 0, sizeof(buf));
	for (int round = 0; round < 200; round++) {
		struct rc_aux_plan p;
		uint64_t n, got = 0;
		int wrapped;

		seed = seed * 1103515245u + 12345u;
		n = (seed >> 8) % 600;
		for (uint64_t i = 0; i < n; i++, written++)
			buf[written % SIZE] = (unsigned char)(1 + written % 251);
		wrapped = written - last_snap >= SIZE;
		assert_int_equal(rc_aux_plan_snapshot(written % SIZE, old, SIZE, wrapped, 0, &p), 0);
		for (int s = 0; s < p.nseg; s++) {
			memcpy(copy + got, buf + p.seg[s].off, p.seg[s].len);
			got += p.seg[s].len;
		}
		assert_int_equal(got, wrapped ? SIZE : written - last_snap);
		for (uint64_t i = 0; i < got; i++) {
			uint64_t pos = written - got + i;

			assert_int_equal(copy[i], (unsigned char)(1 + pos % 251));
		}
		old = p.new_tail;
		last_snap = written;
	}
}

static void test_ref(void **state)
{
	unsigned char buf[64], ref[8];

	(void)state;
	for (int i = 0; i < 64; i++)
		buf[i] = (unsigned char)(i + 1);
	/* the 8 bytes before head 4 go round the end: 61..64, 1..4 */
	rc_aux_ref_save(buf, 64, 4, ref, 8);
	assert_int_equal(ref[0], 61);
	assert_int_equal(ref[3], 64);
	assert_int_equal(ref[4], 1);
	assert_int_equal(ref[7], 4);
	assert_int_equal(rc_aux_ref_changed(buf, 64, 4, ref, 8), 0);
	buf[62] = 0xee;
	assert_int_equal(rc_aux_ref_changed(buf, 64, 4, ref, 8), 1);
	buf[62] = 63;
	buf[4] = 0xee;    /* just after the saved bytes: not watched */
	assert_int_equal(rc_aux_ref_changed(buf, 64, 4, ref, 8), 0);
	buf[3] = 0xee;
	assert_int_equal(rc_aux_ref_changed(buf, 64, 68, ref, 8), 1);
}

/* The recorder's whole snapshot procedure against a simulated overwrite
 * buffer: wrap detection by saved reference bytes (not an oracle), then the
 * plan. Every snapshot must be exactly the newest bytes of the stream: all
 * new ones when less than a lap was written, a full buffer otherwise (a
 * full buffer is also acceptable when the lap was nearly complete, within
 * the reference window). */
static void test_snapshot_detect_simulation(void **state)
{
	enum { SIZE = 512, REF = 32 };
	unsigned char buf[SIZE], copy[SIZE], ref[REF];
	uint64_t written = 0, last_snap = 0, old = 0;
	unsigned seed = 4242;
	int full = 0, partial = 0, across = 0;

	(void)state;
	memset(buf, 0, sizeof(buf));
	memset(ref, 0, sizeof(ref));    /* as the recorder starts */
	for (int round = 0; round < 400; round++) {
		struct rc_aux_plan p;
		uint64_t n, got = 0, since, head;
		int wrapped;

		seed = seed * 1103515245u + 12345u;
		n = (seed >> 8) % (round % 3 ? 300 : 1200);
		for (uint64_t i = 0; i < n; i++, written++)
			buf[written % SIZE] = (unsigned char)(1 + written % 251);
		head = written % SIZE;
		since = written - last_snap;
		wrapped = rc_aux_ref_changed(buf, SIZE, old, ref, REF);
		rc_aux_ref_save(buf, SIZE, head, ref, REF);
		assert_int_equal(rc_aux_plan_snapshot(head, old, SIZE, wrapped, 0, &p), 0);
		for (int s = 0; s < p.nseg; s++) {
			memcpy(copy + got, buf + p.seg[s].off, p.seg[s].len);
			got += p.seg[s].len;
		}
		if (since >= SIZE)
			assert_int_equal(got, SIZE);
		else if (since < SIZE - REF)
			assert_int_equal(got, since);
		else
			assert_true(got == since || got == SIZE);
		full += got == SIZE;
		partial += got < SIZE && got > 0;
		across += got < SIZE && p.nseg == 2;
		for (uint64_t i = 0; i < got; i++)
			assert_int_equal(copy[i], (unsigned char)(1 + (written - got + i) % 251));
		old = p.new_tail;
		last_snap = written;
	}
	/* all paths exercised: full laps, partial, partial across the end */
	assert_true(full > 10 && partial > 10 && across > 5);
}

/* ---- data ring --------------------------------------------------------- */

/* Write a record of 'size' bytes (type, payload bytes = seq) at counter pos. */
static void put_record(unsigned char *ring, uint64_t size, uint64_t pos,
		       uint32_t type, uint16_t rsize, unsigned char seq)
{
	unsigned char rec[512];
	struct perf_event_header h = { .type = type, .misc = 0, .size = rsize };

	memcpy(rec, &h, sizeof(h));
	for (unsigned i = sizeof(h); i < rsize; i++)
		rec[i] = (unsigned char)(seq + i);
	for (unsigned i = 0; i < rsize; i++)
		ring[(pos + i) % size] = rec[i];
}

static void check_record(const struct perf_event_header *r, uint32_t type,
			 uint16_t rsize, unsigned char seq)
{
	const unsigned char *b = (const unsigned char *)r;

	assert_int_equal(r->type, type);
	assert_int_equal(r->size, rsize);
	for (unsigned i = sizeof(*r); i < rsize; i++)
		assert_int_equal(b[i], (unsigned char)(seq + i));
}

static void test_ring_wrap(void **state)
{
	enum { SIZE = 256 };
	unsigned char ring[SIZE], scratch[65536];
	const struct perf_event_header *r;
	uint64_t tail = 200, head = 200;

	(void)state;
	memset(ring, 0xee, sizeof(ring));
	/* 40 bytes fit before the end; the next 48 wrap to offset 0. */
	put_record(ring, SIZE, head, PERF_RECORD_COMM, 40, 1);
	head += 40;
	put_record(ring, SIZE, head, PERF_RECORD_MMAP2, 48, 2);
	head += 48;
	put_record(ring, SIZE, head, PERF_RECORD_SWITCH_CPU_WIDE, 16, 3);
	head += 16;

	assert_int_equal(rc_ring_next(ring, SIZE, head, &tail, scratch, sizeof(scratch), &r), 1);
	assert_ptr_equal(r, (void *)(ring + 200));     /* contiguous: in place */
	check_record(r, PERF_RECORD_COMM, 40, 1);
	assert_int_equal(rc_ring_next(ring, SIZE, head, &tail, scratch, sizeof(scratch), &r), 1);
	assert_ptr_equal(r, (void *)scratch);          /* spans the wrap: copied */
	check_record(r, PERF_RECORD_MMAP2, 48, 2);
	assert_int_equal(rc_ring_next(ring, SIZE, head, &tail, scratch, sizeof(scratch), &r), 1);
	check_record(r, PERF_RECORD_SWITCH_CPU_WIDE, 16, 3);
	assert_int_equal(tail, head);
	assert_int_equal(rc_ring_next(ring, SIZE, head, &tail, scratch, sizeof(scratch), &r), 0);
	assert_null(r);
}

static void test_ring_header_straddles(void **state)
{
	enum { SIZE = 64 };
	unsigned char ring[SIZE], scratch[65536];
	const struct perf_event_header *r;
	uint64_t tail = SIZE - 4, head = tail;

	(void)state;
	put_record(ring, SIZE, head, PERF_RECORD_EXIT, 24, 9);
	head += 24;
	assert_int_equal(rc_ring_next(ring, SIZE, head, &tail, scratch, sizeof(scratch), &r), 1);
	check_record(r, PERF_RECORD_EXIT, 24, 9);
	assert_int_equal(tail, head);
}

/* Many records of mixed sizes through a tiny ring with a lagging reader. */
static void test_ring_simulation(void **state)
{
	enum { SIZE = 128 };
	unsigned char ring[SIZE], scratch[65536];
	uint64_t head = 0, tail = 0;
	unsigned produced = 0, consumed = 0, seed = 7;
	uint16_t sizes[4096];

	(void)state;
	while (consumed < 4000) {
		const struct perf_event_header *r;
		int rc;

		seed = seed * 1103515245u + 12345u;
		uint16_t sz = (uint16_t)(8 * (1 + (seed >> 8) % 8));
		if (produced < 4096 && head + sz - tail <= SIZE) {
			put_record(ring, SIZE, head, PERF_RECORD_SAMPLE + produced % 16,
				   sz, (unsigned char)produced);
			sizes[produced++] = sz;
			head += sz;
		}
		if ((seed >> 20) & 1)
			continue;   /* the reader lags this round */
		rc = rc_ring_next(ring, SIZE, head, &tail, scratch, sizeof(scratch), &r);
		assert_true(rc >= 0);
		if (rc == 1) {
			check_record(r, PERF_RECORD_SAMPLE + consumed % 16, sizes[consumed],
				     (unsigned char)consumed);
			consumed++;
		}
	}
}

static void test_ring_corrupt(void **state)
{
	enum { SIZE = 64 };
	unsigned char ring[SIZE], scratch[65536];
	const struct perf_event_header *r;
	uint64_t tail = 0;

	(void)state;
	memset(ring, 0, sizeof(ring));
	/* size 0 would loop forever if accepted */
	assert_int_equal(rc_ring_next(ring, SIZE, 16, &tail, scratch, sizeof(scratch), &r), -EBADMSG);
	/* a record claiming more bytes than were published */
	put_record(ring, SIZE, 0, PERF_RECORD_COMM, 40, 0);
	assert_int_equal(rc_ring_next(ring, SIZE, 32, &tail, scratch, sizeof(scratch), &r), -EBADMSG);
	assert_int_equal(tail, 0);
	/* fewer bytes than a header */
	assert_int_equal(rc_ring_next(ring, SIZE, 4, &tail, scratch, sizeof(scratch), &r), -EBADMSG);
	/* head more than a ring ahead */
	assert_int_equal(rc_ring_next(ring, SIZE, 200, &tail, scratch, sizeof(scratch), &r), -EOVERFLOW);
	/* a wrapping record larger than the scratch buffer */
	tail = 48;
	put_record(ring, SIZE, 48, PERF_RECORD_COMM, 32, 0);
	assert_int_equal(rc_ring_next(ring, SIZE, 80, &tail, scratch, 16, &r), -EBADMSG);
}

/* ---- accounting -------------------------------------------------------- */

static void test_account(void **state)
{
	struct rc_ring_stats st;
	struct { struct perf_event_header h; uint64_t id, lost; } lost = {
		{ PERF_RECORD_LOST, 0, sizeof(lost) }, 5, 17 };
	struct { struct perf_event_header h; uint64_t off, size, flags; } aux = {
		{ PERF_RECORD_AUX, 0, sizeof(aux) }, 0, 4096, 0 };
	struct perf_event_header comm = { PERF_RECORD_COMM, 0, 8 };

	(void)state;
	memset(&st, 0, sizeof(st));
	assert_int_equal(rc_ring_account(&lost.h, &st), 2);   /* may hide a TRUNCATED */
	assert_int_equal(rc_ring_account(&lost.h, &st), 2);
	assert_int_equal(st.lost, 2);
	assert_int_equal(st.lost_events, 34);
	assert_int_equal(rc_ring_account(&aux.h, &st), 0);
	assert_int_equal(st.truncated, 0);
	aux.flags = PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL;
	assert_int_equal(rc_ring_account(&aux.h, &st), 1);
	assert_int_equal(st.truncated, 1);
	assert_int_equal(st.partial, 1);
	aux.flags = PERF_AUX_FLAG_OVERWRITE;
	assert_int_equal(rc_ring_account(&aux.h, &st), 0);
	assert_int_equal(rc_ring_account(&comm, &st), 0);
	assert_int_equal(st.aux, 3);
	assert_int_equal(st.truncated, 1);
	assert_int_equal(st.records, 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_empty),
		cmocka_unit_test(test_full_no_wrap),
		cmocka_unit_test(test_full_wrap),
		cmocka_unit_test(test_full_exactly_full),
		cmocka_unit_test(test_full_partial_reads),
		cmocka_unit_test(test_full_bad_heads),
		cmocka_unit_test(test_full_counter_wrap),
		cmocka_unit_test(test_full_simulation),
		cmocka_unit_test(test_snapshot_first_lap),
		cmocka_unit_test(test_snapshot_wrapped),
		cmocka_unit_test(test_snapshot_simulation),
		cmocka_unit_test(test_ref),
		cmocka_unit_test(test_snapshot_detect_simulation),
		cmocka_unit_test(test_ring_wrap),
		cmocka_unit_test(test_ring_header_straddles),
		cmocka_unit_test(test_ring_simulation),
		cmocka_unit_test(test_ring_corrupt),
		cmocka_unit_test(test_account),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
