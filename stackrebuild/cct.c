/* ptflame - stackrebuild/cct: the calling-context tree.
 *
 * Nodes live in slabs (they never move, so the stack machine's frames can
 * point at them) and are found by (parent, kind, key) in one hash table per
 * tree, so a call costs one lookup however wide the parent is. Walks are
 * iterative: a deep recursion in the traced program must not blow our stack.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/dc_hash.h"
#include "decoder/dc_vec.h"
#include "stackrebuild/cct_internal.h"

enum { SLAB_NODES = 256 };

struct node_slab {
	struct node_slab *next;
	size_t used;
	struct sr_node nodes[SLAB_NODES];
};

static size_t slot_of(const struct sr_cct *cct, const struct sr_node *parent,
		      unsigned kind, uint64_t key)
{
	uint64_t h = dc_hash_mix((uint64_t)(uintptr_t)parent ^ dc_hash_mix(key * 8 + kind));

	return (size_t)h & (cct->tab_cap - 1);
}

static size_t node_slot(const struct sr_cct *cct, const struct sr_node *n)
{
	return slot_of(cct, n->parent, n->kind, n->key);
}

struct sr_cct *sr_cct_new(const struct sr_symbolizer *sym)
{
	struct sr_cct *cct = calloc(1, sizeof(*cct));

	if (!cct)
		return NULL;
	cct->sym = sym;
	cct->root.kind = SR_NODE_ROOT;
	cct->tab_cap = 64;
	cct->tab = calloc(cct->tab_cap, sizeof(*cct->tab));
	if (!cct->tab) {
		free(cct);
		return NULL;
	}
	return cct;
}

void sr_cct_free(struct sr_cct *cct)
{
	if (!cct)
		return;
	for (struct node_slab *s = cct->slabs, *next; s; s = next) {
		next = s->next;
		for (size_t i = 0; i < s->used; i++)
			sr_hist_free(&s->nodes[i].lat);
		free(s);
	}
	sr_hist_free(&cct->root.lat);
	for (size_t i = 0; i < cct->names.n; i++)
		free(cct->names.names[i]);
	free(cct->names.keys);
	free(cct->names.names);
	dc_hash_free(&cct->names.idx);
	for (size_t i = 0; i < cct->nthreads; i++)
		free((char *)cct->threads[i].comm);
	free(cct->threads);
	free(cct->tab);
	sr_cct_free(cct->edges);
	free(cct);
}

const struct sr_cct *sr_cct_wake_edges(const struct sr_cct *cct)
{
	return cct->edges;
}

const struct sr_node *sr_cct_root(const struct sr_cct *cct)
{
	return &cct->root;
}

size_t sr_cct_node_count(const struct sr_cct *cct)
{
	return cct->nnodes;
}

size_t sr_cct_nthreads(const struct sr_cct *cct)
{
	return cct->nthreads;
}

const struct sr_thread_stats *sr_cct_thread(const struct sr_cct *cct, size_t i)
{
	return i < cct->nthreads ? &cct->threads[i] : NULL;
}

/* ---- names of pseudo and thread frames ---- */

/* The kind in the top byte: a THREAD key holds a part number above its
 * tid (machine.c: the parts of a thread's life split at its execs). */
#define NAME_KIND_SHIFT 56
static uint64_t name_key(unsigned kind, uint64_t key)
{
	return (uint64_t)kind << NAME_KIND_SHIFT | (key & ((UINT64_C(1) << NAME_KIND_SHIFT) - 1));
}

static const char *name_get(const struct name_map *m, uint64_t k)
{
	uint64_t i;

	return dc_hash_get(&m->idx, k, &i) ? m->names[i] : NULL;
}

/* Takes ownership of name (freed on failure). Replaces an existing one. */
static int name_put(struct name_map *m, uint64_t k, char *name)
{
	uint64_t i;
	size_t kcap = m->cap;   /* (names owns the capacity: it grows last) */

	if (!name)
		return -ENOMEM;
	if (dc_hash_get(&m->idx, k, &i)) {
		free(m->names[i]);
		m->names[i] = name;
		return 0;
	}
	if (DC_VEC_PUSH_ROOM(m->keys, m->n, kcap, 16) || DC_VEC_PUSH_ROOM(m->names, m->n, m->cap, 16) ||
	    dc_hash_put(&m->idx, k, m->n)) {
		free(name);
		return -ENOMEM;
	}
	m->keys[m->n] = k;
	m->names[m->n++] = name;
	return 0;
}

