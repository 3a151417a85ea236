/* Unit test: the thread at a TIP.PGE on a coarse clock (no CYC, MTC only;
 * decoder/session.c, "the thread at a TIP.PGE on a coarse clock"), in the
 * case a clone makes: parent and child both resume at the same ip X. The
 * parent is preempted right after clone returns: its stint is a TIP.PGE at
 * X and at once an asynchronous disable (FUP X + TIP.PGD, nothing
 * executed), then its switch-out (preempt); the child is switched in
 * within the same MTC period, and its code starts with a TIP.PGE at X and
 * runs on to a call. A tie between the two stints for the second PGE once
 * gave the child's code to the parent (and from there the two threads'
 * code was swapped). The file is written here, with the record/ writer,
 * one per-CPU AUX queue encoded by record/ptenc.c; the code at X is this
 * test's own (MMAP2 of its executable), so libipt decodes real bytes. The
 * expected threads come from how the file is built: the first PGE is the
 * parent's, the second PGE and the call after it the child's. A second
 * test (below) has a stint that begins after the MTC right after a PGE
 * timed at a TSC. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "decoder/decoder.h"
#include "record/record.h"
#include "record/emu_out.h"
#include "record/ptenc.h"

#define PARENT 4100u
#define CHILD 4101u
#define T0 1000000000ull        /* perf-clock ns at TSC 0 */
#define MTC_FREQ 9u             /* one MTC period: 2^9 * 64 / 2 ns = 16384 ns */
#define MAX_CODE 64             /* instructions walked from X at most */
#define MAX_EVS 64

/* ---- the code at X: a function that calls another -------------------- */

volatile int pge_clone_sink;

/* (not inlined and with a side effect: its call stays a call) */
__attribute__((noinline)) int pge_clone_leaf(int x)
{
	pge_clone_sink = x;
	return x * 3;
}

/* X: where the parent and the child both resume after the clone. */
__attribute__((noinline)) int pge_clone_entry(int x)
{
	return pge_clone_leaf(x) - 1;
}

/* The instructions from ip up to and including the first one of class
 * stop (RC_INSN_CALL or RC_INSN_RET), conditional branches not taken,
 * direct jumps followed, as the encoder wants them: out[n - 1] is that
 * one, a return going to ret_to. Returns n. */
static size_t walk_to(uint64_t ip, uint8_t stop, uint64_t ret_to, struct rc_insn *out)
{
	csh cs;
	size_t n = 0;

	assert_int_equal(rc_insn_cs_open(&cs), 0);
	while (n < MAX_CODE) {
		struct rc_insn *in = &out[n++];

		assert_int_equal(rc_insn_classify(cs, (const uint8_t *)(uintptr_t)ip, 16, ip, in), 0);
		if (in->cls == RC_INSN_CALL || in->cls == RC_INSN_JMP)
			in->next_ip = in->target;
		else if (in->cls == RC_INSN_RET && stop == RC_INSN_RET)
			in->next_ip = ret_to;
		else if (in->cls == RC_INSN_OTHER || in->cls == RC_INSN_JCC)
			in->next_ip = ip + in->len;
		else
			fail_msg("no %u-class insn before a %u-class one at %#llx", stop, in->cls,
				 (unsigned long long)ip);
		if (in->cls == stop)
			break;
		if (in->cls == RC_INSN_CALL)
			fail_msg("a call before the %u-class insn at %#llx", stop,
				 (unsigned long long)ip);
		ip = in->next_ip;
	}
	cs_close(&cs);
	assert_int_equal(out[n - 1].cls, stop);
	return n;
}

/* The child's instructions from X up to and including the first call. */
static size_t walk_to_call(uint64_t x, struct rc_insn *out)
{
	return walk_to(x, RC_INSN_CALL, 0, out);
}

/* ---- the file ------------------------------------------------------------ */

struct tmp {
	char dir[64];
	char path[128];
};

/* The executable mapping of this test that holds ip, as an MMAP2 of the
 * parent (the child shares its address space). */
