/* ptflame bench: the bare libipt block-decoder loop, the ceiling `report`
 * is measured against (bench/perf_bench.sh).
 *
 * libipt used the way a minimal call-tracing tool would use it: the
 * perf.data is read with decoder/perfdata.c (a reader is needed anyway);
 * every executable MMAP/MMAP2 goes into one image section cache and one
 * image (no per-process images, no sideband model); each AUX queue's
 * chunks are appended to a buffer of its own, and once that holds 4 MiB
 * (and at the end) it is decoded up to its last PSB, the rest kept for the
 * next piece, by a block decoder with blocks ending at calls and jumps (as
 * report needs, to see every call): sync, then events and blocks until
 * the piece ends, resync after an error. No time conversion, no symbols,
 * no output: it only counts blocks, instructions and call/return branches.
 * Copied chunks are dropped from memory (MADV_DONTNEED), so its peak RSS
 * is the tool's own.
 *
 * usage: ipt_bare [-p|-q|-Q|-k|-w|-W|-T|-x] [-c KIB] PERF.DATA
 *   -p  libipt's default blocks, ending only where libipt must (no
 *       end_on_call, end_on_jump)
 *   -q, -k  the query decoder alone, the packet decoder alone (below)
 *   -Q  our query decoder alone (decoder/ptquery.h), as -q
 *   -w  bench/ipt_walk.c, the moonshot's prototype, in place of libipt's
 *       block decoder: a walker of our own over the packet decoder
 *   -W  report's block decoder (decoder/wdec.c + decoder/ptwalk.c, over
 *       decoder/ptquery.c) in place of libipt's, configured as
 *       report decodes: also tick events
 *   -T  the same loop with libipt's block decoder alone (what report used
 *       before: -W's baseline)
 *   -x  libipt and -w, on each queue's data cut after each of its first bytes
 *       (cross_check below; a test)
 *   -c KIB  decode in pieces of about KIB KiB (default 4096), each from a
 *       PSB: tests cut small pieces, so that many pieces end with TNT bits
 *       not yet used (a decoder stops there, at its first block end)
 *
 * -q drains each piece with libipt's query decoder and no code at all: it
 * asks for the next conditional branch (a TNT bit) and, when the next
 * packet is no TNT, for the next indirect branch (a TIP), handling events
 * as they come. No instruction is walked, so this is the floor of any
 * decoder built on libipt's query layer with a walker of its own (issue
 * 12's moonshot: a per-address cache of block ends instead of libipt's
 * per-instruction walk). blocks counts TNT bits and TIPs, branches is 0.
 * -k only reads the packets (libipt's packet decoder): the floor under
 * that, a decoder's cost before it knows any branch. blocks counts packets.
 * prints one line: key=value pairs (bytes, secs, mib_s, blocks, insns,
 * branches, mbranch_s, errors: decode errors, resynchronised after; hash:
 * of the calls' and returns' addresses in order, for -w against libipt;
 * with -q and -Q of every answer and the time after it, which
 * e2e-decode-walk compares).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <intel-pt.h>

#include "bench/ipt_walk.h"
#include "decoder/dc_vec.h"
#include "decoder/perfdata.h"
#include "decoder/ptquery.h"
#include "decoder/wdec.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct counts {
	uint64_t bytes, blocks, insns, branches, errors, hash;
};

static void drop(const void *p, uint64_t size)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t a = ((uintptr_t)p + (uintptr_t)pg - 1) & ~(uintptr_t)(pg - 1);
	uintptr_t e = ((uintptr_t)p + size) & ~(uintptr_t)(pg - 1);

	if (e > a)
		madvise((void *)a, e - a, MADV_DONTNEED);
}

struct queue {
	uint32_t idx;
	uint8_t *buf;
	size_t len, cap;
};

static void decode_chunk(const struct pt_config *base, struct pt_image *image,
			 const uint8_t *data, uint64_t size, struct counts *c)
{
	struct pt_config cfg = *base;
	struct pt_block_decoder *dec;
	uint64_t off;
	int status;

	cfg.begin = (uint8_t *)data;
	cfg.end = (uint8_t *)data + size;
	dec = pt_blk_alloc_decoder(&cfg);
	if (!dec) {
		c->errors++;
		return;
	}
	pt_blk_set_image(dec, image);
	status = pt_blk_sync_forward(dec);
	if (status >= 0 && pt_blk_get_sync_offset(dec, &off) >= 0)
		c->bytes += size - off;
	while (status != -pte_eos) {
		struct pt_block b;

		if (status < 0) {
			c->errors++;
			status = pt_blk_sync_forward(dec);
			continue;
		}
		while (status & pts_event_pending) {
			struct pt_event ev;

			status = pt_blk_event(dec, &ev, sizeof(ev));
			if (status < 0)
				break;
		}
		if (status < 0)
			continue;
		if (status & pts_eos)
			break;
		status = pt_blk_next(dec, &b, sizeof(b));
		if (b.ninsn) {
			c->blocks++;
			c->insns += b.ninsn;
			if (b.iclass == ptic_call || b.iclass == ptic_return) {
				c->branches++;
				c->hash = walk_hash(c->hash, b.end_ip, b.iclass == ptic_return);
			}
		}
	}
	pt_blk_free_decoder(dec);
}

/* -W, -T: the loop above with report's block decoder (wdec.h), ours over
 * code (or libipt's alone: code NULL). */
