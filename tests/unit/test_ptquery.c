/* Unit tests for decoder/ptquery.h: our query decoder must answer every
 * call as libipt's query decoder answers it (status, branch, target,
 * event byte for byte, time, offsets), or not answer (DC_QRY_BAIL).
 *
 * Random streams that look like a user-space trace (PSB+ headers, TNT-8
 * and TNT-64, TIPs with every IP compression, TIP.PGE/PGD with MODE.exec,
 * FUP with TIP or TIP.PGD, MODE.TSX, OVF resolving enabled or disabled,
 * and the timing packets TSC, TMA, MTC, CYC, CBR, PAD) are encoded with
 * libipt's encoder under random configurations and errata, and read by
 * both decoders with the same random sequence of queries (the wrong query
 * now and then too, and a resync after every error). Clean streams must
 * be answered wherever libipt does not fail; damaged ones (bytes changed,
 * random packets, a cut) may bail, but never answer differently. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <intel-pt.h>

#include "decoder/ptquery.h"
#include "tests/ptq_side.h"
#include "tests/unit/test_ptcfg.h"
#include "tests/unit/test_rnd.h"

enum { MAXP = 2048 };

static uint64_t rs = 0x13198a2e03707344ull;

static uint64_t rnd(void)
{
	return test_rnd(&rs);
}

static unsigned pick(unsigned n)
{
	return (unsigned)(rnd() % n);
}

/* ---- streams ------------------------------------------------------------ */

struct gen {
	struct pt_packet p[MAXP];
	size_t n;
	bool enabled;
	uint64_t tsc;
	uint32_t ctc;
};

static void add(struct gen *g, struct pt_packet p)
{
	if (g->n < MAXP)
		g->p[g->n++] = p;
}

static void add_type(struct gen *g, enum pt_packet_type t)
{
	add(g, (struct pt_packet){ .type = t });
}

/* An IP packet: a few code addresses, compressed every way. */
static void add_ip(struct gen *g, enum pt_packet_type t, bool may_suppress)
{
	static const enum pt_ip_compression ipc[] = { pt_ipc_update_16, pt_ipc_update_32,
						      pt_ipc_sext_48, pt_ipc_update_48,
						      pt_ipc_full };
	uint64_t ip = 0x400000 + (rnd() & 0xfffff);
	struct pt_packet p = { .type = t };

	if (pick(3) == 0)
		ip = 0x7f0000000000ull + (rnd() & 0xffffffff);
	else if (pick(6) == 0)         /* (kernel: sign-extended from bit 47) */
		ip = 0xffff800000000000ull | rnd();
	p.payload.ip.ip = ip;
	p.payload.ip.ipc = may_suppress && !pick(8) ? pt_ipc_suppressed : ipc[pick(5)];
	add(g, p);
}

static void add_mode_exec(struct gen *g)
{
	struct pt_packet p = { .type = ppt_mode };

	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec.csl = pick(6) != 0;
	p.payload.mode.bits.exec.csd = pick(6) == 0;
	add(g, p);
}

static void add_mode_tsx(struct gen *g)
{
	struct pt_packet p = { .type = ppt_mode };

	p.payload.mode.leaf = pt_mol_tsx;
	p.payload.mode.bits.tsx.intx = pick(2);
	p.payload.mode.bits.tsx.abrt = !p.payload.mode.bits.tsx.intx && pick(2);
	add(g, p);
}

static void add_pip(struct gen *g)
{
	struct pt_packet p = { .type = ppt_pip };

	p.payload.pip.cr3 = (rnd() & 0xffffffffffull) << 5;
	p.payload.pip.nr = !pick(4);
	add(g, p);
}

