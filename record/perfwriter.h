/* ptflame - record/perfwriter.h: the perf.data (PERFILE2) writer.
 *
 * Writes what `perf record` writes, closely enough that Debian's perf 6.1
 * reads it without warnings (`perf script -D`, `--itrace=cr`):
 *   - attr.size is at most PF_ATTR_SIZE_MAX_PERF61 (128); rc_perf_add_attr
 *     forces sample_id_all = 1 and PERF_SAMPLE_IDENTIFIER on every attr;
 *   - the intel_pt attr's type must equal AUXTRACE_INFO priv[PMU_TYPE];
 *   - AUXTRACE records are 48 bytes + payload, padded to 8, reference != 0,
 *     and listed in the HEADER_AUXTRACE feature.
 * path follows the one output rule (decoder/outfile.h): a regular file is
 * written to a temporary file in the destination's directory and renamed
 * onto path by rc_perf_close only when everything succeeded, so a crash
 * never leaves a half file under the final name; a device, FIFO or "-"
 * (stdout) is written in place, the whole file at rc_perf_close.
 *
 * Order of calls: rc_perf_create, rc_perf_add_attr (all attrs, before the
 * first record), records, features (any time), rc_perf_close or
 * rc_perf_abort. Every function returns 0 or a negative errno code; the
 * writer keeps a one-line message (rc_perf_errmsg). After an error only
 * rc_perf_abort (or rc_perf_close, which then fails and aborts) is useful.
 * Part of record/record.h's public interface.
 */
#ifndef PTFLAME_PERFWRITER_H
#define PTFLAME_PERFWRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoder/perfdata.h"

struct rc_perf_writer;

int rc_perf_create(const char *path, struct rc_perf_writer **out, char *err, size_t errlen);
/* Write features, fix the header, fsync, rename onto path, free w.
 * On failure the temporary file is removed and w freed too. */
int rc_perf_close(struct rc_perf_writer *w);
/* rc_perf_close that also leaves the one-line error message in err. */
int rc_perf_finish(struct rc_perf_writer *w, char *err, size_t errlen);
/* Write the kernel's records (MMAP, COMM, SWITCH, AUX, samples, ...)
 * compressed with zstd at level (1..22), as perf record -z does: in
 * COMPRESSED records, with the HEADER_COMPRESSED feature. Only before the
 * first record. */
int rc_perf_compress(struct rc_perf_writer *w, int level);
/* Remove the temporary file and free w (NULL is fine). */
void rc_perf_abort(struct rc_perf_writer *w);
const char *rc_perf_errmsg(const struct rc_perf_writer *w);

/* Add an attr with its sample ids (copied). attr->size 0 means
 * PF_ATTR_SIZE_MAX_PERF61; larger than that is -EINVAL. The writer sets
 * sample_id_all and PERF_SAMPLE_IDENTIFIER. Only before the first record. */
int rc_perf_add_attr(struct rc_perf_writer *w, const struct perf_event_attr *attr,
		     const uint64_t *ids, size_t nr_ids);

/* rc_perf_add_attr with the event's name for HEADER_EVENT_DESC (perf
 * script prints it; NULL: the writer's own, e.g. "intel_pt//u", "dummy:u",
 * "typeT/CONFIG/"). */
int rc_perf_add_attr_named(struct rc_perf_writer *w, const struct perf_event_attr *attr,
			   const uint64_t *ids, size_t nr_ids, const char *name);

/* --- wake records (sched:sched_waking samples) ---------------------------
 * A wakeup is a PERF_RECORD_SAMPLE of a tracepoint attr named
 * "sched:sched_waking": the sample's pid/tid are the WAKER, its time the
 * moment of the wake, its cpu the waker's; RAW is the kernel's
 * sched_waking payload (x86-64, Linux 5.x/6.x), RC_WAKE_RAW_SIZE bytes:
 *   u16 common_type @0, u8 common_flags @2, u8 common_preempt_count @3,
 *   s32 common_pid @4 (waker tid), char comm[16] @8 (the WAKEE's comm),
 *   s32 pid @24 (WAKEE tid), s32 prio @28, s32 target_cpu @32.
 * Readers take the wakee from offset 24 and the waker from the sample's
 * tid; they must not depend on attr.config (the tracepoint id of the
 * recording machine's tracefs, or RC_WAKE_TP_ID_NONE when none was
 * readable). Both recorders, hardware and emulated, write this. */
#define RC_WAKE_EVENT_NAME "sched:sched_waking"
#define RC_WAKE_RAW_SIZE 36u
#define RC_WAKE_OFF_COMM 8u
#define RC_WAKE_OFF_PID 24u
#define RC_WAKE_OFF_PRIO 28u
#define RC_WAKE_OFF_TARGET_CPU 32u
#define RC_WAKE_TP_ID_NONE 0xffffu   /* config when no tracefs told the id */
#define RC_WAKE_PRIO_NORMAL 120       /* the kernel's prio of a nice-0 task */
/* The wake attr: PERF_TYPE_TRACEPOINT, config TP_ID, sample_period 1,
 * sample_type IDENTIFIER|IP|TID|TIME|CPU|RAW, sample_id_all, user and
 * kernel not excluded (a tracepoint fires in the kernel). IP is there as
 * `perf record -e sched:sched_waking` has it (the kernel's ip at the
 * tracepoint; 0 from the emulators): without it `perf script -F ip,...`
 * refuses the whole file. */
void rc_perf_wake_attr(struct perf_event_attr *a, uint64_t tp_id);
/* The RAW payload of a wake of WAKEE_TID (named WAKEE_COMM, cut to 15
 * bytes) by WAKER_TID. */
