/* Tests for flamegraph/table: per-function statistics from a CCT or a
 * folded file, and the one-run / two-run latency tables. */
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

static const char *const names[] = { NULL, "main", "work", "rec", "other", "leaf" };
enum { MAIN = 1, WORK, REC, OTHER, LEAF };

static uint64_t t_key(void *ctx, uint32_t pid, uint64_t ip)
{
	(void)ctx;
	(void)pid;
	return ip;
}

static const char *t_name(void *ctx, uint64_t key)
{
	(void)ctx;
	return key < sizeof(names) / sizeof(names[0]) ? names[key] : NULL;
}

static const struct sr_symbolizer sym = { .func_key = t_key, .name = t_name };

static struct sr_node *child(struct sr_cct *c, struct sr_node *p, uint64_t key)
{
	struct sr_node *n = sr_cct_child(c, p, SR_NODE_FUNC, key);

	assert_non_null(n);
	return n;
}

static void calls(struct sr_node *n, const uint64_t *lat, size_t k)
{
	for (size_t i = 0; i < k; i++)
		assert_int_equal(sr_node_add_call(n, true, lat[i]), 0);
}

/* main (1 inferred call)
 *   work   x3: 100, 200, 300 ns; self 600
 *   rec    x1: 5000; self 1000
 *     rec  x1: 4000; self 4000       (recursion: row total must be 5000)
 *   other  x1: 4000; self 1000
 *     work x2: 1000, 2000; self 3000
 *   self of main: 10
 */
static struct sr_cct *make_cct(uint64_t work_scale)
{
	struct sr_cct *c = sr_cct_new(&sym);
	struct sr_node *m, *w, *r1, *r2, *o, *w2;
	uint64_t lw[3] = { 100 * work_scale, 200 * work_scale, 300 * work_scale };
	uint64_t lr1 = 5000, lr2 = 4000, lo = 4000;
	uint64_t lw2[2] = { 1000, 2000 };

	assert_non_null(c);
	m = child(c, NULL, MAIN);
	assert_int_equal(sr_node_add_call(m, false, 0), 0);
	sr_node_add_time(m, SR_TIME_USER, 10);
	w = child(c, m, WORK);
	calls(w, lw, 3);
	sr_node_add_time(w, SR_TIME_USER, 600 * work_scale);
	r1 = child(c, m, REC);
	calls(r1, &lr1, 1);
	sr_node_add_time(r1, SR_TIME_USER, 1000);
	r2 = child(c, r1, REC);
	calls(r2, &lr2, 1);
	sr_node_add_time(r2, SR_TIME_USER, 4000);
	o = child(c, m, OTHER);
	calls(o, &lo, 1);
	sr_node_add_time(o, SR_TIME_USER, 1000);
	w2 = child(c, o, WORK);
	calls(w2, lw2, 2);
	sr_node_add_time(w2, SR_TIME_USER, 3000);
	sr_cct_finalize(c);
	return c;
}

static void test_stats_from_cct(void **state)
{
	struct sr_cct *c = make_cct(1);
	struct fg_stats *st;
	const struct fg_row *r;
	(void)state;

	assert_int_equal(fg_stats_from_cct(c, NULL, FG_BY_FUNCTION, &st), 0);
	assert_int_equal(fg_stats_count(st), 4);
	r = fg_stats_find(st, "work");
	assert_non_null(r);
	assert_int_equal(r->calls, 5);
	assert_int_equal(r->inferred, 0);
	assert_int_equal(r->self_ns, 3600);
	assert_int_equal(r->total_ns, 3600);
	assert_true(r->has_avg);
	assert_int_equal(r->avg_ns, 720);
	assert_true(r->has_hist);
	/* nearest rank: the 3rd of 5; the histogram's bucket is within 1 % */
	assert_in_range(sr_hist_percentile(r->hist, 50), 297, 303);
	assert_int_equal(r->hist->max, 2000);
	r = fg_stats_find(st, "rec");
	assert_int_equal(r->calls, 2);
	assert_int_equal(r->self_ns, 5000);
	assert_int_equal(r->total_ns, 5000);    /* not 5000 + 4000 */
	r = fg_stats_find(st, "main");
	assert_int_equal(r->calls, 1);
	assert_int_equal(r->inferred, 1);
	assert_false(r->has_avg);
	assert_false(r->has_hist);
	assert_int_equal(r->total_ns, 10 + 600 + 5000 + 4000);
	fg_stats_free(st);

	assert_int_equal(fg_stats_from_cct(c, NULL, FG_BY_STACK, &st), 0);
	assert_int_equal(fg_stats_count(st), 6);
	r = fg_stats_find(st, "main;other;work");
	assert_non_null(r);
	assert_int_equal(r->calls, 2);
	assert_int_equal(r->avg_ns, 1500);
	r = fg_stats_find(st, "main;rec;rec");
	assert_int_equal(r->total_ns, 4000);
	r = fg_stats_find(st, "main;rec");
	assert_int_equal(r->total_ns, 5000);
	assert_null(fg_stats_find(st, "work"));
	fg_stats_free(st);
	sr_cct_free(c);
}