static void add_timing(struct gen *g)
{
	unsigned r = pick(100);

	if (r < 44) {
		uint64_t v = pick(10) ? 1 + pick(300) : rnd() >> (40 + pick(24));

		add(g, (struct pt_packet){ .type = ppt_cyc, .payload.cyc.value = v });
	} else if (r < 45) {
		/* erratum SKD007's bytes: a 2-byte CYC ending in 02, then a
		 * 1-byte CYC f3 (an OVF's, where the erratum applies) */
		add(g, (struct pt_packet){ .type = ppt_cyc, .payload.cyc.value = 0x20 + pick(32) });
		add(g, (struct pt_packet){ .type = ppt_cyc, .payload.cyc.value = 0xf3 >> 3 });
	} else if (r < 75) {
		g->ctc += pick(6) ? 1 : 1 + pick(300);
		add(g, (struct pt_packet){ .type = ppt_mtc, .payload.mtc.ctc = (uint8_t)g->ctc });
	} else if (r < 85) {
		g->tsc += 1 + rnd() % 100000;
		add(g, (struct pt_packet){ .type = ppt_tsc, .payload.tsc.tsc = g->tsc });
		if (pick(4))
			add(g, (struct pt_packet){ .type = ppt_tma,
						   .payload.tma = { .ctc = (uint16_t)rnd(),
								    .fc = (uint16_t)pick(512) } });
	} else if (r < 90) {
		add(g, (struct pt_packet){ .type = ppt_cbr,
					   .payload.cbr.ratio = (uint8_t)(1 + pick(60)) });
	} else {
		add_type(g, ppt_pad);
	}
}

static void add_ovf(struct gen *g);

static void add_psb(struct gen *g)
{
	add_type(g, ppt_psb);
	if (!pick(30)) {               /* (a PSB+ cut short by an overflow) */
		add_ovf(g);
		return;
	}
	if (pick(8)) {
		g->tsc += 1 + rnd() % 100000;
		add(g, (struct pt_packet){ .type = ppt_tsc, .payload.tsc.tsc = g->tsc });
		if (pick(6))
			add(g, (struct pt_packet){ .type = ppt_tma,
						   .payload.tma = { .ctc = (uint16_t)rnd(),
								    .fc = (uint16_t)pick(512) } });
	}
	if (pick(4))
		add(g, (struct pt_packet){ .type = ppt_cbr,
					   .payload.cbr.ratio = (uint8_t)(1 + pick(60)) });
	if (!pick(10))
		add_timing(g);
	if (pick(5))
		add_mode_exec(g);
	if (!pick(6))
		add_mode_tsx(g);
	if (!pick(3))
		add_pip(g);
	/* disabled: no IP in the header, or (erratum BDM70) one before a
	 * TIP.PGE, which libipt's workaround skips, and now and then one that
	 * no TIP.PGE follows */
	bool bdm70 = !g->enabled && !pick(3);

	if (g->enabled || pick(2)) {
		add_ip(g, ppt_fup, false);
		if (!g->enabled && !bdm70)
			g->p[g->n - 1].payload.ip.ipc = pt_ipc_suppressed;
	}
	if (!pick(8))
		add_type(g, ppt_pad);
	add_type(g, ppt_psbend);
	if (bdm70 && pick(4)) {
		if (!pick(3))
			add_timing(g);
		add_ip(g, ppt_tip_pge, false);
		g->enabled = true;
	}
}

static void add_tnt(struct gen *g)
{
	struct pt_packet p = { .type = ppt_tnt_8 };

	if (pick(5)) {
		p.payload.tnt.bit_size = (uint8_t)(1 + pick(6));
	} else {
		p.type = ppt_tnt_64;
		p.payload.tnt.bit_size = (uint8_t)(1 + pick(47));
	}
	p.payload.tnt.payload = rnd() & ((1ull << p.payload.tnt.bit_size) - 1);
	add(g, p);
}

static void add_ovf(struct gen *g)
{
	add_type(g, ppt_ovf);
	while (!pick(3))
		add_timing(g);
	if (pick(2)) {                 /* resolved with tracing on */
		add_ip(g, ppt_fup, false);
		g->enabled = true;
	} else {                       /* off: on again later */
		g->enabled = false;
	}
}

/* One step of tracing on. */
static void step_enabled(struct gen *g)
{
	unsigned r = pick(100);

	if (r < 40) {
		add_tnt(g);
	} else if (r < 55) {
		add_ip(g, ppt_tip, true);
	} else if (r < 70) {
		add_timing(g);
	} else if (r < 75) {           /* an interrupt, traced on */
		add_ip(g, ppt_fup, false);
		if (!pick(4))
			add_pip(g);    /* (and a new address space) */
		add_ip(g, ppt_tip, false);
	} else if (r < 80) {           /* a syscall or an interrupt: off */
		bool fup = pick(2);

		if (fup)
			add_ip(g, ppt_fup, false);
		if (fup && !pick(4))
			add_pip(g);
		add_ip(g, ppt_tip_pgd, true);
		g->enabled = false;
	} else if (r < 83) {
		/* (now and then more than libipt's event queue holds) */
		for (unsigned k = pick(10) ? 1 : 1 + pick(8); k--;)
			add_mode_exec(g);
		add_ip(g, ppt_tip, false);
	} else if (r < 86) {
		add_mode_tsx(g);
		add_ip(g, ppt_fup, false);
	} else if (r < 90) {
		add_psb(g);
	} else if (r < 92) {
		add_ovf(g);
	} else {
		add_tnt(g);
	}
}

