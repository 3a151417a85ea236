/* ptflame - record/: Intel PT packet encoder for the emulator.
 *
 * Models what an Intel PT unit configured for user-only tracing (OS=0,
 * BranchEn, TSCEn, MTCEn, optional CYCEn, optional DisRETC) emits for a
 * stream of retired user-mode instructions. Packets are written with
 * libipt's encoder (pt_enc_next); the choices below are ours and follow the
 * Intel SDM vol. 3 ch. "Intel Processor Trace" and the .ptt files of libipt's test/src
 * packet sequences:
 *
 * - syscall/sysenter with CPL0 filtered out: TIP.PGD with the IP suppressed,
 *   no FUP (libipt test syscall-sysret-cpl_3.ptt; SDM: "An example is the
 *   TIP.PGD sent on a SYSCALL, when tracing only USR code. In that case, no
 *   TargetIP will be included"). Return to user: TIP.PGE(target).
 * - asynchronous events (interrupt, preemption, signal, fault) and int n:
 *   FUP(CLIP) + TIP.PGD, IP suppressed (libipt int-iret-cpl_3.ptt: "Software
 *   interrupts receive FUP(CLIP) + TIP"; SDM table "FUP IP": async events).
 * - a MODE.Exec precedes every TIP.PGE (libipt ovf-tip_pge.ptt) and is part
 *   of every PSB+ (libipt needs it after each PSB).
 * - PSB+ = PSB TSC [TMA] CBR MODE.Exec [FUP] PSBEND; Last IP is reset at PSB
 *   (SDM: "Last IP state is guaranteed to be reset to zero when a PSB is
 *   sent out"), so the next IP packet is sext-48.
 * - return compression: a RET is compressed (taken TNT bit) only when it
 *   returns to the NLIP of a CALL seen since the last PSB (SDM: "only RETs
 *   that correspond to CALLs which have been seen since the last PSB packet
 *   may be compressed"), with a 64-entry stack. Decoders model that stack
 *   differently: perf pops on every RET and clears at PSB/OVF, libipt pops
 *   only on compressed RETs and never clears in flow. Compression is
 *   optional for the hardware ("may be compressed"), so we compress only
 *   when both decoders' stacks predict the target, and emit TIP otherwise.
 * - zero-displacement direct calls (call next insn, PIC) are not pushed
 *   (SDM; libipt and perf skip them too).
 * - timing: TSC(+TMA) at PSB+, and TSC, TMA, CBR when a thread comes on
 *   its CPU (perf's per-task event sets TraceEn there; no MTC while it
 *   was clear: rc_ptenc_trace_on) or wakes from a halt (rc_ptenc_stamp);
 *   one MTC per 2^mtc_freq CTC ticks (payload CTC[mtc_freq+7:mtc_freq])
 *   while TraceEn is set, in the kernel too (MTC needs TriggerEn, not
 *   PacketEn: a syscall's MTCs go on, and a PSB+ falls among them when the
 *   byte counter wraps); a pending
 *   TNT is flushed before an MTC so MTCs sit between the branches that
 *   retired before and after them. CYC (cycle-accurate mode, CycThresh 0)
 *   precedes each CYC-eligible packet (TNT, TIP*, FUP, MODE, MTC, TSC) with
 *   the core cycles since the previous CYC (SDM "Cycle Counter": reset when
 *   a CYC is sent); a TNT's CYC is timed at its first branch.
 */
#include "decoder/dc_vec.h"
#include "record/ptenc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#define RETSTACK_SIZE 64
#define TNT_MAX_BITS 47      /* TNT-64 payload */
#define TNT8_MAX_BITS 6      /* TNT-8 payload */
#define MODE_EXEC_64 1

/* A ring of return addresses (oldest entries fall off when full). */
struct retstack {
	uint64_t e[RETSTACK_SIZE];
	unsigned top;
	unsigned n;
};

struct rc_ptenc {
	struct rc_ptenc_config cfg;
	int cpu;

	struct pt_encoder *pe; /* writes one packet at a time into scratch */
	uint8_t scratch[32];

