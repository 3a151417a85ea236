/* ptflame - fuzz target: our query decoder (decoder/ptquery.h) against
 * libipt's, call for call, on any bytes. The input's first 4 bytes pick
 * the configuration (MTC period, CPUID 0x15 ratio or none, nominal
 * frequency, errata; the fourth's top bit: a query before any sync) and
 * seed the choice of queries; the rest is the trace. It aborts where ours
 * answers otherwise than libipt (bailing, DC_QRY_BAIL, is allowed: both
 * then start again past that point). Seeds: the first 4 KiB of PT of each
 * emulated recording (tests/fuzz/run.sh). Each decoder reads its own copy
 * of the trace, which ends where a page no one may read begins: ours right
 * there, libipt's DC_PT_SLACK zeros before it, as report gives it buffers
 * (decoder/ptpkt.h: libipt 2.0.5 reads a byte past the end). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <intel-pt.h>

#include "decoder/ptpkt.h"
#include "decoder/ptquery.h"
#include "tests/ptq_side.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct pt_config config(const uint8_t *h, uint8_t *buf, size_t len)
{
	struct pt_config c;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.begin = buf;
	c.end = buf + len;
	c.mtc_freq = h[0] & 15;
	if (h[1] & 3) {
		c.cpuid_0x15_eax = h[1] & 3;
		c.cpuid_0x15_ebx = h[1] >> 2;
	}
	c.nom_freq = h[2];
	c.errata.bdm70 = h[3] & 1;
	c.errata.skd007 = (h[3] >> 1) & 1;
	c.errata.skl168 = (h[3] >> 2) & 1;
	c.errata.skd010 = (h[3] >> 3) & 1;
	c.errata.apl11 = (h[3] >> 4) & 1;
	c.errata.apl12 = (h[3] >> 5) & 1;
	c.errata.skz84 = (h[3] >> 6) & 1;
	return c;
}

/* n bytes of data, then slack zeros, then a page that faults; NULL: no
 * memory. *m, *mlen: the mapping. */
static uint8_t *guarded(const uint8_t *data, size_t n, size_t slack, void **m, size_t *mlen)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), span = (n + slack + pg - 1) / pg * pg;
	uint8_t *b;

	*mlen = span + pg;
	*m = mmap(NULL, *mlen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*m == MAP_FAILED || mprotect((uint8_t *)*m + span, pg, PROT_NONE))
		return NULL;
	b = (uint8_t *)*m + span - slack - n;
	memcpy(b, data, n);
	return b;
}

/* Both decoders, libipt's over li, ours over c, until the trace ends (-1)
 * or ours bails: the offset libipt is at then (-1 if none). */
static long run(const struct pt_config *c, const struct pt_config *li, uint64_t *rs, bool presync)
{
	struct pt_query_decoder *l = pt_qry_alloc_decoder(li);
	static struct dc_qry q;
	static struct ptq_side x;
	/* (now and then a query before any sync, as the input says) */
	int st = presync ? 0 : -pte_nosync, op = 0, syncs = 0;
	long at = -1;

	if (!l || dc_qry_init(&q, c))
		abort();
	for (int i = 0; i < 4096; i++) {
		int r;

		*rs = *rs * 6364136223846793005ull + 1442695040888963407ull;
		op = ptq_next_op(st, op, *rs >> 20);
		if (op == 's' && st < 0 && ++syncs > 16)
			break;
		r = ptq_call(&x, l, &q, op);
		if (r < 0) {
			fprintf(stderr, "fuzz_ptquery: %s\n", x.why);
			abort();
		}
		if (!r) {
			uint64_t off;

			if (!pt_qry_get_offset(l, &off))
				at = (long)off;
			break;
		}
		st = x.sl;
		if (op == 's' && st == -pte_eos)
			break;
	}
	pt_qry_free_decoder(l);
	return at;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t rs;
	uint8_t *buf, *lbuf;
	struct pt_config c, li;
	void *m = MAP_FAILED, *lm = MAP_FAILED;
	size_t mlen = 0, lmlen = 0;

	if (size < 4)
		return 0;
	/* (the same address modulo 8 in both: the PSB search goes by it) */
	buf = guarded(data + 4, size - 4, 0, &m, &mlen);
	lbuf = guarded(data + 4, size - 4, DC_PT_SLACK, &lm, &lmlen);
	if (buf && lbuf) {
		c = config(data, buf, size - 4);
		li = config(data, lbuf, size - 4);
		rs = (uint64_t)data[0] | (uint64_t)data[1] << 8 | (uint64_t)data[2] << 16 |
		     (uint64_t)data[3] << 24;
		/* (an empty trace too) */
		for (long at; (at = run(&c, &li, &rs, data[3] & 0x80)) >= 0 &&
			      c.begin + at < c.end;) {
			c.begin += at + 1;
			li.begin += at + 1;
		}
	}
	if (m != MAP_FAILED)
		munmap(m, mlen);
	if (lm != MAP_FAILED)
		munmap(lm, lmlen);
	return 0;
}
