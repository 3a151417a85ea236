/* Unit tests: the calling-context tree (stackrebuild/cct.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_stack_util.h"
#include "stackrebuild/cct_internal.h"

static void test_child_find_or_create(void **state)
{
	struct sr_cct *cct = sr_cct_new(&fake_sym);
	struct sr_node *a, *b, *a2, *k;

	(void)state;
	assert_non_null(cct);
	a = sr_cct_child(cct, NULL, SR_NODE_FUNC, F_A);
	b = sr_cct_child(cct, a, SR_NODE_FUNC, F_B);
	a2 = sr_cct_child(cct, b, SR_NODE_FUNC, F_A);   /* same key, other parent */
	assert_ptr_equal(sr_cct_child(cct, NULL, SR_NODE_FUNC, F_A), a);
	assert_ptr_equal(sr_cct_child(cct, a, SR_NODE_FUNC, F_B), b);
	assert_ptr_not_equal(a2, a);
	/* same key, other kind: another node */
	k = sr_cct_child(cct, a, SR_NODE_KERNEL, F_B);
	assert_ptr_not_equal(k, b);
	assert_int_equal(sr_cct_node_count(cct), 4);
	assert_ptr_equal(b->parent, a);
	assert_ptr_equal(a->parent, sr_cct_root(cct));
	assert_string_equal(sr_cct_name(cct, a2, NULL), "a");
	assert_string_equal(sr_cct_name(cct, k, NULL), "[kernel] close");  /* 3 */
	sr_cct_free(cct);
}

static void test_many_children_and_detach(void **state)
{
	struct sr_cct *cct = sr_cct_new(&fake_sym);
	struct sr_node *p = sr_cct_child(cct, NULL, SR_NODE_FUNC, F_MAIN), *q, *nodes[5000];

	(void)state;
	/* wide parent: table growth keeps every child findable */
	for (int i = 0; i < 5000; i++)
		nodes[i] = sr_cct_child(cct, p, SR_NODE_FUNC, 1000 + (uint64_t)i);
	q = sr_cct_child(cct, NULL, SR_NODE_FUNC, F_G);
	for (int i = 0; i < 5000; i++)
		assert_ptr_equal(sr_cct_child(cct, p, SR_NODE_FUNC, 1000 + (uint64_t)i), nodes[i]);
	/* move every third child under q; lookups stay right on both sides */
	for (int i = 0; i < 5000; i += 3) {
		sr_cct_detach(cct, nodes[i]);
		sr_cct_attach(cct, q, nodes[i]);
	}
	for (int i = 0; i < 5000; i++) {
		struct sr_node *want_parent = i % 3 ? p : q;

		assert_ptr_equal(nodes[i]->parent, want_parent);
		assert_ptr_equal(sr_cct_child(cct, want_parent, SR_NODE_FUNC, 1000 + (uint64_t)i),
				 nodes[i]);
	}
	assert_int_equal(sr_cct_node_count(cct), 5002);
	/* a lookup under the old parent creates a new node */
	assert_ptr_not_equal(sr_cct_child(cct, p, SR_NODE_FUNC, 1000), nodes[0]);
	sr_cct_free(cct);
}

static void test_finalize_totals(void **state)
{
	struct sr_cct *cct = sr_cct_new(&fake_sym);
	struct sr_node *m = sr_cct_child(cct, NULL, SR_NODE_FUNC, F_MAIN);
	struct sr_node *a = sr_cct_child(cct, m, SR_NODE_FUNC, F_A);
	struct sr_node *k = sr_cct_child(cct, a, SR_NODE_KERNEL, SR_KEY_NONE);
	struct sr_node *o = sr_cct_child(cct, k, SR_NODE_OFFCPU, 0);
	struct sr_node *b = sr_cct_child(cct, m, SR_NODE_FUNC, F_B);

	(void)state;
	sr_node_add_time(m, SR_TIME_USER, 5);
	sr_node_add_time(a, SR_TIME_USER, 7);
	sr_node_add_time(k, SR_TIME_KERNEL, 3);
	sr_node_add_time(o, SR_TIME_OFFCPU, 100);
	sr_node_add_time(b, SR_TIME_USER, 11);
	sr_node_add_time(b, SR_TIME_LOST, 2);
	sr_cct_finalize(cct);
	assert_int_equal(m->total_ns, 128);
	assert_int_equal(m->self_ns, 5);
	assert_int_equal(a->total_ns, 110);
	assert_int_equal(sr_node_oncpu_ns(a), 10);
	assert_int_equal(sr_node_offcpu_ns(a), 100);
	assert_int_equal(sr_node_kernel_ns(m), 3);
	assert_int_equal(sr_node_lost_ns(m), 2);
	assert_int_equal(b->self_ns, 13);
	assert_int_equal(sr_cct_root(cct)->total_ns, 128);
	assert_string_equal(sr_cct_name(cct, k, NULL), "[kernel]");
	assert_string_equal(sr_cct_name(cct, o, NULL), "[off-cpu]");
	/* finalize is idempotent */
	sr_cct_finalize(cct);
	assert_int_equal(m->total_ns, 128);
	sr_cct_free(cct);
}

