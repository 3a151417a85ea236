/* ptflame decoder: our query decoder (see ptquery.h). Each function names
 * the step of libipt 2.0.5's pt_query_decoder.c it stands for; the order
 * of the steps is libipt's, since the time at a query and the events'
 * times depend on which packets were read before it. Where libipt would
 * fail, or do what is not written here, it answers DC_QRY_BAIL. */
#include "decoder/ptquery.h"

#include <string.h>

#include "decoder/ptpkt.h"

#define BAIL DC_QRY_BAIL

/* The packet at pos, as libipt's pt_df_fetch classes it by its opcode. */
enum qf {
	QF_NONE,                   /* none fetched: the end, or not yet    */
	QF_PAD, QF_PSB, QF_TIP, QF_TNT8, QF_TNT64, QF_PGE, QF_PGD, QF_FUP,
	QF_OVF, QF_MODE, QF_PSBEND, QF_TSC, QF_CBR, QF_TMA, QF_MTC, QF_CYC,
	QF_PIP, QF_MAX
};

/* libipt's decoder-function flags (pdff_*) */
enum { F_TIP = 1, F_TNT = 2, F_EVENT = 4, F_PSBEND = 8, F_FUP = 16 };

static const uint8_t qf_flags[QF_MAX] = {
	[QF_TIP] = F_TIP, [QF_TNT8] = F_TNT, [QF_TNT64] = F_TNT,
	[QF_PGE] = F_EVENT, [QF_PGD] = F_EVENT, [QF_FUP] = F_FUP,
	[QF_OVF] = F_PSBEND | F_EVENT, [QF_MODE] = F_EVENT, [QF_PSBEND] = F_PSBEND,
	[QF_CBR] = F_EVENT, [QF_PIP] = F_EVENT,
};

/* ---- the pieces: fetch, last IP, event queues, time ---------------------- */

/* pt_df_fetch. A packet it would class as one not read here (VMCS,
 * MNT, STOP, EXSTOP, MWAIT, PWRE, PWRX, PTWRITE, unknown): BAIL. */
static int fetch(struct dc_qry *q)
{
	const uint8_t *p = q->pos, *end = q->cfg.end;
	uint8_t b;

	q->next = QF_NONE;
	if (p == end)
		return -pte_eos;
	b = p[0];
	switch (b) {
	case 0x00:
		q->next = QF_PAD;
		return 0;
	case 0x99:
		q->next = QF_MODE;
		return 0;
	case 0x19:
		q->next = QF_TSC;
		return 0;
	case 0x59:
		q->next = QF_MTC;
		return 0;
	case 0x02:
		if (p + 1 == end)
			return -pte_eos;
		switch (p[1]) {
		case 0x82: q->next = QF_PSB; return 0;
		case 0xf3: q->next = QF_OVF; return 0;
		case 0xa3: q->next = QF_TNT64; return 0;
		case 0x23: q->next = QF_PSBEND; return 0;
		case 0x03: q->next = QF_CBR; return 0;
		case 0x73: q->next = QF_TMA; return 0;
		case 0x43: q->next = QF_PIP; return 0;
		default: return BAIL;
		}
	default:
		break;
	}
	if (!(b & 1))
		q->next = QF_TNT8;
	else if ((b & 3) == 3)
		q->next = QF_CYC;
	else if ((b & 0x1f) == 0x0d)
		q->next = QF_TIP;
	else if ((b & 0x1f) == 0x1d)
		q->next = QF_FUP;
	else if ((b & 0x1f) == 0x11)
		q->next = QF_PGE;
	else if ((b & 0x1f) == 0x01)
		q->next = QF_PGD;
	else
		return BAIL;
	return 0;
}

/* The packet at pos read as libipt reads it: its size; -pte_eos where the
 * end cuts it; else BAIL. */
static int read_pkt(const struct dc_qry *q, struct dc_pkt *k)
{
	int n = dc_pkt_fast(q->pos, (size_t)(q->cfg.end - q->pos), k);

	if (n > 0)
		return n;
	return n == DC_PKT_CUT ? -pte_eos : BAIL;
}

/* An IP packet at pos: its size, the last IP updated (pt_qry_decode_ip,
 * pt_last_ip_update_ip); pos not moved. */
