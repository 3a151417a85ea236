/* Unit tests: blocked time attributed to the waker (sr_options.wakers,
 * sr_machine_wake) on synthetic event streams: a mutex handoff, a condition
 * variable waited on twice, a pipe, the last of several wakes, wakes outside
 * the interval, no wake, a --time window, chains through three and four
 * threads, and the wake edges. Exact times and counts; per-thread sums stay
 * the threads' traced time. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "flamegraph/flamegraph.h"
#include "tests/unit/test_stack_util.h"

#define NR_FUTEX 202
#define NR_READ 0
#define NR_WRITE 1

static struct sr_machine *new_m(uint32_t wakers)
{
	struct sr_options o = { .per_thread = true, .wakers = wakers };
	struct sr_machine *m = sr_machine_new(&fake_sym, &o);

	assert_non_null(m);
	return m;
}

static void comm(struct sr_machine *m, uint32_t tid, const char *name)
{
	assert_int_equal(sr_machine_comm(m, 100, tid, name, 0), 0);
}

static void wake(struct sr_machine *m, uint64_t t, uint32_t waker, uint32_t wakee)
{
	assert_int_equal(sr_machine_wake(m, t, 100, waker, NULL, wakee), 0);
}

/* Every thread's stacks add up to its traced time. */
static void check_sums(const struct sr_cct *cct)
{
	for (size_t i = 0; i < sr_cct_nthreads(cct); i++) {
		const struct sr_thread_stats *st = sr_cct_thread(cct, i);
		char name[64];
		const struct sr_node *n;

		snprintf(name, sizeof(name), "%s-%u", *st->comm ? st->comm : "unknown", st->tid);
		n = node_at(cct, name);
		assert_non_null(n);
		assert_int_equal(subtree_self(n), st->traced_ns);
		assert_int_equal(st->kept_ns, st->traced_ns);
	}
}

static void expect_stacks(const struct sr_cct *cct, const char *want)
{
	char *got = stacks(cct);

	if (strcmp(got, want))
		fprintf(stderr, "got:\n%s\nwant:\n%s\n", got, want);
	assert_string_equal(got, want);
	free(got);
}

/* "wait -> waker calls total" per edge, sorted. */
static char *edges(const struct sr_cct *cct)
{
	const struct sr_cct *e = sr_cct_wake_edges(cct);
	struct lines l = { 0 };
	struct text t = { 0 };

	text_add(&t, "");
	if (!e)
		return t.buf;
	for (const struct sr_node *a = sr_cct_root(e)->first_child; a; a = a->next_sibling)
		for (const struct sr_node *b = a->first_child; b; b = b->next_sibling) {
			char *line;

			if (asprintf(&line, "%s -> %s %llu %llu p50 %llu\n", sr_cct_name(e, a, NULL),
				     sr_cct_name(e, b, NULL), (unsigned long long)b->calls,
				     (unsigned long long)b->total_ns,
				     (unsigned long long)sr_hist_percentile(&b->lat, 50)) < 0)
				abort();
			if (l.n == l.cap) {
				l.cap = l.cap ? l.cap * 2 : 8;
				l.v = realloc(l.v, l.cap * sizeof(*l.v));
			}
			l.v[l.n++] = line;
		}
	if (l.n)
		qsort(l.v, l.n, sizeof(*l.v), cmp_str);
	for (size_t i = 0; i < l.n; i++) {
		text_add(&t, l.v[i]);
		free(l.v[i]);
	}
	free(l.v);
	return t.buf;
}

static void expect_edges(const struct sr_cct *cct, const char *want)
{
	char *got = edges(cct);

	if (strcmp(got, want))
		fprintf(stderr, "got:\n%s\nwant:\n%s\n", got, want);
	assert_string_equal(got, want);
	free(got);
}

/* Thread 1 (waiter) blocks in a's futex at 10..60; thread 2 (waker) wakes
 * it at 50 from b's futex. */
/* Thread 1 ("waiter") blocks in a futex from main;a at 10; thread 2
 * ("waker") calls b at 20. */
static void waiter_blocked(struct sr_machine *m)
{
	comm(m, 1, "waiter");
	comm(m, 2, "waker");
	START(m, 1, 0, IP(F_MAIN));
	START(m, 2, 0, IP(F_MAIN));
	CALL(m, 1, 5, F_MAIN, F_A);
	SYSCALL(m, 1, 10, F_A, NR_FUTEX);
	SWOUT(m, 1, 11);
	CALL(m, 2, 20, F_MAIN, F_B);
}

static void handoff(struct sr_machine *m, uint64_t wake_at)
{
	waiter_blocked(m);
	SYSCALL(m, 2, 50, F_B, NR_FUTEX);
	if (wake_at)
		wake(m, wake_at, 2, 1);
	RESUME(m, 2, 51, IP(F_B));
	SWIN(m, 1, 60);
	RESUME(m, 1, 61, IP(F_A));
}

