/* Unit tests: folded stacks -> SVG flame graph. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <math.h>
#include <cmocka.h>

#include "flamegraph/flamegraph.h"

static char *render(struct fg_svg *svg, const struct fg_svg_options *opt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(fg_svg_write(svg, f, opt), 0);
	fclose(f);
	return buf;
}

/* A plain loop: sanitizers' strstr measures the whole haystack at every
 * call, which is quadratic on the deep-stack test's 20 MB. */
static int count(const char *hay, const char *needle)
{
	size_t nl = strlen(needle);
	int n = 0;

	for (const char *p = hay; *p; p++) {
		size_t i = 0;

		while (i < nl && p[i] == needle[i])
			i++;
		if (i == nl) {
			n++;
			p += nl - 1;
		}
	}
	return n;
}

/* The width of the frame whose tooltip starts with TITLE. */
static double frame_width(const char *svg, const char *title)
{
	char key[256];
	const char *p;

	snprintf(key, sizeof(key), "<title>%s\n", title);
	p = strstr(svg, key);
	assert_non_null(p);
	p = strstr(p, "width=\"");
	assert_non_null(p);
	return strtod(p + 7, NULL);
}

static void test_tree_merges_and_scales(void **state)
{
	struct fg_svg *svg = fg_svg_new();
	struct fg_svg_options opt = { .width = 1020 };  /* 1000 px of frames */
	char *out;

	(void)state;
	assert_int_equal(fg_svg_add_line(svg, "main;a;b 300\n"), 0);
	assert_int_equal(fg_svg_add_line(svg, "main;a 100"), 0);
	assert_int_equal(fg_svg_add_line(svg, "main;c 600"), 0);
	out = render(svg, &opt);
	/* all + main + a + b + c: merged by name, one rect each. */
	assert_int_equal(count(out, "<g class=\"f\" data-"), 5);
	assert_true(frame_width(out, "main") > 999.9 && frame_width(out, "main") < 1000.1);
	assert_true(frame_width(out, "a") > 399.9 && frame_width(out, "a") < 400.1);
	assert_true(frame_width(out, "c") > 599.9 && frame_width(out, "c") < 600.1);
	assert_non_null(strstr(out, "<title>b\n300 ns (30.00%)</title>"));
	free(out);
	fg_svg_free(svg);
}

static void test_escapes_and_rejects(void **state)
{
	struct fg_svg *svg = fg_svg_new();
	char *out;

	(void)state;
	assert_int_equal(fg_svg_add_line(svg, "std::vector<int>&;x\"y 10"), 0);
	assert_int_equal(fg_svg_add_line(svg, "no value here"), -EINVAL);
	assert_int_equal(fg_svg_add_line(svg, "a;b 12x"), -EINVAL);
	assert_int_equal(fg_svg_add_line(svg, "42"), -EINVAL);
	out = render(svg, NULL);
	assert_non_null(strstr(out, "std::vector&lt;int&gt;&amp;"));
	assert_non_null(strstr(out, "x&quot;y"));
	assert_null(strstr(out, "<int>"));
	free(out);
	fg_svg_free(svg);
}

static void test_tiny_frames_are_omitted(void **state)
{
	struct fg_svg *svg = fg_svg_new();
	char *out;

	(void)state;
	assert_int_equal(fg_svg_add(svg, "big", 1000000), 0);
	assert_int_equal(fg_svg_add(svg, "tiny", 1), 0);
	out = render(svg, NULL);
	assert_non_null(strstr(out, "<title>big\n"));
	assert_null(strstr(out, "<title>tiny\n"));
	free(out);
	fg_svg_free(svg);
}

/* The frame element whose tooltip starts with TITLE (its "<g" start). */
static const char *frame_of(const char *svg, const char *title)
{
	char key[256];
	const char *p;

	snprintf(key, sizeof(key), "<title>%s\n", title);
	p = strstr(svg, key);
	assert_non_null(p);
	while (p > svg && strncmp(p, "<g ", 3))
		p--;
	return p;
}

static double attr(const char *from, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), " %s=\"", name);
	p = strstr(from, key);
	assert_non_null(p);
	return strtod(p + strlen(key), NULL);
}

