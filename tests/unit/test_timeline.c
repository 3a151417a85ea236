/* Unit tests: the --timeline writer (flamegraph/timeline.c) on calls handed
 * in by hand: JSON text, escaping, exact microseconds, filters, and the
 * same output whatever order threads' calls arrive in, with and without
 * their buffers going through the spool. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "flamegraph/flamegraph.h"

static char *render(struct fg_timeline *tl)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(fg_timeline_write(tl, f, NULL), 0);
	fclose(f);
	return buf;
}

static void call(struct fg_timeline *tl, uint32_t tid, const char *name, uint8_t kind,
		 uint64_t t0, uint64_t t1, bool complete)
{
	struct sr_node node = { .kind = kind };
	struct sr_call c = {
		.pid = 7, .tid = tid, .node = &node, .name = name, .start_ns = t0, .end_ns = t1,
		.complete = complete, .in_root = true, .selected = true,
	};

	c.by[SR_TIME_USER] = t1 - t0;
	if (kind == SR_NODE_OFFCPU) {
		c.by[SR_TIME_USER] = 0;
		c.by[SR_TIME_OFFCPU] = t1 - t0;
	}
	assert_int_equal(fg_timeline_call(tl, &c), 0);
}

static void test_text(void **state)
{
	FILE *spool = tmpfile();
	struct fg_timeline *tl = fg_timeline_new(spool, NULL);
	char *s;

	(void)state;
	call(tl, 8, "b", SR_NODE_FUNC, 1001234, 1001240, true);
	call(tl, 8, "[off-cpu]", SR_NODE_OFFCPU, 1001250, 1002000, true);
	call(tl, 8, "a\"q\\\n\xc3", SR_NODE_FUNC, 999, 1002001, false);
	s = render(tl);
	assert_string_equal(s,
		"{\"displayTimeUnit\":\"ns\",\"traceEvents\":["
		"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":7,\"tid\":7,\"args\":{\"name\":\"pid 7\"}},\n"
		"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":7,\"tid\":8,\"args\":{\"name\":\"tid 8\"}},\n"
		"{\"ph\":\"X\",\"name\":\"b\",\"cat\":\"call\",\"pid\":7,\"tid\":8,\"ts\":1001.234,\"dur\":0.006},\n"
		"{\"ph\":\"X\",\"name\":\"[off-cpu]\",\"cat\":\"off-cpu\",\"pid\":7,\"tid\":8,\"ts\":1001.250,\"dur\":0.750},\n"
		"{\"ph\":\"X\",\"name\":\"a\\\"q\\\\\\u000a\\u00c3\",\"cat\":\"call\",\"pid\":7,\"tid\":8,"
		"\"ts\":0.999,\"dur\":1001.002,\"args\":{\"inferred\":1}}\n]}\n");
	assert_int_equal(fg_timeline_events(tl), 3);
	free(s);
	fg_timeline_free(tl);
	fclose(spool);
}

static void test_filters(void **state)
{
	struct fg_timeline_options o = { .min_ns = 10, .keep_time = SR_KEEP_OFFCPU };
	FILE *spool = tmpfile();
	struct fg_timeline *tl = fg_timeline_new(spool, &o);
	char *s;

	(void)state;
	call(tl, 8, "short", SR_NODE_OFFCPU, 0, 9, true);
	call(tl, 8, "oncpu", SR_NODE_FUNC, 0, 100, true);
	call(tl, 8, "[off-cpu]", SR_NODE_OFFCPU, 0, 100, true);
	/* a span of a kept kind stays even when its split has no time of a
	 * kept kind (call() puts a [preempted]'s time under user) */
	call(tl, 8, "[preempted] zero", SR_NODE_PREEMPT, 50, 50 + 10, true);
	s = render(tl);
	assert_null(strstr(s, "short"));
	assert_null(strstr(s, "oncpu"));
	assert_non_null(strstr(s, "[off-cpu]"));
	assert_non_null(strstr(s, "[preempted] zero"));
	assert_int_equal(fg_timeline_events(tl), 2);
	free(s);
	fg_timeline_free(tl);
	fclose(spool);
}

/* Many calls of three threads, handed in interleaved two different ways:
 * the same text, threads by tid, each in its own order, and the spool used
 * (more than FG_TIMELINE_BUF per thread). */
static char *many(int order)
{
	FILE *spool = tmpfile();
	struct fg_timeline *tl = fg_timeline_new(spool, NULL);
	static const uint32_t tids[3] = { 30, 10, 20 };
	char name[32], *s;

	for (int i = 0; i < 3000; i++) {
		int k = order ? 2 - i % 3 : i % 3;

		snprintf(name, sizeof(name), "f%d", i / 3);
		call(tl, tids[k], name, SR_NODE_FUNC, (uint64_t)(i / 3) * 1000,
		     (uint64_t)(i / 3) * 1000 + 7, true);
	}
	s = render(tl);
	fg_timeline_free(tl);
	fclose(spool);
	return s;
}

static void test_deterministic_and_spooled(void **state)
{
	char *a = many(0), *b = many(1);
	const char *t10, *t20, *t30;

	(void)state;
	assert_true(strlen(a) > 3 * FG_TIMELINE_BUF);
	t10 = strstr(a, "\"tid\":10,\"ts\"");
	t20 = strstr(a, "\"tid\":20,\"ts\"");
	t30 = strstr(a, "\"tid\":30,\"ts\"");
	assert_true(t10 && t20 && t30 && t10 < t20 && t20 < t30);
	/* thread 10's 1000 calls are together, f0 first, f999 last */
	assert_non_null(strstr(a, "\"name\":\"f999\",\"cat\":\"call\",\"pid\":7,\"tid\":10,"));
	assert_true(strstr(a, "\"name\":\"f999\",\"cat\":\"call\",\"pid\":7,\"tid\":10,") < t20);
	/* the threads' calls came in another interleaving: the same text */
	assert_string_equal(a, b);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_deterministic_and_spooled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