static void test_mutex_handoff(void **state)
{
	struct sr_machine *m = new_m(1);
	struct sr_cct *cct;
	const struct sr_node *n;

	struct sr_machine_stats st;

	(void)state;
	handoff(m, 50);
	sr_machine_stats(m, &st);
	assert_int_equal(st.wakes, 1);
	assert_int_equal(st.waits_woken, 1);
	assert_int_equal(st.waits_plain, 0);
	cct = finish(m, 100);
	expect_stacks(cct,
		      "waiter-1;main 5\n"
		      "waiter-1;main;a 44\n"
		      "waiter-1;main;a;[kernel] futex 2\n"
		      "waiter-1;main;a;[kernel] futex;[off-cpu];[woken by waker-2];main;b 49\n"
		      "waker-2;main 20\n"
		      "waker-2;main;b 79\n"
		      "waker-2;main;b;[kernel] futex 1\n");
	/* one wait, through every frame of the path, complete, 49 ns long */
	n = node_at(cct, "waiter-1;main;a;[kernel] futex;[off-cpu]");
	assert_int_equal(n->calls, 1);
	assert_int_equal(n->self_ns, 0);
	assert_int_equal(n->total_ns, 49);
	n = node_at(cct, "waiter-1;main;a;[kernel] futex;[off-cpu];[woken by waker-2]");
	assert_int_equal(n->calls, 1);
	assert_int_equal(n->calls_inferred, 0);
	assert_int_equal(n->lat.sum, 49);
	n = node_at(cct, "waiter-1;main;a;[kernel] futex;[off-cpu];[woken by waker-2];main;b");
	assert_int_equal(n->calls, 1);
	check_sums(cct);
	expect_edges(cct, "a -> b 1 49 p50 49\n");
	sr_cct_free(cct);
}

/* The waker's events held after a loss (its stack kept, the return that
 * proves it not seen yet) are fed before its stack is taken at the wake:
 * d, called after the resync, is on it. */
static void test_waker_holding(void **state)
{
	struct sr_machine *m = new_m(1);
	struct sr_cct *cct;

	(void)state;
	waiter_blocked(m);
	CALL(m, 2, 22, F_B, F_C);
	LOST(m, 2, 24);
	SYNC(m, 2, 26, IP(F_C));      /* kept: main;b;c, held from here */
	CALL(m, 2, 30, F_C, F_D);
	wake(m, 35, 2, 1);
	RET(m, 2, 40, F_D, F_C);
	RET(m, 2, 45, F_C, F_B);
	SWIN(m, 1, 60);
	RESUME(m, 1, 61, IP(F_A));
	cct = finish(m, 100);
	assert_non_null(node_at(cct, "waiter-1;main;a;[kernel] futex;[off-cpu];"
				"[woken by waker-2];main;b;c;d"));
	check_sums(cct);
	sr_cct_free(cct);
}

/* A waker's frame names it by its comm at the wake: thread 2 ("sh") wakes
 * thread 1 at 20, execs at 50 (COMM exec "ls") and wakes it again at 60.
 * Its own stacks split there too: "sh-2" and "ls-2". */
static void test_waker_named_at_wake(void **state)
{
	struct sr_machine *m = new_m(1);
	struct sr_cct *cct;

	(void)state;
	comm(m, 1, "waiter");
	comm(m, 2, "sh");
	START(m, 1, 0, IP(F_MAIN));
	START(m, 2, 0, IP(F_MAIN));
	CALL(m, 2, 5, F_MAIN, F_B);
	SYSCALL(m, 1, 10, F_MAIN, NR_FUTEX);
	SWOUT(m, 1, 11);
	wake(m, 20, 2, 1);
	SWIN(m, 1, 30);
	RESUME(m, 1, 31, IP(F_MAIN));
	SYSCALL(m, 1, 40, F_MAIN, NR_FUTEX);
	SWOUT(m, 1, 41);
	SYSCALL(m, 2, 45, F_B, UINT32_MAX);
	assert_int_equal(sr_machine_exec(m, 100, 2, 50), 0);
	assert_int_equal(sr_machine_comm(m, 100, 2, "ls", 50), 0);
	RESUME(m, 2, 55, ENTRY(F_START));
	wake(m, 60, 2, 1);
	SWIN(m, 1, 70);
	RESUME(m, 1, 71, IP(F_MAIN));
	cct = finish(m, 100);
	expect_stacks(cct,
		      "ls-2;_start 45\n"
		      "sh-2;main 5\n"
		      "sh-2;main;b 40\n"
		      "sh-2;main;b;[kernel] 10\n"
		      "waiter-1;main 48\n"
		      "waiter-1;main;[kernel] futex 4\n"
		      "waiter-1;main;[kernel] futex;[off-cpu];[woken by ls-2];_start 29\n"
		      "waiter-1;main;[kernel] futex;[off-cpu];[woken by sh-2];main;b 19\n");
	sr_cct_free(cct);
}

/* Without wakers the same stream is plain [off-cpu], wakes ignored. */
static void test_off(void **state)
{
	struct sr_machine *m = new_m(0);
	struct sr_cct *cct;

	(void)state;
	handoff(m, 50);
	cct = finish(m, 100);
	expect_stacks(cct,
		      "waiter-1;main 5\n"
		      "waiter-1;main;a 44\n"
		      "waiter-1;main;a;[kernel] futex 2\n"
		      "waiter-1;main;a;[kernel] futex;[off-cpu] 49\n"
		      "waker-2;main 20\n"
		      "waker-2;main;b 79\n"
		      "waker-2;main;b;[kernel] futex 1\n");
	assert_null(sr_cct_wake_edges(cct));
	sr_cct_free(cct);
}