static struct dc_wcode *wcode;
static struct dc_wdec wd;

static void wdec_chunk(const struct pt_config *base, struct pt_image *image,
		       const uint8_t *data, uint64_t size, struct counts *c)
{
	uint64_t off;
	int status;

	if (dc_wdec_open(&wd, wcode ? DC_WDEC_WALK : DC_WDEC_LIBIPT, base, data, size, image,
			 wcode, NULL)) {
		c->errors++;
		return;
	}
	status = dc_wdec_sync_forward(&wd);
	if (status >= 0 && dc_wdec_sync_offset(&wd, &off) >= 0)
		c->bytes += size - off;
	while (status != -pte_eos) {
		struct pt_block b;

		if (status < 0) {
			c->errors++;
			status = dc_wdec_sync_forward(&wd);
			continue;
		}
		while (status & pts_event_pending) {
			struct pt_event ev;

			status = dc_wdec_event(&wd, &ev);
			if (status < 0)
				break;
		}
		if (status < 0)
			continue;
		if (status & pts_eos)
			break;
		status = dc_wdec_next(&wd, &b);
		if (b.ninsn) {
			c->blocks++;
			c->insns += b.ninsn;
			if (b.iclass == ptic_call || b.iclass == ptic_return) {
				c->branches++;
				c->hash = walk_hash(c->hash, b.end_ip, b.iclass == ptic_return);
			}
		}
	}
	dc_wdec_close(&wd);
}

/* The query layer alone: libipt's (-q), ours (-Q: decoder/ptquery.h;
 * where it would bail, this counts an error and resyncs). */
#define QLOOP query_chunk
#define QDEC struct pt_query_decoder *dec
#define QALLOC(cfg) (dec = pt_qry_alloc_decoder(cfg))
#define QFREE() pt_qry_free_decoder(dec)
#define QSYNC(ip) pt_qry_sync_forward(dec, ip)
#define QSYNC_OFF(off) pt_qry_get_sync_offset(dec, off)
#define QEVENT(ev) pt_qry_event(dec, ev, sizeof(*(ev)))
#define QCOND(t) pt_qry_cond_branch(dec, t)
#define QIND(ip) pt_qry_indirect_branch(dec, ip)
#define QTIME(t, m, c) pt_qry_time(dec, t, m, c)
#include "bench/ipt_qloop.h"

