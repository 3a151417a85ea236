/* ptflame - record/: drain perf buffers into the perf.data writer (see
 * pt_internal.h). The kernel writes data_head/aux_head and reads
 * data_tail/aux_tail: heads are loaded with acquire order (the bytes they
 * cover are visible before we read them), tails stored with release order
 * (our reads are done before the kernel may overwrite the space). */
#include <errno.h>
#include <string.h>
#include <linux/perf_event.h>

#include "record/record.h"
#include "record/pt_internal.h"

int rc_pt_drain_data(struct rc_pt_ring *rg, struct rc_pt_sink *sk)
{
	uint64_t head = __atomic_load_n(&rg->pc->data_head, __ATOMIC_ACQUIRE);
	const struct perf_event_header *rec;
	int n, rc = 0;

	while ((n = rc_ring_next(rg->data, rg->data_size, head, &rg->data_tail, sk->scratch,
				 65536, &rec)) == 1) {
		switch (rc_ring_account(rec, &sk->rs)) {
		case 1: rg->saw_truncated = true; break;
		case 2: rg->saw_lost = true; break;
		}
		if ((rc = rc_perf_write(sk->w, rec)))
			break;
	}
	__atomic_store_n(&rg->pc->data_tail, rg->data_tail, __ATOMIC_RELEASE);
	return rc ? rc : n < 0 ? n : 0;
}

/* Gather a plan's segments and write them as one AUXTRACE record. */
static int write_plan(struct rc_pt_ring *rg, struct rc_pt_sink *sk, const struct rc_aux_plan *p)
{
	uint64_t got = 0;
	int rc;

	if (!p->total)
		return 0;
	for (int s = 0; s < p->nseg; s++) {
		memcpy(sk->copybuf + got, rg->aux + p->seg[s].off, p->seg[s].len);
		got += p->seg[s].len;
	}
	rc = rc_perf_auxtrace(sk->w, sk->copybuf, p->total, p->stream, sk->reference(),
			      rg->idx, rg->tid, rg->cpu);
	if (rc)
		return rc;
	sk->aux_bytes += p->total;
	sk->auxtrace_records++;
	return 0;
}

int rc_pt_drain_aux(struct rc_pt_ring *rg, struct rc_pt_sink *sk)
{
	uint64_t head = __atomic_load_n(&rg->pc->aux_head, __ATOMIC_ACQUIRE);
	struct rc_aux_plan p;
	bool full;
	int rc;

	if ((rc = rc_aux_plan_full(head, rg->aux_tail, rg->aux_size, 0, &p)))
		return rc;
	/* Full: no room for the next page of trace (PT writes whole pages;
	 * perf_aux_output_begin finds no space and disables the event). */
	full = rc_pt_aux_full(rg->aux_size, p.total);
	if ((rc = write_plan(rg, sk, &p)))
		return rc;
	rg->aux_tail = p.new_tail;
	__atomic_store_n(&rg->pc->aux_tail, rg->aux_tail, __ATOMIC_RELEASE);
	if (!rg->saw_truncated && !rg->saw_lost && !full)
		return 0;
	if (!rg->saw_truncated) {
		struct dc_sample_id sid = {
			.valid = true, .pid = rg->tid, .tid = rg->tid, .cpu = rg->cpu,
			.id = rg->pt_id, .time = sk->clock ? sk->clock(sk->clock_ctx) : 0,
		};

		if ((rc = rc_perf_aux(sk->w, rg->aux_tail, 0, PERF_AUX_FLAG_TRUNCATED, &sid)))
			return rc;
		sk->marked++;
	}
	rg->saw_truncated = rg->saw_lost = false;
	rg->restart = true;
	sk->restarts++;
	return 0;
}

int rc_pt_snapshot_aux(struct rc_pt_ring *rg, struct rc_pt_sink *sk)
{
	uint64_t head = __atomic_load_n(&rg->pc->aux_head, __ATOMIC_ACQUIRE);
	struct rc_aux_plan p;
	int lap, rc;

	/* Gone round since the last snapshot? Then its newest bytes were
	 * overwritten (ref starts zeroed like the buffer, old head 0). */
	lap = rc_aux_ref_changed(rg->aux, rg->aux_size, rg->aux_tail, rg->ref, rg->ref_len);
	rc_aux_ref_save(rg->aux, rg->aux_size, head, rg->ref, rg->ref_len);
	if ((rc = rc_aux_plan_snapshot(head, rg->aux_tail, rg->aux_size, lap, 0, &p)))
		return rc;
	rg->aux_tail = p.new_tail;
	return write_plan(rg, sk, &p);
}
