/* ptflame tests: one query to libipt's query decoder and to ours
 * (decoder/ptquery.h), side by side, and whether they answered alike: the
 * status, the branch, the target, the event byte for byte, then the time
 * and both offsets. Shared by tests/unit/test_ptquery.c and the fuzz
 * target tests/fuzz/fuzz_ptquery.c. */
#ifndef PTFLAME_TESTS_PTQ_SIDE_H
#define PTFLAME_TESTS_PTQ_SIDE_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <intel-pt.h>

#include "decoder/ptquery.h"

/* One call's answers: libipt's (l) and ours (q). */
struct ptq_side {
	int op;                    /* 's'ync, 'c'ond, 'i'ndirect, 'e'vent */
	int sl, sq;                /* the statuses                        */
	struct pt_event el, eq;
	char why[160];             /* where they differ                   */
};

static inline const char *ptq_opname(int op)
{
	return op == 's' ? "sync" : op == 'c' ? "cond" : op == 'i' ? "indirect" : "event";
}

static inline int ptq_differ(struct ptq_side *x, const struct dc_qry *q, const char *what,
			     long a, long b)
{
	uint64_t off = 0;

	dc_qry_get_offset(q, &off);
	snprintf(x->why, sizeof(x->why), "%s after %s at offset %llu: libipt %ld, ours %ld", what,
		 ptq_opname(x->op), (unsigned long long)off, a, b);
	return -1;
}

/* Time and offsets after a call both answered. */
static inline int ptq_same_state(struct ptq_side *x, struct pt_query_decoder *l,
				 const struct dc_qry *q)
{
	uint64_t tl = 1, tq = 1, ol = 3, oq = 3;
	uint32_t ml = 5, mq = 5, cl = 7, cq = 7;
	int rl = pt_qry_time(l, &tl, &ml, &cl), rq = dc_qry_time(q, &tq, &mq, &cq);

	if (rl != rq)
		return ptq_differ(x, q, "time status", rl, rq);
	if (tl != tq || ml != mq || cl != cq)
		return ptq_differ(x, q, "time", (long)tl, (long)tq);
	rl = pt_qry_get_offset(l, &ol);
	rq = dc_qry_get_offset(q, &oq);
	if (rl != rq || ol != oq)
		return ptq_differ(x, q, "offset", (long)ol, (long)oq);
	ol = oq = 3;
	rl = pt_qry_get_sync_offset(l, &ol);
	rq = dc_qry_get_sync_offset(q, &oq);
	if (rl != rq || ol != oq)
		return ptq_differ(x, q, "sync offset", (long)ol, (long)oq);
	return 1;
}

/* Query op to both (ours first). 1: both answered alike; 0: ours bailed
 * (x->sl says what libipt answered); -1: they differ (x->why). */
static inline int ptq_call(struct ptq_side *x, struct pt_query_decoder *l, struct dc_qry *q,
			   int op)
{
	uint64_t il = 0x1111, iq = 0x1111;
	int tl = 9, tq = 9;

	x->op = op;
	memset(&x->el, 0xa5, sizeof(x->el));
	memset(&x->eq, 0xa5, sizeof(x->eq));
	switch (op) {
	case 's':
		x->sq = dc_qry_sync_forward(q, &iq);
		x->sl = pt_qry_sync_forward(l, &il);
		break;
	case 'c':
		x->sq = dc_qry_cond_branch(q, &tq);
		x->sl = pt_qry_cond_branch(l, &tl);
		break;
	case 'i':
		x->sq = dc_qry_indirect_branch(q, &iq);
		x->sl = pt_qry_indirect_branch(l, &il);
		break;
	default:
		x->sq = dc_qry_event(q, &x->eq);
		x->sl = pt_qry_event(l, &x->el, sizeof(x->el));
		break;
	}
	if (x->sq == DC_QRY_BAIL)
		return 0;
	if (x->sl != x->sq)
		return ptq_differ(x, q, "status", x->sl, x->sq);
	if (tl != tq)
		return ptq_differ(x, q, "taken", tl, tq);
	if (il != iq)
		return ptq_differ(x, q, "ip", (long)il, (long)iq);
	if (memcmp(&x->el, &x->eq, sizeof(x->el)))
		return ptq_differ(x, q, "event", x->el.type, x->eq.type);
	return ptq_same_state(x, l, q);
}

/* The query a decoder over the trace might make after status st and the
 * query last: mostly the right one, now and then another, a resync
 * anywhere now and then; r: a random number. */
static inline int ptq_next_op(int st, int last, uint64_t r)
{
	unsigned p = (unsigned)(r % 100);

	if (st < 0 && st != -pte_bad_query)
		return 's';
	if ((r >> 8) % 500 == 0 || (last == 's' && (r >> 20) % 4 == 0))
		return 's';
	if (st >= 0 && (st & pts_event_pending))
		return p < 85 ? 'e' : p < 95 ? 'c' : 'i';
	return p < 60 ? 'c' : p < 95 ? 'i' : 'e';
}

#endif