static int decode_ip(struct dc_qry *q)
{
	/* (read here as dc_pkt_fast reads an IP packet: its size by its
	 * compression, none for a reserved one) */
	static const uint8_t ip_size[8] = { 1, 3, 5, 7, 7, 0, 9, 0 };
	const uint8_t *p = q->pos;
	unsigned ipc = p[0] >> 5;
	int n = ip_size[ipc];
	uint64_t v;

	if (!n)
		return BAIL;
	if (q->cfg.end - p < n)
		return -pte_eos;
	switch (ipc) {
	case pt_ipc_suppressed:
		q->ip_suppressed = true;
		return n;
	case pt_ipc_update_16:
		v = dc_pkt_le(p + 1, 2);
		q->ip = (q->ip & ~UINT64_C(0xffff)) | v;
		break;
	case pt_ipc_update_32:
		v = dc_pkt_le(p + 1, 4);
		q->ip = (q->ip & ~UINT64_C(0xffffffff)) | v;
		break;
	case pt_ipc_sext_48:
		v = dc_pkt_le(p + 1, 6);
		q->ip = v & (UINT64_C(1) << 47) ? v | ~UINT64_C(0xffffffffffff) : v;
		break;
	case pt_ipc_update_48:
		v = dc_pkt_le(p + 1, 6);
		q->ip = (q->ip & ~UINT64_C(0xffffffffffff)) | v;
		break;
	default:                   /* pt_ipc_full */
		q->ip = dc_pkt_le(p + 1, 8);
		break;
	}
	q->have_ip = true;
	q->ip_suppressed = false;
	return n;
}

/* pt_last_ip_query */
static int last_ip(const struct dc_qry *q, uint64_t *ip)
{
	if (!q->have_ip || q->ip_suppressed) {
		if (ip)
			*ip = 0;
		return q->have_ip ? -pte_ip_suppressed : -pte_noip;
	}
	if (ip)
		*ip = q->ip;
	return 0;
}

/* pt_qry_event_ip */
static void event_ip(const struct dc_qry *q, uint64_t *ip, struct pt_event *ev)
{
	if (last_ip(q, ip) < 0)
		ev->ip_suppressed = 1;
}

/* pt_qry_event_time: the time now (not the query's) */
static void event_time(const struct dc_qry *q, struct pt_event *ev)
{
	if (!dc_ptime_query(&q->time, &ev->tsc, &ev->lost_mtc, &ev->lost_cyc))
		ev->has_tsc = 1;
}

static uint8_t evq_inc(uint8_t i)
{
	return (uint8_t)((i + 1) % DC_QRY_EVQ);
}

/* pt_evq_enqueue: NULL when full */
static struct pt_event *enqueue(struct dc_qry *q, int evb)
{
	struct dc_qry_evq *e = &q->evq[evb];
	uint8_t idx = e->end, end = evq_inc(idx);

	if (e->begin == evq_inc(end))
		return NULL;
	e->end = end;
	memset(&e->ev[idx], 0, sizeof(e->ev[idx]));
	return &e->ev[idx];
}

static struct pt_event *dequeue(struct dc_qry *q, int evb)
{
	struct dc_qry_evq *e = &q->evq[evb];
	uint8_t b = e->begin;

	if (b == e->end)
		return NULL;
	e->begin = evq_inc(b);
	return &e->ev[b];
}

/* pt_evq_find */
static bool queued(const struct dc_qry *q, int evb, enum pt_event_type type)
{
	const struct dc_qry_evq *e = &q->evq[evb];

	for (uint8_t i = e->begin; i != e->end; i = evq_inc(i))
		if (e->ev[i].type == type)
			return true;
	return false;
}

static bool pending(const struct dc_qry *q, int evb)
{
	return q->evq[evb].begin != q->evq[evb].end;
}

static struct pt_event *standalone(struct dc_qry *q)
{
	memset(&q->standalone, 0, sizeof(q->standalone));
	return &q->standalone;
}

/* The time a query reports from now on: the time now (libipt copies its
 * whole time; pt_qry_time reads these of it). */
static void keep_time(struct dc_qry *q)
{
	q->lt_ret = dc_ptime_query(&q->time, &q->lt_tsc, &q->lt_mtc, &q->lt_cyc);
}

/* A time error: libipt fails the query with it. */
static int time_err(int err)
{
	return err ? BAIL : 0;
}

/* pt_qry_reset, but for the time (an OVF keeps it) */
static void reset_but_time(struct dc_qry *q)
{
	q->enabled = q->consume = false;
	q->event = NULL;
	q->ip = 0;
	q->have_ip = q->ip_suppressed = false;
	q->tnt = q->tnt_index = 0;
	q->lt_ret = -pte_no_time;
	q->lt_tsc = 0;
	q->lt_mtc = q->lt_cyc = 0;
	for (int i = 0; i < DC_QEVB_MAX; i++)
		q->evq[i].begin = q->evq[i].end = 0;
}

int dc_qry_init(struct dc_qry *q, const struct pt_config *cfg)
{
	memset(q, 0, sizeof(*q));
	if (!cfg->begin || cfg->end < cfg->begin)
		return -pte_invalid;   /* (libipt allocates no decoder) */
	q->cfg = *cfg;
	dc_ptime_init(&q->time, &q->cfg);
	reset_but_time(q);
	return 0;
}

