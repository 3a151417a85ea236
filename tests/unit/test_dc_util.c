/* Unit tests: the one hash map with its chains for wide keys and the one
 * string hash (decoder/dc_hash.h), the one growable array (decoder/dc_vec.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "decoder/dc_hash.h"
#include "decoder/dc_vec.h"
#include "tests/unit/test_rnd.h"

/* put/get/overwrite/clear against a plain array, through many growths. */
static void test_hash_put_get(void **state)
{
	struct dc_hash h = { 0 };
	enum { N = 5000 };
	uint64_t keys[N], seed = 7, v;

	(void)state;
	assert_false(dc_hash_get(&h, 1, &v));
	for (size_t i = 0; i < N; i++) {
		keys[i] = i < N / 2 ? i * 4096 : test_rnd(&seed) >> 1;   /* close and random */
		assert_int_equal(dc_hash_put(&h, keys[i], i), 0);
	}
	assert_int_equal(h.used, N);
	for (size_t i = 0; i < N; i++) {
		assert_true(dc_hash_get(&h, keys[i], &v));
		assert_int_equal(v, i);
	}
	assert_int_equal(dc_hash_put(&h, keys[3], 99), 0);   /* overwrite */
	assert_int_equal(h.used, N);
	assert_true(dc_hash_get(&h, keys[3], &v));
	assert_int_equal(v, 99);
	assert_false(dc_hash_get(&h, 4096 * N + 1, &v));
	dc_hash_clear(&h);
	assert_int_equal(h.used, 0);
	assert_false(dc_hash_get(&h, keys[0], &v));
	dc_hash_free(&h);
	assert_null(h.slots);
}

/* Entries whose hashes collide outright still resolve, each to its own
 * index, through the chain; a lookup stops at the first miss. */
static void test_hash_chain_collisions(void **state)
{
	const char *names[] = { "alpha", "beta", "gamma", "delta" };
	struct dc_hash h = { 0 };
	uint64_t k, i;

	(void)state;
	for (size_t n = 0; n < 4; n++) {
		k = dc_hash_chain_start(42);   /* every name gets the same hash */
		while (dc_hash_chain(&h, &k, &i))
			assert_string_not_equal(names[i], names[n]);
		assert_int_equal(k, 42 + n);
		assert_int_equal(dc_hash_put(&h, k, n), 0);
	}
	for (size_t n = 0; n < 4; n++) {
		bool found = false;

		k = dc_hash_chain_start(42);
		while (!found && dc_hash_chain(&h, &k, &i))
			found = !strcmp(names[i], names[n]) && i == n;
		assert_true(found);
	}
	/* the chain start never is the empty marker, and wraps below it */
	assert_int_not_equal(dc_hash_chain_start(UINT64_MAX), DC_HASH_EMPTY);
	k = dc_hash_chain_start(UINT64_MAX);
	assert_int_equal(dc_hash_put(&h, k, 7), 0);
	assert_true(dc_hash_chain(&h, &k, &i));
	assert_int_equal(i, 7);
	assert_int_equal(k, 0);
	dc_hash_free(&h);
}

/* The string hash: FNV-1a; in steps it equals the whole; dc_str_eq. */
static void test_strhash(void **state)
{
	(void)state;
	/* FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c (the published test vector) */
	assert_int_equal(dc_fnv(DC_FNV_BASIS, "a", 1), UINT64_C(0xaf63dc4c8601ec8c));
	assert_int_equal(dc_fnv(dc_fnv(DC_FNV_BASIS, "main;", 5), "foo", 3),
			 dc_fnv(DC_FNV_BASIS, "main;foo", 8));
	assert_int_equal(dc_strhash("main;foo", 8), dc_fnv_end(dc_fnv(DC_FNV_BASIS, "main;foo", 8)));
	assert_int_not_equal(dc_strhash("ab", 2), dc_strhash("ba", 2));
	assert_true(dc_str_eq("foo", "foobar", 3));
	assert_false(dc_str_eq("foo", "fo", 2));
	assert_false(dc_str_eq("fo", "foo", 3));
	assert_true(dc_str_eq("", "x", 0));
}

static void test_vec_reserve(void **state)
{
	int *v = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(dc_vec_reserve((void **)&v, &cap, 1, sizeof(*v), 16), 0);
	assert_int_equal(cap, 16);
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(DC_VEC_PUSH_ROOM(v, i, cap, 16), 0);
		assert_true(cap > (size_t)i);
		v[i] = i;
	}
	assert_int_equal(cap, 1024);              /* doubled, not grown by one */
	for (int i = 0; i < 1000; i++)
		assert_int_equal(v[i], i);            /* kept through the moves */
	assert_int_equal(dc_vec_reserve((void **)&v, &cap, 5000, sizeof(*v), 16), 0);
	assert_int_equal(cap, 8192);              /* a jump doubles on to it */
	assert_int_equal(dc_vec_reserve((void **)&v, &cap, 10, sizeof(*v), 16), 0);
	assert_int_equal(cap, 8192);              /* never shrinks */
	free(v);
}

/* need * size over SIZE_MAX, or over the capacity's own type: an error,
 * the array untouched. */
static void test_vec_overflow(void **state)
{
	char *v = NULL;
	size_t cap = 0;
	uint32_t cap32 = 0;
	uint64_t *w = NULL;

	(void)state;
	assert_int_equal(dc_vec_reserve((void **)&v, &cap, SIZE_MAX / 2 + 2, 2, 16), -ENOMEM);
	assert_null(v);
	assert_int_equal(cap, 0);
	assert_int_equal(dc_vec_reserve((void **)&w, &cap, 3, sizeof(*w), 4), 0);
	assert_int_equal(dc_vec_reserve((void **)&w, &cap, SIZE_MAX / 4, sizeof(*w), 4), -ENOMEM);
	assert_int_equal(cap, 4);
	assert_non_null(w);
	free(w);
	assert_int_equal(dc_vec_reserve32((void **)&v, &cap32, (size_t)UINT32_MAX + 1, 1, 8),
			 -ENOMEM);
	assert_int_equal(cap32, 0);
	assert_int_equal(dc_vec_reserve32((void **)&v, &cap32, 100, 1, 8), 0);
	assert_int_equal(cap32, 128);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash_put_get),
		cmocka_unit_test(test_hash_chain_collisions),
		cmocka_unit_test(test_strhash),
		cmocka_unit_test(test_vec_reserve),
		cmocka_unit_test(test_vec_overflow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