static struct fg_folded *read_str(const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct fg_folded *ff = NULL;

	assert_non_null(f);
	assert_int_equal(fg_folded_read(f, &ff, NULL), 0);
	fclose(f);
	return ff;
}

static void test_stats_from_folded(void **state)
{
	/* the same tree as make_cct, folded (annotated) */
	struct fg_folded *f = read_str(
		"main:1(inferred) 10\n"
		"main:1(inferred);work:3,avg:200 600\n"
		"main:1(inferred);rec:1,avg:5000 1000\n"
		"main:1(inferred);rec:1,avg:5000;rec:1,avg:4000 4000\n"
		"main:1(inferred);other:1,avg:4000 1000\n"
		"main:1(inferred);other:1,avg:4000;work:2,avg:1500 3000\n");
	struct fg_stats *st;
	const struct fg_row *r;
	(void)state;

	assert_int_equal(fg_stats_from_folded(f, FG_BY_FUNCTION, &st), 0);
	r = fg_stats_find(st, "work");
	assert_int_equal(r->calls, 5);
	assert_int_equal(r->self_ns, 3600);
	assert_int_equal(r->total_ns, 3600);
	assert_int_equal(r->avg_ns, 720);
	assert_false(r->has_hist);
	r = fg_stats_find(st, "rec");
	assert_int_equal(r->calls, 2);
	assert_int_equal(r->total_ns, 5000);
	assert_int_equal(r->self_ns, 5000);
	r = fg_stats_find(st, "main");
	assert_int_equal(r->calls, 1);
	assert_int_equal(r->inferred, 1);
	assert_int_equal(r->total_ns, 9610);
	assert_int_equal(r->self_ns, 10);
	fg_stats_free(st);

	assert_int_equal(fg_stats_from_folded(f, FG_BY_STACK, &st), 0);
	r = fg_stats_find(st, "main;rec");
	assert_int_equal(r->total_ns, 5000);
	assert_int_equal(r->self_ns, 1000);
	assert_int_equal(r->calls, 1);
	r = fg_stats_find(st, "main;other;work");
	assert_int_equal(r->calls, 2);
	fg_stats_free(st);
	fg_folded_free(f);

	/* a plain FlameGraph file: no calls known */
	f = read_str("a;b 5\na;b;a 7\n");
	assert_int_equal(fg_stats_from_folded(f, FG_BY_FUNCTION, &st), 0);
	r = fg_stats_find(st, "a");
	assert_int_equal(r->total_ns, 12);
	assert_int_equal(r->self_ns, 7);
	assert_int_equal(r->calls, 0);
	assert_false(r->has_avg);
	fg_stats_free(st);
	fg_folded_free(f);
}

/* By stack, frames deeper than max_stack are one "[truncated]" row with
 * their time; by function every frame counts. A line of 20000 frames
 * makes at most SR_DEFAULT_MAX_STACK + 1 rows of bounded length (not
 * 20000 rows of up to 20000 frames). */