	uint8_t *buf;          /* produced, not yet consumed: buf[head..len) */
	size_t head, len, cap;
	uint64_t consumed;     /* bytes consumed before buf[head] */
	uint64_t next_psb;     /* total offset at which a PSB+ is due */
	uint64_t packets;

	bool enabled;          /* PacketEn */
	bool trace_off;        /* TraceEn clear: the thread is off its CPU */
	bool have_last_ip;
	uint64_t last_ip;

	uint64_t tnt_bits;     /* oldest branch in the most significant bit */
	unsigned tnt_n;
	uint64_t tnt_first_tsc;

	bool have_time;        /* a TSC was sent */
	uint64_t tsc;          /* current virtual TSC */
	uint64_t mtc_idx;      /* MTC period index the decoders know */
	uint64_t cyc_tsc;      /* time of the last CYC (cycle counter reset) */
	uint64_t last_timing_tsc;

	struct retstack hw;    /* calls since PSB/OVF, popped by every RET */
	struct retstack ipt;   /* libipt's view: popped by compressed RETs */
};

/* --- small helpers ------------------------------------------------------ */

static void rs_clear(struct retstack *s)
{
	s->top = 0;
	s->n = 0;
}

static void rs_push(struct retstack *s, uint64_t v)
{
	s->e[s->top] = v;
	s->top = (s->top + 1) % RETSTACK_SIZE;
	if (s->n < RETSTACK_SIZE)
		s->n++;
}

static bool rs_peek(const struct retstack *s, uint64_t *v)
{
	if (!s->n)
		return false;
	*v = s->e[(s->top + RETSTACK_SIZE - 1) % RETSTACK_SIZE];
	return true;
}

static void rs_pop(struct retstack *s)
{
	if (!s->n)
		return;
	s->top = (s->top + RETSTACK_SIZE - 1) % RETSTACK_SIZE;
	s->n--;
}

static uint64_t total_offset(const struct rc_ptenc *e)
{
	return e->consumed + (e->len - e->head);
}

static uint64_t psb_period(const struct rc_ptenc_config *cfg)
{
	return cfg->psb_period ? cfg->psb_period : 16384;
}

static uint64_t ctc_of(uint64_t tsc)
{
	return tsc / RC_PTENC_TSC_PER_CTC;
}

static uint64_t mtc_index(const struct rc_ptenc *e, uint64_t tsc)
{
	return ctc_of(tsc) >> e->cfg.mtc_freq;
}

/* --- byte output -------------------------------------------------------- */

static int reserve(struct rc_ptenc *e, size_t n)
{
	if (e->len + n <= e->cap)
		return 0;
	/* Slide the unconsumed tail down before growing. */
	if (e->head) {
		memmove(e->buf, e->buf + e->head, e->len - e->head);
		e->len -= e->head;
		e->head = 0;
		if (e->len + n <= e->cap)
			return 0;
	}
	return dc_vec_reserve((void **)&e->buf, &e->cap, e->len + n, 1, 4096);
}

static int emit(struct rc_ptenc *e, const struct pt_packet *p)
{
	int n, err;

	err = pt_enc_sync_set(e->pe, 0);
	if (err < 0)
		return -EIO;
	n = pt_enc_next(e->pe, p);
	if (n < 0)
		return -EINVAL;
	err = reserve(e, (size_t)n);
	if (err)
		return err;
	memcpy(e->buf + e->len, e->scratch, (size_t)n);
	e->len += (size_t)n;
	e->packets++;
	return 0;
}

/* *p: an empty packet of TYPE. */
static void packet_init(struct pt_packet *p, enum pt_packet_type type)
{
	memset(p, 0, sizeof(*p));
	p->type = type;
}

static int emit_simple(struct rc_ptenc *e, enum pt_packet_type type)
{
	struct pt_packet p;

	packet_init(&p, type);
	return emit(e, &p);
}

/* --- timing packets ----------------------------------------------------- */

