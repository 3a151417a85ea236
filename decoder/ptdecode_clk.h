/* ptflame - decoder/ptdecode_clk.h: the clock state that times the first
 * MTC after a coarse TIP.PGE (decoder/ptdecode.c's pge_scan, DESIGN.md
 * section 3 refinement (4)); internal to decoder/, in a header so that
 * tests/unit/test_clk.c can hold it against libipt's own timing. */
#ifndef PTFLAME_PTDECODE_CLK_H
#define PTFLAME_PTDECODE_CLK_H

#include <stdint.h>

#include <intel-pt.h>

/* What times the first MTC after a point of the trace, as libipt keeps it
 * (pt_time_update_tma, pt_time_update_mtc): the last timing packet's CTC
 * bits, and after a TSC the TSC ticks since that CTC value's edge (TMA). */
struct clk {
	enum { CLK_NONE, CLK_TSC, CLK_TMA, CLK_MTC } kind;
	uint32_t ctc;
	uint32_t fc;
};

static inline void clk_note(struct clk *c, const struct pt_packet *p, unsigned mtc_freq)
{
	switch (p->type) {
	case ppt_tsc:
		c->kind = CLK_TSC;
		break;
	case ppt_tma:
		if (c->kind == CLK_TSC) {
			c->kind = CLK_TMA;
			c->ctc = p->payload.tma.ctc;
			c->fc = p->payload.tma.fc;
		}
		break;
	case ppt_mtc:
		/* (libipt ignores an MTC between a TSC and its TMA) */
		if (c->kind == CLK_TMA || c->kind == CLK_MTC) {
			c->kind = CLK_MTC;
			c->ctc = (uint32_t)p->payload.mtc.ctc << mtc_freq;
			c->fc = 0;
		}
		break;
	case ppt_ovf:
		c->kind = CLK_NONE;
		break;
	default:
		break;
	}
}

/* The TSC ticks from the time read after c to that of the MTC with this
 * payload, the first timing packet after it (0: not known). */
static inline uint64_t clk_to_mtc(const struct clk *c, const struct pt_config *pc, uint8_t payload)
{
	unsigned bits = pc->mtc_freq + 8u;
	uint64_t d;

	if ((c->kind != CLK_TMA && c->kind != CLK_MTC) || pc->mtc_freq > 15 ||
	    !pc->cpuid_0x15_eax || !pc->cpuid_0x15_ebx)
		return 0;
	if (c->kind == CLK_TMA && bits > 16)
		bits = 16;                  /* a TMA has CTC[15:0] */
	d = (((uint32_t)payload << pc->mtc_freq) - c->ctc) & ((1u << bits) - 1);
	d = d * pc->cpuid_0x15_ebx / pc->cpuid_0x15_eax;
	return d > c->fc ? d - c->fc : 0;
}

#endif
