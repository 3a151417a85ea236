/* ptflame tests: our block decoder (decoder/ptwalk.c) against libipt's on
 * hand-written packets over hand-assembled code, for what the recordings
 * of walker.sh do not have (e2e-decode-walker-pkts):
 *  - tsx: MODE.TSX (in a transaction) in the PSB+: speculative blocks;
 *  - async: a FUP+TIP (async branch) in the middle of the run after a
 *    conditional branch: no event pending at that block's end;
 *  - pgd: a TIP.PGD (IP suppressed) binding to an indirect call, tracing
 *    resuming after it (TIP.PGE), then a compressed return: the return
 *    address the indirect call pushed is the one popped;
 *  - top: a TIP to the top address, the ip an entry's empty link has
 *    (libipt: no code there; the walker hands over).
 * Each trace is decoded with PTFLAME_DECODER=check's decoder (dc_wdec,
 * DC_WDEC_CHECK: libipt alongside, abort at the first difference) and the
 * walker must answer every call itself (no hand-over).
 * usage: walk_pkts DIR (a directory for the code file) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "decoder/wdec.h"

enum { BASE = 0x400000 };

/* the code at BASE */
static const uint8_t code[] = {
	/* 0x00 */ 0xe8, 0x0a, 0x00, 0x00, 0x00,   /* call 0x0f                 */
	/* 0x05 */ 0x90, 0x90, 0xc3,               /* nop; nop; ret             */
	/* 0x08 */ 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	/* 0x0f */ 0xff, 0xd0,                     /* call *%rax                */
	/* 0x11 */ 0x90, 0xc3,                     /* nop; ret                  */
	/* 0x13 */ 0x75, 0x02,                     /* jne 0x17                  */
	/* 0x15 */ 0x90, 0x90,                     /* nop; nop                  */
	/* 0x17 */ 0x90, 0x90,                     /* nop; nop                  */
	/* 0x19 */ 0xeb, 0xf8,                     /* jmp 0x13                  */
};

static struct pt_packet pk_ip(enum pt_packet_type t, uint64_t ip)
{
	struct pt_packet p = { .type = t };

	p.payload.ip.ipc = ip ? pt_ipc_sext_48 : pt_ipc_suppressed;
	p.payload.ip.ip = ip;
	return p;
}

static struct pt_packet pk(enum pt_packet_type t)
{
	return (struct pt_packet){ .type = t };
}

static struct pt_packet pk_exec(void)
{
	struct pt_packet p = { .type = ppt_mode };

	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	return p;
}

static struct pt_packet pk_tsx(int intx)
{
	struct pt_packet p = { .type = ppt_mode };

	p.payload.mode.leaf = pt_mol_tsx;
	p.payload.mode.bits.tsx.intx = intx;
	return p;
}

static struct pt_packet pk_tnt(int taken)
{
	struct pt_packet p = { .type = ppt_tnt_8 };

	p.payload.tnt.bit_size = 1;
	p.payload.tnt.payload = taken;
	return p;
}

static int fails;

/* Decode pkts (n of them) with check's decoder: every call both ways,
 * to the end (-pte_eos) with no hand-over, or with end_st and at most
 * one hand-over where end_st is not -pte_eos. */
static void run_to(const char *name, const struct pt_packet *pkts, size_t n,
		   struct pt_image *image, struct dc_wcode *code, int end_st)
{
	uint8_t buf[1024];
	struct pt_config cfg;
	struct pt_encoder *enc;
	struct dc_wdec d = { 0 };
	struct dc_wdec_stats st = { 0 };
	uint64_t calls = 0, blocks = 0, spec = 0;
	int status;

	memset(buf, 0, sizeof(buf));
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + sizeof(buf);
	enc = pt_alloc_encoder(&cfg);
	for (size_t i = 0; enc && i < n; i++)
		if (pt_enc_next(enc, &pkts[i]) < 0) {
			printf("FAIL: %s: packet %zu not encoded\n", name, i);
			fails++;
			pt_free_encoder(enc);
			return;
		}
	uint64_t len = 0;