static void test_stats_from_folded_deep(void **state)
{
	struct fg_folded *f = read_str("m:1,avg:90;a:1,avg:80;b:1,avg:50;c:2,avg:10 40\n"
				       "m:1,avg:90;a:1,avg:80;b:1,avg:50 6\n"
				       "m;a;x;y 7\n");
	struct fg_stats *st;
	const struct fg_row *r;
	size_t depth = 20000, n = depth * 7 + 16, longest = 0;
	char *deep = malloc(n), *p = deep;
	(void)state;

	assert_int_equal(fg_stats_from_folded_max(f, FG_BY_STACK, 2, &st), 0);
	assert_int_equal(fg_stats_count(st), 3);
	r = fg_stats_find(st, "m;a");
	assert_int_equal(r->total_ns, 53);
	assert_int_equal(r->calls, 1);
	assert_int_equal(r->self_ns, 0);
	r = fg_stats_find(st, "m;a;[truncated]");
	assert_non_null(r);
	assert_int_equal(r->total_ns, 53);
	assert_int_equal(r->self_ns, 53);
	assert_int_equal(r->calls, 0);
	assert_null(fg_stats_find(st, "m;a;b"));
	fg_stats_free(st);
	/* deep enough: the same rows as without a bound */
	assert_int_equal(fg_stats_from_folded_max(f, FG_BY_STACK, 4, &st), 0);
	assert_null(fg_stats_find(st, "m;a;b;c;[truncated]"));
	assert_int_equal(fg_stats_find(st, "m;a;b;c")->calls, 2);
	assert_int_equal(fg_stats_find(st, "m;a;b")->self_ns, 6);
	fg_stats_free(st);
	/* by function the bound does not apply */
	assert_int_equal(fg_stats_from_folded_max(f, FG_BY_FUNCTION, 2, &st), 0);
	assert_int_equal(fg_stats_find(st, "c")->calls, 2);
	assert_int_equal(fg_stats_find(st, "y")->self_ns, 7);
	fg_stats_free(st);
	fg_folded_free(f);

	assert_non_null(deep);
	for (size_t i = 0; i < depth; i++)
		p += sprintf(p, "%sf%zu", i ? ";" : "", i % 100);
	strcpy(p, " 9\n");
	f = read_str(deep);
	assert_int_equal(fg_stats_from_folded(f, FG_BY_STACK, &st), 0);
	assert_int_equal(fg_stats_count(st), SR_DEFAULT_MAX_STACK + 1);
	for (size_t i = 0; i < fg_stats_count(st); i++) {
		size_t len = strlen(fg_stats_row(st, i)->name);

		longest = len > longest ? len : longest;
		assert_int_equal(fg_stats_row(st, i)->total_ns, 9);
	}
	assert_true(longest < SR_DEFAULT_MAX_STACK * 4 + 16);
	fg_stats_free(st);
	assert_int_equal(fg_stats_from_folded(f, FG_BY_FUNCTION, &st), 0);
	assert_int_equal(fg_stats_count(st), 100);
	fg_stats_free(st);
	fg_folded_free(f);
	free(deep);
}

static char *table_str(const struct fg_stats *a, const struct fg_stats *b,
		       const struct fg_table_options *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	assert_non_null(out);
	assert_int_equal(fg_table_write(out, a, b, o), 0);
	fclose(out);
	return buf;
}

/* The line of the table whose last column is name. */
static const char *find_line(const char *t, const char *name, char *buf, size_t n)
{
	size_t nl = strlen(name);

	for (const char *l = t; *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);

		if (len > nl + 2 && !memcmp(l + len - nl, name, nl) && l[len - nl - 1] == ' ') {
			snprintf(buf, n, "%.*s", (int)len, l);
			return buf;
		}
		l += len + (e ? 1 : 0);
	}
	return NULL;
}

/* Whitespace-separated tokens of a table line (raw mode: one per cell). */
static int tokens(char *line, char **tok, int max)
{
	int n = 0;
	char *save = NULL;

	for (char *t = strtok_r(line, " ", &save); t && n < max; t = strtok_r(NULL, " ", &save))
		tok[n++] = t;
	return n;
}

