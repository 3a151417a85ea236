/* ptflame - flamegraph/strmap: a small string -> index hash map (internal).
 * Keys are not copied: they must outlive the map (they are the names the
 * caller stores in its own arrays). */
#ifndef PTFLAME_FG_STRMAP_H
#define PTFLAME_FG_STRMAP_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct fg_strmap {
	const char **keys;
	size_t *lens;
	size_t *vals;
	size_t cap, n;
};

/* FNV-1a, in steps: fg_fnv(fg_fnv(FG_FNV_BASIS, a, n), b, m) is the state
 * of a..b written one after the other, so a path's hash grows frame by
 * frame instead of being taken again from its root for every prefix. */
#define FG_FNV_BASIS 0xcbf29ce484222325ull

static inline uint64_t fg_fnv(uint64_t h, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

static inline uint64_t fg_fnv_end(uint64_t h)
{
	return h ^ (h >> 29);
}

static inline uint64_t fg_strhash(const char *s, size_t len)
{
	return fg_fnv_end(fg_fnv(FG_FNV_BASIS, s, len));
}

static inline void fg_strmap_free(struct fg_strmap *m)
{
	free(m->keys);
	free(m->lens);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* Index of key[0..len), whose fg_strhash is hash, or SIZE_MAX. */
static inline size_t fg_strmap_get_h(const struct fg_strmap *m, const char *key, size_t len,
				     uint64_t hash)
{
	if (!m->cap)
		return SIZE_MAX;
	for (size_t i = hash & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
		if (m->lens[i] == len && !memcmp(m->keys[i], key, len))
			return m->vals[i];
	return SIZE_MAX;
}

static inline size_t fg_strmap_get(const struct fg_strmap *m, const char *key, size_t len)
{
	return fg_strmap_get_h(m, key, len, fg_strhash(key, len));
}

static inline int fg_strmap_grow(struct fg_strmap *m)
{
	struct fg_strmap n = { 0 };

	n.cap = m->cap ? m->cap * 2 : 256;
	n.keys = calloc(n.cap, sizeof(*n.keys));
	n.lens = calloc(n.cap, sizeof(*n.lens));
	n.vals = calloc(n.cap, sizeof(*n.vals));
	if (!n.keys || !n.lens || !n.vals) {
		fg_strmap_free(&n);
		return -ENOMEM;
	}
	for (size_t k = 0; k < m->cap; k++) {
		size_t i;

		if (!m->keys[k])
			continue;
		for (i = fg_strhash(m->keys[k], m->lens[k]) & (n.cap - 1); n.keys[i];
		     i = (i + 1) & (n.cap - 1))
			;
		n.keys[i] = m->keys[k];
		n.lens[i] = m->lens[k];
		n.vals[i] = m->vals[k];
	}
	n.n = m->n;
	fg_strmap_free(m);
	*m = n;
	return 0;
}

/* Insert a key known to be absent, whose fg_strhash is hash. 0 or -ENOMEM. */
static inline int fg_strmap_put_h(struct fg_strmap *m, const char *key, size_t len, size_t val,
				  uint64_t hash)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap && fg_strmap_grow(m))
		return -ENOMEM;
	for (i = hash & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
		;
	m->keys[i] = key;
	m->lens[i] = len;
	m->vals[i] = val;
	m->n++;
	return 0;
}

static inline int fg_strmap_put(struct fg_strmap *m, const char *key, size_t len, size_t val)
{
	return fg_strmap_put_h(m, key, len, val, fg_strhash(key, len));
}

/* A set of 64-bit hashes (0 is stored as 1). */
struct fg_hashset {
	uint64_t *v;
	size_t cap, n;
};

static inline void fg_hashset_free(struct fg_hashset *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* 1 when h was added, 0 when present already, -ENOMEM. */
static inline int fg_hashset_add(struct fg_hashset *s, uint64_t h)
{
	size_t i;

	h = h ? h : 1;
	if ((s->n + 1) * 2 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		uint64_t *v = calloc(cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		for (size_t k = 0; k < s->cap; k++) {
			if (!s->v[k])
				continue;
			for (i = s->v[k] & (cap - 1); v[i]; i = (i + 1) & (cap - 1))
				;
			v[i] = s->v[k];
		}
		free(s->v);
		s->v = v;
		s->cap = cap;
	}
	for (i = h & (s->cap - 1); s->v[i]; i = (i + 1) & (s->cap - 1))
		if (s->v[i] == h)
			return 0;
	s->v[i] = h;
	s->n++;
	return 1;
}

#endif
