/* Tests for flamegraph/folded_read + diff: reading folded files back and the
 * difffolded 3-column output. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "flamegraph/flamegraph.h"

static struct fg_folded *read_str(const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct fg_folded *ff = NULL;
	size_t bad = 0;

	assert_non_null(f);
	assert_int_equal(fg_folded_read(f, &ff, &bad), 0);
	fclose(f);
	return ff;
}

static int read_err(const char *text, size_t *bad)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct fg_folded *ff = NULL;
	int rc;

	assert_non_null(f);
	rc = fg_folded_read(f, &ff, bad);
	fclose(f);
	fg_folded_free(ff);
	return rc;
}

static char *diff_str(const struct fg_folded *a, const struct fg_folded *b, bool norm)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	assert_non_null(out);
	assert_int_equal(fg_diff_write(out, a, b, norm), 0);
	fclose(out);
	return buf;
}

static void test_read_plain_and_annotated(void **state)
{
	struct fg_folded *f = read_str(
		"main:1(inferred);work:12,avg:1534;[kernel] write:12,avg:800 9600\n"
		"main:1(inferred);work:12,avg:1534 8808\n"
		"\n"
		"# comment\n"
		"main;work 2\n"
		"ns::f(int):3,avg:10;a b 4.6\n");
	uint64_t v;
	(void)state;

	assert_true(fg_folded_annotated(f));
	assert_int_equal(fg_folded_count(f), 3);
	/* sorted bytewise, annotations gone, equal plain stacks summed */
	assert_string_equal(fg_folded_stack(f, 0, &v), "main;work");
	assert_int_equal(v, 8810);
	assert_string_equal(fg_folded_stack(f, 1, &v), "main;work;[kernel] write");
	assert_int_equal(v, 9600);
	assert_string_equal(fg_folded_stack(f, 2, &v), "ns::f(int);a b");
	assert_int_equal(v, 5);   /* 4.6 rounded */
	assert_null(fg_folded_stack(f, 3, &v));
	assert_int_equal(fg_folded_total(f), 8810 + 9600 + 5);
	fg_folded_free(f);

	f = read_str("a;b 1\n");
	assert_false(fg_folded_annotated(f));
	fg_folded_free(f);
}

static void test_read_bad(void **state)
{
	size_t bad = 0;
	(void)state;

	assert_int_equal(read_err("a;b 1\nnovalue\n", &bad), -EBADMSG);
	assert_int_equal(bad, 2);
	assert_int_equal(read_err("a;b 1 2\n", &bad), -EBADMSG);   /* a diff file */
	assert_int_equal(bad, 1);
	assert_int_equal(read_err("  12\n", &bad), -EBADMSG);      /* no stack */
	assert_int_equal(read_err("a;b -3\n", &bad), -EBADMSG);
	assert_int_equal(read_err("a;b 1x\n", &bad), -EBADMSG);
	assert_int_equal(read_err("", &bad), 0);
}

/* difffolded.pl's input grammar for one line: stack, space, count, space,
 * count (each count \d+(\.\d*)?), and the stack must not end in whitespace
 * (or it would be read as another column). */
static bool difffolded_line_ok(const char *line)
{
	const char *end = line + strlen(line), *p;
	int cols = 0;

	if (end > line && end[-1] == '\n')
		end--;
	p = end;
	for (cols = 0; cols < 2; cols++) {
		const char *num_end = p;

		while (p > line && p[-1] >= '0' && p[-1] <= '9')
			p--;
		if (p == num_end || p == line || p[-1] != ' ')
			return false;
		p--;
	}
	if (p == line || p[-1] == ' ' || p[-1] == '\t')
		return false;
	for (const char *q = line; q < p; q++)
		if ((unsigned char)*q < 0x20)
			return false;
	return true;
}

static void test_diff_self_is_zero(void **state)
{
	const char *text = "main:1(inferred);work:12,avg:1534 9600\nmain:1(inferred) 10\n"
			   "main:1(inferred);other:2,avg:5 10\n";
	struct fg_folded *a = read_str(text), *b = read_str(text);
	char *out = diff_str(a, b, false), *save = NULL;
	int lines = 0;
	(void)state;

	for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *sb = strrchr(l, ' '), *sa;
		unsigned long long x, y;

		assert_true(difffolded_line_ok(l));
		*sb = '\0';
		sa = strrchr(l, ' ');
		x = strtoull(sa + 1, NULL, 10);
		y = strtoull(sb + 1, NULL, 10);
		assert_int_equal(x, y);
		assert_true(x > 0);
		lines++;
	}
	assert_int_equal(lines, 3);
	free(out);
	fg_folded_free(a);
	fg_folded_free(b);
}

