/* ptflame - decoder/dc_hash.h: a small open-addressing hash map from u64
 * keys to u64 values (internal to decoder/). Key UINT64_MAX is reserved as
 * the empty marker. Used for tid -> pid, per-address symbol caches and the
 * like; every map owns its slot array.
 */
#ifndef PTFLAME_DC_HASH_H
#define PTFLAME_DC_HASH_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define DC_HASH_EMPTY UINT64_MAX

struct dc_hash_slot {
	uint64_t key;
	uint64_t val;
};

struct dc_hash {
	struct dc_hash_slot *slots;
	size_t cap;   /* power of two, 0 when unallocated */
	size_t used;
};

/* A 64-bit finalizer (murmur3's fmix64): spreads nearby keys (addresses,
 * tids) over all bits, for any power-of-two table of the room. */
static inline uint64_t dc_hash_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return x;
}

static inline size_t dc_hash_idx(uint64_t key, size_t cap)
{
	return (size_t)dc_hash_mix(key) & (cap - 1);
}

static inline void dc_hash_free(struct dc_hash *h)
{
	free(h->slots);
	h->slots = NULL;
	h->cap = h->used = 0;
}

static inline struct dc_hash_slot *dc_hash_find(const struct dc_hash *h, uint64_t key)
{
	if (!h->cap)
		return NULL;
	for (size_t i = dc_hash_idx(key, h->cap);; i = (i + 1) & (h->cap - 1)) {
		struct dc_hash_slot *s = &h->slots[i];

		if (s->key == key)
			return s;
		if (s->key == DC_HASH_EMPTY)
			return NULL;
	}
}

static inline int dc_hash_grow(struct dc_hash *h)
{
	size_t ncap = h->cap ? h->cap * 2 : 64;
	struct dc_hash_slot *ns = malloc(ncap * sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < ncap; i++)
		ns[i].key = DC_HASH_EMPTY;
	for (size_t i = 0; i < h->cap; i++) {
		struct dc_hash_slot *o = &h->slots[i];
		size_t j;

		if (o->key == DC_HASH_EMPTY)
			continue;
		for (j = dc_hash_idx(o->key, ncap); ns[j].key != DC_HASH_EMPTY;
		     j = (j + 1) & (ncap - 1))
			;
		ns[j] = *o;
	}
	free(h->slots);
	h->slots = ns;
	h->cap = ncap;
	return 0;
}

/* Insert or overwrite. 0 or -ENOMEM. */
static inline int dc_hash_put(struct dc_hash *h, uint64_t key, uint64_t val)
{
	struct dc_hash_slot *s = dc_hash_find(h, key);
	size_t i;

	if (s) {
		s->val = val;
		return 0;
	}
	if ((h->used + 1) * 4 > h->cap * 3) {
		int ret = dc_hash_grow(h);

		if (ret)
			return ret;
	}
	for (i = dc_hash_idx(key, h->cap); h->slots[i].key != DC_HASH_EMPTY;
	     i = (i + 1) & (h->cap - 1))
		;
	h->slots[i].key = key;
	h->slots[i].val = val;
	h->used++;
	return 0;
}

static inline bool dc_hash_get(const struct dc_hash *h, uint64_t key, uint64_t *val)
{
	const struct dc_hash_slot *s = dc_hash_find(h, key);

	if (!s)
		return false;
	*val = s->val;
	return true;
}

/* Drop every entry (keeps the allocation). */
static inline void dc_hash_clear(struct dc_hash *h)
{
	for (size_t i = 0; i < h->cap; i++)
		h->slots[i].key = DC_HASH_EMPTY;
	h->used = 0;
}

#endif
