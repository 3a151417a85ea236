/* ptflame - record/: ring-buffer arithmetic for perf_event mmaps (internal).
 *
 * Pure functions, no system calls: what to copy out of an AUX area or a
 * data (sideband) ring given the head/tail values the kernel and we share.
 * The recorder (pt.c) does the barriers and the copying; these decide the
 * byte ranges, so every wrap-around and partial-read case is unit tested
 * (tests/unit/test_ring.c) without PT hardware.
 *
 * Positions: in normal (full trace) mode aux_head/aux_tail and
 * data_head/data_tail are free-running byte counters, the buffer offset is
 * the counter modulo the buffer size. In overwrite (snapshot) mode the
 * kernel reports aux_head as an offset inside the buffer and never waits
 * for aux_tail. */
#ifndef PTFLAME_RECORD_PT_RING_H
#define PTFLAME_RECORD_PT_RING_H

#include <stddef.h>
#include <stdint.h>

struct perf_event_header;

/* A contiguous byte range of the buffer: [off, off + len). */
struct rc_span {
	uint64_t off;
	uint64_t len;
};

/* What to copy out of an AUX area, oldest byte first: seg[0] then seg[1]. */
struct rc_aux_plan {
	struct rc_span seg[2];
	int nseg;
	uint64_t total;     /* seg[0].len + seg[1].len                          */
	uint64_t stream;    /* stream position of the first byte copied (the    */
	                    /* AUXTRACE record's 'offset')                       */
	uint64_t new_tail;  /* full mode: store into aux_tail after copying;     */
	                    /* snapshot mode: the 'old' head for the next snapshot */
	uint64_t skipped;   /* bytes that were there but are not copied (a       */
	                    /* snapshot larger than max_copy)                    */
};

/* Full trace mode. head/tail: aux_head and our aux_tail (free-running);
 * size: AUX area size in bytes (> 0); max_copy: copy at most this many bytes
 * now (a partial read; 0 = no limit). The rest stays for the next call.
 * Returns 0, or -EINVAL for a zero size and -EOVERFLOW when head is behind
 * tail or more than a buffer ahead of it (a corrupt or foreign head). */
int rc_aux_plan_full(uint64_t head, uint64_t tail, uint64_t size,
		     uint64_t max_copy, struct rc_aux_plan *plan);

/* Overwrite (snapshot) mode. head: aux_head, an offset in the buffer (taken
 * modulo size); old: head at the previous snapshot (0 at the start);
 * wrapped: the hardware has gone round the buffer since 'old' at least once,
 * so every byte is valid and the oldest is at head; max_copy: snapshot size
 * limit (0 = whole buffer). The newest bytes are kept when limited. */
int rc_aux_plan_snapshot(uint64_t head, uint64_t old, uint64_t size, int wrapped,
			 uint64_t max_copy, struct rc_aux_plan *plan);

/* Wrap detection in overwrite mode (snapshots): at each snapshot keep a
 * copy of the 'len' newest bytes (those just before head, going round the
 * end); at the next snapshot, if they changed, the hardware has gone
 * (nearly) a whole lap since and every byte of the buffer is new, else only
 * the bytes from the old head to the new one are. Start with a zeroed ref
 * and old head 0: the buffer starts zeroed, so the first lap is detected
 * the same way. rc_aux_ref_save copies them into ref; rc_aux_ref_changed
 * compares (1 changed, 0 same). 0 < len <= size. Like perf's own check it
 * can be fooled by trace bytes that repeat exactly with the buffer's period
 * (then a lap looks like no new data). */
void rc_aux_ref_save(const void *buf, uint64_t size, uint64_t head, void *ref, uint64_t len);
int rc_aux_ref_changed(const void *buf, uint64_t size, uint64_t head_then,
		       const void *ref, uint64_t len);

/* Read one record from a data ring (the sideband events).
 * ring/size: the data area (after the control page) and its size; head: the
 * data_head value read with acquire ordering; *tail: our data_tail, advanced
 * past the record on success. A record that wraps past the end of the ring
 * is copied into scratch (scratch_size >= 65535, a record's largest size),
 * otherwise *rec points into the ring.
 * Returns 1 with *rec set, 0 when the ring is empty (tail == head),
 * -EBADMSG for a header whose size is below 8 bytes or runs past head, and
 * -EOVERFLOW when head is behind tail or more than a ring ahead of it. */
int rc_ring_next(const void *ring, uint64_t size, uint64_t head, uint64_t *tail,
		 void *scratch, size_t scratch_size,
		 const struct perf_event_header **rec);

/* Sideband accounting: what a record from the data ring tells us. */
struct rc_ring_stats {
	uint64_t records;     /* all records seen                          */
	uint64_t lost;        /* PERF_RECORD_LOST records                  */
	uint64_t lost_events; /* events they say were lost                 */
	uint64_t aux;         /* PERF_RECORD_AUX records                   */
	uint64_t truncated;   /* ... with PERF_AUX_FLAG_TRUNCATED: buffer full */
	uint64_t partial;     /* ... with PERF_AUX_FLAG_PARTIAL            */
	uint64_t collision;   /* ... with PERF_AUX_FLAG_COLLISION          */
};

/* Count one record into st. Returns 1 when it is a PERF_RECORD_AUX with
 * the TRUNCATED flag (the AUX buffer filled up and the kernel stopped the
 * event: drain it and re-enable), 2 for a PERF_RECORD_LOST (what was lost
 * may have been such an AUX record), else 0. */
int rc_ring_account(const struct perf_event_header *rec, struct rc_ring_stats *st);

#endif
