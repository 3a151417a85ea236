/* ptflame - decoder/prescan.h: which binaries a trace runs, found ahead of
 * its decoding from the packets alone (internal to decoder/).
 *
 * The IPs that TIP, TIP.PGE, TIP.PGD and FUP packets carry, read with
 * libipt's packet decoder from the first part of every AUX queue, tell the
 * code a trace goes to: a call into a shared library goes through its PLT
 * stub's indirect jump (a TIP), a thread comes back to its code with a
 * TIP.PGE. The binary mapped there (by any process of the recording) is
 * named once, in the order the scan first meets it, so that its DWARF can
 * be opened before the decoder gets there (dc_sym_preload_from). Only a
 * guess: a binary it misses is opened when the decoder needs it, one it
 * names wrongly (two processes with other binaries at one address) costs
 * some memory, never an answer.
 */
#ifndef PTFLAME_PRESCAN_H
#define PTFLAME_PRESCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <intel-pt.h>

struct dc_prescan;

/* Up to per_queue bytes of each queue, total bytes in all are scanned.
 * drop_pages: the chunks lie in a dc_perf_file's read-only mapping, whose
 * pages the scan drops again once read (dc_drop_pages), as the decoder
 * does. NULL: out of memory. */
struct dc_prescan *dc_prescan_new(uint64_t per_queue, uint64_t total, bool drop_pages);
void dc_prescan_free(struct dc_prescan *p);
/* Queue q's next chunk of PT data (the chunks of a queue in stream order;
 * the bytes must stay readable until the scan is done); lost_before: data
 * was lost right before it (the scan starts again at its first PSB). 0 or
 * -ENOMEM. */
int dc_prescan_add_chunk(struct dc_prescan *p, uint32_t q, const uint8_t *data, uint64_t size,
			 bool lost_before);
/* A user code mapping of the recording: [start, end) holds path's code
 * (build_id may be NULL). 0 or -ENOMEM. */
int dc_prescan_add_map(struct dc_prescan *p, uint64_t start, uint64_t end, const char *path,
		       const uint8_t *build_id, size_t build_id_size);
/* Before the first dc_prescan_next: the packet decoder's configuration
 * (cpu, errata; begin and end are set per buffer). */
void dc_prescan_config(struct dc_prescan *p, const struct pt_config *cfg);
/* Scan on until a binary not named before is met: 1 and its path and
 * build-id (valid while p lives), 0 when the scan is done. Any thread,
 * one at a time (a dc_sym_ahead_fn). */
int dc_prescan_next(void *p, const char **path, const uint8_t **build_id,
		    size_t *build_id_size);
#endif