static void mmap_self(struct rc_perf_writer *w, uint64_t ip, uint64_t t)
{
	char line[8192];
	FILE *f = fopen("/proc/self/maps", "r");
	struct dc_sample_id sid = rc_emu_sid(0, false, PARENT, PARENT, t);
	bool found = false;

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff, ino;
		unsigned maj, min;
		char perms[8], path[4096] = "";

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095s", &start, &end, perms,
			   &pgoff, &maj, &min, &ino, path) < 8 || ip < start || ip >= end)
			continue;
		struct dc_rec_mmap m = {
			.pid = PARENT, .tid = PARENT, .start = start, .len = end - start,
			.pgoff = pgoff, .is_mmap2 = true, .maj = maj, .min = min, .ino = ino,
			.prot = 5, .flags = 2, .filename = path,
		};
		assert_int_equal(rc_perf_mmap2(w, &m, &sid), 0);
		found = true;
	}
	fclose(f);
	assert_true(found);
}

/* Times (ns after T0), up to T_OFF_C all in the MTC period the trace's
 * TSC starts: the parent's PGE and PGD, its switch-out (preempt) and the
 * child's switch-in, the child's PGE, its code, and its PGD. Then, a few
 * MTC periods later, the child goes on where it was interrupted (T_BACK_C,
 * at once interrupted again): the MTCs make the queue's clock a coarse
 * one. The child leaves the CPU at T_END. */
enum {
	T_ON_P = 1000, T_OFF_P = 1010, T_OUT_P = 1100, T_IN_C = 1200, T_ON_C = 1300,
	T_OFF_C = 1400, T_BACK_C = 50000, T_END = 60000,
};

static void sideband_before(struct rc_perf_writer *w, uint64_t x)
{
	struct dc_sample_id sid = rc_emu_sid(0, false, PARENT, PARENT, T0 + 100);

	assert_int_equal(rc_perf_comm(w, PARENT, PARENT, "pge_clone", true, &sid), 0);
	mmap_self(w, x, T0 + 110);
	sid = rc_emu_sid(0, true, PARENT, PARENT, T0 + 200);
	assert_int_equal(rc_perf_itrace_start(w, PARENT, PARENT, &sid), 0);
	sid = rc_emu_sid(0, false, PARENT, PARENT, T0 + 200);
	assert_int_equal(rc_perf_switch_cpu_wide(w, false, false, 0, 0, &sid), 0);
	/* the clone: the child exists before the parent returns to X */
	sid = rc_emu_sid(0, false, PARENT, CHILD, T0 + 300);
	assert_int_equal(rc_perf_fork(w, PARENT, PARENT, CHILD, PARENT, T0 + 300, &sid), 0);
}

/* The parent preempted right after clone returned, the child in. */
static void sideband_switch(struct rc_perf_writer *w)
{
	struct dc_sample_id sid = rc_emu_sid(0, false, PARENT, PARENT, T0 + T_OUT_P);

	assert_int_equal(rc_perf_switch_cpu_wide(w, true, true, PARENT, CHILD, &sid), 0);
	sid = rc_emu_sid(0, false, PARENT, CHILD, T0 + T_IN_C);
	assert_int_equal(rc_perf_switch_cpu_wide(w, false, false, PARENT, PARENT, &sid), 0);
}

/* The PT of cpu 0: parent PGE X, FUP X + PGD; child PGE X, its code to the
 * call, FUP (the callee) + PGD; MTCs; child PGE and FUP + PGD at the callee. */