static void step_disabled(struct gen *g)
{
	unsigned r = pick(100);

	if (r < 40) {
		add_timing(g);
	} else if (r < 75) {
		if (!pick(3))
			add_mode_exec(g);
		add_ip(g, ppt_tip_pge, false);
		g->enabled = true;
	} else if (r < 85) {
		add_psb(g);
	} else if (r < 90) {
		pick(2) ? add_mode_tsx(g) : add_pip(g);
	} else if (r < 93) {
		add_ovf(g);
	} else {
		add_type(g, ppt_pad);
	}
}

/* Any packet at all, encodable: for the damaged streams. */
static void add_random(struct gen *g)
{
	static const enum pt_packet_type t[] = {
		ppt_pad, ppt_psb, ppt_psbend, ppt_ovf, ppt_tnt_8, ppt_tnt_64, ppt_tip,
		ppt_tip_pge, ppt_tip_pgd, ppt_fup, ppt_mode, ppt_tsc, ppt_tma, ppt_mtc,
		ppt_cyc, ppt_cbr, ppt_pip, ppt_vmcs, ppt_mnt, ppt_stop, ppt_exstop,
		ppt_mwait, ppt_pwre, ppt_pwrx, ppt_ptw,
	};
	enum pt_packet_type k = t[pick(sizeof(t) / sizeof(t[0]))];

	switch (k) {
	case ppt_tnt_8:
	case ppt_tnt_64:
		add_tnt(g);
		return;
	case ppt_tip:
	case ppt_tip_pge:
	case ppt_tip_pgd:
	case ppt_fup:
		add_ip(g, k, true);
		return;
	case ppt_mode:
		pick(2) ? add_mode_exec(g) : add_mode_tsx(g);
		return;
	case ppt_tsc:
	case ppt_tma:
	case ppt_mtc:
	case ppt_cyc:
	case ppt_cbr:
		add_timing(g);
		return;
	case ppt_ptw: {
		struct pt_packet p = { .type = ppt_ptw };

		p.payload.ptw.plc = 0;
		p.payload.ptw.payload = rnd();
		add(g, p);
		return;
	}
	default:
		add_type(g, k);
		return;
	}
}

static void generate(struct gen *g, size_t steps, bool chaos)
{
	g->n = 0;
	g->enabled = pick(3) != 0;
	g->tsc = 1 + (rnd() >> 16);
	g->ctc = (uint32_t)rnd();
	if (pick(6))
		add_psb(g);
	else if (pick(2))
		add_type(g, ppt_pad);      /* (sync has to find the PSB) */
	else
		add_tnt(g);
	while (steps-- && g->n + 24 < MAXP) {
		if (chaos && !pick(12))
			add_random(g);
		else if (g->enabled)
			step_enabled(g);
		else
			step_disabled(g);
		if (!pick(40))
			add_psb(g);
	}
}

/* The stream's bytes; cut: the offset of a packet picked at random. */
static size_t encode(const struct gen *g, struct pt_config *c, size_t *cut)
{
	struct pt_encoder *e = pt_alloc_encoder(c);
	size_t at = g->n ? pick((unsigned)g->n) : 0;
	uint64_t off = 0;

	assert_non_null(e);
	for (size_t i = 0; i < g->n; i++) {
		if (i == at && cut) {
			assert_int_equal(pt_enc_get_offset(e, &off), 0);
			*cut = (size_t)off;
		}
		assert_true(pt_enc_next(e, &g->p[i]) > 0);
	}
	assert_int_equal(pt_enc_get_offset(e, &off), 0);
	pt_free_encoder(e);
	return (size_t)off;
}

static struct pt_config random_config(uint8_t *buf, size_t len, bool errata)
{
	struct pt_config c = test_ptcfg(&rs, buf, len);

	c.errata.bdm70 = pick(2);
	c.errata.skd007 = pick(2);
	if (errata) {                  /* (those ours leaves to libipt) */
		c.errata.skd010 = pick(2);
		c.errata.apl11 = pick(2);
		c.errata.apl12 = pick(2);
		c.errata.skz84 = pick(2);
	}
	return c;
}