/* CYC before a CYC-eligible packet, counting core cycles (== TSC ticks at
 * CBR == max non-turbo ratio) since the previous CYC, at time AT. */
static int emit_cyc(struct rc_ptenc *e, uint64_t at)
{
	struct pt_packet p;

	if (!e->cfg.cyc || !e->have_time || at <= e->cyc_tsc)
		return 0;
	packet_init(&p, ppt_cyc);
	p.payload.cyc.value = at - e->cyc_tsc;
	e->cyc_tsc = at;
	return emit(e, &p);
}

/* *p: an empty packet of TYPE, a CYC-eligible one: its CYC for time AT
 * goes out first. 0 or emit's error. */
static int cyc_packet_init(struct rc_ptenc *e, uint64_t at, struct pt_packet *p,
			   enum pt_packet_type type)
{
	packet_init(p, type);
	return emit_cyc(e, at);
}

/* TSC (+TMA) carrying the current time. */
static int emit_tsc(struct rc_ptenc *e)
{
	struct pt_packet p;
	int err;

	err = cyc_packet_init(e, e->tsc, &p, ppt_tsc);
	if (err)
		return err;
	/* The packet holds 7 bytes; perf takes the top byte from the
	 * AUXTRACE record's reference (rc_ptenc_last_tsc). */
	p.payload.tsc.tsc = e->tsc & 0xffffffffffffffull;
	err = emit(e, &p);
	if (err)
		return err;
	e->have_time = true;
	e->last_timing_tsc = e->tsc;
	e->cyc_tsc = e->tsc;
	if (!e->cfg.mtc)
		return 0;
	/* TMA: CTC[15:0] and the TSC ticks since that CTC edge (libipt
	 * pt_time_update_tma: base = tsc - fc at CTC value ctc). */
	packet_init(&p, ppt_tma);
	p.payload.tma.ctc = (uint16_t)(ctc_of(e->tsc) & 0xffff);
	p.payload.tma.fc = (uint16_t)(e->tsc % RC_PTENC_TSC_PER_CTC);
	e->mtc_idx = mtc_index(e, e->tsc);
	return emit(e, &p);
}

/* A TSC outside PSB+ is what the hardware sends after its clocks or its
 * timing packets stopped (SDM, TSC packet: P-state change, wake from a
 * C-state, clock modulation; and TraceEn set again): a running core sends
 * an MTC every period (MTC depends on TriggerEn alone). So the emulator's
 * TSC after a halt (rc_ptenc_stamp) or a switch-in (rc_ptenc_trace_on)
 * comes with a CBR too (SDM, CBR packet: "after any frequency change, on
 * C-state wake up, PSB+"). The CBR matters: libipt calibrates CYC at each
 * MTC over the cycles and the CTC distance since the MTC before, and a TSC
 * resets neither, so without it the first MTC after the TSC took the
 * cycles of the whole stretch over its 8-bit CTC distance (wrapped), a
 * ratio so small that the first CYC after that MTC added nothing, and then
 * (libipt counting each CYC from the last MTC at which time had moved)
 * neither did any other up to the next TSC (none-141: a ret 15 ns early
 * at MTC period 0).
 * A CBR outside PSB+ restarts that calibration at the nominal ratio.
 * wake_at: nothing counted until TSC (halted, or TraceEn clear): no core
 * cycles (no CYC for the stretch), no MTC; then TSC, TMA, CBR there. */
static int wake_at(struct rc_ptenc *e, uint64_t tsc)
{
	struct pt_packet p;
	int err;

	e->tsc = tsc > e->tsc ? tsc : e->tsc;
	e->cyc_tsc = e->tsc;
	err = emit_tsc(e);
	if (err)
		return err;
	packet_init(&p, ppt_cbr);
	p.payload.cbr.ratio = RC_PTENC_CBR;
	return emit(e, &p);
}

