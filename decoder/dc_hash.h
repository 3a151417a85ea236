/* ptflame - decoder/dc_hash.h: a small open-addressing hash map from u64
 * keys to u64 values (internal to decoder/). Key UINT64_MAX is reserved as
 * the empty marker. Used for tid -> pid, per-address symbol caches and the
 * like; every map owns its slot array. This is the project's one hash map:
 * stackrebuild/ and flamegraph/ use it too (downstream rooms may include
 * decoder headers), keys wider than 64 bits through the chains below.
 */
#ifndef PTFLAME_DC_HASH_H
#define PTFLAME_DC_HASH_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* Insert or overwrite (key never DC_HASH_EMPTY). 0 or -ENOMEM. */
static inline int dc_hash_put(struct dc_hash *h, uint64_t key, uint64_t val)
{
	size_t i = 0;

	/* one probe finds the key or the empty slot it would go in */
	if (h->cap) {
		for (i = dc_hash_idx(key, h->cap); h->slots[i].key != DC_HASH_EMPTY;
		     i = (i + 1) & (h->cap - 1))
			if (h->slots[i].key == key) {
				h->slots[i].val = val;
				return 0;
			}
	}
	if ((h->used + 1) * 4 > h->cap * 3) {
		int ret = dc_hash_grow(h);

		if (ret)
			return ret;
		for (i = dc_hash_idx(key, h->cap); h->slots[i].key != DC_HASH_EMPTY;
		     i = (i + 1) & (h->cap - 1))
			;
	}
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

/* ---- keys wider than 64 bits: strings, (pid, address) pairs, ...
 *
 * The caller keeps its entries in its own array; the map holds a 63-bit
 * hash of an entry's key -> the entry's index. An entry whose hash is taken
 * already goes at the next key (hash + 1, ...), so a lookup walks that chain
 * until a miss, comparing the entries it meets; the miss is the free key:
 *
 *	uint64_t k = dc_hash_chain_start(hash), i;
 *
 *	while (dc_hash_chain(&map, &k, &i))
 *		if (entry i is the key)
 *			return i;
 *	(append the new entry at index n) dc_hash_put(&map, k, n);
 */

static inline uint64_t dc_hash_chain_start(uint64_t hash)
{
	return hash & (UINT64_MAX >> 1);   /* never DC_HASH_EMPTY */
}

/* The index at *key, then *key moves on along the chain; false at the end
 * of the chain, *key then being the free key. */
static inline bool dc_hash_chain(const struct dc_hash *h, uint64_t *key, uint64_t *idx)
{
	if (!dc_hash_get(h, *key, idx))
		return false;
	*key = (*key + 1) & (UINT64_MAX >> 1);
	return true;
}

/* The one string hash: FNV-1a in steps, so that dc_fnv(dc_fnv(DC_FNV_BASIS,
 * a, n), b, m) is the state of a..b written one after the other (a path's
 * hash grows frame by frame); dc_fnv_end makes a hash of a state. */
#define DC_FNV_BASIS UINT64_C(0xcbf29ce484222325)

static inline uint64_t dc_fnv(uint64_t h, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * UINT64_C(0x100000001b3);
	return h;
}

static inline uint64_t dc_fnv_end(uint64_t h)
{
	return h ^ (h >> 29);
}

static inline uint64_t dc_strhash(const char *s, size_t len)
{
	return dc_fnv_end(dc_fnv(DC_FNV_BASIS, s, len));
}

/* Whether the NUL-terminated z is s[0..len). */
static inline bool dc_str_eq(const char *z, const char *s, size_t len)
{
	return !strncmp(z, s, len) && !z[len];
}

#endif