static void encode(struct rc_ptenc *enc, uint64_t x, const struct rc_insn *code, size_t n)
{
	assert_int_equal(rc_ptenc_enable(enc, T0 + T_ON_P, x), 0);
	assert_int_equal(rc_ptenc_disable(enc, T0 + T_OFF_P, x, RC_PTENC_OFF_ASYNC), 0);
	assert_int_equal(rc_ptenc_enable(enc, T0 + T_ON_C, x), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(rc_ptenc_insn(enc, &code[i], T0 + T_ON_C + 1 + i), 0);
	assert_int_equal(rc_ptenc_disable(enc, T0 + T_OFF_C, code[n - 1].next_ip,
					  RC_PTENC_OFF_ASYNC), 0);
	assert_int_equal(rc_ptenc_enable(enc, T0 + T_BACK_C, code[n - 1].next_ip), 0);
	assert_int_equal(rc_ptenc_disable(enc, T0 + T_BACK_C + 10, code[n - 1].next_ip,
					  RC_PTENC_OFF_ASYNC), 0);
	assert_int_equal(rc_ptenc_flush(enc), 0);
}

static void aux_out(struct rc_perf_writer *w, struct rc_ptenc *enc)
{
	size_t size, padded;
	const uint8_t *d = rc_ptenc_data(enc, &size);
	uint8_t *buf;
	struct dc_sample_id sid = rc_emu_sid(0, true, CHILD, CHILD, T0 + T_END);

	padded = (size + 7) & ~(size_t)7;
	buf = calloc(1, padded);         /* zero bytes: PAD packets */
	assert_non_null(buf);
	memcpy(buf, d, size);
	assert_int_equal(rc_perf_auxtrace(w, buf, padded, 0, rc_ptenc_last_tsc(enc), 0,
					  (uint32_t)-1, 0), 0);
	assert_int_equal(rc_perf_aux(w, 0, padded, 0, &sid), 0);
	free(buf);
}

/* The file's start: its writer (header for one CPU) and the parent's
 * sideband, and an encoder on a coarse clock (MTC, no CYC). */
static const struct rc_ptenc_config coarse_cfg = {
	.mtc = true, .mtc_freq = MTC_FREQ, .cyc = false, .time_zero = T0,
};

static void file_open(const char *path, uint64_t x, struct rc_perf_writer **w,
		      struct rc_ptenc **enc)
{
	char err[256];

	*enc = rc_ptenc_new(&coarse_cfg, 0);
	assert_non_null(*enc);
	assert_int_equal(rc_perf_create(path, w, err, sizeof(err)), 0);
	assert_int_equal(rc_emu_header(*w, &coarse_cfg, 1, NULL, 0, false), 0);
	sideband_before(*w, x);
}

/* The file's end: the AUX data, the round, the header. */
static void file_close(struct rc_perf_writer *w, struct rc_ptenc *enc)
{
	char err[256];

	aux_out(w, enc);
	assert_int_equal(rc_perf_finished_round(w), 0);
	assert_int_equal(rc_perf_finish(w, err, sizeof(err)), 0);
	rc_ptenc_free(enc);
}

static void write_file(const char *path, uint64_t x, const struct rc_insn *code, size_t n)
{
	struct rc_perf_writer *w;
	struct rc_ptenc *enc;
	struct dc_sample_id sid;

	file_open(path, x, &w, &enc);
	sideband_switch(w);
	encode(enc, x, code, n);
	sid = rc_emu_sid(0, false, PARENT, CHILD, T0 + T_END);
	assert_int_equal(rc_perf_switch_cpu_wide(w, true, false, 0, 0, &sid), 0);
	file_close(w, enc);
}

/* ---- decoding ------------------------------------------------------------ */

struct seen {
	struct dc_event ev[MAX_EVS];
	size_t n;
};

static int on_event(const struct dc_event *ev, void *ctx)
{
	struct seen *s = ctx;

	if (s->n < MAX_EVS)
		s->ev[s->n++] = *ev;
	return 0;
}

static void on_warning(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "warning: %s\n", msg);
}

static void decode(const char *path, struct seen *seen)
{
	struct dc_session_opts so = { .on_warning = on_warning, .jobs = 1 };
	struct dc_session *s;
	char err[256];

	assert_int_equal(dc_session_open(path, &so, &s, err, sizeof(err)), 0);
	assert_int_equal(dc_session_run(s, on_event, seen), 0);
	dc_session_close(s);
}

/* (what was decoded, for a failure's log) */
static void dump(const struct seen *seen)
{
	for (size_t i = 0; i < seen->n; i++)
		print_message("ev %zu: kind %u reason %u tid %u %#llx -> %#llx @%llu\n", i,
			      seen->ev[i].kind, seen->ev[i].reason, seen->ev[i].tid,
			      (unsigned long long)seen->ev[i].from_ip,
			      (unsigned long long)seen->ev[i].to_ip,
			      (unsigned long long)seen->ev[i].time_ns);
}

