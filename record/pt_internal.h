/* ptflame - record/: helpers of the hardware PT recorder (internal):
 * parsing of the sysfs texts it reads (pt_sysfs.c) and the buffer
 * draining (pt_drain.c), unit tested in tests/unit/test_ring_*.c. */
#ifndef PTFLAME_RECORD_PT_INTERNAL_H
#define PTFLAME_RECORD_PT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/pt_ring.h"

struct perf_event_attr;
struct perf_event_mmap_page;
struct rc_perf_writer;

/* "0-3,5,7-8\n" (/sys/devices/system/cpu/online) -> cpus[]. Returns the
 * number of CPUs, -E2BIG when more than max, -EINVAL for junk. */
int rc_pt_parse_cpulist(const char *s, int *cpus, size_t max);

/* A PMU format file ("config:14-17", "config:0", "config:1,3") -> the
 * mask of config bits it names. Only "config" fields are accepted (intel_pt
 * has no config1/config2 terms we use). 0 or -EINVAL. */
int rc_pt_parse_format(const char *s, uint64_t *mask);

/* Store value into the bits of mask (lowest bit of value into the lowest
 * bit of mask, and so on, like perf's format terms). -ERANGE when value
 * needs more bits than mask has. */
int rc_pt_set_field(uint64_t *config, uint64_t mask, uint64_t value);

/* Default period from a caps bitmask of valid values (caps/mtc_periods,
 * caps/psb_periods): the largest valid value <= target, else the smallest
 * valid one; -1 when none is valid. */
int rc_pt_pick_period(uint64_t valid, int target);

/* A line of /proc/modules -> "[name]", load address and size. Returns 0,
 * -ENOENT for a module that is not live or whose address is hidden
 * (kptr_restrict: 0), -EINVAL for junk. */
int rc_pt_parse_module(const char *line, char *name, size_t namelen, uint64_t *addr,
		       uint64_t *size);

/* Valid values of a caps bitmask as text, "0,3,5-9" (for error messages). */
void rc_pt_valid_str(uint64_t valid, char *buf, size_t len);

/* ---- the events' attrs (record/pt_attr.c) --------------------------- */

/* The events: PT, the tracking dummy (MMAP2/COMM/FORK/EXIT) next to it, the
 * CPU-wide switch dummy, the CPU-wide sched:sched_waking tracepoint (wake
 * records, perfwriter.h). */
enum { RC_PT_EV_PT, RC_PT_EV_TRACK, RC_PT_EV_SWITCH, RC_PT_EV_WAKE, RC_PT_EV_KINDS };

struct rc_pt_attr_cfg {
	int pmu_type;                /* intel_pt's type and config            */
	uint64_t config;
	uint64_t aux_size;           /* AUX bytes per buffer                  */
	bool kernel;                 /* --kernel                              */
	bool workload;               /* -- CMD: enable on exec                */
	bool per_thread;             /* -t: no inheritance                    */
	bool cpu_wide;               /* switches from the CPU-wide dummy      */
	bool snapshot;               /* overwrite mode                        */
	bool text_poke;              /* the kernel has text_poke/ksymbol      */
	uint64_t wake_tp_id;         /* sched_waking's id (tracefs)           */
};

void rc_pt_make_attrs(const struct rc_pt_attr_cfg *c, struct perf_event_attr *attr); /* [RC_PT_EV_KINDS] */

/* ---- wake records (record/pt_msg.c) -------------------------------- */

/* Why a recording goes on without wake records, one line: TP_RC is what
 * rc_wake_tp_id said for tracefs ROOT (NULL: the default roots), OPEN_ERR
 * the errno of opening the tracepoint (0: not tried), PARANOID the
 * kernel.perf_event_paranoid setting. */
void rc_pt_wake_note(char *buf, size_t len, int tp_rc, const char *root, uint64_t tp_id,
		     int open_err, long paranoid);

/* ---- messages (record/pt_msg.c) ------------------------------------- */

/* perf_event_open of the intel_pt event failed with err (an errno): EBUSY
 * names the other users of the exclusive PMU; otherwise the config. */
void rc_pt_open_errmsg(char *buf, size_t len, int err, int type, uint64_t config, int cpu,
		       const char *pmu_dir);