static void fill_of(const char *svg, const char *title, unsigned rgb[3])
{
	const char *p = strstr(frame_of(svg, title), "fill=\"rgb(");

	assert_non_null(p);
	assert_int_equal(sscanf(p, "fill=\"rgb(%u,%u,%u)", &rgb[0], &rgb[1], &rgb[2]), 3);
}

static double distance(const unsigned a[3], const unsigned b[3])
{
	double d = 0;

	for (int i = 0; i < 3; i++)
		d += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
	return sqrt(d);
}

/* The label text of the frame titled TITLE (between <text ...> and </text>). */
static void label_of(const char *svg, const char *title, char *buf, size_t n)
{
	const char *p = strstr(frame_of(svg, title), "<text ");
	const char *e;

	assert_non_null(p);
	p = strchr(p, '>') + 1;
	e = strstr(p, "</text>");
	snprintf(buf, n, "%.*s", (int)(e - p), p);
}

/* Labels never run past their frame: a cut label with its ".." fits the
 * frame's width less the 3 px margins, at the font's character width. */
static void test_labels_fit(void **state)
{
	struct fg_svg_options opt = { .width = 1020 };   /* 1 px per value unit */
	const char *name = "a_rather_long_function_name_that_cannot_fit_in_a_small_box";
	char label[256], *out;
	(void)state;

	for (int w = 1; w <= 500; w += 3) {
		struct fg_svg *svg = fg_svg_new();
		double px;
		size_t chars;

		assert_int_equal(fg_svg_add(svg, name, (uint64_t)w), 0);
		assert_int_equal(fg_svg_add(svg, "rest", 1000 - (uint64_t)w), 0);
		out = render(svg, &opt);
		px = frame_width(out, name);
		label_of(out, name, label, sizeof(label));
		chars = strlen(label);
		assert_true(chars == 0 || fg_svg_text_width(chars) <= px - 6 + 1e-9);
		if (chars && chars < strlen(name)) {
			/* the name's start, cut with "..", as long as fits */
			assert_true(chars >= 3);
			assert_int_equal(strncmp(label, name, chars - 2), 0);
			assert_string_equal(label + chars - 2, "..");
			assert_true(fg_svg_text_width(chars + 1) > px - 6);
		} else if (chars) {
			assert_string_equal(label, name);
		} else {
			assert_true(fg_svg_text_width(3) > px - 6);
		}
		label_of(out, "rest", label, sizeof(label));
		assert_string_equal(label, "rest");
		free(out);
		fg_svg_free(svg);
	}
}

/* Each pseudo-frame kind has its own colour family, far from on-CPU code
 * and from each other; names differing after "std::" differ in colour. */
static void test_kind_colours_and_legend(void **state)
{
	static const char *const kinds[] = {
		"[kernel]", "[off-cpu]", "[preempted]", "[lost]", "[unknown]", "[untraced]",
	};
	struct fg_svg *svg = fg_svg_new();
	unsigned c[8][3], code[3], k2[3], s1[3], s2[3];
	char stack[64], *out;
	(void)state;

	for (size_t i = 0; i < 6; i++) {
		snprintf(stack, sizeof(stack), "main;%s", kinds[i]);
		assert_int_equal(fg_svg_add(svg, stack, 100), 0);
	}
	assert_int_equal(fg_svg_add(svg, "main;[kernel] write:3,avg:20", 100), 0);
	assert_int_equal(fg_svg_add(svg, "main;std::vector<int>::push_back", 100), 0);
	assert_int_equal(fg_svg_add(svg, "main;std::map<int, int>::find", 100), 0);
	out = render(svg, NULL);
	fill_of(out, "main", code);
	for (size_t i = 0; i < 6; i++) {
		fill_of(out, kinds[i], c[i]);
		assert_true(distance(c[i], code) > 60);
		for (size_t j = 0; j < i; j++)
			assert_true(distance(c[i], c[j]) > 60);
	}
	/* "[kernel] write" is a kernel frame too */
	fill_of(out, "[kernel] write", k2);
	assert_true(distance(k2, c[0]) < 60);
	fill_of(out, "std::vector&lt;int&gt;::push_back", s1);
	fill_of(out, "std::map&lt;int, int&gt;::find", s2);
	assert_true(distance(s1, s2) > 0);
	/* the legend names each kind present */
	{
		const char *lg = strstr(out, "<g id=\"legend\">");

		assert_non_null(lg);
		assert_non_null(strstr(lg, ">on-CPU code<"));
		for (size_t i = 0; i < 6; i++) {
			snprintf(stack, sizeof(stack), ">%s<", kinds[i]);
			assert_non_null(strstr(lg, stack));
		}
	}
	free(out);
	fg_svg_free(svg);

	/* only kinds present are in the legend */
	svg = fg_svg_new();
	assert_int_equal(fg_svg_add(svg, "main;work", 100), 0);
	out = render(svg, NULL);
	assert_non_null(strstr(out, ">on-CPU code<"));
	assert_null(strstr(strstr(out, "<g id=\"legend\">"), ">[kernel]<"));
	free(out);
	fg_svg_free(svg);
}