/* pt_qry_will_event */
static bool will_event(const struct dc_qry *q)
{
	uint8_t f = qf_flags[q->next];

	if (!(f & ~F_TNT))         /* (a TNT or a status packet next: no) */
		return false;
	if (f & F_EVENT)
		return true;
	if (f & F_PSBEND)
		return pending(q, DC_QEVB_PSBEND);
	if (f & F_TIP)
		return pending(q, DC_QEVB_TIP);
	if (f & F_FUP)
		return pending(q, DC_QEVB_FUP);
	return false;
}

/* pt_qry_will_eos: nothing fetched, and a fetch would find the end */
static bool will_eos(const struct dc_qry *q)
{
	const uint8_t *p = q->pos, *end = q->cfg.end;

	return q->next == QF_NONE && (p == end || (p[0] == 0x02 && p + 1 == end));
}

/* pt_qry_status_flags (inline: after every query but a cached bit, and
 * nearly always 0 at once) */
static inline __attribute__((always_inline)) int status_flags(const struct dc_qry *q)
{
	int flags = 0;

	if (!q->tnt_index && q->next != QF_TNT8) {
		if (will_event(q))
			flags |= pts_event_pending;
		if (will_eos(q))
			flags |= pts_eos;
	}
	return flags;
}

int dc_qry_status(const struct dc_qry *q)
{
	return status_flags(q);
}

/* pt_qry_provoke_fetch_error: nothing was fetched; fetch again (never
 * synchronized: libipt's fetch fails on the missing position) */
static int provoke_fetch_error(struct dc_qry *q)
{
	int err;

	if (!q->pos)
		return -pte_nosync;
	err = fetch(q);
	return err == -pte_eos ? err : BAIL;
}

/* ---- the packets (pt_qry_decode_*, pt_qry_header_*) ---------------------- */

static int decode(struct dc_qry *q, int kind);

static int decode_tnt(struct dc_qry *q)
{
	struct dc_pkt k;
	int n = read_pkt(q, &k);

	if (n < 0)
		return n;
	if (q->tnt_index)          /* (-pte_bad_context) */
		return BAIL;
	q->tnt = k.val;
	q->tnt_index = UINT64_C(1) << (k.tnt_bits - 1);
	q->pos += n;
	return 0;
}

static int decode_tip(struct dc_qry *q)
{
	struct pt_event *ev;
	int n = decode_ip(q);

	if (n < 0)
		return n;
	if ((ev = dequeue(q, DC_QEVB_TIP))) {
		switch (ev->type) {
		case ptev_async_branch:
			q->consume = true;
			event_ip(q, &ev->variant.async_branch.to, ev);
			break;
		case ptev_async_paging:
			event_ip(q, &ev->variant.async_paging.ip, ev);
			break;
		case ptev_exec_mode:
			event_ip(q, &ev->variant.exec_mode.ip, ev);
			break;
		default:
			return BAIL;
		}
		q->event = ev;
		if (pending(q, DC_QEVB_TIP) || !q->consume)
			return 0;
		q->consume = false;
	}
	q->pos += n;
	return 0;
}

static int decode_tip_pge(struct dc_qry *q)
{
	struct pt_event *ev;
	int n = decode_ip(q);

	if (n < 0)
		return n;
	/* the enable event first; the events bound to the TIP after it */
	if (!q->consume) {
		ev = standalone(q);
		ev->type = ptev_enabled;
		if (last_ip(q, &ev->variant.enabled.ip) < 0)
			return BAIL;       /* (-pte_bad_packet) */
		event_time(q, ev);
		q->tnt = q->tnt_index = 0;
		q->consume = q->enabled = true;
	} else {
		if (!(ev = dequeue(q, DC_QEVB_TIP)))
			return BAIL;       /* (-pte_internal) */
		if (ev->type != ptev_exec_mode)
			return BAIL;
		event_ip(q, &ev->variant.exec_mode.ip, ev);
	}
	q->event = ev;
	if (pending(q, DC_QEVB_TIP))
		return 0;
	q->consume = false;
	q->pos += n;
	return 0;
}

static int decode_tip_pgd(struct dc_qry *q)
{
	struct pt_event *ev;
	int n = decode_ip(q);

	if (n < 0)
		return n;
	if ((ev = dequeue(q, DC_QEVB_TIP))) {
		switch (ev->type) {
		case ptev_async_branch: {
			uint64_t at = ev->variant.async_branch.from;

			ev->type = ptev_async_disabled;
			ev->variant.async_disabled.at = at;
			event_ip(q, &ev->variant.async_disabled.ip, ev);
			break;
		}
		case ptev_async_paging:
		case ptev_exec_mode:
			ev->ip_suppressed = 1;
			break;
		default:
			return BAIL;
		}
	} else {
		ev = standalone(q);
		ev->type = ptev_disabled;
		event_ip(q, &ev->variant.disabled.ip, ev);
		event_time(q, ev);
	}
	q->event = ev;
	if (pending(q, DC_QEVB_TIP))
		return 0;
	q->enabled = false;
	q->pos += n;
	return 0;
}