static int flush_tnt(struct rc_ptenc *e)
{
	struct pt_packet p;
	int err;

	if (!e->tnt_n)
		return 0;
	err = cyc_packet_init(e, e->tnt_first_tsc, &p,
			      e->tnt_n <= TNT8_MAX_BITS ? ppt_tnt_8 : ppt_tnt_64);
	if (err)
		return err;
	p.payload.tnt.bit_size = (uint8_t)e->tnt_n;
	p.payload.tnt.payload = e->tnt_bits;
	e->tnt_n = 0;
	e->tnt_bits = 0;
	return emit(e, &p);
}

static int emit_psb_plus(struct rc_ptenc *e, uint64_t ip);

/* Move the clock to TSC: one MTC per crossed MTC period, however many (the
 * hardware sends them all while TraceEn is set, in a syscall too; each
 * MTC's 8-bit CTC is one more than the last's, so none is ambiguous).
 * With tracing off (in the kernel) a PSB+ goes out among them when due,
 * as the hardware's byte counter wraps there too; with tracing on, the
 * next instruction's psb_if_due sends it, with its FUP. */
static int advance_time(struct rc_ptenc *e, uint64_t tsc)
{
	uint64_t idx, i;
	int err;

	if (tsc < e->tsc)
		return -EINVAL;
	if (!e->have_time) {
		e->tsc = tsc;
		return 0;
	}
	if (!e->cfg.mtc) {
		e->tsc = tsc;
		return 0;
	}
	idx = mtc_index(e, tsc);
	if (idx <= e->mtc_idx) {
		e->tsc = tsc;
		return 0;
	}
	err = flush_tnt(e);
	if (err)
		return err;
	for (i = e->mtc_idx + 1; i <= idx; i++) {
		struct pt_packet p;
		uint64_t edge = (i << e->cfg.mtc_freq) * RC_PTENC_TSC_PER_CTC;

		e->tsc = edge;
		err = cyc_packet_init(e, edge, &p, ppt_mtc);
		if (err)
			return err;
		p.payload.mtc.ctc = (uint8_t)(i & 0xff);
		err = emit(e, &p);
		if (err)
			return err;
		e->last_timing_tsc = edge;
		if (!e->enabled && total_offset(e) >= e->next_psb) {
			err = emit_psb_plus(e, 0);
			if (err)
				return err;
		}
	}
	e->mtc_idx = idx;
	e->tsc = tsc;
	return 0;
}

/* --- IP packets --------------------------------------------------------- */

static bool sext48(uint64_t ip)
{
	uint64_t hi = ip >> 47;

	return hi == 0 || hi == 0x1ffff;
}

/* The shortest IP compression that reproduces IP from the last IP. */
static enum pt_ip_compression pick_ipc(const struct rc_ptenc *e, uint64_t ip)
{
	if (e->have_last_ip) {
		if ((ip >> 16) == (e->last_ip >> 16))
			return pt_ipc_update_16;
		if ((ip >> 32) == (e->last_ip >> 32))
			return pt_ipc_update_32;
	}
	return sext48(ip) ? pt_ipc_sext_48 : pt_ipc_full;
}

static int emit_ip(struct rc_ptenc *e, enum pt_packet_type type, uint64_t ip,
		   bool suppress)
{
	struct pt_packet p;
	int err;

	err = cyc_packet_init(e, e->tsc, &p, type);
	if (err)
		return err;
	if (suppress) {
		/* Last IP keeps referring to the last IP sent. */
		p.payload.ip.ipc = pt_ipc_suppressed;
		return emit(e, &p);
	}
	p.payload.ip.ipc = pick_ipc(e, ip);
	p.payload.ip.ip = ip;
	err = emit(e, &p);
	if (err)
		return err;
	e->last_ip = ip;
	e->have_last_ip = true;
	return 0;
}

static int emit_mode_exec(struct rc_ptenc *e)
{
	struct pt_packet p;
	int err;

	err = cyc_packet_init(e, e->tsc, &p, ppt_mode);
	if (err)
		return err;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	return emit(e, &p);
}

/* --- PSB+ --------------------------------------------------------------- */

