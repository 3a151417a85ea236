/* Unit tests for decoder/ptdecode_clk.h: clk_to_mtc, after clk_note has
 * seen a case's timing packets, must give the TSC ticks to the next MTC
 * that libipt itself gives. The expected value is never ptflame's: each
 * case's packets are encoded with libipt's encoder and read back with its
 * query decoder, whose time (pt_qry_time) is taken at a TNT before the
 * final MTC and at one after it; the difference is what pt_time.c makes
 * of that MTC. The cases cover what test_pge_clone.c does not: Linux's
 * default mtc_period 3, timing from an earlier MTC, CTC wrap-around, a
 * TSC without a TMA (libipt ignores MTCs then) and the TMA's fast counter
 * (fc). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <intel-pt.h>

#include "decoder/ptdecode_clk.h"

#define TSC0 0x100000000ull

#define TSC(v) { .type = ppt_tsc, .payload.tsc.tsc = (v) }
#define TMA(c, f) { .type = ppt_tma, .payload.tma = { .ctc = (c), .fc = (f) } }
#define MTC(c) { .type = ppt_mtc, .payload.mtc.ctc = (c) }

enum { MAX_PRE = 4 };

struct clk_case {
	const char *name;
	uint8_t mtc_freq;
	uint32_t eax, ebx;                  /* CPUID 0x15: TSC/CTC = ebx/eax */
	struct pt_packet pre[MAX_PRE];      /* timing packets before the probe */
	uint8_t mtc;                        /* the final MTC's payload */
	bool timed;                         /* does libipt move time there? */
};

/* Each case says in its name what it is there for. The CTC values are
 * chosen so that a clk_to_mtc that gets one thing wrong (the shift, the
 * wrap mask, the TMA's 16 bits, fc, the TSC/CTC ratio, the order of its
 * multiply and divide) gives another number; 250/3 is not an integer so
 * that the rounding must match libipt's (ctc * ebx) / eax. */
static const struct clk_case cases[] = {
	{ "freq3: TSC+TMA then MTC", 3, 3, 250,
	  { TSC(TSC0), TMA(0x0123, 0) }, 0x30, true },
	{ "freq3: TMA with fc", 3, 3, 250,
	  { TSC(TSC0), TMA(0x0123, 0x1ab) }, 0x30, true },
	{ "freq3: TMA's CTC wraps to the MTC", 3, 3, 250,
	  { TSC(TSC0), TMA(0x07f5, 5) }, 0x01, true },
	{ "freq3: TMA above bit 10 (bits MTC lacks)", 3, 2, 188,
	  { TSC(TSC0), TMA(0xfa05, 7) }, 0x41, true },
	{ "freq3: from an earlier MTC", 3, 3, 250,
	  { TSC(TSC0), TMA(0x0123, 9), MTC(0x30) }, 0x37, true },
	{ "freq3: MTC to MTC across the wrap", 3, 3, 250,
	  { TSC(TSC0), TMA(0x0123, 9), MTC(0xfd) }, 0x02, true },
	{ "freq3: TMA to MTC over half the wrap", 3, 3, 250,
	  { TSC(TSC0), TMA(0x0010, 2) }, 0xc0, true },
	{ "freq3: MTC to MTC over half the wrap", 3, 3, 250,
	  { TSC(TSC0), TMA(0x0010, 2), MTC(0x10) }, 0xa0, true },
	{ "freq3: fc larger than the ticks (clamped)", 3, 1, 1,
	  { TSC(TSC0), TMA(0x0010, 0x1ff) }, 0x03, false },
	{ "freq9: TSC+TMA then MTC", 9, 3, 250,
	  { TSC(TSC0), TMA(0x1234, 0x55) }, 0x0b, true },
	{ "freq9: TMA's 16 bits wrap", 9, 3, 250,
	  { TSC(TSC0), TMA(0xff00, 0x10) }, 0x01, true },
	{ "freq9: TMA to MTC over half of 16 bits", 9, 3, 250,
	  { TSC(TSC0), TMA(0x0100, 0x40) }, 0xc8, true },
	{ "freq9: MTC to MTC over 16 bits", 9, 3, 250,
	  { TSC(TSC0), TMA(0x0100, 0x40), MTC(0x01) }, 0x90, true },
	{ "freq9: from an earlier MTC", 9, 2, 188,
	  { TSC(TSC0), TMA(0x1234, 0x55), MTC(0x0b) }, 0x0d, true },
	{ "freq9: MTC to MTC across the wrap", 9, 3, 250,
	  { TSC(TSC0), TMA(0x1234, 0x55), MTC(0xfe) }, 0x01, true },
	{ "freq0: MTC to MTC", 0, 3, 250,
	  { TSC(TSC0), TMA(0x00f0, 3), MTC(0xf4) }, 0x13, true },
	{ "TSC without TMA: MTCs ignored", 3, 3, 250,
	  { TSC(TSC0), MTC(0x10) }, 0x20, false },
	{ "MTC between TSC and TMA ignored", 3, 3, 250,
	  { TSC(TSC0), MTC(0x70), TMA(0x0123, 0x20) }, 0x30, true },
	{ "a later TSC resets the clock", 3, 3, 250,
	  { TSC(TSC0), TMA(0x0123, 0), MTC(0x30), TSC(TSC0 + 0x10000) }, 0x40, false },
};