static char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *str_printf(const char *fmt, ...)
{
	va_list ap;
	char *out;
	int ret;

	va_start(ap, fmt);
	ret = vasprintf(&out, fmt, ap);
	va_end(ap);
	return ret < 0 ? NULL : out;
}

int sr_cct_name_thread(struct sr_cct *cct, uint64_t key, const char *comm)
{
	const char *c = comm && *comm ? comm : "unknown";

	return name_put(&cct->names, name_key(SR_NODE_THREAD, key),
			str_printf("%s-%u", c, (uint32_t)key));
}

int sr_cct_name_waker(struct sr_cct *cct, uint64_t key, const char *name)
{
	return name_put(&cct->names, name_key(SR_NODE_WAKER, key), strdup(name));
}

bool sr_cct_has_name(const struct sr_cct *cct, unsigned kind, uint64_t key)
{
	return name_get(&cct->names, name_key(kind, key)) != NULL;
}

int sr_cct_copy_names(struct sr_cct *dst, const struct sr_cct *src)
{
	for (size_t i = 0; i < src->names.n; i++) {
		uint64_t k = src->names.keys[i];
		unsigned kind = (unsigned)(k >> NAME_KIND_SHIFT);

		if ((kind != SR_NODE_WAKER && kind != SR_NODE_THREAD) ||
		    name_get(&dst->names, k))
			continue;
		if (name_put(&dst->names, k, strdup(src->names.names[i])))
			return -ENOMEM;
	}
	return 0;
}

static int name_kernel(struct sr_cct *cct, uint64_t key)
{
	uint64_t k = name_key(SR_NODE_KERNEL, key);
	const char *sys;

	if (key == SR_KEY_NONE || name_get(&cct->names, k))
		return 0;
	sys = sr_syscall_name((uint32_t)key);
	if (sys)
		return name_put(&cct->names, k, str_printf("[kernel] %s", sys));
	return name_put(&cct->names, k, str_printf("[kernel] sys_%llu",
						   (unsigned long long)key));
}

const char *sr_cct_func_name(const struct sr_cct *cct, const struct sr_node *n,
			     const struct sr_symbolizer *sym)
{
	const char *name;

	if (n->kind != SR_NODE_FUNC && n->kind != SR_NODE_TRUNCATED)
		return NULL;
	sym = sym ? sym : cct->sym;
	name = sym && sym->name ? sym->name(sym->ctx, n->key) : NULL;
	return name ? name : "[unknown]";
}

const char *sr_cct_name(const struct sr_cct *cct, const struct sr_node *n,
			const struct sr_symbolizer *sym)
{
	const char *name;

	switch (n->kind) {
	case SR_NODE_FUNC:
		sym = sym ? sym : cct->sym;
		name = sym && sym->name ? sym->name(sym->ctx, n->key) : NULL;
		return name ? name : "[unknown]";
	case SR_NODE_THREAD:
		name = name_get(&cct->names, name_key(n->kind, n->key));
		return name ? name : "[thread]";
	case SR_NODE_KERNEL:
		if (n->key == SR_KEY_NONE)
			return "[kernel]";
		name = name_get(&cct->names, name_key(n->kind, n->key));
		return name ? name : "[kernel]";
	case SR_NODE_OFFCPU:
		return "[off-cpu]";
	case SR_NODE_PREEMPT:
		return "[preempted]";
	case SR_NODE_LOST:
		return "[lost]";
	case SR_NODE_TRUNCATED:
		return "[truncated]";
	case SR_NODE_UNTRACED:
		return "[untraced]";
	case SR_NODE_WAKER:
		if (n->key == SR_KEY_NONE)
			return "[no wake record]";
		name = name_get(&cct->names, name_key(n->kind, n->key));
		return name ? name : "[woken by unknown]";
	case SR_NODE_ROOT:
		return "[root]";
	default:
		return "[unknown]";
	}
}

/* ---- lookup table ---- */

static int tab_grow(struct sr_cct *cct)
{
	size_t old_cap = cct->tab_cap;
	struct sr_node **old = cct->tab;

	cct->tab = calloc(old_cap * 2, sizeof(*cct->tab));
	if (!cct->tab) {
		cct->tab = old;
		return -ENOMEM;
	}
	cct->tab_cap = old_cap * 2;
	for (size_t i = 0; i < old_cap; i++) {
		size_t j;

		if (!old[i])
			continue;
		for (j = node_slot(cct, old[i]); cct->tab[j]; j = (j + 1) & (cct->tab_cap - 1))
			;
		cct->tab[j] = old[i];
	}
	free(old);
	return 0;
}

