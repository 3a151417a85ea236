/* ptflame - decoder/outfile.h: the one rule for writing an output file,
 * used by every command that writes one (report -o/--svg, diff -o, the
 * perf.data writer of record -o). Part of decoder/decoder.h's interface.
 *
 *   NULL, "-", /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N:
 *       that open descriptor, written in place.
 *   a new path, or an existing regular file (through symlinks: the link
 *   stays, its target is replaced): written to a temporary file beside the
 *   target and renamed onto it by dc_out_commit, so a failed run leaves the
 *   old file as it was and never a half file. A dangling symlink creates
 *   its target.
 *   anything else (a device, a FIFO, a socket): opened as it is, never
 *   created, truncated or replaced, and written in place.
 *   a directory: -EISDIR.
 *
 * With DC_OUT_SEEKABLE (a writer that seeks back, like perf.data's header)
 * an in-place target is written through an anonymous temporary file that
 * dc_out_commit copies to it, so a failed run writes nothing there either.
 */
#ifndef PTFLAME_OUTFILE_H
#define PTFLAME_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define DC_OUT_SEEKABLE 1u   /* the writer needs lseek/pwrite on fd      */
#define DC_OUT_SYNC     2u   /* fsync the file (and its directory) at commit */

struct dc_out {
	int fd;                  /* write here                               */
	int target_fd;           /* in place: the target (fd is a spool when
	                            it differs), -1 otherwise                */
	bool own_target;         /* target_fd was opened here               */
	unsigned flags;
	char *final;             /* replaced path (the resolved target)      */
	char *tmp;               /* its temporary name until commit          */
};

/* Open path's target as above. mode: for a new file (an existing regular
 * file keeps its own). 0 or a negative errno with one line in err (naming
 * path, no newline). */
int dc_out_open(struct dc_out *o, const char *path, unsigned flags, mode_t mode,
		char *err, size_t errlen);
/* Finish: copy a spool to its target, close, rename. 0 or a negative errno
 * (err says what failed); on failure the target is left as it was (a
 * regular file) and everything is cleaned up, as after dc_out_abort. */
int dc_out_commit(struct dc_out *o, char *err, size_t errlen);
/* Drop everything written (removes the temporary file). */
void dc_out_abort(struct dc_out *o);
/* The name written to until commit (the temporary file, or NULL). */
static inline const char *dc_out_tmpname(const struct dc_out *o) { return o->tmp; }

/* An anonymous read-write temporary file in $TMPDIR (or /tmp), already
 * unlinked: a descriptor or a negative errno. */
int dc_tmpfile(void);

#endif
