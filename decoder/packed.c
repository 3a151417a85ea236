/* ptflame - decoder/packed.c: the records of perf.data's compressed
 * records (see packed.h), decompressed with libzstd. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "decoder/packed.h"

/* A compressed record decompresses to at most this: perf's own records
 * hold one copy of a ring buffer's data (megabytes); more is corrupt data,
 * not a recording. */
#define OUT_MAX ((size_t)64 << 20)

/* What one compressed record held, after the bytes of a record the one
 * before it began (carried over to here). */
struct blk {
	struct blk *next;
	uint64_t off;              /* the compressed record's file offset */
	size_t used, cap;
	uint8_t data[];
};

struct dc_packed {
	ZSTD_DCtx *dctx;
	struct blk *first, *last;
	struct blk *cur;           /* read from at pos                     */
	size_t pos;
	struct blk *replay;        /* a second pass: the next block to read */
};

struct dc_packed *dc_packed_new(void)
{
	struct dc_packed *z = calloc(1, sizeof(*z));

	if (z && !(z->dctx = ZSTD_createDCtx())) {
		free(z);
		return NULL;
	}
	return z;
}

void dc_packed_free(struct dc_packed *z)
{
	if (!z)
		return;
	for (struct blk *b = z->first, *n; b; b = n) {
		n = b->next;
		free(b);
	}
	ZSTD_freeDCtx(z->dctx);
	free(z);
}

void dc_packed_rewind(struct dc_packed *z)
{
	z->replay = z->first;
	z->cur = NULL;
	z->pos = 0;
}

static struct blk *grow(struct blk *b, size_t cap)
{
	struct blk *n = realloc(b, sizeof(*b) + cap);

	if (n)
		n->cap = cap;
	return n;
}

/* Decompress data into b after its b->used bytes, growing it as needed. */
static int inflate(struct dc_packed *z, struct blk **bp, const uint8_t *data, size_t size,
		   char *err, size_t errlen)
{
	ZSTD_inBuffer in = { data, size, 0 };

	for (;;) {
		struct blk *b = *bp;
		ZSTD_outBuffer out = { b->data, b->cap, b->used };
		size_t r = ZSTD_decompressStream(z->dctx, &out, &in);

		if (ZSTD_isError(r)) {
			snprintf(err, errlen, "corrupt zstd data (%s)", ZSTD_getErrorName(r));
			return -EINVAL;
		}
		b->used = out.pos;
		/* all taken, and room left: nothing more is held back */
		if (in.pos == in.size && out.pos < out.size)
			return 0;
		if (out.pos < out.size)
			continue;
		if (b->cap >= OUT_MAX) {
			snprintf(err, errlen, "decompresses to more than %zu MiB: corrupt data",
				 OUT_MAX >> 20);
			return -EINVAL;
		}
		if (!(b = grow(b, b->cap * 2 < OUT_MAX ? b->cap * 2 : OUT_MAX)))
			return -ENOMEM;
		*bp = b;
	}
}

int dc_packed_add(struct dc_packed *z, uint64_t off, const uint8_t *data, size_t size,
		  char *err, size_t errlen)
{
	size_t carry = z->cur ? z->cur->used - z->pos : 0;
	struct blk *b;
	int ret;

	/* read before: found again (a seek may have skipped some) */
	while (z->replay && z->replay->off < off)
		z->replay = z->replay->next;
	if (z->replay && z->replay->off == off) {
		z->cur = z->replay;
		z->replay = z->replay->next;
		z->pos = 0;
		return 0;
	}
	if (z->last && off <= z->last->off) {
		snprintf(err, errlen, "not where a compressed record was read before");
		return -EINVAL;
	}
	if (z->cur != z->last)
		carry = 0;   /* (only after a seek past records never read) */
	b = malloc(sizeof(*b) + carry + 4 * size + 4096);
	if (!b)
		return -ENOMEM;
	b->next = NULL;
	b->off = off;
	b->cap = carry + 4 * size + 4096;
	b->used = carry;
	if (carry) {
		memcpy(b->data, z->cur->data + z->pos, carry);
		z->cur->used = z->pos;   /* those bytes are read from here now */
	}
	if ((ret = inflate(z, &b, data, size, err, errlen))) {
		free(b);
		return ret;
	}
	if (z->last)
		z->last->next = b;
	else
		z->first = b;
	z->last = z->cur = b;
	z->pos = 0;
	return 0;
}

const uint8_t *dc_packed_next(struct dc_packed *z, size_t *avail)
{
	const uint8_t *p;
	uint16_t size;

	if (!z->cur || z->cur->used - z->pos < 8)
		return NULL;
	p = z->cur->data + z->pos;
	*avail = z->cur->used - z->pos;
	memcpy(&size, p + 6, sizeof(size));
	if (size >= 8 && size > *avail)
		return NULL;
	/* a size under 8 is no record: the caller says so, and stops */
	z->pos += size >= 8 ? size : *avail;
	return p;
}

size_t dc_packed_pending(const struct dc_packed *z)
{
	return z->cur ? z->cur->used - z->pos : 0;
}