static int emit_psb_plus(struct rc_ptenc *e, uint64_t ip)
{
	struct pt_packet p;
	uint64_t period = psb_period(&e->cfg);
	int err;

	err = flush_tnt(e);
	if (err)
		return err;
	err = emit_simple(e, ppt_psb);
	if (err)
		return err;
	e->have_last_ip = false;
	e->last_ip = 0;
	/* The hardware compresses only RETs of CALLs seen since this PSB;
	 * perf clears its stack here. */
	rs_clear(&e->hw);

	err = emit_tsc(e);
	if (err)
		return err;
	packet_init(&p, ppt_cbr);
	p.payload.cbr.ratio = RC_PTENC_CBR;
	err = emit(e, &p);
	if (err)
		return err;
	err = emit_mode_exec(e);
	if (err)
		return err;
	if (e->enabled) {
		err = emit_ip(e, ppt_fup, ip, false);
		if (err)
			return err;
	}
	err = emit_simple(e, ppt_psbend);
	if (err)
		return err;
	e->next_psb = (total_offset(e) / period + 1) * period;
	return 0;
}

static int psb_if_due(struct rc_ptenc *e, uint64_t ip)
{
	if (total_offset(e) < e->next_psb && e->have_time)
		return 0;
	return emit_psb_plus(e, ip);
}

/* --- public API --------------------------------------------------------- */

uint64_t rc_ptenc_ns_to_tsc(const struct rc_ptenc_config *cfg, uint64_t ns)
{
	uint64_t d = ns >= cfg->time_zero ? ns - cfg->time_zero : 0;

	return d * RC_PTENC_TSC_PER_NS;
}

uint64_t rc_ptenc_tsc_to_ns(const struct rc_ptenc_config *cfg, uint64_t tsc)
{
	return cfg->time_zero + tsc / RC_PTENC_TSC_PER_NS;
}

void rc_ptenc_perf_info(const struct rc_ptenc_config *cfg,
			struct rc_ptenc_perf_info *info)
{
	uint64_t psb_log = 0, period = psb_period(cfg);

	memset(info, 0, sizeof(*info));
	/* perf's intel_pt PMU format: pt:0 cyc:1 mtc:9 tsc:10 noretcomp:11
	 * branch:13 mtc_period:14-17 cyc_thresh:19-22 psb_period:24-27. */
	info->tsc_bit = 1ull << 10;
	info->noretcomp_bit = 1ull << 11;
	info->mtc_bit = 1ull << 9;
	info->mtc_freq_bits = 0xfull << 14;
	info->cyc_bit = 1ull << 1;
	info->psb_period_bits = 0xfull << 24;

	while ((2048ull << psb_log) < period && psb_log < 15)
		psb_log++;
	info->attr_config = 1ull /* pt */ | (1ull << 13) /* branch */ |
			    info->tsc_bit | (psb_log << 24);
	if (cfg->mtc)
		info->attr_config |= info->mtc_bit |
				     ((uint64_t)(cfg->mtc_freq & 0xf) << 14);
	if (cfg->cyc)
		info->attr_config |= info->cyc_bit;
	if (cfg->noretcomp)
		info->attr_config |= info->noretcomp_bit;

	/* ns = zero + tsc / RC_PTENC_TSC_PER_NS, exactly: mult / 2^shift. */
	info->time_shift = 10;
	info->time_mult = 1024 / RC_PTENC_TSC_PER_NS;
	info->time_zero = cfg->time_zero;
	info->cap_user_time_zero = 1;
	info->tsc_ctc_ratio_n = RC_PTENC_TSC_PER_CTC;
	info->tsc_ctc_ratio_d = 1;
	info->max_non_turbo_ratio = RC_PTENC_CBR;
}

void rc_ptenc_ipt_config(const struct rc_ptenc_config *cfg,
			 struct pt_config *ipt)
{
	ipt->cpuid_0x15_eax = 1;
	ipt->cpuid_0x15_ebx = RC_PTENC_TSC_PER_CTC;
	ipt->mtc_freq = (uint8_t)(cfg->mtc ? cfg->mtc_freq : 0);
	ipt->nom_freq = RC_PTENC_CBR;
}

