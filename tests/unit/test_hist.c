/* Unit tests: the log-linear latency histogram (stackrebuild/hist.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <cmocka.h>

#include "stackrebuild/stackrebuild.h"
#include "tests/unit/test_rnd.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank, the definition sr_hist_percentile documents. */
static uint64_t exact_percentile(const uint64_t *sorted, size_t n, double p)
{
	size_t rank;

	if (p <= 0)
		return sorted[0];
	if (p >= 100)
		return sorted[n - 1];
	rank = (size_t)ceil(p / 100.0 * (double)n);
	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

static void check_error(const struct sr_hist *h, uint64_t *v, size_t n)
{
	static const double ps[] = { 0, 0.1, 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100 };

	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		uint64_t want = exact_percentile(v, n, ps[i]);
		uint64_t got = sr_hist_percentile(h, ps[i]);
		double err = want ? fabs((double)got - (double)want) / (double)want : (double)got;

		if (err > 0.01)
			fail_msg("p%g: got %llu want %llu (error %.4f)", ps[i],
				 (unsigned long long)got, (unsigned long long)want, err);
	}
}

static void run_distribution(uint64_t (*gen)(uint64_t *s), uint64_t seed, size_t n)
{
	uint64_t *v = malloc(n * sizeof(*v)), s = seed, sum = 0;
	struct sr_hist h;

	assert_non_null(v);
	sr_hist_init(&h);
	for (size_t i = 0; i < n; i++) {
		v[i] = gen(&s);
		sum += v[i];
		assert_int_equal(sr_hist_add(&h, v[i]), 0);
	}
	assert_int_equal(h.count, n);
	assert_int_equal(h.sum, sum);
	/* buckets stay sorted and unique (each add searched for its place) */
	for (uint32_t i = 1; i < h.nb; i++)
		assert_true(h.b[i - 1].idx < h.b[i].idx);
	check_error(&h, v, n);
	assert_int_equal(h.min, v[0]);           /* v is sorted now */
	assert_int_equal(h.max, v[n - 1]);
	sr_hist_free(&h);
	free(v);
}

static uint64_t gen_uniform(uint64_t *s)
{
	return test_rnd(s) % 1000000;
}

static uint64_t gen_log(uint64_t *s)
{
	/* spans ns to hours: 2^0 .. 2^42 */
	unsigned bits = (unsigned)(test_rnd(s) % 43);

	return (test_rnd(s) & ((1ull << bits) - 1)) | (1ull << bits);
}

static uint64_t gen_bimodal(uint64_t *s)
{
	return test_rnd(s) % 10 ? 1500 + test_rnd(s) % 100 : 3000000000ull + test_rnd(s) % 1000000000ull;
}

static uint64_t gen_small(uint64_t *s)
{
	return test_rnd(s) % 300;
}

static void test_percentile_error_uniform(void **state)
{
	(void)state;
	run_distribution(gen_uniform, 1, 100000);
}

static void test_percentile_error_log(void **state)
{
	(void)state;
	run_distribution(gen_log, 2, 100000);
	run_distribution(gen_log, 3, 17);
}

static void test_percentile_error_bimodal(void **state)
{
	(void)state;
	run_distribution(gen_bimodal, 4, 50000);
}

static void test_small_values_exact(void **state)
{
	struct sr_hist h;
	uint64_t v[1000], s = 5;

	(void)state;
	sr_hist_init(&h);
	for (size_t i = 0; i < 1000; i++) {
		v[i] = gen_small(&s);
		sr_hist_add(&h, v[i]);
	}
	qsort(v, 1000, sizeof(v[0]), cmp_u64);
	/* Below 256 buckets are exact: percentiles are exact there. */
	for (double p = 1; p < 80; p += 3)
		if (exact_percentile(v, 1000, p) < 256)
			assert_int_equal(sr_hist_percentile(&h, p), exact_percentile(v, 1000, p));
	sr_hist_free(&h);
}

static void test_bucket_geometry(void **state)
{
	(void)state;
	/* Buckets tile u64 without gaps, each lo..hi maps to itself, and each
	 * is at most 1/128 of its values wide. */
	for (uint32_t idx = 0; idx < sr_hist_bucket_index(UINT64_MAX); idx++) {
		uint64_t lo = sr_hist_bucket_lo(idx), hi = sr_hist_bucket_hi(idx);

		assert_true(lo <= hi);
		assert_int_equal(sr_hist_bucket_index(lo), idx);
		assert_int_equal(sr_hist_bucket_index(hi), idx);
		assert_int_equal(sr_hist_bucket_lo(idx + 1), hi + 1);
		if (lo >= 256)
			assert_true((hi - lo + 1) * 128 <= lo);
	}
	assert_int_equal(sr_hist_bucket_hi(sr_hist_bucket_index(UINT64_MAX)), UINT64_MAX);
}

