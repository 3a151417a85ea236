/* Unit tests: folded output (flamegraph/fold.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <cmocka.h>

#include "test_stack_util.h"
#include "flamegraph/flamegraph.h"

static char *fold(const struct sr_cct *cct, const struct sr_symbolizer *sym,
		  enum fg_fold_style style, uint64_t min_ns)
{
	struct fg_fold_options opt = { .style = style, .min_ns = min_ns };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(fg_fold(f, cct, sym, &opt), 0);
	fclose(f);
	return buf;
}

static void expect_fold(const struct sr_cct *cct, enum fg_fold_style style, uint64_t min_ns,
			const char *want)
{
	char *got = fold(cct, NULL, style, min_ns);

	assert_string_equal(got, want);
	free(got);
}

/* Every line valid, and the values add up to the tree's time. */
static void expect_valid_lines(const char *text, uint64_t total)
{
	char *copy = strdup(text), *save = NULL;
	uint64_t sum = 0;

	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (!fg_folded_line_valid(l))
			fail_msg("invalid folded line: %s", l);
		sum += strtoull(strrchr(l, ' ') + 1, NULL, 10);
	}
	assert_int_equal(sum, total);
	free(copy);
}

static struct sr_cct *nested_cct(const struct sr_options *opt)
{
	struct sr_machine *m = sr_machine_new(&fake_sym, opt);

	assert_non_null(m);
	sr_machine_comm(m, 100, 1, "app", 0);
	CALL(m, 1, 0, F_MAIN, F_A);
	CALL(m, 1, 10, F_A, F_B);
	RET(m, 1, 30, F_B, F_A);
	CALL(m, 1, 35, F_A, F_B);
	RET(m, 1, 46, F_B, F_A);
	RET(m, 1, 60, F_A, F_MAIN);
	END(m, 1, 100, F_MAIN);
	return finish(m, 0);
}

static void test_annotated_and_plain(void **state)
{
	struct sr_cct *cct = nested_cct(NULL);

	(void)state;
	/* b: latencies 20 and 11, avg 15.5 rounds to 16 */
	expect_fold(cct, FG_FOLD_ANNOTATED, 0,
		    "main:1(inferred) 40\n"
		    "main:1(inferred);a:1,avg:60 29\n"
		    "main:1(inferred);a:1,avg:60;b:2,avg:16 31\n");
	expect_fold(cct, FG_FOLD_PLAIN, 0, "main 40\nmain;a 29\nmain;a;b 31\n");
	/* min_ns drops lines below it */
	expect_fold(cct, FG_FOLD_PLAIN, 31, "main 40\nmain;a;b 31\n");
	sr_cct_free(cct);
}

/* A leaf context with calls but no time: a 0 line when annotated, so its
 * calls show; nothing in plain output. */