struct rc_ptenc *rc_ptenc_new(const struct rc_ptenc_config *cfg, int cpu)
{
	struct pt_config pc;
	struct rc_ptenc *e;
	uint64_t period = psb_period(cfg);

	if (period < 256 || (period & (period - 1)) || cfg->mtc_freq > 15)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->cfg = *cfg;
	e->cpu = cpu;
	pt_config_init(&pc);
	pc.begin = e->scratch;
	pc.end = e->scratch + sizeof(e->scratch);
	rc_ptenc_ipt_config(cfg, &pc);
	e->pe = pt_alloc_encoder(&pc);
	if (!e->pe) {
		free(e);
		return NULL;
	}
	return e;
}

void rc_ptenc_free(struct rc_ptenc *enc)
{
	if (!enc)
		return;
	pt_free_encoder(enc->pe);
	free(enc->buf);
	free(enc);
}

int rc_ptenc_enable(struct rc_ptenc *enc, uint64_t ns, uint64_t ip)
{
	int err;

	if (enc->enabled)
		return -EINVAL;
	err = advance_time(enc, rc_ptenc_ns_to_tsc(&enc->cfg, ns));
	if (err)
		return err;
	/* Without MTC nothing would tell the decoders how long tracing was
	 * off; the hardware sends a TSC when it wakes from a deep C-state. */
	if (!enc->cfg.mtc && enc->have_time && enc->tsc > enc->last_timing_tsc) {
		err = emit_tsc(enc);
		if (err)
			return err;
	}
	err = psb_if_due(enc, ip);
	if (err)
		return err;
	err = emit_mode_exec(enc);
	if (err)
		return err;
	err = emit_ip(enc, ppt_tip_pge, ip, false);
	if (err)
		return err;
	enc->enabled = true;
	return 0;
}

static int add_tnt(struct rc_ptenc *e, bool taken)
{
	if (!e->tnt_n)
		e->tnt_first_tsc = e->tsc;
	e->tnt_bits = (e->tnt_bits << 1) | (taken ? 1u : 0u);
	e->tnt_n++;
	if (e->tnt_n == TNT_MAX_BITS)
		return flush_tnt(e);
	return 0;
}

static int tip(struct rc_ptenc *e, uint64_t target)
{
	int err = flush_tnt(e);

	if (err)
		return err;
	return emit_ip(e, ppt_tip, target, false);
}

static int do_ret(struct rc_ptenc *e, const struct rc_insn *insn)
{
	uint64_t hw_top = 0, ipt_top = 0;
	bool hw_ok = rs_peek(&e->hw, &hw_top);
	bool ipt_ok = rs_peek(&e->ipt, &ipt_top);

	rs_pop(&e->hw);
	if (!e->cfg.noretcomp && hw_ok && ipt_ok &&
	    hw_top == insn->next_ip && ipt_top == insn->next_ip) {
		rs_pop(&e->ipt);
		return add_tnt(e, true);
	}
	return tip(e, insn->next_ip);
}

static void do_push(struct rc_ptenc *e, const struct rc_insn *insn)
{
	uint64_t nlip = insn->ip + insn->len;

	/* A direct call to the next instruction (PIC get-IP) is no call
	 * for return compression. */
	if (insn->cls == RC_INSN_CALL && insn->next_ip == nlip)
		return;
	rs_push(&e->hw, nlip);
	rs_push(&e->ipt, nlip);
}

static int pgd(struct rc_ptenc *e, bool fup, uint64_t ip)
{
	int err = flush_tnt(e);

	if (err)
		return err;
	if (fup) {
		err = emit_ip(e, ppt_fup, ip, false);
		if (err)
			return err;
	}
	err = emit_ip(e, ppt_tip_pgd, 0, true);
	if (err)
		return err;
	e->enabled = false;
	return 0;
}