/* Columns, counting a UTF-8 sequence as one. */
static size_t dwidth(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

static void test_format_units(void **state)
{
	char b[32];
	(void)state;

	fg_format_ns(b, sizeof(b), 0);
	assert_string_equal(b, "0 ns");
	fg_format_ns(b, sizeof(b), 999);
	assert_string_equal(b, "999 ns");
	fg_format_ns(b, sizeof(b), 1500);
	assert_string_equal(b, "1.500 µs");
	fg_format_ns(b, sizeof(b), 2345678);
	assert_string_equal(b, "2.346 ms");
	fg_format_ns(b, sizeof(b), 12000000000ull);
	assert_string_equal(b, "12.000 s");
}

static void test_table_one_run(void **state)
{
	struct sr_cct *c = make_cct(1);
	struct fg_stats *st;
	struct fg_table_options o = { 0 };
	char *t, line[512];
	const char *first;
	(void)state;

	assert_int_equal(fg_stats_from_cct(c, NULL, FG_BY_FUNCTION, &st), 0);
	t = table_str(st, NULL, &o);
	/* header, rule, then rows by total: main 9.610 µs first */
	assert_non_null(strstr(t, "Calls"));
	assert_non_null(strstr(t, "p99"));
	first = strchr(strchr(t, '\n') + 1, '\n') + 1;
	assert_non_null(find_line(t, "main", line, sizeof(line)));
	assert_ptr_equal(strstr(first, "main"), strstr(t, "main"));
	assert_non_null(strstr(line, "9.610 µs"));
	/* main has only an inferred call: no avg or percentiles */
	assert_non_null(strstr(line, " - "));
	assert_non_null(find_line(t, "work", line, sizeof(line)));
	assert_non_null(strstr(line, "720 ns"));     /* avg */
	{
		const struct fg_row *w = fg_stats_find(st, "work");
		char p50[32];

		snprintf(p50, sizeof(p50), " %llu ns ",
			 (unsigned long long)sr_hist_percentile(w->hist, 50));
		assert_non_null(strstr(line, p50));      /* p50 from the histogram */
	}
	assert_non_null(strstr(line, "2.000 µs"));   /* p99 and max */
	/* columns aligned: every row line as wide as the rule line */
	{
		const char *rule = strchr(t, '\n') + 1;
		size_t rw = (size_t)(strchr(rule, '\n') - rule);
		char l2[512];

		assert_non_null(find_line(t, "rec", l2, sizeof(l2)));
		assert_non_null(strstr(l2, "µs"));
		assert_int_equal(dwidth(l2) - strlen("rec") + strlen("========"), rw);
	}
	free(t);

	/* --sort self --top 1: rec (5000 self) alone */
	o.sort = FG_SORT_SELF;
	o.top = 1;
	t = table_str(st, NULL, &o);
	assert_non_null(find_line(t, "rec", line, sizeof(line)));
	assert_null(find_line(t, "work", line, sizeof(line)));
	assert_null(find_line(t, "main", line, sizeof(line)));
	free(t);

	/* --raw: plain ns */
	o.top = 0;
	o.raw = true;
	t = table_str(st, NULL, &o);
	assert_non_null(find_line(t, "main", line, sizeof(line)));
	assert_non_null(strstr(line, " 9610 "));
	assert_null(strstr(t, "µs"));
	free(t);
	fg_stats_free(st);
	sr_cct_free(c);
}

static void test_table_self_diff_zero(void **state)
{
	struct sr_cct *c = make_cct(1);
	struct fg_stats *st;
	char *t;
	(void)state;

	assert_int_equal(fg_stats_from_cct(c, NULL, FG_BY_FUNCTION, &st), 0);
	t = table_str(st, st, &(struct fg_table_options){ .raw = true });
	/* every change cell is 0 (or - where unknown): no signed value */
	{
		const char *l = strchr(strchr(strchr(t, '\n') + 1, '\n') + 1, '\n') + 1;
		int rows = 0;

		for (; *l; l = strchr(l, '\n') + 1, rows++) {
			char line[1024], *tok[64];
			int n;

			snprintf(line, sizeof(line), "%.*s", (int)(strchr(l, '\n') - l), l);
			n = tokens(line, tok, 64);
			/* total A B change %, avg A B, calls A B, the name */
			assert_int_equal(n, 9);
			assert_true(!strcmp(tok[2], "0") || !strcmp(tok[2], "-"));
			assert_true(!strcmp(tok[3], "0%") || !strcmp(tok[3], "-"));
			assert_string_equal(tok[0], tok[1]);
			assert_string_equal(tok[4], tok[5]);
			assert_string_equal(tok[6], tok[7]);
		}
		assert_int_equal(rows, 4);
	}
	free(t);
	fg_stats_free(st);
	sr_cct_free(c);
}

/* Two runs: `work` got 10x slower in its first context. */
static void test_table_two_runs(void **state)
{
	struct sr_cct *ca = make_cct(1), *cb = make_cct(10);
	struct fg_stats *a, *b;
	struct fg_table_options o = { .sort = FG_SORT_SELF, .raw = true };
	char *t, line[1024];
	const char *first;
	(void)state;

	assert_int_equal(fg_stats_from_cct(ca, NULL, FG_BY_FUNCTION, &a), 0);
	assert_int_equal(fg_stats_from_cct(cb, NULL, FG_BY_FUNCTION, &b), 0);
	t = table_str(a, b, &o);
	/* two header lines and a rule, then work first */
	first = strchr(strchr(strchr(t, '\n') + 1, '\n') + 1, '\n') + 1;
	assert_ptr_equal(strstr(first, "work"), strstr(t, "work"));
	assert_non_null(find_line(t, "work", line, sizeof(line)));
	{
		char *tok[64];

		/* self A B change %, total A B, avg A B, the name */
		assert_int_equal(tokens(line, tok, 64), 9);
		/* self 3600 -> 9000; avg 720 -> (1000+2000+3000+1000+2000)/5 */
		assert_string_equal(tok[0], "3600");
		assert_string_equal(tok[1], "9000");
		assert_string_equal(tok[2], "+5400");
		assert_string_equal(tok[3], "+150.0%");
		assert_string_equal(tok[6], "720");
		assert_string_equal(tok[7], "1800");
	}
	free(t);

	/* sort by calls: nothing changed, ties by name */
	o.sort = FG_SORT_CALLS;
	t = table_str(a, b, &o);
	first = strchr(strchr(strchr(t, '\n') + 1, '\n') + 1, '\n') + 1;
	assert_true(strstr(first, "main") < strstr(first, "other"));
	free(t);
	fg_stats_free(a);
	fg_stats_free(b);
	sr_cct_free(ca);
	sr_cct_free(cb);
}

/* A function in one run only is zero in the other. */
static void test_table_missing_side(void **state)
{
	struct fg_folded *fa = read_str("m:1,avg:50;x:2,avg:10 20\n");
	struct fg_folded *fb = read_str("m:1,avg:90;y:4,avg:15 60\n");
	struct fg_stats *a, *b;
	struct fg_table_options o = { .raw = true };
	char *t, line[1024];
	(void)state;

	assert_int_equal(fg_stats_from_folded(fa, FG_BY_FUNCTION, &a), 0);
	assert_int_equal(fg_stats_from_folded(fb, FG_BY_FUNCTION, &b), 0);
	t = table_str(a, b, &o);
	{
		char *tok[64];

		/* total A B change %, avg A B, calls A B, the name */
		assert_non_null(find_line(t, "x", line, sizeof(line)));
		assert_int_equal(tokens(line, tok, 64), 9);
		assert_string_equal(tok[0], "20");
		assert_string_equal(tok[1], "0");
		assert_string_equal(tok[2], "-20");
		assert_string_equal(tok[3], "-100.0%");
		assert_string_equal(tok[4], "10");      /* avg: unknown in B */
		assert_string_equal(tok[5], "-");
		assert_string_equal(tok[6], "2");       /* calls */
		assert_string_equal(tok[7], "0");
		assert_non_null(find_line(t, "y", line, sizeof(line)));
		assert_int_equal(tokens(line, tok, 64), 9);
		assert_string_equal(tok[0], "0");
		assert_string_equal(tok[1], "60");
		assert_string_equal(tok[3], "new");
		assert_string_equal(tok[6], "0");
		assert_string_equal(tok[7], "4");
	}
	/* folded inputs: percentiles unknown, and said so */
	assert_non_null(strstr(t, "# p50/p90/p99/max"));
	/* sort by total change: y (+60), m (+40), x (-20) */
	assert_true(strstr(t, "  y\n") < strstr(t, "  m\n"));
	assert_true(strstr(t, "  m\n") < strstr(t, "  x\n"));
	free(t);
	fg_stats_free(a);
	fg_stats_free(b);
	fg_folded_free(fa);
	fg_folded_free(fb);
}

/* The two-run table fits 120 columns: with the widest times (under
 * 1000 s), changes, percentages and counts below 10^10, the numbers take
 * at most 92 columns, so a name of 28 fits; each sort key's table has its
 * change in percent. */
static void test_table_two_runs_fit_120(void **state)
{
	struct fg_folded *fa = read_str("a_function_named_28_chars_ok:9999999999,avg:999999999999 999999999999\n"
					"small:1,avg:1 1\n");
	struct fg_folded *fb = read_str("a_function_named_28_chars_ok:1,avg:1 1\n"
					"small:9999999999,avg:999888777666 999888777666\n");
	struct fg_stats *a, *b;
	enum fg_sort keys[] = { FG_SORT_TOTAL, FG_SORT_SELF, FG_SORT_AVG, FG_SORT_P99,
				FG_SORT_CALLS };
	(void)state;

	assert_int_equal(fg_stats_from_folded(fa, FG_BY_FUNCTION, &a), 0);
	assert_int_equal(fg_stats_from_folded(fb, FG_BY_FUNCTION, &b), 0);
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		char *t = table_str(a, b, &(struct fg_table_options){ .sort = keys[k] });
		size_t lines = 0;

		for (const char *l = t; *l && *l != '#'; l = strchr(l, '\n') + 1, lines++) {
			char line[512];

			snprintf(line, sizeof(line), "%.*s", (int)(strchr(l, '\n') - l), l);
			assert_true(dwidth(line) <= 120);
		}
		assert_int_equal(lines, 5);     /* two header lines, the rule, 2 rows */
		assert_non_null(strstr(t, " % "));
		if (keys[k] != FG_SORT_P99) {   /* folded: no percentiles */
			assert_non_null(strstr(t, "-100.0%"));  /* 1000 s -> 1 ns */
			assert_non_null(strstr(t, ">+99999%")); /* 1 ns -> 999.889 s */
		}
		free(t);
	}
	fg_stats_free(a);
	fg_stats_free(b);
	fg_folded_free(fa);
	fg_folded_free(fb);
}