static struct pt_config config(uint8_t *buf, size_t len, const struct clk_case *k)
{
	struct pt_config c;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.begin = buf;
	c.end = buf + len;
	c.mtc_freq = k->mtc_freq;
	c.cpuid_0x15_eax = k->eax;
	c.cpuid_0x15_ebx = k->ebx;
	return c;
}

static void put(struct pt_encoder *e, const struct pt_packet *p)
{
	assert_true(pt_enc_next(e, p) > 0);
}

/* PSB+, the case's packets, a TNT (time probe), the final MTC, a TNT. */
static size_t encode(uint8_t *buf, size_t len, const struct clk_case *k)
{
	struct pt_config c = config(buf, len, k);
	struct pt_encoder *e = pt_alloc_encoder(&c);
	const struct pt_packet psb = { .type = ppt_psb }, psbend = { .type = ppt_psbend };
	const struct pt_packet tnt = { .type = ppt_tnt_8, .payload.tnt = { 1, 1 } };
	const struct pt_packet mtc = MTC(k->mtc);
	uint64_t off;

	assert_non_null(e);
	put(e, &psb);
	put(e, &psbend);
	for (int i = 0; i < MAX_PRE && k->pre[i].type != ppt_invalid; i++)
		put(e, &k->pre[i]);
	put(e, &tnt);
	put(e, &mtc);
	put(e, &tnt);
	assert_int_equal(pt_enc_get_offset(e, &off), 0);
	pt_free_encoder(e);
	return (size_t)off;
}

/* libipt's time at the next TNT. */
static uint64_t qry_time_at_tnt(struct pt_query_decoder *d)
{
	uint64_t t;
	int taken;

	assert_true(pt_qry_cond_branch(d, &taken) >= 0);
	assert_int_equal(pt_qry_time(d, &t, NULL, NULL), 0);
	return t;
}

/* What libipt's query decoder makes of the final MTC: its time minus the
 * time before it (0 where it does not move time on). */
static uint64_t libipt_ticks(const struct clk_case *k)
{
	uint8_t buf[256];
	size_t len = encode(buf, sizeof(buf), k);
	struct pt_config c = config(buf, len, k);
	struct pt_query_decoder *d = pt_qry_alloc_decoder(&c);
	uint64_t t0, t1;

	assert_non_null(d);
	assert_true(pt_qry_sync_forward(d, NULL) >= 0);
	t0 = qry_time_at_tnt(d);
	t1 = qry_time_at_tnt(d);
	pt_qry_free_decoder(d);
	/* libipt's time goes back where fc exceeds the ticks to the MTC;
	 * clk_to_mtc has no negative answer and gives 0 ("not known") */
	return t1 > t0 ? t1 - t0 : 0;
}

/* clk_to_mtc after clk_note saw the case's packets, as pge_scan does. */
static uint64_t ptflame_ticks(const struct clk_case *k)
{
	struct pt_config c = config(NULL, 0, k);
	struct clk s;

	memset(&s, 0, sizeof(s));
	for (int i = 0; i < MAX_PRE && k->pre[i].type != ppt_invalid; i++)
		clk_note(&s, &k->pre[i], k->mtc_freq);
	return clk_to_mtc(&s, &c, k->mtc);
}

static void test_clk_to_mtc_matches_libipt(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct clk_case *k = &cases[i];
		uint64_t want = libipt_ticks(k), got = ptflame_ticks(k);

		print_message("%-44s libipt %6llu clk_to_mtc %6llu\n", k->name,
			      (unsigned long long)want, (unsigned long long)got);
		/* a case that no longer tests what its name says fails too */
		assert_int_equal(want != 0, k->timed);
		assert_int_equal(got, want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clk_to_mtc_matches_libipt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
