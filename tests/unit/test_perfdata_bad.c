/* Unit tests: the perf.data reader on bad input, in-process so the whole
 * thing runs under ASan+UBSan: a real perf.data (made here by perf record)
 * and our sample file truncated at EVERY offset, random byte flips, random
 * record sizes, junk files. Every failure must be a one-line message naming
 * the file; nothing may crash or read outside the file. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "decoder/decoder.h"
#include "tests/unit/test_perfdata_sample.h"

struct input {
	char dir[64];
	char path[128];        /* the file exercised */
	uint8_t *real;         /* perf record's file */
	size_t real_size;
	uint8_t *sample;       /* our writer's file */
	size_t sample_size;
};

static uint8_t *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	buf = malloc((size_t)n);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*size = (size_t)n;
	return buf;
}

static int setup(void **state)
{
	struct input *in = calloc(1, sizeof(*in));
	char cmd[512], p[256], err[256];

	assert_non_null(in);
	strcpy(in->dir, "/tmp/ptf-perfbad-XXXXXX");
	assert_non_null(mkdtemp(in->dir));
	snprintf(in->path, sizeof(in->path), "%s/bad.data", in->dir);
	snprintf(cmd, sizeof(cmd), "perf record -q -e dummy -o %s/real.data -- /bin/true "
		 ">%s/rec.log 2>&1", in->dir, in->dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "test_perfdata_bad: '%s' failed: a real perf.data is needed "
			"(scripts/setup.sh installs linux-perf; perf_event_open needs root or "
			"kernel.perf_event_paranoid <= 2)\n", cmd);
		return -1;
	}
	snprintf(p, sizeof(p), "%s/real.data", in->dir);
	in->real = slurp(p, &in->real_size);
	snprintf(p, sizeof(p), "%s/sample.data", in->dir);
	if (smp_write(p, err, sizeof(err))) {
		fprintf(stderr, "test_perfdata_bad: %s\n", err);
		return -1;
	}
	in->sample = slurp(p, &in->sample_size);
	*state = in;
	return 0;
}

static int teardown(void **state)
{
	struct input *in = *state;
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", in->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", in->dir);
	free(in->real);
	free(in->sample);
	free(in);
	return 0;
}

static void put_file(const char *path, const void *buf, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, n), (ssize_t)n);
	close(fd);
}

static void check_msg(const char *msg, const char *path)
{
	size_t n = strlen(path);

	if (strncmp(msg, path, n) || strncmp(msg + n, ": ", 2) || strchr(msg, '\n') ||
	    strlen(msg) <= n + 2)
		fail_msg("bad error message for %s: '%s'", path, msg);
}

static volatile size_t sink;

/* What dump reads of a file cut short: every record before the cut, each
 * whole (ASan sees an overrun); the cut is where the header says. */
static void read_cut(const char *path)
{
	struct dc_perf_file *f;
	struct dc_perf_record r;
	char err[512];

	if (dc_perf_open_cut(path, true, &f, err, sizeof(err)))
		return;
	while (dc_perf_next(f, &r) > 0) {
		assert_true(r.offset + r.total_size <= dc_perf_file_size(f));
		sink += ((const uint8_t *)r.raw)[r.size - 1];
		if (r.type == PERF_RECORD_AUXTRACE && r.auxtrace.size)
			sink += ((const uint8_t *)r.auxtrace.data)[r.auxtrace.size - 1];
	}
	if (dc_perf_cut_end(f))
		assert_true(dc_perf_cut_end(f) > dc_perf_file_size(f));
	dc_perf_close(f);
}

/* Open path and read everything the API offers; touch every string and
 * payload byte range so ASan sees any overrun. Returns 0 when the file was
 * read to the end, -1 when open failed, -2 when iteration failed. */
