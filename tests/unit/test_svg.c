/* Unit tests: folded stacks -> SVG flame graph. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "flamegraph/svg.h"

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

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The width of the frame whose tooltip starts with TITLE. */
static double frame_width(const char *svg, const char *title)
{
	char key[256];
	const char *p;

	snprintf(key, sizeof(key), "<title>%s (", title);
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
	assert_int_equal(count(out, "<rect x=") - 1 /* background */, 5);
	assert_true(frame_width(out, "main") > 999.9 && frame_width(out, "main") < 1000.1);
	assert_true(frame_width(out, "a") > 399.9 && frame_width(out, "a") < 400.1);
	assert_true(frame_width(out, "c") > 599.9 && frame_width(out, "c") < 600.1);
	assert_non_null(strstr(out, "<title>b (300 ns, 30.00%)</title>"));
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
	assert_non_null(strstr(out, "<title>big ("));
	assert_null(strstr(out, "<title>tiny ("));
	free(out);
	fg_svg_free(svg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree_merges_and_scales),
		cmocka_unit_test(test_escapes_and_rejects),
		cmocka_unit_test(test_tiny_frames_are_omitted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
