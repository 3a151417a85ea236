/* ptflame - decoder/prescan.c: which binaries a trace runs, from its IP
 * packets, ahead of its decoding (see prescan.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/branch.h"
#include "decoder/dc_hash.h"
#include "decoder/dc_vec.h"
#include "decoder/perfdata.h"
#include "decoder/prescan.h"
#include "decoder/pt_lastip.h"
#include "decoder/ptpkt.h"

/* A queue's chunks are scanned in buffers of up to this many bytes (the
 * stream goes on across chunks; a packet cut at a buffer's end is lost,
 * and the next buffer starts at its first PSB). */
enum { SCAN_BUF = 256 << 10 };

struct bin {
	char *path;
	uint8_t bid[20];
	uint8_t bid_size;
	bool named;
};

struct pmap {
	uint64_t start, end;
	size_t bin;
};

struct pchunk {
	const uint8_t *data;
	uint64_t size;
	bool lost_before;          /* data was lost right before it          */
};

struct pqueue {
	struct pchunk *v;
	size_t n, cap;
	size_t next;               /* the first chunk not scanned whole ...  */
	uint64_t off;              /* ... and how much of it was             */
	uint64_t bytes;            /* of its chunks kept                     */
	uint64_t scanned;          /* (at most per_queue)                    */
};

struct dc_prescan {
	uint64_t per_queue, total, scanned;
	bool drop_pages;
	struct pt_config cfg;
	struct bin *bins;
	size_t nbins, cap_bins, named;
	struct dc_hash bin_idx;    /* chained hash of path and build-id -> bin */
	struct pmap *maps;
	size_t nmaps, cap_maps;
	bool sorted;
	struct pqueue *qs;
	size_t nqs;
	size_t turn;               /* the queue whose buffer is next         */
	uint8_t *buf;              /* the buffer being scanned ...           */
	size_t len;
	struct pt_packet_decoder *dec;
	uint64_t last_ip;          /* ... its decoder and last IP            */
};

struct dc_prescan *dc_prescan_new(uint64_t per_queue, uint64_t total, bool drop_pages)
{
	struct dc_prescan *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->drop_pages = drop_pages;
	p->per_queue = per_queue;
	p->total = total;
	p->cfg.size = sizeof(p->cfg);
	return p;
}

void dc_prescan_free(struct dc_prescan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nbins; i++)
		free(p->bins[i].path);
	free(p->bins);
	dc_hash_free(&p->bin_idx);
	free(p->maps);
	for (size_t i = 0; i < p->nqs; i++)
		free(p->qs[i].v);
	free(p->qs);
	pt_pkt_free_decoder(p->dec);
	free(p->buf);
	free(p);
}

int dc_prescan_add_chunk(struct dc_prescan *p, uint32_t q, const uint8_t *data, uint64_t size,
			 bool lost_before)
{
	struct pqueue *pq;

	if (q >= p->nqs) {
		struct pqueue *v = realloc(p->qs, ((size_t)q + 1) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + p->nqs, 0, ((size_t)q + 1 - p->nqs) * sizeof(*v));
		p->qs = v;
		p->nqs = (size_t)q + 1;
	}
	pq = &p->qs[q];
	if (pq->bytes >= p->per_queue || !size)
		return 0;                  /* (past what is scanned) */
	if (DC_VEC_PUSH_ROOM(pq->v, pq->n, pq->cap, 16))
		return -ENOMEM;
	pq->v[pq->n++] = (struct pchunk){ data, size, lost_before };
	pq->bytes += size;
	return 0;
}

static uint64_t bin_hash(const char *path, const uint8_t *bid, size_t n)
{
	uint64_t h = dc_strhash(path, strlen(path));

	for (size_t i = 0; i < n; i++)
		h = dc_hash_mix(h ^ bid[i]);
	return h;
}

int dc_prescan_add_map(struct dc_prescan *p, uint64_t start, uint64_t end, const char *path,
		       const uint8_t *build_id, size_t build_id_size)
{
	uint64_t k, i = 0;
	bool found;
	struct bin *b;

	if (start >= end || !strcmp(path, "[vdso]"))
		return 0;
	if (!build_id)
		build_id_size = 0;
	if (build_id_size > 20)
		build_id_size = 20;
	k = dc_hash_chain_start(bin_hash(path, build_id, build_id_size));
	while ((found = dc_hash_chain(&p->bin_idx, &k, &i))) {
		b = &p->bins[i];
		if (!strcmp(b->path, path) && b->bid_size == build_id_size &&
		    (!build_id_size || !memcmp(b->bid, build_id, build_id_size)))
			break;
	}
	if (!found) {
		if (DC_VEC_PUSH_ROOM(p->bins, p->nbins, p->cap_bins, 16))
			return -ENOMEM;
		b = &p->bins[p->nbins];
		memset(b, 0, sizeof(*b));
		if (!(b->path = strdup(path)) || dc_hash_put(&p->bin_idx, k, p->nbins)) {
			free(b->path);
			return -ENOMEM;
		}
		if (build_id_size)
			memcpy(b->bid, build_id, build_id_size);
		b->bid_size = (uint8_t)build_id_size;
		i = p->nbins++;
	}
	if (DC_VEC_PUSH_ROOM(p->maps, p->nmaps, p->cap_maps, 64))
		return -ENOMEM;
	p->maps[p->nmaps++] = (struct pmap){ start, end, (size_t)i };
	p->sorted = false;
	return 0;
}