static int exercise(const char *path, char *err, size_t errlen)
{
	struct dc_perf_file *f;
	struct dc_perf_record r;
	uint32_t a, b;
	size_t argc, nidx;
	const char *const *argv;
	const struct pf_auxtrace_index_entry *idx;
	int ret;

	if (dc_perf_open(path, &f, err, errlen)) {
		check_msg(err, path);
		read_cut(path);
		return -1;
	}
	for (size_t i = 0; i < dc_perf_nr_attrs(f); i++) {
		const struct dc_perf_attr *at = dc_perf_attr_at(f, i);

		for (size_t k = 0; k < at->nr_ids; k++)
			sink += at->ids[k];
	}
	if (!dc_perf_nrcpus(f, &a, &b))
		sink += a + b;
	if (!dc_perf_cmdline(f, &argc, &argv))
		for (size_t i = 0; i < argc; i++)
			sink += strlen(argv[i]);
	for (size_t i = 0; i < dc_perf_nr_build_ids(f); i++)
		sink += strlen(dc_perf_build_id_at(f, i)->filename);
	idx = dc_perf_auxtrace_index(f, &nidx);
	for (size_t i = 0; i < nidx; i++)
		sink += idx[i].file_offset;
	while ((ret = dc_perf_next(f, &r)) > 0) {
		switch (r.type) {
		case PERF_RECORD_COMM:
			sink += strlen(r.comm.comm);
			break;
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2:
			sink += strlen(r.mmap.filename);
			break;
		case PERF_RECORD_HEADER_BUILD_ID:
			sink += strlen(r.build_id.filename);
			break;
		case PERF_RECORD_AUXTRACE_INFO:
			if (r.auxtrace_info.is_pt)
				sink += strlen(r.auxtrace_info.pt.filter);
			break;
		case PERF_RECORD_AUXTRACE:
			if (r.auxtrace.size)
				sink += ((const uint8_t *)r.auxtrace.data)[0] +
					((const uint8_t *)r.auxtrace.data)[r.auxtrace.size - 1];
			break;
		}
		sink += ((const uint8_t *)r.raw)[r.size - 1];
	}
	if (ret < 0) {
		snprintf(err, errlen, "%s", dc_perf_errmsg(f));
		check_msg(err, path);
	}
	/* seeking to every index entry must be safe too */
	for (size_t i = 0; i < nidx; i++) {
		char e2[256];

		if (dc_perf_read_at(f, idx[i].file_offset, &r, e2, sizeof(e2)) == 0)
			sink += r.size;
		else
			check_msg(e2, path);
		if (dc_perf_seek(f, idx[i].file_offset) == 0 && dc_perf_next(f, &r) > 0)
			sink += r.size;
	}
	dc_perf_close(f);
	return ret < 0 ? -2 : 0;
}

/* Every proper prefix of a good file is refused at open, as truncated. */
static void truncate_everywhere(const char *path, const uint8_t *buf, size_t size)
{
	char err[512];
	int fd;

	put_file(path, buf, size);
	assert_int_equal(exercise(path, err, sizeof(err)), 0);
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	for (size_t n = size; n-- > 0;) {
		assert_int_equal(ftruncate(fd, (off_t)n), 0);
		if (exercise(path, err, sizeof(err)) != -1)
			fail_msg("%s cut to %zu of %zu bytes was accepted", path, n, size);
		if (n == 0 && !strstr(err, "empty"))
			fail_msg("cut to 0: '%s'", err);
		if (n > 0 && n < 8 && !strstr(err, "not a perf.data file"))
			fail_msg("cut to %zu: '%s'", n, err);
		if (n >= 8 && !strstr(err, "truncated"))
			fail_msg("cut to %zu: '%s'", n, err);
	}
	close(fd);
}

static void test_truncate_real(void **state)
{
	struct input *in = *state;

	truncate_everywhere(in->path, in->real, in->real_size);
}

static void test_truncate_sample(void **state)
{
	struct input *in = *state;

	truncate_everywhere(in->path, in->sample, in->sample_size);
}

/* Flip a few bytes anywhere (mostly in the header, attrs and data). */
static void flips(struct input *in, const uint8_t *src, size_t size, unsigned seed, int rounds)
{
	uint8_t *buf = malloc(size);
	char err[512];
	int failed = 0;

	assert_non_null(buf);
	srand(seed);
	for (int i = 0; i < rounds; i++) {
		int k = 1 + rand() % 4;

		memcpy(buf, src, size);
		while (k--) {
			size_t span = rand() % 2 ? (size < 1024 ? size : 1024) : size;

			buf[(size_t)rand() % span] ^= (uint8_t)(1 + rand() % 255);
		}
		put_file(in->path, buf, size);
		failed += exercise(in->path, err, sizeof(err)) != 0;
	}
	/* the flips must have hit something that matters now and then */
	assert_true(failed > 0);
	free(buf);
}

static void test_flips(void **state)
{
	struct input *in = *state;

	flips(in, in->real, in->real_size, 1, 3000);
	flips(in, in->sample, in->sample_size, 2, 3000);
}