/* A wake at either end of the interval counts; before it or none: plain. */
static void test_interval_ends(void **state)
{
	static const struct { uint64_t at; bool woken; } cases[] = {
		{ 11, true }, { 60, true }, { 10, false }, { 0, false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sr_machine *m = new_m(1);
		struct sr_cct *cct;
		const struct sr_node *n;

		comm(m, 1, "waiter");
		comm(m, 2, "waker");
		START(m, 1, 0, IP(F_MAIN));
		START(m, 2, 0, IP(F_MAIN));
		CALL(m, 2, 1, F_MAIN, F_B);
		if (cases[i].at == 10)
			wake(m, 10, 2, 1);
		SYSCALL(m, 1, 10, F_MAIN, NR_FUTEX);
		if (cases[i].at == 11)
			wake(m, 11, 2, 1);
		SWOUT(m, 1, 11);
		if (cases[i].at == 60)
			wake(m, 60, 2, 1);
		SWIN(m, 1, 60);
		cct = finish(m, 70);
		n = node_at(cct, "waiter-1;main;[kernel] futex;[off-cpu]");
		assert_non_null(n);
		assert_int_equal(n->total_ns, 49);
		assert_int_equal(n->self_ns, cases[i].woken ? 0 : 49);
		n = node_at(cct, "waiter-1;main;[kernel] futex;[off-cpu];[woken by waker-2];main;b");
		if (cases[i].woken) {
			assert_non_null(n);
			assert_int_equal(n->self_ns, 49);
		} else {
			assert_null(n);
		}
		check_sums(cct);
		expect_edges(cct, cases[i].woken ? "main -> b 1 49 p50 49\n" :
			     "main -> [no wake record] 1 49 p50 49\n");
		sr_cct_free(cct);
	}
}

/* Condition variable: the consumer waits twice; the producer's wakes come
 * from two places (its stack at each wake); within the second wait two
 * wakes, the last one counts. */
static void test_condvar(void **state)
{
	struct sr_machine *m = new_m(1);
	struct sr_cct *cct;
	const struct sr_node *n;

	(void)state;
	comm(m, 1, "consumer");
	comm(m, 2, "producer");
	START(m, 1, 0, IP(F_MAIN));
	START(m, 2, 0, IP(F_MAIN));
	CALL(m, 1, 1, F_MAIN, F_A);
	CALL(m, 2, 1, F_MAIN, F_C);
	/* wait 1: 10..40, woken from main;c at 30 */
	SYSCALL(m, 1, 10, F_A, NR_FUTEX);
	SWOUT(m, 1, 10);
	SYSCALL(m, 2, 30, F_C, NR_FUTEX);
	wake(m, 30, 2, 1);
	RESUME(m, 2, 31, IP(F_C));
	SWIN(m, 1, 40);
	RESUME(m, 1, 41, IP(F_A));
	/* wait 2: 50..100: a wake from c at 60, then one from c;d at 90 */
	SYSCALL(m, 1, 50, F_A, NR_FUTEX);
	SWOUT(m, 1, 50);
	SYSCALL(m, 2, 60, F_C, NR_FUTEX);
	wake(m, 60, 2, 1);
	RESUME(m, 2, 61, IP(F_C));
	CALL(m, 2, 70, F_C, F_D);
	SYSCALL(m, 2, 90, F_D, NR_FUTEX);
	wake(m, 90, 2, 1);
	RESUME(m, 2, 91, IP(F_D));
	SWIN(m, 1, 100);
	RESUME(m, 1, 101, IP(F_A));
	/* wait 3: the same stack as wait 1 */
	SYSCALL(m, 1, 110, F_A, NR_FUTEX);
	SWOUT(m, 1, 110);
	RET(m, 2, 115, F_D, F_C);
	SYSCALL(m, 2, 120, F_C, NR_FUTEX);
	wake(m, 120, 2, 1);
	RESUME(m, 2, 121, IP(F_C));
	SWIN(m, 1, 125);
	RESUME(m, 1, 126, IP(F_A));
	cct = finish(m, 130);
	n = node_at(cct, "consumer-1;main;a;[kernel] futex;[off-cpu];[woken by producer-2];main;c");
	assert_non_null(n);
	assert_int_equal(n->calls, 3);           /* waits 1 and 3, and 2 through c */
	assert_int_equal(n->self_ns, 30 + 15);
	assert_int_equal(n->total_ns, 30 + 15 + 50);
	n = node_at(cct, "consumer-1;main;a;[kernel] futex;[off-cpu];[woken by producer-2];main;c;d");
	assert_non_null(n);
	assert_int_equal(n->calls, 1);
	assert_int_equal(n->self_ns, 50);
	n = node_at(cct, "consumer-1;main;a;[kernel] futex;[off-cpu];[woken by producer-2]");
	assert_int_equal(n->calls, 3);
	assert_int_equal(n->total_ns, 95);
	n = node_at(cct, "consumer-1;main;a;[kernel] futex;[off-cpu]");
	assert_int_equal(n->calls, 3);
	assert_int_equal(n->self_ns, 0);
	check_sums(cct);
	expect_edges(cct, "a -> c 2 45 p50 15\n"
			  "a -> d 1 50 p50 50\n");
	sr_cct_free(cct);
}

/* A pipe: the reader blocks in read, the writer's write wakes it; the
 * writer's name is the one COMM gave it at the wake (passed by the
 * caller), and an untraced waker has just its [woken by] frame. */
static void test_pipe(void **state)
{
	struct sr_machine *m = new_m(1);
	struct sr_cct *cct;

	(void)state;
	comm(m, 1, "reader");
	START(m, 1, 0, IP(F_MAIN));
	START(m, 2, 0, IP(F_MAIN));
	CALL(m, 1, 2, F_MAIN, F_F);
	SYSCALL(m, 1, 4, F_F, NR_READ);
	SWOUT(m, 1, 5);
	CALL(m, 2, 6, F_MAIN, F_G);
	SYSCALL(m, 2, 8, F_G, NR_WRITE);
	assert_int_equal(sr_machine_wake(m, 8, 100, 2, "writer", 1), 0);
	RESUME(m, 2, 9, IP(F_G));
	SWIN(m, 1, 20);
	RESUME(m, 1, 21, IP(F_F));
	SYSCALL(m, 1, 24, F_F, NR_READ);
	SWOUT(m, 1, 25);
	/* woken by a thread the machine never saw (an interrupt, another
	 * process) */
	assert_int_equal(sr_machine_wake(m, 30, 7, 77, "ksoftirqd/0", 1), 0);
	SWIN(m, 1, 35);
	RESUME(m, 1, 36, IP(F_F));
	cct = finish(m, 40);
	expect_stacks(cct,
		      "reader-1;main 2\n"
		      "reader-1;main;f 9\n"
		      "reader-1;main;f;[kernel] read 4\n"
		      "reader-1;main;f;[kernel] read;[off-cpu];[woken by ksoftirqd/0-77] 10\n"
		      "reader-1;main;f;[kernel] read;[off-cpu];[woken by writer-2];main;g 15\n"
		      "unknown-2;main 6\n"
		      "unknown-2;main;g 33\n"
		      "unknown-2;main;g;[kernel] write 1\n");
	check_sums(cct);
	expect_edges(cct, "f -> [woken by ksoftirqd/0-77] 1 10 p50 10\n"
			  "f -> g 1 15 p50 15\n");
	sr_cct_free(cct);
}

/* A chain: A (1) waits 10..100 on B (2), which wakes it at 90 from b; B
 * waited 20..70 on C (3), woken at 60 from c;d; C waited 30..50 on D (4),
 * woken at 45 from f. Fed in time order. */
static struct sr_cct *chain_run_m(struct sr_machine *m)
{

	comm(m, 1, "A");
	comm(m, 2, "B");
	comm(m, 3, "C");
	comm(m, 4, "D");
	for (uint32_t tid = 1; tid <= 4; tid++)
		START(m, tid, 0, IP(F_MAIN));
	CALL(m, 1, 1, F_MAIN, F_A);
	CALL(m, 2, 1, F_MAIN, F_B);
	CALL(m, 3, 1, F_MAIN, F_C);
	CALL(m, 4, 1, F_MAIN, F_F);
	SYSCALL(m, 1, 10, F_A, NR_FUTEX);
	SWOUT(m, 1, 10);
	SYSCALL(m, 2, 20, F_B, NR_FUTEX);
	SWOUT(m, 2, 20);
	SYSCALL(m, 3, 30, F_C, NR_FUTEX);
	SWOUT(m, 3, 30);
	SYSCALL(m, 4, 45, F_F, NR_FUTEX);
	wake(m, 45, 4, 3);
	RESUME(m, 4, 46, IP(F_F));
	SWIN(m, 3, 50);
	RESUME(m, 3, 51, IP(F_C));
	CALL(m, 3, 55, F_C, F_D);
	SYSCALL(m, 3, 60, F_D, NR_FUTEX);
	wake(m, 60, 3, 2);
	RESUME(m, 3, 61, IP(F_D));
	SWIN(m, 2, 70);
	RESUME(m, 2, 71, IP(F_B));
	SYSCALL(m, 2, 90, F_B, NR_FUTEX);
	wake(m, 90, 2, 1);
	RESUME(m, 2, 91, IP(F_B));
	SWIN(m, 1, 100);
	RESUME(m, 1, 101, IP(F_A));
	return finish(m, 110);
}

static struct sr_cct *chain_run(uint32_t wakers)
{
	return chain_run_m(new_m(wakers));
}

#define AW "A-1;main;a;[kernel] futex;[off-cpu];"
#define BW "B-2;main;b;[kernel] futex;[off-cpu];"
#define CW "C-3;main;c;[kernel] futex;[off-cpu];"

static void test_chain(void **state)
{
	static const char *const want[] = {
		/* wakers=1: each wait under its direct waker */
		AW "[woken by B-2];main;b 90\n"
		BW "[woken by C-3];main;c;d 50\n"
		CW "[woken by D-4];main;f 20\n",
		/* 2: A's wait [10, 90] on B holds B's wait [20, 70] on C: 50 ns
		 * go below B's stack; B's wait [20, 60] on C holds C's [30, 50] */
		AW "[woken by B-2];main;b 40\n"
		AW "[woken by B-2];main;b;[woken by C-3];main;c;d 50\n"
		BW "[woken by C-3];main;c;d 30\n"
		BW "[woken by C-3];main;c;d;[woken by D-4];main;f 20\n"
		CW "[woken by D-4];main;f 20\n",
		/* 3: and of those 50, C's wait within [20, 60]: [30, 50] */
		AW "[woken by B-2];main;b 40\n"
		AW "[woken by B-2];main;b;[woken by C-3];main;c;d 30\n"
		AW "[woken by B-2];main;b;[woken by C-3];main;c;d;[woken by D-4];main;f 20\n"
		BW "[woken by C-3];main;c;d 30\n"
		BW "[woken by C-3];main;c;d;[woken by D-4];main;f 20\n"
		CW "[woken by D-4];main;f 20\n",
	};

	(void)state;
	for (uint32_t w = 1; w <= 4; w++) {
		struct sr_cct *cct = chain_run(w);
		char *got = stacks(cct), *only = calloc(1, strlen(got) + 1);
		const struct sr_node *n;

		/* the lines below [off-cpu] */
		for (char *line = strtok(got, "\n"); line; line = strtok(NULL, "\n"))
			if (strstr(line, "[woken by")) {
				strcat(only, line);
				strcat(only, "\n");
			}
		if (strcmp(only, want[w < 3 ? w - 1 : 2]))
			fprintf(stderr, "wakers=%u got:\n%s", w, only);
		assert_string_equal(only, want[w < 3 ? w - 1 : 2]);
		free(only);
		free(got);
		check_sums(cct);
		/* one wait through every frame, the chain's too */
		n = node_at(cct, AW "[woken by B-2];main;b");
		assert_int_equal(n->calls, 1);
		assert_int_equal(n->total_ns, 90);
		if (w >= 3) {
			n = node_at(cct, AW "[woken by B-2];main;b;[woken by C-3];main;c;d;[woken by D-4]");
			assert_int_equal(n->calls, 1);
			assert_int_equal(n->lat.sum, 20);
		}
		/* edges are the direct wakes only */
		expect_edges(cct, "a -> b 1 90 p50 90\n"
				  "b -> d 1 50 p50 50\n"
				  "c -> f 1 20 p50 20\n");
		sr_cct_free(cct);
	}
}

/* --time cuts the wait: what is left of it moves, nothing more. */
static void test_window(void **state)
{
	struct sr_options o = { .per_thread = true, .wakers = 2, .time_start = 30,
				.time_end = 95 };
	struct sr_machine *m = sr_machine_new(&fake_sym, &o);
	struct sr_cct *cct;
	const struct sr_node *n;

	(void)state;
	assert_non_null(m);
	handoff(m, 50);
	cct = finish(m, 100);
	n = node_at(cct, "waiter-1;main;a;[kernel] futex;[off-cpu]");
	assert_int_equal(n->self_ns, 0);
	assert_int_equal(n->total_ns, 30);     /* [30, 60) */
	n = node_at(cct, "waiter-1;main;a;[kernel] futex;[off-cpu];[woken by waker-2];main;b");
	assert_int_equal(n->self_ns, 30);
	assert_int_equal(n->calls_inferred, 1);  /* began before the window */
	sr_cct_free(cct);
}

/* The waker's stack gets an inferred caller after the wake (it returns
 * above its root): the waker frame's path gets it too, as the waker's own
 * stacks do; one from a later segment (after lost data) does not. */
static void test_later_caller(void **state)
{
	struct sr_machine *m = new_m(1);
	struct sr_cct *cct;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	comm(m, 1, "waiter");
	comm(m, 2, "waker");
	START(m, 1, 0, IP(F_MAIN));
	START(m, 2, 0, IP(F_B));              /* traced from inside b */
	SYSCALL(m, 1, 10, F_MAIN, NR_FUTEX);
	SWOUT(m, 1, 10);
	SYSCALL(m, 2, 20, F_B, NR_FUTEX);
	wake(m, 20, 2, 1);
	RESUME(m, 2, 21, IP(F_B));
	SWIN(m, 1, 30);
	RESUME(m, 1, 31, IP(F_MAIN));
	RET(m, 2, 40, F_B, F_MAIN);            /* main: an inferred caller */
	/* a second wait, woken from main itself; then data is lost and the
	 * new segment's underflow (into _start) is not the old one's */
	SYSCALL(m, 1, 50, F_MAIN, NR_FUTEX);
	SWOUT(m, 1, 50);
	SYSCALL(m, 2, 60, F_MAIN, NR_FUTEX);
	wake(m, 60, 2, 1);
	RESUME(m, 2, 61, IP(F_MAIN));
	SWIN(m, 1, 70);
	RESUME(m, 1, 71, IP(F_MAIN));
	LOST(m, 2, 80);
	SYNC(m, 2, 81, IP(F_C));                /* not on the stack: a new one */
	RET(m, 2, 90, F_C, F_START);
	cct = finish(m, 100);
	expect_stacks(cct,
		      "waiter-1;main 58\n"
		      "waiter-1;main;[kernel] futex 2\n"
		      "waiter-1;main;[kernel] futex;[off-cpu];[woken by waker-2];main 20\n"
		      "waiter-1;main;[kernel] futex;[off-cpu];[woken by waker-2];main;b 20\n"
		      "waker-2;_start 10\n"
		      "waker-2;_start;c 9\n"
		      "waker-2;main 39\n"
		      "waker-2;main;[kernel] futex 1\n"
		      "waker-2;main;[lost] 1\n"
		      "waker-2;main;b 39\n"
		      "waker-2;main;b;[kernel] futex 1\n");
	/* (two waker frames of one name: the folded output makes them one) */
	f = open_memstream(&buf, &len);
	assert_int_equal(fg_fold(f, cct, NULL, NULL), 0);
	fclose(f);
	assert_non_null(strstr(buf, ";[off-cpu]:2,avg:20;[woken by waker-2]:2,avg:20;main:2,avg:20 20\n"));
	assert_non_null(strstr(buf, ";[woken by waker-2]:2,avg:20;main:2,avg:20;b:1,avg:20 20\n"));
	free(buf);
	check_sums(cct);
	sr_cct_free(cct);
}

/* The wake table: rows, order, units, csv and json. */
static void test_table(void **state)
{
	struct fg_table_options o = { 0 };
	struct sr_machine *m = new_m(1);
	struct sr_cct *cct;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	handoff(m, 50);
	SYSCALL(m, 2, 70, F_B, NR_FUTEX);
	SWOUT(m, 2, 70);
	SWIN(m, 2, 2070);                       /* no wake: 2 µs */
	cct = finish(m, 3000);
	f = open_memstream(&buf, &len);
	assert_int_equal(fg_wake_table_write(f, cct, NULL, &o), 0);
	fclose(f);
	assert_string_equal(buf,
		"  waits     total       avg       p50       p99  Wait site -> waker site\n"
		"  =====  ========  ========  ========  ========  =======================\n"
		"      1  2.000 µs  2.000 µs  2.000 µs  2.000 µs  b -> [no wake record]\n"
		"      1     49 ns     49 ns     49 ns     49 ns  a -> b\n");
	free(buf);
	o.format = FG_TABLE_CSV;
	o.sort = FG_SORT_CALLS;
	o.top = 1;
	f = open_memstream(&buf, &len);
	assert_int_equal(fg_wake_table_write(f, cct, NULL, &o), 0);
	fclose(f);
	assert_string_equal(buf, "wait_site,waker_site,waits,total_ns,avg_ns,p50_ns,p99_ns\n"
				 "a,b,1,49,49,49,49\n");
	free(buf);
	o.format = FG_TABLE_JSON;
	o.top = 0;
	o.sort = FG_SORT_TOTAL;
	f = open_memstream(&buf, &len);
	assert_int_equal(fg_wake_table_write(f, cct, NULL, &o), 0);
	fclose(f);
	assert_string_equal(buf, "{\"edges\":[{\"wait_site\":\"b\",\"waker_site\":\"[no wake record]\","
				 "\"waits\":1,\"total_ns\":2000,\"avg_ns\":2000,\"p50_ns\":2000,"
				 "\"p99_ns\":2000},{\"wait_site\":\"a\",\"waker_site\":\"b\",\"waits\":1,"
				 "\"total_ns\":49,\"avg_ns\":49,\"p50_ns\":49,\"p99_ns\":49}]}\n");
	free(buf);
	sr_cct_free(cct);
}

/* --tid A: only A is output, but its wakers' stacks (and, for chains,
 * their waits) are followed all the same. */
static void test_tid_filter(void **state)
{
	static const uint32_t tids[] = { 1 };
	struct sr_options o = { .per_thread = true, .wakers = 3, .tids = tids, .ntids = 1 };
	struct sr_cct *cct = chain_run_m(sr_machine_new(&fake_sym, &o));
	char *got = stacks(cct);

	(void)state;
	assert_string_equal(got,
		"A-1;main 1\n"
		"A-1;main;a 18\n"
		"A-1;main;a;[kernel] futex 1\n"
		AW "[woken by B-2];main;b 40\n"
		AW "[woken by B-2];main;b;[woken by C-3];main;c;d 30\n"
		AW "[woken by B-2];main;b;[woken by C-3];main;c;d;[woken by D-4];main;f 20\n");
	free(got);
	assert_int_equal(sr_cct_nthreads(cct), 1);
	check_sums(cct);
	expect_edges(cct, "a -> b 1 90 p50 90\n");
	sr_cct_free(cct);
}

/* --oncpu: no blocked time, so nothing goes below [off-cpu]. */
static void test_oncpu(void **state)
{
	struct sr_options o = { .per_thread = true, .wakers = 1, .keep_time = SR_KEEP_ONCPU };
	struct sr_machine *m = sr_machine_new(&fake_sym, &o);
	struct sr_cct *cct;

	(void)state;
	handoff(m, 50);
	cct = finish(m, 100);
	assert_null(node_at(cct, "waiter-1;main;a;[kernel] futex;[off-cpu];[woken by waker-2]"));
	expect_edges(cct, "");
	sr_cct_free(cct);
}

/* A wake by the idle task (an interrupt) with no name: the kernel's. */
static void test_swapper(void **state)
{
	struct sr_machine *m = new_m(1);
	struct sr_cct *cct;

	(void)state;
	comm(m, 1, "sleeper");
	START(m, 1, 0, IP(F_MAIN));
	SYSCALL(m, 1, 10, F_MAIN, NR_FUTEX);
	SWOUT(m, 1, 10);
	assert_int_equal(sr_machine_wake(m, 15, 0, 0, NULL, 1), 0);
	SWIN(m, 1, 20);
	cct = finish(m, 30);
	assert_non_null(node_at(cct, "sleeper-1;main;[kernel] futex;[off-cpu];[woken by swapper-0]"));
	sr_cct_free(cct);
}

/* Chains look at a waker's last 256 waits: B waits 300 times on C during
 * A's one wait on B; 256 of them go below B's stack in A's. */
static void test_chain_history(void **state)
{
	struct sr_machine *m = new_m(2);
	struct sr_cct *cct;
	const struct sr_node *n;
	uint64_t t = 10;

	(void)state;
	comm(m, 1, "A");
	comm(m, 2, "B");
	comm(m, 3, "C");
	for (uint32_t tid = 1; tid <= 3; tid++)
		START(m, tid, 0, IP(F_MAIN));
	SYSCALL(m, 1, 5, F_MAIN, NR_FUTEX);
	SWOUT(m, 1, 5);
	for (int i = 0; i < 300; i++, t += 100) {
		SYSCALL(m, 2, t, F_MAIN, NR_FUTEX);
		SWOUT(m, 2, t);
		SYSCALL(m, 3, t + 30, F_MAIN, NR_FUTEX);
		wake(m, t + 30, 3, 2);
		RESUME(m, 3, t + 31, IP(F_MAIN));
		SWIN(m, 2, t + 40);                 /* 40 ns blocked */
		RESUME(m, 2, t + 41, IP(F_MAIN));
	}
	SYSCALL(m, 2, t, F_MAIN, NR_FUTEX);
	wake(m, t, 2, 1);
	RESUME(m, 2, t + 1, IP(F_MAIN));
	SWIN(m, 1, t + 10);
	RESUME(m, 1, t + 11, IP(F_MAIN));
	cct = finish(m, t + 20);
	n = node_at(cct, "A-1;main;[kernel] futex;[off-cpu];[woken by B-2];main");
	assert_non_null(n);
	assert_int_equal(n->total_ns, t + 10 - 5);
	assert_int_equal(n->self_ns, t + 10 - 5 - 256 * 40);
	n = node_at(cct, "A-1;main;[kernel] futex;[off-cpu];[woken by B-2];main;[woken by C-3];main");
	assert_non_null(n);
	assert_int_equal(n->self_ns, 256 * 40);
	assert_int_equal(n->calls, 256);
	n = node_at(cct, "B-2;main;[kernel] futex;[off-cpu];[woken by C-3];main");
	assert_int_equal(n->calls, 300);
	check_sums(cct);
	sr_cct_free(cct);
}


/* ---- a thread created during the recording (sr_machine_fork) ---- */

#define NR_CLONE 56

static void fork_thread(struct sr_machine *m, uint64_t t, uint32_t ptid, uint32_t tid)
{
	assert_int_equal(sr_machine_fork(m, 100, ptid, NULL, 100, tid, t), 0);
	comm(m, tid, "main");   /* (its inherited name, as the FORK gives it) */
}

/* Thread 1 (main, from the recording's start) calls a, which clones
 * thread 2 at 11 (in the clone syscall from 10); thread 2 first runs at
 * 30 (its switch-in), its trace starts at 40 in b (the clone's return)
 * and it exits at 60. Thread 2's life is [11, 60): runnable until 30,
 * in the kernel until 40. switch_in 0: no switch records. */
static void birth(struct sr_machine *m, uint64_t switch_in)
{
	comm(m, 1, "main");
	START(m, 1, 0, IP(F_MAIN));
	CALL(m, 1, 5, F_MAIN, F_A);
	SYSCALL(m, 1, 10, F_A, NR_CLONE);
	fork_thread(m, 11, 1, 2);
	RESUME(m, 1, 20, IP(F_A));
	if (switch_in)
		assert_int_equal(sr_machine_first_in(m, 2, switch_in), 0);
	RESUME(m, 2, 40, IP(F_B));
	END(m, 2, 60, F_B);
	END(m, 1, 70, F_A);
}

struct born_calls {
	int n;
	struct sr_call preempted;
};

static int on_born_call(void *ctx, const struct sr_call *c)
{
	struct born_calls *b = ctx;

	if (c->tid == 2 && c->node->kind == SR_NODE_PREEMPT) {
		b->n++;
		b->preempted = *c;
	}
	return 0;
}

/* Its wait to run is [preempted] (runnable: on a run queue), on a [kernel]
 * that lasts to its first event, both at its root and complete calls; its
 * stacks add up to its life from its creation. */
static void test_new_thread(void **state)
{
	struct born_calls calls = { 0 };
	struct sr_options o = { .per_thread = true, .on_call = on_born_call,
				.call_ctx = &calls };
	struct sr_machine *m = sr_machine_new(&fake_sym, &o);
	struct sr_cct *cct;
	const struct sr_node *n;

	(void)state;
	assert_non_null(m);
	birth(m, 30);
	cct = finish(m, 100);
	expect_stacks(cct,
		      "main-1;main 5\n"
		      "main-1;main;a 55\n"
		      "main-1;main;a;[kernel] clone 10\n"
		      "main-2;[kernel] 10\n"
		      "main-2;[kernel];[preempted] 19\n"
		      "main-2;b 20\n");
	n = node_at(cct, "main-2;[kernel]");
	assert_int_equal(n->calls, 1);
	assert_int_equal(n->calls_inferred, 0);
	assert_int_equal(n->total_ns, 29);
	n = node_at(cct, "main-2;[kernel];[preempted]");
	assert_int_equal(n->calls, 1);
	assert_int_equal(n->calls_inferred, 0);
	assert_int_equal(n->total_ns, 19);
	/* (the timeline's span: no waker without wakers) */
	assert_int_equal(calls.n, 1);
	assert_int_equal(calls.preempted.start_ns, 11);
	assert_int_equal(calls.preempted.end_ns, 30);
	assert_false(calls.preempted.woken);
	for (size_t i = 0; i < sr_cct_nthreads(cct); i++) {
		const struct sr_thread_stats *st = sr_cct_thread(cct, i);

		if (st->tid == 2) {
			assert_int_equal(st->first_ns, 11);
			assert_int_equal(st->traced_ns, 49);
			assert_int_equal(st->traced_by[SR_TIME_PREEMPT], 19);
			assert_int_equal(st->traced_by[SR_TIME_KERNEL], 10);
		}
	}
	check_sums(cct);
	sr_cct_free(cct);
}

/* With wakers its creator ended that wait: [woken by main-1] and the
 * creator's stack at its clone; the edge's wait site is the wait itself;
 * the span names the waker. Not a wait a wake record ended (stats), and
 * no chain goes through it: thread 3, woken by thread 2 later, gets thread
 * 2's stack and no more. */
static void test_new_thread_wakers(void **state)
{
	struct born_calls calls = { 0 };
	struct sr_options o = { .per_thread = true, .wakers = 3, .on_call = on_born_call,
				.call_ctx = &calls };
	struct sr_machine *m = sr_machine_new(&fake_sym, &o);
	struct sr_machine_stats st;
	struct sr_cct *cct;
	const struct sr_node *n;

	(void)state;
	assert_non_null(m);
	comm(m, 3, "other");
	START(m, 3, 0, IP(F_MAIN));
	SYSCALL(m, 3, 1, F_MAIN, NR_FUTEX);
	SWOUT(m, 3, 2);
	comm(m, 1, "main");
	START(m, 1, 0, IP(F_MAIN));
	CALL(m, 1, 5, F_MAIN, F_A);
	SYSCALL(m, 1, 10, F_A, NR_CLONE);
	fork_thread(m, 11, 1, 2);
	RESUME(m, 1, 20, IP(F_A));
	assert_int_equal(sr_machine_first_in(m, 2, 30), 0);
	assert_int_equal(sr_machine_first_in(m, 2, 35), 0);   /* (ignored) */
	RESUME(m, 2, 40, IP(F_B));
	SYSCALL(m, 2, 50, F_B, NR_FUTEX);
	wake(m, 50, 2, 3);
	END(m, 2, 60, F_B);
	SWIN(m, 3, 55);
	RESUME(m, 3, 56, IP(F_MAIN));
	END(m, 3, 65, F_MAIN);
	END(m, 1, 70, F_A);
	sr_machine_stats(m, &st);
	assert_int_equal(st.waits_woken, 1);
	assert_int_equal(st.waits_plain, 0);
	cct = finish(m, 100);
	expect_stacks(cct,
		      "main-1;main 5\n"
		      "main-1;main;a 55\n"
		      "main-1;main;a;[kernel] clone 10\n"
		      "main-2;[kernel] 10\n"
		      "main-2;[kernel];[preempted];[woken by main-1];main;a 19\n"
		      "main-2;b 10\n"
		      "main-2;b;[kernel] futex 10\n"
		      "other-3;main 10\n"
		      "other-3;main;[kernel] futex 2\n"
		      "other-3;main;[kernel] futex;[off-cpu];[woken by main-2];b 53\n");
	n = node_at(cct, "main-2;[kernel];[preempted];[woken by main-1];main;a");
	assert_int_equal(n->calls, 1);
	assert_int_equal(n->calls_inferred, 0);
	expect_edges(cct,
		     "[preempted] -> a 1 19 p50 19\n"
		     "main -> b 1 53 p50 53\n");
	assert_int_equal(calls.n, 1);
	assert_true(calls.preempted.woken);
	assert_int_equal(calls.preempted.waker_tid, 1);
	assert_int_equal(calls.preempted.wake_ns, 11);
	check_sums(cct);
	sr_cct_free(cct);
}

/* Without switch records (no first switch-in): the kernel from its
 * creation to its first event, no wait. */
static void test_new_thread_no_switch(void **state)
{
	struct sr_machine *m = new_m(1);
	struct sr_cct *cct;

	(void)state;
	birth(m, 0);
	cct = finish(m, 100);
	expect_stacks(cct,
		      "main-1;main 5\n"
		      "main-1;main;a 55\n"
		      "main-1;main;a;[kernel] clone 10\n"
		      "main-2;[kernel] 29\n"
		      "main-2;b 20\n");
	check_sums(cct);
	sr_cct_free(cct);
}

/* It ran (switched in at 30, out at 35) before its first event at 40:
 * its trace from the switch-in is missing (lost, or a file cut short),
 * so that is [lost], not [kernel]. */
static void test_new_thread_ran_untraced(void **state)
{
	struct sr_machine *m = new_m(0);
	struct sr_cct *cct;

	(void)state;
	comm(m, 1, "main");
	START(m, 1, 0, IP(F_MAIN));
	CALL(m, 1, 5, F_MAIN, F_A);
	SYSCALL(m, 1, 10, F_A, NR_CLONE);
	fork_thread(m, 11, 1, 2);
	RESUME(m, 1, 20, IP(F_A));
	assert_int_equal(sr_machine_first_in(m, 2, 30), 0);
	assert_int_equal(sr_machine_first_out(m, 2, 35), 0);
	RESUME(m, 2, 40, IP(F_B));
	END(m, 2, 60, F_B);
	END(m, 1, 70, F_A);
	cct = finish(m, 100);
	expect_stacks(cct,
		      "main-1;main 5\n"
		      "main-1;main;a 55\n"
		      "main-1;main;a;[kernel] clone 10\n"
		      "main-2;[kernel];[preempted] 19\n"
		      "main-2;[lost] 10\n"
		      "main-2;b 20\n");
	check_sums(cct);
	sr_cct_free(cct);
}

/* What a FORK does not change: a thread that had events already (a tid
 * used again, a FORK out of order), one that never has an event, a FORK
 * with no time (perf's synthesized records), and the first thread, which
 * no FORK made: each starts at its first event, as before. */
static void test_new_thread_not(void **state)
{
	struct sr_machine *m = new_m(0);
	struct sr_cct *cct;

	(void)state;
	comm(m, 1, "main");
	comm(m, 4, "main");
	START(m, 1, 10, IP(F_MAIN));
	assert_int_equal(sr_machine_fork(m, 100, 4, NULL, 100, 1, 15), 0);
	fork_thread(m, 20, 1, 2);          /* never runs */
	assert_int_equal(sr_machine_fork(m, 100, 1, NULL, 100, 3, 0), 0);
	comm(m, 3, "main");
	assert_int_equal(sr_machine_first_in(m, 3, 25), 0);
	START(m, 3, 30, IP(F_B));
	fork_thread(m, 40, 1, 4);
	START(m, 4, 35, IP(F_C));         /* (its first event before the FORK) */
	END(m, 1, 50, F_MAIN);
	END(m, 3, 50, F_B);
	END(m, 4, 50, F_C);
	cct = finish(m, 100);
	expect_stacks(cct,
		      "main-1;main 40\n"
		      "main-3;b 20\n"
		      "main-4;c 15\n");
	assert_int_equal(sr_cct_nthreads(cct), 3);
	sr_cct_free(cct);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mutex_handoff),
		cmocka_unit_test(test_waker_holding),
		cmocka_unit_test(test_off),
		cmocka_unit_test(test_interval_ends),
		cmocka_unit_test(test_condvar),
		cmocka_unit_test(test_pipe),
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_later_caller),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_tid_filter),
		cmocka_unit_test(test_oncpu),
		cmocka_unit_test(test_swapper),
		cmocka_unit_test(test_chain_history),
		cmocka_unit_test(test_waker_named_at_wake),
		cmocka_unit_test(test_new_thread),
		cmocka_unit_test(test_new_thread_wakers),
		cmocka_unit_test(test_new_thread_no_switch),
		cmocka_unit_test(test_new_thread_ran_untraced),
		cmocka_unit_test(test_new_thread_not),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
