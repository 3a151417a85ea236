/* ptflame - flamegraph/slowest: report --slowest N FUNC (see slowest.h). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/dc_hash.h"
#include "decoder/dc_vec.h"
#include "flamegraph/flamegraph.h"

/* A call that ended under an open call of FUNC. */
struct sl_rec {
	const struct sr_node *node;    /* valid while that call of FUNC is open */
	uint32_t depth;
	uint64_t start, end;
};

struct sl_thread {
	uint32_t tid;
	struct sl_rec *v;
	size_t n, cap;
	bool cut;                      /* records were dropped (too many)    */
};

/* One line of a kept call's subtree. */
struct sl_line {
	char *name;
	uint32_t depth;                /* 0: the call itself                 */
	uint64_t offset, total, calls;
};

struct sl_call {
	uint32_t pid, tid;
	uint64_t start, end;
	uint64_t by[SR_TIME_NKINDS];
	struct sl_line *lines;
	size_t nlines;
	bool cut;
};

struct fg_slowest {
	size_t want;
	char *func;
	pthread_mutex_t lock;
	struct dc_hash match;          /* FUNC node key -> 1 is func, 2 not  */
	struct dc_hash tidx;           /* tid -> index in th                 */
	struct sl_thread *th;
	size_t nth, thcap;
	struct sl_call *top;           /* slowest first, at most want        */
	size_t ntop;
	uint64_t calls;
};

struct fg_slowest *fg_slowest_new(size_t n, const char *func)
{
	struct fg_slowest *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->want = n ? n : 1;
	s->func = strdup(func);
	s->top = calloc(s->want, sizeof(*s->top));
	if (!s->func || !s->top || pthread_mutex_init(&s->lock, NULL)) {
		free(s->func);
		free(s->top);
		free(s);
		return NULL;
	}
	return s;
}

static void call_free(struct sl_call *c)
{
	for (size_t i = 0; i < c->nlines; i++)
		free(c->lines[i].name);
	free(c->lines);
	c->lines = NULL;
	c->nlines = 0;
}

void fg_slowest_free(struct fg_slowest *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ntop; i++)
		call_free(&s->top[i]);
	for (size_t i = 0; i < s->nth; i++)
		free(s->th[i].v);
	free(s->th);
	free(s->top);
	free(s->func);
	dc_hash_free(&s->match);
	dc_hash_free(&s->tidx);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

uint64_t fg_slowest_calls(const struct fg_slowest *s)
{
	return s->calls;
}

static bool name_is(const char *name, const char *want)
{
	size_t n = strlen(want);

	return !strncmp(name, want, n) && (name[n] == '\0' || name[n] == '(');
}

/* What a printf width must add to pad s to a width in characters. */
static int utf8_extra(const char *s)
{
	return (int)(strlen(s) - fg_text_width(s));
}

/* Is node a call of FUNC? Cached per function key (name NULL: asked of
 * cct when not cached). */
static int is_func(struct fg_slowest *s, const struct sr_node *n, const char *name,
		   const struct sr_cct *cct, bool *yes)
{
	uint64_t v;

	*yes = false;
	/* (a [truncated] frame, below --max-stack, is a call of its function
	 * as well) */
	if (n->kind != SR_NODE_FUNC && n->kind != SR_NODE_TRUNCATED)
		return 0;
	if (n->key != DC_HASH_EMPTY && dc_hash_get(&s->match, n->key, &v)) {
		*yes = v == 1;
		return 0;
	}
	*yes = name_is(name && n->kind == SR_NODE_FUNC ? name : sr_cct_func_name(cct, n, NULL),
		       s->func);
	return n->key == DC_HASH_EMPTY ? 0 : dc_hash_put(&s->match, n->key, *yes ? 1 : 2);
}

/* Is a call of FUNC open above node (among its callers)? */
static int under_func(struct fg_slowest *s, const struct sr_call *c, bool *yes)
{
	int ret = 0;

	*yes = false;
	for (const struct sr_node *n = c->node->parent; n && n->kind != SR_NODE_ROOT && !ret;
	     n = n->parent) {
		ret = is_func(s, n, NULL, c->cct, yes);
		if (*yes)
			break;
	}
	return ret;
}

