/* Helpers for the stackrebuild / fold unit tests: a fake symbolizer over
 * fixed address ranges, event builders, and an independent rendering of a
 * CCT as "path self" lines (not fg_fold, so the two check each other). */
#ifndef PTFLAME_TEST_STACK_UTIL_H
#define PTFLAME_TEST_STACK_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stackrebuild/stackrebuild.h"

/* Function N occupies [BASE(N), BASE(N) + 0x1000). Key = N. */
enum {
	F_NONE, F_MAIN, F_A, F_B, F_C, F_D, F_HANDLER, F_RESTORE, F_START, F_F,
	F_G, F_PLT_B, F_NSF, F_SEMI, F_LONGJMP, F_GOGO, F_UNNAMED, F_UNW_DEL, F_UNW_RAISE,
	F_SETCTX, F_SWAPCTX, F_NFUNCS
};
static const char *const fn_names[F_NFUNCS] = {
	"", "main", "a", "b", "c", "d", "handler", "__restore_rt", "_start", "f",
	"g", "b@plt", "ns::f(int)", "odd;name 12", "__longjmp", "gogo", "[unknown] (lib)",
	"_Unwind_DeleteException", "_Unwind_RaiseException", "setcontext", "__swapcontext",
};

#define BASE(f)  (0x400000ull + (uint64_t)(f) * 0x1000)
#define ENTRY(f) BASE(f)
#define IP(f)    (BASE(f) + 0x42)
#define KEY_UNKNOWN 999
/* Kernel function N (1..3, "k1".."k3") at [KBASE(N), KBASE(N) + 0x1000),
 * key 100 + N. */
#define KBASE(n) (0xffffffff81000000ull + (uint64_t)(n) * 0x1000)
#define KIP(n)   (KBASE(n) + 0x42)
static const char *const kfn_names[4] = { "k0", "k1", "k2", "k3" };

static inline uint64_t fake_key(void *ctx, uint32_t pid, uint64_t ip)
{
	(void)ctx;
	(void)pid;
	if (ip >= KBASE(0) && ip < KBASE(4))
		return 100 + (ip - KBASE(0)) / 0x1000;
	if (ip < BASE(1) || ip >= BASE(F_NFUNCS))
		return KEY_UNKNOWN;
	return (ip - 0x400000ull) / 0x1000;
}

static inline const char *fake_name(void *ctx, uint64_t key)
{
	(void)ctx;
	if (key >= 100 && key < 104)
		return kfn_names[key - 100];
	return key < F_NFUNCS ? fn_names[key] : NULL;
}

static inline uint64_t fake_start(void *ctx, uint32_t pid, uint64_t ip)
{
	(void)ctx;
	(void)pid;
	return ip & ~0xfffull;
}

static const struct sr_symbolizer fake_sym = {
	.func_key = fake_key, .name = fake_name, .func_start = fake_start,
};
static const struct sr_symbolizer fake_sym_nostart = {
	.func_key = fake_key, .name = fake_name,
};

static inline void feed_ev(struct sr_machine *m, uint32_t tid, uint64_t t, int kind, int reason,
		    uint64_t from, uint64_t to, uint32_t sysno, uint16_t cpu)
{
	struct dc_event ev = {
		.time_ns = t, .from_ip = from, .to_ip = to, .pid = 100, .tid = tid,
		.cpu = cpu, .kind = (uint8_t)kind, .reason = (uint8_t)reason, .sysno = sysno,
	};

	if (sr_machine_feed(m, &ev))
		abort();
}

#define CALL(m, tid, t, from, to)  feed_ev(m, tid, t, DC_EV_CALL, 0, IP(from), ENTRY(to), 0, 0)
#define RET(m, tid, t, from, to)   feed_ev(m, tid, t, DC_EV_RETURN, 0, IP(from), IP(to), 0, 0)
#define JMP(m, tid, t, from, toip) feed_ev(m, tid, t, DC_EV_JUMP, 0, IP(from), toip, 0, 0)
#define SYSCALL(m, tid, t, from, nr) \
	feed_ev(m, tid, t, DC_EV_TRACE_OFF, DC_OFF_SYSCALL, IP(from), 0, nr, 0)
#define FAULT(m, tid, t, from)     feed_ev(m, tid, t, DC_EV_TRACE_OFF, DC_OFF_FAULT, IP(from), 0, 0, 0)
#define SWOUT(m, tid, t)           feed_ev(m, tid, t, DC_EV_TRACE_OFF, DC_OFF_SWITCH, 0, 0, 0, 0)
#define PREEMPT(m, tid, t)         feed_ev(m, tid, t, DC_EV_TRACE_OFF, DC_OFF_PREEMPT, 0, 0, 0, 0)
#define END(m, tid, t, from)       feed_ev(m, tid, t, DC_EV_TRACE_OFF, DC_OFF_END, IP(from), 0, 0, 0)
#define SWIN(m, tid, t)            feed_ev(m, tid, t, DC_EV_TRACE_ON, DC_ON_SWITCH, 0, 0, 0, 0)
#define RESUME(m, tid, t, toip)    feed_ev(m, tid, t, DC_EV_TRACE_ON, DC_ON_RESUME, 0, toip, 0, 0)
#define START(m, tid, t, toip)     feed_ev(m, tid, t, DC_EV_TRACE_ON, DC_ON_START, 0, toip, 0, 0)
#define SYNC(m, tid, t, toip)      feed_ev(m, tid, t, DC_EV_TRACE_ON, DC_ON_SYNC, 0, toip, 0, 0)
#define LOST(m, tid, t)            feed_ev(m, tid, t, DC_EV_LOST, DC_LOST_OVF, 0, 0, 0, 0)