/* An mmap of the perf buffers failed. */
struct rc_pt_map_err {
	int err;                     /* errno of mmap                          */
	bool aux;                    /* the AUX area (else the data ring)      */
	uint64_t bytes;              /* all buffers asked for so far           */
	uint64_t aux_size;
	int topa_multi;              /* caps/topa_multiple_entries, -1 unknown */
	const char *topa_cap;        /* its path                               */
	long mlock_kb;               /* perf_event_mlock_kb                    */
	uint64_t memlock;            /* RLIMIT_MEMLOCK, UINT64_MAX: unlimited  */
};
void rc_pt_map_errmsg(char *buf, size_t len, const struct rc_pt_map_err *m);

/* ---- draining one mmap'ed buffer (record/pt_drain.c) ----------------
 * Memory only, no system calls: tests drive it with simulated buffers. */

/* One perf buffer: control page, data ring, optional AUX area. */
struct rc_pt_ring {
	struct perf_event_mmap_page *pc;
	unsigned char *data;         /* data ring (after the control page)   */
	uint64_t data_size;
	unsigned char *aux;          /* AUX area, NULL without PT            */
	uint64_t aux_size;
	uint64_t data_tail;          /* what we consumed                     */
	uint64_t aux_tail;           /* full mode: consumed; snapshot: head  */
	                             /* at the last snapshot                 */
	unsigned char *ref;          /* snapshot mode: rc_aux_ref_save bytes  */
	uint64_t ref_len;            /* (zeroed at the start)                */
	uint32_t idx, tid, cpu;      /* the AUXTRACE record's fields         */
	uint64_t pt_id;              /* sample id of the PT event owning it  */
	bool saw_truncated;          /* the data ring had a TRUNCATED AUX    */
	bool saw_lost;               /* ... or a LOST record (the AUX record */
	                             /* may have been lost with it)          */
	bool restart;                /* rc_pt_drain_aux: PT may be stopped,  */
	                             /* re-enable it (no-op when it is not)  */
};

/* Is an AUX buffer of size bytes with used bytes unread full? Less than a
 * page free (PT writes whole pages; an eighth of a smaller buffer). */
static inline bool rc_pt_aux_full(uint64_t size, uint64_t used)
{
	return size - used < (size / 8 < 4096 ? size / 8 : 4096);
}

/* Where drained bytes go, and the counts. */
struct rc_pt_sink {
	struct rc_perf_writer *w;
	unsigned char *scratch;      /* >= 65536 bytes: wrapped records      */
	unsigned char *copybuf;      /* >= aux_size: one AUXTRACE payload    */
	struct rc_ring_stats rs;
	uint64_t aux_bytes, auxtrace_records;
	uint64_t (*reference)(void); /* AUXTRACE 'reference' (TSC); non-zero */
	uint64_t (*clock)(void *ctx);/* perf clock now (records we write)   */
	void *clock_ctx;
	uint64_t restarts;           /* drains after which PT was re-enabled */
	uint64_t marked;             /* ... of them with our own TRUNCATED   */
	                             /* AUX record (the kernel wrote none)   */
};

/* Copy the data ring's new records into the file, then release them
 * (data_tail, release order). Returns 0, a writer error (see
 * rc_perf_errmsg), or -EBADMSG/-EOVERFLOW for a corrupt ring. */
int rc_pt_drain_data(struct rc_pt_ring *rg, struct rc_pt_sink *sk);

/* Full trace mode: the AUX bytes between aux_tail and aux_head become one
 * AUXTRACE record; aux_tail is then advanced (release order).
 * Then, when PT may have stopped since the last drain (the data ring had a
 * TRUNCATED AUX record or a LOST record, or the AUX buffer was full: the
 * kernel then disables the event with no record at all), sets rg->restart
 * and counts it; without the kernel's TRUNCATED record it writes one of its
 * own (size 0, at the new tail) so that decoders see the hole as loss. */
int rc_pt_drain_aux(struct rc_pt_ring *rg, struct rc_pt_sink *sk);

/* Overwrite mode, with the PT events disabled: the bytes new since the last
 * snapshot (a whole buffer after a lap) become one AUXTRACE record. */
int rc_pt_snapshot_aux(struct rc_pt_ring *rg, struct rc_pt_sink *sk);

#endif
