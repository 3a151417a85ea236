/* ptflame - decoder/sideband.h: the sideband model of a recording.
 *
 * Fed the non-AUX records of a perf.data file in time order (dc_sb_apply),
 * it knows: threads (tid -> pid) and their comms; each process's executable
 * file mappings over time (mid-trace mmap, exec, fork copying the parent's
 * maps); the thread running on each CPU over time (SWITCH_CPU_WIDE,
 * ITRACE_START, per-thread SWITCH). Wakes (sched:sched_waking samples,
 * dc_perf_wake) change nothing in it: dc_sb_apply says which record is one
 * and counts them.
 *
 * Time-indexed queries answer for any time not older than the last
 * dc_sb_prune() watermark, so a consumer may apply records ahead of the
 * time it asks about. Memory: live state plus the history newer than the
 * watermark. Part of decoder/decoder.h's public interface.
 */
#ifndef PTFLAME_SIDEBAND_H
#define PTFLAME_SIDEBAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dc_perf_record;
struct dc_rec_mmap;

#define DC_SB_NOW UINT64_MAX   /* "the latest state" for a time argument */
#define DC_SB_NO_TID UINT32_MAX

/* One executable file mapping of a process, valid in [t_start, t_end). */
struct dc_sb_map {
	uint64_t start, end;       /* [start, end) virtual addresses           */
	uint64_t pgoff;            /* file offset of start                     */
	uint64_t t_start, t_end;   /* t_end UINT64_MAX while mapped            */
	char *path;                /* as recorded ("[vdso]" for the vdso)      */
	uint8_t build_id[20];
	uint8_t build_id_size;     /* 0: unknown                               */
	int dso;                   /* symbolizer's dso id, -1 until resolved   */
	/* its code in the session's image section cache: isid 0 until added,
	 * -1 none (no file, or it ends before pgoff); isize the bytes of it
	 * the section holds (a mapping may run past its file's end) */
	int isid;
	uint64_t isize;
	/* The process's mappings generations (dc_sb_proc.maps_gen) it belongs
	 * to: [gen_start, gen_end), gen_end UINT32_MAX while mapped. A
	 * generation's mappings are those it was made with for good (the
	 * next one only ends some and adds others): dc_sb_map_at_gen. */
	uint32_t gen_start, gen_end;
};

/* A process (address space). exec starts a new generation: its old maps
 * end at the exec time. */
struct dc_sb_proc {
	uint32_t pid;
	uint32_t exec_gen;         /* bumped by exec                           */
	uint32_t maps_gen;         /* bumped when the current mappings change  */
	struct dc_sb_map *maps;    /* in the order they were added            */
	size_t nmaps, cap;
	size_t last_hit;           /* lookup cache                             */
	/* Lookups by generation ask for gen_held or a later one (dc_sb_hold_gen;
	 * held false: only for the current one): dc_sb_prune keeps a mapping
	 * that generation still has. */
	uint32_t gen_held;
	bool held;
};

struct dc_sideband;
struct dc_perf_file;

int dc_sb_new(struct dc_sideband **out);
void dc_sb_free(struct dc_sideband *sb);
/* Mappings that name no build-id take the one pf's HEADER_BUILD_ID table
 * gives their path, user entries only (pf must outlive sb). 0 or -ENOMEM. */
int dc_sb_use_build_ids(struct dc_sideband *sb, const struct dc_perf_file *pf);

/* The build-id pf's HEADER_BUILD_ID table gives a user file (NULL: none). */
const uint8_t *dc_sb_header_build_id(const struct dc_sideband *sb, const char *path,
				     size_t *size);
/* Is the MMAP record one of user code (a mapping dc_sb_apply adds)? */
bool dc_sb_user_code_map(const struct dc_rec_mmap *m);

/* What a record changed, for a caller turning sideband into events. */
enum dc_sb_effect {
	DC_SB_NONE = 0,
	DC_SB_COMM,          /* a comm (exec or rename)                        */
	DC_SB_MMAP,          /* an executable mapping added                    */
	DC_SB_FORK,          /* a thread or process created                    */
	DC_SB_EXIT,          /* a thread exited                                */
	DC_SB_SWITCH_IN,     /* sid tid was switched in on sid cpu             */
	DC_SB_SWITCH_OUT,    /* sid tid was switched out                       */
	DC_SB_ITRACE_START,  /* tracing of a thread started on a cpu           */
	DC_SB_WAKE,          /* a wake (dc_perf_wake() reads it)               */
	DC_SB_BAD_WAKE,      /* a wake record that cannot be read: skip it     */
};