/* Percentiles come from the merged histograms: within 1% of the exact
 * nearest-rank percentiles of the individual calls. */
static void test_percentiles_from_hist(void **state)
{
	struct sr_cct *c = sr_cct_new(&sym);
	struct sr_node *m = child(c, NULL, MAIN), *w1 = child(c, m, WORK);
	struct sr_node *o = child(c, m, OTHER), *w2 = child(c, o, WORK);
	uint64_t vals[2000];
	struct fg_stats *st;
	const struct fg_row *r;
	unsigned seed = 7;
	(void)state;

	for (int i = 0; i < 2000; i++) {
		seed = seed * 1103515245 + 12345;
		vals[i] = 1000 + (seed >> 8) % 5000000;
		assert_int_equal(sr_node_add_call(i % 3 ? w1 : w2, true, vals[i]), 0);
	}
	sr_cct_finalize(c);
	assert_int_equal(fg_stats_from_cct(c, NULL, FG_BY_FUNCTION, &st), 0);
	r = fg_stats_find(st, "work");
	assert_int_equal(r->calls, 2000);
	/* exact nearest-rank percentiles */
	for (int i = 1; i < 2000; i++)
		for (int j = i; j > 0 && vals[j - 1] > vals[j]; j--) {
			uint64_t x = vals[j];

			vals[j] = vals[j - 1];
			vals[j - 1] = x;
		}
	{
		const double ps[] = { 50, 90, 99 };
		const int ranks[] = { 1000, 1800, 1980 };

		for (int k = 0; k < 3; k++) {
			double got = (double)sr_hist_percentile(r->hist, ps[k]);
			double want = (double)vals[ranks[k] - 1];

			assert_true(got >= want * 0.99 && got <= want * 1.01);
		}
	}
	assert_int_equal(r->hist->max, vals[1999]);
	fg_stats_free(st);
	sr_cct_free(c);
}