/* Every record's size replaced by odd values. */
static void test_record_sizes(void **state)
{
	struct input *in = *state;
	static const uint16_t sizes[] = { 0, 1, 7, 8, 9, 15, 16, 24, 47, 48, 0xfff8, 0xffff };
	const uint8_t *files[] = { in->real, in->sample };
	size_t file_sizes[] = { in->real_size, in->sample_size };
	char err[512];

	for (int fi = 0; fi < 2; fi++) {
		const uint8_t *src = files[fi];
		size_t size = file_sizes[fi];
		uint8_t *buf = malloc(size);
		struct pf_file_header h;
		uint64_t off;

		assert_non_null(buf);
		memcpy(&h, src, sizeof(h));
		for (off = h.data.offset; off + 8 <= h.data.offset + h.data.size;) {
			uint16_t rsz;
			uint32_t type;
			uint64_t next;

			memcpy(&rsz, src + off + 6, 2);
			memcpy(&type, src + off, 4);
			next = off + rsz;
			if (type == PERF_RECORD_AUXTRACE) {
				uint64_t payload;

				memcpy(&payload, src + off + 8, 8);
				next += payload;
			}
			for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
				memcpy(buf, src, size);
				memcpy(buf + off + 6, &sizes[s], 2);
				put_file(in->path, buf, size);
				exercise(in->path, err, sizeof(err));
			}
			/* and an AUXTRACE payload size that runs off the end */
			if (type == PERF_RECORD_AUXTRACE) {
				uint64_t big = UINT64_MAX - 7;

				memcpy(buf, src, size);
				memcpy(buf + off + 8, &big, 8);
				put_file(in->path, buf, size);
				assert_int_equal(exercise(in->path, err, sizeof(err)), -2);
				assert_non_null(strstr(err, "AUXTRACE payload"));
			}
			assert_true(rsz >= 8);
			off = next;
		}
		free(buf);
	}
}

static void test_junk(void **state)
{
	struct input *in = *state;
	char err[512];
	uint8_t buf[4096];
	struct pf_file_header h;

	put_file(in->path, "", 0);
	assert_int_equal(exercise(in->path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "empty"));

	put_file(in->path, "just some text\n", 15);
	assert_int_equal(exercise(in->path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a perf.data file (bad magic)"));

	memcpy(buf, in->real, 8);
	buf[7] ^= 1;
	put_file(in->path, buf, 8);
	assert_int_equal(exercise(in->path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "bad magic"));

	/* pipe mode */
	memset(buf, 0, sizeof(buf));
	memcpy(buf, "PERFILE2", 8);
	buf[8] = 16;
	put_file(in->path, buf, 64);
	assert_int_equal(exercise(in->path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "pipe"));

	/* attr.size 136 against the header's 144 (perf 6.1 rejects 136) */
	memcpy(buf, in->real, in->real_size < sizeof(buf) ? in->real_size : sizeof(buf));
	memcpy(&h, in->real, sizeof(h));
	if (h.attrs.offset + 8 <= sizeof(buf)) {
		uint32_t sz = 136;
		uint8_t *copy = malloc(in->real_size);

		assert_non_null(copy);
		memcpy(copy, in->real, in->real_size);
		memcpy(copy + h.attrs.offset + 4, &sz, 4);
		put_file(in->path, copy, in->real_size);
		assert_int_equal(exercise(in->path, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "attr size 136 invalid"));
		/* header attr_size 0 */
		memcpy(copy, in->real, in->real_size);
		memset(copy + 16, 0, 8);
		put_file(in->path, copy, in->real_size);
		assert_int_equal(exercise(in->path, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "attr size 0 invalid"));
		/* a data section claiming more than the file */
		memcpy(copy, in->real, in->real_size);
		h.data.size += in->real_size;
		memcpy(copy, &h, sizeof(h));
		put_file(in->path, copy, in->real_size);
		assert_int_equal(exercise(in->path, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "truncated: data section ends at"));
		free(copy);
	}

	/* random bytes, with and without a good magic and header size */
	srand(3);
	for (int i = 0; i < 2000; i++) {
		size_t n = 8 + (size_t)rand() % (sizeof(buf) - 8);

		for (size_t k = 0; k < n; k++)
			buf[k] = (uint8_t)rand();
		if (i % 2) {
			uint64_t hs = 104;

			memcpy(buf, "PERFILE2", 8);
			memcpy(buf + 8, &hs, 8);
			/* small section values so some point inside the file */
			for (int s = 16; s < 72; s += 8) {
				uint64_t v = (uint64_t)rand() % n;

				memcpy(buf + s, &v, 8);
			}
		}
		put_file(in->path, buf, n);
		exercise(in->path, err, sizeof(err));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_truncate_real),
		cmocka_unit_test(test_truncate_sample),
		cmocka_unit_test(test_flips),
		cmocka_unit_test(test_record_sizes),
		cmocka_unit_test(test_junk),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
