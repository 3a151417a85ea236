/* Unit tests: perf.data's compressed records (perf record -z) through the
 * writer (rc_perf_compress) and the reader (dc_perf_next, decoder/packed.c):
 * the same records as uncompressed, records cut between two compressed
 * records, a second pass, and bad compressed data. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <zstd.h>

#include "decoder/decoder.h"
#include "record/record.h"
#include "tests/unit/test_perfdata_sample.h"

static char dir[64];

static void path_in(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/ptf-packed-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static bool is_kernel_type(uint32_t type)
{
	return type < PERF_RECORD_USER_TYPE_START;
}

/* Every record of the compressed file is the uncompressed file's, byte for
 * byte; the kernel's come from compressed records, the rest do not; a
 * second pass reads the same records where they were. */
static void test_same_records(void **state)
{
	char p[128], z[128], err[512];
	struct dc_perf_file *fp, *fz;
	struct dc_perf_record a, b;
	const void **seen = calloc(4096, sizeof(*seen));
	size_t n = 0, packed = 0;
	int ra, rb;

	(void)state;
	path_in(p, sizeof(p), "p.data");
	path_in(z, sizeof(z), "z.data");
	assert_int_equal(smp_write_z(p, 3000, 0, err, sizeof(err)), 0);
	assert_int_equal(smp_write_z(z, 3000, 3, err, sizeof(err)), 0);
	assert_int_equal(dc_perf_open(p, &fp, err, sizeof(err)), 0);
	assert_int_equal(dc_perf_open(z, &fz, err, sizeof(err)), 0);
	while ((ra = dc_perf_next(fp, &a)) > 0) {
		rb = dc_perf_next(fz, &b);
		assert_int_equal(rb, 1);
		assert_int_equal(a.type, b.type);
		assert_int_equal(a.size, b.size);
		assert_memory_equal(a.raw, b.raw, a.size);
		assert_false(a.packed);
		assert_int_equal(b.packed, is_kernel_type(b.type));
		assert_true(n < 4096);
		seen[n++] = b.raw;
		packed += b.packed;
	}
	assert_int_equal(ra, 0);
	assert_int_equal(dc_perf_next(fz, &b), 0);
	assert_int_equal(packed, 3008);
	/* again: the records decompressed once, found where they were */
	assert_int_equal(dc_perf_seek(fz, 0), 0);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(dc_perf_next(fz, &b), 1);
		if (b.packed)
			assert_ptr_equal(b.raw, seen[i]);
	}
	assert_int_equal(dc_perf_next(fz, &b), 0);
	dc_perf_close(fp);
	dc_perf_close(fz);
	free(seen);
}

/* The sample's records, uncompressed, as bytes: [0] its COMM, [1] its
 * MMAP2, [2] its first SWITCH_CPU_WIDE, [3] its AUXTRACE's header. */
struct recs {
	uint8_t b[4][512];
	size_t n[4];
};

static void sample_records(struct recs *r)
{
	char p[128], err[512];
	struct dc_perf_file *f;
	struct dc_perf_record rec;
	const uint32_t want[4] = { PERF_RECORD_COMM, PERF_RECORD_MMAP2,
				   PERF_RECORD_SWITCH_CPU_WIDE, PERF_RECORD_AUXTRACE };

	memset(r, 0, sizeof(*r));
	path_in(p, sizeof(p), "s.data");
	assert_int_equal(smp_write(p, err, sizeof(err)), 0);
	assert_int_equal(dc_perf_open(p, &f, err, sizeof(err)), 0);
	while (dc_perf_next(f, &rec) > 0)
		for (int i = 0; i < 4; i++)
			if (rec.type == want[i] && !r->n[i]) {
				memcpy(r->b[i], rec.raw, rec.size);
				r->n[i] = rec.size;
			}
	dc_perf_close(f);
	for (int i = 0; i < 4; i++)
		assert_true(r->n[i] > 0);
}

/* A COMPRESSED record (81) of its own zstd frame of data[0, n), or a
 * COMPRESSED2 (83) with its data size and padding. */
static int put_packed(struct rc_perf_writer *w, const void *data, size_t n, bool v2)
{
	uint8_t rec[65536];
	size_t hdr = v2 ? 16 : 8;
	size_t c = ZSTD_compress(rec + hdr, sizeof(rec) - hdr - 8, data, n, 1);
	struct perf_event_header h = { .type = v2 ? 83 : PERF_RECORD_COMPRESSED };
	size_t size = hdr + c;

	assert_false(ZSTD_isError(c));
	if (v2) {
		uint64_t ds = c;

		memcpy(rec + 8, &ds, 8);
		while (size % 8)
			rec[size++] = 0;
	}
	h.size = (uint16_t)size;
	memcpy(rec, &h, sizeof(h));
	return rc_perf_write(w, rec);
}

/* A raw record (a COMPRESSED record built by hand). */
static int put_raw(struct rc_perf_writer *w, uint32_t type, const void *body, size_t n)
{
	uint8_t rec[65536];
	struct perf_event_header h = { .type = type, .size = (uint16_t)(8 + n) };

	memcpy(rec, &h, sizeof(h));
	memcpy(rec + 8, body, n);
	return rc_perf_write(w, rec);
}

static struct rc_perf_writer *start(const char *name, char *path, size_t n)
{
	struct rc_perf_writer *w;
	char err[512];

	path_in(path, n, name);
	assert_int_equal(rc_perf_create(path, &w, err, sizeof(err)), 0);
	assert_int_equal(smp_add_attrs(w), 0);
	return w;
}