static struct sl_thread *thread_of(struct fg_slowest *s, uint32_t tid)
{
	uint64_t i;

	if (dc_hash_get(&s->tidx, tid, &i))
		return &s->th[i];
	if (DC_VEC_PUSH_ROOM(s->th, s->nth, s->thcap, 8))
		return NULL;
	if (dc_hash_put(&s->tidx, tid, s->nth))
		return NULL;
	s->th[s->nth] = (struct sl_thread){ .tid = tid };
	return &s->th[s->nth++];
}

/* ---- a kept call's subtree ---- */

struct sl_group {
	const struct sr_node *node;
	size_t parent;                 /* index + 1 in the groups, 0: the call */
	uint64_t first, total, calls;
	size_t first_child, next;      /* index + 1 lists, by first start     */
	const char *name;
};

static int cmp_group_first(const void *a, const void *b, void *ctx)
{
	const struct sl_group *g = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (g[x].first != g[y].first)
		return g[x].first < g[y].first ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int add_line(struct sl_call *k, size_t *cap, const char *name, uint32_t depth,
		    uint64_t offset, uint64_t total, uint64_t calls)
{
	if (DC_VEC_PUSH_ROOM(k->lines, k->nlines, *cap, 16))
		return -ENOMEM;
	char *copy = strdup(name);

	if (!copy)
		return -ENOMEM;
	k->lines[k->nlines++] = (struct sl_line){ copy, depth, offset, total, calls };
	return 0;
}

/* The records recs[0..n) (the calls inside c, in the order they ended)
 * grouped by context into k's lines. The names of records' nodes are
 * asked of the tree: c->name is only c's. */
static int make_subtree(struct sl_call *k, const struct sr_call *c, const struct sl_rec *recs,
			size_t n, const char *(*name_of)(const struct sr_node *, void *), void *nctx)
{
	struct sl_group *g = n ? calloc(n, sizeof(*g)) : NULL;
	struct dc_hash idx = { 0 };
	size_t ng = 0, cap = 0, *order = NULL, *stack = NULL, nst = 0;
	int ret = 0;

	if (n && !g)
		return -ENOMEM;
	for (size_t i = 0; i < n && !ret; i++) {
		uint64_t j;

		if (!dc_hash_get(&idx, (uint64_t)(uintptr_t)recs[i].node, &j)) {
			j = ng++;
			g[j] = (struct sl_group){ .node = recs[i].node, .first = recs[i].start,
						  .name = name_of(recs[i].node, nctx) };
			ret = dc_hash_put(&idx, (uint64_t)(uintptr_t)recs[i].node, j);
		}
		if (recs[i].start < g[j].first)
			g[j].first = recs[i].start;
		g[j].total += recs[i].end - recs[i].start;
		g[j].calls++;
	}
	/* parents: a group's node's parent is another group's, or c's node */
	order = ng ? malloc(ng * sizeof(*order)) : NULL;
	stack = ng ? malloc(ng * sizeof(*stack)) : NULL;
	if (ng && (!order || !stack))
		ret = -ENOMEM;
	for (size_t i = 0; i < ng && !ret; i++) {
		uint64_t p;

		order[i] = i;
		g[i].parent = dc_hash_get(&idx, (uint64_t)(uintptr_t)g[i].node->parent, &p) ?
			      (size_t)p + 1 : 0;
	}
	if (!ret) {
		size_t heads = 0;

		/* children lists in order of first start (built backwards) */
		qsort_r(order, ng, sizeof(*order), cmp_group_first, g);
		for (size_t i = ng; i-- > 0;) {
			struct sl_group *x = &g[order[i]];

			if (x->parent) {
				x->next = g[x->parent - 1].first_child;
				g[x->parent - 1].first_child = order[i] + 1;
			} else {
				x->next = heads;
				heads = order[i] + 1;
			}
		}
		ret = add_line(k, &cap, c->node->kind == SR_NODE_TRUNCATED ?
				   sr_cct_func_name(c->cct, c->node, NULL) : c->name,
			       0, 0, c->end_ns - c->start_ns, 1);
		/* depth first; stack holds the next sibling to visit per level */
		if (heads)
			stack[nst++] = heads;
		while (nst && !ret) {
			size_t at = stack[nst - 1];
			struct sl_group *x;

			if (!at) {
				nst--;
				continue;
			}
			x = &g[at - 1];
			stack[nst - 1] = x->next;
			if (k->nlines >= FG_SLOWEST_MAX_LINES) {
				k->cut = true;
				break;
			}
			ret = add_line(k, &cap, x->name ? x->name : "[unknown]", (uint32_t)nst,
				       x->first - c->start_ns, x->total, x->calls);
			if (x->first_child && nst < ng)
				stack[nst++] = x->first_child;
		}
	}
	free(order);
	free(stack);
	free(g);
	dc_hash_free(&idx);
	return ret;
}

/* ---- feeding ---- */

/* Where in top a call of duration d would go (ntop: not kept): longest
 * first, then earliest, then by tid, so that the order in which threads'
 * calls arrive does not matter. */
static size_t rank_of(const struct fg_slowest *s, uint64_t d, uint64_t start, uint32_t tid)
{
	size_t i = s->ntop;

	while (i > 0) {
		const struct sl_call *o = &s->top[i - 1];
		uint64_t od = o->end - o->start;

		if (od > d || (od == d && (o->start < start || (o->start == start && o->tid <= tid))))
			break;
		i--;
	}
	return i;
}

/* (a [truncated] frame, below --max-stack, by the function it runs) */
static const char *tree_name(const struct sr_node *n, void *ctx)
{
	const char *f = n->kind == SR_NODE_TRUNCATED ? sr_cct_func_name(ctx, n, NULL) : NULL;

	return f ? f : sr_cct_name(ctx, n, NULL);
}

/* A call of FUNC ended: the records at the end of t's list (those inside
 * it) make its subtree when it is among the slowest. */
static int on_func_end(struct fg_slowest *s, struct sl_thread *t, const struct sr_call *c,
		       bool nested)
{
	size_t i = t->n, r;
	uint64_t d = c->end_ns - c->start_ns;
	int ret = 0;

	while (i > 0 && t->v[i - 1].start >= c->start_ns && t->v[i - 1].depth > c->depth)
		i--;
	if (c->complete && c->selected && c->in_root) {
		s->calls++;
		r = rank_of(s, d, c->start_ns, c->tid);
		if (r < s->want) {
			struct sl_call k = { .pid = c->pid, .tid = c->tid, .start = c->start_ns,
					     .end = c->end_ns, .cut = t->cut };

			memcpy(k.by, c->by, sizeof(k.by));
			ret = make_subtree(&k, c, t->v + i, t->n - i, tree_name, (void *)c->cct);
			if (ret) {
				call_free(&k);
				return ret;
			}
			if (s->ntop == s->want)
				call_free(&s->top[--s->ntop]);
			memmove(&s->top[r + 1], &s->top[r], (s->ntop - r) * sizeof(*s->top));
			s->top[r] = k;
			s->ntop++;
		}
	}
	if (!nested) {
		/* the outermost open call of FUNC is over: nothing kept is
		 * needed any more */
		t->n = 0;
		t->cut = false;
	}
	return ret;
}

static int keep(struct sl_thread *t, const struct sr_call *c)
{
	if (t->n >= FG_SLOWEST_MAX_KEPT) {
		t->cut = true;
		return 0;
	}
	if (DC_VEC_PUSH_ROOM(t->v, t->n, t->cap, 64))
		return -ENOMEM;
	t->v[t->n++] = (struct sl_rec){ .node = c->node, .depth = c->depth, .start = c->start_ns,
					.end = c->end_ns };
	return 0;
}

static int call_locked(struct fg_slowest *s, const struct sr_call *c)
{
	struct sl_thread *t;
	bool self, nested;
	int ret = is_func(s, c->node, c->name, c->cct, &self);

	if (!ret)
		ret = under_func(s, c, &nested);
	if (ret || (!self && !nested))
		return ret;
	t = thread_of(s, c->tid);
	if (!t)
		return -ENOMEM;
	if (self)
		ret = on_func_end(s, t, c, nested);
	/* inside an outer call of FUNC: part of its subtree too */
	if (!ret && nested)
		ret = keep(t, c);
	return ret;
}

int fg_slowest_call(void *ctx, const struct sr_call *c)
{
	struct fg_slowest *s = ctx;
	int ret;

	pthread_mutex_lock(&s->lock);
	ret = call_locked(s, c);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

/* ---- the report ---- */

static void fmt(char *buf, size_t n, uint64_t ns, bool raw)
{
	if (raw)
		snprintf(buf, n, "%" PRIu64, ns);
	else
		fg_format_ns(buf, n, ns);
}

static const char *comm_of(const struct sr_cct *cct, uint32_t pid, uint32_t tid)
{
	size_t n = cct ? sr_cct_nthreads(cct) : 0;
	const char *any = NULL;

	for (size_t i = 0; i < n; i++) {
		const struct sr_thread_stats *st = sr_cct_thread(cct, i);

		if (st->tid == tid && st->comm && *st->comm) {
			if (st->pid == pid)
				return st->comm;
			any = st->comm;
		}
	}
	return any;
}

int fg_slowest_write(const struct fg_slowest *s, FILE *out, const struct sr_cct *cct, bool raw)
{
	char a[32], b[32], c_[32], d[32], e[32], f[32];

	fprintf(out, "# the %zu slowest of %" PRIu64 " complete call%s of %s\n", s->ntop, s->calls,
		s->calls == 1 ? "" : "s", s->func);
	for (size_t i = 0; i < s->ntop; i++) {
		const struct sl_call *k = &s->top[i];
		const char *comm = comm_of(cct, k->pid, k->tid);
		uint64_t user = k->by[SR_TIME_USER], kern = k->by[SR_TIME_KERNEL];
		uint64_t off = k->by[SR_TIME_OFFCPU], pre = k->by[SR_TIME_PREEMPT];

		fmt(a, sizeof(a), k->end - k->start, raw);
		fprintf(out, "\n#%zu %s %s, tid %" PRIu32 " (%s), at %" PRIu64 ".%09" PRIu64
			",%" PRIu64 ".%09" PRIu64 "\n", i + 1, k->nlines ? k->lines[0].name : s->func,
			a, k->tid,
			comm ? comm : "unknown", k->start / 1000000000, k->start % 1000000000,
			k->end / 1000000000, k->end % 1000000000);
		fmt(a, sizeof(a), user + kern, raw);
		fmt(b, sizeof(b), user, raw);
		fmt(c_, sizeof(c_), kern, raw);
		fmt(d, sizeof(d), off + pre, raw);
		fmt(e, sizeof(e), off, raw);
		fmt(f, sizeof(f), pre, raw);
		fprintf(out, "   on-CPU %s (user %s, kernel %s), off-CPU %s (blocked %s, preempted %s)",
			a, b, c_, d, e, f);
		if (k->by[SR_TIME_LOST]) {
			fmt(a, sizeof(a), k->by[SR_TIME_LOST], raw);
			fprintf(out, ", lost %s", a);
		}
		fputc('\n', out);
		for (size_t j = 0; j < k->nlines; j++) {
			const struct sl_line *l = &k->lines[j];

			fmt(a, sizeof(a), l->offset, raw);
			fmt(b, sizeof(b), l->total, raw);
			/* (columns of characters: "µs" is 3 bytes wide in UTF-8) */
			fprintf(out, "   +%-*s %*s %7" PRIu64 "  %*s%s\n", 12 + utf8_extra(a), a,
				12 + utf8_extra(b), b, l->calls, (int)(2 * l->depth), "", l->name);
		}
		if (k->cut)
			fprintf(out, "   (cut: more calls inside than kept)\n");
	}
	return ferror(out) ? -EIO : 0;
}