static int decode_fup(struct dc_qry *q)
{
	struct pt_event *ev;
	int n = decode_ip(q);

	if (n < 0)
		return n;
	if ((ev = dequeue(q, DC_QEVB_FUP))) {
		switch (ev->type) {
		case ptev_overflow:
			q->consume = true;
			if (last_ip(q, &ev->variant.overflow.ip) < 0)
				return BAIL;
			break;
		case ptev_tsx:
			if (!ev->variant.tsx.aborted)
				q->consume = true;
			event_ip(q, &ev->variant.tsx.ip, ev);
			break;
		default:
			return BAIL;
		}
		q->event = ev;
		if (pending(q, DC_QEVB_FUP) || !q->consume)
			return 0;
		q->consume = false;
	} else {
		/* an asynchronous branch from here; its TIP says where to */
		uint64_t ip;

		if (last_ip(q, &ip) < 0 || !(ev = enqueue(q, DC_QEVB_TIP)))
			return BAIL;
		ev->type = ptev_async_branch;
		ev->variant.async_branch.from = ip;
		event_time(q, ev);
	}
	q->pos += n;
	return 0;
}

/* check_erratum_bdm70: is the packet after a FUP in PSB+, past the
 * packets libipt skips, a TIP.PGE? (Then the FUP is not read.) */
static int bdm70(const struct dc_qry *q, const uint8_t *p)
{
	const uint8_t *end = q->cfg.end;

	for (;;) {
		struct dc_pkt k;
		int n;

		if (p == end)
			return 0;
		/* (cut by the end: no erratum) */
		if ((n = dc_pkt_fast(p, (size_t)(end - p), &k)) <= 0)
			return n == DC_PKT_CUT ? 0 : BAIL;
		p += k.size;
		switch (k.type) {
		case ppt_tip_pge:
			return 1;
		case ppt_pip:
		case ppt_pad:
		case ppt_tsc:
		case ppt_cbr:
		case ppt_psbend:
		case ppt_mode:
		case ppt_tma:
		case ppt_mtc:
		case ppt_cyc:
			continue;
		default:
			return 0;
		}
	}
}

static int header_fup(struct dc_qry *q)
{
	struct dc_pkt k;
	int n = read_pkt(q, &k), st;

	if (n < 0)
		return n;
	if (q->cfg.errata.bdm70 && !q->enabled) {
		if ((st = bdm70(q, q->pos + n)) < 0)
			return st;
		if (st) {
			q->pos += n;
			return 0;
		}
	}
	if ((n = decode_ip(q)) < 0)
		return n;
	if (k.val != pt_ipc_suppressed)
		q->enabled = true;
	q->pos += n;
	return 0;
}

static int decode_mode(struct dc_qry *q, bool header)
{
	struct dc_pkt k;
	struct pt_event *ev;
	int n = read_pkt(q, &k);
	uint8_t bits;

	if (n < 0)
		return n;
	bits = q->pos[1];
	if (header)                /* (reported at PSBEND) */
		ev = enqueue(q, DC_QEVB_PSBEND);
	else if (k.val == pt_mol_exec)
		ev = enqueue(q, DC_QEVB_TIP);
	else if (!q->enabled) {
		ev = standalone(q);       /* (its ip 0) */
		ev->ip_suppressed = 1;
		q->event = ev;
	} else
		ev = enqueue(q, DC_QEVB_FUP);
	if (!ev)
		return BAIL;
	if (k.val == pt_mol_exec) {
		bool csl = bits & 1, csd = bits & 2;

		ev->type = ptev_exec_mode;
		ev->variant.exec_mode.mode = csl ? (csd ? ptem_unknown : ptem_64bit) :
					     (csd ? ptem_32bit : ptem_16bit);
	} else {
		ev->type = ptev_tsx;
		ev->variant.tsx.speculative = bits & 1;
		ev->variant.tsx.aborted = (bits >> 1) & 1;
	}
	if (!header)
		event_time(q, ev);
	q->pos += n;
	return 0;
}

/* pt_qry_process_pending_psb_events: 1 when one was published */
static int psb_event(struct dc_qry *q)
{
	struct pt_event *ev = dequeue(q, DC_QEVB_PSBEND);

	if (!ev)
		return 0;
	ev->status_update = 1;
	event_time(q, ev);
	switch (ev->type) {
	case ptev_exec_mode:
		event_ip(q, &ev->variant.exec_mode.ip, ev);
		break;
	case ptev_tsx:
		event_ip(q, &ev->variant.tsx.ip, ev);
		break;
	case ptev_async_paging:
		event_ip(q, &ev->variant.async_paging.ip, ev);
		break;
	case ptev_cbr:
		break;
	default:
		return BAIL;
	}
	q->event = ev;
	return 1;
}