static void test_zero_time_leaf(void **state)
{
	struct sr_machine *m = sr_machine_new(&fake_sym, NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	CALL(m, 1, 10, F_A, F_B);
	RET(m, 1, 10, F_B, F_A);
	CALL(m, 1, 10, F_A, F_B);
	RET(m, 1, 10, F_B, F_A);
	RET(m, 1, 20, F_A, F_MAIN);
	END(m, 1, 30, F_MAIN);
	cct = finish(m, 0);
	expect_fold(cct, FG_FOLD_ANNOTATED, 0,
		    "main:1(inferred) 10\n"
		    "main:1(inferred);a:1,avg:20 20\n"
		    "main:1(inferred);a:1,avg:20;b:2,avg:0 0\n");
	expect_fold(cct, FG_FOLD_ANNOTATED, 1,
		    "main:1(inferred) 10\nmain:1(inferred);a:1,avg:20 20\n");
	expect_fold(cct, FG_FOLD_PLAIN, 0, "main 10\nmain;a 20\n");
	sr_cct_free(cct);
}

static void test_default_options_and_per_thread(void **state)
{
	struct sr_options opt = { .per_thread = true };
	struct sr_cct *cct = nested_cct(&opt);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_int_equal(fg_fold(f, cct, NULL, NULL), 0);   /* annotated */
	fclose(f);
	assert_string_equal(buf,
		"app-1;main:1(inferred) 40\n"
		"app-1;main:1(inferred);a:1,avg:60 29\n"
		"app-1;main:1(inferred);a:1,avg:60;b:2,avg:16 31\n");
	expect_valid_lines(buf, 100);
	free(buf);
	sr_cct_free(cct);
}

static void test_pseudo_frames_annotated(void **state)
{
	struct sr_machine *m = sr_machine_new(&fake_sym, NULL);
	struct sr_cct *cct;
	char *out;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	SYSCALL(m, 1, 10, F_A, 202);
	SWOUT(m, 1, 12);
	SWIN(m, 1, 50);
	RESUME(m, 1, 52, IP(F_A));
	SYSCALL(m, 1, 60, F_A, 202);           /* never returns */
	cct = finish(m, 70);
	out = fold(cct, NULL, FG_FOLD_ANNOTATED, 0);
	/* two futex calls: one complete (42 ns), one cut by the end */
	assert_string_equal(out,
		"main:1(inferred);a:1(inferred) 18\n"
		"main:1(inferred);a:1(inferred);[kernel] futex:2,avg:42 14\n"
		"main:1(inferred);a:1(inferred);[kernel] futex:2,avg:42;[off-cpu]:1,avg:38 38\n");
	expect_valid_lines(out, 70);
	free(out);
	sr_cct_free(cct);
}

static void test_sanitized_names(void **state)
{
	struct sr_machine *m = sr_machine_new(&fake_sym, NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_SEMI);         /* "odd;name 12" */
	RET(m, 1, 5, F_SEMI, F_MAIN);
	CALL(m, 1, 6, F_MAIN, F_NSF);
	feed_ev(m, 1, 8, DC_EV_CALL, 0, IP(F_NSF), 0x10, 0, 0);   /* unknown */
	END(m, 1, 9, F_MAIN);
	cct = finish(m, 0);
	expect_fold(cct, FG_FOLD_PLAIN, 0,
		    "main 1\nmain;ns::f(int) 2\nmain;ns::f(int);[unknown] 1\nmain;odd_name_12 5\n");
	sr_cct_free(cct);
}

/* Two keys with one name print alike: one line, values summed. */
static const char *dup_name(void *ctx, uint64_t key)
{
	(void)ctx;
	return key == 1 ? "main" : "dup";
}

static void test_identical_stacks_merged(void **state)
{
	struct sr_symbolizer sym = { .name = dup_name };
	struct sr_cct *cct = sr_cct_new(&sym);
	struct sr_node *m = sr_cct_child(cct, NULL, SR_NODE_FUNC, 1);
	struct sr_node *d1 = sr_cct_child(cct, m, SR_NODE_FUNC, 2);
	struct sr_node *d2 = sr_cct_child(cct, m, SR_NODE_FUNC, 3);

	(void)state;
	sr_node_add_time(d1, SR_TIME_USER, 10);
	sr_node_add_time(d2, SR_TIME_USER, 20);
	sr_node_add_call(d1, true, 4);
	sr_node_add_call(d2, true, 4);
	sr_cct_finalize(cct);
	expect_fold(cct, FG_FOLD_PLAIN, 0, "main;dup 30\n");
	/* one frame: both nodes' calls (the table's count), avg over both */
	expect_fold(cct, FG_FOLD_ANNOTATED, 0, "main;dup:2,avg:4 30\n");
	/* min_ns applies to the merged line */
	expect_fold(cct, FG_FOLD_PLAIN, 25, "main;dup 30\n");
	sr_cct_free(cct);
}

static void test_empty_tree_and_write_error(void **state)
{
	struct sr_cct *cct = sr_cct_new(NULL);
	struct sr_cct *full = nested_cct(NULL);
	FILE *f;

	(void)state;
	expect_fold(cct, FG_FOLD_ANNOTATED, 0, "");
	f = fopen("/dev/full", "w");
	if (f) {
		setvbuf(f, NULL, _IONBF, 0);
		assert_int_equal(fg_fold(f, full, NULL, NULL), -EIO);
		fclose(f);
	}
	sr_cct_free(cct);
	sr_cct_free(full);
}

static void expect_sanitize(const char *in, const char *want)
{
	char buf[64];

	assert_int_equal(fg_frame_sanitize(buf, sizeof(buf), in), strlen(want));
	assert_string_equal(buf, want);
}

static void test_frame_sanitize(void **state)
{
	char small[4];

	(void)state;
	expect_sanitize("plain", "plain");
	expect_sanitize("a;b", "a_b");
	expect_sanitize("x\ny\r", "x?y?");
	expect_sanitize("tab\t3", "tab?3");
	expect_sanitize("foo 12", "foo_12");
	expect_sanitize("foo  1.5", "foo__1.5");
	expect_sanitize("foo 1.", "foo_1.");
	expect_sanitize("trail ", "trail_");
	expect_sanitize("f 12 ", "f 12_");
	expect_sanitize("v1.2", "v1.2");
	expect_sanitize("operator new 2x", "operator new 2x");
	expect_sanitize("ns::f(int) const", "ns::f(int) const");
	expect_sanitize("", "[unknown]");
	expect_sanitize(NULL, "[unknown]");
	/* truncation, snprintf style */
	assert_int_equal(fg_frame_sanitize(small, sizeof(small), "abcdef"), 6);
	assert_string_equal(small, "abc");
	assert_int_equal(fg_frame_sanitize(NULL, 0, "a;b 1"), 5);
	/* whatever goes in, the result is a valid frame */
	{
		const char *nasty[] = { "a 1", "  9", "x;y\n2", "\t", " ", "a 1.2.3", "1 2 3" };

		for (size_t i = 0; i < sizeof(nasty) / sizeof(nasty[0]); i++) {
			char frame[64], line[80];

			fg_frame_sanitize(frame, sizeof(frame), nasty[i]);
			snprintf(line, sizeof(line), "root;%s 7", frame);
			if (!fg_folded_line_valid(line))
				fail_msg("sanitized \"%s\" -> invalid line \"%s\"", nasty[i], line);
		}
	}
}

static void test_line_valid(void **state)
{
	const char *good[] = {
		"a 1", "a;b 0\n", "[kernel] futex:1,avg:5 3", "x 12:1(inferred) 4",
		"main:1(inferred);a:1,avg:60;b:2,avg:16 31", "app-1;main 40", "ns::f(int) const 9",
	};
	const char *bad[] = {
		"", "\n", "a", "a 1x", " 1", "a;;b 1", ";a 1", "a; 1", "a;b 12 5", "a\tb 1",
		"a 1 ", "a;b  5", "a 1.5", "a\nb 1", "a 1\n\n", "a;b 1.5 5",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (!fg_folded_line_valid(good[i]))
			fail_msg("rejected good line \"%s\"", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (fg_folded_line_valid(bad[i]))
			fail_msg("accepted bad line \"%s\"", bad[i]);
}

static void expect_split(const char *frame, bool ann, size_t name_len, uint64_t calls,
			 bool has_avg, uint64_t avg)
{
	size_t nl = 99;
	uint64_t c = 99, a = 99;
	bool h = true;

	assert_int_equal(fg_frame_split(frame, strlen(frame), &nl, &c, &h, &a), ann);
	assert_int_equal(nl, name_len);
	assert_int_equal(c, calls);
	assert_int_equal(h, has_avg);
	assert_int_equal(a, avg);
}

static void test_frame_split(void **state)
{
	(void)state;
	expect_split("foo:12,avg:1534", true, 3, 12, true, 1534);
	expect_split("main:1(inferred)", true, 4, 1, false, 0);
	expect_split("ns::f(int):3,avg:10", true, 10, 3, true, 10);
	expect_split("[kernel] futex:2,avg:42", true, 14, 2, true, 42);
	expect_split("app-1", false, 5, 0, false, 0);
	expect_split("a:b", false, 3, 0, false, 0);
	expect_split("x,avg:5", false, 7, 0, false, 0);
	expect_split("foo:", false, 4, 0, false, 0);
	expect_split(":5(inferred)", false, 12, 0, false, 0);
	assert_true(fg_frame_split("a:1,avg:2", 9, NULL, NULL, NULL, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_annotated_and_plain),
		cmocka_unit_test(test_zero_time_leaf),
		cmocka_unit_test(test_default_options_and_per_thread),
		cmocka_unit_test(test_pseudo_frames_annotated),
		cmocka_unit_test(test_sanitized_names),
		cmocka_unit_test(test_identical_stacks_merged),
		cmocka_unit_test(test_empty_tree_and_write_error),
		cmocka_unit_test(test_frame_sanitize),
		cmocka_unit_test(test_line_valid),
		cmocka_unit_test(test_frame_split),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