/* Every event before the child's PGE (index on_c) is the parent's, every
 * one from it on the child's: only the child runs on the CPU after the
 * parent's switch-out. */
static bool threads_as_built(const struct seen *seen, size_t on_c)
{
	for (size_t i = 0; i < seen->n; i++)
		if (seen->ev[i].tid != (i < on_c ? PARENT : CHILD))
			return false;
	return true;
}

/* The index of the k-th (from 0) TRACE_ON at ip, or SIZE_MAX. */
static size_t nth_on(const struct seen *s, uint64_t ip, unsigned k)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->ev[i].kind == DC_EV_TRACE_ON && s->ev[i].to_ip == ip && !k--)
			return i;
	return SIZE_MAX;
}

/* A perf.data path in a new directory named after tmpl (mkdtemp). */
static void tmp_open(struct tmp *t, const char *tmpl)
{
	snprintf(t->dir, sizeof(t->dir), "%s", tmpl);
	assert_non_null(mkdtemp(t->dir));
	snprintf(t->path, sizeof(t->path), "%s/perf.data", t->dir);
}

/* Decode the file written there into *seen; the directory goes. */
static void tmp_decode(struct tmp *t, struct seen *seen)
{
	decode(t->path, seen);
	unlink(t->path);
	rmdir(t->dir);
}

/* The index of the first event of this kind at or after event i, or
 * SIZE_MAX. */
static size_t kind_from(const struct seen *s, size_t i, uint8_t kind)
{
	for (; i < s->n; i++)
		if (s->ev[i].kind == kind)
			return i;
	return SIZE_MAX;
}

static void test_clone_child_keeps_its_stint(void **state)
{
	uint64_t x = (uint64_t)(uintptr_t)&pge_clone_entry;
	struct rc_insn code[MAX_CODE];
	struct seen seen = { .n = 0 };
	struct tmp t;
	size_t n, on_p, on_c, call;

	(void)state;
	n = walk_to_call(x, code);
	tmp_open(&t, "/tmp/ptf-pgeclone-XXXXXX");
	write_file(t.path, x, code, n);
	tmp_decode(&t, &seen);

	on_p = nth_on(&seen, x, 0);
	on_c = nth_on(&seen, x, 1);
	call = kind_from(&seen, on_c, DC_EV_CALL);
	if (call == SIZE_MAX || !threads_as_built(&seen, on_c))
		dump(&seen);
	/* both PGEs at X, and the child's call decoded after the second */
	assert_true(on_p != SIZE_MAX && on_c != SIZE_MAX && call != SIZE_MAX);
	assert_int_equal(seen.ev[call].from_ip, code[n - 1].ip);
	assert_int_equal(seen.ev[call].to_ip, code[n - 1].target);
	assert_int_equal(seen.ev[on_p].tid, PARENT);
	assert_int_equal(seen.ev[on_c].tid, CHILD);
	assert_int_equal(seen.ev[call].tid, CHILD);
	assert_true(threads_as_built(&seen, on_c));
}

/* ---- a stint that begins after the PGE's MTC -----------------------------
 *
 * A TIP.PGE whose time was read at a TSC (after a long idle, more missed
 * MTC periods than the encoder sends MTCs for) lies anywhere in its MTC
 * period, so the period's MTC may come right after it. The TIP.PGEs read
 * ahead for it end at that MTC: a stint that begins after the MTC cannot
 * hold one of them, even when it begins and ends before L + P. Here the
 * parent (thread A) gets the CPU back at G + A_IN: its PGE at X (TSC) at
 * G + A_ON, its code to the call, an interrupt at the callee; its PGE
 * there at G + A_ON2 and the callee's code to its return (a packet), the
 * MTC at G + P, another interrupt and its switch-out (blocked, no
 * preempt) at G + A_OUT. The child (thread B) gets the CPU at G + B_IN,
 * still in the period of A's PGEs, runs the code at X from its PGE, and is
 * switched out at G + B_OUT (before G + A_ON + P). That B's stint owed one
 * of the PGEs read ahead at A's second PGE gave A's code from there to B.
 * Expected from how the file is built: A's PGEs, the call and the return
 * are A's; B's PGE at X (the third) and its call are B's. */
