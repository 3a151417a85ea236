/* ptflame decoder: the time of libipt 2.0.5's query decoder, value for
 * value, from the timing packets (our query decoder's, ptquery.h).
 *
 * libipt keeps two things: the time (the last TSC, moved on by each MTC's
 * CTC distance and, between MTCs, by CYC cycles times a fast-counter
 * ratio) and the calibration that estimates that ratio (from the cycles
 * between two MTCs, else between two TSCs of a PSB+, else the nominal
 * frequency over the core:bus ratio of a CBR). The functions below take
 * each timing packet as libipt's query decoder applies it (its
 * pt_qry_apply_* and pt_tcal_update_psb: calibration first, then time,
 * configuration errors ignored) and give what pt_qry_time would give at
 * that point. The same integer arithmetic in the same order: any other
 * rounding would move branch times by a nanosecond here and there, and
 * ptflame's output would then depend on which decoder ran.
 * tests/unit/test_pttime.c holds it against libipt's query decoder. */
#ifndef PTFLAME_DECODER_PTTIME_H
#define PTFLAME_DECODER_PTTIME_H

#include <stdbool.h>
#include <stdint.h>

#include <intel-pt.h>

struct dc_ptime {
	const struct pt_config *cfg;   /* mtc_freq, cpuid 0x15, nom_freq, errata */
	/* the time */
	uint64_t tsc;              /* now                                   */
	uint64_t base;             /* at the last TSC or MTC (less a TMA's fc) */
	uint64_t fc;               /* fast-counter ticks since base         */
	uint32_t ctc;              /* the last MTC's (or TMA's) CTC bits    */
	uint32_t ctc_cyc;          /* the CTC the CYCs since count from     */
	uint32_t lost_mtc, lost_cyc;
	bool have_tsc, have_tma, have_mtc;
	/* the calibration */
	uint64_t fcr;              /* fast counter per cycle, << 8          */
	uint64_t fcr_min, fcr_max; /* (min > max: no ratio yet)             */
	uint64_t cal_tsc;          /* the last TSC, and cycles since it     */
	uint64_t cyc_tsc;
	uint64_t cyc_mtc;          /* cycles since the last MTC             */
	uint32_t cal_ctc;          /* that MTC's CTC                        */
	uint32_t cal_lost_mtc;
	bool cal_have_mtc, check_skl168;
};

/* A fresh time, as after a sync. */
void dc_ptime_init(struct dc_ptime *t, const struct pt_config *cfg);

/* The calibration forgotten, the time kept (libipt's query decoder at an
 * OVF). */
void dc_ptime_reset_cal(struct dc_ptime *t);

/* The packets, as the query decoder applies them; header: inside a PSB+.
 * 0, or the error the query decoder would fail with there. */
int dc_ptime_psb(struct dc_ptime *t);
int dc_ptime_tsc(struct dc_ptime *t, uint64_t tsc, bool header);
int dc_ptime_cbr(struct dc_ptime *t, uint8_t ratio, bool header);
int dc_ptime_tma(struct dc_ptime *t, uint16_t ctc, uint16_t fc);
int dc_ptime_mtc(struct dc_ptime *t, uint8_t ctc);
int dc_ptime_cyc_slow(struct dc_ptime *t, uint64_t cycles);

enum { DC_PTIME_FCR_SHR = 8 };     /* the ratio's fixed point (pt_tcal_fcr_shr) */

/* dc_ptime_cyc inline where it is one multiply (a ratio known, the time
 * moved since the last MTC or TSC): a CYC comes between nearly every two
 * branches of a trace with cycles. */
static inline int dc_ptime_cyc(struct dc_ptime *t, uint64_t cycles)
{
	if (!t->fc || !t->fcr || t->fcr_min > t->fcr_max)
		return dc_ptime_cyc_slow(t, cycles);
	t->cyc_mtc += cycles;
	t->cyc_tsc += cycles;
	t->fc += (cycles * t->fcr) >> DC_PTIME_FCR_SHR;
	t->tsc = t->base + t->fc;
	return 0;
}

/* pt_qry_time's answer for this time: 0 or -pte_no_time (no TSC yet; the
 * outputs are set either way). */
int dc_ptime_query(const struct dc_ptime *t, uint64_t *tsc, uint32_t *lost_mtc,
		   uint32_t *lost_cyc);

#endif
