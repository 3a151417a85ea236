/* ptflame - record/emu_sched.c: the virtual-CPU scheduler both emulators
 * of `record --emulate` share (the ptrace stepper, record/emulate.c, and
 * the qemu backend, record/qemu.c); see emu_out.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "decoder/dc_vec.h"
#include "record/emu_out.h"
#include "record/emulate.h"

int rc_emu_sched_add(struct rc_emu_sched *s, struct rc_emu_sthr *t)
{
	if (DC_VEC_PUSH_ROOM(s->thr, s->nthr, s->cthr, 8))
		return -ENOMEM;
	s->thr[s->nthr++] = t;
	return 0;
}

int rc_emu_start(struct rc_emu_sched *s, struct rc_emu_auxsink *sink,
		 struct rc_ptenc_config *ecfg, const struct rc_emu_opts *o, uint64_t vstart,
		 FILE *truth, char *err, size_t errlen)
{
	sink->chunk = o->aux_chunk ? o->aux_chunk : RC_EMU_AUX_CHUNK;
	sink->drop_aux = o->drop_aux;
	sink->truth = truth;
	ecfg->psb_period = o->psb_period;
	ecfg->mtc = true;
	ecfg->mtc_freq = o->mtc_period_set ? o->mtc_period : 3;
	ecfg->cyc = o->cyc;
	ecfg->time_zero = vstart;
	s->ncpu = o->cpus;
	s->cpu = calloc(s->ncpu, sizeof(*s->cpu));
	s->sink = sink;
	s->truth = truth;
	if (!s->cpu) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (unsigned c = 0; c < s->ncpu; c++) {
		s->cpu[c].q.enc = rc_ptenc_new(ecfg, (int)c);
		s->cpu[c].q.cpu = c;
		if (!s->cpu[c].q.enc) {
			snprintf(err, errlen, "cannot make a PT encoder (bad --psb-period?)");
			return -EINVAL;
		}
		s->cpu[c].now = vstart;
		s->cpu[c].ovf_mark = o->inject_ovf;
	}
	rc_emu_irq_init(s, o->irq_rate, o->seed);
	if (truth)
		fprintf(truth, "# ptflame-truth 1 ns_per_insn=%" PRIu64 " cpus=%u\n", o->ns_per_insn,
			s->ncpu);
	int rc = rc_perf_create(o->output, &s->w, err, errlen);
	if (rc < 0)
		return rc;
	if (o->compress && (rc = rc_perf_compress(s->w, o->compress))) {
		snprintf(err, errlen, "%s", rc_perf_errmsg(s->w));
		return rc;
	}
	sink->w = s->w;
	return 0;
}

void rc_emu_sched_free(struct rc_emu_sched *s)
{
	free(s->thr);
	s->thr = NULL;
	s->nthr = s->cthr = 0;
	for (unsigned c = 0; s->cpu && c < s->ncpu; c++)
		rc_ptenc_free(s->cpu[c].q.enc);
	free(s->cpu);
	s->cpu = NULL;
	s->ncpu = 0;
}

void rc_emu_make_ready(struct rc_emu_sched *s, struct rc_emu_sthr *t, uint64_t when)
{
	t->state = RC_EMU_READY;
	t->ready_ns = when;
	t->seq = ++s->seq;
}

struct rc_emu_sthr *rc_emu_pick_ready(const struct rc_emu_sched *s, bool limit, uint64_t now)
{
	struct rc_emu_sthr *best = NULL;
	for (size_t i = 0; i < s->nthr; i++) {
		struct rc_emu_sthr *t = s->thr[i];
		if (t->state != RC_EMU_READY || (limit && t->ready_ns > now))
			continue;
		if (!best || t->ready_ns < best->ready_ns ||
		    (t->ready_ns == best->ready_ns && t->seq < best->seq))
			best = t;
	}
	return best;
}

int rc_emu_switch_in(struct rc_emu_sched *s, unsigned c, struct rc_emu_sthr *t, pid_t prev_pid,
		     pid_t prev_tid)
{
	struct rc_emu_cpu *v = &s->cpu[c];
	uint64_t rt = v->now - RC_EMU_SWITCH_NS / 2;
	int rc;
	/* (its event scheduled in: TraceEn set, TSC TMA CBR at the switch) */
	if ((rc = rc_ptenc_trace_on(v->q.enc, rt)) < 0)
		return rc;
	if (!v->itrace_started) {
		struct dc_sample_id sid = rc_emu_sid(c, true, t->pid, t->tid, rt);
		if ((rc = rc_perf_itrace_start(s->w, (uint32_t)t->pid, (uint32_t)t->tid, &sid)) < 0)
			return rc;
		v->itrace_started = true;
	}
	if (v->idle_out_pending) {
		struct dc_sample_id sid = rc_emu_sid(c, false, 0, 0, rt);
		if ((rc = rc_perf_switch_cpu_wide(s->w, true, false, (uint32_t)t->pid,
						  (uint32_t)t->tid, &sid)) < 0)
			return rc;
		v->idle_out_pending = false;
	}
	struct dc_sample_id sid = rc_emu_sid(c, false, t->pid, t->tid, rt);
	if ((rc = rc_perf_switch_cpu_wide(s->w, false, false, (uint32_t)prev_pid,
					  (uint32_t)prev_tid, &sid)) < 0)
		return rc;
	t->state = RC_EMU_ONCPU;
	t->cpu = (int)c;
	t->slice_used = 0;
	v->cur = t;
	rc_emu_truth(s->truth, rt, (int)c, t->pid, t->tid, "switch-in");
	return s->switched_in ? s->switched_in(s->ctx, c, t, rt) : 0;
}