enum {
	G = 64 * 16384,               /* 64 MTC periods of idle: a TSC at A's PGE */
	A_IN = 15000, A_ON = 15500, A_OFF = 15600, A_ON2 = 15700,
	A_OFF2 = 16500, A_OUT = 16600,                /* (the MTC: 16384) */
	B_IN = 17000, B_ON = 17100, B_OFF = 17300, B_OUT = 17400,
};

/* The callee's instructions from ip up to and including its return (to
 * ret_to); the count. */
static size_t walk_to_ret(uint64_t ip, uint64_t ret_to, struct rc_insn *out)
{
	return walk_to(ip, RC_INSN_RET, ret_to, out);
}

/* One stint's trace: PGE at x at `on`, the code from on + 1 ns, an
 * interrupt at its last instruction's next ip at `off`. */
static void encode_run(struct rc_ptenc *enc, uint64_t x, const struct rc_insn *code,
		       size_t n, uint64_t on, uint64_t off)
{
	assert_int_equal(rc_ptenc_enable(enc, on, x), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(rc_ptenc_insn(enc, &code[i], on + 1 + i), 0);
	assert_int_equal(rc_ptenc_disable(enc, off, code[n - 1].next_ip, RC_PTENC_OFF_ASYNC), 0);
}

static void switch_rec(struct rc_perf_writer *w, uint32_t tid, bool out, uint64_t t)
{
	struct dc_sample_id sid = rc_emu_sid(0, false, PARENT, tid, T0 + t);

	assert_int_equal(rc_perf_switch_cpu_wide(w, out, false, 0, 0, &sid), 0);
}

struct code2 {
	struct rc_insn to_call[MAX_CODE], to_ret[MAX_CODE];
	size_t n_call, n_ret;
};

static void write_file_mtc(const char *path, uint64_t x, const struct code2 *c)
{
	uint64_t callee = c->to_call[c->n_call - 1].next_ip;
	struct rc_perf_writer *w;
	struct rc_ptenc *enc;

	file_open(path, x, &w, &enc);   /* the parent in at 200 */
	/* the parent's first stint: PGE at X, interrupted there (it goes on
	 * at X), blocked */
	assert_int_equal(rc_ptenc_enable(enc, T0 + T_ON_P, x), 0);
	assert_int_equal(rc_ptenc_disable(enc, T0 + T_OFF_P, x, RC_PTENC_OFF_ASYNC), 0);
	switch_rec(w, PARENT, true, T_OUT_P);
	switch_rec(w, PARENT, false, G + A_IN);
	encode_run(enc, x, c->to_call, c->n_call, T0 + G + A_ON, T0 + G + A_OFF);
	encode_run(enc, callee, c->to_ret, c->n_ret, T0 + G + A_ON2, T0 + G + A_OFF2);
	switch_rec(w, PARENT, true, G + A_OUT);
	switch_rec(w, CHILD, false, G + B_IN);
	encode_run(enc, x, c->to_call, c->n_call, T0 + G + B_ON, T0 + G + B_OFF);
	switch_rec(w, CHILD, true, G + B_OUT);
	assert_int_equal(rc_ptenc_flush(enc), 0);
	file_close(w, enc);
}

static void test_stint_after_the_mtc(void **state)
{
	uint64_t x = (uint64_t)(uintptr_t)&pge_clone_entry, callee;
	struct code2 c;
	struct seen seen = { .n = 0 };
	struct tmp t;
	size_t on_a2, on_b, ret_a, call_b;

	(void)state;
	c.n_call = walk_to_call(x, c.to_call);
	callee = c.to_call[c.n_call - 1].next_ip;
	c.n_ret = walk_to_ret(callee, c.to_call[c.n_call - 1].ip + c.to_call[c.n_call - 1].len,
			      c.to_ret);
	tmp_open(&t, "/tmp/ptf-pgemtc-XXXXXX");
	write_file_mtc(t.path, x, &c);
	tmp_decode(&t, &seen);

	on_a2 = nth_on(&seen, callee, 0);
	on_b = nth_on(&seen, x, 2);
	ret_a = on_a2 == SIZE_MAX ? SIZE_MAX : kind_from(&seen, on_a2, DC_EV_RETURN);
	call_b = on_b == SIZE_MAX ? SIZE_MAX : kind_from(&seen, on_b, DC_EV_CALL);
	if (ret_a == SIZE_MAX || call_b == SIZE_MAX || !threads_as_built(&seen, on_b))
		dump(&seen);
	/* A's PGE at the callee and its return, then B's PGE at X and call */
	assert_true(ret_a != SIZE_MAX && call_b != SIZE_MAX && ret_a < on_b);
	assert_int_equal(seen.ev[ret_a].from_ip, c.to_ret[c.n_ret - 1].ip);
	assert_int_equal(seen.ev[call_b].from_ip, c.to_call[c.n_call - 1].ip);
	assert_int_equal(seen.ev[on_a2].tid, PARENT);
	assert_int_equal(seen.ev[ret_a].tid, PARENT);
	assert_int_equal(seen.ev[on_b].tid, CHILD);
	assert_int_equal(seen.ev[call_b].tid, CHILD);
	assert_true(threads_as_built(&seen, on_b));
}

/* ---- a queue with no MTC yet ----------------------------------------------
 *
 * A CPU whose stints all follow idles of more MTC periods than the encoder
 * sends MTCs for has TSCs only, though the recording has MTC: the time
 * read at a TIP.PGE after another one in the same period is still the
 * TSC's, a lower bound. Here the parent's stint (PGE at X at T_ON_P, its
 * code to the call, an interrupt at the callee, blocked) and the child's
 * (switched in at T_IN_C, the same code from its PGE at X) fall in the
 * period of the trace's first TSC, and the trace has no MTC. Anchored at
 * that TSC, the child's PGE and code went to the parent. Expected from how
 * the file is built: the first PGE at X and its call are the parent's, the
 * second PGE at X and its call the child's. */
static void write_file_tsc_only(const char *path, uint64_t x, const struct rc_insn *code,
				size_t n)
{
	struct rc_perf_writer *w;
	struct rc_ptenc *enc;

	file_open(path, x, &w, &enc);   /* the parent in at 200 */
	encode_run(enc, x, code, n, T0 + T_ON_P, T0 + T_OFF_P + 50);
	switch_rec(w, PARENT, true, T_OUT_P);
	switch_rec(w, CHILD, false, T_IN_C);
	encode_run(enc, x, code, n, T0 + T_ON_C, T0 + T_OFF_C);
	switch_rec(w, CHILD, true, T_OFF_C + 100);
	assert_int_equal(rc_ptenc_flush(enc), 0);
	file_close(w, enc);
}

static void test_tsc_only_queue(void **state)
{
	uint64_t x = (uint64_t)(uintptr_t)&pge_clone_entry;
	struct rc_insn code[MAX_CODE];
	struct seen seen = { .n = 0 };
	struct tmp t;
	size_t n, on_p, on_c, call_p, call_c;

	(void)state;
	n = walk_to_call(x, code);
	tmp_open(&t, "/tmp/ptf-pgetsc-XXXXXX");
	write_file_tsc_only(t.path, x, code, n);
	tmp_decode(&t, &seen);

	on_p = nth_on(&seen, x, 0);
	on_c = nth_on(&seen, x, 1);
	call_p = on_p == SIZE_MAX ? SIZE_MAX : kind_from(&seen, on_p, DC_EV_CALL);
	call_c = on_c == SIZE_MAX ? SIZE_MAX : kind_from(&seen, on_c, DC_EV_CALL);
	if (call_c == SIZE_MAX || !threads_as_built(&seen, on_c))
		dump(&seen);
	assert_true(call_p != SIZE_MAX && call_c != SIZE_MAX && call_p < on_c);
	assert_int_equal(seen.ev[call_c].from_ip, code[n - 1].ip);
	assert_int_equal(seen.ev[on_p].tid, PARENT);
	assert_int_equal(seen.ev[call_p].tid, PARENT);
	assert_int_equal(seen.ev[on_c].tid, CHILD);
	assert_int_equal(seen.ev[call_c].tid, CHILD);
	assert_true(threads_as_built(&seen, on_c));
}

/* ---- an interrupt long before a preemption ------------------------------
 *
 * The parent runs from X to the call and is interrupted at the callee
 * (FUP + TIP.PGD) at 1100; the interrupt's kernel time ends in a later
 * MTC period, at R: its PGE at the callee, and at once (nothing executed)
 * the preemption's FUP + TIP.PGD, the switch-out (preempt) and the
 * child's stint, its PGE at X and its code to the call, all in R's
 * period. The rule that an interrupt before a PGE most likely was the
 * preemption (test_clone_child_keeps_its_stint) gave the parent's return
 * from the interrupt to the child (none-42 of the stress loop: a stack
 * lost and started again): that interrupt came more than a period before
 * the switch-out. Expected from how the file is built: the PGE at the
 * callee is the parent's, the PGE at X after it and its call the child's. */
enum { R = 40000 };

static void write_file_late_preempt(const char *path, uint64_t x, const struct rc_insn *code,
				    size_t n)
{
	uint64_t callee = code[n - 1].next_ip;
	struct rc_perf_writer *w;
	struct rc_ptenc *enc;
	struct dc_sample_id sid;

	file_open(path, x, &w, &enc);   /* the parent in at 200 */
	encode_run(enc, x, code, n, T0 + T_ON_P, T0 + 1100);
	assert_int_equal(rc_ptenc_enable(enc, T0 + R, callee), 0);
	assert_int_equal(rc_ptenc_disable(enc, T0 + R + 1, callee, RC_PTENC_OFF_ASYNC), 0);
	sid = rc_emu_sid(0, false, PARENT, PARENT, T0 + R + 2);
	assert_int_equal(rc_perf_switch_cpu_wide(w, true, true, PARENT, CHILD, &sid), 0);
	sid = rc_emu_sid(0, false, PARENT, CHILD, T0 + R + 100);
	assert_int_equal(rc_perf_switch_cpu_wide(w, false, false, PARENT, PARENT, &sid), 0);
	encode_run(enc, x, code, n, T0 + R + 200, T0 + R + 300);
	switch_rec(w, CHILD, true, R + 400);
	assert_int_equal(rc_ptenc_flush(enc), 0);
	file_close(w, enc);
}

static void test_interrupt_before_preempt(void **state)
{
	uint64_t x = (uint64_t)(uintptr_t)&pge_clone_entry, callee;
	struct rc_insn code[MAX_CODE];
	struct seen seen = { .n = 0 };
	struct tmp t;
	size_t n, on_r, on_c, call_c;

	(void)state;
	n = walk_to_call(x, code);
	callee = code[n - 1].next_ip;
	tmp_open(&t, "/tmp/ptf-pgeirq-XXXXXX");
	write_file_late_preempt(t.path, x, code, n);
	tmp_decode(&t, &seen);

	on_r = nth_on(&seen, callee, 0);
	on_c = nth_on(&seen, x, 1);
	call_c = on_c == SIZE_MAX ? SIZE_MAX : kind_from(&seen, on_c, DC_EV_CALL);
	if (on_r == SIZE_MAX || call_c == SIZE_MAX || !threads_as_built(&seen, on_c))
		dump(&seen);
	assert_true(on_r != SIZE_MAX && call_c != SIZE_MAX && on_r < on_c);
	assert_int_equal(seen.ev[on_r].tid, PARENT);
	assert_int_equal(seen.ev[on_c].tid, CHILD);
	assert_int_equal(seen.ev[call_c].tid, CHILD);
	assert_true(threads_as_built(&seen, on_c));
}

/* One thread, one period: a syscall at X (TIP.PGD, no FUP) in which it
 * blocks (a switch-out that is no preemption), its switch-in, its return
 * to X and code up to the call, an interrupt at the callee (FUP + TIP.PGD)
 * and its return there; MTCs after. The two TRACE_OFFs are one period's,
 * so only the switch-out's kind tells which one it ended: an interrupt
 * does not wait. The return from the syscall must come after the
 * switch-in (before, the switch-out went under the interrupt, the wait
 * under the code between). */
enum { BLK_ON = 1000, BLK_OFF = 1010, BLK_OUT = 1100, BLK_IN = 3000, BLK_ON2 = 3100,
       BLK_IRQ = 3200, BLK_IRQ_RET = 3300, BLK_BACK = 50000, BLK_END = 60000 };

static void write_file_blocked(const char *path, uint64_t x, const struct rc_insn *code,
			       size_t n)
{
	uint64_t callee = code[n - 1].next_ip;
	struct rc_perf_writer *w;
	struct rc_ptenc *enc;
	struct dc_sample_id sid;

	file_open(path, x, &w, &enc);
	assert_int_equal(rc_ptenc_enable(enc, T0 + BLK_ON, x), 0);
	assert_int_equal(rc_ptenc_disable(enc, T0 + BLK_OFF, 0, RC_PTENC_OFF_FAR), 0);
	sid = rc_emu_sid(0, false, PARENT, PARENT, T0 + BLK_OUT);
	assert_int_equal(rc_perf_switch_cpu_wide(w, true, false, 0, 0, &sid), 0);
	sid = rc_emu_sid(0, false, PARENT, PARENT, T0 + BLK_IN);
	assert_int_equal(rc_perf_switch_cpu_wide(w, false, false, 0, 0, &sid), 0);
	assert_int_equal(rc_ptenc_enable(enc, T0 + BLK_ON2, x), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(rc_ptenc_insn(enc, &code[i], T0 + BLK_ON2 + 1 + i), 0);
	assert_int_equal(rc_ptenc_disable(enc, T0 + BLK_IRQ, callee, RC_PTENC_OFF_ASYNC), 0);
	assert_int_equal(rc_ptenc_enable(enc, T0 + BLK_IRQ_RET, callee), 0);
	assert_int_equal(rc_ptenc_disable(enc, T0 + BLK_IRQ_RET + 10, callee, RC_PTENC_OFF_ASYNC),
			 0);
	assert_int_equal(rc_ptenc_enable(enc, T0 + BLK_BACK, callee), 0);
	assert_int_equal(rc_ptenc_disable(enc, T0 + BLK_BACK + 10, callee, RC_PTENC_OFF_ASYNC), 0);
	assert_int_equal(rc_ptenc_flush(enc), 0);
	sid = rc_emu_sid(0, false, PARENT, PARENT, T0 + BLK_END);
	assert_int_equal(rc_perf_switch_cpu_wide(w, true, false, 0, 0, &sid), 0);
	file_close(w, enc);
}

static void test_blocked_in_syscall_not_interrupt(void **state)
{
	uint64_t x = (uint64_t)(uintptr_t)&pge_clone_entry;
	struct rc_insn code[MAX_CODE];
	struct seen seen = { .n = 0 };
	struct tmp t;
	size_t n, back, out = SIZE_MAX;

	(void)state;
	n = walk_to_call(x, code);
	tmp_open(&t, "/tmp/ptf-pgeblk-XXXXXX");
	write_file_blocked(t.path, x, code, n);
	tmp_decode(&t, &seen);

	back = nth_on(&seen, x, 1);   /* the return from the syscall */
	for (size_t i = 0; i < seen.n; i++)
		if (seen.ev[i].kind == DC_EV_TRACE_OFF && seen.ev[i].reason == DC_OFF_SWITCH &&
		    seen.ev[i].time_ns == T0 + BLK_OUT)
			out = i;
	if (back == SIZE_MAX || out == SIZE_MAX || back < out ||
	    seen.ev[back].time_ns < T0 + BLK_IN)
		dump(&seen);
	assert_true(back != SIZE_MAX && out != SIZE_MAX);
	assert_true(out < back);
	assert_true(seen.ev[back].time_ns >= T0 + BLK_IN);
	assert_int_equal(seen.ev[back].tid, PARENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clone_child_keeps_its_stint),
		cmocka_unit_test(test_stint_after_the_mtc),
		cmocka_unit_test(test_tsc_only_queue),
		cmocka_unit_test(test_interrupt_before_preempt),
		cmocka_unit_test(test_blocked_in_syscall_not_interrupt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