/* Tooltips keep the annotation's calls and average; labels and the
 * script's name (the title's first line) are the plain name. */
static void test_annotated_tooltip(void **state)
{
	struct fg_svg *svg = fg_svg_new();
	char label[128], *out;
	(void)state;

	assert_int_equal(fg_svg_add_line(svg, "main:1(inferred);work:12,avg:1534 18408"), 0);
	out = render(svg, NULL);
	assert_non_null(strstr(out, "<title>work\n18.408 µs (100.00%)\n12 calls, avg 1.534 µs</title>"));
	assert_non_null(strstr(out, "<title>main\n18.408 µs (100.00%)\n1 call (inferred"));
	label_of(out, "work", label, sizeof(label));
	assert_string_equal(label, "work");
	free(out);
	fg_svg_free(svg);
}

/* Flame graph: root at the bottom; icicle (--inverted): at the top. The
 * script and the zoom/search controls are embedded; options show. */
static void test_inverted_title_script(void **state)
{
	struct fg_svg *svg = fg_svg_new();
	struct fg_svg_options opt = { .title = "T<1>", .width = 800 };
	char *out;
	(void)state;

	assert_int_equal(fg_svg_add(svg, "main;work", 100), 0);
	out = render(svg, &opt);
	assert_true(attr(frame_of(out, "all"), "y") > attr(frame_of(out, "main"), "y"));
	assert_true(attr(frame_of(out, "main"), "y") > attr(frame_of(out, "work"), "y"));
	assert_non_null(strstr(out, ">T&lt;1&gt;</text>"));
	assert_non_null(strstr(out, "width=\"800\""));
	assert_non_null(strstr(out, "<script type=\"text/ecmascript\"><![CDATA["));
	assert_non_null(strstr(out, "function zoom("));
	assert_non_null(strstr(out, "id=\"unzoom\""));
	assert_non_null(strstr(out, "id=\"search\""));
	assert_non_null(strstr(out, "id=\"matched\""));
	/* frames carry value offsets and levels for the script */
	assert_non_null(strstr(frame_of(out, "work"), "data-x=\"0\" data-v=\"100\" data-l=\"2\""));
	free(out);
	opt.inverted = true;
	out = render(svg, &opt);
	assert_true(attr(frame_of(out, "all"), "y") < attr(frame_of(out, "main"), "y"));
	assert_true(attr(frame_of(out, "main"), "y") < attr(frame_of(out, "work"), "y"));
	free(out);
	fg_svg_free(svg);
}

/* Differential: B's widths, red where a frame grew, blue where it shrank,
 * near white unchanged; the tooltip has the before value and the change. */