static struct dc_qry our_qry;   /* (large: not on the stack) */
#define QLOOP our_query_chunk
#define QDEC struct dc_qry *dec = &our_qry
#define QALLOC(cfg) (dc_qry_init(dec, cfg) ? NULL : dec)
#define QFREE() (void)0
#define QSYNC(ip) dc_qry_sync_forward(dec, ip)
#define QSYNC_OFF(off) dc_qry_get_sync_offset(dec, off)
#define QEVENT(ev) dc_qry_event(dec, ev)
#define QCOND(t) dc_qry_cond_branch(dec, t)
#define QIND(ip) dc_qry_indirect_branch(dec, ip)
#define QTIME(t, m, c) dc_qry_time(dec, t, m, c)
#include "bench/ipt_qloop.h"

/* The packet layer alone (-k). */
static void packet_chunk(const struct pt_config *base, const uint8_t *data, uint64_t size,
			 struct counts *c)
{
	struct pt_config cfg = *base;
	struct pt_packet_decoder *dec;
	struct pt_packet pkt;
	uint64_t off;
	int status;

	cfg.begin = (uint8_t *)data;
	cfg.end = (uint8_t *)data + size;
	dec = pt_pkt_alloc_decoder(&cfg);
	if (!dec) {
		c->errors++;
		return;
	}
	status = pt_pkt_sync_forward(dec);
	if (status >= 0 && pt_pkt_get_sync_offset(dec, &off) >= 0)
		c->bytes += size - off;
	while (status != -pte_eos) {
		if (status < 0) {
			c->errors++;
			status = pt_pkt_sync_forward(dec);
			continue;
		}
		status = pt_pkt_next(dec, &pkt, sizeof(pkt));
		c->blocks += status >= 0;
	}
	pt_pkt_free_decoder(dec);
}

static const uint8_t psb[16] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
};

/* Decode q's buffer up to its last PSB (all of it: at_end), keep the rest. */
static char layer;    /* 'q', 'k': the query or packet layer alone; 'w' */

/* -w: bench/ipt_walk.c, from the first PSB. */
static void walk_pieces(const struct pt_config *cfg, const uint8_t *data, uint64_t size,
			struct counts *c)
{
	struct walk_counts wc = { .blocks = c->blocks, .branches = c->branches,
				  .errors = c->errors, .hash = c->hash };

	walk_chunk(cfg, data, size, &wc);
	c->bytes += size;
	c->blocks = wc.blocks;
	c->branches = wc.branches;
	c->errors = wc.errors;
	c->hash = wc.hash;
}

/* -x: the data cut after each of its first CROSS_MAX bytes, decoded by
 * libipt's block decoder and by the walker: their calls and returns must
 * be the same (a decoder stops wherever the data ends: after TNT bits not
 * used yet, a TIP.PGE, half a packet). blocks counts the cuts checked,
 * errors those that differ (the first few are named on stderr). */
enum { CROSS_MAX = 3072 };

static void cross_check(const struct pt_config *cfg, struct pt_image *image,
			const uint8_t *data, uint64_t size, struct counts *c)
{
	/* IPT_BARE_CUT=N: only the cut after N bytes (with IPT_WALK_TRACE=1,
	 * each decoder's calls and returns on stderr: where they part) */
	const char *only = getenv("IPT_BARE_CUT");

	for (uint64_t end = 1; end <= size && end <= CROSS_MAX; end++) {
		struct counts a = { 0 }, b = { 0 };

		if (only && end != strtoull(only, NULL, 0))
			continue;
		decode_chunk(cfg, image, data, end, &a);
		walk_pieces(cfg, data, end, &b);
		c->blocks++;
		if (a.branches != b.branches || a.hash != b.hash || a.errors != b.errors) {
			if (c->errors++ < 5)
				fprintf(stderr, "ipt_bare -x: cut after %llu bytes: libipt %llu calls "
					"and returns (hash %016llx, %llu errors), walker %llu (%016llx, "
					"%llu)\n", (unsigned long long)end,
					(unsigned long long)a.branches, (unsigned long long)a.hash,
					(unsigned long long)a.errors, (unsigned long long)b.branches,
					(unsigned long long)b.hash, (unsigned long long)b.errors);
		}
	}
	c->bytes += size;
}

