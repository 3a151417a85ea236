/* ptflame - stackrebuild/hist: sparse log-linear latency histogram.
 *
 * Bucket index of v: v itself below 256 (exact); above, with k the position
 * of v's top bit (k >= 8), 256 + (k - 8) * 128 + the 7 bits below the top
 * bit. Each bucket above 256 is 1/128 of its power of two wide, so the middle
 * of a bucket is within 1/256 of any value in it. 7424 buckets cover all of
 * u64; a node only stores the ones it uses, sorted, so per-call latencies of
 * a context that always takes about the same time cost a few dozen bytes.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/dc_vec.h"
#include "stackrebuild/stackrebuild.h"

enum { EXACT = 256, SUB_BITS = 7, SUB = 1 << SUB_BITS, FIRST_K = 8 };

uint32_t sr_hist_bucket_index(uint64_t v)
{
	unsigned k;

	if (v < EXACT)
		return (uint32_t)v;
	k = 63u - (unsigned)__builtin_clzll(v);
	return EXACT + (k - FIRST_K) * SUB + (uint32_t)((v >> (k - SUB_BITS)) & (SUB - 1));
}

uint64_t sr_hist_bucket_lo(uint32_t idx)
{
	unsigned k, sub;

	if (idx < EXACT)
		return idx;
	k = (idx - EXACT) / SUB + FIRST_K;
	sub = (idx - EXACT) % SUB;
	return (1ull << k) + ((uint64_t)sub << (k - SUB_BITS));
}

uint64_t sr_hist_bucket_hi(uint32_t idx)
{
	unsigned k;

	if (idx < EXACT)
		return idx;
	k = (idx - EXACT) / SUB + FIRST_K;
	return sr_hist_bucket_lo(idx) + ((1ull << (k - SUB_BITS)) - 1);
}

void sr_hist_init(struct sr_hist *h)
{
	memset(h, 0, sizeof(*h));
}

void sr_hist_free(struct sr_hist *h)
{
	free(h->b);
	sr_hist_init(h);
}

/* Position of idx in h->b, or where it would be inserted. */
static uint32_t find(const struct sr_hist *h, uint32_t idx)
{
	uint32_t lo = 0, hi = h->nb;

	/* Latencies of one context cluster: the last bucket is a common hit. */
	if (!hi || h->b[hi - 1].idx < idx)
		return hi;
	/* without a branch on the data (a conditional move per step): which
	 * half a latency falls in is as good as random, and the mispredicted
	 * branches cost 3 % of report's time on a trace of short calls. The
	 * place is in [lo, lo + n]. */
	for (uint32_t n = hi; n > 1; n -= n / 2)
		lo = h->b[lo + n / 2].idx < idx ? lo + n / 2 : lo;
	return h->b[lo].idx < idx ? lo + 1 : lo;
}

static int bucket_add(struct sr_hist *h, uint32_t idx, uint64_t n)
{
	uint32_t pos = find(h, idx);

	if (pos < h->nb && h->b[pos].idx == idx) {
		h->b[pos].count += n;
		return 0;
	}
	if (DC_VEC_PUSH_ROOM32(h->b, h->nb, h->cap, 4))
		return -ENOMEM;
	memmove(h->b + pos + 1, h->b + pos, (h->nb - pos) * sizeof(*h->b));
	h->b[pos] = (struct sr_hist_bucket){ .idx = idx, .count = n };
	h->nb++;
	return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static void add_summary(struct sr_hist *h, uint64_t min, uint64_t max,
			uint64_t count, uint64_t sum)
{
	if (!h->count || min < h->min)
		h->min = min;
	if (!h->count || max > h->max)
		h->max = max;
	h->count += count;
	h->sum = sat_add(h->sum, sum);
}

int sr_hist_add_n(struct sr_hist *h, uint64_t v, uint64_t n)
{
	uint64_t sum;

	if (!n)
		return 0;
	if (bucket_add(h, sr_hist_bucket_index(v), n))
		return -ENOMEM;
	sum = v && n > UINT64_MAX / v ? UINT64_MAX : v * n;
	add_summary(h, v, v, n, sum);
	return 0;
}

void sr_hist_add_summary(struct sr_hist *h, uint64_t v)
{
	add_summary(h, v, v, 1, v);
}

int sr_hist_add(struct sr_hist *h, uint64_t v)
{
	return sr_hist_add_n(h, v, 1);
}

int sr_hist_merge(struct sr_hist *dst, const struct sr_hist *src)
{
	if (!src->count)
		return 0;
	for (uint32_t i = 0; i < src->nb; i++)
		if (bucket_add(dst, src->b[i].idx, src->b[i].count))
			return -ENOMEM;
	add_summary(dst, src->min, src->max, src->count, src->sum);
	return 0;
}

uint64_t sr_hist_percentile(const struct sr_hist *h, double p)
{
	uint64_t rank, seen = 0, v;

	if (!h->count)
		return 0;
	if (!(p > 0))           /* also NaN */
		return h->min;
	if (p >= 100)
		return h->max;
	rank = (uint64_t)ceil(p / 100.0 * (double)h->count);
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;
	for (uint32_t i = 0; i < h->nb; i++) {
		seen += h->b[i].count;
		if (seen < rank)
			continue;
		v = sr_hist_bucket_lo(h->b[i].idx);
		v += (sr_hist_bucket_hi(h->b[i].idx) - v + 1) / 2;
		if (v < h->min)
			v = h->min;
		if (v > h->max)
			v = h->max;
		return v;
	}
	return h->max;
}
