/* ptflame - record/: the one-line messages of the hardware PT recorder
 * for failures whose cause must be told apart (see pt_internal.h). Text
 * only: unit tested in test_ring_sysfs.c. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "record/record.h"
#include "record/pt_internal.h"
#include "record/wake.h"

void rc_pt_open_errmsg(char *buf, size_t len, int err, int type, uint64_t config, int cpu,
		       const char *pmu_dir)
{
	if (err == EBUSY) {
		/* The PT PMU is exclusive, and shares the branch-tracing
		 * hardware with LBR call stacks and BTS. */
		snprintf(buf, len, "Intel PT on CPU %d is busy: another PT user (another 'perf record "
			 "-e intel_pt//', another 'ptflame record', a debugger) or an LBR/BTS user "
			 "('perf record --call-graph lbr', '-e intel_bts//') holds it; stop it and retry",
			 cpu);
		return;
	}
	snprintf(buf, len, "the kernel refused the intel_pt event (type %d, config %#llx) on CPU %d: "
		 "%s; check %s and the --cyc/--mtc-period/--psb-period values",
		 type, (unsigned long long)config, cpu, strerror(err), pmu_dir);
}

void rc_pt_map_errmsg(char *buf, size_t len, const struct rc_pt_map_err *m)
{
	if (m->err == ENOMEM && m->aux && m->topa_multi == 0) {
		snprintf(buf, len, "the kernel could not allocate the %llu KiB AUX buffer: this CPU's "
			 "PT has no multi-entry ToPA (%s = 0), so each buffer must be one "
			 "physically contiguous block; use a smaller -m/--aux-size (e.g. %lluK)",
			 (unsigned long long)(m->aux_size >> 10), m->topa_cap,
			 (unsigned long long)(m->aux_size >= (16u << 10) ? m->aux_size >> 12 : 8));
		return;
	}
	if (m->err == ENOMEM) {
		snprintf(buf, len, "the kernel could not allocate %llu KiB of perf ring buffers (out of "
			 "memory, not a limit): use a smaller -m/--aux-size or --data-size",
			 (unsigned long long)(m->bytes >> 10));
		return;
	}
	if (m->err == EPERM) {
		/* perf_mmap: over perf_event_mlock_kb + RLIMIT_MEMLOCK */
		char lim[64];

		if (m->memlock == UINT64_MAX)
			snprintf(lim, sizeof(lim), "unlimited");
		else
			snprintf(lim, sizeof(lim), "%llu KiB", (unsigned long long)(m->memlock >> 10));
		snprintf(buf, len, "cannot map %llu KiB of perf ring buffers: over the locked-memory "
			 "limit; raise /proc/sys/kernel/perf_event_mlock_kb (now %ld) or 'ulimit -l' "
			 "(now %s), or use a smaller -m/--aux-size and --data-size",
			 (unsigned long long)(m->bytes >> 10), m->mlock_kb, lim);
		return;
	}
	snprintf(buf, len, "cannot map %llu KiB of perf ring buffers: %s",
		 (unsigned long long)(m->bytes >> 10), strerror(m->err));
}

void rc_pt_wake_note(char *buf, size_t len, int tp_rc, const char *root, uint64_t tp_id,
		     int open_err, long paranoid)
{
	const char *r = root ? root : RC_TRACEFS_ROOT;

	if (tp_rc == -ENOENT)
		snprintf(buf, len, "no sched:sched_waking tracepoint under %s%s (mount tracefs: "
			 "mount -t tracefs nodev %s): recording without wake records",
			 r, root ? "" : " or " RC_TRACEFS_ROOT_DEBUG, r);
	else if (tp_rc == -EACCES)
		snprintf(buf, len, "cannot read %s/events/sched/sched_waking/id (run as root): "
			 "recording without wake records", r);
	else if (tp_rc)
		snprintf(buf, len, "%s/events/sched/sched_waking/id holds no tracepoint id: "
			 "recording without wake records", r);
	else if (open_err == EACCES || open_err == EPERM)
		snprintf(buf, len, "not allowed to open sched:sched_waking on every CPU "
			 "(kernel.perf_event_paranoid = %ld, needs -1, or root/CAP_PERFMON): "
			 "recording without wake records", paranoid);
	else
		snprintf(buf, len, "cannot open sched:sched_waking (tracepoint id %llu): %s: "
			 "recording without wake records", (unsigned long long)tp_id,
			 strerror(open_err));
}
