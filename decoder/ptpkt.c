/* ptflame decoder: the packet iterator's slow path (see ptpkt.h). */
#include "decoder/ptpkt.h"

#include <errno.h>
#include <string.h>

int dc_pkt_it_init(struct dc_pkt_it *it, const struct pt_config *base, const uint8_t *buf,
		   size_t len)
{
	struct pt_config pc = *base;
	uint64_t off = 0;

	memset(it, 0, sizeof(*it));
	pc.size = sizeof(pc);
	pc.begin = (uint8_t *)buf;
	pc.end = (uint8_t *)buf + len;
	it->buf = buf;
	it->len = len;
	it->pd = pt_pkt_alloc_decoder(&pc);
	if (!it->pd)
		return -ENOMEM;
	if (pt_pkt_sync_forward(it->pd) < 0 || pt_pkt_get_offset(it->pd, &off) < 0)
		it->done = true;
	it->off = it->sync = (size_t)off;
	return 0;
}

void dc_pkt_it_fini(struct dc_pkt_it *it)
{
	pt_pkt_free_decoder(it->pd);
	it->pd = NULL;
}

static void from_libipt(struct dc_pkt *k, const struct pt_packet *p)
{
	k->type = p->type;
	k->size = p->size;
	k->tnt_bits = 0;
	switch (p->type) {
	case ppt_cyc:
		k->val = p->payload.cyc.value;
		break;
	case ppt_mtc:
		k->val = p->payload.mtc.ctc;
		break;
	case ppt_cbr:
		k->val = p->payload.cbr.ratio;
		break;
	case ppt_tsc:
		k->val = p->payload.tsc.tsc;
		break;
	case ppt_mode:
		k->val = p->payload.mode.leaf;
		break;
	case ppt_tnt_8:
	case ppt_tnt_64:
		k->val = p->payload.tnt.payload;
		k->tnt_bits = p->payload.tnt.bit_size;
		break;
	case ppt_tip:
	case ppt_tip_pge:
	case ppt_tip_pgd:
	case ppt_fup:
		k->val = p->payload.ip.ipc;
		break;
	default:
		k->val = 0;
		break;
	}
}

/* After an error at it->off: on at the next PSB. libipt searches from
 * its decoder's position, but skips the PSB it last synchronized at when
 * it is still there (pt_pkt_sync_set makes the offset set such a point);
 * so its decoder gets to it->off the way the loop's did, by reading the
 * packet before it again. (The other branch is only defensive: the PSB
 * synced at always reads back, so no error is at it, and a packet was
 * read before any other offset.) */
static void resync(struct dc_pkt_it *it)
{
	struct pt_packet pkt;
	uint64_t off = 0;

	if (it->off == it->sync || it->prev >= it->off)
		pt_pkt_sync_set(it->pd, it->off);
	else if (pt_pkt_sync_set(it->pd, it->prev) < 0 ||
		 pt_pkt_next(it->pd, &pkt, sizeof(pkt)) < 0) {
		it->done = true;   /* (cannot be: it was read before) */
		return;
	}
	if (pt_pkt_sync_forward(it->pd) < 0 || pt_pkt_get_offset(it->pd, &off) < 0) {
		it->done = true;
		return;
	}
	it->off = it->sync = (size_t)off;
}

int dc_pkt_slow(struct dc_pkt_it *it, struct dc_pkt *k)
{
	struct pt_packet pkt;

	if (pt_pkt_sync_set(it->pd, it->off) >= 0 && pt_pkt_next(it->pd, &pkt, sizeof(pkt)) >= 0) {
		from_libipt(k, &pkt);
		k->off = it->off;
		it->prev = it->off;
		it->off += pkt.size;
		return 1;
	}
	resync(it);
	return 0;
}
