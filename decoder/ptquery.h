/* ptflame decoder: a query decoder of our own, answering what libipt
 * 2.0.5's query decoder (pt_qry_*) answers, call for call, on the traces
 * user-space profiling makes.
 *
 * Under the walker (ptwalk.c) libipt's query decoder was the largest single
 * cost of a decode: a table of decoder functions per packet, its event
 * queue consulted at every packet, an out-of-line call per TNT bit. This
 * one keeps libipt's state and order of work (the fetched next packet, the
 * read-ahead over status packets, the TNT cache, the last IP, the three
 * event queues bound to PSBEND, TIP and FUP, the time at the last query)
 * but reads the packets with ptpkt.h's reader, answers a TNT bit inline,
 * and takes the time from pttime.c.
 *
 * It knows PAD, TNT-8/64, TIP, TIP.PGE, TIP.PGD, FUP, MODE, PIP, PSB,
 * PSBEND, OVF, TSC, TMA, MTC, CYC and CBR, and libipt's workarounds for
 * BDM70 and SKD007; one of these packets cut by the end of the trace is
 * the end (-pte_eos), as libipt reads it. Anything else (another packet, a
 * packet libipt would reject, a full event queue, an error other than
 * -pte_eos, -pte_bad_query and -pte_nosync, which it answers as libipt
 * does, the OVF errata SKD010, APL11, APL12) it does not answer:
 * DC_QRY_BAIL, and the caller decodes the window with libipt; after that
 * only dc_qry_init may be called. tests/unit/test_ptquery.c and the fuzz
 * target tests/fuzz/fuzz_ptquery.c hold it against libipt's query decoder
 * on random streams and on any bytes. */
#ifndef PTFLAME_DECODER_PTQUERY_H
#define PTFLAME_DECODER_PTQUERY_H

#include <intel-pt.h>
#include <stdbool.h>
#include <stdint.h>

#include "decoder/pttime.h"

enum { DC_QRY_BAIL = -1000 };     /* (not a libipt error code) */

/* libipt's event queue for one binding (pt_event_queue.c): a ring of 8
 * that keeps a gap, so the event dequeued last is not overwritten. */
enum { DC_QRY_EVQ = 8 };

struct dc_qry_evq {
	struct pt_event ev[DC_QRY_EVQ];
	uint8_t begin, end;
};

enum { DC_QEVB_PSBEND, DC_QEVB_TIP, DC_QEVB_FUP, DC_QEVB_MAX };

struct dc_qry {
	struct pt_config cfg;
	const uint8_t *pos, *sync;   /* NULL: not synchronized yet        */
	int next;                    /* the packet fetched at pos (ptquery.c) */
	/* the last IP */
	uint64_t ip;
	bool have_ip, ip_suppressed;
	/* the TNT cache: the bits, and the next one's mask (0: empty) */
	uint64_t tnt, tnt_index;
	struct dc_ptime time;
	/* pt_qry_time's answer: the time at the last TNT, TIP or event */
	int lt_ret;
	uint64_t lt_tsc;
	uint32_t lt_mtc, lt_cyc;
	struct dc_qry_evq evq[DC_QEVB_MAX];
	struct pt_event standalone;
	struct pt_event *event;      /* published by the last decode      */
	bool enabled, consume;
};

/* Over cfg's [begin, end) (cfg as for pt_qry_alloc_decoder); q must stay
 * where it is (its time points at its cfg). 0, or -pte_invalid for a
 * buffer that is none. */
int dc_qry_init(struct dc_qry *q, const struct pt_config *cfg);

int dc_qry_sync_forward(struct dc_qry *q, uint64_t *ip);
int dc_qry_cond_branch_slow(struct dc_qry *q, int *taken);
int dc_qry_indirect_branch(struct dc_qry *q, uint64_t *ip);
int dc_qry_event(struct dc_qry *q, struct pt_event *ev);
int dc_qry_get_offset(const struct dc_qry *q, uint64_t *off);
int dc_qry_get_sync_offset(const struct dc_qry *q, uint64_t *off);

/* pt_qry_status_flags: the status a query ends with. */
int dc_qry_status(const struct dc_qry *q);

/* pt_qry_cond_branch where the TNT cache holds a bit (q->tnt_index): no
 * packet is read, so the time stays the last query's; the status flags
 * are only ever set once the cache is empty. */
static inline int dc_qry_cond_branch_cached(struct dc_qry *q, int *taken)
{
	*taken = (q->tnt & q->tnt_index) != 0;
	q->tnt_index >>= 1;
	return q->tnt_index ? 0 : dc_qry_status(q);
}

/* pt_qry_cond_branch */
static inline int dc_qry_cond_branch(struct dc_qry *q, int *taken)
{
	if (q->tnt_index)
		return dc_qry_cond_branch_cached(q, taken);
	return dc_qry_cond_branch_slow(q, taken);
}

/* pt_qry_time (the outputs are set whatever it returns). */
static inline int dc_qry_time(const struct dc_qry *q, uint64_t *tsc, uint32_t *lost_mtc,
			      uint32_t *lost_cyc)
{
	*tsc = q->lt_tsc;
	*lost_mtc = q->lt_mtc;
	*lost_cyc = q->lt_cyc;
	return q->lt_ret;
}

#endif