static int decode_psbend(struct dc_qry *q)
{
	int st = psb_event(q);

	if (st)
		return st < 0 ? st : 0;
	q->pos += 2;
	return 0;
}

static int decode_timing(struct dc_qry *q, int kind, bool header)
{
	struct dc_pkt k;
	struct pt_event *ev;
	int n = read_pkt(q, &k), err;

	if (n < 0)
		return n;
	switch (kind) {
	case QF_TSC:
		err = dc_ptime_tsc(&q->time, k.val, header);
		break;
	case QF_TMA: {
		const uint8_t *p = q->pos;

		err = dc_ptime_tma(&q->time, (uint16_t)(p[2] | p[3] << 8),
				   (uint16_t)(p[5] | (p[6] & 1) << 8));
		break;
	}
	case QF_MTC:
		err = dc_ptime_mtc(&q->time, (uint8_t)k.val);
		break;
	case QF_CYC:
		/* erratum SKD007: a 2-byte CYC that is the start of an OVF */
		if (q->cfg.errata.skd007 && n == 2 && (k.val & ~UINT64_C(0x1f)) == 0x20 &&
		    q->pos + 2 < q->cfg.end && q->pos[2] == 0xf3) {
			q->pos += 1;
			return 0;
		}
		err = dc_ptime_cyc(&q->time, k.val);
		break;
	default:                   /* QF_CBR */
		if ((err = dc_ptime_cbr(&q->time, (uint8_t)k.val, header)))
			break;
		ev = header ? enqueue(q, DC_QEVB_PSBEND) : standalone(q);
		if (!ev)
			return BAIL;
		ev->type = ptev_cbr;
		ev->variant.cbr.ratio = (uint16_t)k.val;
		if (!header) {
			q->event = ev;
			event_time(q, ev);
		}
		break;
	}
	if (err)
		return time_err(err);
	q->pos += n;
	return 0;
}

/* A PIP: a standalone paging event, or in PSB+ or with an asynchronous
 * branch in flight one bound to the PSBEND or to that branch's TIP. */
static int decode_pip(struct dc_qry *q, bool header)
{
	const uint8_t *p = q->pos;
	struct pt_event *ev;
	struct dc_pkt k;
	uint64_t v;
	int n = read_pkt(q, &k);

	if (n < 0)
		return n;
	v = dc_pkt_le(p + 2, 6);
	if (header || queued(q, DC_QEVB_TIP, ptev_async_branch)) {
		if (!(ev = enqueue(q, header ? DC_QEVB_PSBEND : DC_QEVB_TIP)))
			return BAIL;
		ev->type = ptev_async_paging;
		ev->variant.async_paging.cr3 = v >> 1 << 5;
		ev->variant.async_paging.non_root = v & 1;
	} else {
		ev = standalone(q);
		ev->type = ptev_paging;
		ev->variant.paging.cr3 = v >> 1 << 5;
		ev->variant.paging.non_root = v & 1;
		q->event = ev;
	}
	if (!header)
		event_time(q, ev);
	q->pos += n;
	return 0;
}

/* pt_qry_read_psb_header: up to PSBEND (or an OVF in its place) */
static int psb_header(struct dc_qry *q)
{
	q->ip = 0;
	q->have_ip = q->ip_suppressed = false;
	for (;;) {
		int err = fetch(q), kind = q->next;

		if (err)
			return err == -pte_eos ? err : BAIL;
		if (qf_flags[kind] & F_PSBEND)
			return 0;
		switch (kind) {
		case QF_PAD:
			q->pos += 1;
			break;
		case QF_FUP:
			err = header_fup(q);
			break;
		case QF_MODE:
			err = decode_mode(q, true);
			break;
		case QF_TSC:
		case QF_CBR:
		case QF_TMA:
		case QF_MTC:
		case QF_CYC:
			err = decode_timing(q, kind, true);
			break;
		case QF_PIP:
			err = decode_pip(q, true);
			break;
		default:           /* (-pte_bad_context) */
			return BAIL;
		}
		if (err)
			return err == -pte_eos ? err : BAIL;
	}
}

static int decode_psb(struct dc_qry *q)
{
	const uint8_t *psb = q->pos;
	struct dc_pkt k;
	int n = read_pkt(q, &k), err;

	if (n < 0)
		return n;
	if (time_err(dc_ptime_psb(&q->time)))
		return BAIL;
	q->pos += n;
	if ((err = psb_header(q)) == -pte_eos) {
		/* a PSB+ the trace ends in: back to its PSB, its events gone */
		q->pos = psb;
		q->evq[DC_QEVB_PSBEND].begin = q->evq[DC_QEVB_PSBEND].end = 0;
		q->next = QF_PSB;
	}
	return err;
}