static void test_extremes_and_empty(void **state)
{
	struct sr_hist h;

	(void)state;
	sr_hist_init(&h);
	assert_int_equal(sr_hist_percentile(&h, 50), 0);
	assert_int_equal(h.count, 0);
	sr_hist_add(&h, UINT64_MAX);
	sr_hist_add(&h, 0);
	assert_int_equal(h.min, 0);
	assert_int_equal(h.max, UINT64_MAX);
	sr_hist_add(&h, 5);
	assert_int_equal(h.count, 3);
	assert_int_equal(h.sum, UINT64_MAX);          /* saturates, no wrap */
	assert_int_equal(sr_hist_percentile(&h, 0), 0);
	assert_int_equal(sr_hist_percentile(&h, 50), 5);
	/* the middle of the top bucket, within 1/256 of the value */
	assert_true(sr_hist_percentile(&h, 75) >= UINT64_MAX - (UINT64_MAX >> 8));
	assert_int_equal(sr_hist_percentile(&h, 100), UINT64_MAX);
	sr_hist_free(&h);
	assert_int_equal(h.count, 0);
	assert_null(h.b);
}

static void test_single_value_is_exact(void **state)
{
	struct sr_hist h;

	(void)state;
	sr_hist_init(&h);
	sr_hist_add_n(&h, 123456789, 1000);
	/* Clamping to [min, max] makes a constant latency exact. */
	assert_int_equal(sr_hist_percentile(&h, 50), 123456789);
	assert_int_equal(sr_hist_percentile(&h, 99.9), 123456789);
	assert_int_equal(h.nb, 1);
	sr_hist_free(&h);
}

static void test_merge_equals_adding(void **state)
{
	struct sr_hist a, b, all;
	uint64_t s = 9;

	(void)state;
	sr_hist_init(&a);
	sr_hist_init(&b);
	sr_hist_init(&all);
	for (int i = 0; i < 20000; i++) {
		uint64_t v = gen_log(&s);

		sr_hist_add(i % 3 ? &a : &b, v);
		sr_hist_add(&all, v);
	}
	assert_int_equal(sr_hist_merge(&a, &b), 0);
	assert_int_equal(a.count, all.count);
	assert_int_equal(a.sum, all.sum);
	assert_int_equal(a.min, all.min);
	assert_int_equal(a.max, all.max);
	assert_int_equal(a.nb, all.nb);
	for (uint32_t i = 0; i < a.nb; i++) {
		assert_int_equal(a.b[i].idx, all.b[i].idx);
		assert_int_equal(a.b[i].count, all.b[i].count);
	}
	for (double p = 0; p <= 100; p += 2.5)
		assert_int_equal(sr_hist_percentile(&a, p), sr_hist_percentile(&all, p));
	/* merging an empty one changes nothing */
	sr_hist_free(&b);
	assert_int_equal(sr_hist_merge(&a, &b), 0);
	assert_int_equal(a.count, all.count);
	sr_hist_free(&a);
	sr_hist_free(&all);
}

static void test_sparse_storage(void **state)
{
	struct sr_hist h;
	uint64_t s = 11;

	(void)state;
	sr_hist_init(&h);
	/* A million latencies within 1000..1099 ns touch few buckets:
	 * 1000..1023 in 4 ns buckets, 1024..1099 in 8 ns ones. */
	for (int i = 0; i < 1000000; i++)
		sr_hist_add(&h, 1000 + test_rnd(&s) % 100);
	assert_int_equal(h.nb, 6 + 10);
	assert_true(h.cap <= 16);
	sr_hist_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percentile_error_uniform),
		cmocka_unit_test(test_percentile_error_log),
		cmocka_unit_test(test_percentile_error_bimodal),
		cmocka_unit_test(test_small_values_exact),
		cmocka_unit_test(test_bucket_geometry),
		cmocka_unit_test(test_extremes_and_empty),
		cmocka_unit_test(test_single_value_is_exact),
		cmocka_unit_test(test_merge_equals_adding),
		cmocka_unit_test(test_sparse_storage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