/* The idle CPU that would start a thread ready at READY soonest: the
 * smallest max(clock, READY), the lowest index among equals; -1: none. */
static int best_idle(const struct rc_emu_sched *s, uint64_t ready)
{
	int best = -1;
	uint64_t best_at = 0;
	for (unsigned c = 0; c < s->ncpu; c++) {
		const struct rc_emu_cpu *v = &s->cpu[c];
		if (v->cur)
			continue;
		uint64_t at = v->now > ready ? v->now : ready;
		if (best < 0 || at < best_at) {
			best = (int)c;
			best_at = at;
		}
	}
	return best;
}

/* Idle CPUs take the ready threads (earliest ready first, FIFO among
 * equals), each the idle CPU that starts it soonest, as long as that CPU
 * is idle before BEFORE: wake-up and idle balancing. A busy CPU whose
 * clock is at BEFORE then takes only a thread no idle CPU could have
 * started earlier. */
static int place_ready(struct rc_emu_sched *s, uint64_t before)
{
	for (;;) {
		struct rc_emu_sthr *t = rc_emu_pick_ready(s, false, 0);
		if (!t)
			return 0;
		int c = best_idle(s, t->ready_ns);
		if (c < 0)
			return 0;
		struct rc_emu_cpu *v = &s->cpu[c];
		uint64_t at = v->now > t->ready_ns ? v->now : t->ready_ns;
		if (at >= before)
			return 0;  /* (so for every later-ready thread too) */
		/* a busy CPU not that far yet may leave (or preempt) before
		 * AT and take it sooner: not yet (the backends step the CPU
		 * behind first) */
		for (unsigned b = 0; b < s->ncpu && !s->nowait; b++)
			if (s->cpu[b].cur && s->cpu[b].now < at)
				return 0;
		v->now = rc_emu_idle_switch_in(v->now, t->ready_ns);
		v->idle_out_pending = true;
		int rc = rc_emu_switch_in(s, (unsigned)c, t, 0, 0);
		if (rc < 0)
			return rc;
	}
}

/* Is a busy CPU other than c behind c's clock (it may idle before it)? */
static bool lagging(const struct rc_emu_sched *s, unsigned c)
{
	for (unsigned b = 0; b < s->ncpu && !s->nowait; b++)
		if (b != c && s->cpu[b].cur && s->cpu[b].now < s->cpu[c].now)
			return true;
	return false;
}

int rc_emu_preempt_due(struct rc_emu_sched *s, unsigned c)
{
	struct rc_emu_cpu *v = &s->cpu[c];
	int rc = place_ready(s, v->now);
	if (rc < 0)
		return rc;
	return !lagging(s, c) && rc_emu_pick_ready(s, true, v->now) != NULL;
}

