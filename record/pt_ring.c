/* ptflame - record/: ring-buffer arithmetic (see pt_ring.h). Pure code. */
#include <errno.h>
#include <string.h>
#include <linux/perf_event.h>

#include "record/pt_ring.h"

/* Split 'len' bytes starting at buffer offset 'off' into at most two spans,
 * the second one starting again at offset 0. */
static void split(uint64_t off, uint64_t len, uint64_t size, struct rc_aux_plan *p)
{
	uint64_t first = size - off < len ? size - off : len;

	memset(p->seg, 0, sizeof(p->seg));
	p->nseg = 0;
	p->total = len;
	if (!len)
		return;
	p->seg[0].off = off;
	p->seg[0].len = first;
	p->nseg = 1;
	if (len > first) {
		p->seg[1].off = 0;
		p->seg[1].len = len - first;
		p->nseg = 2;
	}
}

int rc_aux_plan_full(uint64_t head, uint64_t tail, uint64_t size,
		     uint64_t max_copy, struct rc_aux_plan *plan)
{
	uint64_t avail, n;

	memset(plan, 0, sizeof(*plan));
	if (!size)
		return -EINVAL;
	/* Unsigned difference: right across a 64-bit counter wrap too. */
	avail = head - tail;
	if (avail > size)
		return -EOVERFLOW;
	n = max_copy && max_copy < avail ? max_copy : avail;
	split(tail % size, n, size, plan);
	plan->stream = tail;
	plan->new_tail = tail + n;
	return 0;
}

int rc_aux_plan_snapshot(uint64_t head, uint64_t old, uint64_t size, int wrapped,
			 uint64_t max_copy, struct rc_aux_plan *plan)
{
	uint64_t start, len, keep;

	memset(plan, 0, sizeof(*plan));
	if (!size)
		return -EINVAL;
	head %= size;
	old %= size;
	if (wrapped) {
		/* Every byte is valid; the oldest sits right at head. */
		start = head;
		len = size;
	} else {
		/* New bytes since the last snapshot: from old up to head,
		 * going round the end if head is behind old. */
		start = old;
		len = head >= old ? head - old : size - old + head;
	}
	keep = max_copy && max_copy < len ? max_copy : len;
	plan->skipped = len - keep;
	start = (start + (len - keep)) % size;
	split(start, keep, size, plan);
	plan->stream = start;
	plan->new_tail = head;
	return 0;
}

/* Copy len bytes from ring offset off (wrapping) into dst. */
static void ring_copy(void *dst, const unsigned char *ring, uint64_t size,
		      uint64_t off, uint64_t len)
{
	uint64_t first = size - off < len ? size - off : len;

	memcpy(dst, ring + off, first);
	if (len > first)
		memcpy((unsigned char *)dst + first, ring, len - first);
}

void rc_aux_ref_save(const void *buf, uint64_t size, uint64_t head, void *ref, uint64_t len)
{
	head %= size;
	ring_copy(ref, buf, size, (head + size - len) % size, len);
}

int rc_aux_ref_changed(const void *buf, uint64_t size, uint64_t head_then,
		       const void *ref, uint64_t len)
{
	const unsigned char *b = buf, *r = ref;
	uint64_t off;

	head_then %= size;
	off = (head_then + size - len) % size;
	for (uint64_t i = 0; i < len; i++)
		if (b[(off + i) % size] != r[i])
			return 1;
	return 0;
}

int rc_ring_next(const void *ring, uint64_t size, uint64_t head, uint64_t *tail,
		 void *scratch, size_t scratch_size,
		 const struct perf_event_header **rec)
{
	const unsigned char *base = ring;
	struct perf_event_header hdr;
	uint64_t avail, off;

	*rec = NULL;
	if (!size)
		return -EINVAL;
	avail = head - *tail;
	if (avail > size)
		return -EOVERFLOW;
	if (!avail)
		return 0;
	if (avail < sizeof(hdr))
		return -EBADMSG;
	off = *tail % size;
	/* The header itself may straddle the end of the ring. */
	ring_copy(&hdr, base, size, off, sizeof(hdr));
	if (hdr.size < sizeof(hdr) || hdr.size > avail)
		return -EBADMSG;
	if (off + hdr.size <= size) {
		*rec = (const struct perf_event_header *)(base + off);
	} else {
		if (hdr.size > scratch_size)
			return -EBADMSG;
		ring_copy(scratch, base, size, off, hdr.size);
		*rec = scratch;
	}
	*tail += hdr.size;
	return 1;
}

int rc_ring_account(const struct perf_event_header *rec, struct rc_ring_stats *st)
{
	st->records++;
	if (rec->type == PERF_RECORD_LOST && rec->size >= sizeof(*rec) + 16) {
		uint64_t lost;

		/* { header; u64 id; u64 lost; sample_id } */
		memcpy(&lost, (const char *)rec + sizeof(*rec) + 8, sizeof(lost));
		st->lost++;
		st->lost_events += lost;
		return 2;
	}
	if (rec->type == PERF_RECORD_AUX && rec->size >= sizeof(*rec) + 24) {
		uint64_t flags;

		/* { header; u64 aux_offset; u64 aux_size; u64 flags; sample_id } */
		memcpy(&flags, (const char *)rec + sizeof(*rec) + 16, sizeof(flags));
		st->aux++;
		if (flags & PERF_AUX_FLAG_PARTIAL)
			st->partial++;
		if (flags & PERF_AUX_FLAG_COLLISION)
			st->collision++;
		if (flags & PERF_AUX_FLAG_TRUNCATED) {
			st->truncated++;
			return 1;
		}
	}
	return 0;
}