void rc_perf_wake_raw(uint8_t raw[RC_WAKE_RAW_SIZE], uint64_t tp_id, int32_t waker_tid,
		      const char *wakee_comm, int32_t wakee_tid, int32_t prio,
		      int32_t target_cpu);
/* A wake record: sid (id = a wake attr's sample id, pid/tid = waker, time,
 * cpu) and its payload. */
int rc_perf_wake(struct rc_perf_writer *w, const struct dc_sample_id *sid,
		 const uint8_t raw[RC_WAKE_RAW_SIZE]);

/* A PERF_RECORD_SAMPLE of the attr owning sid->id, with the fields of its
 * sample_type in perf's order; supported: IDENTIFIER, IP (ip), TID, TIME,
 * ID, CPU, PERIOD (1), RAW (u32 raw_size + raw, zero-padded so the record
 * stays 8-byte aligned, as the kernel pads it). Any other field: -EINVAL. */
int rc_perf_sample(struct rc_perf_writer *w, const struct dc_sample_id *sid, uint64_t ip,
		   const void *raw, uint32_t raw_size);

/* Raw record, written as is (size from its header). For AUXTRACE use
 * rc_perf_auxtrace. */
int rc_perf_write(struct rc_perf_writer *w, const void *rec);
/* A kernel record given WITHOUT its trailer: appends the sample_id_all
 * trailer laid out per the attr owning sid->id (the only attr when there is
 * just one) and fixes header.size. */
int rc_perf_write_sid(struct rc_perf_writer *w, const void *rec,
		      const struct dc_sample_id *sid);

/* Record helpers; sid gives the trailer (its valid flag is ignored). */
int rc_perf_comm(struct rc_perf_writer *w, uint32_t pid, uint32_t tid, const char *comm,
		 bool exec, const struct dc_sample_id *sid);
/* MMAP2 from m's fields (is_mmap2, data, cpumode (0 = USER) and
 * has_build_id honoured; filename required). */
int rc_perf_mmap2(struct rc_perf_writer *w, const struct dc_rec_mmap *m,
		  const struct dc_sample_id *sid);
int rc_perf_fork(struct rc_perf_writer *w, uint32_t pid, uint32_t ppid, uint32_t tid,
		 uint32_t ptid, uint64_t time, const struct dc_sample_id *sid);
int rc_perf_exit(struct rc_perf_writer *w, uint32_t pid, uint32_t ppid, uint32_t tid,
		 uint32_t ptid, uint64_t time, const struct dc_sample_id *sid);
/* SWITCH (per-thread mode): out, and preempt (only with out). */
int rc_perf_switch(struct rc_perf_writer *w, bool out, bool preempt,
		   const struct dc_sample_id *sid);
/* SWITCH_CPU_WIDE: next_prev_* is the task switched to (out) or from (in). */
int rc_perf_switch_cpu_wide(struct rc_perf_writer *w, bool out, bool preempt,
			    uint32_t next_prev_pid, uint32_t next_prev_tid,
			    const struct dc_sample_id *sid);
int rc_perf_itrace_start(struct rc_perf_writer *w, uint32_t pid, uint32_t tid,
			 const struct dc_sample_id *sid);
int rc_perf_aux(struct rc_perf_writer *w, uint64_t aux_offset, uint64_t aux_size,
		uint64_t flags, const struct dc_sample_id *sid);
int rc_perf_lost(struct rc_perf_writer *w, uint64_t id, uint64_t lost,
		 const struct dc_sample_id *sid);

/* AUXTRACE_INFO of type INTEL_PT with all PF_PT_PRIV_MAX priv[] entries
 * (+ the filter string when pt->filter is non-empty). -EINVAL when no attr
 * has type pt->pmu_type. */
int rc_perf_auxtrace_info_pt(struct rc_perf_writer *w, const struct dc_pt_info *pt);
/* AUXTRACE record + payload (padded with zero bytes, PT PAD packets, to a
 * multiple of 8; the record's size says the padded size). reference must
 * be non-zero. Also entered in the HEADER_AUXTRACE index. */
int rc_perf_auxtrace(struct rc_perf_writer *w, const void *data, uint64_t size,
		     uint64_t offset, uint64_t reference, uint32_t idx, uint32_t tid,
		     uint32_t cpu);
/* TIME_CONV, 56-byte form (tc->has_ext is ignored: always written). */
int rc_perf_time_conv(struct rc_perf_writer *w, const struct dc_rec_time_conv *tc);
int rc_perf_finished_round(struct rc_perf_writer *w);

/* Features (written at close). */
int rc_perf_set_nrcpus(struct rc_perf_writer *w, uint32_t nr_avail, uint32_t nr_online);
/* Stored as given; perf's convention: argv[0] = path of the recorder. */
int rc_perf_set_cmdline(struct rc_perf_writer *w, size_t argc, const char *const *argv);
/* One HEADER_STRING-style feature: HOSTNAME, OSRELEASE, VERSION, ARCH,
 * CPUDESC, CPUID. */
int rc_perf_set_string(struct rc_perf_writer *w, int feat, const char *s);
/* The recorded processes run on this machine's kernel (hardware PT, the
 * ptrace emulator; not qemu, whose guests see no kernel vdso): their
 * [vdso] is this process's, and its build-id goes into HEADER_BUILD_ID
 * with the mapped files' (which rc_perf_finish adds for every user MMAP
 * and MMAP2 of code that named none). */
void rc_perf_same_kernel(struct rc_perf_writer *w);
int rc_perf_add_build_id(struct rc_perf_writer *w, int32_t pid, uint16_t cpumode,
			 const uint8_t *id, size_t size, const char *filename);
/* Raw bytes of any feature (replaces what the helpers would write). */
int rc_perf_set_feature(struct rc_perf_writer *w, int feat, const void *data, size_t size);

#endif