static void finish(struct rc_perf_writer *w)
{
	char err[512];

	assert_int_equal(rc_perf_finish(w, err, sizeof(err)), 0);
}

/* Records cut between compressed records (and frames), and COMPRESSED2. */
static void test_cut_records(void **state)
{
	struct recs r;
	uint8_t two[1024];
	char path[128], err[512];
	struct rc_perf_writer *w;
	struct dc_perf_file *f;
	struct dc_perf_record rec;
	const size_t want[] = { 0, 1, 2, 0 };

	(void)state;
	sample_records(&r);
	w = start("cut.data", path, sizeof(path));
	/* COMM's first 20 bytes; its rest and the MMAP2; a SWITCH (v2);
	 * the COMM again, its header alone and then the rest */
	assert_int_equal(put_packed(w, r.b[0], 20, false), 0);
	memcpy(two, r.b[0] + 20, r.n[0] - 20);
	memcpy(two + r.n[0] - 20, r.b[1], r.n[1]);
	assert_int_equal(put_packed(w, two, r.n[0] - 20 + r.n[1], false), 0);
	assert_int_equal(put_packed(w, r.b[2], r.n[2], true), 0);
	assert_int_equal(put_packed(w, r.b[0], 8, true), 0);
	assert_int_equal(put_packed(w, r.b[0] + 8, r.n[0] - 8, false), 0);
	finish(w);
	assert_int_equal(dc_perf_open(path, &f, err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(dc_perf_next(f, &rec), 1);
		assert_true(rec.packed);
		assert_int_equal(rec.size, r.n[want[i]]);
		assert_memory_equal(rec.raw, r.b[want[i]], r.n[want[i]]);
		assert_true(rec.parsed);
	}
	assert_int_equal(dc_perf_next(f, &rec), 0);
	dc_perf_close(f);
}

/* A file whose compressed records are bad: dc_perf_next fails with a
 * message naming the problem (and the file opens: the records before are
 * read). */
static void expect_bad(const char *path, const char *what)
{
	char err[512];
	struct dc_perf_file *f;
	struct dc_perf_record rec;
	int ret;

	assert_int_equal(dc_perf_open(path, &f, err, sizeof(err)), 0);
	while ((ret = dc_perf_next(f, &rec)) > 0)
		;
	if (ret >= 0 || !strstr(dc_perf_errmsg(f), what))
		fail_msg("%s: dc_perf_next %d '%s', want '%s'", path, ret, dc_perf_errmsg(f), what);
	assert_non_null(strstr(dc_perf_errmsg(f), "compressed"));
	dc_perf_close(f);
}

static void test_bad(void **state)
{
	struct recs r;
	char path[128], err[512];
	struct rc_perf_writer *w;
	struct dc_perf_file *f;
	uint8_t *zeros;
	const uint32_t comp[5] = { 1, 2, 1, 1, 65536 };
	const uint64_t big = 1000;

	(void)state;
	sample_records(&r);
	w = start("garbage.data", path, sizeof(path));
	assert_int_equal(put_raw(w, PERF_RECORD_COMPRESSED, "not zstd data at all", 20), 0);
	finish(w);
	expect_bad(path, "corrupt zstd data");

	w = start("half.data", path, sizeof(path));
	assert_int_equal(put_packed(w, r.b[1], r.n[1] / 2, false), 0);
	finish(w);
	expect_bad(path, "end inside a record");

	w = start("aux.data", path, sizeof(path));
	assert_int_equal(put_packed(w, r.b[3], r.n[3], false), 0);
	finish(w);
	expect_bad(path, "holds a AUXTRACE record");

	w = start("v2size.data", path, sizeof(path));
	assert_int_equal(put_raw(w, 83, &big, sizeof(big)), 0);
	finish(w);
	expect_bad(path, "data size runs past the record");

	/* 65 MiB of zeros: a few kilobytes compressed */
	zeros = calloc(65u << 20, 1);
	assert_non_null(zeros);
	w = start("bomb.data", path, sizeof(path));
	assert_int_equal(put_packed(w, zeros, 65u << 20, false), 0);
	finish(w);
	free(zeros);
	expect_bad(path, "decompresses to more than 64 MiB");

	/* a method other than zstd: said at the start */
	w = start("method.data", path, sizeof(path));
	assert_int_equal(rc_perf_set_feature(w, HEADER_COMPRESSED, comp, sizeof(comp)), 0);
	finish(w);
	assert_true(dc_perf_open(path, &f, err, sizeof(err)) < 0);
	assert_null(f);
	assert_non_null(strstr(err, "compressed with method 2, not zstd"));
}

/* The writer's rules: a level out of range, or set after a record. */
static void test_writer_rules(void **state)
{
	char path[128];
	struct rc_perf_writer *w;

	(void)state;
	w = start("late.data", path, sizeof(path));
	assert_int_equal(put_raw(w, PERF_RECORD_FINISHED_ROUND, "", 0), 0);
	assert_true(rc_perf_compress(w, 1) < 0);
	assert_non_null(strstr(rc_perf_errmsg(w), "after the first record"));
	rc_perf_abort(w);
	path_in(path, sizeof(path), "level.data");
	{
		char err[512];

		assert_int_equal(rc_perf_create(path, &w, err, sizeof(err)), 0);
	}
	assert_true(rc_perf_compress(w, 23) < 0);
	assert_non_null(strstr(rc_perf_errmsg(w), "level 23"));
	rc_perf_abort(w);
	assert_int_equal(access(path, F_OK), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_records),
		cmocka_unit_test(test_cut_records),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_writer_rules),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