/* pt_pkt_find_ovf_fup from pos: the offset after the FUP an OVF binds to;
 * 0: tracing resumed disabled; -pte_eos, -pte_bad_context; BAIL. */
static int find_ovf_fup(const struct dc_qry *q)
{
	const uint8_t *p = q->pos, *end = q->cfg.end;

	for (;;) {
		struct dc_pkt k;
		int n;

		if (p == end)
			return -pte_eos;
		if ((n = dc_pkt_fast(p, (size_t)(end - p), &k)) <= 0)
			return n == DC_PKT_CUT ? -pte_eos : BAIL;
		p += k.size;
		switch (k.type) {
		case ppt_fup:
			return (int)(p - q->pos);
		case ppt_pad:
		case ppt_cbr:
		case ppt_tsc:
		case ppt_tma:
		case ppt_mtc:
		case ppt_cyc:
			continue;
		case ppt_psb:
		case ppt_tip_pge:
		case ppt_mode:
		case ppt_ovf:
		case ppt_pip:
			return 0;
		default:           /* PSBEND, TIP, TIP.PGD, TNT */
			return -pte_bad_context;
		}
	}
}

static int decode_ovf(struct dc_qry *q)
{
	struct pt_event *ev;
	int st = psb_event(q);

	if (st)
		return st < 0 ? st : 0;
	reset_but_time(q);
	dc_ptime_reset_cal(&q->time);
	q->pos += 2;
	st = find_ovf_fup(q);
	if (st == BAIL)
		return BAIL;
	if (st > 0) {
		/* resolved with tracing on: binds to that FUP */
		if (q->cfg.errata.apl12 || !(ev = enqueue(q, DC_QEVB_FUP)))
			return BAIL;
		ev->type = ptev_overflow;
		q->enabled = true;
		event_time(q, ev);
		return 0;
	}
	/* (libipt's errata fixes for this case are not ours) */
	if (q->cfg.errata.skd010 || (q->cfg.errata.apl11 && st == -pte_bad_context) ||
	    (st < 0 && st != -pte_eos))
		return BAIL;
	ev = standalone(q);
	ev->type = ptev_overflow;
	ev->ip_suppressed = 1;
	q->enabled = false;
	q->event = ev;
	event_time(q, ev);
	return 0;
}

static int decode(struct dc_qry *q, int kind)
{
	switch (kind) {
	case QF_PAD:
		q->pos += 1;
		return 0;
	case QF_PSB:
		return decode_psb(q);
	case QF_TIP:
		return decode_tip(q);
	case QF_TNT8:
	case QF_TNT64:
		return decode_tnt(q);
	case QF_PGE:
		return decode_tip_pge(q);
	case QF_PGD:
		return decode_tip_pgd(q);
	case QF_FUP:
		return decode_fup(q);
	case QF_OVF:
		return decode_ovf(q);
	case QF_MODE:
		return decode_mode(q, false);
	case QF_PSBEND:
		return decode_psbend(q);
	case QF_TSC:
	case QF_CBR:
	case QF_TMA:
	case QF_MTC:
	case QF_CYC:
		return decode_timing(q, kind, false);
	case QF_PIP:
		return decode_pip(q, false);
	default:
		return BAIL;
	}
}

/* read_ahead's own reading of a packet by its first byte (as fetch and
 * decode read it where the packet is whole): a CYC of 1 byte or more, an
 * MTC, a TNT-8, a TIP; anything else it leaves to fetch and decode. */
enum { RA_OTHER, RA_CYC1, RA_CYCN, RA_MTC, RA_TNT8, RA_TIP };
#define RA(b) ((b) % 8 == 3 ? RA_CYC1 : (b) % 8 == 7 ? RA_CYCN : (b) == 0x59 ? RA_MTC : \
	       (b) % 2 == 0 && (b) > 2 ? RA_TNT8 : (b) % 32 == 0x0d ? RA_TIP : RA_OTHER)
#define RA4(b) RA(b), RA((b) + 1), RA((b) + 2), RA((b) + 3)
#define RA16(b) RA4(b), RA4((b) + 4), RA4((b) + 8), RA4((b) + 12)
#define RA64(b) RA16(b), RA16((b) + 16), RA16((b) + 32), RA16((b) + 48)
static const uint8_t ra_class[256] = { RA64(0), RA64(64), RA64(128), RA64(192) };
#undef RA64
#undef RA16
#undef RA4
#undef RA

/* read_ahead's step for any other packet: 1 it was read, 0 read_ahead
 * ends there, or an error. (Out of line: read_ahead's own steps then need
 * few registers.) */