	pt_enc_get_offset(enc, &len);
	pt_free_encoder(enc);
	if (dc_wdec_open(&d, DC_WDEC_CHECK, &cfg, buf, (size_t)len, image, code, &st)) {
		printf("FAIL: %s: no decoder\n", name);
		fails++;
		return;
	}
	status = dc_wdec_sync_forward(&d);
	calls++;
	while (status >= 0 && calls < 100) {
		if (status & pts_event_pending) {
			struct pt_event ev;

			status = dc_wdec_event(&d, &ev);
		} else {
			struct pt_block b;

			status = dc_wdec_next(&d, &b);
			blocks++;
			spec += b.speculative;
		}
		calls++;
	}
	dc_wdec_close(&d);
	free(d.ops);
	if (status != end_st) {
		printf("FAIL: %s: ends with %s\n", name, pt_errstr(pt_errcode(status)));
		fails++;
	} else if (st.bailed > (end_st != -pte_eos)) {
		printf("FAIL: %s: the walker handed over to libipt\n", name);
		fails++;
	} else {
		printf("ok: %s: %llu calls, %llu blocks (%llu speculative), walker = libipt\n", name,
		       (unsigned long long)calls, (unsigned long long)blocks,
		       (unsigned long long)spec);
	}
}

static void run(const char *name, const struct pt_packet *pkts, size_t n,
		struct pt_image *image, struct dc_wcode *code)
{
	run_to(name, pkts, n, image, code, -pte_eos);
}

int main(int argc, char **argv)
{
	char path[4096];
	struct pt_image_section_cache *isc = pt_iscache_alloc(NULL);
	struct pt_image *image = pt_image_alloc(NULL);
	struct dc_wcode *wc = dc_wcode_new(isc);
	FILE *f;
	int isid;

	snprintf(path, sizeof(path), "%s/walk_pkts.code", argc > 1 ? argv[1] : ".");
	if (!isc || !image || !wc || !(f = fopen(path, "wb")) ||
	    fwrite(code, sizeof(code), 1, f) != 1 || fclose(f)) {
		printf("FAIL: setup\n");
		return 1;
	}
	isid = pt_iscache_add_file(isc, path, 0, sizeof(code), BASE);
	if (isid < 0 || pt_image_add_cached(image, isc, isid, NULL) < 0 ||
	    dc_wcode_set(wc, &(struct dc_wsec){ BASE, BASE + sizeof(code), isid, NULL, false }, 1)) {
		printf("FAIL: sections\n");
		return 1;
	}

	/* in a transaction from the PSB+ on: call 0x0f, call *%rax -> 0x13,
	 * jne not taken; committed at 0x17 (MODE.TSX+FUP); jne taken */
	const struct pt_packet tsx[] = {
		pk(ppt_psb), pk_exec(), pk_tsx(1), pk_ip(ppt_fup, BASE), pk(ppt_psbend),
		pk_ip(ppt_tip, BASE + 0x13), pk_tnt(0),
		pk_tsx(0), pk_ip(ppt_fup, BASE + 0x17),
		pk_tnt(1),
	};
	/* jne not taken, then an async branch at 0x17 (mid-run) to 0x13 */
	const struct pt_packet async[] = {
		pk(ppt_psb), pk_exec(), pk_ip(ppt_fup, BASE + 0x13), pk(ppt_psbend),
		pk_tnt(0), pk_ip(ppt_fup, BASE + 0x17), pk_ip(ppt_tip, BASE + 0x13),
		pk_tnt(1),
	};
	/* call 0x0f; the indirect call there disables tracing (TIP.PGD, IP
	 * suppressed); it resumes at 0x11 (after the call); ret compressed:
	 * to 0x11 again (libipt keeps the indirect call's return address),
	 * ret again: to 0x05 */
	const struct pt_packet pgd[] = {
		pk(ppt_psb), pk_exec(), pk_ip(ppt_fup, BASE), pk(ppt_psbend),
		pk_ip(ppt_tip_pgd, 0), pk_exec(), pk_ip(ppt_tip_pge, BASE + 0x11),
		pk_tnt(1), pk_tnt(1),
	};

	/* call 0x0f; the indirect call there to the top address (damaged
	 * data), which is the ip of a link not made yet (the entry at 0x0f
	 * has none): no code there, libipt fails, the walker hands over */
	const struct pt_packet top[] = {
		pk(ppt_psb), pk_exec(), pk_ip(ppt_fup, BASE), pk(ppt_psbend),
		pk_ip(ppt_tip, UINT64_MAX),
	};

	run("tsx", tsx, sizeof(tsx) / sizeof(tsx[0]), image, wc);
	run_to("top", top, sizeof(top) / sizeof(top[0]), image, wc, -pte_nomap);
	run("async", async, sizeof(async) / sizeof(async[0]), image, wc);
	run("pgd", pgd, sizeof(pgd) / sizeof(pgd[0]), image, wc);
	dc_wcode_free(wc);
	pt_image_free(image);
	pt_iscache_free(isc);
	return fails ? 1 : 0;
}