/* ---- the two decoders, call for call ------------------------------------ */

struct tally {
	unsigned long answered, bailed, streams;
	unsigned long ev[32], ok[128], err[64], suppressed;
};

/* One call to both. false: ours bailed (strict: only where libipt failed). */
static bool call(struct pt_query_decoder *l, struct dc_qry *q, int op, int *st, bool strict,
		 struct tally *t)
{
	static struct ptq_side x;
	int r = ptq_call(&x, l, q, op);

	if (r < 0) {
		print_error("%s\n", x.why);
		fail();
	}
	if (!r) {
		if (strict && (x.sl >= 0 || x.sl == -pte_eos || x.sl == -pte_bad_query ||
			       x.sl == -pte_nosync)) {
			print_error("ours bailed where libipt answered %d, after %s\n", x.sl,
				    ptq_opname(op));
			fail();
		}
		t->bailed++;
		return false;
	}
	t->answered++;
	*st = x.sl;
	if (x.sl >= 0) {
		t->ok[op]++;
		if (op == 'e' && x.el.type < 32)
			t->ev[x.el.type]++;
		if (x.sl & pts_ip_suppressed)
			t->suppressed++;
	} else if (-x.sl < 64) {
		t->err[-x.sl]++;
	}
	return true;
}

/* Both decoders over c's buffer, until it ends: -1; or until ours
 * bails: libipt's offset there (-1 if none). Now and then a query comes
 * before any sync, and one after a sync that found no PSB. */
static long run(const struct pt_config *c, bool strict, struct tally *t)
{
	struct pt_query_decoder *l = pt_qry_alloc_decoder(c);
	static struct dc_qry q;
	int st = pick(8) ? -pte_nosync : 0, syncs = 0, eos = 0, op = 0;
	long at = -1;

	assert_non_null(l);
	assert_int_equal(dc_qry_init(&q, c), 0);
	t->streams++;
	for (int i = 0; i < 20000; i++) {
		op = ptq_next_op(st, op, rnd());
		if (op == 's' && st < 0 && ++syncs > 64)
			break;
		if (!call(l, &q, op, &st, strict, t)) {
			uint64_t off;

			if (!pt_qry_get_offset(l, &off))
				at = (long)off;
			break;
		}
		if (op == 's' && st == -pte_eos && (++eos > 1 || pick(2)))
			break;
		if (op == 's' && st == -pte_eos)
			st = 0;
	}
	pt_qry_free_decoder(l);
	return at;
}

static uint8_t buf[MAXP * 16 + 64];
static struct gen g;

/* A buffer at a random alignment (the PSB search reads aligned words). */
static uint8_t *place(size_t *len)
{
	uint8_t *b = buf + pick(8);

	*len = sizeof(buf) - 8;
	return b;
}

static void test_clean_streams(void **state)
{
	struct tally t = { 0 };

	(void)state;
	for (int i = 0; i < 3000; i++) {
		size_t len;
		uint8_t *b = place(&len);
		struct pt_config c = random_config(b, len, false);

		size_t cut = 0, n;

		generate(&g, i % 10 ? 5 + pick(60) : 400 + pick(400), false);
		n = encode(&g, &c, &cut);
		/* now and then cut between two packets (in a PSB+ too), or
		 * inside one: libipt reads a status packet cut by the end as
		 * the end */
		if (!pick(6)) {
			size_t in = pick(2) ? 0 : pick(17);

			n = cut + in < n ? cut + in : n;
		}
		c.end = b + n;
		(void)run(&c, true, &t);
	}
	print_message("clean: %lu streams, %lu calls answered, %lu bailed\n", t.streams,
		      t.answered, t.bailed);
	/* every query answered, every event these streams make seen */
	assert_true(t.ok['s'] > 1000 && t.ok['c'] > 100000 && t.ok['i'] > 10000);
	assert_true(t.ok['e'] > 10000 && t.suppressed > 1000 && t.err[pte_eos] > 1000);
	for (int e = ptev_enabled; e <= ptev_tsx; e++) {
		if (t.ev[e] < 500)
			print_error("event type %d: %lu\n", e, t.ev[e]);
		assert_true(t.ev[e] >= 500);
	}
	assert_true(t.ev[ptev_cbr] > 1000);
	/* (bailing is only allowed where libipt fails; that must be rare) */
	assert_true(t.bailed * 5 < t.streams);
	assert_true(t.answered > 100000);
}

