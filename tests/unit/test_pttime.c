/* Unit tests for decoder/pttime.h: the time it keeps must be the time
 * libipt's query decoder reports (pt_qry_time) at every TNT it hands out
 * and at every event, value for value, lost MTC and CYC counts included.
 * Random streams of timing packets (PSB+ with TSC, TMA and CBR; then TSC,
 * TMA, MTC, CYC, CBR, PAD and PSB+ between one-bit TNTs) are encoded with
 * libipt's encoder under random configurations (MTC periods, CPUID 0x15
 * ratios, none, nominal frequencies, the SKL168 erratum) and read back with
 * libipt's query decoder; the expected values are libipt's. */
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

#include "decoder/pttime.h"
#include "tests/unit/test_ptcfg.h"
#include "tests/unit/test_rnd.h"

enum { MAXP = 4096, MAXR = 4096 };

/* A point where the time is read: a TNT's bit or an event. */
struct point {
	bool event;
	int ret;
	uint64_t tsc;
	uint32_t lost_mtc, lost_cyc;
};

static uint64_t rs = 0x243f6a8885a308d3ull;

static uint64_t rnd(void)
{
	return test_rnd(&rs);
}

static unsigned pick(unsigned n)
{
	return (unsigned)(rnd() % n);
}

struct gen {
	struct pt_packet p[MAXP];
	size_t n;
	uint64_t tsc;
	uint32_t ctc;              /* the CTC, in MTC payload units        */
};

static void add(struct gen *g, struct pt_packet p)
{
	assert_true(g->n < MAXP);
	g->p[g->n++] = p;
}

static void add_tsc_tma(struct gen *g, bool tma)
{
	g->tsc += 1 + rnd() % 100000;
	add(g, (struct pt_packet){ .type = ppt_tsc, .payload.tsc.tsc = g->tsc });
	if (tma)
		add(g, (struct pt_packet){ .type = ppt_tma,
					   .payload.tma = { .ctc = (uint16_t)rnd(),
							    .fc = (uint16_t)pick(512) } });
}

static void add_psb(struct gen *g)
{
	add(g, (struct pt_packet){ .type = ppt_psb });
	add_tsc_tma(g, pick(8) != 0);
	add(g, (struct pt_packet){ .type = ppt_cbr, .payload.cbr.ratio = (uint8_t)(1 + pick(60)) });
	add(g, (struct pt_packet){ .type = ppt_psbend });
}

/* A stream: PSB+, then packets between one-bit TNTs. */
static void generate(struct gen *g, size_t n)
{
	g->n = 0;
	g->tsc = 1 + (rnd() >> 16);
	g->ctc = (uint32_t)rnd();
	add_psb(g);
	while (g->n + 8 < MAXP && n--) {
		unsigned r = pick(100);

		if (r < 40) {
			add(g, (struct pt_packet){ .type = ppt_tnt_8,
						   .payload.tnt = { .bit_size = 1,
								    .payload = rnd() & 1 } });
		} else if (r < 70) {
			/* mostly small, now and then a wrap's worth or more */
			uint64_t v = pick(10) ? 1 + pick(300) : rnd() >> (40 + pick(24));

			add(g, (struct pt_packet){ .type = ppt_cyc, .payload.cyc.value = v });
		} else if (r < 85) {
			/* the next period, now and then a few more (lost MTCs) */
			g->ctc += pick(6) ? 1 : 1 + pick(300);
			add(g, (struct pt_packet){ .type = ppt_mtc, .payload.mtc.ctc = (uint8_t)g->ctc });
		} else if (r < 89) {
			add_tsc_tma(g, pick(4) != 0);
		} else if (r < 92) {
			add(g, (struct pt_packet){ .type = ppt_cbr,
						   .payload.cbr.ratio = (uint8_t)(1 + pick(60)) });
		} else if (r < 97) {
			add(g, (struct pt_packet){ .type = ppt_pad });
		} else {
			add_psb(g);
		}
	}
}

static size_t encode(const struct gen *g, struct pt_config *c)
{
	struct pt_encoder *e = pt_alloc_encoder(c);
	uint64_t off = 0;

	assert_non_null(e);
	for (size_t i = 0; i < g->n; i++)
		assert_true(pt_enc_next(e, &g->p[i]) > 0);
	assert_int_equal(pt_enc_get_offset(e, &off), 0);
	pt_free_encoder(e);
	return (size_t)off;
}

static void note(struct point *v, size_t *n, bool event, int ret, uint64_t tsc, uint32_t lm,
		 uint32_t lc)
{
	assert_true(*n < MAXR);
	v[(*n)++] = (struct point){ .event = event, .ret = ret, .tsc = tsc, .lost_mtc = lm,
				    .lost_cyc = lc };
}

