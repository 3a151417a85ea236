/* Unit tests: the stack machine (stackrebuild/machine.c) on synthetic branch
 * event streams. Times are in ns; each test's comment gives the expected
 * split of the thread's time, derived from the stream by hand. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_stack_util.h"

static struct sr_machine *new_machine(const struct sr_options *opt)
{
	struct sr_machine *m = sr_machine_new(&fake_sym, opt);

	assert_non_null(m);
	return m;
}

static void expect_stacks(const struct sr_cct *cct, const char *want)
{
	char *got = stacks(cct);

	assert_string_equal(got, want);
	free(got);
}

static void expect_calls(const struct sr_cct *cct, const char *path, uint64_t calls,
			 uint64_t inferred)
{
	const struct sr_node *n = node_at(cct, path);

	if (!n)
		fail_msg("no node %s", path);
	if (n->calls != calls || n->calls_inferred != inferred)
		fail_msg("%s: calls %llu inferred %llu, want %llu / %llu", path,
			 (unsigned long long)n->calls, (unsigned long long)n->calls_inferred,
			 (unsigned long long)calls, (unsigned long long)inferred);
}

/* Every nanosecond between each thread's first and last event is on one
 * stack: the identity of DESIGN.md section 4. */
static void expect_identity(const struct sr_cct *cct)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < sr_cct_nthreads(cct); i++) {
		const struct sr_thread_stats *st = sr_cct_thread(cct, i);
		uint64_t by = 0;

		for (int k = 0; k < SR_TIME_NKINDS; k++)
			by += st->traced_by[k];
		assert_int_equal(by, st->traced_ns);
		assert_int_equal(st->kept_ns, st->traced_ns);
		sum += st->traced_ns;
	}
	assert_int_equal(subtree_self(sr_cct_root(cct)), sum);
	assert_int_equal(sr_cct_root(cct)->total_ns, sum);
	assert_int_equal(callees_without_calls(sr_cct_root(cct)), 0);
}

static void expect_wall(const struct sr_cct *cct, size_t i, uint64_t wall)
{
	const struct sr_thread_stats *st = sr_cct_thread(cct, i);

	assert_non_null(st);
	assert_int_equal(st->traced_ns, wall);
	assert_int_equal(st->last_ns - st->first_ns, wall);
}

/* main (already running) calls a, which calls b twice. */
static void feed_nested(struct sr_machine *m, uint32_t tid, uint64_t t)
{
	CALL(m, tid, t + 0, F_MAIN, F_A);
	CALL(m, tid, t + 10, F_A, F_B);
	RET(m, tid, t + 30, F_B, F_A);
	CALL(m, tid, t + 35, F_A, F_B);
	RET(m, tid, t + 45, F_B, F_A);
	RET(m, tid, t + 60, F_A, F_MAIN);
	END(m, tid, t + 100, F_MAIN);
}

static void test_nested_calls(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;
	const struct sr_node *b;

	(void)state;
	feed_nested(m, 1, 1000);
	cct = finish(m, 0);
	/* main: [60,100); a: [0,10)+[30,35)+[45,60); b: [10,30)+[35,45) */
	expect_stacks(cct, "main 40\nmain;a 30\nmain;a;b 30\n");
	expect_calls(cct, "main", 1, 1);       /* entry never seen */
	expect_calls(cct, "main;a", 1, 0);
	expect_calls(cct, "main;a;b", 2, 0);
	b = node_at(cct, "main;a;b");
	assert_int_equal(b->lat.count, 2);
	assert_int_equal(b->lat.min, 10);
	assert_int_equal(b->lat.max, 20);
	assert_int_equal(b->lat.sum, 30);
	assert_int_equal(node_at(cct, "main;a")->lat.sum, 60);
	assert_int_equal(node_at(cct, "main")->lat.count, 0);
	assert_int_equal(node_at(cct, "main;a")->total_ns, 60);
	assert_int_equal(node_at(cct, "main")->total_ns, 100);
	assert_int_equal(node_at(cct, "main;a")->total_by[SR_TIME_USER], 60);
	expect_identity(cct);
	expect_wall(cct, 0, 100);
	sr_cct_free(cct);
}

/* counts_only keeps each node's latency count, sum, min and max as the
 * full histogram does, without its buckets. */
static void test_counts_only(void **state)
{
	static const char *const paths[] = { "main", "main;a", "main;a;b" };
	struct sr_options o = { .counts_only = true };
	struct sr_machine *full = new_machine(NULL), *counts = new_machine(&o);
	struct sr_cct *a, *b;

	(void)state;
	feed_nested(full, 1, 1000);
	feed_nested(counts, 1, 1000);
	a = finish(full, 0);
	b = finish(counts, 0);
	expect_stacks(b, "main 40\nmain;a 30\nmain;a;b 30\n");
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		const struct sr_node *x = node_at(a, paths[i]), *y = node_at(b, paths[i]);

		assert_int_equal(y->calls, x->calls);
		assert_int_equal(y->calls_inferred, x->calls_inferred);
		assert_int_equal(y->lat.count, x->lat.count);
		assert_int_equal(y->lat.sum, x->lat.sum);
		assert_int_equal(y->lat.min, x->lat.min);
		assert_int_equal(y->lat.max, x->lat.max);
		assert_int_equal(y->lat.nb, 0);
	}
	assert_int_equal(node_at(a, "main;a;b")->lat.nb, 2);
	sr_cct_free(a);
	sr_cct_free(b);
}

static void test_recursion(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_F);
	CALL(m, 1, 10, F_F, F_F);
	CALL(m, 1, 20, F_F, F_F);
	RET(m, 1, 30, F_F, F_F);
	RET(m, 1, 40, F_F, F_F);
	RET(m, 1, 50, F_F, F_MAIN);
	END(m, 1, 60, F_MAIN);
	cct = finish(m, 0);
	/* Frames, not keys: each depth is its own context. */
	expect_stacks(cct, "main 10\nmain;f 20\nmain;f;f 20\nmain;f;f;f 10\n");
	expect_calls(cct, "main;f", 1, 0);
	expect_calls(cct, "main;f;f", 1, 0);
	expect_calls(cct, "main;f;f;f", 1, 0);
	assert_int_equal(node_at(cct, "main;f")->lat.sum, 50);
	assert_int_equal(node_at(cct, "main;f;f")->lat.sum, 30);
	assert_int_equal(node_at(cct, "main;f;f;f")->lat.sum, 10);
	expect_identity(cct);
	sr_cct_free(cct);
}