static void test_diff_colours(void **state)
{
	struct fg_svg *svg = fg_svg_new();
	unsigned grew[3], shrank[3], same[3], main_c[3];
	char *out;
	(void)state;

	assert_int_equal(fg_svg_add_diff(svg, "main;grew", 100, 300), 0);
	assert_int_equal(fg_svg_add_diff(svg, "main;shrank", 300, 100), 0);
	assert_int_equal(fg_svg_add_diff(svg, "main;same", 50, 50), 0);
	assert_int_equal(fg_svg_add_diff(svg, "main;gone", 40, 0), 0);
	out = render(svg, NULL);
	fill_of(out, "grew", grew);
	fill_of(out, "shrank", shrank);
	fill_of(out, "same", same);
	fill_of(out, "main", main_c);
	assert_true(grew[0] == 255 && grew[1] < 100 && grew[2] < 100);
	assert_true(shrank[2] == 255 && shrank[0] < 100 && shrank[1] < 100);
	assert_true(same[0] == same[1] && same[1] == same[2]);
	/* main: 490 -> 450, shrank a little: pale blue */
	assert_true(main_c[2] == 255 && main_c[0] > shrank[0]);
	assert_null(strstr(out, "<title>gone\n"));
	assert_non_null(strstr(out, "<title>grew\n300 ns (66.67%)\nbefore 100 ns, change +200 ns (+200.00%)"));
	assert_non_null(strstr(out, "Differential Flame Graph"));
	assert_non_null(strstr(out, ">grew (after &gt; before)<"));
	free(out);
	fg_svg_free(svg);
}

/* Names are text in XML: bytes that are not UTF-8 become '?', valid UTF-8
 * stays, and a cut label never splits a character. */
static void test_utf8(void **state)
{
	struct fg_svg *svg = fg_svg_new();
	char *out;
	(void)state;

	assert_int_equal(fg_svg_add(svg, "caf\xc3\xa9;bad\xff\xc3", 10), 0);
	out = render(svg, NULL);
	assert_non_null(strstr(out, "<title>caf\xc3\xa9\n"));
	assert_non_null(strstr(out, "<title>bad??\n"));
	assert_null(strstr(out, "\xff"));
	free(out);
	fg_svg_free(svg);
}

/* A very deep stack (deep recursion in the traced program) is drawn and
 * freed without deep recursion here. */
static void test_deep_stack(void **state)
{
	enum { DEPTH = 100000 };
	struct fg_svg *svg = fg_svg_new();
	char *stack = malloc(DEPTH * 2), *out = NULL;
	size_t len = 0;
	FILE *f;
	(void)state;

	for (int i = 0; i < DEPTH; i++) {
		stack[2 * i] = 'f';
		stack[2 * i + 1] = ';';
	}
	stack[DEPTH * 2 - 1] = '\0';
	assert_int_equal(fg_svg_add(svg, stack, 1000), 0);
	f = open_memstream(&out, &len);
	assert_int_equal(fg_svg_write(svg, f, NULL), 0);
	fclose(f);
	assert_int_equal(count(out, "<g class=\"f\" data-"), DEPTH + 1);
	free(out);
	free(stack);
	fg_svg_free(svg);
}

static struct fg_folded *folded(const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct fg_folded *out = NULL;

	assert_non_null(f);
	assert_int_equal(fg_folded_read(f, &out, NULL), 0);
	fclose(f);
	return out;
}

/* fg_diff_svg: the union of both runs' stacks (annotations dropped), B's
 * widths, A scaled to B's total with normalize (as the 3 columns are). */
static void test_diff_svg_from_folded(void **state)
{
	struct fg_folded *a = folded("main:1,avg:400;work:4,avg:50 200\nmain:1,avg:400;gone 200\n");
	struct fg_folded *b = folded("main;work 600\nmain;new 200\n");
	char *out = NULL;
	size_t len = 0;
	FILE *f;
	unsigned rgb[3];
	(void)state;

	f = open_memstream(&out, &len);
	assert_int_equal(fg_diff_svg(f, a, b, false, NULL), 0);
	fclose(f);
	assert_non_null(strstr(out, "<title>work\n600 ns (75.00%)\nbefore 200 ns, change +400 ns (+200.00%)"));
	assert_non_null(strstr(out, "<title>new\n200 ns (25.00%)\nbefore 0 ns, change +200 ns (new)"));
	assert_null(strstr(out, "<title>gone\n"));
	fill_of(out, "work", rgb);
	assert_true(rgb[0] == 255 && rgb[1] < 100);
	free(out);
	/* normalize: A (400) scaled to B's total (800): work 400 -> 600 */
	f = open_memstream(&out, &len);
	assert_int_equal(fg_diff_svg(f, a, b, true, NULL), 0);
	fclose(f);
	assert_non_null(strstr(out, "<title>work\n600 ns (75.00%)\nbefore 400 ns, change +200 ns (+50.00%)"));
	free(out);
	fg_folded_free(a);
	fg_folded_free(b);
}