/* The 3 columns are the union of both inputs' stacks, 0 where missing. */
static void test_diff_union(void **state)
{
	struct fg_folded *a = read_str("m;x 5\nm;y:1,avg:3 7\nm 1\n");
	struct fg_folded *b = read_str("m;y 9\nm;z 4\nm 1\nm;y;q 2\n");
	char *out = diff_str(a, b, false);
	(void)state;

	assert_string_equal(out,
			    "m 1 1\n"
			    "m;x 5 0\n"
			    "m;y 7 9\n"
			    "m;y;q 0 2\n"
			    "m;z 0 4\n");
	free(out);
	/* -n: A scaled to B's total (13 -> 16), truncated like difffolded.pl */
	out = diff_str(a, b, true);
	assert_string_equal(out,
			    "m 1 1\n"
			    "m;x 6 0\n"
			    "m;y 8 9\n"
			    "m;y;q 0 2\n"
			    "m;z 0 4\n");
	free(out);
	fg_folded_free(a);
	fg_folded_free(b);
}

/* Many random stacks: every line is valid and the union is exact. */
static void test_diff_random_union(void **state)
{
	char *ta = NULL, *tb = NULL;
	size_t la = 0, lb = 0;
	FILE *fa = open_memstream(&ta, &la), *fb = open_memstream(&tb, &lb);
	uint64_t want_a[64] = { 0 }, want_b[64] = { 0 };
	struct fg_folded *a, *b;
	char *out, *save = NULL;
	unsigned seed = 12345;
	int lines = 0;
	(void)state;

	for (int i = 0; i < 300; i++) {
		unsigned id, v;

		seed = seed * 1103515245 + 12345;
		id = (seed >> 16) % 64;
		v = (seed >> 8) % 1000 + 1;
		/* stack id: root;f<id/8>;g<id%8> */
		if (i % 2) {
			fprintf(fa, "root;f%u:%u,avg:9;g%u:1(inferred) %u\n", id / 8, i, id % 8, v);
			want_a[id] += v;
		} else {
			fprintf(fb, "root;f%u;g%u %u\n", id / 8, id % 8, v);
			want_b[id] += v;
		}
	}
	fclose(fa);
	fclose(fb);
	a = read_str(ta);
	b = read_str(tb);
	out = diff_str(a, b, false);
	for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned f, g;
		unsigned long long x, y;

		assert_true(difffolded_line_ok(l));
		assert_int_equal(sscanf(l, "root;f%u;g%u %llu %llu", &f, &g, &x, &y), 4);
		assert_int_equal(x, want_a[f * 8 + g]);
		assert_int_equal(y, want_b[f * 8 + g]);
		want_a[f * 8 + g] = want_b[f * 8 + g] = UINT64_MAX;  /* seen once */
		lines++;
	}
	for (int i = 0; i < 64; i++)
		assert_true(want_a[i] == UINT64_MAX || (want_a[i] == 0 && want_b[i] == 0));
	assert_true(lines > 40);
	free(out);
	free(ta);
	free(tb);
	fg_folded_free(a);
	fg_folded_free(b);
}

/* Mangled folded text: read back or refused, never a crash; what is read
 * diffs into valid lines. */
static void test_read_mangled(void **state)
{
	static const char *const alphabet = " 0123456789;:,.()avginferd\t\n";
	const char *base = "main:1(inferred);work:12,avg:1534;[kernel] write:12,avg:800 9600\n"
			   "a;b;c 12\n";
	unsigned seed = 5;
	char text[256];
	(void)state;

	for (int i = 0; i < 5000; i++) {
		size_t len = strlen(base), bad;
		struct fg_folded *f = NULL;
		FILE *in;
		int rc;

		memcpy(text, base, len + 1);
		for (int k = 0; k < 1 + i % 3; k++) {
			seed = seed * 1103515245 + 12345;
			text[(seed >> 8) % len] = alphabet[(seed >> 20) % strlen(alphabet)];
		}
		in = fmemopen(text, len, "r");
		assert_non_null(in);
		rc = fg_folded_read(in, &f, &bad);
		fclose(in);
		assert_true(rc == 0 || rc == -EBADMSG);
		if (rc == 0) {
			char *out = diff_str(f, f, false), *save = NULL;

			for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
				assert_true(strlen(l) > 4);
			free(out);
			fg_folded_free(f);
		}
	}
}

/* Values that add past 2^64-1 are refused at the line that does it, never
 * wrapped (18446744073709551609 + 10 is not 3). */
static void test_read_sum_overflow(void **state)
{
	size_t bad = 0;
	(void)state;

	assert_int_equal(read_err("a;b 18446744073709551609\na;b 10\n", &bad), -EOVERFLOW);
	assert_int_equal(bad, 2);
	assert_int_equal(read_err("a;b 18446744073709551609\nc 6\nd 1\n", &bad), -EOVERFLOW);
	assert_int_equal(bad, 3);    /* the total */
	assert_int_equal(read_err("a;b 18446744073709551609\na;b 6\n", &bad), 0);
	assert_int_equal(read_err("a 18446744073709551616\n", &bad), -EBADMSG);
}