static void test_damaged_streams(void **state)
{
	struct tally t = { 0 };

	(void)state;
	for (int i = 0; i < 3000; i++) {
		size_t len, n;
		uint8_t *b = place(&len);
		struct pt_config c = random_config(b, len, pick(2));

		generate(&g, 20 + pick(200), pick(2));
		n = encode(&g, &c, NULL);
		for (unsigned k = pick(4); k--;)
			b[pick((unsigned)n)] = (uint8_t)rnd();
		if (pick(2))           /* (cut anywhere) */
			n = pick((unsigned)n + 1);
		c.end = b + n;
		/* where ours bails, both start again after that point (an
		 * empty trace too) */
		for (long at; (at = run(&c, false, &t)) >= 0 && c.begin + at < c.end;)
			c.begin += at + 1;
	}
	print_message("damaged: %lu streams, %lu calls answered, %lu bailed\n", t.streams,
		      t.answered, t.bailed);
	assert_true(t.answered > 20000);
}

/* A packet cut by the end of the trace, after a few heads that put the
 * query decoder in each place that reads one (in a PSB+, BDM70's scan
 * after a PSB+ FUP, the read-ahead with tracing off and on, the scan for
 * an OVF's FUP, an asynchronous branch's TIP, a pending TNT): every kind
 * of packet, and bad ones, cut after each of its bytes, and every
 * one-byte tail. libipt reads a packet the end cuts as the end; a bad
 * packet whole at the end is a bad packet. Ours must answer as libipt,
 * and must not bail where libipt answers (it may on the packets it does
 * not read: VMCS, MNT, PTWRITE, STOP). Bytes past the end are 0 or 0x82
 * (a read past it would show). */
#define PSB_BYTES 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, \
		  0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82
#define FUP_FULL 0xdd, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60
struct bytes {
	uint8_t b[36];
	uint8_t n;
	bool known;               /* (for the tails: a packet ours reads) */
};

static const struct bytes cut_heads[] = {
	{ { PSB_BYTES }, 16, true },
	{ { PSB_BYTES, 0x19, 1, 2, 3, 4, 5, 0, 0, FUP_FULL }, 31, true },
	{ { PSB_BYTES, 0x02, 0x23 }, 18, true },
	{ { PSB_BYTES, 0x99, 0x01, FUP_FULL, 0x02, 0x23, 0x06 }, 30, true },
	{ { PSB_BYTES, 0x99, 0x01, FUP_FULL, 0x02, 0x23, 0x02, 0xf3 }, 31, true },
	{ { PSB_BYTES, 0x02, 0x23, 0x02, 0xf3, 0x19, 1, 2, 3, 4, 5, 0, 0 }, 28, true },
	{ { PSB_BYTES, 0x99, 0x01, FUP_FULL, 0x02, 0x23, 0x3d, 0x11, 0x22 }, 32, true },
	{ { PSB_BYTES, 0x99, 0x01, FUP_FULL, 0x02, 0x23, 0x02, 0xa3, 1, 0, 0, 0, 0, 0x80 }, 35,
	  true },
};

static const struct bytes cut_tails[] = {
	{ { PSB_BYTES }, 16, true },
	{ { 0x02, 0xa3, 0x55, 0, 0, 0, 0, 0x01 }, 8, true },          /* TNT-64 */
	{ { 0x02, 0xa3, 0, 0, 0, 0, 0, 0 }, 8, true },                /* ... no stop bit */
	{ { 0x02, 0x43, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60 }, 8, true }, /* PIP */
	{ { 0x02, 0x73, 0x11, 0x22, 0x00, 0x33, 0x01 }, 7, true },    /* TMA */
	{ { 0x02, 0x73, 0x11, 0x22, 0x01, 0x33, 0x01 }, 7, true },    /* ... bad */
	{ { 0x02, 0x03, 0x20, 0x00 }, 4, true },                      /* CBR */
	{ { 0x02, 0xf3 }, 2, true },                                  /* OVF */
	{ { 0x02, 0x23 }, 2, true },                                  /* PSBEND */
	{ { 0x99, 0x01 }, 2, true },                                  /* MODE.exec */
	{ { 0x99, 0x21 }, 2, true },                                  /* MODE.tsx */
	{ { 0x99, 0x41 }, 2, true },                                  /* ... bad leaf */
	{ { 0x59, 0x33 }, 2, true },                                  /* MTC */
	{ { 0x19, 1, 2, 3, 4, 5, 6, 7 }, 8, true },                   /* TSC */
	{ { 0x07, 0x09, 0x09, 0x08 }, 4, true },                      /* CYC */
	{ { 0x07, 0x09, 0x09, 0x09, 0x09, 0x09, 0x09, 0x09, 0x08 }, 9, true },
	{ { 0x07, 0x09, 0x09, 0x09, 0x09, 0x09, 0x09, 0x09, 0x09, 0x08 }, 10, true },
	{ { 0x07, 0x09, 0x09, 0x09, 0x09, 0x09, 0x09, 0x09, 0x09, 0x09, 0x08 }, 11, true }, /* > 64 bits */
	{ { 0x02, 0x83 }, 2, false },                                 /* STOP */
	{ { 0x02, 0xc8, 1, 2, 3, 4, 5 }, 7, false },                  /* VMCS */
	{ { 0x02, 0xc3, 0x88, 1, 2, 3, 4, 5, 6, 7, 8 }, 11, false },  /* MNT */
	{ { 0x02, 0x12, 1, 2, 3, 4 }, 6, false },                     /* PTWRITE */
};