/* Thread root frames are no rows but stay in call paths; pseudo-frames are
 * rows like functions. */
static void test_stats_thread_and_pseudo(void **state)
{
	struct sr_cct *c = sr_cct_new(&sym);
	struct sr_node *th = sr_cct_child(c, NULL, SR_NODE_THREAD, 42);
	struct sr_node *m = child(c, th, MAIN);
	struct sr_node *off = sr_cct_child(c, m, SR_NODE_OFFCPU, 0);
	struct fg_stats *st;
	const struct fg_row *r;
	char path[128];
	(void)state;

	assert_non_null(th);
	assert_non_null(off);
	assert_int_equal(sr_node_add_call(m, true, 700), 0);
	sr_node_add_time(m, SR_TIME_USER, 200);
	sr_node_add_time(off, SR_TIME_OFFCPU, 500);
	sr_cct_finalize(c);
	assert_int_equal(fg_stats_from_cct(c, NULL, FG_BY_FUNCTION, &st), 0);
	assert_int_equal(fg_stats_count(st), 2);
	r = fg_stats_find(st, "[off-cpu]");
	assert_non_null(r);
	assert_int_equal(r->self_ns, 500);
	assert_int_equal(fg_stats_find(st, "main")->total_ns, 700);
	fg_stats_free(st);
	assert_int_equal(fg_stats_from_cct(c, NULL, FG_BY_STACK, &st), 0);
	snprintf(path, sizeof(path), "%s;main;[off-cpu]", sr_cct_name(c, th, NULL));
	r = fg_stats_find(st, path);
	assert_non_null(r);
	assert_int_equal(r->total_ns, 500);
	assert_null(fg_stats_find(st, sr_cct_name(c, th, NULL)));
	fg_stats_free(st);
	sr_cct_free(c);
}