/* diff: a frame "X (inlined)" is X; stacks that become one are summed. */
static void test_merge_inlined(void **state)
{
	struct fg_folded *a = read_str("main;helper 10\nmain 1\n");
	struct fg_folded *b = read_str("main;helper (inlined) 7\nmain;helper 2\n"
				       "main;g (inlined);helper (inlined):3,avg:1 4\n"
				       "main; (inlined) 1\n");
	char *out;
	(void)state;

	assert_int_equal(fg_folded_merge_inlined(a), 0);
	assert_int_equal(fg_folded_merge_inlined(b), 0);
	assert_int_equal(fg_folded_count(b), 3);
	assert_int_equal(fg_folded_total(b), 14);
	out = diff_str(a, b, false);
	assert_string_equal(out, "main 1 0\nmain; (inlined) 0 1\nmain;g;helper 0 4\n"
			    "main;helper 10 9\n");
	free(out);
	assert_int_equal(fg_frame_uninlined_len("f (inlined)", 11), 1);
	assert_int_equal(fg_frame_uninlined_len(" (inlined)", 10), 10);
	assert_int_equal(fg_frame_uninlined_len("f(inlined)", 10), 10);
	fg_folded_free(a);
	fg_folded_free(b);
}

/* The notes on a diff's pair (flamegraph/diff_note.c): which fire. */
static unsigned notes_of(const char *ta, const char *tb, char *const *ca, size_t na,
			 char *const *cb, size_t nb, char *buf, size_t n)
{
	struct fg_folded *a = read_str(ta), *b = read_str(tb);
	FILE *f = fmemopen(buf, n, "w");
	unsigned r;

	assert_non_null(f);
	r = fg_diff_note_inputs(f,
		&(struct fg_diff_side){ .path = "a.folded", .folded = a, .comms = ca, .ncomms = na },
		&(struct fg_diff_side){ .path = "b.folded", .folded = b, .comms = cb, .ncomms = nb },
		false);
	fclose(f);
	fg_folded_free(a);
	fg_folded_free(b);
	return r;
}

static void test_note_inputs(void **state)
{
	char buf[1024];
	char *c1[] = { "prog" }, *c2[] = { "other" };
	bool a_has;

	(void)state;
	memset(buf, 0, sizeof(buf));
	assert_int_equal(notes_of("main;foo 10\n", "main;bar 5\n", NULL, 0, NULL, 0,
				  buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	/* no function in common ([pseudo] frames do not count) */
	memset(buf, 0, sizeof(buf));
	assert_int_equal(notes_of("[off-cpu];foo 10\n", "[off-cpu];bar 5\n", NULL, 0, NULL, 0,
				  buf, sizeof(buf)), FG_DIFF_NOTE_NO_FUNCTION);
	assert_string_equal(buf, "ptflame diff: note: A (a.folded) and B (b.folded) share no "
			    "function: are they runs of the same program?\n");
	/* only pseudo frames in A: nothing to share, no note */
	memset(buf, 0, sizeof(buf));
	assert_int_equal(notes_of("[off-cpu] 10\n", "bar 5\n", NULL, 0, NULL, 0,
				  buf, sizeof(buf)), 0);
	/* X (inlined) merged into X shares X */
	{
		struct fg_folded *a = read_str("main;foo (inlined) 3\n"), *b = read_str("foo 1\n");

		assert_int_equal(fg_folded_merge_inlined(a), 0);
		assert_true(fg_diff_shares_function(&(struct fg_diff_side){ .folded = a },
						    &(struct fg_diff_side){ .folded = b }, &a_has));
		assert_true(a_has);
		fg_folded_free(a);
		fg_folded_free(b);
	}
	/* different comms */
	memset(buf, 0, sizeof(buf));
	assert_int_equal(notes_of("main 1\n", "main 2\n", c1, 1, c2, 1, buf, sizeof(buf)),
			 FG_DIFF_NOTE_NO_COMM);
	assert_string_equal(buf, "ptflame diff: note: A ran 'prog' and B ran 'other' (comm): "
			    "different programs, is this the diff meant?\n");
	/* an empty side: that note only */
	memset(buf, 0, sizeof(buf));
	assert_int_equal(notes_of("", "foo 1\n", NULL, 0, NULL, 0, buf, sizeof(buf)),
			 FG_DIFF_NOTE_A_EMPTY);
	assert_string_equal(buf, "ptflame diff: note: A (a.folded) has no stacks: an empty profile\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_plain_and_annotated),
		cmocka_unit_test(test_read_bad),
		cmocka_unit_test(test_diff_self_is_zero),
		cmocka_unit_test(test_diff_union),
		cmocka_unit_test(test_diff_random_union),
		cmocka_unit_test(test_read_mangled),
		cmocka_unit_test(test_read_sum_overflow),
		cmocka_unit_test(test_merge_inlined),
		cmocka_unit_test(test_note_inputs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