/* One trace: head, then tail[0, cut). */
static void cut_run(const struct bytes *head, const uint8_t *tail, size_t cut, bool known,
		    struct tally *t)
{
	static uint8_t b[128];
	struct pt_config c;

	memcpy(b, head->b, head->n);
	memcpy(b + head->n, tail, cut);
	memset(b + head->n + cut, pick(2) ? 0 : 0x82, sizeof(b) - head->n - cut);
	c = random_config(b, head->n + cut, false);
	(void)run(&c, known, t);
}

static void test_cut_tails(void **state)
{
	struct tally t = { 0 };
	uint8_t ip[9] = { 0, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80 };

	(void)state;
	for (size_t h = 0; h < sizeof(cut_heads) / sizeof(cut_heads[0]); h++) {
		const struct bytes *head = &cut_heads[h];

		for (int rep = 0; rep < 4; rep++) {
			for (size_t k = 0; k < sizeof(cut_tails) / sizeof(cut_tails[0]); k++)
				for (size_t cut = 1; cut <= cut_tails[k].n; cut++)
					cut_run(head, cut_tails[k].b, cut, cut_tails[k].known, &t);
			/* IP packets of every compression (reserved ones too) */
			for (int ipc = 0; ipc < 8; ipc++)
				for (int k = 0; k < 4; k++) {
					static const uint8_t op[] = { 0x0d, 0x1d, 0x11, 0x01 };

					ip[0] = (uint8_t)(ipc << 5 | op[k]);
					for (size_t cut = 1; cut <= sizeof(ip); cut++)
						cut_run(head, ip, cut, true, &t);
				}
		}
		for (unsigned v = 0; v < 256; v++) {
			uint8_t one = (uint8_t)v;

			cut_run(head, &one, 1, false, &t);
		}
	}
	print_message("cut tails: %lu traces, %lu calls answered (%lu the end), %lu bailed\n",
		      t.streams, t.answered, t.err[pte_eos], t.bailed);
	assert_true(t.streams > 15000 && t.err[pte_eos] > 6000 && t.answered > 30000);
}

/* No buffer: neither decoder is made. An empty one: every query as
 * libipt's answers it, before a sync and after one that found nothing. */
static void test_no_trace(void **state)
{
	static uint8_t one[1];
	struct pt_config c = test_ptcfg(&rs, NULL, 0);
	struct pt_query_decoder *l;
	static struct dc_qry q;
	struct tally t = { 0 };
	int st = 0;

	(void)state;
	assert_null(pt_qry_alloc_decoder(&c));
	assert_int_equal(dc_qry_init(&q, &c), -pte_invalid);
	c.begin = c.end = one;
	assert_non_null(l = pt_qry_alloc_decoder(&c));
	assert_int_equal(dc_qry_init(&q, &c), 0);
	for (const char *op = "ciesscie"; *op; op++) {
		assert_true(call(l, &q, *op, &st, true, &t));
		assert_int_equal(st, *op == 's' ? -pte_eos : -pte_nosync);
	}
	pt_qry_free_decoder(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_trace),
		cmocka_unit_test(test_clean_streams),
		cmocka_unit_test(test_damaged_streams),
		cmocka_unit_test(test_cut_tails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