void dc_prescan_config(struct dc_prescan *p, const struct pt_config *cfg)
{
	p->cfg = *cfg;
	p->cfg.size = sizeof(p->cfg);
	p->cfg.begin = p->cfg.end = NULL;
	p->cfg.decode.callback = NULL;
	p->cfg.decode.context = NULL;
}

static int cmp_map(const void *a, const void *b)
{
	const struct pmap *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The binary mapped at ip (the mapping that starts last at or before it),
 * or -1. */
static long bin_at(const struct dc_prescan *p, uint64_t ip)
{
	size_t a = DC_VEC_UPPER(p->maps, p->nmaps, start, ip);

	return a && ip < p->maps[a - 1].end ? (long)p->maps[a - 1].bin : -1;
}

/* Does pq have bytes left to scan within the shares? */
static bool has_left(const struct dc_prescan *p, const struct pqueue *pq)
{
	return pq->next < pq->n && pq->scanned < p->per_queue && p->scanned < p->total;
}

/* Fill the buffer from pq: its next chunks, up to a chunk after lost data
 * (its packets do not go on from the last ones), dropping the pages read
 * again (a queue's chunks come in file order; pieces up to a page apart
 * go in one call, not across other queues' chunks as the decoder's own
 * drops go: the main thread is decoding those first MiBs meanwhile). */
static void fill(struct dc_prescan *p, struct pqueue *pq)
{
	const uint8_t *lo = NULL, *hi = NULL;

	p->len = 0;
	while (has_left(p, pq) && p->len < SCAN_BUF) {
		const struct pchunk *c = &pq->v[pq->next];
		uint64_t left = c->size - pq->off;
		size_t take = left < SCAN_BUF - p->len ? (size_t)left : SCAN_BUF - p->len;
		const uint8_t *at = c->data + pq->off;

		if (p->len && !pq->off && c->lost_before)
			break;
		if (take > p->per_queue - pq->scanned)
			take = (size_t)(p->per_queue - pq->scanned);
		if (take > p->total - p->scanned)
			take = (size_t)(p->total - p->scanned);
		memcpy(p->buf + p->len, at, take);
		if (p->drop_pages && hi && (at < hi || at - hi > 4096)) {
			dc_drop_pages(lo, (uint64_t)(hi - lo));
			lo = NULL;
		}
		lo = lo ? lo : at;
		hi = at + take;
		p->len += take;
		p->scanned += take;
		pq->scanned += take;
		pq->off += take;
		if (pq->off == c->size) {
			pq->next++;
			pq->off = 0;
		}
	}
	if (p->drop_pages && hi)
		dc_drop_pages(lo, (uint64_t)(hi - lo));
}

/* The next buffer that has a PSB, from the queues in turn (one buffer of
 * each before the second of any): false when nothing is left within the
 * shares. */
static bool next_buffer(struct dc_prescan *p)
{
	if (!p->buf && !(p->buf = dc_pt_alloc(SCAN_BUF)))
		return false;
	for (;;) {
		struct pqueue *pq = NULL;

		for (size_t tries = 0; tries < p->nqs && !pq; tries++) {
			if (has_left(p, &p->qs[p->turn]))
				pq = &p->qs[p->turn];
			p->turn = (p->turn + 1) % p->nqs;
		}
		if (!pq)
			return false;
		fill(p, pq);
		memset(p->buf + p->len, 0, DC_PT_SLACK);
		pt_pkt_free_decoder(p->dec);
		p->cfg.begin = p->buf;
		p->cfg.end = p->buf + p->len;
		p->dec = pt_pkt_alloc_decoder(&p->cfg);
		p->last_ip = 0;
		if (!p->dec)
			return false;
		if (pt_pkt_sync_forward(p->dec) >= 0)
			return true;
		/* (no PSB in it: the queue's next one, in its turn) */
	}
}

int dc_prescan_next(void *ctx, const char **path, const uint8_t **build_id,
		    size_t *build_id_size)
{
	struct dc_prescan *p = ctx;
	struct pt_packet pkt;

	if (!p->sorted) {
		if (p->nmaps)   /* (no maps: none allocated, and qsort wants an array) */
			qsort(p->maps, p->nmaps, sizeof(*p->maps), cmp_map);
		p->sorted = true;
	}
	while (p->named < p->nbins) {
		int ret = p->dec ? pt_pkt_next(p->dec, &pkt, sizeof(pkt)) : -pte_eos;
		long bi;

		if (ret < 0) {
			/* the buffer's end, or bad data: on at the next PSB */
			if ((ret == -pte_eos || pt_pkt_sync_forward(p->dec) < 0) && !next_buffer(p))
				return 0;
			p->last_ip = 0;
			continue;
		}
		if (pkt.type == ppt_psb || pkt.type == ppt_ovf)
			p->last_ip = 0;
		if (pkt.type != ppt_tip && pkt.type != ppt_tip_pge && pkt.type != ppt_tip_pgd &&
		    pkt.type != ppt_fup)
			continue;
		dc_pt_last_ip(&p->last_ip, &pkt);
		if (pkt.payload.ip.ipc == pt_ipc_suppressed || dc_ip_is_kernel(p->last_ip) ||
		    (bi = bin_at(p, p->last_ip)) < 0 || p->bins[bi].named)
			continue;
		p->bins[bi].named = true;
		p->named++;
		*path = p->bins[bi].path;
		*build_id = p->bins[bi].bid;
		*build_id_size = p->bins[bi].bid_size;
		return 1;
	}
	return 0;
}
