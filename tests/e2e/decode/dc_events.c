/* dc_events FILE: print the branch events decoder/ makes of a perf.data
 * file, one per line: "TIME CPU PID TID KIND REASON FROM TO NAME_FROM
 * NAME_TO SYSNO" (KIND call/ret/jump/on/off/lost; SYSNO -1 unknown), then
 * a "# stats" line. For the
 * decode e2e tests, which compare them with the emulator's truth log.
 * DC_DIGEST=1 (set, not empty): print, in place of the events and comms, one line "# digest
 * events N hash H": H the FNV-1a state (dc_fnv) over every field of every event
 * and comm, in order (the same fields the lines hold, names included), for
 * tests that only compare two decodings of a large trace (formatting
 * millions of lines took three quarters of the time).
 * DC_ORDER=1: also check the session's merge: every event, comm, wake and
 * fork comes after the events before it in time (none of those is later
 * than it), and a thread switched out (TRACE_OFF SWITCH or PREEMPT) has no
 * user-mode event (a branch, a syscall, a fault) before its next
 * TRACE_ON; each one that does not is said on stderr, and the exit status
 * is 3. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#include "decoder/dc_hash.h"
#include "decoder/decoder.h"

struct out {
	struct dc_symbols *sym;
	FILE *f;
	bool bench;                /* count only: no output per event */
	bool digest;               /* DC_DIGEST: hash, no output per event */
	uint64_t keys;
	uint64_t hash, n;
	bool order;                /* DC_ORDER: check the merge's order     */
	uint64_t last_ev;          /* the latest event time delivered       */
	uint64_t misordered;
	struct dc_hash out;        /* DC_ORDER: tid -> 1 while switched out */
};

/* DC_ORDER: something delivered at time t (an event, comm, wake or fork),
 * after events up to o->last_ev. */
static void order_check(struct out *o, const char *what, uint64_t t)
{
	if (!o->order || t >= o->last_ev)
		return;
	if (o->misordered++ < 5)
		fprintf(stderr, "dc_events: %s at %" PRIu64 " came after an event at %" PRIu64 "\n",
			what, t, o->last_ev);
}

/* DC_ORDER: a thread switched out runs no user code until it is back on. */
static void out_check(struct out *o, const struct dc_event *e)
{
	uint64_t v = 0;
	bool user = e->kind == DC_EV_CALL || e->kind == DC_EV_RETURN || e->kind == DC_EV_JUMP ||
		    (e->kind == DC_EV_TRACE_OFF &&
		     (e->reason == DC_OFF_SYSCALL || e->reason == DC_OFF_FAULT));

	if (!o->order)
		return;
	if (e->kind == DC_EV_TRACE_ON)
		dc_hash_put(&o->out, e->tid, 0);
	else if (e->kind == DC_EV_TRACE_OFF &&
		 (e->reason == DC_OFF_SWITCH || e->reason == DC_OFF_PREEMPT))
		dc_hash_put(&o->out, e->tid, 1);
	else if (user && dc_hash_get(&o->out, e->tid, &v) && v && o->misordered++ < 5)
		fprintf(stderr, "dc_events: thread %" PRIu32 " switched out has an event (kind %u "
			"reason %u) at %" PRIu64 "\n", e->tid, e->kind, e->reason, e->time_ns);
}

/* The fields of one line, numbers then strings (each with its NUL, so
 * that "ab" "c" and "a" "bc" differ). */
static void digest(struct out *o, const uint64_t *v, size_t nv, const char *s1, const char *s2)
{
	o->hash = dc_fnv(o->hash, (const char *)v, nv * sizeof(*v));
	o->hash = dc_fnv(o->hash, s1, strlen(s1) + 1);
	if (s2)
		o->hash = dc_fnv(o->hash, s2, strlen(s2) + 1);
}

static const char *name(struct dc_symbols *sym, uint32_t pid, uint64_t ip)
{
	const char *n;

	if (!ip)
		return "-";
	n = dc_sym_name(sym, dc_sym_func_key(sym, pid, ip));
	return n ? n : "[unknown]";
}

static int on_event(const struct dc_event *e, void *ctx)
{
	static const char *const kinds[] = { "?", "call", "ret", "jump", "on", "off", "lost",
					     "inline" };
	struct out *o = ctx;
	char n1[256], n2[256];

	order_check(o, "an event", e->time_ns);
	out_check(o, e);
	if (e->time_ns > o->last_ev)
		o->last_ev = e->time_ns;
	if (o->bench) {
		/* what a consumer does per event: a function key per ip */
		if (e->to_ip)
			o->keys += dc_sym_func_key(o->sym, e->pid, e->to_ip);
		return 0;
	}
	if (o->digest) {
		uint64_t v[] = { 'e', e->time_ns, e->cpu, e->pid, e->tid, e->kind, e->reason,
				 e->from_ip, e->to_ip, e->sysno };

		digest(o, v, sizeof(v) / sizeof(v[0]), name(o->sym, e->pid, e->from_ip),
		       name(o->sym, e->pid, e->to_ip));
		o->n++;
		return 0;
	}
	/* names may contain spaces: replace them to keep the columns */
	snprintf(n1, sizeof(n1), "%s", name(o->sym, e->pid, e->from_ip));
	snprintf(n2, sizeof(n2), "%s", name(o->sym, e->pid, e->to_ip));
	for (char *p = n1; *p; p++)
		if (*p == ' ')
			*p = '_';
	for (char *p = n2; *p; p++)
		if (*p == ' ')
			*p = '_';
	fprintf(o->f, "%" PRIu64 " %d %u %u %s %u 0x%" PRIx64 " 0x%" PRIx64 " %s %s %d\n",
		e->time_ns, e->cpu == UINT16_MAX ? -1 : (int)e->cpu, e->pid, e->tid,
		e->kind < 8 ? kinds[e->kind] : "?", e->reason, e->from_ip, e->to_ip, n1, n2,
		e->sysno == UINT32_MAX ? -1 : (int)e->sysno);
	return 0;
}