/* No stacks at all: still a whole SVG, the "all" frame and no legend. */
static void test_empty(void **state)
{
	struct fg_svg *svg = fg_svg_new();
	char *out;
	(void)state;

	out = render(svg, NULL);
	assert_non_null(strstr(out, "<title>all\n0 ns (0.00%)</title>"));
	assert_non_null(strstr(out, "</script>\n</svg>\n"));
	assert_null(strstr(out, ">on-CPU code<"));
	free(out);
	fg_svg_free(svg);
}

static void test_parse_minwidth(void **state)
{
	double px = 7;
	(void)state;

	assert_int_equal(fg_svg_parse_minwidth("2.5", &px), 0);
	assert_true(px == 2.5);
	assert_int_equal(fg_svg_parse_minwidth("0", &px), 0);
	assert_true(px < 0);
	assert_int_equal(fg_svg_parse_minwidth("-1", &px), -EINVAL);
	assert_int_equal(fg_svg_parse_minwidth("1px", &px), -EINVAL);
	assert_int_equal(fg_svg_parse_minwidth("", &px), -EINVAL);
	assert_int_equal(fg_svg_parse_minwidth("nan", &px), -EINVAL);
}

/* fg_svg_add_hist: the frame's tooltip gives p50/p90/p99/max from its
 * histogram and one block per log2 bucket from min to max. 10 calls of
 * 100 ns, 1 of 1000 ns: buckets [64,128) and [512,1024), 2 empty between. */
static void test_tooltip_distribution(void **state)
{
	struct fg_svg *svg = fg_svg_new();
	struct sr_hist h;
	char *s;

	(void)state;
	sr_hist_init(&h);
	assert_int_equal(sr_hist_add_n(&h, 100, 10), 0);
	assert_int_equal(sr_hist_add(&h, 1000), 0);
	assert_int_equal(fg_svg_add(svg, "main:1(inferred);f:11,avg:182", 2000), 0);
	assert_int_equal(fg_svg_add_hist(svg, "main:1(inferred);f:11,avg:182", &h), 0);
	/* a stack that gets no value is not drawn */
	assert_int_equal(fg_svg_add_hist(svg, "main:1(inferred);g:1,avg:5", &h), 0);
	s = render(svg, NULL);
	assert_non_null(strstr(s, "<title>f\n2.000 \xc2\xb5s (100.00%)\n11 calls, avg 182 ns\n"
				  "p50 100 ns, p90 100 ns, p99 1.000 \xc2\xb5s, max 1.000 \xc2\xb5s\n"
				  "100 ns \u2588\u2007\u2007\u2581 1.000 \xc2\xb5s (log2 buckets)</title>"));
	assert_null(strstr(s, "<title>g"));
	/* no distribution where none was given */
	assert_non_null(strstr(s, "<title>main\n2.000 \xc2\xb5s (100.00%)\n1 call (inferred: none seen whole)</title>"));
	free(s);
	sr_hist_free(&h);
	fg_svg_free(svg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree_merges_and_scales),
		cmocka_unit_test(test_escapes_and_rejects),
		cmocka_unit_test(test_tiny_frames_are_omitted),
		cmocka_unit_test(test_labels_fit),
		cmocka_unit_test(test_kind_colours_and_legend),
		cmocka_unit_test(test_annotated_tooltip),
		cmocka_unit_test(test_inverted_title_script),
		cmocka_unit_test(test_diff_colours),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_deep_stack),
		cmocka_unit_test(test_diff_svg_from_folded),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_parse_minwidth),
		cmocka_unit_test(test_tooltip_distribution),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