/* libipt's query decoder: the time at each TNT bit and each event. */
static size_t libipt_points(const struct pt_config *c, struct point *v)
{
	struct pt_query_decoder *q = pt_qry_alloc_decoder(c);
	uint64_t ip, tsc;
	uint32_t lm, lc;
	size_t n = 0;
	int st;

	assert_non_null(q);
	st = pt_qry_sync_forward(q, &ip);
	assert_true(st >= 0);
	for (;;) {
		int taken, ret;

		while (st >= 0 && (st & pts_event_pending)) {
			struct pt_event ev;

			st = pt_qry_event(q, &ev, sizeof(ev));
			assert_true(st >= 0);
			assert_int_equal(ev.type, ptev_cbr);
			ret = pt_qry_time(q, &tsc, &lm, &lc);
			note(v, &n, true, ret, tsc, lm, lc);
		}
		if (st & pts_eos)
			break;
		st = pt_qry_cond_branch(q, &taken);
		if (st == -pte_eos)
			break;
		assert_true(st >= 0);
		ret = pt_qry_time(q, &tsc, &lm, &lc);
		note(v, &n, false, ret, tsc, lm, lc);
	}
	pt_qry_free_decoder(q);
	return n;
}

/* The same points from pttime.h, packet by packet. */
static size_t model_points(const struct pt_config *c, const struct gen *g, struct point *v)
{
	struct dc_ptime t;
	bool in_psb = false;
	size_t n = 0;

	dc_ptime_init(&t, c);
	for (size_t i = 0; i < g->n; i++) {
		const struct pt_packet *p = &g->p[i];
		bool point = false, event = false;
		uint64_t tsc;
		uint32_t lm, lc;
		int ret;

		switch (p->type) {
		case ppt_psb:
			in_psb = true;
			assert_int_equal(dc_ptime_psb(&t), 0);
			break;
		case ppt_psbend:
			in_psb = false;
			point = event = true;   /* (its CBR's event) */
			break;
		case ppt_tsc:
			assert_int_equal(dc_ptime_tsc(&t, p->payload.tsc.tsc, in_psb), 0);
			break;
		case ppt_tma:
			assert_int_equal(dc_ptime_tma(&t, p->payload.tma.ctc, p->payload.tma.fc), 0);
			break;
		case ppt_cbr:
			assert_int_equal(dc_ptime_cbr(&t, p->payload.cbr.ratio, in_psb), 0);
			point = event = !in_psb;
			break;
		case ppt_mtc:
			assert_int_equal(dc_ptime_mtc(&t, p->payload.mtc.ctc), 0);
			break;
		case ppt_cyc:
			assert_int_equal(dc_ptime_cyc(&t, p->payload.cyc.value), 0);
			break;
		case ppt_tnt_8:
			point = true;
			break;
		default:
			break;
		}
		if (!point)
			continue;
		ret = dc_ptime_query(&t, &tsc, &lm, &lc);
		note(v, &n, event, ret, tsc, lm, lc);
	}
	return n;
}

static void check_stream(size_t len_packets)
{
	static uint8_t buf[MAXP * 16];
	static struct gen g;
	static struct point a[MAXR], b[MAXR];
	struct pt_config c = test_ptcfg(&rs, buf, sizeof(buf));
	size_t na, nb;

	generate(&g, len_packets);
	c.end = buf + encode(&g, &c);
	na = libipt_points(&c, a);
	nb = model_points(&c, &g, b);
	assert_int_equal(na, nb);
	for (size_t i = 0; i < na; i++) {
		if (a[i].event != b[i].event || a[i].ret != b[i].ret || a[i].tsc != b[i].tsc ||
		    a[i].lost_mtc != b[i].lost_mtc || a[i].lost_cyc != b[i].lost_cyc) {
			print_error("point %zu of %zu (mtc_freq %u, cpuid %u/%u, nom %u, skl168 %d): "
				    "libipt %s ret %d tsc %llu lost %u/%u; ours %s ret %d tsc %llu "
				    "lost %u/%u\n", i, na, c.mtc_freq, c.cpuid_0x15_ebx,
				    c.cpuid_0x15_eax, c.nom_freq, (int)c.errata.skl168,
				    a[i].event ? "event" : "tnt", a[i].ret,
				    (unsigned long long)a[i].tsc, a[i].lost_mtc, a[i].lost_cyc,
				    b[i].event ? "event" : "tnt", b[i].ret,
				    (unsigned long long)b[i].tsc, b[i].lost_mtc, b[i].lost_cyc);
			fail();
		}
	}
}

/* Many short streams (the start: before any calibration, the first MTC
 * after a TMA) and some long ones (calibration across many periods). */
static void test_time_matches_libipt(void **state)
{
	(void)state;
	for (int i = 0; i < 3000; i++)
		check_stream(5 + pick(60));
	for (int i = 0; i < 100; i++)
		check_stream(3000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time_matches_libipt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