static void on_comm(void *ctx, uint32_t pid, uint32_t tid, const char *comm, uint64_t t)
{
	struct out *o = ctx;

	order_check(o, "a comm", t);
	if (o->bench)
		return;
	if (o->digest) {
		uint64_t v[] = { 'c', t, pid, tid };

		digest(o, v, sizeof(v) / sizeof(v[0]), comm, NULL);
		return;
	}
	fprintf(o->f, "# comm %" PRIu64 " %u %u %s\n", t, pid, tid, comm);
}

static void on_wake(void *ctx, const struct dc_wake *w, const char *waker_comm)
{
	(void)waker_comm;
	order_check(ctx, "a wake", w->time);
}

static void on_fork(void *ctx, uint32_t ppid, uint32_t ptid, const char *parent_comm,
		    uint32_t pid, uint32_t tid, uint64_t time_ns)
{
	(void)ppid, (void)ptid, (void)parent_comm, (void)pid, (void)tid;
	order_check(ctx, "a fork", time_ns);
}

static void on_warning(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "dc_events: %s\n", msg);
}

int main(int argc, char **argv)
{
	struct out o = { .f = stdout, .hash = DC_FNV_BASIS };
	struct timespec t0, t1;
	double secs;
	struct dc_session_opts opts = { .on_comm = on_comm, .on_warning = on_warning, .ctx = &o,
					.syscall_numbers = true };
	struct dc_session_stats st;
	struct dc_session *s;
	char err[512];
	int ret;

	if (argc < 2) {
		fprintf(stderr, "usage: dc_events FILE [--bench]\n");
		return 2;
	}
	o.bench = argc > 2 && !strcmp(argv[2], "--bench");
	o.digest = !o.bench && getenv("DC_DIGEST") && *getenv("DC_DIGEST");
	/* DC_JOBS=N: decode with N threads (dc_session_opts.jobs) */
	if (getenv("DC_JOBS"))
		opts.jobs = (unsigned)atoi(getenv("DC_JOBS"));
	/* DC_AHEAD_EAGER=1: the workers start at once (dc_ptq_config) */
	opts.ahead_eager = getenv("DC_AHEAD_EAGER") != NULL;
	/* DC_INLINE=1: inline events too (report's default) */
	opts.inline_frames = getenv("DC_INLINE") != NULL;
	if ((o.order = getenv("DC_ORDER") && *getenv("DC_ORDER"))) {
		opts.on_wake = on_wake;
		opts.on_fork = on_fork;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = dc_session_open(argv[1], &opts, &s, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "dc_events: %s\n", err);
		return 1;
	}
	o.sym = dc_session_symbols(s);
	ret = dc_session_run(s, on_event, &o);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	dc_session_stats(s, &st);
	if (o.bench) {
		printf("# bench %.3f s, %.2f MB/s of PT, %.0f events/s\n", secs,
		       (double)st.bytes_decoded / 1e6 / secs, (double)st.events / secs);
		printf("# walk windows %" PRIu64 " bails %" PRIu64 "\n", st.walk_windows,
		       st.walk_bails);
	}
	if (o.digest)
		printf("# digest events %" PRIu64 " hash %016" PRIx64 "\n", o.n, o.hash);
	printf("# stats queues %" PRIu64 " threads %" PRIu64 " events %" PRIu64 " blocks %" PRIu64
	       " bytes %" PRIu64 " of %" PRIu64 " lost_ovf %" PRIu64 " lost_truncated %" PRIu64
	       " lost_decode %" PRIu64 " missing %" PRIu64 " mtc_period_ns %" PRIu64
	       " early_maps %" PRIu64 "\n",
	       st.queues, st.threads, st.events, st.blocks, st.bytes_decoded, st.bytes_total,
	       st.lost_ovf, st.lost_truncated, st.lost_decode, st.missing_binaries,
	       st.mtc_period_ns, st.early_maps);
	if (opts.jobs > 1) {
		printf("# ahead windows %" PRIu64 " deviations %" PRIu64 "\n# ahead prebuilt %" PRIu64
		       "\n# ahead queues %" PRIu64 "\n", st.ahead_windows, st.ahead_deviations,
		       st.ahead_prebuilt, st.ahead_queues);
		printf("# ahead dwarf asked %" PRIu64 " opened %" PRIu64 "\n", st.dwarf_asked,
		       st.dwarf_preloaded);
	}
	if (ret) {
		fprintf(stderr, "dc_events: %s\n", dc_session_errmsg(s));
		dc_session_close(s);
		return 1;
	}
	dc_session_close(s);
	dc_hash_free(&o.out);
	if (o.misordered) {
		fprintf(stderr, "dc_events: %" PRIu64 " events or sideband records after later events\n",
			o.misordered);
		return 3;
	}
	return 0;
}
