/* ptflame bench: the bare libipt block-decoder loop, the ceiling `report`
 * is measured against (bench/perf_bench.sh).
 *
 * libipt used the way a minimal call-tracing tool would use it: the
 * perf.data is read with decoder/perfdata.c (a reader is needed anyway);
 * every executable MMAP/MMAP2 goes into one image section cache and one
 * image (no per-process images, no sideband model); each AUXTRACE chunk is
 * decoded where it lies in the mapping (zero-copy) by a block decoder with
 * blocks ending at calls and jumps (as report needs, to see every call):
 * sync, then events and blocks until the chunk ends, resync after an
 * error. No time conversion, no symbols, no output: it only counts blocks,
 * instructions and call/return branches. A chunk's bytes before its first
 * PSB cannot be decoded this way; only the bytes from the first sync on
 * count as decoded. Consumed chunks are dropped from memory
 * (MADV_DONTNEED), so its peak RSS is the tool's own.
 *
 * usage: ipt_bare [-p] PERF.DATA     (-p: libipt's default blocks, ending
 *                                     only where libipt must: no end_on_call)
 * prints one line: key=value pairs (bytes, secs, mib_s, blocks, insns,
 * branches, mbranch_s, errors).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <intel-pt.h>

#include "decoder/perfdata.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct counts {
	uint64_t bytes, blocks, insns, branches, errors;
};

static void drop(const void *p, uint64_t size)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t a = ((uintptr_t)p + (uintptr_t)pg - 1) & ~(uintptr_t)(pg - 1);
	uintptr_t e = ((uintptr_t)p + size) & ~(uintptr_t)(pg - 1);

	if (e > a)
		madvise((void *)a, e - a, MADV_DONTNEED);
}

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
			c->branches += b.iclass == ptic_call || b.iclass == ptic_return;
		}
	}
	pt_blk_free_decoder(dec);
}

int main(int argc, char **argv)
{
	struct dc_perf_file *pf;
	struct dc_perf_record rec;
	struct pt_image_section_cache *isc = pt_iscache_alloc(NULL);
	struct pt_image *image = pt_image_alloc(NULL);
	struct pt_config cfg;
	struct counts c = { 0 };
	bool plain = false;
	char err[512];
	double t0;
	int ret, opt;

	while ((opt = getopt(argc, argv, "p")) != -1) {
		if (opt != 'p') {
			fprintf(stderr, "usage: ipt_bare [-p] PERF.DATA\n");
			return 2;
		}
		plain = true;
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: ipt_bare [-p] PERF.DATA\n");
		return 2;
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
		} else if (rec.type == PERF_RECORD_AUXTRACE) {
			decode_chunk(&cfg, image, rec.auxtrace.data, rec.auxtrace.size, &c);
			drop(rec.auxtrace.data, rec.auxtrace.size);
		}
	}
	t0 = now() - t0;
	if (ret < 0) {
		fprintf(stderr, "ipt_bare: %s\n", dc_perf_errmsg(pf));
		return 1;
	}
	printf("bytes=%llu secs=%.3f mib_s=%.2f blocks=%llu insns=%llu branches=%llu "
	       "mbranch_s=%.2f errors=%llu\n",
	       (unsigned long long)c.bytes, t0, (double)c.bytes / t0 / 1048576.0,
	       (unsigned long long)c.blocks, (unsigned long long)c.insns,
	       (unsigned long long)c.branches, (double)c.branches / t0 / 1e6,
	       (unsigned long long)c.errors);
	pt_image_free(image);
	pt_iscache_free(isc);
	dc_perf_close(pf);
	return c.errors ? 1 : 0;
}