static __attribute__((noinline)) int read_other(struct dc_qry *q)
{
	int err;

	if ((err = fetch(q)))
		return err;
	if (qf_flags[q->next] & (F_TIP | F_TNT) || will_event(q))
		return 0;
	if ((err = decode(q, q->next))) {
		/* (a status packet cut by the end, or a PSB+ the end
		 * cuts: libipt goes to the end) */
		if (err == -pte_eos) {
			q->pos = q->cfg.end;
			q->next = QF_NONE;
		}
		return err;
	}
	return 1;
}

/* pt_qry_read_ahead: status packets, up to a TNT, a TIP or an event */
static int read_ahead(struct dc_qry *q)
{
	const uint8_t *end = q->cfg.end;

	for (;;) {
		const uint8_t *p = q->pos;
		int err;

		/* (the packets between branches nearly always, CYCs and
		 * MTCs, as decode would take them, without its three
		 * switches; and the TNT-8 or TIP where it nearly always
		 * ends, as fetch classes them) */
		switch (p < end ? ra_class[*p] : RA_OTHER) {
		case RA_CYC1:
			if (dc_ptime_cyc(&q->time, *p >> 3))
				return BAIL;
			q->pos = p + 1;
			continue;
		case RA_CYCN:
			/* (2 bytes; not one that erratum SKD007 takes for
			 * the start of an OVF: decode_timing) */
			if (end - p < 2 || (p[1] & 1) ||
			    (p[1] == 0x02 && q->cfg.errata.skd007 && end - p > 2 && p[2] == 0xf3))
				break;
			if (dc_ptime_cyc(&q->time, (uint64_t)(*p >> 3) | (uint64_t)(p[1] >> 1) << 5))
				return BAIL;
			q->pos = p + 2;
			continue;
		case RA_MTC:
			if (end - p < 2)
				break;
			if (dc_ptime_mtc(&q->time, p[1]))
				return BAIL;
			q->pos = p + 2;
			continue;
		case RA_TNT8:
			q->next = QF_TNT8;
			return 0;
		case RA_TIP:
			q->next = QF_TIP;
			return 0;
		default:
			break;
		}
		if ((err = read_other(q)) <= 0)
			return err;
	}
}

/* After the query's packet: the time at it, then on to the next. */
static int query_done(struct dc_qry *q)
{
	int err;

	keep_time(q);
	err = read_ahead(q);
	return err < 0 && err != -pte_eos ? err : 0;
}

/* ---- the queries ----------------------------------------------------------- */

/* pt_sync_forward's search for a PSB: 8-byte words of its pattern at
 * aligned addresses, then back to its start (pt_find_psb). The same
 * alignment as libipt: it is of the buffer's address. */
static const uint8_t *find_psb(const struct dc_qry *q, const uint8_t *pos)
{
	const uint8_t *begin = q->cfg.begin, *end = q->cfg.end;
	struct dc_pkt k;

	if (pos == end)
		return NULL;       /* (libipt reads the byte after the end) */
	if (*pos != 0x02)
		pos++;
	for (; pos + 1 < end; pos += 2)
		if (pos[0] != 0x02 || pos[1] != 0x82)
			break;
	if (pos - begin < 16)
		return NULL;
	pos -= 16;
	if (pos[0] != 0x02 || pos[1] != 0x82)
		return NULL;
	if (dc_pkt_fast(pos, (size_t)(end - pos), &k) <= 0 || k.type != ppt_psb)
		return NULL;
	return pos;
}

static int sync_search(const struct dc_qry *q, const uint8_t *start, const uint8_t **sync)
{
	const uint8_t *end = q->cfg.end;
	const uint8_t *pos = (const uint8_t *)(((uintptr_t)start + 7) & ~(uintptr_t)7);

	for (;;) {
		const uint8_t *cur = pos;
		uint64_t v;

		pos += 8;
		if (end < pos)
			return -pte_eos;
		memcpy(&v, cur, 8);
		if (v != UINT64_C(0x8202820282028202) && v != UINT64_C(0x0282028202820282))
			continue;
		if (!(cur = find_psb(q, pos)) || cur < start)
			continue;
		*sync = cur;
		return 0;
	}
}

/* pt_qry_start, at the PSB at pos */
static int start(struct dc_qry *q, const uint8_t *pos, uint64_t *ip)
{
	int err, st;

	dc_ptime_init(&q->time, &q->cfg);
	reset_but_time(q);
	q->sync = q->pos = pos;
	if (fetch(q) || q->next != QF_PSB)
		return BAIL;
	if ((err = decode_psb(q)))
		return err;
	if (ip && !last_ip(q, ip))
		ip = NULL;         /* (an IP in the PSB+: a later one may not) */
	if ((err = read_ahead(q)) < 0)
		return err;
	st = status_flags(q);
	if (last_ip(q, ip) < 0 && ip)
		st |= pts_ip_suppressed;
	return st;
}