struct text {
	char *buf;
	size_t len, cap;
};

static inline void text_add(struct text *t, const char *s)
{
	size_t n = strlen(s);

	if (t->len + n + 1 > t->cap) {
		t->cap = (t->len + n + 1) * 2;
		t->buf = realloc(t->buf, t->cap);
		if (!t->buf)
			abort();
	}
	memcpy(t->buf + t->len, s, n + 1);
	t->len += n;
}

static inline int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct lines {
	char **v;
	size_t n, cap;
};

static inline void walk_lines(const struct sr_cct *cct, const struct sr_node *n, const char *prefix,
		       struct lines *out)
{
	for (const struct sr_node *c = n->first_child; c; c = c->next_sibling) {
		char *path;

		if (asprintf(&path, "%s%s%s", prefix, *prefix ? ";" : "",
			     sr_cct_name(cct, c, NULL)) < 0)
			abort();
		if (c->self_ns) {
			char *line;

			if (asprintf(&line, "%s %llu\n", path, (unsigned long long)c->self_ns) < 0)
				abort();
			if (out->n == out->cap) {
				out->cap = out->cap ? out->cap * 2 : 16;
				out->v = realloc(out->v, out->cap * sizeof(*out->v));
				if (!out->v)
					abort();
			}
			out->v[out->n++] = line;
		}
		walk_lines(cct, c, path, out);
		free(path);
	}
}

/* "path self\n" for every node with self time, sorted. Caller frees. */
static inline char *stacks(const struct sr_cct *cct)
{
	struct lines l = { 0 };
	struct text t = { 0 };

	text_add(&t, "");
	walk_lines(cct, sr_cct_root(cct), "", &l);
	if (l.n)  /* (qsort of NULL, even of 0 items, is undefined) */
		qsort(l.v, l.n, sizeof(*l.v), cmp_str);
	for (size_t i = 0; i < l.n; i++) {
		text_add(&t, l.v[i]);
		free(l.v[i]);
	}
	free(l.v);
	return t.buf;
}

/* The node at "a;b;c" (display names), or NULL. */
static inline const struct sr_node *node_at(const struct sr_cct *cct, const char *path)
{
	const struct sr_node *n = sr_cct_root(cct);
	char *copy = strdup(path), *save = NULL;

	for (char *tok = strtok_r(copy, ";", &save); tok && n; tok = strtok_r(NULL, ";", &save)) {
		const struct sr_node *c;

		for (c = n->first_child; c; c = c->next_sibling)
			if (!strcmp(sr_cct_name(cct, c, NULL), tok))
				break;
		n = c;
	}
	free(copy);
	return n;
}

/* visit(node, ctx) for every node of the subtree (top included), in
 * depth-first order; iterative: trees in the tests can be SR_MAX_DEPTH
 * deep. */
static inline void subtree_each(const struct sr_node *top,
				void (*visit)(const struct sr_node *n, void *ctx), void *ctx)
{
	const struct sr_node *n = top;

	for (;;) {
		visit(n, ctx);
		if (n->first_child) {
			n = n->first_child;
			continue;
		}
		while (n != top && !n->next_sibling)
			n = n->parent;
		if (n == top)
			return;
		n = n->next_sibling;
	}
}

static inline void add_self(const struct sr_node *n, void *sum)
{
	*(uint64_t *)sum += n->self_ns;
}

/* Sum of self time over the subtree (the node included). */
static inline uint64_t subtree_self(const struct sr_node *top)
{
	uint64_t sum = 0;

	subtree_each(top, add_self, &sum);
	return sum;
}

static inline void count_uncalled(const struct sr_node *n, void *bad)
{
	*(size_t *)bad += n->kind == SR_NODE_FUNC && n->first_child && !n->calls;
}

/* Function frames under top with callees but no call (the folded
 * output's annotation needs a call count on every frame that has frames
 * above it: check_folded.py --annotated). */
static inline size_t callees_without_calls(const struct sr_node *top)
{
	size_t bad = 0;

	subtree_each(top, count_uncalled, &bad);
	return bad;
}

static inline uint64_t threads_traced(const struct sr_cct *cct)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < sr_cct_nthreads(cct); i++)
		sum += sr_cct_thread(cct, i)->traced_ns;
	return sum;
}

static inline struct sr_cct *finish(struct sr_machine *m, uint64_t end)
{
	struct sr_cct *cct = NULL;

	if (sr_machine_finish(m, end, &cct) || !cct)
		abort();
	sr_machine_free(m);
	return cct;
}

#endif