int rc_ptenc_insn(struct rc_ptenc *enc, const struct rc_insn *insn, uint64_t ns)
{
	int err;

	if (!enc->enabled)
		return -EINVAL;
	err = advance_time(enc, rc_ptenc_ns_to_tsc(&enc->cfg, ns));
	if (err)
		return err;
	err = psb_if_due(enc, insn->ip);
	if (err)
		return err;

	switch (insn->cls) {
	case RC_INSN_OTHER:
	case RC_INSN_JMP:
		return 0;
	case RC_INSN_JCC:
		return add_tnt(enc, insn->next_ip != insn->ip + insn->len);
	case RC_INSN_CALL:
		do_push(enc, insn);
		return 0;
	case RC_INSN_CALL_IND:
		do_push(enc, insn);
		return tip(enc, insn->next_ip);
	case RC_INSN_JMP_IND:
	case RC_INSN_FAR:
		return tip(enc, insn->next_ip);
	case RC_INSN_RET:
		return do_ret(enc, insn);
	case RC_INSN_SYSCALL:
		return pgd(enc, false, 0);
	case RC_INSN_INT:
		/* Decoders cannot tell int n from an interrupt taken before
		 * it: the hardware sends FUP(CLIP) + TIP. */
		return pgd(enc, true, insn->ip);
	default:
		return -EINVAL;
	}
}

int rc_ptenc_disable(struct rc_ptenc *enc, uint64_t ns, uint64_t ip,
		     enum rc_ptenc_off why)
{
	int err;

	if (!enc->enabled)
		return -EINVAL;
	err = advance_time(enc, rc_ptenc_ns_to_tsc(&enc->cfg, ns));
	if (err)
		return err;
	err = psb_if_due(enc, ip);
	if (err)
		return err;
	return pgd(enc, why == RC_PTENC_OFF_ASYNC, ip);
}

int rc_ptenc_stamp(struct rc_ptenc *enc, uint64_t ns, uint64_t ip, uint64_t until)
{
	uint64_t tsc = rc_ptenc_ns_to_tsc(&enc->cfg, until);
	int err;

	if (!enc->enabled)
		return -EINVAL;
	err = advance_time(enc, rc_ptenc_ns_to_tsc(&enc->cfg, ns));
	if (!err)
		err = emit_psb_plus(enc, ip);
	if (err || tsc <= enc->tsc)
		return err;
	return wake_at(enc, tsc);   /* halted until then */
}

int rc_ptenc_trace_off(struct rc_ptenc *enc, uint64_t ns)
{
	uint64_t tsc = rc_ptenc_ns_to_tsc(&enc->cfg, ns);
	int err;

	if (enc->enabled)
		return -EINVAL;
	if (enc->trace_off)
		return 0;
	err = advance_time(enc, tsc > enc->tsc ? tsc : enc->tsc);
	enc->trace_off = true;
	return err;
}

int rc_ptenc_trace_on(struct rc_ptenc *enc, uint64_t ns)
{
	uint64_t tsc = rc_ptenc_ns_to_tsc(&enc->cfg, ns);

	if (!enc->trace_off)
		return 0;
	enc->trace_off = false;
	return enc->have_time ? wake_at(enc, tsc) : 0;
}

int rc_ptenc_ovf(struct rc_ptenc *enc, uint64_t ns, uint64_t ip)
{
	int err;

	err = flush_tnt(enc);
	if (err)
		return err;
	err = emit_simple(enc, ppt_ovf);
	if (err)
		return err;
	/* Decoders resynchronise: perf clears its call stack and last IP. */
	rs_clear(&enc->hw);
	enc->have_last_ip = false;
	enc->last_ip = 0;
	enc->tsc = rc_ptenc_ns_to_tsc(&enc->cfg, ns) > enc->tsc ?
		   rc_ptenc_ns_to_tsc(&enc->cfg, ns) : enc->tsc;
	if (enc->have_time) {
		err = emit_tsc(enc);
		if (err)
			return err;
	}
	if (enc->enabled)
		return emit_ip(enc, ppt_fup, ip, false);
	return 0;
}

int rc_ptenc_flush(struct rc_ptenc *enc)
{
	return flush_tnt(enc);
}

