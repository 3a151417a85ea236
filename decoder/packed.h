/* ptflame - decoder/packed.h: the records of perf.data's compressed
 * records (PERF_RECORD_COMPRESSED and COMPRESSED2: perf record -z, ptflame
 * record -z).
 *
 * perf compresses what it copies from the kernel's ring buffers (the
 * sideband: MMAP, COMM, SWITCH, AUX, ...) as one zstd stream, flushed at
 * the end of each compressed record and never ended, so a record's bytes
 * can only be read after every compressed record before it, and a record
 * inside may begin in one compressed record and end in the next. The AUX
 * data (AUXTRACE records) and the user records are written as they are.
 *
 * The decompressed records are kept, in the order of the compressed
 * records they came from, until the file is closed: a record read from
 * here stays where it is like one in the file's mapping, and a second pass
 * over the file (dc_perf_seek to the start) reads them again without
 * decompressing. Used by decoder/perfdata.c only.
 */
#ifndef PTFLAME_PACKED_H
#define PTFLAME_PACKED_H

#include <stddef.h>
#include <stdint.h>

struct dc_packed;

struct dc_packed *dc_packed_new(void);
void dc_packed_free(struct dc_packed *z);
/* The compressed record at file offset off holds data[0, size): its
 * records are next (decompressed now, or found again on a second pass). 0,
 * or -EINVAL (corrupt data, a record too large: err says) or -ENOMEM. */
int dc_packed_add(struct dc_packed *z, uint64_t off, const uint8_t *data, size_t size,
		  char *err, size_t errlen);
/* The next record of what was added, whole (its header's size fits, or is
 * too small to be a record: the caller's parser says so), or NULL when none
 * is left; *avail: its bytes to the end of the data decompressed. */
const uint8_t *dc_packed_next(struct dc_packed *z, size_t *avail);
/* Bytes of a record begun and not ended (at the end of the file: the
 * compressed data was cut). */
size_t dc_packed_pending(const struct dc_packed *z);
/* Back to the first compressed record (a second pass). */
void dc_packed_rewind(struct dc_packed *z);

#endif