static void test_tail_call_and_plt(void **state)
{
	struct sr_options o = { .show_plt = true };
	struct sr_machine *m = new_machine(&o);
	struct sr_cct *cct;

	(void)state;
	/* a tail-calls b: b replaces a and returns straight to main. */
	CALL(m, 1, 0, F_MAIN, F_A);
	JMP(m, 1, 10, F_A, ENTRY(F_B));
	RET(m, 1, 30, F_B, F_MAIN);
	/* main calls b through its PLT stub. */
	CALL(m, 1, 40, F_MAIN, F_PLT_B);
	JMP(m, 1, 42, F_PLT_B, ENTRY(F_B));
	RET(m, 1, 52, F_B, F_MAIN);
	END(m, 1, 60, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 18\nmain;a 10\nmain;b 30\nmain;b@plt 2\n");
	expect_calls(cct, "main;a", 1, 0);
	expect_calls(cct, "main;b", 2, 0);
	expect_calls(cct, "main;b@plt", 1, 0);
	assert_int_equal(node_at(cct, "main;b")->lat.sum, 20 + 10);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* Without show_plt (the default) a PLT stub that jumps on is the same call
 * in its target: one frame, the stub's time and start kept (latency from
 * the call of the stub), also through the unnamed PLT header and when the
 * jump is unseen; a stub that made a call (the lazy resolver) stays. */
static void test_plt_folded(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_PLT_B);
	JMP(m, 1, 2, F_PLT_B, ENTRY(F_B));
	RET(m, 1, 12, F_B, F_MAIN);
	CALL(m, 1, 20, F_MAIN, F_PLT_B);       /* its jmp unseen: b calls c */
	CALL(m, 1, 23, F_B, F_C);
	RET(m, 1, 30, F_C, F_B);
	RET(m, 1, 35, F_B, F_MAIN);
	END(m, 1, 40, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 13\nmain;b 20\nmain;b;c 7\n");
	expect_calls(cct, "main;b", 2, 0);
	assert_int_equal(node_at(cct, "main;b")->lat.sum, 12 + 15);
	expect_identity(cct);
	sr_cct_free(cct);

	/* through the unnamed PLT header (functions starts unknown) */
	m = sr_machine_new(&fake_sym_nostart, NULL);
	CALL(m, 1, 0, F_MAIN, F_F);
	CALL(m, 1, 10, F_F, F_PLT_B);
	feed_ev(m, 1, 12, DC_EV_JUMP, 0, IP(F_PLT_B), 0x10, 0, 0);
	feed_ev(m, 1, 14, DC_EV_JUMP, 0, 0x18, ENTRY(F_B), 0, 0);
	RET(m, 1, 20, F_B, F_F);
	RET(m, 1, 25, F_F, F_MAIN);
	END(m, 1, 30, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 5\nmain;f 15\nmain;f;b 10\n");
	expect_calls(cct, "main;f;b", 1, 0);
	assert_int_equal(node_at(cct, "main;f;b")->lat.sum, 10);
	expect_identity(cct);
	sr_cct_free(cct);

	/* A stub call that calls (lazy binding) stays a frame of its own.
	 * That is decided per call: the next calls of the same stub from the
	 * same place still fold (only their own time in the stub moves),
	 * whatever the stub's node did before. */
	m = new_machine(NULL);
	CALL(m, 1, 0, F_MAIN, F_PLT_B);
	CALL(m, 1, 2, F_PLT_B, F_C);
	RET(m, 1, 8, F_C, F_PLT_B);
	JMP(m, 1, 10, F_PLT_B, ENTRY(F_B));
	RET(m, 1, 15, F_B, F_MAIN);
	CALL(m, 1, 20, F_MAIN, F_PLT_B);
	JMP(m, 1, 23, F_PLT_B, ENTRY(F_B));
	RET(m, 1, 30, F_B, F_MAIN);
	END(m, 1, 40, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 15\nmain;b 15\nmain;b@plt 4\nmain;b@plt;c 6\n");
	expect_calls(cct, "main;b@plt", 1, 0);
	expect_calls(cct, "main;b", 2, 0);
	assert_int_equal(node_at(cct, "main;b")->lat.sum, 5 + 10);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* _Unwind_DeleteException's jump to the exception's cleanup function, in
 * unnamed code (libstdc++'s), is a tail call, even with unnamed code (a
 * std::thread's start routine) further down; _Unwind_RaiseException's jump
 * into the middle of a function further down is a landing pad: pop to it. */
static void test_unwinder_jumps(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_UNNAMED);
	CALL(m, 1, 10, F_UNNAMED, F_B);
	CALL(m, 1, 20, F_B, F_UNW_DEL);
	JMP(m, 1, 25, F_UNW_DEL, BASE(F_UNNAMED) + 0x200);
	RET(m, 1, 30, F_UNNAMED, F_B);
	CALL(m, 1, 32, F_B, F_C);
	CALL(m, 1, 34, F_C, F_UNW_RAISE);
	JMP(m, 1, 36, F_UNW_RAISE, IP(F_B) + 8);
	RET(m, 1, 40, F_B, F_UNNAMED);
	RET(m, 1, 50, F_UNNAMED, F_MAIN);
	END(m, 1, 60, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 10\nmain;[unknown] (lib) 20\nmain;[unknown] (lib);b 16\n"
			   "main;[unknown] (lib);b;[unknown] (lib) 5\n"
			   "main;[unknown] (lib);b;_Unwind_DeleteException 5\n"
			   "main;[unknown] (lib);b;c 2\n"
			   "main;[unknown] (lib);b;c;_Unwind_RaiseException 2\n");
	expect_calls(cct, "main;[unknown] (lib);b", 1, 0);
	expect_calls(cct, "main;[unknown] (lib);b;[unknown] (lib)", 1, 0);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* g (called by f) tail-calls f: with function starts known, the jump to
 * f's entry is a new f frame replacing g, not a return to the f below. */
static void test_mutual_tail_recursion(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_F);
	CALL(m, 1, 10, F_F, F_G);
	JMP(m, 1, 20, F_G, ENTRY(F_F));
	RET(m, 1, 30, F_F, F_F);
	RET(m, 1, 40, F_F, F_MAIN);
	END(m, 1, 50, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 10\nmain;f 20\nmain;f;f 10\nmain;f;g 10\n");
	expect_calls(cct, "main;f;f", 1, 0);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* Without function starts, a jump to a function further down the stack is
 * still a tail call unless it comes out of an unwinder; a jump into unnamed
 * code (a PLT header) sharing its key with a frame further down too. */
static void test_jump_down_without_starts(void **state)
{
	struct sr_machine *m = sr_machine_new(&fake_sym_nostart, NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_F);
	CALL(m, 1, 10, F_F, F_G);
	JMP(m, 1, 20, F_G, ENTRY(F_F));        /* not known as an entry */
	RET(m, 1, 30, F_F, F_F);
	RET(m, 1, 40, F_F, F_MAIN);
	END(m, 1, 50, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 10\nmain;f 20\nmain;f;f 10\nmain;f;g 10\n");
	sr_cct_free(cct);

	/* unnamed code (key [unknown]) calls f, whose PLT stub jumps to the
	 * unnamed PLT header: a new [unknown] frame, not a return to the old */
	m = sr_machine_new(&fake_sym_nostart, &(struct sr_options){ .show_plt = true });
	feed_ev(m, 1, 0, DC_EV_CALL, 0, IP(F_MAIN), 0x20, 0, 0);
	feed_ev(m, 1, 5, DC_EV_CALL, 0, 0x28, ENTRY(F_F), 0, 0);
	CALL(m, 1, 10, F_F, F_PLT_B);
	feed_ev(m, 1, 12, DC_EV_JUMP, 0, IP(F_PLT_B), 0x10, 0, 0);
	feed_ev(m, 1, 14, DC_EV_JUMP, 0, 0x18, ENTRY(F_B), 0, 0);
	RET(m, 1, 20, F_B, F_F);
	feed_ev(m, 1, 25, DC_EV_RETURN, 0, IP(F_F), 0x30, 0, 0);
	feed_ev(m, 1, 30, DC_EV_RETURN, 0, 0x40, IP(F_MAIN), 0, 0);
	END(m, 1, 35, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 5\nmain;[unknown] 10\nmain;[unknown];f 10\n"
			   "main;[unknown];f;[unknown] 2\nmain;[unknown];f;b 6\n"
			   "main;[unknown];f;b@plt 2\n");
	expect_identity(cct);
	sr_cct_free(cct);
}

static void test_longjmp_and_exception(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	CALL(m, 1, 10, F_A, F_B);
	CALL(m, 1, 20, F_B, F_LONGJMP);
	/* __longjmp jumps into the middle of a: b and __longjmp end here */
	JMP(m, 1, 30, F_LONGJMP, IP(F_A));
	CALL(m, 1, 40, F_A, F_B);
	CALL(m, 1, 45, F_B, F_C);
	/* an exception unwinds from c into a's landing pad by a return */
	RET(m, 1, 50, F_C, F_A);
	RET(m, 1, 60, F_A, F_MAIN);
	END(m, 1, 70, F_MAIN);
	cct = finish(m, 0);
	/* a: [0,10)+[30,40)+[50,60); b: [10,20)+[40,45); c: [45,50) */
	expect_stacks(cct, "main 10\nmain;a 30\nmain;a;b 15\nmain;a;b;__longjmp 10\n"
			   "main;a;b;c 5\n");
	expect_calls(cct, "main;a", 1, 0);
	expect_calls(cct, "main;a;b", 2, 0);
	expect_calls(cct, "main;a;b;c", 1, 0);
	expect_calls(cct, "main;a;b;__longjmp", 1, 0);
	assert_int_equal(node_at(cct, "main;a;b")->lat.sum, 20 + 10);
	assert_int_equal(node_at(cct, "main;a;b;c")->lat.sum, 5);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* A jump into the middle of a function further down unwinds to it from any
 * function (OCaml's raise, Go's gogo resuming the goroutine that parked),
 * not only out of a longjmp; a stack switcher (gogo) resuming a function
 * that is not on the stack starts a new stack there (another goroutine). */
static void test_unwinding_jumps(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	CALL(m, 1, 10, F_A, F_B);
	CALL(m, 1, 20, F_B, F_B);
	CALL(m, 1, 30, F_B, F_C);
	JMP(m, 1, 40, F_C, IP(F_A));           /* raise: to a's handler   */
	RET(m, 1, 50, F_A, F_MAIN);
	/* main -> d -> gogo, which resumes d (the same goroutine) */
	CALL(m, 1, 60, F_MAIN, F_D);
	CALL(m, 1, 65, F_D, F_GOGO);
	JMP(m, 1, 70, F_GOGO, IP(F_D));
	RET(m, 1, 80, F_D, F_MAIN);
	/* ... and gogo resuming f, which is not on the stack: f's stack */
	CALL(m, 1, 90, F_MAIN, F_GOGO);
	JMP(m, 1, 95, F_GOGO, IP(F_F));
	RET(m, 1, 100, F_F, F_G);
	END(m, 1, 110, F_G);
	cct = finish(m, 0);
	expect_stacks(cct, "g 10\ng;f 5\nmain 20\nmain;a 20\nmain;a;b 10\nmain;a;b;b 10\n"
			   "main;a;b;b;c 10\nmain;d 15\nmain;d;gogo 5\nmain;gogo 5\n");
	expect_calls(cct, "main;a", 1, 0);
	expect_calls(cct, "main;a;b;b;c", 1, 0);
	expect_calls(cct, "main;d", 1, 0);
	expect_calls(cct, "g;f", 1, 1);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* -O2 splits a function's unlikely blocks into a .cold part of its own
 * (a symbol, an FDE), entered by a jump and jumping back into the middle of
 * the hot part: the same call going on, not an unwinding jump, also when
 * the function is further down (recursion). c is f's cold part here; an
 * unwinding jump from a function that jumped out of another one still
 * unwinds (b -> c -> a's middle). */
static void test_cold_part_rejoins(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_F);
	CALL(m, 1, 10, F_F, F_F);
	JMP(m, 1, 20, F_F, ENTRY(F_C));        /* into f.cold            */
	CALL(m, 1, 25, F_C, F_D);
	RET(m, 1, 30, F_D, F_C);
	JMP(m, 1, 35, F_C, IP(F_F));           /* back into inner f      */
	RET(m, 1, 40, F_F, F_F);
	RET(m, 1, 50, F_F, F_MAIN);
	CALL(m, 1, 60, F_MAIN, F_A);
	CALL(m, 1, 65, F_A, F_B);
	JMP(m, 1, 70, F_B, ENTRY(F_C));
	JMP(m, 1, 75, F_C, IP(F_A));           /* raise: to a's handler  */
	RET(m, 1, 80, F_A, F_MAIN);
	END(m, 1, 90, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 20\nmain;a 10\nmain;a;b 5\nmain;a;c 5\nmain;f 20\nmain;f;c 10\n"
			   "main;f;c;d 5\nmain;f;f 15\n");
	expect_calls(cct, "main;f", 1, 0);
	expect_calls(cct, "main;f;f", 2, 0);
	expect_calls(cct, "main;f;c", 1, 0);
	expect_calls(cct, "main;a;c", 1, 0);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* A named .cold part ("f.cold") is f's code: the symbolizer gives its
 * addresses f's key and f's entry as their function's start (decoder/
 * symbols.c), so the jumps into it and back are within the top frame, its
 * calls are f's callees, its return is f's, an unwinder's jump to a landing
 * pad in it goes back to f's frame, and a trace that starts in it is in f
 * (an inferred call). Here f.cold lies at COLD_F (after every function). */
#define COLD_F (BASE(F_NFUNCS) + 0x100)
static uint64_t cold_key(void *ctx, uint32_t pid, uint64_t ip)
{
	return ip >= COLD_F && ip < COLD_F + 0x100 ? F_F : fake_key(ctx, pid, ip);
}

static uint64_t cold_start(void *ctx, uint32_t pid, uint64_t ip)
{
	return ip >= COLD_F && ip < COLD_F + 0x100 ? ENTRY(F_F) : fake_start(ctx, pid, ip);
}

static void test_cold_part_named(void **state)
{
	static const struct sr_symbolizer sym = {
		.func_key = cold_key, .name = fake_name, .func_start = cold_start,
	};
	struct sr_machine *m = sr_machine_new(&sym, NULL);
	struct sr_cct *cct;

	(void)state;
	assert_non_null(m);
	CALL(m, 1, 0, F_MAIN, F_F);
	JMP(m, 1, 10, F_F, COLD_F);                       /* into f.cold     */
	feed_ev(m, 1, 15, DC_EV_CALL, 0, COLD_F + 8, ENTRY(F_D), 0, 0);
	feed_ev(m, 1, 20, DC_EV_RETURN, 0, IP(F_D), COLD_F + 13, 0, 0);
	feed_ev(m, 1, 25, DC_EV_JUMP, 0, COLD_F + 20, IP(F_F), 0, 0);  /* back */
	RET(m, 1, 30, F_F, F_MAIN);
	CALL(m, 1, 40, F_MAIN, F_F);
	JMP(m, 1, 45, F_F, COLD_F + 0x30);
	feed_ev(m, 1, 50, DC_EV_RETURN, 0, COLD_F + 0x38, IP(F_MAIN), 0, 0); /* f returns */
	CALL(m, 1, 60, F_MAIN, F_F);
	CALL(m, 1, 65, F_F, F_G);
	CALL(m, 1, 70, F_G, F_UNW_RAISE);
	feed_ev(m, 1, 75, DC_EV_JUMP, 0, IP(F_UNW_RAISE), COLD_F + 0x50, 0, 0); /* pad */
	feed_ev(m, 1, 80, DC_EV_RETURN, 0, COLD_F + 0x58, IP(F_MAIN), 0, 0);
	END(m, 1, 90, F_MAIN);
	/* thread 2 starts inside f.cold, then f returns to main */
	START(m, 2, 0, COLD_F + 0x20);
	feed_ev(m, 2, 10, DC_EV_RETURN, 0, COLD_F + 0x28, IP(F_MAIN), 0, 0);
	END(m, 2, 20, F_MAIN);
	cct = finish(m, 0);
	/* main: [30,40)+[50,60)+[80,90) and thread 2's [10,20); f:
	 * [0,15)+[20,30)+[40,50)+[60,65)+[75,80) and thread 2's [0,10) */
	expect_stacks(cct, "main 40\nmain;f 55\nmain;f;d 5\nmain;f;g 5\n"
			   "main;f;g;_Unwind_RaiseException 5\n");
	expect_calls(cct, "main;f", 4, 1);
	expect_calls(cct, "main;f;d", 1, 0);
	expect_calls(cct, "main;f;g", 1, 0);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* The trace started in deeper (record --start deeper); a longjmp goes to
 * try_it, above the root: try_it becomes the inferred caller of everything
 * so far, nothing nests under deeper. */
static void test_longjmp_above_root(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	START(m, 1, 0, ENTRY(F_B));            /* b: deeper              */
	CALL(m, 1, 10, F_B, F_C);
	CALL(m, 1, 20, F_C, F_LONGJMP);
	JMP(m, 1, 30, F_LONGJMP, IP(F_A));     /* into a (try_it)        */
	RET(m, 1, 40, F_A, F_MAIN);
	CALL(m, 1, 50, F_MAIN, F_A);
	RET(m, 1, 55, F_A, F_MAIN);
	END(m, 1, 60, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 15\nmain;a 15\nmain;a;b 10\nmain;a;b;c 10\n"
			   "main;a;b;c;__longjmp 10\n");
	expect_calls(cct, "main", 1, 1);
	expect_calls(cct, "main;a", 2, 1);
	expect_calls(cct, "main;a;b", 1, 0);  /* entry seen, end seen    */
	expect_calls(cct, "main;a;b;c", 1, 0);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* With every jump shown (DC_BR_JUMPS_SEEN), a branch out of another
 * function than the top frame's came there by falling through (a label
 * inside the function): the same frame, no call; returns into that label
 * find the frame. Without the flag the old repair (an unseen jump) holds. */
static void test_fall_through(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	feed_ev(m, 1, 0, DC_EV_CALL, DC_BR_JUMPS_SEEN, IP(F_MAIN), ENTRY(F_A), 0, 0);
	/* a runs on into c's symbol, makes a syscall there, calls d, whose
	 * return lands in c's part of a, which returns to main */
	SYSCALL(m, 1, 10, F_C, 1);
	RESUME(m, 1, 20, IP(F_C) + 2);
	feed_ev(m, 1, 30, DC_EV_CALL, DC_BR_JUMPS_SEEN, IP(F_C), ENTRY(F_D), 0, 0);
	feed_ev(m, 1, 40, DC_EV_RETURN, DC_BR_JUMPS_SEEN, IP(F_D), IP(F_C), 0, 0);
	feed_ev(m, 1, 50, DC_EV_RETURN, DC_BR_JUMPS_SEEN, IP(F_C), IP(F_MAIN), 0, 0);
	END(m, 1, 60, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 10\nmain;a 30\nmain;a;[kernel] write 10\nmain;a;d 10\n");
	expect_calls(cct, "main;a", 1, 0);
	assert_int_equal(node_at(cct, "main;a")->lat.sum, 50);
	expect_identity(cct);
	sr_cct_free(cct);

	/* the same stream without the flag: c replaced a (a jump unseen) */
	m = new_machine(NULL);
	CALL(m, 1, 0, F_MAIN, F_A);
	SYSCALL(m, 1, 10, F_C, 1);
	RESUME(m, 1, 20, IP(F_C) + 2);
	END(m, 1, 30, F_C);
	cct = finish(m, 0);
	expect_stacks(cct, "main;a 10\nmain;c 10\nmain;c;[kernel] write 10\n");
	sr_cct_free(cct);
}

/* A return to a function that is neither the caller frame's nor further
 * down: a stack switch (swapcontext returning into another context, found
 * with ucontext coroutines on 2026-11-27). The function returned into was
 * not seen entered: an inferred call, not a complete one, even when it
 * returns later. */
static void test_return_switches_stack(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);    /* main calls swapcontext (a)      */
	CALL(m, 1, 10, F_A, F_C);
	RET(m, 1, 20, F_C, F_A);
	RET(m, 1, 30, F_A, F_B);       /* a returns into b, on its stack  */
	CALL(m, 1, 40, F_B, F_D);
	RET(m, 1, 50, F_D, F_B);
	RET(m, 1, 60, F_B, F_START);   /* b returns: a caller above it   */
	END(m, 1, 70, F_START);
	cct = finish(m, 0);
	expect_stacks(cct, "_start 10\n_start;b 20\n_start;b;d 10\n_start;main;a 20\n"
		      "_start;main;a;c 10\n");
	expect_calls(cct, "_start;main;a", 1, 0);
	expect_calls(cct, "_start;b", 1, 1);
	expect_calls(cct, "_start;b;d", 1, 0);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* A return to the first byte of the function after the caller frame's:
 * right after the caller's call (it was the caller's last instruction:
 * ld.so's _start calling _dl_start, running on in _dl_start_user) the
 * caller goes on there; anywhere else that call could not return to, it
 * is a stack switch like any other (swapcontext into a coroutine b whose
 * function follows a's; before, 2026-11-27, a went on as b, and the truth
 * model did the same, so no recording showed b, a function that ran). */
static void test_return_to_next_function(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	feed_ev(m, 1, 10, DC_EV_CALL, 0, BASE(F_B) - 5, ENTRY(F_C), 0, 0);
	feed_ev(m, 1, 20, DC_EV_RETURN, 0, IP(F_C), ENTRY(F_B), 0, 0);
	CALL(m, 1, 30, F_B, F_D);
	RET(m, 1, 40, F_D, F_B);
	RET(m, 1, 50, F_B, F_MAIN);
	END(m, 1, 60, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 10\nmain;a 30\nmain;a;c 10\nmain;a;d 10\n");
	expect_calls(cct, "main;a", 1, 0);
	expect_identity(cct);
	sr_cct_free(cct);

	m = new_machine(NULL);
	CALL(m, 1, 0, F_MAIN, F_A);
	CALL(m, 1, 10, F_A, F_C);              /* from a's middle: swapcontext */
	feed_ev(m, 1, 20, DC_EV_RETURN, 0, IP(F_C), ENTRY(F_B), 0, 0);
	CALL(m, 1, 30, F_B, F_D);
	RET(m, 1, 40, F_D, F_B);
	RET(m, 1, 50, F_B, F_MAIN);
	END(m, 1, 60, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 10\nmain;a 10\nmain;a;c 10\nmain;b 20\nmain;b;d 10\n");
	expect_calls(cct, "main;b", 1, 1);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* Kernel code in the trace: frames under [kernel] on the faulting stack,
 * entered at the fault's entry point; calls, returns and tail jumps as in
 * user code; all end at the return to user mode. */
static void test_kernel_frames(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	feed_ev(m, 1, 10, DC_EV_TRACE_OFF, DC_OFF_FAULT, IP(F_A), KBASE(1), 0, 0);
	feed_ev(m, 1, 20, DC_EV_CALL, 0, KIP(1), KBASE(2), 0, 0);
	feed_ev(m, 1, 30, DC_EV_RETURN, 0, KIP(2), KIP(1) + 5, 0, 0);
	feed_ev(m, 1, 40, DC_EV_JUMP, 0, KIP(1) + 9, KBASE(3), 0, 0);
	RESUME(m, 1, 50, IP(F_A));
	END(m, 1, 60, F_A);
	cct = finish(m, 0);
	expect_stacks(cct, "main;a 20\nmain;a;[kernel];k1 20\nmain;a;[kernel];k1;k2 10\n"
			   "main;a;[kernel];k3 10\n");
	expect_calls(cct, "main;a;[kernel]", 1, 0);
	expect_calls(cct, "main;a;[kernel];k1", 1, 0);
	expect_calls(cct, "main;a;[kernel];k1;k2", 1, 0);
	expect_calls(cct, "main;a;[kernel];k3", 1, 0);
	assert_int_equal(node_at(cct, "main;a;[kernel]")->total_by[SR_TIME_KERNEL], 40);
	expect_identity(cct);
	sr_cct_free(cct);

	/* kernel code has .cold parts too: k1 calls k1, the inner call jumps
	 * into its cold part k2 and back into its middle: no unwinding */
	m = new_machine(NULL);
	CALL(m, 1, 0, F_MAIN, F_A);
	feed_ev(m, 1, 10, DC_EV_TRACE_OFF, DC_OFF_FAULT, IP(F_A), KBASE(1), 0, 0);
	feed_ev(m, 1, 20, DC_EV_CALL, 0, KIP(1), KBASE(1), 0, 0);
	feed_ev(m, 1, 30, DC_EV_JUMP, 0, KIP(1), KBASE(2), 0, 0);
	feed_ev(m, 1, 40, DC_EV_JUMP, 0, KIP(2), KIP(1), 0, 0);
	feed_ev(m, 1, 50, DC_EV_RETURN, 0, KIP(1) + 1, KIP(1) + 5, 0, 0);
	RESUME(m, 1, 60, IP(F_A));
	END(m, 1, 70, F_A);
	cct = finish(m, 0);
	expect_stacks(cct, "main;a 20\nmain;a;[kernel];k1 20\nmain;a;[kernel];k1;k1 20\n"
			   "main;a;[kernel];k1;k2 10\n");
	expect_identity(cct);
	sr_cct_free(cct);

	/* after a loss the trace restarts in the kernel: the gap ends there,
	 * kernel time on the old stack, which the user resume then proves */
	m = new_machine(NULL);
	CALL(m, 1, 0, F_MAIN, F_A);
	LOST(m, 1, 10);
	feed_ev(m, 1, 15, DC_EV_TRACE_ON, DC_ON_SYNC, 0, KIP(1), 0, 0);
	RESUME(m, 1, 25, IP(F_A));
	END(m, 1, 30, F_A);
	cct = finish(m, 0);
	expect_stacks(cct, "main;a 15\nmain;a;[kernel];k1 10\nmain;a;[lost] 5\n");
	expect_calls(cct, "main;a;[kernel];k1", 1, 1);
	expect_identity(cct);
	sr_cct_free(cct);
}

static void test_signal_handler(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	FAULT(m, 1, 10, F_A);                  /* interrupted in a       */
	RESUME(m, 1, 12, ENTRY(F_HANDLER));    /* kernel runs a handler  */
	CALL(m, 1, 14, F_HANDLER, F_B);
	RET(m, 1, 16, F_B, F_HANDLER);
	RET(m, 1, 20, F_HANDLER, F_RESTORE);   /* into the trampoline    */
	SYSCALL(m, 1, 21, F_RESTORE, 15);      /* rt_sigreturn           */
	RESUME(m, 1, 23, IP(F_A));             /* back where it was      */
	RET(m, 1, 30, F_A, F_MAIN);
	END(m, 1, 40, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct,
		"main 10\n"
		"main;a 17\n"
		"main;a;[kernel] 2\n"
		"main;a;__restore_rt 1\n"
		"main;a;__restore_rt;[kernel] rt_sigreturn 2\n"
		"main;a;handler 6\n"
		"main;a;handler;b 2\n");
	expect_calls(cct, "main;a", 1, 0);
	expect_calls(cct, "main;a;handler", 1, 0);
	assert_int_equal(node_at(cct, "main;a;handler")->lat.sum, 8);
	expect_calls(cct, "main;a;[kernel]", 1, 0);
	expect_calls(cct, "main;a;__restore_rt;[kernel] rt_sigreturn", 1, 0);
	assert_int_equal(node_at(cct, "main;a")->lat.sum, 30);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* Trace starts inside a signal handler (emu_signal --start handler_work):
 * the handler returns into the trampoline (inferred caller __restore_rt),
 * whose rt_sigreturn (number unknown, as in PT) resumes the interrupted
 * function in its middle. That function was never on this stack: a new
 * segment starts there, its callers inferred from the returns above it,
 * instead of a "handler" pushed on top of the trampoline. */
static void test_sigreturn_into_unseen_frame(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	START(m, 1, 0, ENTRY(F_D));            /* handler_work's entry   */
	RET(m, 1, 6, F_D, F_HANDLER);          /* inferred caller        */
	RET(m, 1, 14, F_HANDLER, F_RESTORE);   /* into the trampoline:
	                                          it replaces the handler,
	                                          it is no caller of it  */
	SYSCALL(m, 1, 16, F_RESTORE, UINT32_MAX); /* rt_sigreturn, unnamed */
	RESUME(m, 1, 18, IP(F_C));             /* mid-c: interrupted     */
	RET(m, 1, 25, F_C, F_B);
	RET(m, 1, 28, F_B, F_A);
	RET(m, 1, 30, F_A, F_MAIN);
	CALL(m, 1, 35, F_MAIN, F_D);
	RET(m, 1, 40, F_D, F_MAIN);
	END(m, 1, 50, F_MAIN);
	cct = finish(m, 0);
	/* d [0,6) handler [6,14) __restore_rt [14,16) [kernel] [16,18);
	 * then c [18,25) b [25,28) a [28,30) main [30,35)+[40,50) d [35,40) */
	expect_stacks(cct,
		"__restore_rt 2\n"
		"__restore_rt;[kernel] 2\n"
		"handler 8\n"
		"handler;d 6\n"
		"main 15\n"
		"main;a 2\n"
		"main;a;b 3\n"
		"main;a;b;c 7\n"
		"main;d 5\n");
	expect_calls(cct, "__restore_rt", 1, 1);
	expect_calls(cct, "__restore_rt;[kernel]", 1, 0);
	expect_calls(cct, "handler", 1, 1);
	expect_calls(cct, "handler;d", 1, 0);
	expect_calls(cct, "main", 1, 1);
	expect_calls(cct, "main;a;b;c", 1, 1);
	expect_calls(cct, "main;d", 1, 0);
	assert_int_equal(sr_cct_thread(cct, 0)->resets, 1);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* The same without func_start (no ip-in-the-middle evidence): a known
 * rt_sigreturn number proves it, even from a restorer with another name,
 * and so does the trampoline's name when the number is unknown. The
 * resumed function is inferred even at its entry (interrupted there). A
 * return into a restorer of another name makes it the handler's inferred
 * caller; into a trampoline by name, the trampoline replaces it. */
static void test_sigreturn_evidence(void **state)
{
	static const struct {
		int restorer;
		uint32_t sysno;
		const char *kernel;
	} v[] = {
		{ F_G, 15, "g;[kernel] rt_sigreturn" },
		{ F_RESTORE, UINT32_MAX, "__restore_rt;[kernel]" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct sr_machine *m = sr_machine_new(&fake_sym_nostart, NULL);
		struct sr_cct *cct;
		char want[256];

		assert_non_null(m);
		START(m, 1, 0, IP(F_HANDLER));
		RET(m, 1, 10, F_HANDLER, v[i].restorer);
		SYSCALL(m, 1, 12, v[i].restorer, v[i].sysno);
		RESUME(m, 1, 15, ENTRY(F_C));
		RET(m, 1, 20, F_C, F_MAIN);
		END(m, 1, 30, F_MAIN);
		cct = finish(m, 0);
		snprintf(want, sizeof(want), "%s 2\n%s 3\n%s%shandler 10\nmain 10\nmain;c 5\n",
			 fn_names[v[i].restorer], v[i].kernel,
			 v[i].restorer == F_RESTORE ? "" : fn_names[v[i].restorer],
			 v[i].restorer == F_RESTORE ? "" : ";");
		expect_stacks(cct, want);
		expect_calls(cct, "main;c", 1, 1);
		expect_identity(cct);
		sr_cct_free(cct);
	}
}

/* Told apart by the ip: after any kernel entry that is not a sigreturn,
 * user mode resumed at a function's first byte (not on the stack) is a
 * signal handler; resumed in the middle of a function that is not on the
 * stack, it is not a handler: that code was interrupted below what the
 * stack knows, so a new segment starts. */
static void test_resume_entry_vs_middle(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	SYSCALL(m, 1, 10, F_A, UINT32_MAX);    /* raise(): tgkill         */
	RESUME(m, 1, 12, ENTRY(F_HANDLER));    /* handler: pushed         */
	FAULT(m, 1, 20, F_HANDLER);            /* page fault in it        */
	RESUME(m, 1, 22, IP(F_C));             /* mid-c, unseen: no handler */
	RET(m, 1, 30, F_C, F_B);
	END(m, 1, 40, F_B);
	cct = finish(m, 0);
	expect_stacks(cct,
		"b 10\nb;c 8\nmain;a 10\nmain;a;[kernel] 2\nmain;a;handler 8\n"
		"main;a;handler;[kernel] 2\n");
	expect_calls(cct, "main;a;handler", 1, 1);
	expect_calls(cct, "main;a;handler;[kernel]", 1, 0);
	assert_null(node_at(cct, "main;a;handler;c"));
	expect_identity(cct);
	sr_cct_free(cct);
}

/* A signal pending when rt_sigreturn unblocks it runs at once: the kernel
 * resumes at the next handler's entry instead of the interrupted code. The
 * trampoline is done (popped); the new handler runs on the interrupted
 * frame. Here the restorer has no telling name and the number is unknown:
 * only "a handler returned into it" says it is the trampoline. */
static void test_sigreturn_pending_signal(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	SYSCALL(m, 1, 10, F_A, UINT32_MAX);    /* raise(): tgkill         */
	RESUME(m, 1, 12, ENTRY(F_HANDLER));
	RET(m, 1, 20, F_HANDLER, F_G);         /* g: a private restorer   */
	SYSCALL(m, 1, 21, F_G, UINT32_MAX);    /* its rt_sigreturn        */
	RESUME(m, 1, 23, ENTRY(F_F));          /* pending handler f       */
	RET(m, 1, 30, F_F, F_RESTORE);
	SYSCALL(m, 1, 31, F_RESTORE, 15);
	RESUME(m, 1, 33, IP(F_A));             /* back in a at last       */
	RET(m, 1, 40, F_A, F_MAIN);
	END(m, 1, 50, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct,
		"main 10\n"
		"main;a 17\n"
		"main;a;[kernel] 2\n"
		"main;a;__restore_rt 1\n"
		"main;a;__restore_rt;[kernel] rt_sigreturn 2\n"
		"main;a;f 7\n"
		"main;a;g 1\n"
		"main;a;g;[kernel] 2\n"
		"main;a;handler 8\n");
	expect_calls(cct, "main;a", 1, 0);
	expect_calls(cct, "main;a;g", 1, 0);
	expect_calls(cct, "main;a;f", 1, 0);
	assert_int_equal(node_at(cct, "main;a;f")->lat.sum, 7);
	assert_null(node_at(cct, "main;a;g;f"));
	assert_int_equal(sr_cct_thread(cct, 0)->resets, 0);
	expect_identity(cct);
	sr_cct_free(cct);
}

static void test_start_mid_stack(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;
	struct sr_machine_stats st;

	(void)state;
	CALL(m, 1, 0, F_C, F_D);       /* trace starts inside c          */
	RET(m, 1, 10, F_D, F_C);
	RET(m, 1, 20, F_C, F_B);       /* b is c's caller: below c       */
	CALL(m, 1, 30, F_B, F_D);
	RET(m, 1, 35, F_D, F_B);
	RET(m, 1, 40, F_B, F_A);       /* a below b                      */
	RET(m, 1, 50, F_A, F_MAIN);    /* main below a                   */
	sr_machine_stats(m, &st);
	assert_int_equal(st.underflows, 3);
	END(m, 1, 60, F_MAIN);
	cct = finish(m, 0);
	/* The earliest time lands on the full path it ran under. */
	expect_stacks(cct,
		"main 10\nmain;a 10\nmain;a;b 15\nmain;a;b;c 10\nmain;a;b;c;d 10\n"
		"main;a;b;d 5\n");
	expect_calls(cct, "main", 1, 1);
	expect_calls(cct, "main;a", 1, 1);
	expect_calls(cct, "main;a;b", 1, 1);
	expect_calls(cct, "main;a;b;c", 1, 1);
	expect_calls(cct, "main;a;b;c;d", 1, 0);
	expect_calls(cct, "main;a;b;d", 1, 0);
	assert_int_equal(sr_cct_thread(cct, 0)->underflows, 3);
	expect_identity(cct);
	expect_wall(cct, 0, 60);
	sr_cct_free(cct);
}

/* The trace starts (or resumes after an overflow) in a function called by
 * the lazy resolver, which then jumps on to the symbol it bound: the
 * resolver's frame, made by the return into it, made a call, so it stays a
 * frame of its own (with its call counted) and is not folded into the
 * target; every frame with callees has calls. */
static void test_underflow_into_stub(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_C, F_D);               /* the trace starts in c     */
	RET(m, 1, 4, F_D, F_C);
	RET(m, 1, 10, F_C, F_PLT_B);           /* c returns into the stub   */
	JMP(m, 1, 15, F_PLT_B, ENTRY(F_B));    /* which jumps on to b       */
	RET(m, 1, 20, F_B, F_MAIN);
	END(m, 1, 25, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 5\nmain;b 5\nmain;b@plt 5\nmain;b@plt;c 6\nmain;b@plt;c;d 4\n");
	expect_calls(cct, "main;b@plt", 1, 1);
	expect_calls(cct, "main;b@plt;c", 1, 1);
	expect_calls(cct, "main;b", 1, 0);
	expect_identity(cct);
	expect_wall(cct, 0, 25);
	sr_cct_free(cct);
}

/* Tracing starts exactly at a function's entry: that call's start is seen. */
static void test_start_at_entry(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	START(m, 1, 0, ENTRY(F_A));
	RET(m, 1, 10, F_A, F_MAIN);
	END(m, 1, 20, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 10\nmain;a 10\n");
	expect_calls(cct, "main;a", 1, 0);
	assert_int_equal(node_at(cct, "main;a")->lat.sum, 10);
	expect_calls(cct, "main", 1, 1);
	sr_cct_free(cct);
}

/* Unseen jumps (perf script --itrace=cr shows no jumps): a branch from a
 * function that is not the top frame replaces it; a return to a function
 * that is not the caller replaces the caller, never what lies below. */
static void test_unseen_jumps_repaired(void **state)
{
	struct sr_options o = { .show_plt = true };
	struct sr_machine *m = new_machine(&o);
	struct sr_machine_stats st;
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_PLT_B);        /* PLT stub, its jmp unseen */
	CALL(m, 1, 2, F_B, F_C);               /* so b calls c             */
	RET(m, 1, 12, F_C, F_B);
	RET(m, 1, 20, F_B, F_MAIN);
	CALL(m, 1, 30, F_MAIN, F_A);
	CALL(m, 1, 35, F_A, F_D);
	RET(m, 1, 40, F_D, F_G);               /* d returns into g: a left for g unseen */
	RET(m, 1, 45, F_G, F_MAIN);
	END(m, 1, 50, F_MAIN);
	sr_machine_stats(m, &st);
	assert_int_equal(st.repairs, 2);
	assert_int_equal(st.underflows, 0);
	cct = finish(m, 0);
	expect_stacks(cct, "main 15\nmain;a 5\nmain;a;d 5\nmain;b 8\nmain;b;c 10\nmain;b@plt 2\n"
			   "main;g 5\n");
	expect_identity(cct);
	sr_cct_free(cct);
}

/* f calls itself through its PLT stub, whose jump is unseen: the stub's
 * frame becomes the inner f; the outer f stays. */
static void test_recursion_through_unseen_plt(void **state)
{
	struct sr_options o = { .show_plt = true };
	struct sr_machine *m = new_machine(&o);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_F);
	CALL(m, 1, 10, F_F, F_PLT_B);          /* the stub (named b@plt here) */
	CALL(m, 1, 12, F_F, F_C);              /* inner f, reached unseen   */
	RET(m, 1, 20, F_C, F_F);
	RET(m, 1, 25, F_F, F_F);               /* inner f returns to outer  */
	RET(m, 1, 30, F_F, F_MAIN);
	END(m, 1, 40, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 10\nmain;f 15\nmain;f;b@plt 2\nmain;f;f 5\nmain;f;f;c 8\n");
	expect_calls(cct, "main;f;f", 1, 0);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* A longjmp whose jump is not in the events (perf script --itrace=cr):
 * the next branch comes from a frame further down; out of __longjmp that
 * means pop to it. Out of an ordinary function, a tail call. */
static void test_unseen_longjmp(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	CALL(m, 1, 10, F_A, F_B);
	CALL(m, 1, 20, F_B, F_LONGJMP);
	CALL(m, 1, 30, F_A, F_D);              /* __longjmp jumped into a */
	RET(m, 1, 35, F_D, F_A);
	RET(m, 1, 40, F_A, F_MAIN);
	CALL(m, 1, 50, F_MAIN, F_F);
	CALL(m, 1, 55, F_F, F_G);
	CALL(m, 1, 60, F_F, F_C);              /* g tail-called another f */
	RET(m, 1, 65, F_C, F_F);
	RET(m, 1, 70, F_F, F_F);               /* ... which returns to f  */
	RET(m, 1, 75, F_F, F_MAIN);
	END(m, 1, 80, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 15\nmain;a 15\nmain;a;b 10\nmain;a;b;__longjmp 10\nmain;a;d 5\n"
			   "main;f 10\nmain;f;f 5\nmain;f;f;c 5\nmain;f;g 5\n");
	expect_calls(cct, "main;a;b;__longjmp", 1, 0);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* The symbolizer classifies functions itself. */
static unsigned g_flags(void *ctx, uint64_t key)
{
	(void)ctx;
	return key == F_G ? SR_FUNC_STUB : key == F_D ? SR_FUNC_UNWIND : 0;
}

static void test_func_flags_callback(void **state)
{
	struct sr_options opt = { .func_flags = g_flags };
	struct sr_machine *m = new_machine(&opt);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	CALL(m, 1, 10, F_A, F_D);              /* d: an unwinder now       */
	CALL(m, 1, 20, F_MAIN, F_B);           /* so: pop to main          */
	RET(m, 1, 25, F_B, F_MAIN);
	CALL(m, 1, 30, F_MAIN, F_LONGJMP);     /* "__longjmp": not special */
	CALL(m, 1, 35, F_MAIN, F_C);           /* so: a tail call to main  */
	RET(m, 1, 40, F_C, F_MAIN);
	END(m, 1, 50, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 5\nmain;__longjmp 5\nmain;a 10\nmain;a;d 10\nmain;b 5\n"
			   "main;main 10\nmain;main;c 5\n");
	expect_identity(cct);
	sr_cct_free(cct);
}

/* Recursion entered mid-stack: a return from f into f is a caller f. */
static void test_start_mid_recursion(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	START(m, 1, 0, IP(F_F));
	RET(m, 1, 10, F_F, F_F);
	RET(m, 1, 20, F_F, F_MAIN);
	END(m, 1, 25, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 5\nmain;f 10\nmain;f;f 10\n");
	expect_identity(cct);
	sr_cct_free(cct);
}

static void feed_syscall_block(struct sr_machine *m, uint16_t cpu_in, uint16_t cpu_out)
{
	feed_ev(m, 1, 0, DC_EV_CALL, 0, IP(F_MAIN), ENTRY(F_A), 0, cpu_in);
	feed_ev(m, 1, 10, DC_EV_TRACE_OFF, DC_OFF_SYSCALL, IP(F_A), 0, 202, cpu_in);
	feed_ev(m, 1, 12, DC_EV_TRACE_OFF, DC_OFF_SWITCH, 0, 0, 0, cpu_in);
	feed_ev(m, 1, 50, DC_EV_TRACE_ON, DC_ON_SWITCH, 0, 0, 0, cpu_out);
	feed_ev(m, 1, 52, DC_EV_TRACE_ON, DC_ON_RESUME, 0, IP(F_A), 0, cpu_out);
	feed_ev(m, 1, 60, DC_EV_RETURN, 0, IP(F_A), IP(F_MAIN), 0, cpu_out);
	feed_ev(m, 1, 70, DC_EV_TRACE_OFF, DC_OFF_END, IP(F_MAIN), 0, 0, cpu_out);
}

static const char syscall_block_stacks[] =
	"main 10\n"
	"main;a 18\n"
	"main;a;[kernel] futex 4\n"
	"main;a;[kernel] futex;[off-cpu] 38\n";

static void test_syscall_block_resume(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	const struct sr_thread_stats *st;
	const struct sr_node *a;
	struct sr_cct *cct;

	(void)state;
	feed_syscall_block(m, 0, 0);
	cct = finish(m, 0);
	/* [kernel] then [off-cpu] then [kernel] then user, nested. */
	expect_stacks(cct, syscall_block_stacks);
	expect_calls(cct, "main;a;[kernel] futex", 1, 0);
	expect_calls(cct, "main;a;[kernel] futex;[off-cpu]", 1, 0);
	assert_int_equal(node_at(cct, "main;a;[kernel] futex")->lat.sum, 42);
	assert_int_equal(node_at(cct, "main;a;[kernel] futex;[off-cpu]")->lat.sum, 38);
	a = node_at(cct, "main;a");
	assert_int_equal(sr_node_oncpu_ns(a), 18 + 4);
	assert_int_equal(sr_node_kernel_ns(a), 4);
	assert_int_equal(sr_node_offcpu_ns(a), 38);
	assert_int_equal(a->total_ns, 60);
	st = sr_cct_thread(cct, 0);
	assert_int_equal(st->traced_by[SR_TIME_USER], 28);
	assert_int_equal(st->traced_by[SR_TIME_KERNEL], 4);
	assert_int_equal(st->traced_by[SR_TIME_OFFCPU], 38);
	expect_identity(cct);
	sr_cct_free(cct);
}

static void test_syscall_names(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	SYSCALL(m, 1, 10, F_A, 0);             /* read                   */
	RESUME(m, 1, 11, IP(F_A));
	SYSCALL(m, 1, 20, F_A, 999);           /* no name                */
	RESUME(m, 1, 22, IP(F_A));
	SYSCALL(m, 1, 30, F_A, UINT32_MAX);    /* number unknown         */
	RESUME(m, 1, 33, IP(F_A));
	END(m, 1, 40, F_A);
	cct = finish(m, 0);
	expect_stacks(cct, "main;a 34\nmain;a;[kernel] 3\nmain;a;[kernel] read 1\n"
			   "main;a;[kernel] sys_999 2\n");
	assert_string_equal(sr_syscall_name(202), "futex");
	assert_null(sr_syscall_name(100000));
	expect_identity(cct);
	sr_cct_free(cct);
}

static void test_preemption(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	FAULT(m, 1, 10, F_A);          /* timer interrupt               */
	PREEMPT(m, 1, 11);
	SWIN(m, 1, 20);
	RESUME(m, 1, 21, IP(F_A));
	PREEMPT(m, 1, 25);             /* switch seen with no kernel entry */
	SWIN(m, 1, 27);
	END(m, 1, 30, F_A);
	cct = finish(m, 0);
	expect_stacks(cct, "main;a 17\nmain;a;[kernel] 2\nmain;a;[kernel];[preempted] 9\n"
			   "main;a;[preempted] 2\n");
	assert_int_equal(sr_cct_thread(cct, 0)->traced_by[SR_TIME_PREEMPT], 11);
	assert_int_equal(sr_node_offcpu_ns(node_at(cct, "main;a")), 11);
	expect_identity(cct);
	sr_cct_free(cct);
}

static void test_cpu_migration(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	/* blocked on CPU 3, woken on CPU 7: the thread is what counts */
	feed_syscall_block(m, 3, 7);
	cct = finish(m, 0);
	expect_stacks(cct, syscall_block_stacks);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* Lost data, then the next event's ip is the top function: keep. */
/* An OVF that took the last recursive call with it: after the gap the
 * stack shows one level of f fewer than ran, so an f returns into f with
 * main below it. That is a level the trace lost (an inferred f above
 * main), not main left for f unseen: replacing main made its own return
 * underflow into an inferred main above the old one (main;main, a path no
 * program has). */
static void test_lost_recursion_level(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	START(m, 1, 0, ENTRY(F_MAIN));
	CALL(m, 1, 10, F_MAIN, F_F);
	LOST(m, 1, 20);                /* f called f: not decoded       */
	SYNC(m, 1, 30, IP(F_F));
	CALL(m, 1, 40, F_F, F_F);
	RET(m, 1, 50, F_F, F_F);
	RET(m, 1, 60, F_F, F_F);       /* the lost level returns        */
	RET(m, 1, 70, F_F, F_MAIN);
	RET(m, 1, 80, F_MAIN, F_START);
	END(m, 1, 90, F_START);
	cct = finish(m, 0);
	expect_stacks(cct, "_start 10\n_start;main 20\n_start;main;f 40\n_start;main;f;[lost] 10\n"
			   "_start;main;f;f 10\n");
	expect_calls(cct, "_start;main", 1, 0);  /* one main, entry and return seen */
	expect_identity(cct);
	sr_cct_free(cct);
}

static void test_lost_resync_keep(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	CALL(m, 1, 10, F_A, F_B);
	LOST(m, 1, 20);
	LOST(m, 1, 25);                /* still the same gap           */
	RET(m, 1, 40, F_B, F_A);
	END(m, 1, 50, F_A);
	cct = finish(m, 0);
	expect_stacks(cct, "main;a 20\nmain;a;b 10\nmain;a;b;[lost] 20\n");
	expect_calls(cct, "main;a;b;[lost]", 1, 0);
	expect_calls(cct, "main;a;b", 1, 0);
	assert_int_equal(sr_cct_thread(cct, 0)->lost, 2);
	assert_int_equal(sr_cct_thread(cct, 0)->lost_gaps, 1);
	assert_int_equal(sr_cct_thread(cct, 0)->traced_by[SR_TIME_LOST], 20);
	assert_int_equal(sr_node_lost_ns(node_at(cct, "main")), 20);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* Lost, then execution is in a frame further down: pop to it. */
static void test_lost_resync_pop(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	CALL(m, 1, 10, F_A, F_B);
	LOST(m, 1, 20);
	CALL(m, 1, 40, F_A, F_C);      /* from a: b returned unseen      */
	RET(m, 1, 45, F_C, F_A);
	RET(m, 1, 50, F_A, F_MAIN);
	END(m, 1, 60, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 10\nmain;a 15\nmain;a;b 10\nmain;a;b;[lost] 20\nmain;a;c 5\n");
	expect_calls(cct, "main;a;b", 1, 1);   /* its end was not seen */
	expect_calls(cct, "main;a", 1, 0);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* Lost, then execution is in a function further down, but before the
 * call its frame made last, and the function ran before: the loss may
 * have ended that call, and its callers', and entered the function anew
 * from elsewhere. Its frames below prove nothing: a new segment, whose
 * callers its returns tell (a stress recording of sqlite3 resumed at the
 * start of a sqlite3FindFunction called from sqlite3_create_function and
 * hung it under the sqlite3_create_window_function the loss had ended).
 * Resumed after that call (the same call going on), the stack is kept. */
static void feed_lost_in_f(struct sr_machine *m, uint64_t resume_ip, int caller)
{
	CALL(m, 1, 0, F_MAIN, F_F);
	RET(m, 1, 10, F_F, F_MAIN);    /* f ran before                  */
	CALL(m, 1, 20, F_MAIN, F_A);
	CALL(m, 1, 30, F_A, F_F);
	CALL(m, 1, 40, F_F, F_B);      /* from IP(F_F)                  */
	LOST(m, 1, 50);                /* b, f, a return; d calls f     */
	SYNC(m, 1, 70, resume_ip);
	CALL(m, 1, 80, F_F, F_C);
	RET(m, 1, 90, F_C, F_F);
	RET(m, 1, 100, F_F, caller);
	RET(m, 1, 110, caller, F_MAIN);
	END(m, 1, 120, F_MAIN);
}

static void test_lost_resync_entered_anew(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	feed_lost_in_f(m, ENTRY(F_F) + 4, F_D);
	cct = finish(m, 0);
	expect_stacks(cct, "main 20\nmain;a 10\nmain;a;f 10\nmain;a;f;b 10\n"
			   "main;a;f;b;[lost] 20\nmain;d 10\nmain;d;f 20\nmain;d;f;c 10\n"
			   "main;f 10\n");
	expect_calls(cct, "main;d;f", 1, 1);   /* its entry was not seen */
	assert_int_equal(sr_cct_thread(cct, 0)->resets, 1);
	expect_identity(cct);
	sr_cct_free(cct);

	/* after f's call of b: maybe the same call going on, kept until f's
	 * return tells: into a, it was */
	m = new_machine(NULL);
	feed_lost_in_f(m, IP(F_F) + 5, F_A);
	cct = finish(m, 0);
	assert_non_null(node_at(cct, "main;a;f;c"));
	assert_null(node_at(cct, "main;d;f;c"));
	assert_int_equal(sr_cct_thread(cct, 0)->held_moves, 0);
	expect_identity(cct);
	sr_cct_free(cct);

	/* into d, which the stack kept does not have: a call from code the
	 * loss hid, and c ran under it (a new segment, as if entered anew) */
	m = new_machine(NULL);
	feed_lost_in_f(m, IP(F_F) + 5, F_D);
	cct = finish(m, 0);
	expect_stacks(cct, "main 20\nmain;a 10\nmain;a;f 10\nmain;a;f;b 10\n"
			   "main;a;f;b;[lost] 20\nmain;d 10\nmain;d;f 20\nmain;d;f;c 10\n"
			   "main;f 10\n");
	assert_int_equal(sr_cct_thread(cct, 0)->held_moves, 1);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* After a loss, execution resumed at the first byte of b, which has a
 * frame further down but had run only that once: only a new call of b
 * runs its first byte, so that frame proves nothing. find's two functions
 * that call each other (a calling b calling a), an OVF taking a's second
 * call of b: popping to the b below hung c two levels too high, main;a;b;c,
 * a path the program never had (stress seeds 9145 and 9176). A new
 * segment, whose callers the returns tell. */
static void test_lost_resync_at_entry(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	CALL(m, 1, 10, F_A, F_B);
	CALL(m, 1, 20, F_B, F_A);
	LOST(m, 1, 30);                /* a calls b                     */
	SYNC(m, 1, 40, ENTRY(F_B));
	CALL(m, 1, 50, F_B, F_C);
	RET(m, 1, 60, F_C, F_B);
	RET(m, 1, 70, F_B, F_A);
	RET(m, 1, 80, F_A, F_B);
	RET(m, 1, 90, F_B, F_A);
	RET(m, 1, 100, F_A, F_MAIN);
	END(m, 1, 110, F_MAIN);
	cct = finish(m, 0);
	assert_null(node_at(cct, "main;a;b;c"));
	assert_non_null(node_at(cct, "main;a;b;a;b;c"));
	expect_calls(cct, "main;a;b;a;b;c", 1, 0);
	expect_calls(cct, "main;a;b;a;b", 1, 0);   /* its first byte was seen */
	expect_identity(cct);
	sr_cct_free(cct);
}

/* After a loss, execution resumed at the first byte of b with b's PLT
 * stub on top (a's call of it seen, its jump lost): the stub's jump, b
 * called by a, not a return into the b further down (dlopen's nested
 * _dl_catch_exception, stress seed 4929, where popping to the outer one
 * made paths the program never had). The [lost] went on top of the stub,
 * so, as for a stub that made a call, b's call replaces the stub's at
 * the resume. */
static void test_lost_resync_stub_jump(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_B);
	CALL(m, 1, 10, F_B, F_A);
	CALL(m, 1, 20, F_A, F_PLT_B);
	LOST(m, 1, 30);
	SYNC(m, 1, 40, ENTRY(F_B));
	RET(m, 1, 50, F_B, F_A);
	RET(m, 1, 60, F_A, F_B);
	RET(m, 1, 70, F_B, F_MAIN);
	END(m, 1, 80, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 10\nmain;b 20\nmain;b;a 20\nmain;b;a;b 10\nmain;b;a;b@plt 10\n"
			   "main;b;a;b@plt;[lost] 10\n");
	expect_calls(cct, "main;b;a;b", 1, 0);
	assert_int_equal(sr_cct_thread(cct, 0)->resets, 0);
	expect_identity(cct);
	sr_cct_free(cct);

	/* at the start of another function (what b called, say): nothing
	 * says where the stub went, so a is not taken as c's caller */
	m = new_machine(NULL);
	CALL(m, 1, 0, F_MAIN, F_B);
	CALL(m, 1, 10, F_B, F_A);
	CALL(m, 1, 20, F_A, F_PLT_B);
	LOST(m, 1, 30);
	SYNC(m, 1, 40, ENTRY(F_C));
	END(m, 1, 50, F_C);
	cct = finish(m, 0);
	assert_null(node_at(cct, "main;b;a;c"));
	expect_identity(cct);
	sr_cct_free(cct);
}

/* A function seen under itself only through the returns above the root
 * (f returned into b, which returned into f: f -> b -> f) is recursive as
 * much as one seen calling itself: after a loss, execution in it proves
 * nothing of which level runs, and keeping the root frame of it hung
 * what followed under levels the program never had (a stress recording
 * of bash with --drop-aux, seed 1096: the loss ended the outer subexpr
 * and its returns and entered an inner one, resumed right after its call
 * of expcomma, as the outer one's call had been made; the returns then
 * stacked readtok;subexpr;readtok;subexpr below it). A new segment. */
static void test_lost_resync_recursive_by_returns(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	START(m, 1, 0, IP(F_F));
	RET(m, 1, 10, F_F, F_B);       /* b called f                    */
	RET(m, 1, 20, F_B, F_F);       /* f called b: f -> b -> f       */
	CALL(m, 1, 30, F_F, F_A);
	LOST(m, 1, 40);                /* a, f return; a -> b -> f -> a */
	SYNC(m, 1, 60, IP(F_F) + 5);   /* after a call of a, as f's     */
	RET(m, 1, 70, F_F, F_B);
	RET(m, 1, 80, F_B, F_A);
	END(m, 1, 90, F_A);
	cct = finish(m, 0);
	expect_stacks(cct, "a 10\na;b 10\na;b;f 10\nf 10\nf;a 10\nf;a;[lost] 20\nf;b 10\n"
			   "f;b;f 10\n");
	assert_int_equal(sr_cct_thread(cct, 0)->resets, 1);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* A return to a place not known (DC_LOST_RETURN: the decoder went on at
 * a TIP.PGE or TIP after code it cannot decode, and the function it
 * resumed in returned, its call unseen): that frame ends, the gap is on the
 * frames below, or at the root. */
static void test_lost_return(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	CALL(m, 1, 10, F_A, F_B);
	feed_ev(m, 1, 20, DC_EV_LOST, DC_LOST_RETURN, IP(F_B), 0, 0, 0);
	RESUME(m, 1, 30, IP(F_C));     /* a new segment: c */
	feed_ev(m, 1, 35, DC_EV_LOST, DC_LOST_RETURN, IP(F_C), 0, 0, 0);
	RESUME(m, 1, 50, IP(F_A));
	END(m, 1, 60, F_A);
	cct = finish(m, 0);
	expect_stacks(cct, "[lost] 15\na 10\nc 5\nmain;a 10\nmain;a;[lost] 10\n"
			   "main;a;b 10\n");
	expect_calls(cct, "main;a;b", 1, 0);   /* its return was seen */
	expect_identity(cct);
	sr_cct_free(cct);
}

/* Lost, then execution is somewhere the stack does not explain: start a
 * new stack there; its inferred callers must not adopt the old stack. */
static void test_lost_resync_reset(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	CALL(m, 1, 10, F_A, F_B);
	LOST(m, 1, 20);
	CALL(m, 1, 40, F_D, F_C);
	RET(m, 1, 45, F_C, F_D);
	RET(m, 1, 50, F_D, F_G);
	END(m, 1, 60, F_G);
	cct = finish(m, 0);
	expect_stacks(cct, "g 10\ng;d 5\ng;d;c 5\nmain;a 10\nmain;a;b 10\nmain;a;b;[lost] 20\n");
	expect_calls(cct, "main", 1, 1);
	expect_calls(cct, "main;a", 1, 1);
	expect_calls(cct, "main;a;b", 1, 1);
	expect_calls(cct, "g;d;c", 1, 0);
	assert_int_equal(sr_cct_thread(cct, 0)->resets, 1);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* Lost inside recursion: calls and returns that took no packet before an
 * OVF are never decoded, so the depth is unknown and the resync function's
 * topmost frame proves nothing. Start a new segment rather than keep a
 * stack deeper than the program had. */
static void test_lost_resync_in_recursion(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	CALL(m, 1, 10, F_A, F_A);
	CALL(m, 1, 20, F_A, F_A);
	LOST(m, 1, 30);                /* unseen: two of the a's returned */
	SYNC(m, 1, 40, IP(F_A));
	RET(m, 1, 50, F_A, F_MAIN);
	END(m, 1, 60, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 10\nmain;a 20\nmain;a;a 10\nmain;a;a;a 10\n"
		      "main;a;a;a;[lost] 10\n");
	expect_calls(cct, "main;a;a;a", 1, 1);
	expect_calls(cct, "main;a", 2, 2);     /* old a cut by the reset, new a: both inferred */
	assert_int_equal(sr_cct_thread(cct, 0)->resets, 1);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* Lost, and the trace resumes inside an exception unwinder (or a
 * longjmp); its jump to a landing pad in a function not on the stack
 * (b) proves that b is somewhere below the unwinder, not that b called
 * it (__cxa_throw and the function that threw lie between): a new
 * segment, as for any loss the stack does not explain. (Before: b
 * became the unwinder's inferred caller, b;_Unwind_RaiseException, a
 * path the program never had.) A return out of b then proves its caller,
 * as always. Without a loss the same jump still makes b an inferred
 * caller of everything seen (test_longjmp_above_root). */
static void test_lost_then_unwind_past_root(void **state)
{
	static const int unw[] = { F_UNW_RAISE, F_LONGJMP };

	(void)state;
	for (size_t k = 0; k < 2; k++) {
		struct sr_machine *m = new_machine(NULL);
		struct sr_cct *cct;
		char want[512];
		const char *u = fn_names[unw[k]];

		CALL(m, 1, 0, F_MAIN, F_A);
		LOST(m, 1, 10);
		SYNC(m, 1, 20, IP(unw[k]));     /* resumed inside the unwinder */
		CALL(m, 1, 25, unw[k], F_C);
		RET(m, 1, 30, F_C, unw[k]);
		JMP(m, 1, 35, unw[k], IP(F_B)); /* to a landing pad in b */
		RET(m, 1, 40, F_B, F_MAIN);
		END(m, 1, 50, F_MAIN);
		cct = finish(m, 0);
		snprintf(want, sizeof(want), "%s 10\n%s;c 5\nmain 10\nmain;a 10\n"
			 "main;a;[lost] 10\nmain;b 5\n", u, u);
		expect_stacks(cct, want);
		expect_calls(cct, "main;b", 1, 1);
		assert_int_equal(sr_cct_thread(cct, 0)->resets, 2);
		expect_identity(cct);
		sr_cct_free(cct);
	}
}

/* Lost in a function seen calling itself, and the trace resumes in it:
 * the loss may have taken calls or returns of it, so the frame found
 * proves nothing about the level; the returns seen after it would hang
 * the code that follows at the wrong depth (main;rec;tiny where main
 * called rec four levels further down, as stress recordings of emu_fault
 * and emu_cold showed). A new segment, as for recursion on the stack
 * (test_lost_resync_in_recursion), whether the frame found is the root
 * (its caller unknown: f returned into f above it) or not. */
static void test_lost_in_recursive_function(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	SYNC(m, 1, 0, IP(F_F));                /* the trace starts in f       */
	RET(m, 1, 10, F_F, F_F);               /* f's caller is f            */
	LOST(m, 1, 20);                        /* the OVF took its return     */
	SYNC(m, 1, 30, IP(F_F));
	RET(m, 1, 40, F_F, F_MAIN);
	END(m, 1, 50, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "f 10\nf;[lost] 10\nf;f 10\nmain 10\nmain;f 10\n");
	assert_int_equal(sr_cct_thread(cct, 0)->resets, 1);
	expect_identity(cct);
	sr_cct_free(cct);

	m = new_machine(NULL);
	START(m, 1, 0, ENTRY(F_MAIN));
	CALL(m, 1, 10, F_MAIN, F_F);
	CALL(m, 1, 20, F_F, F_F);              /* f recurses                 */
	RET(m, 1, 30, F_F, F_F);
	LOST(m, 1, 40);                        /* f called f twice, unseen    */
	SYNC(m, 1, 50, IP(F_F));
	CALL(m, 1, 60, F_F, F_C);              /* only the deepest f calls c  */
	RET(m, 1, 70, F_C, F_F);
	RET(m, 1, 80, F_F, F_F);
	END(m, 1, 90, F_F);
	cct = finish(m, 0);
	expect_stacks(cct, "f 10\nf;f 20\nf;f;c 10\nmain 10\nmain;f 20\nmain;f;[lost] 10\n"
		      "main;f;f 10\n");
	assert_int_equal(sr_cct_thread(cct, 0)->resets, 1);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* Lost in a function that is not recursive, with a recursive one below
 * it on the stack, and the trace resumes in it: the loss may have taken
 * returns up out of the levels kept and calls back down, so the kept
 * levels prove nothing. Here the trace starts 3 levels deep in f, two
 * returns show two of them, f calls c, and in the loss c returns, f
 * calls f twice and the deepest calls c again. Keeping the stack, the
 * returns after the gap underflowed past the kept levels into more:
 * main;f;f;f;f;f, in a program whose f recursed 3 deep (as a stress
 * recording of emu_fault showed, rec 11 deep of 9). A new segment, whose
 * callers come from its returns. The same for mutual recursion (a and b
 * calling each other: a key on the stack twice). */
static void test_lost_above_recursion(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	SYNC(m, 1, 0, IP(F_F));                /* the trace starts in f       */
	RET(m, 1, 10, F_F, F_F);
	RET(m, 1, 20, F_F, F_F);
	CALL(m, 1, 30, F_F, F_C);
	LOST(m, 1, 40);
	SYNC(m, 1, 50, IP(F_C));
	RET(m, 1, 60, F_C, F_F);
	RET(m, 1, 70, F_F, F_F);
	RET(m, 1, 80, F_F, F_F);
	RET(m, 1, 90, F_F, F_MAIN);
	END(m, 1, 100, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "f 10\nf;c 10\nf;c;[lost] 10\nf;f 10\nf;f;f 10\nmain 10\nmain;f 10\n"
		      "main;f;f 10\nmain;f;f;f 10\nmain;f;f;f;c 10\n");
	assert_int_equal(sr_cct_thread(cct, 0)->resets, 1);
	expect_identity(cct);
	sr_cct_free(cct);

	m = new_machine(NULL);
	START(m, 1, 0, ENTRY(F_MAIN));
	CALL(m, 1, 10, F_MAIN, F_A);
	CALL(m, 1, 20, F_A, F_B);
	CALL(m, 1, 30, F_B, F_A);              /* a again: never noted as   */
	CALL(m, 1, 40, F_A, F_C);              /* calling itself            */
	LOST(m, 1, 50);
	SYNC(m, 1, 60, IP(F_C));
	RET(m, 1, 70, F_C, F_A);
	RET(m, 1, 80, F_A, F_MAIN);
	END(m, 1, 90, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 20\nmain;a 20\nmain;a;b 10\nmain;a;b;a 10\nmain;a;b;a;c 10\n"
		      "main;a;b;a;c;[lost] 10\nmain;a;c 10\n");
	assert_int_equal(sr_cct_thread(cct, 0)->resets, 1);
	expect_identity(cct);
	sr_cct_free(cct);

	/* Recursion only above the frame resumed in: popped anyway, the
	 * frames kept below it prove what they did. */
	m = new_machine(NULL);
	START(m, 1, 0, ENTRY(F_MAIN));
	CALL(m, 1, 10, F_MAIN, F_A);
	CALL(m, 1, 20, F_A, F_F);
	CALL(m, 1, 30, F_F, F_F);
	CALL(m, 1, 40, F_F, F_C);
	LOST(m, 1, 50);
	SYNC(m, 1, 60, IP(F_A));
	CALL(m, 1, 70, F_A, F_B);
	RET(m, 1, 80, F_B, F_A);
	END(m, 1, 90, F_A);
	cct = finish(m, 0);
	expect_stacks(cct, "main 10\nmain;a 30\nmain;a;b 10\nmain;a;f 10\nmain;a;f;f 10\n"
		      "main;a;f;f;c 10\nmain;a;f;f;c;[lost] 10\n");
	assert_int_equal(sr_cct_thread(cct, 0)->resets, 0);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* Lost, and the trace resumes in unnamed code of the binary the top frame
 * is unnamed code of: all of a binary's unnamed code is one key, so that
 * may be another function, called in the loss (a stress recording of
 * emu_cxxthread: libstdc++'s __do_global_dtors_aux, then its call of
 * deregister_tm_clones lost). Keeping the frame, the return into the
 * caller stacked another inferred frame of the key over everything the
 * segment had: main;U;U;c, where only the first U called c. */
static void test_lost_in_unnamed_code(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	SYNC(m, 1, 0, IP(F_C));                /* the trace starts in c       */
	RET(m, 1, 10, F_C, F_UNNAMED);
	LOST(m, 1, 20);
	SYNC(m, 1, 30, IP(F_UNNAMED) + 0x100); /* another unnamed function    */
	RET(m, 1, 40, F_UNNAMED, F_UNNAMED);
	RET(m, 1, 50, F_UNNAMED, F_MAIN);
	END(m, 1, 60, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "[unknown] (lib) 10\n[unknown] (lib);[lost] 10\n[unknown] (lib);c 10\n"
		      "main 10\nmain;[unknown] (lib) 10\nmain;[unknown] (lib);[unknown] (lib) 10\n");
	assert_int_equal(sr_cct_thread(cct, 0)->resets, 1);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* main (entered at 0) calls each of fns in turn, 10 ns apart, and the
 * data is lost 10 ns after the last call. */
static void calls_then_loss(struct sr_machine *m, const int *fns, int n)
{
	int from = F_MAIN;

	START(m, 1, 0, ENTRY(F_MAIN));
	for (int i = 0; i < n; i++) {
		CALL(m, 1, 10 * (uint64_t)(i + 1), from, fns[i]);
		from = fns[i];
	}
	LOST(m, 1, 10 * (uint64_t)(n + 1));
}

/* main;a;b;f, then a loss; the trace resumes in f (by a resync at 50, or
 * at f's first branch) and f calls c, then returns into a: b returned in
 * the loss and a called f again. f's events wait for that return, and
 * then go under main;a, not main;a;b. */
static void feed_resumed_in_f(struct sr_machine *m, bool sync)
{
	calls_then_loss(m, (const int[]){ F_A, F_B, F_F }, 3);
	if (sync)
		SYNC(m, 1, 50, IP(F_F));
	CALL(m, 1, sync ? 55 : 50, F_F, F_C);
	RET(m, 1, 60, F_C, F_F);
	RET(m, 1, 70, F_F, F_A);       /* not b */
	RET(m, 1, 80, F_A, F_MAIN);
	END(m, 1, 90, F_MAIN);
}

/* main;a;b;c;f, a loss, the trace resumed in f: f calls d, returns into
 * c, and c into `into`. */
static void feed_two_levels(struct sr_machine *m, int into)
{
	calls_then_loss(m, (const int[]){ F_A, F_B, F_C, F_F }, 4);
	SYNC(m, 1, 60, IP(F_F));
	CALL(m, 1, 70, F_F, F_D);
	RET(m, 1, 80, F_D, F_F);
	RET(m, 1, 90, F_F, F_C);
	RET(m, 1, 100, F_C, into);
}

static void test_lost_resume_held(void **state)
{
	struct sr_machine *m;
	struct sr_cct *cct;

	(void)state;
	for (int sync = 0; sync < 2; sync++) {
		m = new_machine(NULL);
		feed_resumed_in_f(m, sync);
		cct = finish(m, 0);
		if (sync)
			expect_stacks(cct, "main 20\nmain;a 20\nmain;a;b 10\nmain;a;b;f 10\n"
				      "main;a;b;f;[lost] 10\nmain;a;f 15\nmain;a;f;c 5\n");
		else
			expect_stacks(cct, "main 20\nmain;a 20\nmain;a;b 10\nmain;a;b;f 10\n"
				      "main;a;b;f;[lost] 10\nmain;a;f 10\nmain;a;f;c 10\n");
		expect_calls(cct, "main;a;f", 1, 1);     /* called unseen       */
		expect_calls(cct, "main;a;b;f", 1, 1);   /* ended in the loss   */
		expect_calls(cct, "main;a;b", 1, 1);
		assert_int_equal(sr_cct_thread(cct, 0)->held_moves, 1);
		assert_int_equal(sr_cct_thread(cct, 0)->resets, 0);
		expect_identity(cct);
		sr_cct_free(cct);
	}

	/* The first event after the loss a syscall from f: the resync is
	 * there, and what follows it waits the same. */
	m = new_machine(NULL);
	calls_then_loss(m, (const int[]){ F_A, F_B, F_F }, 3);
	SYSCALL(m, 1, 50, F_F, 1);
	RESUME(m, 1, 55, IP(F_F));
	CALL(m, 1, 60, F_F, F_C);
	RET(m, 1, 65, F_C, F_F);
	RET(m, 1, 70, F_F, F_A);
	END(m, 1, 80, F_A);
	cct = finish(m, 0);
	expect_stacks(cct, "main 10\nmain;a 20\nmain;a;b 10\nmain;a;b;f 10\n"
		      "main;a;b;f;[kernel] write 5\nmain;a;b;f;[lost] 10\nmain;a;f 10\n"
		      "main;a;f;c 5\n");
	assert_int_equal(sr_cct_thread(cct, 0)->held_moves, 1);
	expect_identity(cct);
	sr_cct_free(cct);

	/* Two levels: f's return into c, the frame below, proves nothing
	 * yet; c's into a shows that b ended in the loss, and c and f run
	 * on a (the frames c and f are made again at the resync). */
	m = new_machine(NULL);
	feed_two_levels(m, F_A);
	RET(m, 1, 110, F_A, F_MAIN);
	END(m, 1, 120, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 20\nmain;a 20\nmain;a;b 10\nmain;a;b;c 10\nmain;a;b;c;f 10\n"
		      "main;a;b;c;f;[lost] 10\nmain;a;c 10\nmain;a;c;f 20\nmain;a;c;f;d 10\n");
	expect_calls(cct, "main;a;c", 1, 1);
	expect_calls(cct, "main;a;c;f", 1, 1);
	assert_int_equal(sr_cct_thread(cct, 0)->held_moves, 1);
	expect_identity(cct);
	sr_cct_free(cct);

	/* The same, c returning into b: the stack kept was right. */
	m = new_machine(NULL);
	feed_two_levels(m, F_B);
	END(m, 1, 120, F_B);
	cct = finish(m, 0);
	expect_stacks(cct, "main 10\nmain;a 10\nmain;a;b 30\nmain;a;b;c 20\nmain;a;b;c;f 30\n"
		      "main;a;b;c;f;[lost] 10\nmain;a;b;c;f;d 10\n");
	assert_int_equal(sr_cct_thread(cct, 0)->held_moves, 0);
	expect_identity(cct);
	sr_cct_free(cct);

	/* The root kept with nothing below it: c ran before, so the c the
	 * trace resumed in need not be the call before the loss, and its
	 * return into g makes g the caller of the part after the resync
	 * only (before, underflow put the whole segment under g). */
	m = new_machine(NULL);
	START(m, 1, 0, IP(F_A));
	CALL(m, 1, 10, F_A, F_C);
	RET(m, 1, 20, F_C, F_A);
	JMP(m, 1, 30, F_A, ENTRY(F_C));        /* a tail call: the root is c */
	CALL(m, 1, 40, F_C, F_D);
	RET(m, 1, 45, F_D, F_C);
	LOST(m, 1, 50);
	SYNC(m, 1, 60, IP(F_C));
	CALL(m, 1, 70, F_C, F_B);
	RET(m, 1, 80, F_B, F_C);
	RET(m, 1, 90, F_C, F_G);
	END(m, 1, 100, F_G);
	cct = finish(m, 0);
	expect_stacks(cct, "a 20\na;c 10\nc 15\nc;[lost] 10\nc;d 5\ng 10\ng;c 20\ng;c;b 10\n");
	assert_int_equal(sr_cct_thread(cct, 0)->held_moves, 1);
	expect_identity(cct);
	sr_cct_free(cct);

	/* A syscall and a switch before f's return wait too (they come
	 * back where they left); the thread's end does not: what was held
	 * goes under the stack kept, as with nothing held. */
	for (int end = 0; end < 2; end++) {
		m = new_machine(NULL);
		calls_then_loss(m, (const int[]){ F_A, F_B, F_F }, 3);
		SYNC(m, 1, 50, IP(F_F));
		CALL(m, 1, 55, F_F, F_C);
		SYSCALL(m, 1, 60, F_C, 1);
		SWOUT(m, 1, 62);
		SWIN(m, 1, 63);
		RESUME(m, 1, 65, IP(F_C));
		RET(m, 1, 70, F_C, F_F);
		if (end) {
			END(m, 1, 80, F_F);
			cct = finish(m, 0);
			expect_stacks(cct, "main 10\nmain;a 10\nmain;a;b 10\nmain;a;b;f 25\n"
				      "main;a;b;f;[lost] 10\nmain;a;b;f;c 10\n"
				      "main;a;b;f;c;[kernel] write 4\n"
				      "main;a;b;f;c;[kernel] write;[off-cpu] 1\n");
			assert_int_equal(sr_cct_thread(cct, 0)->held_moves, 0);
		} else {
			RET(m, 1, 80, F_F, F_A);
			END(m, 1, 90, F_MAIN);
			cct = finish(m, 0);
			expect_stacks(cct, "main 10\nmain;a 20\nmain;a;b 10\nmain;a;b;f 10\n"
				      "main;a;b;f;[lost] 10\nmain;a;f 15\nmain;a;f;c 10\n"
				      "main;a;f;c;[kernel] write 4\n"
				      "main;a;f;c;[kernel] write;[off-cpu] 1\n");
			assert_int_equal(sr_cct_thread(cct, 0)->held_moves, 1);
		}
		expect_identity(cct);
		sr_cct_free(cct);
	}

	/* The end before f's return: the same. */
	m = new_machine(NULL);
	calls_then_loss(m, (const int[]){ F_A, F_F }, 2);
	SYNC(m, 1, 40, IP(F_F));
	CALL(m, 1, 50, F_F, F_C);
	RET(m, 1, 60, F_C, F_F);
	cct = finish(m, 70);
	expect_stacks(cct, "main 10\nmain;a 10\nmain;a;f 30\nmain;a;f;[lost] 10\n"
		      "main;a;f;c 10\n");
	expect_identity(cct);
	sr_cct_free(cct);
}

/* A root kept across a loss returns into a function not on the stack: an
 * inferred caller of what the segment saw, when that frame is the one the
 * trace saw before the loss. A function entered more than once proves no
 * such thing (the loss may have taken its return and another call of it):
 * the frames that return into it start a new segment. Before, bash's
 * dispose_command tail-called free from the root, a loss resumed in
 * another free, called from dispose_words, and its return put
 * dispose_command under dispose_words, a call bash never makes (a stress
 * recording with --drop-aux). */
static void test_lost_root_entered_again(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	START(m, 1, 0, IP(F_A));
	CALL(m, 1, 10, F_A, F_C);
	RET(m, 1, 20, F_C, F_A);
	JMP(m, 1, 30, F_A, ENTRY(F_C));        /* a tail call: the root is c */
	CALL(m, 1, 40, F_C, F_D);
	LOST(m, 1, 50);
	SYNC(m, 1, 60, IP(F_D));               /* kept: c;d, c unproven      */
	RET(m, 1, 70, F_D, F_C);
	RET(m, 1, 80, F_C, F_G);               /* which c returns?           */
	END(m, 1, 90, F_G);
	cct = finish(m, 0);
	/* (the new segment starts at the resync: d's and c's time after it
	 * is the c's that returned into g, its events held until then) */
	expect_stacks(cct, "a 20\na;c 10\nc 10\nc;d 10\nc;d;[lost] 10\ng 10\ng;c 10\n"
		      "g;c;d 10\n");
	assert_int_equal(sr_cct_thread(cct, 0)->resets, 1);
	assert_int_equal(sr_cct_thread(cct, 0)->held_moves, 1);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* Lost, and the trace resumes in the top frame's function: the frames
 * below it are kept, but nothing proves them. A return that contradicts
 * one (c's into f, where b is the caller frame) shows the stack wrong:
 * the function returned into starts a new segment, its callers told by
 * its returns. Before, it replaced b as b's unseen jump, then its own
 * return into g replaced main, and the returns on stacked everything the
 * segment had under g's callers: b;a;main (a stress recording of
 * emu_sigctx, whose handler rewrote the context it returned to:
 * victim;raise;main). The frame resumed in is proven, by execution in
 * it: in the second machine c's return into f, with b the caller frame,
 * is b's unseen jump to f as ever (f replaces it). */
static void test_lost_unproven_caller(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	START(m, 1, 0, ENTRY(F_MAIN));
	CALL(m, 1, 10, F_MAIN, F_B);
	CALL(m, 1, 20, F_B, F_C);
	LOST(m, 1, 30);
	SYNC(m, 1, 40, IP(F_C));               /* kept: main;b;c             */
	RET(m, 1, 50, F_C, F_F);               /* not b: the stack was wrong */
	RET(m, 1, 60, F_F, F_G);
	RET(m, 1, 70, F_G, F_A);
	RET(m, 1, 80, F_A, F_B);
	END(m, 1, 90, F_B);
	cct = finish(m, 0);
	/* (c's time after the loss is the new segment's: c's return was
	 * held until it showed f, not b, to be c's caller) */
	expect_stacks(cct, "b 10\nb;a 10\nb;a;g 10\nb;a;g;f 10\nb;a;g;f;c 10\nmain 10\n"
		      "main;b 10\nmain;b;c 10\nmain;b;c;[lost] 10\n");
	expect_calls(cct, "main;b;c", 1, 1);   /* ended in the loss          */
	expect_calls(cct, "b;a;g;f;c", 1, 1);  /* its entry was not seen     */
	assert_int_equal(sr_cct_thread(cct, 0)->resets, 1);
	assert_int_equal(sr_cct_thread(cct, 0)->held_moves, 1);
	expect_identity(cct);
	sr_cct_free(cct);

	m = new_machine(NULL);
	START(m, 1, 0, ENTRY(F_MAIN));
	CALL(m, 1, 10, F_MAIN, F_B);
	LOST(m, 1, 20);
	SYNC(m, 1, 30, IP(F_B));               /* kept: main;b               */
	CALL(m, 1, 40, F_B, F_D);
	JMP(m, 1, 45, F_D, ENTRY(F_C));        /* (a tail call: d's frame is c) */
	RET(m, 1, 50, F_C, F_F);               /* not b: an unseen jump of b's */
	RET(m, 1, 60, F_F, F_MAIN);
	END(m, 1, 70, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 20\nmain;b 20\nmain;b;[lost] 10\nmain;b;c 5\nmain;b;d 5\n"
		      "main;f 10\n");
	assert_int_equal(sr_cct_thread(cct, 0)->resets, 0);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* A return out of setcontext or swapcontext from the root goes into the
 * context they restored, not to their caller: the function returned into
 * is a new segment's root, no caller of theirs. (A stress recording of
 * emu_ucontext: the OVF took __start_context's call of setcontext, whose
 * return into main made main;setcontext.) Any other function's return
 * from the root is its caller's (test_start_mid_stack). */
static void test_context_switch_from_root(void **state)
{
	static const int sw[] = { F_SETCTX, F_SWAPCTX };

	(void)state;
	for (size_t k = 0; k < 2; k++) {
		struct sr_machine *m = new_machine(NULL);
		struct sr_cct *cct;

		START(m, 1, 0, ENTRY(F_MAIN));
		CALL(m, 1, 10, F_MAIN, F_A);
		LOST(m, 1, 20);
		SYNC(m, 1, 30, IP(sw[k]));      /* not on the stack: a new root */
		RET(m, 1, 40, sw[k], F_MAIN);   /* into the context restored    */
		END(m, 1, 50, F_MAIN);
		cct = finish(m, 0);
		expect_stacks(cct, k ? "__swapcontext 10\nmain 20\nmain;a 10\nmain;a;[lost] 10\n" :
				       "main 20\nmain;a 10\nmain;a;[lost] 10\nsetcontext 10\n");
		expect_calls(cct, fn_names[sw[k]], 1, 1);
		assert_int_equal(sr_cct_thread(cct, 0)->resets, 2);
		expect_identity(cct);
		sr_cct_free(cct);
	}
}

/* A resync after lost data (DC_ON_SYNC) in a thread that was in a
 * syscall, with no LOST of its own (the decoder gave the loss to the
 * thread before it on the CPU, or a thread's code to the wrong one): no
 * return from the kernel, so a function entry there is no signal handler
 * on the syscall's stack (before: main;a;c, where a never ran c; found
 * with a stress recording of emu_cxxthread, __mprotect;__strlen_avx2). */
static void test_sync_after_syscall(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	SYSCALL(m, 1, 10, F_A, 1);
	SYNC(m, 1, 20, ENTRY(F_C));
	RET(m, 1, 30, F_C, F_D);
	END(m, 1, 40, F_D);
	cct = finish(m, 0);
	expect_stacks(cct, "d 10\nd;c 10\nmain;a 10\nmain;a;[kernel] write 10\n");
	assert_int_equal(sr_cct_thread(cct, 0)->resets, 1);
	expect_identity(cct);
	sr_cct_free(cct);
}

static void test_lost_first_then_sync(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	LOST(m, 1, 0);
	SYNC(m, 1, 10, IP(F_A));
	RET(m, 1, 20, F_A, F_MAIN);
	SWOUT(m, 1, 30);               /* blocked, with no kernel entry seen */
	LOST(m, 1, 35);                /* lost while off CPU               */
	SWIN(m, 1, 40);
	RESUME(m, 1, 41, IP(F_MAIN));  /* proves main                      */
	END(m, 1, 50, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "[lost] 10\nmain 19\nmain;[lost] 6\nmain;[off-cpu] 5\nmain;a 10\n");
	expect_identity(cct);
	sr_cct_free(cct);
}

/* The recorder stops: an async kernel entry, then the switch-out that is
 * the thread's last event. The kernel entry is kept (1 ns, inferred); the
 * switch-out at the very end is no wait of anybody's. */
static void test_stop_at_end(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;
	const struct sr_node *k;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	FAULT(m, 1, 10, F_A);
	SWOUT(m, 1, 11);
	cct = finish(m, 0);
	expect_stacks(cct, "main;a 10\nmain;a;[kernel] 1\n");
	expect_calls(cct, "main;a;[kernel]", 1, 1);
	k = node_at(cct, "main;a;[kernel]");
	assert_null(k->first_child);
	expect_identity(cct);
	sr_cct_free(cct);
}

static void test_exec_resets(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	SYSCALL(m, 1, 10, F_A, 59);            /* execve */
	RESUME(m, 1, 20, ENTRY(F_START));      /* new image */
	RET(m, 1, 30, F_START, F_MAIN);        /* nonsense return: inferred caller */
	END(m, 1, 40, F_MAIN);
	cct = finish(m, 0);
	/* _start is not a signal handler on top of a: a new stack */
	expect_stacks(cct, "main 10\nmain;_start 10\nmain;a 10\nmain;a;[kernel] execve 10\n");
	expect_calls(cct, "main;a;[kernel] execve", 1, 0);
	assert_non_null(node_at(cct, "main;_start"));
	assert_null(node_at(cct, "main;a;_start"));
	expect_identity(cct);
	sr_cct_free(cct);
}

/* The exec syscall's number unknown: the COMM exec record tells. */
static void test_exec_via_comm(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	SYSCALL(m, 1, 10, F_A, UINT32_MAX);
	assert_int_equal(sr_machine_exec(m, 100, 1, 15), 0);
	assert_int_equal(sr_machine_comm(m, 100, 1, "newprog", 15), 0);
	SWOUT(m, 1, 16);                        /* sideband: no ip, no reset */
	SWIN(m, 1, 18);
	RESUME(m, 1, 20, ENTRY(F_START));
	END(m, 1, 30, F_START);
	cct = finish(m, 0);
	expect_stacks(cct, "_start 10\nmain;a 10\nmain;a;[kernel] 8\nmain;a;[kernel];[off-cpu] 2\n");
	assert_string_equal(sr_cct_thread(cct, 0)->comm, "newprog");
	expect_identity(cct);
	sr_cct_free(cct);
}

/* After an exec the trace resumes in a function that was on the old stack
 * (a program that execs itself, traced from main): still a new stack, the
 * old frames all end at the exec's resume. */
static void test_exec_same_function(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	SYSCALL(m, 1, 10, F_A, UINT32_MAX);
	assert_int_equal(sr_machine_exec(m, 100, 1, 15), 0);
	SWOUT(m, 1, 16);
	SWIN(m, 1, 18);
	RESUME(m, 1, 20, IP(F_MAIN));
	CALL(m, 1, 22, F_MAIN, F_B);
	RET(m, 1, 26, F_B, F_MAIN);
	END(m, 1, 30, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main 6\nmain;a 10\nmain;a;[kernel] 8\nmain;a;[kernel];[off-cpu] 2\n"
			   "main;b 4\n");
	/* two main frames, one per program, the second's entry unseen */
	expect_calls(cct, "main", 2, 2);
	expect_identity(cct);
	sr_cct_free(cct);
}

static void test_end_gap_and_restart(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;
	const struct sr_thread_stats *st;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	END(m, 1, 10, F_A);            /* tracing stops                   */
	SWOUT(m, 1, 20);               /* sideband while not traced       */
	SWIN(m, 1, 30);
	START(m, 1, 100, IP(F_A));     /* back, still in a                */
	RET(m, 1, 110, F_A, F_MAIN);
	END(m, 1, 120, F_MAIN);
	cct = finish(m, 1000);
	expect_stacks(cct, "main 10\nmain;a 20\n");
	st = sr_cct_thread(cct, 0);
	assert_int_equal(st->traced_ns, 30);
	assert_int_equal(st->first_ns, 0);
	assert_int_equal(st->last_ns, 120);
	expect_identity(cct);
	sr_cct_free(cct);
}

static void test_finish_extends_to_end(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	SYSCALL(m, 1, 10, F_A, 7);     /* poll */
	SWOUT(m, 1, 20);
	cct = finish(m, 100);          /* still blocked at the end */
	expect_stacks(cct, "main;a 10\nmain;a;[kernel] poll 10\nmain;a;[kernel] poll;[off-cpu] 80\n");
	/* open calls end as inferred */
	expect_calls(cct, "main;a;[kernel] poll", 1, 1);
	expect_calls(cct, "main;a", 1, 1);
	expect_wall(cct, 0, 100);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* A thread whose trace ends with an asynchronous TRACE_OFF (the TIP.PGD
 * of tracing disabled while it ran user code) ends there, not at the
 * recording's end; preempted there, it waits until the end. */
static void test_finish_not_after_disable(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_A);
	FAULT(m, 1, 10, F_A);
	CALL(m, 2, 0, F_MAIN, F_B);
	FAULT(m, 2, 10, F_B);
	PREEMPT(m, 2, 12);
	cct = finish(m, 100);
	for (size_t i = 0; i < sr_cct_nthreads(cct); i++) {
		const struct sr_thread_stats *st = sr_cct_thread(cct, i);

		assert_int_equal(st->traced_ns, st->tid == 1 ? 10 : 100);
	}
	assert_int_equal(sr_cct_nthreads(cct), 2);
	sr_cct_free(cct);
}

static void test_time_backwards(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_machine_stats st;
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 100, F_MAIN, F_A);
	RET(m, 1, 90, F_A, F_MAIN);    /* older than the last event */
	END(m, 1, 150, F_MAIN);
	sr_machine_stats(m, &st);
	assert_int_equal(st.time_backwards, 1);
	cct = finish(m, 0);
	expect_stacks(cct, "main 50\n");
	expect_identity(cct);
	sr_cct_free(cct);
}

/* ---- threads ---- */

static void feed_two_threads(struct sr_machine *m)
{
	sr_machine_comm(m, 100, 1, "app", 0);
	sr_machine_comm(m, 100, 2, "worker", 0);
	/* interleaved in time; thread 2 starts inside a */
	CALL(m, 1, 0, F_MAIN, F_A);
	CALL(m, 2, 5, F_A, F_B);
	CALL(m, 1, 10, F_A, F_B);
	RET(m, 2, 15, F_B, F_A);
	SYSCALL(m, 2, 16, F_A, 202);
	SWOUT(m, 2, 17);
	RET(m, 1, 30, F_B, F_A);
	SWIN(m, 2, 40);
	RESUME(m, 2, 41, IP(F_A));
	RET(m, 1, 45, F_A, F_MAIN);
	END(m, 2, 50, F_A);
	END(m, 1, 60, F_MAIN);
}

static void test_threads_merged(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_cct *cct;

	(void)state;
	feed_two_threads(m);
	cct = finish(m, 0);
	/* t1: main 15, main;a 25, main;a;b 20. t2: a 1+9, a;b 10,
	 * a;[kernel] futex 1+1, a;[kernel] futex;[off-cpu] 23 */
	expect_stacks(cct, "a 10\na;[kernel] futex 2\na;[kernel] futex;[off-cpu] 23\na;b 10\n"
			   "main 15\nmain;a 25\nmain;a;b 20\n");
	assert_int_equal(sr_cct_nthreads(cct), 2);
	expect_wall(cct, 0, 60);
	expect_wall(cct, 1, 45);
	assert_string_equal(sr_cct_thread(cct, 1)->comm, "worker");
	expect_identity(cct);
	sr_cct_free(cct);
}

static void test_threads_per_thread(void **state)
{
	struct sr_options opt = { .per_thread = true };
	struct sr_machine *m = new_machine(&opt);
	struct sr_cct *cct;

	(void)state;
	feed_two_threads(m);
	cct = finish(m, 0);
	expect_stacks(cct, "app-1;main 15\napp-1;main;a 25\napp-1;main;a;b 20\n"
			   "worker-2;a 10\nworker-2;a;[kernel] futex 2\n"
			   "worker-2;a;[kernel] futex;[off-cpu] 23\nworker-2;a;b 10\n");
	/* per thread: the sum under its root is its traced time */
	assert_int_equal(node_at(cct, "app-1")->total_ns, 60);
	assert_int_equal(node_at(cct, "worker-2")->total_ns, 45);
	assert_int_equal(node_at(cct, "app-1")->calls, 0);
	expect_identity(cct);
	sr_cct_free(cct);
}

static void test_filter_tid(void **state)
{
	uint32_t tids[] = { 2 };
	struct sr_options opt = { .tids = tids, .ntids = 1 };
	struct sr_machine *m = new_machine(&opt);
	struct sr_cct *cct;

	(void)state;
	feed_two_threads(m);
	cct = finish(m, 0);
	expect_stacks(cct, "a 10\na;[kernel] futex 2\na;[kernel] futex;[off-cpu] 23\na;b 10\n");
	assert_int_equal(sr_cct_nthreads(cct), 1);
	assert_int_equal(sr_cct_thread(cct, 0)->tid, 2);
	expect_identity(cct);
	sr_cct_free(cct);
}

static void test_filter_comm(void **state)
{
	struct sr_options opt = { .comm = "app", .per_thread = true };
	struct sr_machine *m = new_machine(&opt);
	struct sr_cct *cct;

	(void)state;
	feed_two_threads(m);
	cct = finish(m, 0);
	expect_stacks(cct, "app-1;main 15\napp-1;main;a 25\napp-1;main;a;b 20\n");
	assert_int_equal(sr_cct_nthreads(cct), 2);
	assert_true(sr_cct_thread(cct, 0)->selected);
	assert_false(sr_cct_thread(cct, 1)->selected);
	assert_int_equal(sr_cct_thread(cct, 1)->kept_ns, 0);
	assert_int_equal(sr_cct_thread(cct, 0)->kept_ns, 60);
	sr_cct_free(cct);
}

/* ---- a thread's life split at exec (--per-thread, --comm) ---- */

/* sh (tid 1) runs main;a and execs (the COMM exec record at 15: "ls"); the
 * new program starts in _start at 20 and renames itself at 25 ("ls2",
 * prctl: no split). Before the exec: 20 ns, after: 10. */
static void feed_exec(struct sr_machine *m)
{
	assert_int_equal(sr_machine_comm(m, 100, 1, "sh", 0), 0);
	CALL(m, 1, 0, F_MAIN, F_A);
	SYSCALL(m, 1, 10, F_A, UINT32_MAX);
	assert_int_equal(sr_machine_exec(m, 100, 1, 15), 0);
	assert_int_equal(sr_machine_comm(m, 100, 1, "ls", 15), 0);
	SWOUT(m, 1, 16);
	SWIN(m, 1, 18);
	RESUME(m, 1, 20, ENTRY(F_START));
	assert_int_equal(sr_machine_comm(m, 100, 1, "ls2", 25), 0);
	END(m, 1, 30, F_START);
}

/* Each part of the thread's life has its root frame, named by its own
 * last comm: the code before the exec is not the new program's. */
static void test_exec_splits_thread(void **state)
{
	struct sr_options opt = { .per_thread = true };
	struct sr_machine *m = new_machine(&opt);
	struct sr_cct *cct;

	(void)state;
	feed_exec(m);
	cct = finish(m, 0);
	expect_stacks(cct, "ls2-1;_start 10\nsh-1;main;a 10\nsh-1;main;a;[kernel] 8\n"
			   "sh-1;main;a;[kernel];[off-cpu] 2\n");
	assert_int_equal(node_at(cct, "sh-1")->total_ns, 20);
	assert_int_equal(node_at(cct, "ls2-1")->total_ns, 10);
	/* one thread: its stats name it by its last comm */
	assert_int_equal(sr_cct_nthreads(cct), 1);
	assert_string_equal(sr_cct_thread(cct, 0)->comm, "ls2");
	expect_identity(cct);
	sr_cct_free(cct);
}

/* A program traced from its exec with the kernel (perf record -- CMD):
 * before the new program's first user event only the exec's kernel code
 * ran, none of the old program's: no part of its own, the time is the new
 * program's (as perf names it after the exec's COMM). */
static void test_exec_kernel_only_before(void **state)
{
	struct sr_options opt = { .per_thread = true };
	struct sr_machine *m = new_machine(&opt);
	struct sr_cct *cct;

	(void)state;
	/* (as the Skylake recording of echo has it: kernel code without an
	 * image, the exec's COMM, a switch, then the new program) */
	assert_int_equal(sr_machine_comm(m, 100, 1, "perf", 0), 0);
	feed_ev(m, 1, 0, DC_EV_TRACE_OFF, DC_OFF_KERNEL, 0, 0, 0, 0);
	assert_int_equal(sr_machine_exec(m, 100, 1, 5), 0);
	assert_int_equal(sr_machine_comm(m, 100, 1, "echo", 5), 0);
	SWOUT(m, 1, 10);
	SWIN(m, 1, 12);
	RESUME(m, 1, 20, ENTRY(F_START));
	END(m, 1, 30, F_START);
	cct = finish(m, 0);
	assert_null(node_at(cct, "perf-1"));
	assert_non_null(node_at(cct, "echo-1;_start"));
	assert_int_equal(node_at(cct, "echo-1")->total_ns, 30);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* sr_call.selected: the comm of the call's part of the thread's life. */
static int exec_call_cb(void *ctx, const struct sr_call *c)
{
	char *seen = ctx;
	size_t n = strlen(seen);

	snprintf(seen + n, 256 - n, "%s%s:%d", n ? " " : "", c->name, c->selected);
	return 0;
}

/* --comm keeps exactly the parts that had the name (a rename inside a
 * part: any of its names); the thread is selected when a part is. */
static void test_exec_filter_comm(void **state)
{
	static const struct {
		const char *comm, *stacks, *calls;
		uint64_t kept;
	} c[] = {
		{ "sh", "sh-1;main;a 10\nsh-1;main;a;[kernel] 8\nsh-1;main;a;[kernel];[off-cpu] 2\n",
		  "[off-cpu]:1 [kernel]:1 a:1 main:1 _start:0", 20 },
		{ "ls", "ls2-1;_start 10\n", "[off-cpu]:0 [kernel]:0 a:0 main:0 _start:1", 10 },
		{ "ls2", "ls2-1;_start 10\n", "[off-cpu]:0 [kernel]:0 a:0 main:0 _start:1", 10 },
		{ "nosuch", "", "[off-cpu]:0 [kernel]:0 a:0 main:0 _start:0", 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char seen[256] = "";
		struct sr_options opt = { .per_thread = true, .comm = c[i].comm,
					  .on_call = exec_call_cb, .call_ctx = seen };
		struct sr_machine *m = new_machine(&opt);
		struct sr_cct *cct;

		feed_exec(m);
		cct = finish(m, 0);
		expect_stacks(cct, c[i].stacks);
		assert_string_equal(seen, c[i].calls);
		assert_int_equal(sr_cct_nthreads(cct), 1);
		assert_int_equal(sr_cct_thread(cct, 0)->selected, c[i].kept != 0);
		assert_int_equal(sr_cct_thread(cct, 0)->kept_ns, c[i].kept);
		sr_cct_free(cct);
	}
}

/* A program that execs itself: the parts of one name share one frame; an
 * exec before the thread ran (a program traced from its start) leaves one
 * part, which --comm with the name it had before does not keep. */
static void test_exec_same_name_and_first(void **state)
{
	struct sr_options opt = { .per_thread = true };
	struct sr_options opt_sh = { .per_thread = true, .comm = "sh" };
	struct sr_machine *m = new_machine(&opt);
	struct sr_cct *cct;

	(void)state;
	sr_machine_comm(m, 100, 1, "app", 0);
	CALL(m, 1, 0, F_MAIN, F_A);
	SYSCALL(m, 1, 10, F_A, UINT32_MAX);
	sr_machine_exec(m, 100, 1, 15);
	sr_machine_comm(m, 100, 1, "app", 15);
	RESUME(m, 1, 20, ENTRY(F_START));
	END(m, 1, 30, F_START);
	cct = finish(m, 0);
	expect_stacks(cct, "app-1;_start 10\napp-1;main;a 10\napp-1;main;a;[kernel] 10\n");
	assert_int_equal(sr_cct_root(cct)->first_child->next_sibling, NULL);
	expect_identity(cct);
	sr_cct_free(cct);

	for (int k = 0; k < 2; k++) {
		m = new_machine(k ? &opt_sh : &opt);
		sr_machine_comm(m, 100, 1, "sh", 0);
		sr_machine_exec(m, 100, 1, 5);
		sr_machine_comm(m, 100, 1, "ls", 5);
		CALL(m, 1, 10, F_MAIN, F_A);
		END(m, 1, 30, F_A);
		cct = finish(m, 0);
		expect_stacks(cct, k ? "" : "ls-1;main;a 20\n");
		sr_cct_free(cct);
	}
}

static void test_filter_root(void **state)
{
	struct sr_options opt = { .root = "a" };
	struct sr_machine *m = new_machine(&opt);
	struct sr_cct *cct;

	(void)state;
	feed_two_threads(m);
	cct = finish(m, 0);
	/* both threads' a, re-rooted: main's own 15 ns are gone */
	expect_stacks(cct, "a 35\na;[kernel] futex 2\na;[kernel] futex;[off-cpu] 23\na;b 30\n");
	assert_int_equal(sr_cct_thread(cct, 0)->kept_ns, 45);
	assert_int_equal(sr_cct_thread(cct, 1)->kept_ns, 45);
	expect_calls(cct, "a", 2, 1);
	sr_cct_free(cct);
}

static void test_filter_root_outermost_and_cxx(void **state)
{
	struct sr_options opt = { .root = "ns::f", .per_thread = true };
	struct sr_machine *m = new_machine(&opt);
	struct sr_cct *cct;

	(void)state;
	sr_machine_comm(m, 100, 1, "app", 0);
	CALL(m, 1, 0, F_MAIN, F_NSF);
	CALL(m, 1, 10, F_NSF, F_NSF);      /* recursion: only the outer one roots */
	RET(m, 1, 20, F_NSF, F_NSF);
	RET(m, 1, 30, F_NSF, F_MAIN);
	CALL(m, 1, 40, F_MAIN, F_A);
	END(m, 1, 50, F_A);
	cct = finish(m, 0);
	expect_stacks(cct, "app-1;ns::f(int) 20\napp-1;ns::f(int);ns::f(int) 10\n");
	sr_cct_free(cct);
}

static void test_filter_time_window(void **state)
{
	struct sr_options opt = { .time_start = 1015, .time_end = 1050 };
	struct sr_machine *m = new_machine(&opt);
	struct sr_cct *cct;
	const struct sr_thread_stats *st;

	(void)state;
	feed_nested(m, 1, 1000);
	cct = finish(m, 0);
	/* a: [30,35)+[45,50); b: [15,30)+[35,45) */
	expect_stacks(cct, "main;a 10\nmain;a;b 25\n");
	/* b's first call straddles the start: inferred; the second is inside */
	expect_calls(cct, "main;a;b", 2, 1);
	assert_int_equal(node_at(cct, "main;a;b")->lat.sum, 10);
	expect_calls(cct, "main;a", 1, 1);
	st = sr_cct_thread(cct, 0);
	assert_int_equal(st->traced_ns, 100);
	assert_int_equal(st->kept_ns, 35);
	assert_int_equal(subtree_self(sr_cct_root(cct)), 35);
	sr_cct_free(cct);
}

static void test_filter_oncpu_offcpu(void **state)
{
	struct sr_options on = { .keep_time = SR_KEEP_ONCPU };
	struct sr_options off = { .keep_time = SR_KEEP_OFFCPU };
	struct sr_machine *m = new_machine(&on);
	struct sr_cct *cct;

	(void)state;
	feed_syscall_block(m, 0, 0);
	cct = finish(m, 0);
	expect_stacks(cct, "main 10\nmain;a 18\nmain;a;[kernel] futex 4\n");
	assert_int_equal(sr_cct_thread(cct, 0)->kept_ns, 32);
	/* calls are still counted */
	expect_calls(cct, "main;a;[kernel] futex;[off-cpu]", 1, 0);
	sr_cct_free(cct);

	m = new_machine(&off);
	feed_syscall_block(m, 0, 0);
	cct = finish(m, 0);
	expect_stacks(cct, "main;a;[kernel] futex;[off-cpu] 38\n");
	assert_int_equal(sr_cct_thread(cct, 0)->kept_ns, 38);
	sr_cct_free(cct);
}

/* ---- properties on random streams ---- */

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/* A random but plausible stream for several threads: calls, returns (also
 * above the root), jumps, syscalls with blocking, preemption, losses. */
static void feed_random(struct sr_machine *m, uint64_t seed, int nthreads, int nevents,
			uint64_t *first, uint64_t *last)
{
	uint64_t s = seed, t = 1000;
	int depth[8] = { 0 }, fn[8][64], state[8] = { 0 };

	for (int i = 0; i < nthreads; i++) {
		fn[i][0] = F_MAIN + (int)(rnd(&s) % 5);
		first[i] = last[i] = 0;
	}
	for (int e = 0; e < nevents; e++) {
		int i = (int)(rnd(&s) % (uint64_t)nthreads), r = (int)(rnd(&s) % 100);
		uint32_t tid = (uint32_t)i + 1;
		int top = fn[i][depth[i]];

		t += rnd(&s) % 50;
		if (!first[i])
			first[i] = t;
		last[i] = t;
		if (state[i] == 1) {           /* in a syscall */
			if (r < 30) {
				SWOUT(m, tid, t);
				state[i] = 2;
			} else {
				RESUME(m, tid, t, IP(top));
				state[i] = 0;
			}
			continue;
		}
		if (state[i] == 2) {           /* blocked */
			SWIN(m, tid, t);
			state[i] = 1;
			continue;
		}
		if (r < 35 && depth[i] < 63) {
			int callee = F_MAIN + (int)(rnd(&s) % 10);

			CALL(m, tid, t, top, callee);
			fn[i][++depth[i]] = callee;
		} else if (r < 70) {
			int to = depth[i] ? fn[i][depth[i] - 1] : F_MAIN + (int)(rnd(&s) % 10);

			RET(m, tid, t, top, to);
			if (depth[i])
				depth[i]--;
			else
				fn[i][0] = to;
		} else if (r < 78) {
			int to = F_MAIN + (int)(rnd(&s) % 10);

			JMP(m, tid, t, top, ENTRY(to));
			fn[i][depth[i]] = to;
		} else if (r < 90) {
			SYSCALL(m, tid, t, top, (uint32_t)(rnd(&s) % 300));
			state[i] = 1;
		} else if (r < 95) {
			FAULT(m, tid, t, top);
			PREEMPT(m, tid, t + 1);
			SWIN(m, tid, t + 5);
			RESUME(m, tid, t + 6, IP(top));
			t += 6;
			last[i] = t;
		} else {
			LOST(m, tid, t);
			feed_ev(m, tid, t + 3, DC_EV_TRACE_ON, DC_ON_SYNC, 0, IP(top), 0, 0);
			t += 3;
			last[i] = t;
		}
	}
}

static void test_random_identity(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 40; seed++) {
		for (int per_thread = 0; per_thread < 2; per_thread++) {
			struct sr_options opt = { .per_thread = per_thread };
			struct sr_machine *m = new_machine(&opt);
			uint64_t first[8], last[8];
			int nthreads = 1 + (int)(seed % 4);
			struct sr_cct *cct;

			feed_random(m, seed, nthreads, 3000, first, last);
			cct = finish(m, 0);
			expect_identity(cct);
			for (size_t i = 0; i < sr_cct_nthreads(cct); i++) {
				const struct sr_thread_stats *st = sr_cct_thread(cct, i);

				assert_int_equal(st->first_ns, first[st->tid - 1]);
				assert_int_equal(st->last_ns, last[st->tid - 1]);
				assert_int_equal(st->traced_ns, st->last_ns - st->first_ns);
				if (per_thread) {
					char name[32];

					snprintf(name, sizeof(name), "unknown-%u", st->tid);
					assert_int_equal(node_at(cct, name)->total_ns,
							 st->traced_ns);
				}
			}
			sr_cct_free(cct);
		}
	}
}

/* Garbage in: any kind, reason, ip, pid, time order. Never a crash, and
 * the identity still holds. */
static void test_garbage_streams(void **state)
{
	static const uint64_t ips[] = {
		0, 0x10, IP(F_MAIN), ENTRY(F_A), IP(F_A), IP(F_B), ENTRY(F_C), IP(F_HANDLER),
		IP(F_RESTORE), IP(F_F), ENTRY(F_F), UINT64_MAX,
	};
	const size_t nips = sizeof(ips) / sizeof(ips[0]);

	(void)state;
	for (uint64_t seed = 1; seed <= 60; seed++) {
		struct sr_options opts[] = {
			{ 0 },
			{ .per_thread = true, .root = "a" },
			{ .time_start = 3000, .time_end = 9000, .keep_time = SR_KEEP_ONCPU },
		};
		int o = (int)(seed % 3);
		struct sr_machine *m = new_machine(&opts[o]);
		uint64_t s = seed * 7919, t = 1000;
		struct sr_cct *cct;

		for (int e = 0; e < 2000; e++) {
			struct dc_event ev = {
				.tid = 1 + (uint32_t)(rnd(&s) % 3),
				.pid = rnd(&s) % 50 ? 100 : 101,
				.kind = (uint8_t)(rnd(&s) % 8),
				.reason = (uint8_t)(rnd(&s) % 7),
				.from_ip = ips[rnd(&s) % nips],
				.to_ip = ips[rnd(&s) % nips],
				.sysno = rnd(&s) % 4 ? (uint32_t)(rnd(&s) % 400) : UINT32_MAX,
				.cpu = (uint16_t)(rnd(&s) % 4),
			};

			t += rnd(&s) % 20;
			ev.time_ns = rnd(&s) % 100 ? t : t - 30;
			assert_int_equal(sr_machine_feed(m, &ev), 0);
			if (rnd(&s) % 200 == 0)
				sr_machine_comm(m, 100, ev.tid, "x;y 1", t);
			if (rnd(&s) % 300 == 0)
				sr_machine_exec(m, 100, ev.tid, t);
		}
		cct = finish(m, rnd(&s) % 2 ? t + 100 : 0);
		for (size_t i = 0; i < sr_cct_nthreads(cct); i++) {
			const struct sr_thread_stats *st = sr_cct_thread(cct, i);
			uint64_t by = 0;

			for (int k = 0; k < SR_TIME_NKINDS; k++)
				by += st->traced_by[k];
			assert_int_equal(by, st->traced_ns);
			assert_true(st->kept_ns <= st->traced_ns);
			assert_true(st->traced_ns <= st->last_ns - st->first_ns);
		}
		if (o == 0)
			expect_identity(cct);
		sr_cct_free(cct);
	}
}

/* Memory follows distinct stacks, not events. */
static void test_memory_bounded(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_machine_stats st1, st2;
	uint64_t t = 0;

	(void)state;
	for (int round = 0; round < 2; round++) {
		int n = round ? 200000 : 1000;

		for (int i = 0; i < n; i++) {
			CALL(m, 1, t, F_MAIN, F_A);
			CALL(m, 1, t + 3, F_A, F_B);
			SYSCALL(m, 1, t + 5, F_B, 1);
			RESUME(m, 1, t + 8, IP(F_B));
			RET(m, 1, t + 10, F_B, F_A);
			RET(m, 1, t + 12, F_A, F_MAIN);
			t += 20;
		}
		sr_machine_stats(m, round ? &st2 : &st1);
	}
	assert_int_equal(st1.nodes, st2.nodes);
	assert_int_equal(st1.mem_bytes, st2.mem_bytes);
	assert_int_equal(st2.events, 6 * 201000);
	sr_machine_free(m);
}

static void test_depth_limit_and_bad_events(void **state)
{
	struct sr_machine *m = new_machine(NULL);
	struct sr_machine_stats st;
	struct dc_event bad = { .tid = 1, .kind = 77 };
	struct sr_cct *cct;

	(void)state;
	assert_int_equal(sr_machine_feed(m, &bad), 0);
	for (int i = 0; i < SR_MAX_DEPTH + 10; i++)
		CALL(m, 1, (uint64_t)i, F_F, F_F);
	sr_machine_stats(m, &st);
	assert_int_equal(st.bad_events, 1);
	assert_int_equal(st.depth_overflows, 10 + 1);   /* +1: the root frame */
	cct = finish(m, 0);
	expect_identity(cct);
	sr_cct_free(cct);
}

static void test_merge_sharded_machines(void **state)
{
	struct sr_machine *m1 = new_machine(NULL), *m2 = new_machine(NULL);
	struct sr_cct *c1, *c2;
	char *a, *b;

	(void)state;
	/* one thread's events decoded by two machines (two time ranges) */
	feed_nested(m1, 1, 0);
	feed_syscall_block(m2, 0, 0);
	c1 = finish(m1, 0);
	c2 = finish(m2, 0);
	/* feed_syscall_block uses tid 1 too: merge sums into one thread */
	assert_int_equal(sr_cct_merge(c1, c2), 0);
	assert_int_equal(sr_cct_nthreads(c1), 1);
	assert_int_equal(sr_cct_thread(c1, 0)->traced_ns, 100 + 70);
	a = stacks(c1);
	b = strdup("main 50\nmain;a 48\nmain;a;[kernel] futex 4\n"
		   "main;a;[kernel] futex;[off-cpu] 38\nmain;a;b 30\n");
	assert_string_equal(a, b);
	assert_int_equal(node_at(c1, "main;a")->calls, 2);
	assert_int_equal(sr_cct_root(c1)->total_ns, 170);
	free(a);
	free(b);
	sr_cct_free(c1);
	sr_cct_free(c2);
}

/* --max-stack: calls deeper than the limit are followed (their returns
 * still match) but accounted to one [truncated] frame under the last kept
 * frame, and counted. */
static void test_max_stack_truncated(void **state)
{
	struct sr_options opt = { .max_stack = 3 };
	struct sr_machine *m = new_machine(&opt);
	struct sr_machine_stats st;
	struct sr_cct *cct;

	(void)state;
	CALL(m, 1, 0, F_MAIN, F_F);
	CALL(m, 1, 10, F_F, F_F);
	CALL(m, 1, 20, F_F, F_F);      /* depth 4: cut */
	CALL(m, 1, 30, F_F, F_F);      /* depth 5: the same [truncated] frame */
	RET(m, 1, 40, F_F, F_F);
	RET(m, 1, 50, F_F, F_F);
	RET(m, 1, 60, F_F, F_F);
	RET(m, 1, 70, F_F, F_MAIN);
	CALL(m, 1, 80, F_MAIN, F_A);   /* back in main: the returns matched */
	RET(m, 1, 90, F_A, F_MAIN);
	END(m, 1, 100, F_MAIN);
	sr_machine_stats(m, &st);
	assert_int_equal(st.truncated, 2);
	cct = finish(m, 0);
	expect_stacks(cct, "main 20\nmain;a 10\nmain;f 20\nmain;f;f 20\nmain;f;f;[truncated] 30\n");
	expect_calls(cct, "main;f;f;[truncated]", 2, 0);
	expect_identity(cct);
	sr_cct_free(cct);
}

/* sr_options.on_call: every call as it ends, innermost first, with its
 * place on the stack, its times and its split by kind of time. */
struct seen_call {
	char name[32];
	uint32_t depth;
	uint64_t start, end, by[SR_TIME_NKINDS];
	bool complete, in_root;
};
struct seen_calls {
	struct seen_call v[16];
	size_t n;
};

static int on_call_cb(void *ctx, const struct sr_call *c)
{
	struct seen_calls *s = ctx;
	struct seen_call *d;

	assert_true(s->n < 16);
	d = &s->v[s->n++];
	snprintf(d->name, sizeof(d->name), "%s", c->name);
	d->depth = c->depth;
	d->start = c->start_ns;
	d->end = c->end_ns;
	memcpy(d->by, c->by, sizeof(d->by));
	d->complete = c->complete;
	d->in_root = c->in_root;
	assert_int_equal(c->tid, 1);
	assert_true(c->selected);
	return 0;
}

static void expect_call(const struct seen_calls *s, size_t i, const char *name, uint32_t depth,
			uint64_t start, uint64_t end, bool complete, uint64_t user, uint64_t kernel,
			uint64_t offcpu)
{
	const struct seen_call *c = &s->v[i];

	assert_true(i < s->n);
	assert_string_equal(c->name, name);
	assert_int_equal(c->depth, depth);
	assert_int_equal(c->start, start);
	assert_int_equal(c->end, end);
	assert_int_equal(c->complete, complete);
	assert_int_equal(c->by[SR_TIME_USER], user);
	assert_int_equal(c->by[SR_TIME_KERNEL], kernel);
	assert_int_equal(c->by[SR_TIME_OFFCPU], offcpu);
}

static void test_call_hook(void **state)
{
	struct seen_calls s = { .n = 0 };
	struct sr_options opt = { .on_call = on_call_cb, .call_ctx = &s };
	struct sr_machine *m = new_machine(&opt);
	struct sr_cct *cct;

	(void)state;
	feed_syscall_block(m, 0, 0);
	cct = finish(m, 0);
	/* a [0,60) makes futex at 10, switched out [12,50), back at 52 */
	assert_int_equal(s.n, 4);
	expect_call(&s, 0, "[off-cpu]", 3, 12, 50, true, 0, 0, 38);
	expect_call(&s, 1, "[kernel] futex", 2, 10, 52, true, 0, 4, 38);
	expect_call(&s, 2, "a", 1, 0, 60, true, 18, 4, 38);
	expect_call(&s, 3, "main", 0, 0, 70, false, 28, 4, 38);
	sr_cct_free(cct);

	/* the --time window clips (and makes inferred); --root marks */
	s.n = 0;
	opt.time_start = 1015;
	opt.time_end = 1050;
	opt.root = "b";
	m = new_machine(&opt);
	feed_nested(m, 1, 1000);
	cct = finish(m, 0);
	/* (the split is the whole call's, window or not) */
	assert_int_equal(s.n, 4);
	expect_call(&s, 0, "b", 2, 1015, 1030, false, 20, 0, 0);
	assert_true(s.v[0].in_root);
	expect_call(&s, 1, "b", 2, 1035, 1045, true, 10, 0, 0);
	expect_call(&s, 2, "a", 1, 1015, 1050, false, 60, 0, 0);
	assert_false(s.v[2].in_root);
	expect_call(&s, 3, "main", 0, 1015, 1050, false, 100, 0, 0);
	sr_cct_free(cct);
}

/* Inline frames: inside main, [0x400, 0x800) is g inlined (context 1),
 * [0x600, 0x700) h inlined into that g (context 2), [0x900, 0xa00) g
 * inlined a second time (context 3). Keys 200 "g (inlined)", 201 "h
 * (inlined)". */
#define MAIN_AT(off) (BASE(F_MAIN) + (off))
static uint32_t inl_at(void *ctx, uint32_t pid, uint64_t ip, uint64_t *lo, uint64_t *hi)
{
	(void)ctx;
	(void)pid;
	*lo = *hi = ip;       /* (no range: the machine asks for every ip) */
	if (ip >= MAIN_AT(0x600) && ip < MAIN_AT(0x700))
		return 2;
	if (ip >= MAIN_AT(0x400) && ip < MAIN_AT(0x800))
		return 1;
	if (ip >= MAIN_AT(0x900) && ip < MAIN_AT(0xa00))
		return 3;
	return 0;
}

static uint32_t inl_up(void *ctx, uint32_t id, uint64_t *key)
{
	(void)ctx;
	*key = id == 2 ? 201 : id ? 200 : 0;
	return id == 2 ? 1 : 0;
}

static const char *inl_name(void *ctx, uint64_t key)
{
	return key == 200 ? "g (inlined)" : key == 201 ? "h (inlined)" : fake_name(ctx, key);
}

static const struct sr_symbolizer inl_sym = {
	.func_key = fake_key, .name = inl_name, .func_start = fake_start,
	.inline_at = inl_at, .inline_up = inl_up,
};

#define INL(m, tid, t, toip) feed_ev(m, tid, t, DC_EV_INLINE, 0, 0, toip, 0, 0)

static void inline_run(struct sr_machine *m)
{
	CALL(m, 1, 0, F_MAIN, F_A);
	feed_ev(m, 1, 10, DC_EV_RETURN, 0, IP(F_A), MAIN_AT(0x50), 0, 0);
	INL(m, 1, 12, MAIN_AT(0x400));            /* into g                     */
	feed_ev(m, 1, 20, DC_EV_CALL, 0, MAIN_AT(0x410), ENTRY(F_A), 0, 0);
	feed_ev(m, 1, 30, DC_EV_RETURN, 0, IP(F_A), MAIN_AT(0x415), 0, 0);
	INL(m, 1, 32, MAIN_AT(0x600));            /* h inside g                 */
	INL(m, 1, 35, MAIN_AT(0x420));            /* back in g                  */
	INL(m, 1, 37, MAIN_AT(0x430));            /* same context: nothing      */
	INL(m, 1, 40, MAIN_AT(0x900));            /* g's other instance: again  */
	INL(m, 1, 45, MAIN_AT(0x50));             /* main's own code            */
	END(m, 1, 50, F_MAIN);
}

static void test_inline_frames(void **state)
{
	struct sr_options nopt = { .no_inline = true };
	struct sr_machine *m = sr_machine_new(&inl_sym, NULL);
	struct sr_cct *cct;

	(void)state;
	inline_run(m);
	cct = finish(m, 0);
	expect_stacks(cct, "main 7\nmain;a 10\nmain;g (inlined) 20\nmain;g (inlined);a 10\n"
		      "main;g (inlined);h (inlined) 3\n");
	/* calls of an inline frame: entries into its instance from outside */
	expect_calls(cct, "main;g (inlined)", 2, 0);
	assert_int_equal(node_at(cct, "main;g (inlined)")->lat.sum, 28 + 5);
	expect_calls(cct, "main;g (inlined);h (inlined)", 1, 0);
	expect_calls(cct, "main;g (inlined);a", 1, 0);
	expect_calls(cct, "main;a", 1, 0);
	expect_identity(cct);
	sr_cct_free(cct);

	/* --no-inline: the same events, no inline frame */
	m = sr_machine_new(&inl_sym, &nopt);
	inline_run(m);
	cct = finish(m, 0);
	expect_stacks(cct, "main 30\nmain;a 20\n");
	expect_calls(cct, "main;a", 2, 0);
	sr_cct_free(cct);

	/* tracing starts inside h: the root and its inline frames inferred;
	 * a call from inlined code nests under it, and a frame ending ends
	 * its inline frames (complete: entered after the trace started) */
	m = sr_machine_new(&inl_sym, NULL);
	START(m, 1, 0, MAIN_AT(0x610));
	INL(m, 1, 5, MAIN_AT(0x410));
	feed_ev(m, 1, 8, DC_EV_CALL, 0, MAIN_AT(0x420), ENTRY(F_B), 0, 0);
	feed_ev(m, 1, 14, DC_EV_RETURN, 0, IP(F_B), MAIN_AT(0x430), 0, 0);
	INL(m, 1, 16, MAIN_AT(0x620));            /* h again: entered, seen     */
	INL(m, 1, 18, MAIN_AT(0x440));            /* ... and left               */
	END(m, 1, 20, F_MAIN);
	cct = finish(m, 0);
	expect_stacks(cct, "main;g (inlined) 7\nmain;g (inlined);b 6\n"
		      "main;g (inlined);h (inlined) 7\n");
	expect_calls(cct, "main", 1, 1);
	expect_calls(cct, "main;g (inlined)", 1, 1);
	expect_calls(cct, "main;g (inlined);h (inlined)", 2, 1);
	expect_calls(cct, "main;g (inlined);b", 1, 0);
	expect_identity(cct);
	sr_cct_free(cct);

	/* a symbolizer without inline_at: no inline frames, no events used */
	m = new_machine(NULL);
	inline_run(m);
	cct = finish(m, 0);
	expect_stacks(cct, "main 30\nmain;a 20\n");
	sr_cct_free(cct);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nested_calls),
		cmocka_unit_test(test_counts_only),
		cmocka_unit_test(test_recursion),
		cmocka_unit_test(test_tail_call_and_plt),
		cmocka_unit_test(test_plt_folded),
		cmocka_unit_test(test_unwinder_jumps),
		cmocka_unit_test(test_inline_frames),
		cmocka_unit_test(test_mutual_tail_recursion),
		cmocka_unit_test(test_jump_down_without_starts),
		cmocka_unit_test(test_longjmp_and_exception),
		cmocka_unit_test(test_unwinding_jumps),
		cmocka_unit_test(test_cold_part_rejoins),
		cmocka_unit_test(test_cold_part_named),
		cmocka_unit_test(test_longjmp_above_root),
		cmocka_unit_test(test_fall_through),
		cmocka_unit_test(test_return_switches_stack),
		cmocka_unit_test(test_return_to_next_function),
		cmocka_unit_test(test_kernel_frames),
		cmocka_unit_test(test_signal_handler),
		cmocka_unit_test(test_sigreturn_into_unseen_frame),
		cmocka_unit_test(test_sigreturn_evidence),
		cmocka_unit_test(test_resume_entry_vs_middle),
		cmocka_unit_test(test_sigreturn_pending_signal),
		cmocka_unit_test(test_start_mid_stack),
		cmocka_unit_test(test_underflow_into_stub),
		cmocka_unit_test(test_start_mid_recursion),
		cmocka_unit_test(test_start_at_entry),
		cmocka_unit_test(test_unseen_jumps_repaired),
		cmocka_unit_test(test_recursion_through_unseen_plt),
		cmocka_unit_test(test_unseen_longjmp),
		cmocka_unit_test(test_func_flags_callback),
		cmocka_unit_test(test_syscall_block_resume),
		cmocka_unit_test(test_syscall_names),
		cmocka_unit_test(test_preemption),
		cmocka_unit_test(test_cpu_migration),
		cmocka_unit_test(test_lost_recursion_level),
		cmocka_unit_test(test_lost_resync_keep),
		cmocka_unit_test(test_lost_resync_pop),
		cmocka_unit_test(test_lost_resync_entered_anew),
		cmocka_unit_test(test_lost_resync_at_entry),
		cmocka_unit_test(test_lost_resync_recursive_by_returns),
		cmocka_unit_test(test_lost_resync_stub_jump),
		cmocka_unit_test(test_lost_return),
		cmocka_unit_test(test_lost_resync_reset),
		cmocka_unit_test(test_lost_resync_in_recursion),
		cmocka_unit_test(test_lost_then_unwind_past_root),
		cmocka_unit_test(test_lost_in_recursive_function),
		cmocka_unit_test(test_lost_above_recursion),
		cmocka_unit_test(test_context_switch_from_root),
		cmocka_unit_test(test_lost_in_unnamed_code),
		cmocka_unit_test(test_lost_unproven_caller),
		cmocka_unit_test(test_lost_resume_held),
		cmocka_unit_test(test_lost_root_entered_again),
		cmocka_unit_test(test_sync_after_syscall),
		cmocka_unit_test(test_lost_first_then_sync),
		cmocka_unit_test(test_stop_at_end),
		cmocka_unit_test(test_exec_resets),
		cmocka_unit_test(test_exec_via_comm),
		cmocka_unit_test(test_exec_same_function),
		cmocka_unit_test(test_end_gap_and_restart),
		cmocka_unit_test(test_finish_extends_to_end),
		cmocka_unit_test(test_finish_not_after_disable),
		cmocka_unit_test(test_time_backwards),
		cmocka_unit_test(test_threads_merged),
		cmocka_unit_test(test_threads_per_thread),
		cmocka_unit_test(test_filter_tid),
		cmocka_unit_test(test_filter_comm),
		cmocka_unit_test(test_exec_splits_thread),
		cmocka_unit_test(test_exec_kernel_only_before),
		cmocka_unit_test(test_exec_filter_comm),
		cmocka_unit_test(test_exec_same_name_and_first),
		cmocka_unit_test(test_filter_root),
		cmocka_unit_test(test_filter_root_outermost_and_cxx),
		cmocka_unit_test(test_filter_time_window),
		cmocka_unit_test(test_filter_oncpu_offcpu),
		cmocka_unit_test(test_random_identity),
		cmocka_unit_test(test_garbage_streams),
		cmocka_unit_test(test_memory_bounded),
		cmocka_unit_test(test_depth_limit_and_bad_events),
		cmocka_unit_test(test_merge_sharded_machines),
		cmocka_unit_test(test_max_stack_truncated),
		cmocka_unit_test(test_call_hook),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
