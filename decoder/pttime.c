/* ptflame decoder: libipt's query-decoder time (see pttime.h). Each
 * function says which step of libipt 2.0.5 it stands for; the arithmetic
 * is kept as libipt does it (widths, order, the 8-bit shift of the
 * ratio), since the values must be the same to the tick. */
#include "decoder/pttime.h"

#include <string.h>

enum { FCR_SHR = DC_PTIME_FCR_SHR };

void dc_ptime_init(struct dc_ptime *t, const struct pt_config *cfg)
{
	memset(t, 0, sizeof(*t));
	t->cfg = cfg;
	t->fcr_min = UINT64_MAX;
}

/* CTC ticks from last to ctc, across one wrap of the bits MTC sends. */
static int ctc_delta(const struct dc_ptime *t, uint32_t ctc, uint32_t last, uint32_t *delta)
{
	if (ctc < last) {
		ctc += 1u << (t->cfg->mtc_freq + 8);
		if (ctc < last)
			return -pte_bad_packet;
	}
	*delta = ctc - last;
	return 0;
}

/* CTC ticks as fast-counter (TSC) ticks: CPUID 0x15's ratio. */
static int ctc_to_fc(const struct dc_ptime *t, uint64_t ctc, uint64_t *fc)
{
	uint32_t eax = t->cfg->cpuid_0x15_eax, ebx = t->cfg->cpuid_0x15_ebx;

	if (!eax || !ebx)
		return -pte_bad_config;
	*fc = ctc * ebx / eax;
	return 0;
}

/* A configuration error only makes timing less precise: libipt goes on. */
static int keep(int err)
{
	return err == -pte_bad_config ? 0 : err;
}

/* ---- the calibration (pt_tcal_*) ---------------------------------------- */

static bool have_fcr(const struct dc_ptime *t)
{
	return t->fcr_min <= t->fcr_max;
}

static void set_fcr(struct dc_ptime *t, uint64_t fcr)
{
	t->fcr = fcr;
	if (fcr < t->fcr_min)
		t->fcr_min = fcr;
	if (fcr > t->fcr_max)
		t->fcr_max = fcr;
}

static void cal_reset(struct dc_ptime *t)
{
	t->fcr = t->fcr_max = 0;
	t->fcr_min = UINT64_MAX;
	t->cal_tsc = t->cyc_tsc = t->cyc_mtc = 0;
	t->cal_ctc = 0;
	t->cal_have_mtc = t->check_skl168 = false;
}

/* In PSB+: the nominal ratio over the CBR, if the nominal one is known. */
static int cal_header_cbr(struct dc_ptime *t, uint8_t ratio)
{
	uint64_t p1 = t->cfg->nom_freq;

	if (!p1)
		return 0;
	if (!ratio)
		return -pte_bad_packet;
	set_fcr(t, (p1 << FCR_SHR) / ratio);
	return 0;
}

/* In PSB+: the cycles since the TSC before, if no MTC calibrates. */
static int cal_header_tsc(struct dc_ptime *t, uint64_t tsc)
{
	uint64_t last = t->cal_tsc, cyc = t->cyc_tsc, delta;

	t->cal_tsc = tsc;
	t->cyc_tsc = 0;
	if (!last || !cyc || t->cal_have_mtc)
		return 0;
	if (tsc < last) {
		tsc += UINT64_C(1) << 56;  /* (a TSC packet has 7 bytes) */
		if (tsc < last)
			return -pte_bad_packet;
	}
	delta = tsc - last;
	if (delta & ~(~UINT64_C(0) >> FCR_SHR))
		return -pte_internal;
	set_fcr(t, (delta << FCR_SHR) / cyc);
	return 0;
}

/* The cycles since the last MTC over the CTC distance to it. */
static int cal_mtc(struct dc_ptime *t, uint8_t payload)
{
	uint32_t last = t->cal_ctc, ctc = (uint32_t)payload << t->cfg->mtc_freq, delta;
	uint64_t cyc = t->cyc_mtc, fc, fcr;
	bool skl168 = t->check_skl168;
	int err;

	t->check_skl168 = false;       /* (only the first MTC after a PSB) */
	if (!t->cal_have_mtc) {
		t->cyc_mtc = 0;
		t->cal_ctc = ctc;
		t->cal_have_mtc = true;
		return 0;
	}
	if (!cyc)                      /* (spread over the next period too) */
		return 0;
	t->cyc_mtc = 0;
	t->cal_ctc = ctc;
	if ((err = ctc_delta(t, ctc, last, &delta)) || (err = ctc_to_fc(t, delta, &fc)))
		return err;
	if (fc & ~(~UINT64_C(0) >> FCR_SHR))
		return -pte_internal;
	fcr = (fc << FCR_SHR) / cyc;
	/* erratum SKL168: CYCs dropped right before a PSB; the first MTC
	 * after it does not calibrate when an MTC or a wrap CYC looks lost */
	if (skl168) {
		if ((1u << t->cfg->mtc_freq) < delta)
			return 0;
		if (t->cfg->mtc_freq < 10 && have_fcr(t) &&
		    ((t->fcr * (cyc + 0xf00)) >> FCR_SHR) < fc)
			return 0;
	}
	set_fcr(t, fcr);
	return 0;
}

/* ---- the time (pt_time_update_*) ------------------------------------------ */