static void tab_insert(struct sr_cct *cct, struct sr_node *n)
{
	size_t i;

	for (i = node_slot(cct, n); cct->tab[i]; i = (i + 1) & (cct->tab_cap - 1))
		;
	cct->tab[i] = n;
}

static void tab_remove(struct sr_cct *cct, const struct sr_node *n)
{
	size_t mask = cct->tab_cap - 1, i, j;

	for (i = node_slot(cct, n); cct->tab[i] != n; i = (i + 1) & mask)
		;
	cct->tab[i] = NULL;
	/* Backward shift: move later entries of the probe run into the hole
	 * unless their home slot lies cyclically in (i, j]. */
	for (j = (i + 1) & mask; cct->tab[j]; j = (j + 1) & mask) {
		size_t h = node_slot(cct, cct->tab[j]);
		bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);

		if (!stays) {
			cct->tab[i] = cct->tab[j];
			cct->tab[j] = NULL;
			i = j;
		}
	}
}

static struct sr_node *node_alloc(struct sr_cct *cct)
{
	struct node_slab *s = cct->slabs;
	struct sr_node *n;

	if (!s || s->used == SLAB_NODES) {
		s = malloc(sizeof(*s));
		if (!s)
			return NULL;
		s->used = 0;
		s->next = cct->slabs;
		cct->slabs = s;
	}
	n = &s->nodes[s->used++];
	memset(n, 0, sizeof(*n));
	return n;
}

static void link_child(struct sr_node *parent, struct sr_node *n)
{
	n->parent = parent;
	n->next_sibling = parent->first_child;
	parent->first_child = n;
}

struct sr_node *sr_cct_child(struct sr_cct *cct, const struct sr_node *parent,
			     enum sr_node_kind kind, uint64_t key)
{
	struct sr_node *p = (struct sr_node *)(parent ? parent : &cct->root);
	struct sr_node *n;
	size_t i;

	for (i = slot_of(cct, p, kind, key); (n = cct->tab[i]); i = (i + 1) & (cct->tab_cap - 1))
		if (n->parent == p && n->key == key && n->kind == kind)
			return n;
	if ((cct->nnodes + 1) * 2 > cct->tab_cap && tab_grow(cct))
		return NULL;
	if (kind == SR_NODE_KERNEL && name_kernel(cct, key))
		return NULL;
	n = node_alloc(cct);
	if (!n)
		return NULL;
	n->kind = (uint8_t)kind;
	n->key = key;
	link_child(p, n);
	tab_insert(cct, n);
	cct->nnodes++;
	return n;
}

void sr_cct_detach(struct sr_cct *cct, struct sr_node *n)
{
	struct sr_node **link = &n->parent->first_child;

	tab_remove(cct, n);
	while (*link != n)
		link = &(*link)->next_sibling;
	*link = n->next_sibling;
	n->next_sibling = NULL;
	n->parent = NULL;
}

int sr_cct_attach(struct sr_cct *cct, struct sr_node *parent, struct sr_node *n)
{
	/* n is counted in nnodes already; the table has room for it. */
	link_child(parent, n);
	tab_insert(cct, n);
	return 0;
}

/* ---- statistics ---- */

void sr_node_add_time(struct sr_node *n, enum sr_time_kind kind, uint64_t ns)
{
	n->self_by[kind] += ns;
}

int sr_node_add_call(struct sr_node *n, bool complete, uint64_t latency_ns)
{
	n->calls++;
	if (!complete) {
		n->calls_inferred++;
		return 0;
	}
	return sr_hist_add(&n->lat, latency_ns);
}

void sr_node_count_call(struct sr_node *n, bool complete, uint64_t latency_ns)
{
	n->calls++;
	if (complete)
		sr_hist_add_summary(&n->lat, latency_ns);
	else
		n->calls_inferred++;
}

static int add_stats(struct sr_node *d, const struct sr_node *s, uint64_t *self_sum)
{
	d->calls += s->calls;
	d->calls_inferred += s->calls_inferred;
	for (int k = 0; k < SR_TIME_NKINDS; k++) {
		d->self_by[k] += s->self_by[k];
		if (self_sum)
			*self_sum += s->self_by[k];
	}
	return sr_hist_merge(&d->lat, &s->lat);
}