static void decode_queue(const struct pt_config *cfg, struct pt_image *image, struct queue *q,
			 bool at_end, struct counts *c)
{
	size_t cut = q->len;

	if (!at_end) {
		cut = 0;
		for (size_t i = q->len >= sizeof(psb) ? q->len - sizeof(psb) + 1 : 0; i-- > 1;)
			if (q->buf[i] == 0x02 && !memcmp(q->buf + i, psb, sizeof(psb))) {
				cut = i;
				break;
			}
		if (!cut)
			return;
	}
	if (layer == 'q')
		query_chunk(cfg, q->buf, cut, c);
	else if (layer == 'Q')
		our_query_chunk(cfg, q->buf, cut, c);
	else if (layer == 'k')
		packet_chunk(cfg, q->buf, cut, c);
	else if (layer == 'w')
		walk_pieces(cfg, q->buf, cut, c);
	else if (layer == 'x')
		cross_check(cfg, image, q->buf, cut, c);
	else if (layer == 'W' || layer == 'T')
		wdec_chunk(cfg, image, q->buf, cut, c);
	else
		decode_chunk(cfg, image, q->buf, cut, c);
	memmove(q->buf, q->buf + cut, q->len - cut);
	q->len -= cut;
}

static struct queue *queue_of(struct queue **qs, size_t *n, uint32_t idx)
{
	struct queue *nq;

	for (size_t i = 0; i < *n; i++)
		if ((*qs)[i].idx == idx)
			return &(*qs)[i];
	nq = realloc(*qs, (*n + 1) * sizeof(*nq));
	if (!nq)
		return NULL;
	*qs = nq;
	nq += (*n)++;
	memset(nq, 0, sizeof(*nq));
	nq->idx = idx;
	return nq;
}