static void test_calls_and_merge(void **state)
{
	struct sr_cct *x = sr_cct_new(&fake_sym), *y = sr_cct_new(&fake_sym);
	struct sr_thread_stats t1 = { .tid = 7, .comm = "app", .traced_ns = 10, .events = 3 };
	struct sr_thread_stats t2 = { .tid = 7, .comm = "app", .traced_ns = 5, .events = 2 };
	struct sr_thread_stats t3 = { .tid = 8, .comm = "", .traced_ns = 1 };
	struct sr_node *n;

	(void)state;
	n = sr_cct_child(x, sr_cct_child(x, NULL, SR_NODE_FUNC, F_MAIN), SR_NODE_FUNC, F_A);
	sr_node_add_call(n, true, 100);
	sr_node_add_call(n, false, 0);
	sr_node_add_time(n, SR_TIME_USER, 50);
	n = sr_cct_child(y, sr_cct_child(y, NULL, SR_NODE_FUNC, F_MAIN), SR_NODE_FUNC, F_A);
	sr_node_add_call(n, true, 300);
	sr_node_add_time(n, SR_TIME_USER, 25);
	sr_cct_child(y, n, SR_NODE_LOST, 0);
	sr_cct_set_thread(x, &t1);
	sr_cct_set_thread(y, &t2);
	sr_cct_set_thread(y, &t3);
	assert_int_equal(sr_cct_merge(x, y), 0);
	n = (struct sr_node *)node_at(x, "main;a");
	assert_non_null(n);
	assert_int_equal(n->calls, 3);
	assert_int_equal(n->calls_inferred, 1);
	assert_int_equal(n->lat.count, 2);
	assert_int_equal(n->lat.sum, 400);
	assert_int_equal(n->self_ns, 75);
	assert_non_null(node_at(x, "main;a;[lost]"));
	assert_int_equal(sr_cct_nthreads(x), 2);
	assert_int_equal(sr_cct_thread(x, 0)->traced_ns, 15);
	assert_int_equal(sr_cct_thread(x, 0)->events, 5);
	assert_string_equal(sr_cct_thread(x, 1)->comm, "");
	/* thread frame names */
	n = sr_cct_child(x, NULL, SR_NODE_THREAD, 7);
	assert_string_equal(sr_cct_name(x, n, NULL), "app-7");
	n = sr_cct_child(x, NULL, SR_NODE_THREAD, 8);
	assert_string_equal(sr_cct_name(x, n, NULL), "unknown-8");
	/* y is unchanged */
	assert_int_equal(node_at(y, "main;a")->calls, 1);
	sr_cct_free(x);
	sr_cct_free(y);
}

static void test_merge_deep_tree(void **state)
{
	struct sr_cct *x = sr_cct_new(&fake_sym), *y = sr_cct_new(&fake_sym);
	struct sr_node *n = NULL;

	(void)state;
	/* deeper than a recursive walk would survive comfortably */
	for (int i = 0; i < 200000; i++) {
		n = sr_cct_child(y, n, SR_NODE_FUNC, F_F);
		sr_node_add_time(n, SR_TIME_USER, 1);
	}
	assert_int_equal(sr_cct_merge(x, y), 0);
	assert_int_equal(sr_cct_node_count(x), 200000);
	assert_int_equal(sr_cct_root(x)->total_ns, 200000);
	assert_true(sr_cct_mem_bytes(x) > 200000 * sizeof(struct sr_node));
	sr_cct_free(x);
	sr_cct_free(y);
}

static void test_names_without_symbolizer(void **state)
{
	struct sr_cct *cct = sr_cct_new(NULL);
	struct sr_node *f = sr_cct_child(cct, NULL, SR_NODE_FUNC, 5);

	(void)state;
	assert_string_equal(sr_cct_name(cct, f, NULL), "[unknown]");
	assert_string_equal(sr_cct_name(cct, f, &fake_sym), "d");
	assert_string_equal(sr_cct_name(cct, sr_cct_child(cct, f, SR_NODE_PREEMPT, 0), NULL),
			    "[preempted]");
	assert_string_equal(sr_cct_name(cct, sr_cct_child(cct, f, SR_NODE_KERNEL, 100000), NULL),
			    "[kernel] sys_100000");
	assert_string_equal(sr_cct_name(cct, sr_cct_child(cct, f, SR_NODE_UNKNOWN, 0), NULL),
			    "[unknown]");
	sr_cct_free(cct);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_child_find_or_create),
		cmocka_unit_test(test_many_children_and_detach),
		cmocka_unit_test(test_finalize_totals),
		cmocka_unit_test(test_calls_and_merge),
		cmocka_unit_test(test_merge_deep_tree),
		cmocka_unit_test(test_names_without_symbolizer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