int sr_cct_merge_subtree(struct sr_cct *dst, struct sr_node *dst_parent,
			 const struct sr_node *src_node, bool with_self,
			 uint64_t *self_sum)
{
	const struct sr_node *s = src_node->first_child;
	struct sr_node *dp = dst_parent;

	if (with_self) {
		dp = sr_cct_child(dst, dst_parent, src_node->kind, src_node->key);
		if (!dp || add_stats(dp, src_node, self_sum))
			return -ENOMEM;
	}
	/* Pre-order walk of src; dp is the destination of s's parent. */
	while (s) {
		struct sr_node *dn = sr_cct_child(dst, dp, s->kind, s->key);

		if (!dn || add_stats(dn, s, self_sum))
			return -ENOMEM;
		if (s->first_child) {
			dp = dn;
			s = s->first_child;
			continue;
		}
		while (s != src_node && !s->next_sibling) {
			s = s->parent;
			dp = dp->parent;
		}
		if (s == src_node)
			break;
		s = s->next_sibling;
	}
	return 0;
}

void sr_cct_finalize(struct sr_cct *cct)
{
	struct sr_node *n = &cct->root;

	/* Post-order: a node's totals are complete when we leave it. */
	for (;;) {
		memcpy(n->total_by, n->self_by, sizeof(n->total_by));
		if (n->first_child) {
			n = n->first_child;
			continue;
		}
		for (;;) {
			struct sr_node *p = n->parent;

			n->self_ns = n->total_ns = 0;
			for (int k = 0; k < SR_TIME_NKINDS; k++) {
				n->self_ns += n->self_by[k];
				n->total_ns += n->total_by[k];
				if (p)
					p->total_by[k] += n->total_by[k];
			}
			if (!p)
				return;
			if (n->next_sibling) {
				n = n->next_sibling;
				break;
			}
			n = p;
		}
	}
}

int sr_cct_set_thread(struct sr_cct *cct, const struct sr_thread_stats *st)
{
	struct sr_thread_stats *t = NULL;
	char *comm;

	for (size_t i = 0; i < cct->nthreads; i++)
		if (cct->threads[i].tid == st->tid)
			t = &cct->threads[i];
	if (t) {
		/* Same thread seen by two machines (sharded decode): sum. */
		if (st->first_ns < t->first_ns)
			t->first_ns = st->first_ns;
		if (st->last_ns > t->last_ns)
			t->last_ns = st->last_ns;
		t->traced_ns += st->traced_ns;
		for (int k = 0; k < SR_TIME_NKINDS; k++)
			t->traced_by[k] += st->traced_by[k];
		t->kept_ns += st->kept_ns;
		t->events += st->events;
		t->lost += st->lost;
		t->lost_gaps += st->lost_gaps;
		t->undecoded_gaps += st->undecoded_gaps;
		t->undecoded_ns += st->undecoded_ns;
		t->resets += st->resets;
		t->underflows += st->underflows;
		t->repairs += st->repairs;
		t->selected |= st->selected;
		return 0;
	}
	if (DC_VEC_PUSH_ROOM(cct->threads, cct->nthreads, cct->threads_cap, 8))
		return -ENOMEM;
	comm = strdup(st->comm ? st->comm : "");
	/* (the machine names the frames of a thread split at its execs, one
	 * per part, before: a name there stays) */
	if (!comm || (!sr_cct_has_name(cct, SR_NODE_THREAD, st->tid) &&
		      sr_cct_name_thread(cct, st->tid, comm))) {
		free(comm);
		return -ENOMEM;
	}
	t = &cct->threads[cct->nthreads++];
	*t = *st;
	t->comm = comm;
	return 0;
}

int sr_cct_merge(struct sr_cct *dst, const struct sr_cct *src)
{
	int ret = sr_cct_merge_subtree(dst, &dst->root, &src->root, false, NULL);

	if (!ret)
		ret = sr_cct_copy_names(dst, src);
	if (!ret && src->edges) {
		if (!dst->edges && !(dst->edges = sr_cct_new(src->edges->sym)))
			return -ENOMEM;
		ret = sr_cct_merge(dst->edges, src->edges);
	}
	for (size_t i = 0; !ret && i < src->nthreads; i++)
		ret = sr_cct_set_thread(dst, &src->threads[i]);
	sr_cct_finalize(dst);
	return ret;
}

size_t sr_cct_mem_bytes(const struct sr_cct *cct)
{
	size_t bytes = sizeof(*cct) + cct->tab_cap * sizeof(*cct->tab);

	for (const struct node_slab *s = cct->slabs; s; s = s->next) {
		bytes += sizeof(*s);
		for (size_t i = 0; i < s->used; i++)
			bytes += s->nodes[i].lat.cap * sizeof(struct sr_hist_bucket);
	}
	bytes += cct->names.cap * (sizeof(uint64_t) + sizeof(char *)) +
		 cct->names.idx.cap * sizeof(*cct->names.idx.slots);
	bytes += cct->threads_cap * sizeof(*cct->threads);
	return bytes;
}