const uint8_t *rc_ptenc_data(const struct rc_ptenc *enc, size_t *size)
{
	*size = enc->len - enc->head;
	return enc->buf ? enc->buf + enc->head : (const uint8_t *)"";
}

void rc_ptenc_consume(struct rc_ptenc *enc, size_t n)
{
	size_t avail = enc->len - enc->head;

	if (n > avail)
		n = avail;
	enc->head += n;
	enc->consumed += n;
	if (enc->head == enc->len) {
		enc->head = 0;
		enc->len = 0;
	}
}

uint64_t rc_ptenc_offset(const struct rc_ptenc *enc)
{
	return total_offset(enc);
}

uint64_t rc_ptenc_last_tsc(const struct rc_ptenc *enc)
{
	return enc->last_timing_tsc ? enc->last_timing_tsc : 1;
}

uint64_t rc_ptenc_packets(const struct rc_ptenc *enc)
{
	return enc->packets;
}

/* --- classification ----------------------------------------------------- */

int rc_insn_cs_open(csh *cs)
{
	if (cs_open(CS_ARCH_X86, CS_MODE_64, cs) != CS_ERR_OK)
		return -ENOMEM;
	if (cs_option(*cs, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK) {
		cs_close(cs);
		return -EINVAL;
	}
	return 0;
}

static bool first_op_is_imm(const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;

	return x->op_count >= 1 && x->operands[0].type == X86_OP_IMM;
}

static uint8_t class_of(const cs_insn *insn)
{
	switch (insn->id) {
	case X86_INS_JAE: case X86_INS_JA: case X86_INS_JBE: case X86_INS_JB:
	case X86_INS_JCXZ: case X86_INS_JECXZ: case X86_INS_JRCXZ:
	case X86_INS_JE: case X86_INS_JGE: case X86_INS_JG: case X86_INS_JLE:
	case X86_INS_JL: case X86_INS_JNE: case X86_INS_JNO: case X86_INS_JNP:
	case X86_INS_JNS: case X86_INS_JO: case X86_INS_JP: case X86_INS_JS:
	case X86_INS_LOOP: case X86_INS_LOOPE: case X86_INS_LOOPNE:
		return RC_INSN_JCC;
	case X86_INS_JMP:
		return first_op_is_imm(insn) ? RC_INSN_JMP : RC_INSN_JMP_IND;
	case X86_INS_CALL:
		return first_op_is_imm(insn) ? RC_INSN_CALL : RC_INSN_CALL_IND;
	case X86_INS_RET:
		return RC_INSN_RET;
	case X86_INS_SYSCALL: case X86_INS_SYSENTER:
		return RC_INSN_SYSCALL;
	case X86_INS_INT: case X86_INS_INT1: case X86_INS_INT3:
	case X86_INS_INTO:
		return RC_INSN_INT;
	case X86_INS_LCALL: case X86_INS_LJMP: case X86_INS_RETF:
	case X86_INS_RETFQ: case X86_INS_IRET: case X86_INS_IRETD:
	case X86_INS_IRETQ:
		return RC_INSN_FAR;
	default:
		return RC_INSN_OTHER;
	}
}

int rc_insn_classify(csh cs, const uint8_t *bytes, size_t n, uint64_t ip,
		     struct rc_insn *out)
{
	cs_insn *insn = cs_malloc(cs);
	const uint8_t *code = bytes;
	uint64_t addr = ip;
	int ret = 0;

	if (!insn)
		return -ENOMEM;
	if (!cs_disasm_iter(cs, &code, &n, &addr, insn)) {
		ret = -EINVAL;
	} else {
		out->ip = ip;
		out->len = (uint8_t)insn->size;
		out->cls = class_of(insn);
		out->target = 0;
		if ((out->cls == RC_INSN_JCC || out->cls == RC_INSN_JMP ||
		     out->cls == RC_INSN_CALL) && first_op_is_imm(insn))
			out->target = (uint64_t)insn->detail->x86.operands[0].imm;
	}
	cs_free(insn, 1);
	return ret;
}
