/* ptflame - record/: the perf_event_attr of each event the hardware PT
 * recorder opens (see pt_internal.h), as perf record sets them for
 * `-e intel_pt//`. No system calls: unit tested in test_ring_sysfs.c. */
#include <limits.h>
#include <string.h>
#include <linux/perf_event.h>

#include "record/record.h"
#include "record/pt_internal.h"

void rc_pt_make_attrs(const struct rc_pt_attr_cfg *c, struct perf_event_attr *attr)
{
	struct perf_event_attr *a;

	for (int k = 0; k < RC_PT_EV_KINDS; k++) {
		a = &attr[k];
		memset(a, 0, sizeof(*a));
		/* perf 6.1 reads attrs of at most 128 bytes, the writer refuses
		 * more, and the kernel takes a smaller size from newer headers */
		a->size = PF_ATTR_SIZE_MAX_PERF61;
		a->sample_period = 1;
		a->sample_id_all = 1;
		a->exclude_kernel = !c->kernel;
		a->exclude_hv = 1;
		a->disabled = 1;
		a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
				 PERF_SAMPLE_IDENTIFIER;
	}
	a = &attr[RC_PT_EV_PT];
	a->type = (uint32_t)c->pmu_type;
	a->config = c->config;
	a->sample_type |= PERF_SAMPLE_IP;
	a->inherit = !c->per_thread;
	a->enable_on_exec = c->workload;
	/* Full trace mode: wake us (and write a PERF_RECORD_AUX) every quarter
	 * buffer, as perf does; the kernel's default, half, lets the buffer
	 * fill up (TRUNCATED, PT stopped) before we drain it. Overwrite mode
	 * has no reader to wake. */
	if (!c->snapshot)
		a->aux_watermark = c->aux_size / 4 > UINT_MAX ? UINT_MAX : (uint32_t)(c->aux_size / 4);

	a = &attr[RC_PT_EV_TRACK];
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->sample_type |= PERF_SAMPLE_IP;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->inherit = !c->per_thread;
	a->enable_on_exec = c->workload;
	/* Per-task switches when CPU-wide ones are not possible (or -t). */
	a->context_switch = !c->cpu_wide;

	a = &attr[RC_PT_EV_SWITCH];
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->context_switch = 1;
	/* Tracing the kernel: its code changes at run time (alternatives,
	 * static keys, ftrace, BPF); perf records those changes on a
	 * system-wide dummy, and so do we, on this one (when the kernel has
	 * them: the caller clears the bits on EINVAL). */
	a->text_poke = c->kernel && c->text_poke;
	a->ksymbol = c->kernel && c->text_poke;

	/* Wakes: CPU-wide (every task's wakes on the CPU: the wakee may be
	 * woken by any task, so no filter on the waker's side; a filter on the
	 * wakee's pid would miss the threads the target makes later, and the
	 * tracepoint has no tgid: the reader drops the wakes of other tasks).
	 * A tracepoint fires in the kernel: exclude_kernel would drop them
	 * all. Enabled with the switch events. */
	a = &attr[RC_PT_EV_WAKE];
	rc_perf_wake_attr(a, c->wake_tp_id);
	a->disabled = 1;
	a->exclude_hv = 1;
	a->sample_id_all = 1;
}