int dc_qry_sync_forward(struct dc_qry *q, uint64_t *ip)
{
	const uint8_t *begin = q->cfg.begin, *pos = q->pos ? q->pos : begin, *sync;
	int err;

	if (pos == q->sync)
		pos += 16;
	if (pos > q->cfg.end)
		return BAIL;
	/* (a little before: a PSB the last packet ran into) */
	pos -= pos - begin < 16 ? pos - begin : 15;
	if ((err = sync_search(q, pos, &sync)))
		return err;
	return start(q, sync, ip);
}

/* pt_qry_cache_tnt */
static int cache_tnt(struct dc_qry *q)
{
	if (q->next == QF_TNT8) {
		/* (the common case, as the loop below takes it: no event
		 * binds to a TNT, and the cache is empty) */
		unsigned v = *q->pos >> 1, n = 31 - (unsigned)__builtin_clz(v);

		q->tnt = v & ~(1u << n);
		q->tnt_index = UINT64_C(1) << (n - 1);
		q->pos++;
		return query_done(q);
	}
	if (q->next == QF_TNT64 && q->cfg.end - q->pos >= 8) {
		/* (the same for a TNT-64 that has a bit before its stop bit,
		 * as decode_tnt reads it) */
		unsigned n = dc_pkt_tnt64(q->pos, &q->tnt);

		if (n) {
			q->tnt_index = UINT64_C(1) << (n - 1);
			q->pos += 8;
			return query_done(q);
		}
	}
	for (;;) {
		int kind = q->next, err;

		if (kind == QF_NONE)
			return provoke_fetch_error(q);
		if (will_event(q) || qf_flags[kind] & F_TIP)
			return -pte_bad_query;
		q->event = NULL;
		if ((err = decode(q, kind)))
			return err;
		if (q->event)      /* (-pte_event_ignored) */
			return BAIL;
		if (qf_flags[kind] & F_TNT)
			break;
		if ((err = read_ahead(q)))
			return err;
	}
	return query_done(q);
}

int dc_qry_cond_branch_slow(struct dc_qry *q, int *taken)
{
	int err;

	if (!q->tnt_index && (err = cache_tnt(q)) < 0)
		return err;
	*taken = (q->tnt & q->tnt_index) != 0;
	q->tnt_index >>= 1;
	return status_flags(q);
}

int dc_qry_indirect_branch(struct dc_qry *q, uint64_t *ip)
{
	int flags = 0, err;

	if (q->next == QF_TIP && !pending(q, DC_QEVB_TIP)) {
		/* (the common case, as the loop below takes it: a TIP next,
		 * no event bound to it) */
		int n = decode_ip(q);

		if (n < 0)
			return n;
		q->pos += n;
		if (last_ip(q, &(uint64_t){ 0 }) < 0)
			flags |= pts_ip_suppressed;
		else
			*ip = q->ip;
		if ((err = query_done(q)))
			return err;
		return flags | status_flags(q);
	}
	for (;;) {
		int kind = q->next;

		if (kind == QF_NONE)
			return provoke_fetch_error(q);
		if (will_event(q))
			return -pte_bad_query;
		if (qf_flags[kind] & F_TNT && q->tnt_index)
			return -pte_bad_query;
		q->event = NULL;
		if ((err = decode(q, kind)))
			return err;
		if (q->event)
			return BAIL;
		if (qf_flags[kind] & F_TIP) {
			uint64_t to;

			/* (libipt leaves *ip as it was when it has none) */
			if (last_ip(q, &to) < 0)
				flags |= pts_ip_suppressed;
			else
				*ip = to;
			break;
		}
		if ((err = read_ahead(q)))
			return err;
	}
	if ((err = query_done(q)))
		return err;
	return flags | status_flags(q);
}

int dc_qry_event(struct dc_qry *q, struct pt_event *ev)
{
	int err;

	if (q->tnt_index)
		return -pte_bad_query;
	for (;;) {
		int kind = q->next;

		if (kind == QF_NONE)
			return provoke_fetch_error(q);
		if (qf_flags[kind] & (F_TIP | F_TNT) && !will_event(q))
			return -pte_bad_query;
		q->event = NULL;
		if ((err = decode(q, kind)))
			return err;
		if (q->event) {
			*ev = *q->event;
			break;
		}
		if ((err = read_ahead(q)))
			return err;
	}
	if ((err = query_done(q)))
		return err;
	return status_flags(q);
}

int dc_qry_get_offset(const struct dc_qry *q, uint64_t *off)
{
	if (!q->pos)
		return -pte_nosync;
	*off = (uint64_t)(q->pos - q->cfg.begin);
	return 0;
}

int dc_qry_get_sync_offset(const struct dc_qry *q, uint64_t *off)
{
	if (!q->sync)
		return -pte_nosync;
	*off = (uint64_t)(q->sync - q->cfg.begin);
	return 0;
}
