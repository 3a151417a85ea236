/* ptflame - stackrebuild/: CCT internals shared by cct.c and machine.c.
 * Not part of the public interface. */
#ifndef PTFLAME_SR_CCT_INTERNAL_H
#define PTFLAME_SR_CCT_INTERNAL_H

#include "decoder/dc_hash.h"
#include "stackrebuild/stackrebuild.h"

struct node_slab;

/* Names of pseudo and thread frames, built when the node is made so that
 * sr_cct_name() works on a const tree. Keyed by (kind << 32 | u32 key). */
struct name_map {
	struct dc_hash idx;       /* name key -> index in keys and names     */
	uint64_t *keys;
	char **names;
	size_t n, cap;
};

struct sr_cct {
	const struct sr_symbolizer *sym;
	struct sr_node root;
	size_t nnodes;
	/* All nodes but the root, by (parent, kind, key): open addressing,
	 * linear probing, backward-shift deletion. */
	struct sr_node **tab;
	size_t tab_cap;           /* power of two                             */
	struct node_slab *slabs;  /* node storage; nodes never move           */
	struct name_map names;
	struct sr_thread_stats *threads;
	size_t nthreads, threads_cap;
	struct sr_cct *edges;     /* wake edges (sr_cct_wake_edges), or NULL */
};

/* Unlink n from its parent and from the lookup table (it keeps its
 * subtree); sr_cct_attach() puts it under a new parent, which must not have
 * a child with the same (kind, key). */
void sr_cct_detach(struct sr_cct *cct, struct sr_node *n);
int sr_cct_attach(struct sr_cct *cct, struct sr_node *parent, struct sr_node *n);
/* Add the subtree at src_node (itself included when with_self, else only
 * its descendants) under dst_parent in dst. Adds the self time merged to
 * *self_sum when not NULL. 0 or -ENOMEM. */
int sr_cct_merge_subtree(struct sr_cct *dst, struct sr_node *dst_parent,
			 const struct sr_node *src_node, bool with_self,
			 uint64_t *self_sum);
/* Bytes held by the tree (slabs, table, histograms, names). */
size_t sr_cct_mem_bytes(const struct sr_cct *cct);
/* Copy the names of src's thread and waker frames that dst lacks.
 * 0 or -ENOMEM. */
int sr_cct_copy_names(struct sr_cct *dst, const struct sr_cct *src);
/* Is a name registered for (kind, key)? */
bool sr_cct_has_name(const struct sr_cct *cct, unsigned kind, uint64_t key);
/* Thread frame names: registers "comm-tid" for a THREAD node key (the tid
 * in its low 32 bits; a part of its life after an exec above them). */
int sr_cct_name_thread(struct sr_cct *cct, uint64_t key, const char *comm);

/* The node after n in a preorder walk of top's subtree (top excluded):
 * n's first child when descend, else the next sibling of n or of its
 * nearest ancestor below top that has one; NULL at the end. */
static inline struct sr_node *sr_cct_walk_next(const struct sr_node *top, const struct sr_node *n,
					       bool descend)
{
	if (descend && n->first_child)
		return n->first_child;
	while (n != top && !n->next_sibling)
		n = n->parent;
	return n == top ? NULL : n->next_sibling;
}

#endif