static void test_sort_parse(void **state)
{
	enum fg_sort s;
	(void)state;

	assert_true(fg_sort_parse("p99", &s));
	assert_int_equal(s, FG_SORT_P99);
	assert_true(fg_sort_parse("calls", &s));
	assert_int_equal(s, FG_SORT_CALLS);
	assert_false(fg_sort_parse("p98", &s));
}

/* FG_STATS_INLINED_AS_FUNC: "X (inlined)" is a row X; two contexts that
 * differ only in inlining each count their calls. */
static void test_stats_inlined_as_func(void **state)
{
	struct fg_folded *f = read_str(
		"main:1(inferred);helper:3,avg:100 300\n"
		"main:1(inferred);helper (inlined):3,avg:100 300\n"
		"main:1(inferred);caller:1,avg:50;helper (inlined):2,avg:10 20\n");
	struct fg_stats *st;
	const struct fg_row *r;
	(void)state;

	assert_int_equal(fg_stats_from_folded_flags(f, FG_BY_FUNCTION, 0, FG_STATS_INLINED_AS_FUNC,
						    &st), 0);
	assert_null(fg_stats_find(st, "helper (inlined)"));
	r = fg_stats_find(st, "helper");
	assert_non_null(r);
	assert_int_equal(r->calls, 8);
	assert_int_equal(r->total_ns, 620);
	assert_int_equal(r->self_ns, 620);
	fg_stats_free(st);
	assert_int_equal(fg_stats_from_folded_flags(f, FG_BY_STACK, 0, FG_STATS_INLINED_AS_FUNC,
						    &st), 0);
	r = fg_stats_find(st, "main;helper");
	assert_non_null(r);
	assert_int_equal(r->calls, 6);
	assert_int_equal(r->total_ns, 600);
	assert_non_null(fg_stats_find(st, "main;caller;helper"));
	fg_stats_free(st);
	/* without the flag: two rows */
	assert_int_equal(fg_stats_from_folded(f, FG_BY_FUNCTION, &st), 0);
	assert_non_null(fg_stats_find(st, "helper (inlined)"));
	assert_int_equal(fg_stats_find(st, "helper")->calls, 3);
	fg_stats_free(st);
	fg_folded_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats_from_cct),
		cmocka_unit_test(test_stats_from_folded),
		cmocka_unit_test(test_format_units),
		cmocka_unit_test(test_table_one_run),
		cmocka_unit_test(test_table_self_diff_zero),
		cmocka_unit_test(test_table_two_runs),
		cmocka_unit_test(test_table_missing_side),
		cmocka_unit_test(test_table_two_runs_fit_120),
		cmocka_unit_test(test_percentiles_from_hist),
		cmocka_unit_test(test_stats_thread_and_pseudo),
		cmocka_unit_test(test_sort_parse),
		cmocka_unit_test(test_stats_from_folded_deep),
		cmocka_unit_test(test_stats_inlined_as_func),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