/* Apply one record at time `time` (the record's sample time; non-decreasing
 * across calls for correct history). Records of other types are ignored.
 * Returns the effect (>= 0) or -ENOMEM. */
int dc_sb_apply(struct dc_sideband *sb, const struct dc_perf_record *rec, uint64_t time);

/* Direct model updates (what dc_sb_apply does per record; for tests and
 * for the perf-script importer). pid 0 / tid 0 are the idle task. */
int dc_sb_set_cpu(struct dc_sideband *sb, uint32_t cpu, uint64_t time,
		  uint32_t pid, uint32_t tid);
int dc_sb_thread(struct dc_sideband *sb, uint32_t pid, uint32_t tid);
int dc_sb_fork(struct dc_sideband *sb, uint32_t ppid, uint32_t pid, uint32_t tid,
	       uint64_t time);
int dc_sb_exec(struct dc_sideband *sb, uint32_t pid, uint64_t time);
int dc_sb_mmap(struct dc_sideband *sb, uint32_t pid, uint64_t time, uint64_t start,
	       uint64_t len, uint64_t pgoff, const char *path,
	       const uint8_t *build_id, size_t build_id_size);
int dc_sb_comm(struct dc_sideband *sb, uint32_t pid, uint32_t tid, const char *comm);

/* The thread on `cpu` at `time`: 0 with pid and tid set, or -ENOENT when no
 * record said so yet. An idle CPU answers tid 0. */
int dc_sb_cpu_tid(const struct dc_sideband *sb, uint32_t cpu, uint64_t time,
		  uint32_t *pid, uint32_t *tid);
/* Same, and *since: when that thread got the cpu (the entry's time). */
int dc_sb_cpu_tid_since(const struct dc_sideband *sb, uint32_t cpu, uint64_t time,
			uint32_t *pid, uint32_t *tid, uint64_t *since);
/* The process of a thread, or -ENOENT. */
int dc_sb_thread_pid(const struct dc_sideband *sb, uint32_t tid, uint32_t *pid);
/* The thread's last comm, or NULL. */
const char *dc_sb_thread_comm(const struct dc_sideband *sb, uint32_t tid);

/* The process, or NULL. */
struct dc_sb_proc *dc_sb_proc(const struct dc_sideband *sb, uint32_t pid);
/* The mapping of process pid containing ip at time (DC_SB_NOW: latest), or
 * NULL. The pointer is valid until the next change to the model. */
struct dc_sb_map *dc_sb_map_find(const struct dc_sideband *sb, uint32_t pid,
				 uint64_t time, uint64_t ip);

/* The mapping of process p containing ip in its mappings generation gen
 * (dc_sb_proc.maps_gen as it was; the current one: as DC_SB_NOW), or
 * NULL. Generations older than the one dc_sb_hold_gen held last may have
 * been pruned. The pointer is valid until the next change to the model. */
struct dc_sb_map *dc_sb_map_at_gen(struct dc_sb_proc *p, uint32_t gen, uint64_t ip);
/* Lookups by generation (dc_sb_map_at_gen) of process p will ask for gen
 * or later ones from now on (a process's image of that generation is its
 * oldest still decoded with): dc_sb_prune keeps what they need. */
void dc_sb_hold_gen(struct dc_sb_proc *p, uint32_t gen);

/* Forget history older than time (queries for earlier times become
 * approximate: they answer with the oldest state kept), but not a
 * mapping of a generation still held (dc_sb_hold_gen). */
void dc_sb_prune(struct dc_sideband *sb, uint64_t time);

/* Counters. */
size_t dc_sb_nr_threads(const struct dc_sideband *sb);
/* Wake records applied: readable ones, and *bad those that were not. */
uint64_t dc_sb_nr_wakes(const struct dc_sideband *sb, uint64_t *bad);
size_t dc_sb_nr_procs(const struct dc_sideband *sb);

#endif
