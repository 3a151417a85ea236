/* ptflame - record/ptrecord.h: the hardware Intel PT recorder
 * (perf_event_open). Part of record/record.h's public interface.
 *
 * One intel_pt event per CPU (per thread with -t) with an AUX area, a
 * "tracking" dummy event next to it for MMAP2/COMM/FORK/EXIT, and a
 * system-wide dummy per CPU for SWITCH_CPU_WIDE (falls back to per-task
 * SWITCH records when the system does not allow CPU-wide events). The
 * output is what `perf record -e intel_pt//u` writes.
 *
 * sideband_only drops the PT event: the same sideband events, nothing
 * else. It runs on machines without PT (tests compare it with
 * `perf record -e dummy --switch-events`), and is a diagnostic mode.
 */
#ifndef PTFLAME_PTRECORD_H
#define PTFLAME_PTRECORD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rc_pt_opts {
	const char *output;          /* final perf.data path                  */
	int compress;                /* zstd level of the sideband (0: none)  */
	uint64_t duration_ms;        /* stop after this long; 0 = no limit    */
	const int *pids;             /* -p: whole processes, present + future */
	size_t nr_pids;
	const int *tids;             /* -t: just these threads, per-thread    */
	size_t nr_tids;              /*     buffers, no inheritance           */
	char *const *argv;           /* -- CMD ARGS (NULL-terminated) or NULL */
	uint64_t aux_size;           /* AUX bytes per buffer; 0 = default     */
	uint64_t data_size;          /* data ring bytes per buffer; 0 = default */
	bool cyc, noretcomp, kernel, snapshot, sideband_only;
	int mtc_period;              /* -1: the PMU's default                 */
	int psb_period;              /* -1: the PMU's default                 */
	const char *filter;          /* trace only this function, or NULL     */
	const char *sysfs;           /* "/sys" (tests point it elsewhere)     */
	const char *tracefs;         /* NULL: /sys/kernel/tracing, then
	                              * /sys/kernel/debug/tracing (tests)      */
	bool no_wakers;              /* --no-wakers: no wake records          */
	/* Set asynchronously by the caller's signal handlers: stop recording;
	 * take a snapshot now (--snapshot). May be NULL. */
	volatile sig_atomic_t *stop;
	volatile sig_atomic_t *snap;
	/* -- CMD starts with these signals ignored (those ptflame itself
	 * started with ignored) and every other one at its default action,
	 * whatever ptflame set meanwhile (it ignores SIGPIPE). */
	sigset_t child_ignored;
	size_t cmdline_argc;         /* ptflame's own command line, stored    */
	const char *const *cmdline;  /* in the file's CMDLINE feature         */
};

struct rc_pt_stats {
	unsigned cpus;               /* buffers in per-CPU mode              */
	unsigned threads;            /* threads traced at the start          */
	uint64_t aux_bytes;          /* trace bytes written                   */
	uint64_t auxtrace_records;
	uint64_t sideband_records;
	uint64_t truncated;          /* AUX buffer full (PERF_AUX_FLAG_TRUNCATED) */
	uint64_t restarts;           /* PT re-enabled after a possible stop:  */
	                             /* TRUNCATED, LOST or a full AUX buffer  */
	uint64_t marked;             /* ... holes the kernel gave no TRUNCATED */
	                             /* record for (we wrote one)             */
	uint32_t aux_watermark;      /* the PT attr's (0: kernel default)     */
	uint64_t lost_records;       /* PERF_RECORD_LOST kept in the file     */
	uint64_t lost_events;
	uint64_t snapshots;
	bool cpu_wide_switch;        /* SWITCH_CPU_WIDE (else per-task SWITCH) */
	bool wakes;                  /* sched:sched_waking on every CPU       */
	char wake_note[512];         /* why not (one line), "" when wakes or  */
	                             /* --no-wakers                           */
	bool child_exited;           /* -- CMD: how it ended                  */
	int child_status;            /* waitpid status                        */
	bool child_stopped;          /* ... by us, when recording stopped first */
};

/* Record until the target exits, the duration passes or *stop is set.
 * Returns 0 (the file is complete), -ENODEV when there is no intel_pt PMU,
 * -EINVAL for a bad option value, another negative errno otherwise; on
 * failure err holds one line saying what to do and no output file is
 * left behind. */
int rc_pt_record(const struct rc_pt_opts *o, struct rc_pt_stats *st,
		 char *err, size_t errlen);

/* Resolve a function symbol of an ELF file to an address filter range in
 * the kernel's form: file offset of its first byte and its size. Returns 0,
 * -ENOENT when the symbol is not there, another negative errno for an
 * unreadable file. */
int rc_pt_resolve_filter(const char *path, const char *func, uint64_t *file_off,
			 uint64_t *size);

#endif