static void time_tsc(struct dc_ptime *t, uint64_t tsc)
{
	t->have_tsc = true;
	t->have_tma = t->have_mtc = false;
	t->tsc = t->base = tsc;
	t->ctc = 0;
	t->fc = 0;
	t->lost_mtc = t->lost_cyc = 0;
}

static int time_cbr(uint8_t ratio)
{
	/* (libipt keeps the ratio for pt_qry_core_bus_ratio, which nothing
	 * here asks; only its check is the time's) */
	if (!ratio)
		return -pte_bad_packet;
	return 0;
}

void dc_ptime_reset_cal(struct dc_ptime *t)
{
	cal_reset(t);
}

int dc_ptime_psb(struct dc_ptime *t)
{
	if (t->cfg->errata.skl168)
		t->check_skl168 = true;
	return 0;
}

int dc_ptime_tsc(struct dc_ptime *t, uint64_t tsc, bool header)
{
	int err = 0;

	if (header)
		err = cal_header_tsc(t, tsc);
	else {
		/* (outside PSB+ time may have been lost: no calibration) */
		t->cal_tsc = tsc;
		t->cyc_tsc = 0;
	}
	if ((err = keep(err)))
		return err;
	time_tsc(t, tsc);
	return 0;
}

int dc_ptime_cbr(struct dc_ptime *t, uint8_t ratio, bool header)
{
	int err;

	if (!header)
		cal_reset(t);      /* (a frequency change) */
	if ((err = keep(cal_header_cbr(t, ratio))))
		return err;
	return keep(time_cbr(ratio));
}

int dc_ptime_tma(struct dc_ptime *t, uint16_t ctc, uint16_t fc)
{
	unsigned hi = t->cfg->mtc_freq + 8u;

	if (!t->have_tsc || t->have_tma)
		return -pte_bad_context;
	if (t->have_mtc)
		return -pte_internal;
	t->have_tma = true;
	t->base -= fc;
	t->fc += fc;
	/* a TMA with all the CTC bits an MTC has is as good as an MTC */
	if (hi <= 16)
		t->have_mtc = true;
	t->ctc = t->ctc_cyc = ctc & ((1u << hi) - 1u);
	return 0;
}

static int time_mtc(struct dc_ptime *t, uint8_t payload)
{
	bool had_tma = t->have_tma, had_mtc = t->have_mtc;
	uint32_t last = t->ctc, ctc = (uint32_t)payload << t->cfg->mtc_freq, delta;
	uint64_t base = t->base, ticks;
	int err;

	if (t->have_tsc && !had_tma)   /* (between a TSC and its TMA) */
		return 0;
	if (t->fc || t->lost_cyc || !had_mtc)
		t->ctc_cyc = ctc;
	t->have_mtc = true;
	t->fc = 0;
	t->ctc = ctc;
	t->lost_cyc = 0;
	if (!had_mtc) {
		uint32_t lo = ctc & 0xffffu, hi = ctc & ~0xffffu;

		/* the first MTC: without a TMA there is nothing to count
		 * from; with one, its 16 CTC bits get this MTC's upper bits,
		 * one 16-bit wrap back when they are past this MTC's */
		if (!had_tma)
			return 0;
		if (last & ~0xffffu)
			return -pte_internal;
		if (lo < last) {
			hi -= 1u << 16;
			hi &= 0xffu << t->cfg->mtc_freq;
		}
		last |= hi;
	}
	if ((err = ctc_delta(t, ctc, last, &delta))) {
		t->lost_mtc++;
		return err;
	}
	if ((err = ctc_to_fc(t, delta, &ticks)))
		return err;
	t->tsc = t->base = base + ticks;
	return 0;
}

int dc_ptime_mtc(struct dc_ptime *t, uint8_t ctc)
{
	int err;

	if ((err = keep(cal_mtc(t, ctc))))
		return err;
	return keep(time_mtc(t, ctc));
}

/* The cycles of the CYCs since the last MTC, less those that belong to
 * the MTC periods before the current one (pt_time_adjust_cyc). */
static int adjust_cyc(const struct dc_ptime *t, uint64_t fcr, uint64_t *cyc)
{
	uint32_t delta;
	uint64_t fc, old;
	int err;

	if (t->ctc == t->ctc_cyc)
		return 0;
	if ((err = ctc_delta(t, t->ctc, t->ctc_cyc, &delta)) || (err = ctc_to_fc(t, delta, &fc)))
		return err;
	old = (fc << FCR_SHR) / fcr;
	*cyc = *cyc < old ? 0 : *cyc - old;
	return 0;
}

int dc_ptime_cyc_slow(struct dc_ptime *t, uint64_t cycles)
{
	uint64_t fcr, cyc = cycles;
	int err;

	t->cyc_mtc += cycles;
	t->cyc_tsc += cycles;
	fcr = have_fcr(t) ? t->fcr : 0;
	if (!fcr) {
		t->lost_cyc++;
		return 0;
	}
	/* (an error there leaves the time as it was, even one that libipt
	 * then ignores) */
	if (!t->fc && (err = adjust_cyc(t, fcr, &cyc)))
		return keep(err);
	t->fc += (cyc * fcr) >> FCR_SHR;
	t->tsc = t->base + t->fc;
	return 0;
}

int dc_ptime_query(const struct dc_ptime *t, uint64_t *tsc, uint32_t *lost_mtc,
		   uint32_t *lost_cyc)
{
	*tsc = t->tsc;
	*lost_mtc = t->lost_mtc;
	*lost_cyc = t->lost_cyc;
	return t->have_tsc ? 0 : -pte_no_time;
}