int main(int argc, char **argv)
{
	struct queue *qs = NULL, *q;
	size_t nq = 0;
	struct dc_perf_file *pf;
	struct dc_perf_record rec;
	struct pt_image_section_cache *isc = pt_iscache_alloc(NULL);
	struct pt_image *image = pt_image_alloc(NULL);
	struct pt_config cfg;
	struct counts c = { 0 };
	bool plain = false;
	size_t piece = 4u << 20, walk_refused = 0;
	char err[512];
	double t0;
	int ret, opt;

	struct dc_wsec *secs = NULL;
	size_t nsecs = 0, cap_secs = 0;

	while ((opt = getopt(argc, argv, "pqQkwxWTc:")) != -1) {
		if (opt == 'c') {
			unsigned long kib = strtoul(optarg, NULL, 0);

			if (kib < 1 || kib > (1ul << 20)) {
				fprintf(stderr, "ipt_bare: -c wants KiB from 1 to 1048576, not '%s'\n",
					optarg);
				return 2;
			}
			piece = kib << 10;
			continue;
		}
		if (!strchr("pqQkwxWT", opt)) {
			fprintf(stderr, "usage: ipt_bare [-p|-q|-Q|-k|-w|-W|-T|-x] [-c KIB] PERF.DATA\n");
			return 2;
		}
		plain |= opt == 'p';
		layer = opt == 'p' ? layer : (char)opt;
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: ipt_bare [-p|-q|-Q|-k|-w|-W|-T|-x] [-c KIB] PERF.DATA\n");
		return 2;
	}
	if (layer == 'W' && !(wcode = dc_wcode_new(isc))) {
		fprintf(stderr, "ipt_bare: out of memory\n");
		return 1;
	}
	if (!isc || !image || dc_perf_open(argv[optind], &pf, err, sizeof(err))) {
		fprintf(stderr, "ipt_bare: %s\n", err);
		return 1;
	}
	pt_config_init(&cfg);
	if (!plain) {
		cfg.flags.variant.block.end_on_call = 1;
		cfg.flags.variant.block.end_on_jump = 1;
	}
	t0 = now();
	while ((ret = dc_perf_next(pf, &rec)) > 0) {
		if (!rec.parsed)
			continue;
		if (rec.type == PERF_RECORD_AUXTRACE_INFO && rec.auxtrace_info.is_pt) {
			const struct dc_pt_info *pt = &rec.auxtrace_info.pt;

			cfg.cpuid_0x15_eax = (uint32_t)pt->tsc_ctc_ratio_d;
			cfg.cpuid_0x15_ebx = (uint32_t)pt->tsc_ctc_ratio_n;
			cfg.nom_freq = (uint8_t)pt->max_non_turbo_ratio;
		} else if ((rec.type == PERF_RECORD_MMAP || rec.type == PERF_RECORD_MMAP2) &&
			   !rec.mmap.data && rec.mmap.filename[0] == '/') {
			int isid = pt_iscache_add_file(isc, rec.mmap.filename, rec.mmap.pgoff,
						       rec.mmap.len, rec.mmap.start);

			if (isid > 0)
				pt_image_add_cached(image, isc, isid, NULL);
			if (isid > 0 && wcode &&
			    (DC_VEC_PUSH_ROOM(secs, nsecs, cap_secs, 16) ||
			     (secs[nsecs++] = (struct dc_wsec){ rec.mmap.start,
					rec.mmap.start + rec.mmap.len, isid, NULL, false },
			      dc_wcode_set(wcode, secs, nsecs)))) {
				fprintf(stderr, "ipt_bare: out of memory\n");
				return 1;
			}
			if ((layer == 'w' || layer == 'x') &&
			    walk_add_map(rec.mmap.filename, rec.mmap.start, rec.mmap.len,
					 rec.mmap.pgoff))
				walk_refused++;
		} else if (rec.type == PERF_RECORD_AUXTRACE) {
			q = queue_of(&qs, &nq, rec.auxtrace.idx);
			if (!q || (q->len + rec.auxtrace.size > q->cap &&
				   !(q->buf = realloc(q->buf, q->cap = 2 * (q->len + rec.auxtrace.size))))) {
				fprintf(stderr, "ipt_bare: out of memory\n");
				return 1;
			}
			memcpy(q->buf + q->len, rec.auxtrace.data, rec.auxtrace.size);
			q->len += rec.auxtrace.size;
			drop(rec.auxtrace.data, rec.auxtrace.size);
			if (q->len >= piece)
				decode_queue(&cfg, image, q, false, &c);
		}
	}
	for (size_t i = 0; i < nq; i++) {
		decode_queue(&cfg, image, &qs[i], true, &c);
		free(qs[i].buf);
	}
	free(qs);
	t0 = now() - t0;
	if (ret < 0) {
		fprintf(stderr, "ipt_bare: %s\n", dc_perf_errmsg(pf));
		return 1;
	}
	printf("bytes=%llu secs=%.3f mib_s=%.2f blocks=%llu insns=%llu branches=%llu "
	       "mbranch_s=%.2f errors=%llu hash=%016llx\n",
	       (unsigned long long)c.bytes, t0, (double)c.bytes / t0 / 1048576.0,
	       (unsigned long long)c.blocks, (unsigned long long)c.insns,
	       (unsigned long long)c.branches, (double)c.branches / t0 / 1e6,
	       (unsigned long long)c.errors, (unsigned long long)c.hash);
	if (walk_refused)   /* (libipt cannot read them either, or it can: then they differ) */
		fprintf(stderr, "ipt_bare: the walker did not read %zu mappings\n", walk_refused);
	if (layer == 'w' || layer == 'x')
		walk_free();
	free(wd.ops);
	free(secs);
	dc_wcode_free(wcode);
	pt_image_free(image);
	pt_iscache_free(isc);
	dc_perf_close(pf);
	return 0;
}