int rc_emu_cpu_leave(struct rc_emu_sched *s, unsigned c, bool preempt)
{
	struct rc_emu_cpu *v = &s->cpu[c];
	struct rc_emu_sthr *t = v->cur;
	bool stop = s->stop && *s->stop;
	/* (still busy here: the threads an idle CPU starts sooner go there) */
	int rc = stop ? 0 : place_ready(s, v->now);
	if (rc < 0)
		return rc;
	v->cur = NULL;
	v->on = false;
	/* (with a busy CPU behind, c idles: the ready threads go where they
	 * start soonest once it caught up) */
	struct rc_emu_sthr *next = stop || lagging(s, c) ? NULL : rc_emu_pick_ready(s, true, v->now);
	rc_emu_truth(s->truth, v->now, (int)c, t->pid, t->tid, "switch-out %s",
		     preempt ? "preempt" : "block");
	/* (its event scheduled out: TraceEn clear, no MTC until the next) */
	if ((rc = rc_ptenc_trace_off(v->q.enc, v->now)) < 0)
		return rc;
	struct dc_sample_id sid = rc_emu_sid(c, false, t->pid, t->tid, v->now);
	rc = rc_perf_switch_cpu_wide(s->w, true, preempt, next ? (uint32_t)next->pid : 0,
				     next ? (uint32_t)next->tid : 0, &sid);
	if (rc < 0)
		return rc;
	if (!next) {
		v->idle_out_pending = true;
		return rc_emu_cpu_drain(s, c, false);
	}
	v->now += RC_EMU_SWITCH_NS;
	return rc_emu_switch_in(s, c, next, t->pid, t->tid);
}

int rc_emu_cpu_drain(struct rc_emu_sched *s, unsigned c, bool final)
{
	struct rc_emu_cpu *v = &s->cpu[c];
	return rc_emu_drain(s->sink, &v->q, final, v->cur ? v->cur->pid : 0,
			    v->cur ? v->cur->tid : 0, v->now);
}

int rc_emu_stop_at(struct rc_emu_sched *s, uint64_t end)
{
	for (unsigned c = 0; c < s->ncpu; c++) {
		struct dc_sample_id sid = rc_emu_sid(c, true, 0, 0, end);
		int rc = rc_perf_aux(s->sink->w, s->cpu[c].q.aux_off, 0, 0, &sid);

		if (rc)
			return rc;
	}
	return 0;
}

int rc_emu_assign_idle(struct rc_emu_sched *s)
{
	return place_ready(s, UINT64_MAX);
}

uint64_t rc_emu_latest_now(const struct rc_emu_sched *s)
{
	uint64_t m = 0;
	for (unsigned c = 0; c < s->ncpu; c++)
		if (s->cpu[c].now > m)
			m = s->cpu[c].now;
	return m;
}

/* splitmix64: small, good enough for test schedules */
static uint64_t next_rand(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t irq_gap(struct rc_emu_sched *s, struct rc_emu_cpu *v)
{
	uint64_t mean = 1000000 / s->irq_rate;
	if (mean < 1)
		mean = 1;
	return 1 + next_rand(&v->rng) % (2 * mean - 1);
}

void rc_emu_irq_init(struct rc_emu_sched *s, uint64_t rate, uint64_t seed)
{
	s->irq_rate = rate;
	if (!rate)
		return;
	for (unsigned c = 0; c < s->ncpu; c++) {
		s->cpu[c].rng = seed * 0x100000001b3ull + c;
		s->cpu[c].irq_left = irq_gap(s, &s->cpu[c]);
	}
}

void rc_emu_irq_count(struct rc_emu_sched *s, unsigned c, uint64_t n)
{
	struct rc_emu_cpu *v = &s->cpu[c];
	v->irq_left = v->irq_left > n ? v->irq_left - n : 0;
}

int rc_emu_irq_at(struct rc_emu_sched *s, unsigned c, uint64_t ip)
{
	struct rc_emu_cpu *v = &s->cpu[c];
	struct rc_emu_sthr *t = v->cur;
	if (!s->irq_rate || v->irq_left || !t || !v->on)
		return 0;
	int rc = rc_ptenc_disable(v->q.enc, v->now, ip, RC_PTENC_OFF_ASYNC);
	if (rc < 0 || (rc = rc_emu_cpu_drain(s, c, false)) < 0)
		return rc;
	rc_emu_truth(s->truth, v->now, (int)c, t->pid, t->tid, "interrupt %#" PRIx64, ip);
	v->now += RC_EMU_IRQ_MIN_NS + next_rand(&v->rng) % (RC_EMU_IRQ_MAX_NS - RC_EMU_IRQ_MIN_NS + 1);
	rc_emu_truth(s->truth, v->now, (int)c, t->pid, t->tid, "iret %#" PRIx64, ip);
	if ((rc = rc_ptenc_enable(v->q.enc, v->now, ip)) < 0 ||
	    (rc = rc_emu_cpu_drain(s, c, false)) < 0)
		return rc;
	v->irq_left = irq_gap(s, v);
	return 1;
}
