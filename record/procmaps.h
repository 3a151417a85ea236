/* ptflame record/ internal: the executable mappings of a running process
 * (/proc/PID/maps), as MMAP2 records describe them, and a task's process. Used by the emulator
 * and by the PT recorder's -p (mappings that existed before recording). */
#ifndef PTFLAME_RECORD_PROCMAPS_H
#define PTFLAME_RECORD_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "decoder/perfdata.h"

struct rc_map {
	uint64_t start, end, pgoff;
	uint32_t maj, min;
	uint64_t ino;
	uint32_t prot, flags;
	char *path;
	uint64_t announced;        /* the emulator's: when its MMAP2 was written */
};

/* Read PID's executable mappings: file-backed, anonymous (named "//anon",
 * as perf names them) and [vdso] only, or with all, every one ([vsyscall]
 * and the like too).
 * 0 or a negative errno code. */
int rc_maps_read(pid_t pid, bool all, struct rc_map **out, size_t *n);
void rc_maps_free(struct rc_map *maps, size_t n);

/* The MMAP2 record of M for thread TID of process PID (r->filename points
 * into m). */
void rc_map_mmap2(const struct rc_map *m, uint32_t pid, uint32_t tid, struct dc_rec_mmap *r);

/* The process task TID belongs to (/proc/TID/status Tgid), or 0 when
 * there is no such task. */
pid_t rc_proc_tgid(pid_t tid);

#endif
