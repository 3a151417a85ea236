/* Tests for decoder/script_import: `perf script` text -> branch events.
 *
 * Lines are generated with the printf formats perf itself uses
 * (tools/perf/builtin-script.c: perf_sample__fprintf_start, process_event,
 * perf_sample__fprintf_bts, perf_sample__fprintf_flags; util/event.c
 * perf_event__fprintf_auxtrace_error), varying which fields are present the
 * way -F and --ns vary them, for perf 5.x (flags "%-19s", "(x)" in "%4s")
 * and 6.x ("%-21s", "%6s").
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "decoder/script_import.h"

/* ----------------------------------------------------------- generator */

struct fmt {
	bool comm, pid, tid, cpu, ns, period, event, flags, sym, symoff, dso;
	bool perf5;               /* older flags widths                      */
};

struct br {
	const char *comm;
	int pid, tid, cpu;
	uint64_t time_ns;
	const char *flags;        /* perf's flag name, e.g. "call", "tr end  syscall" */
	uint64_t ip;
	const char *sym;          /* NULL: [unknown]                         */
	uint64_t off;
	const char *dso;
	uint64_t addr;
	const char *asym;
	uint64_t aoff;
	const char *adso;
};

static size_t put_loc(char *b, size_t n, const struct fmt *f, uint64_t ip,
		      const char *sym, uint64_t off, const char *dso)
{
	size_t len = (size_t)snprintf(b, n, "%16llx", (unsigned long long)ip);

	if (f->sym) {
		len += (size_t)snprintf(b + len, n - len, " ");
		if (!sym)
			len += (size_t)snprintf(b + len, n - len, "[unknown]");
		else if (f->symoff)
			len += (size_t)snprintf(b + len, n - len, "%s+0x%llx", sym,
						(unsigned long long)off);
		else
			len += (size_t)snprintf(b + len, n - len, "%s", sym);
	}
	if (f->dso)
		len += (size_t)snprintf(b + len, n - len, " (%s)", dso ? dso : "[unknown]");
	return len;
}

/* One sample line exactly as perf script prints it. */
static void gen(char *b, size_t n, const struct fmt *f, const struct br *r)
{
	size_t len = 0;

	if (f->comm)
		len += (size_t)snprintf(b + len, n - len, "%16s ", r->comm);
	if (f->pid && f->tid)
		len += (size_t)snprintf(b + len, n - len, "%7d/%-7d ", r->pid, r->tid);
	else if (f->tid)
		len += (size_t)snprintf(b + len, n - len, "%7d ", r->tid);
	if (f->cpu)
		len += (size_t)snprintf(b + len, n - len, "[%03d] ", r->cpu);
	if (f->ns) {
		len += (size_t)snprintf(b + len, n - len, "%5llu.%09llu: ",
					(unsigned long long)(r->time_ns / 1000000000ull),
					(unsigned long long)(r->time_ns % 1000000000ull));
	} else {
		char ts[32];

		snprintf(ts, sizeof(ts), "%llu.%06llu",
			 (unsigned long long)(r->time_ns / 1000000000ull),
			 (unsigned long long)(r->time_ns % 1000000000ull / 1000));
		len += (size_t)snprintf(b + len, n - len, "%12s: ", ts);
	}
	if (f->period)
		len += (size_t)snprintf(b + len, n - len, "%10llu ", 1ull);
	if (f->event)
		len += (size_t)snprintf(b + len, n - len, "%*s: ", 10, "branches:u");
	if (f->flags) {
		char fs[64];

		if (!strncmp(r->flags, "tr ", 3))
			snprintf(fs, sizeof(fs), "%s", r->flags);
		else
			snprintf(fs, sizeof(fs), f->perf5 ? "%-15s%4s" : "%-15s%6s", r->flags, "");
		len += (size_t)snprintf(b + len, n - len, f->perf5 ? "  %-19s " : "  %-21s ", fs);
	}
	len += (size_t)snprintf(b + len, n - len, " ");
	len += put_loc(b + len, n - len, f, r->ip, r->sym, r->off, r->dso);
	len += (size_t)snprintf(b + len, n - len, " => ");
	len += put_loc(b + len, n - len, f, r->addr, r->asym, r->aoff, r->adso);
	snprintf(b + len, n - len, "\n");
}

static const struct fmt fmt_default = {   /* perf script --itrace=cr */
	.comm = true, .tid = true, .cpu = true, .period = true, .event = true,
	.sym = true, .symoff = true, .dso = true,
};
static const struct fmt fmt_ptflame = {   /* --ns -F-event,-period,+addr,-comm,+flags,-dso */
	.tid = true, .cpu = true, .ns = true, .flags = true, .sym = true, .symoff = true,
};

/* ------------------------------------------------------------- parsing */

static void test_parse_default(void **state)
{
	char line[512];
	struct dc_script_line l;
	struct br r = { "my prog", 41, 42, 3, 12345678901234ull, "call",
		0x5555555551a0, "main", 0x17, "/tmp/x y/prog",
		0x555555555130, "foo(int, char)", 0, "/tmp/x y/prog" };
	(void)state;

	gen(line, sizeof(line), &fmt_default, &r);
	dc_script_parse_line(line, &l);
	assert_int_equal(l.kind, DC_SL_SAMPLE);
	assert_int_equal(l.comm.len, 7);
	assert_memory_equal(l.comm.s, "my prog", 7);
	assert_int_equal(l.pid, -1);
	assert_int_equal(l.tid, 42);
	assert_int_equal(l.cpu, 3);
	assert_true(l.has_time);
	/* without --ns perf prints microseconds */
	assert_int_equal(l.time_ns, 12345678901000ull);
	assert_false(l.has_flags);
	assert_int_equal(l.from.ip, 0x5555555551a0);
	assert_int_equal(l.from.sym.len, 4);
	assert_memory_equal(l.from.sym.s, "main", 4);
	assert_true(l.from.has_off);
	assert_int_equal(l.from.off, 0x17);
	assert_true(l.from.has_dso);
	assert_int_equal(l.from.dso.len, strlen("/tmp/x y/prog"));
	assert_true(l.has_addr);
	assert_int_equal(l.to.ip, 0x555555555130);
	assert_int_equal(l.to.sym.len, strlen("foo(int, char)"));
	assert_memory_equal(l.to.sym.s, "foo(int, char)", l.to.sym.len);
	assert_int_equal(l.to.off, 0);
	assert_memory_equal(l.to.dso.s, "/tmp/x y/prog", l.to.dso.len);
}

static void test_parse_ptflame_fields(void **state)
{
	char line[512];
	struct dc_script_line l;
	struct br r = { NULL, 0, 7, 0, 5000000123ull, "tr end  syscall",
		0x7ffff7e9a3c5, "__GI___libc_write", 0x15, NULL, 0, NULL, 0, NULL };
	(void)state;

	gen(line, sizeof(line), &fmt_ptflame, &r);
	dc_script_parse_line(line, &l);
	assert_int_equal(l.kind, DC_SL_SAMPLE);
	assert_int_equal(l.comm.len, 0);
	assert_int_equal(l.tid, 7);
	assert_int_equal(l.time_ns, 5000000123ull);
	assert_true(l.has_flags);
	assert_int_equal(l.flags, DC_SF_BRANCH | DC_SF_CALL | DC_SF_SYSCALLRET | DC_SF_TRACE_END);
	assert_int_equal(l.from.ip, 0x7ffff7e9a3c5);
	assert_int_equal(l.from.off, 0x15);
	assert_false(l.from.has_dso);
	assert_int_equal(l.to.ip, 0);
	assert_int_equal(l.to.sym.len, 9);   /* [unknown] */
}

/* Every flag name perf prints, in both perf generations' widths. */
static void test_parse_flag_names(void **state)
{
	static const struct {
		const char *name;
		uint32_t flags;
	} cases[] = {
		{ "call", DC_SF_BRANCH | DC_SF_CALL },
		{ "return", DC_SF_BRANCH | DC_SF_RETURN },
		{ "jcc", DC_SF_BRANCH | DC_SF_CONDITIONAL },
		{ "jmp", DC_SF_BRANCH },
		{ "syscall", DC_SF_BRANCH | DC_SF_CALL | DC_SF_SYSCALLRET },
		{ "sysret", DC_SF_BRANCH | DC_SF_RETURN | DC_SF_SYSCALLRET },
		{ "hw int", DC_SF_BRANCH | DC_SF_CALL | DC_SF_ASYNC | DC_SF_INTERRUPT },
		{ "int", DC_SF_BRANCH | DC_SF_CALL | DC_SF_INTERRUPT },
		{ "iret", DC_SF_BRANCH | DC_SF_RETURN | DC_SF_INTERRUPT },
		{ "tr strt", DC_SF_BRANCH | DC_SF_TRACE_BEGIN },
		{ "tr end", DC_SF_BRANCH | DC_SF_TRACE_END },
		{ "tr strt jmp", DC_SF_BRANCH | DC_SF_TRACE_BEGIN },          /* perf >= 6.15 */
		{ "tr end  syscall", DC_SF_BRANCH | DC_SF_CALL | DC_SF_SYSCALLRET | DC_SF_TRACE_END },
		{ "tr end  async", DC_SF_BRANCH | DC_SF_ASYNC | DC_SF_TRACE_END },
		{ "tr end  call", DC_SF_BRANCH | DC_SF_CALL | DC_SF_TRACE_END },
		{ "bcrB", DC_SF_BRANCH | DC_SF_CALL | DC_SF_RETURN | DC_SF_TRACE_BEGIN },
	};
	(void)state;

	for (int v = 0; v < 2; v++) {
		struct fmt f = fmt_ptflame;

		f.perf5 = v;
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			char line[512];
			struct dc_script_line l;
			struct br r = { NULL, 0, 9, 1, 1000000000ull, cases[i].name,
				0x401000, "a", 4, NULL, 0x401100, "b", 0, NULL };

			gen(line, sizeof(line), &f, &r);
			dc_script_parse_line(line, &l);
			assert_int_equal(l.kind, DC_SL_SAMPLE);
			assert_true(l.has_flags);
			if (l.flags != cases[i].flags)
				fail_msg("'%s': flags %#x, want %#x in: %s", cases[i].name,
					 l.flags, cases[i].flags, line);
			assert_int_equal(l.from.ip, 0x401000);
			assert_int_equal(l.to.ip, 0x401100);
		}
	}
}

static void test_parse_in_tx(void **state)
{
	struct dc_script_line l;
	(void)state;

	/* perf 6: "%-15s%6s" with xs "(x)" */
	dc_script_parse_line("     9 [001] 1.000000001:   call              (x)      "
			     "          401000 a+0x4 =>           401100 b+0x0\n", &l);
	assert_int_equal(l.kind, DC_SL_SAMPLE);
	assert_int_equal(l.flags, DC_SF_BRANCH | DC_SF_CALL | DC_SF_IN_TX);
	assert_int_equal(l.to.ip, 0x401100);
}

/* Field presence varied as -F does: each combination must parse to the same
 * branch. */
static void test_parse_field_matrix(void **state)
{
	(void)state;
	for (unsigned m = 0; m < 256; m++) {
		struct fmt f = {
			.comm = m & 1, .pid = m & 2, .tid = true, .cpu = m & 4,
			.ns = m & 8, .period = m & 16, .event = m & 32,
			.flags = m & 64, .sym = true, .symoff = true, .dso = m & 128,
		};
		char line[512];
		struct dc_script_line l;
		struct br r = { "a b c", 100, 101, 7, 77123456789ull, "return",
			0x7f0012345678, "ns::f(int) const", 0x1f, "/lib/libx.so.1",
			0x401234, "main", 0x44, "/bin/prog" };

		gen(line, sizeof(line), &f, &r);
		dc_script_parse_line(line, &l);
		if (l.kind != DC_SL_SAMPLE)
			fail_msg("mask %#x did not parse: %s", m, line);
		assert_int_equal(l.tid, 101);
		assert_int_equal(l.pid, f.pid ? 100 : -1);
		assert_int_equal(l.cpu, f.cpu ? 7 : -1);
		assert_int_equal(l.time_ns, f.ns ? 77123456789ull : 77123456000ull);
		assert_int_equal(l.has_flags, f.flags);
		if (f.flags)
			assert_int_equal(l.flags, DC_SF_BRANCH | DC_SF_RETURN);
		if (f.comm)
			assert_memory_equal(l.comm.s, "a b c", 5);
		else
			assert_int_equal(l.comm.len, 0);
		assert_int_equal(l.from.ip, 0x7f0012345678);
		assert_int_equal(l.from.sym.len, strlen("ns::f(int) const"));
		assert_memory_equal(l.from.sym.s, "ns::f(int) const", l.from.sym.len);
		assert_int_equal(l.from.off, 0x1f);
		assert_int_equal(l.from.has_dso, f.dso);
		assert_int_equal(l.to.ip, 0x401234);
		assert_int_equal(l.to.off, 0x44);
		if (f.dso)
			assert_memory_equal(l.to.dso.s, "/bin/prog", l.to.dso.len);
	}
}

/* An ip that looks decimal right after the time stamp must not be taken for
 * a period. */
static void test_parse_decimal_looking_ip(void **state)
{
	struct fmt f = fmt_default;
	char line[512];
	struct dc_script_line l;
	struct br r = { "p", 0, 5, 0, 1000, "call", 0x401136, "main", 6, "/p",
		0x401126, "f", 0, "/p" };
	(void)state;

	f.period = false;
	f.event = false;
	gen(line, sizeof(line), &f, &r);
	dc_script_parse_line(line, &l);
	assert_int_equal(l.kind, DC_SL_SAMPLE);
	assert_int_equal(l.from.ip, 0x401136);
	f.period = true;
	gen(line, sizeof(line), &f, &r);
	dc_script_parse_line(line, &l);
	assert_int_equal(l.kind, DC_SL_SAMPLE);
	assert_int_equal(l.from.ip, 0x401136);
}

static void test_parse_error_lines(void **state)
{
	struct dc_script_line l;
	(void)state;

	/* perf 5.x / 6.x with time */
	dc_script_parse_line(" instruction trace error type 1 time 12.000000123 cpu 2 pid 7 tid 8 "
			     "ip 0x401000 code 6: Trace doesn't match instruction\n", &l);
	assert_int_equal(l.kind, DC_SL_ERROR);
	assert_true(l.has_time);
	assert_int_equal(l.time_ns, 12000000123ull);
	assert_int_equal(l.cpu, 2);
	assert_int_equal(l.pid, 7);
	assert_int_equal(l.tid, 8);
	assert_int_equal(l.err_ip, 0x401000);
	assert_int_equal(l.err_code, 6);
	assert_memory_equal(l.err_msg.s, "Trace doesn't match", 19);
	/* older perf: no time; ip 0 printed by %#lx as "0" */
	dc_script_parse_line(" instruction trace error type 1 cpu 0 pid 1 tid 1 ip 0 code 7: "
			     "Overflow packet", &l);
	assert_int_equal(l.kind, DC_SL_ERROR);
	assert_false(l.has_time);
	assert_int_equal(l.err_ip, 0);
	assert_int_equal(l.err_code, 7);
	/* time 0 and machine_pid (perf 6) */
	dc_script_parse_line(" instruction trace error type 1 time 0 machine_pid 3 vcpu 1 cpu 0 "
			     "pid 1 tid -1 ip 0x10 code 8: Lost trace data", &l);
	assert_int_equal(l.kind, DC_SL_ERROR);
	assert_false(l.has_time);
	assert_int_equal(l.tid, -1);
}

static void test_parse_junk(void **state)
{
	static const char *const bad[] = {
		"hello world\n",
		"PERFILE2",
		"     ls  1234 [000]  notatime: 1 branches: 401000 a => 0 b\n",
		"\t    7f0011223344 foo+0x10 (/lib/x.so)\n", /* a callchain line */
		" instruction trace error type 1 cpu x pid 1 tid 1 ip 0 code 1: m",
	};
	struct dc_script_line l;
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		dc_script_parse_line(bad[i], &l);
		if (l.kind != DC_SL_BAD)
			fail_msg("accepted junk: %s", bad[i]);
	}
	/* a perf line with no branch in it */
	dc_script_parse_line("  1234 [000] 12.5: \n", &l);
	assert_int_equal(l.kind, DC_SL_OTHER);
	dc_script_parse_line("# ========\n", &l);
	assert_int_equal(l.kind, DC_SL_SKIP);
	dc_script_parse_line("   \n", &l);
	assert_int_equal(l.kind, DC_SL_SKIP);
}

static void test_detect(void **state)
{
	char line[512];
	struct br r = { "p", 0, 5, 0, 1000, "call", 0x401136, "main", 6, "/p",
		0x401126, "f", 0, "/p" };
	char buf[1024];
	(void)state;

	gen(line, sizeof(line), &fmt_default, &r);
	assert_true(dc_script_detect(line, strlen(line)));
	/* cut in the middle of the first line: still recognised */
	assert_true(dc_script_detect(line, strlen(line) - 10));
	snprintf(buf, sizeof(buf), "# header\n\n%s", line);
	assert_true(dc_script_detect(buf, strlen(buf)));
	assert_false(dc_script_detect("PERFILE2\0\0\0\0\x68\0\0\0", 16));
	assert_false(dc_script_detect("main;foo;bar 123\n", 17));
	assert_false(dc_script_detect("", 0));
}

/* ------------------------------------------------------------ importer */

struct run {
	struct dc_event ev[256];
	const char *comm[256];
	char comms[256][32];
	int n;
	int rc;
	struct dc_script_stats st;
	struct dc_script *s;
	FILE *f;
};

/* Import text; keeps the importer alive (for names) until run_end. */
static void run_text(struct run *r, const char *text)
{
	struct dc_event ev;
	const char *comm;
	int rc;

	memset(r, 0, sizeof(*r));
	r->f = fmemopen((void *)text, strlen(text), "r");
	assert_non_null(r->f);
	assert_int_equal(dc_script_new(&r->s, r->f), 0);
	while ((rc = dc_script_next(r->s, &ev, &comm)) == 1) {
		assert_true(r->n < 256);
		r->ev[r->n] = ev;
		if (comm) {
			snprintf(r->comms[r->n], sizeof(r->comms[0]), "%s", comm);
			r->comm[r->n] = r->comms[r->n];
		}
		r->n++;
	}
	r->rc = rc;
	dc_script_get_stats(r->s, &r->st);
}

static void run_end(struct run *r)
{
	dc_script_free(r->s);
	fclose(r->f);
}

static const char *fname(struct run *r, uint32_t pid, uint64_t ip)
{
	const char *n = dc_script_name(r->s, dc_script_func_key(r->s, pid, ip));

	return n ? n : "(null)";
}

/* A little program's trace, printed in a given format. */
static const struct br prog[] = {
	/* trace starts in main */
	{ "prog", 10, 10, 0, 1000000, "tr strt", 0, NULL, 0, NULL, 0x401100, "main", 0, "/bin/prog" },
	{ "prog", 10, 10, 0, 1000100, "call", 0x401105, "main", 5, "/bin/prog", 0x401200, "work", 0, "/bin/prog" },
	{ "prog", 10, 10, 0, 1000200, "call", 0x401210, "work", 0x10, "/bin/prog", 0x401030, "puts@plt", 0, "/bin/prog" },
	{ "prog", 10, 10, 0, 1000300, "jmp", 0x401036, "puts@plt", 6, "/bin/prog", 0x7f0000001000, "puts", 0, "/lib/libc.so.6" },
	{ "prog", 10, 10, 0, 1000400, "tr end  syscall", 0x7f0000001050, "puts", 0x50, "/lib/libc.so.6", 0, NULL, 0, NULL },
	{ "prog", 10, 10, 0, 1005400, "tr strt", 0, NULL, 0, NULL, 0x7f0000001052, "puts", 0x52, "/lib/libc.so.6" },
	{ "prog", 10, 10, 0, 1005500, "return", 0x7f0000001060, "puts", 0x60, "/lib/libc.so.6", 0x401215, "work", 0x15, "/bin/prog" },
	{ "prog", 10, 10, 0, 1005600, "return", 0x401220, "work", 0x20, "/bin/prog", 0x40110a, "main", 0xa, "/bin/prog" },
	/* an interrupt: resumes where it stopped */
	{ "prog", 10, 10, 0, 1005700, "tr end  async", 0x40110c, "main", 0xc, "/bin/prog", 0, NULL, 0, NULL },
	{ "prog", 10, 10, 0, 1006700, "tr strt", 0, NULL, 0, NULL, 0x40110c, "main", 0xc, "/bin/prog" },
	/* returns above the first frame: main returns to libc */
	{ "prog", 10, 10, 0, 1006800, "return", 0x401120, "main", 0x20, "/bin/prog", 0x7f0000002345, "__libc_start_call_main", 0x75, "/lib/libc.so.6" },
	{ "prog", 10, 10, 0, 1006900, "call", 0x7f0000002350, "__libc_start_call_main", 0x80, "/lib/libc.so.6", 0x7f0000003000, NULL, 0, "/lib/libc.so.6" },
	{ "prog", 10, 10, 0, 1007000, "tr end  syscall", 0x7f0000003010, NULL, 0, "/lib/libc.so.6", 0, NULL, 0, NULL },
};

static void gen_text(char *buf, size_t n, const struct fmt *f, bool with_jumps)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(prog) / sizeof(prog[0]); i++) {
		bool trace = !strncmp(prog[i].flags, "tr ", 3);

		/* --itrace=cr synthesizes calls, returns and trace starts/ends
		 * only; --itrace=b every branch. */
		if (!with_jumps && !trace && strcmp(prog[i].flags, "call") &&
		    strcmp(prog[i].flags, "return"))
			continue;
		gen(buf + len, n - len, f, &prog[i]);
		len += strlen(buf + len);
	}
}

static void check_prog_events(struct run *r, bool flags, bool with_jumps)
{
	int i = 0;

	assert_int_equal(r->rc, 0);
	assert_int_equal(r->ev[i].kind, DC_EV_TRACE_ON);
	assert_int_equal(r->ev[i].reason, DC_ON_START);
	assert_int_equal(r->ev[i].to_ip, 0x401100);
	assert_int_equal(r->ev[i].tid, 10);
	assert_string_equal(fname(r, 10, 0x401100), "main");
	i++;
	assert_int_equal(r->ev[i].kind, DC_EV_CALL);
	assert_int_equal(r->ev[i].from_ip, 0x401105);
	assert_int_equal(r->ev[i].to_ip, 0x401200);
	assert_int_equal(r->ev[i].time_ns, 1000100);
	assert_string_equal(fname(r, 10, 0x401200), "work");
	assert_int_equal(dc_script_func_start(r->s, 10, 0x401105), 0x401100);
	i++;
	assert_int_equal(r->ev[i].kind, DC_EV_CALL);
	assert_string_equal(fname(r, 10, 0x401030), "puts@plt");
	i++;
	if (with_jumps || !flags) {
		/* PLT stub -> libc: leaves the function (without flags: seen
		 * when the next branch comes from puts, not puts@plt) */
		assert_int_equal(r->ev[i].kind, DC_EV_JUMP);
		assert_int_equal(r->ev[i].to_ip, 0x7f0000001000);
		assert_string_equal(fname(r, 10, 0x7f0000001000), "puts");
		assert_int_equal(r->ev[i].time_ns, flags ? 1000300 : 1000200);
		i++;
	}
	assert_int_equal(r->ev[i].kind, DC_EV_TRACE_OFF);
	assert_int_equal(r->ev[i].reason, DC_OFF_SYSCALL);
	assert_int_equal(r->ev[i].sysno, UINT32_MAX);
	assert_int_equal(r->ev[i].from_ip, 0x7f0000001050);
	i++;
	assert_int_equal(r->ev[i].kind, DC_EV_TRACE_ON);
	assert_int_equal(r->ev[i].reason, DC_ON_RESUME);
	i++;
	assert_int_equal(r->ev[i].kind, DC_EV_RETURN);
	assert_int_equal(r->ev[i].to_ip, 0x401215);
	i++;
	assert_int_equal(r->ev[i].kind, DC_EV_RETURN);
	assert_int_equal(r->ev[i].to_ip, 0x40110a);
	i++;
	assert_int_equal(r->ev[i].kind, DC_EV_TRACE_OFF);
	assert_int_equal(r->ev[i].reason, DC_OFF_FAULT);
	i++;
	assert_int_equal(r->ev[i].kind, DC_EV_TRACE_ON);
	i++;
	assert_int_equal(r->ev[i].kind, DC_EV_RETURN);
	assert_string_equal(fname(r, 10, 0x7f0000002345), "__libc_start_call_main");
	i++;
	assert_int_equal(r->ev[i].kind, DC_EV_CALL);
	/* no symbol: one [unknown] function per dso */
	if (r->st.flags)
		assert_string_equal(fname(r, 10, 0x7f0000003000), "[unknown]");
	i++;
	assert_int_equal(r->ev[i].kind, DC_EV_TRACE_OFF);
	/* the last trace end: with flags a syscall; without, nothing follows */
	assert_int_equal(r->ev[i].reason, flags ? DC_OFF_SYSCALL : DC_OFF_END);
	i++;
	assert_int_equal(r->n, i);
}

static void test_import_ptflame_fields(void **state)
{
	static char text[8192];
	struct run r;
	(void)state;

	gen_text(text, sizeof(text), &fmt_ptflame, true);
	run_text(&r, text);
	check_prog_events(&r, true, true);
	assert_true(r.st.flags);
	assert_int_equal(r.st.skipped, 0);
	run_end(&r);
}

static void test_import_default_fields(void **state)
{
	static char text[8192];
	struct run r;
	struct fmt f = fmt_default;
	(void)state;

	f.ns = true;
	gen_text(text, sizeof(text), &f, false);
	run_text(&r, text);
	check_prog_events(&r, false, false);
	assert_false(r.st.flags);
	/* with a dso printed, [unknown] is named after it */
	assert_string_equal(fname(&r, 10, 0x7f0000003000), "[unknown] (/lib/libc.so.6)");
	assert_non_null(r.comm[0]);
	assert_string_equal(r.comm[0], "prog");
	assert_null(r.comm[1]);
	run_end(&r);
}

/* Jumps inside a function are not events; perf 5 widths work the same. */
static void test_import_jumps(void **state)
{
	static char text[4096];
	struct fmt f = fmt_ptflame;
	struct run r;
	size_t len;
	const struct br lines[] = {
		{ NULL, 0, 3, 0, 100, "call", 0x401000, "main", 0, NULL, 0x402000, "f", 0, NULL },
		{ NULL, 0, 3, 0, 101, "jcc", 0x402004, "f", 4, NULL, 0x402010, "f", 0x10, NULL },
		{ NULL, 0, 3, 0, 102, "jmp", 0x402014, "f", 0x14, NULL, 0x402000, "f", 0, NULL },
		{ NULL, 0, 3, 0, 103, "jmp", 0x402018, "f", 0x18, NULL, 0x403000, "g", 0, NULL },
		{ NULL, 0, 3, 0, 104, "return", 0x403008, "g", 8, NULL, 0x401005, "main", 5, NULL },
	};
	(void)state;

	f.perf5 = true;
	text[0] = '\0';
	for (size_t i = 0, l = 0; i < 5; i++) {
		gen(text + l, sizeof(text) - l, &f, &lines[i]);
		l += strlen(text + l);
	}
	len = strlen(text);
	assert_true(len > 0);
	run_text(&r, text);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.n, 3);
	assert_int_equal(r.ev[0].kind, DC_EV_CALL);
	assert_int_equal(r.ev[1].kind, DC_EV_JUMP);
	assert_int_equal(r.ev[1].time_ns, 103);
	assert_string_equal(fname(&r, 3, r.ev[1].to_ip), "g");
	assert_int_equal(r.ev[2].kind, DC_EV_RETURN);
	assert_int_equal(r.st.ignored, 2);
	run_end(&r);
}

/* Without flags, calls and returns are told apart by their targets. */
static void test_import_noflags_recursion(void **state)
{
	const char *text =
		"  r  5 [000]  1.000000100:  1 branches:u:  401005 main+0x5 (/r) =>  402000 rec+0x0 (/r)\n"
		"  r  5 [000]  1.000000200:  1 branches:u:  402010 rec+0x10 (/r) =>  402000 rec+0x0 (/r)\n"
		"  r  5 [000]  1.000000300:  1 branches:u:  402020 rec+0x20 (/r) =>  402015 rec+0x15 (/r)\n"
		"  r  5 [000]  1.000000400:  1 branches:u:  402020 rec+0x20 (/r) =>  40100a main+0xa (/r)\n"
		"  r  5 [000]  1.000000500:  1 branches:u:  401020 main+0x20 (/r) =>  7f0010 start+0x30 (/c)\n";
	struct run r;
	(void)state;

	run_text(&r, text);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.n, 5);
	assert_int_equal(r.ev[0].kind, DC_EV_CALL);
	assert_int_equal(r.ev[1].kind, DC_EV_CALL);
	assert_int_equal(r.ev[2].kind, DC_EV_RETURN);
	assert_int_equal(r.ev[3].kind, DC_EV_RETURN);
	assert_int_equal(r.ev[4].kind, DC_EV_RETURN);   /* above the trace start */
	assert_int_equal(r.ev[4].time_ns, 1000000500);
	run_end(&r);
}

/* Without flags: a signal handler (trace resumes elsewhere) returns to
 * __restore_rt, not to a call site; rt_sigreturn resumes the interrupted
 * code; PLT slots perf names "_init+0x30" are called, not returned to. */
static void test_import_noflags_signal_plt(void **state)
{
	const char *text =
		"  s  5 [000]  1.000000100:  1 branches:u:  401005 main+0x5 (/s) =>  402000 work+0x0 (/s)\n"
		"  s  5 [000]  1.000000200:  1 branches:u:  402010 work+0x10 (/s) =>  0 [unknown] ([unknown])\n"
		"  s  5 [000]  1.000000300:  1 branches:u:  0 [unknown] ([unknown]) =>  403000 on_sig+0x0 (/s)\n"
		"  s  5 [000]  1.000000400:  1 branches:u:  403008 on_sig+0x8 (/s) =>  404000 helper+0x0 (/s)\n"
		"  s  5 [000]  1.000000500:  1 branches:u:  404010 helper+0x10 (/s) =>  40300d on_sig+0xd (/s)\n"
		"  s  5 [000]  1.000000600:  1 branches:u:  403020 on_sig+0x20 (/s) =>  7f0050 __restore_rt+0x0 (/c)\n"
		"  s  5 [000]  1.000000700:  1 branches:u:  7f0057 __restore_rt+0x7 (/c) =>  0 [unknown] ([unknown])\n"
		"  s  5 [000]  1.000000800:  1 branches:u:  0 [unknown] ([unknown]) =>  402010 work+0x10 (/s)\n"
		"  s  5 [000]  1.000000900:  1 branches:u:  402014 work+0x14 (/s) =>  401030 _init+0x30 (/s)\n"
		"  s  5 [000]  1.000001000:  1 branches:u:  7f1000 puts+0x40 (/c) =>  402019 work+0x19 (/s)\n"
		"  s  5 [000]  1.000001100:  1 branches:u:  402020 work+0x20 (/s) =>  40100a main+0xa (/s)\n";
	static const uint8_t kinds[] = {
		DC_EV_CALL, DC_EV_TRACE_OFF, DC_EV_TRACE_ON, DC_EV_CALL, DC_EV_RETURN,
		DC_EV_RETURN, DC_EV_TRACE_OFF, DC_EV_TRACE_ON, DC_EV_CALL, DC_EV_JUMP,
		DC_EV_RETURN, DC_EV_RETURN,
	};
	struct run r;
	(void)state;

	run_text(&r, text);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.n, sizeof(kinds));
	for (int i = 0; i < r.n; i++)
		if (r.ev[i].kind != kinds[i])
			fail_msg("event %d: kind %d, want %d", i, r.ev[i].kind, kinds[i]);
	assert_int_equal(r.ev[1].reason, DC_OFF_FAULT);     /* the signal */
	assert_int_equal(r.ev[6].reason, DC_OFF_SYSCALL);   /* rt_sigreturn */
	assert_int_equal(r.ev[6].sysno, 15);
	/* the PLT slot went on to puts: seen when puts returns */
	assert_int_equal(r.ev[9].to_ip, 0x7f1000 - 0x40);
	assert_int_equal(r.ev[9].time_ns, 1000000900);
	assert_string_equal(fname(&r, 5, r.ev[9].to_ip), "puts");
	run_end(&r);
}

/* Without flags, a branch from a function lower on the stack than the
 * last callee reveals a longjmp down to it: a jump into that function
 * (not to its entry), then its return matches its own call site. */
static void test_import_noflags_longjmp(void **state)
{
	const char *text =
		"  l  5 [000]  1.000000100:  1 branches:u:  401005 main+0x5 (/l) =>  402000 f+0x0 (/l)\n"
		"  l  5 [000]  1.000000200:  1 branches:u:  402005 f+0x5 (/l) =>  403000 g+0x0 (/l)\n"
		"  l  5 [000]  1.000000300:  1 branches:u:  403005 g+0x5 (/l) =>  404000 h+0x0 (/l)\n"
		"  l  5 [000]  1.000000400:  1 branches:u:  402020 f+0x20 (/l) =>  40100a main+0xa (/l)\n";
	struct run r;
	(void)state;

	run_text(&r, text);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.n, 5);
	assert_int_equal(r.ev[3].kind, DC_EV_JUMP);
	assert_int_equal(r.ev[3].to_ip, 0x402020);     /* inside f */
	assert_int_equal(r.ev[3].time_ns, 1000000300);
	assert_int_equal(r.ev[4].kind, DC_EV_RETURN);
	assert_int_equal(r.ev[4].to_ip, 0x40100a);
	run_end(&r);
}

/* Error lines become LOST for their thread (or the cpu's last thread); the
 * next trace start is a resync. */
static void test_import_errors(void **state)
{
	const char *text =
		"     9 [001]     2.000000100:   call                           401005 main+0x5 =>           402000 f+0x0\n"
		" instruction trace error type 1 time 2.000000150 cpu 1 pid 9 tid 9 ip 0x402004 code 7: Overflow packet\n"
		"     9 [001]     2.000000300:   tr strt                             0 [unknown] =>           402040 f+0x40\n"
		" instruction trace error type 1 time 2.000000400 cpu 1 pid 9 tid -1 ip 0x402044 code 6: Trace doesn't match instruction\n"
		" instruction trace error type 1 cpu 1 pid 9 tid 9 ip 0 code 8: Lost trace data\n"
		" instruction trace error type 1 time 2.000000500 cpu 5 pid -1 tid -1 ip 0 code 6: nobody\n";
	struct run r;
	(void)state;

	run_text(&r, text);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.n, 5);
	assert_int_equal(r.ev[1].kind, DC_EV_LOST);
	assert_int_equal(r.ev[1].reason, DC_LOST_OVF);
	assert_int_equal(r.ev[1].time_ns, 2000000150);
	assert_int_equal(r.ev[1].tid, 9);
	assert_int_equal(r.ev[2].kind, DC_EV_TRACE_ON);
	assert_int_equal(r.ev[2].reason, DC_ON_SYNC);
	assert_int_equal(r.ev[3].kind, DC_EV_LOST);      /* tid from cpu 1 */
	assert_int_equal(r.ev[3].reason, DC_LOST_DECODE);
	assert_int_equal(r.ev[3].tid, 9);
	assert_int_equal(r.ev[4].reason, DC_LOST_TRUNCATED);
	assert_int_equal(r.ev[4].time_ns, 2000000400);   /* no time: the last */
	assert_int_equal(r.st.errors, 4);
	assert_int_equal(r.st.ignored, 1);
	run_end(&r);
}

/* Kernel tracing: syscall/sysret and interrupts end and resume the user
 * trace (the kernel entry point as the trace end's to_ip), the kernel's
 * own branches are events with kernel addresses (frames under [kernel]). */
static void test_import_kernel(void **state)
{
	const char *text =
		"     4 [000]     3.000000100:   syscall                  7f0000001050 write+0x10 =>   ffffffff81000000 entry_SYSCALL_64+0x0\n"
		"     4 [000]     3.000000200:   call                 ffffffff81000010 entry_SYSCALL_64+0x10 =>   ffffffff81002000 do_syscall_64+0x0\n"
		"     4 [000]     3.000000300:   sysret               ffffffff81000100 entry_SYSCALL_64+0x100 =>       7f0000001052 write+0x12\n"
		"     4 [000]     3.000000400:   hw int                   7f0000001060 write+0x20 =>   ffffffff81003000 asm_common_interrupt+0x0\n"
		"     4 [000]     3.000000500:   iret                 ffffffff81003100 asm_common_interrupt+0x100 =>       7f0000001060 write+0x20\n";
	struct run r;
	(void)state;

	run_text(&r, text);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.n, 5);
	assert_int_equal(r.ev[0].kind, DC_EV_TRACE_OFF);
	assert_int_equal(r.ev[0].reason, DC_OFF_SYSCALL);
	assert_int_equal(r.ev[0].to_ip, 0xffffffff81000000);
	assert_int_equal(r.ev[1].kind, DC_EV_CALL);
	assert_int_equal(r.ev[1].from_ip, 0xffffffff81000010);
	assert_int_equal(r.ev[1].to_ip, 0xffffffff81002000);
	assert_int_equal(r.ev[2].kind, DC_EV_TRACE_ON);
	assert_int_equal(r.ev[2].to_ip, 0x7f0000001052);
	assert_int_equal(r.ev[3].kind, DC_EV_TRACE_OFF);
	assert_int_equal(r.ev[3].reason, DC_OFF_FAULT);
	assert_int_equal(r.ev[4].kind, DC_EV_TRACE_ON);
	run_end(&r);
}

/* A bare "tr end" (flags without a reason) is settled by where the thread
 * resumes: at the same instruction an interrupt or fault ([kernel]),
 * elsewhere [untraced]. Lines that make no event (a jcc inside a
 * function) still start and end the thread's span. */
static void test_import_gaps_and_span(void **state)
{
	const char *text =
		"     7 [000]     5.000000100:   jcc                     401005 main+0x5 =>           401010 main+0x10\n"
		"     7 [000]     5.000000200:   tr end                  401010 main+0x10 =>                0 [unknown]\n"
		"     7 [000]     5.000000300:   tr strt                      0 [unknown] =>           401010 main+0x10\n"
		"     7 [000]     5.000000400:   tr end                  401020 main+0x20 =>                0 [unknown]\n"
		"     7 [000]     5.000000500:   tr strt                      0 [unknown] =>           401080 main+0x80\n"
		"     7 [000]     5.000000600:   jcc                     401085 main+0x85 =>           401090 main+0x90\n";
	struct run r;
	(void)state;

	run_text(&r, text);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.n, 6);
	assert_int_equal(r.ev[0].kind, DC_EV_TRACE_ON);    /* the first jcc */
	assert_int_equal(r.ev[0].time_ns, 5000000100);
	assert_int_equal(r.ev[0].to_ip, 0x401005);
	assert_int_equal(r.ev[1].kind, DC_EV_TRACE_OFF);
	assert_int_equal(r.ev[1].reason, DC_OFF_FAULT);     /* resumed there */
	assert_int_equal(r.ev[3].kind, DC_EV_TRACE_OFF);
	assert_int_equal(r.ev[3].reason, DC_OFF_UNTRACED);  /* elsewhere */
	assert_int_equal(r.ev[5].kind, DC_EV_TRACE_OFF);    /* the last jcc */
	assert_int_equal(r.ev[5].reason, DC_OFF_END);
	assert_int_equal(r.ev[5].time_ns, 5000000600);
	run_end(&r);
}

/* Two threads interleaved, pid/tid; a held-back trace end settles at the
 * thread's own next event, whatever the other thread does meanwhile. */
static void test_import_threads(void **state)
{
	const char *text =
		"            a    1/1     [000]  1.000000100:          1   branches:u:   401005 main+0x5 (/p) =>   0 [unknown] ([unknown])\n"
		"            b    1/2     [001]  1.000000150:          1   branches:u:   401105 th+0x5 (/p) =>   402000 f+0x0 (/p)\n"
		"            a    1/1     [000]  1.000000200:          1   branches:u:   0 [unknown] ([unknown]) =>   401007 main+0x7 (/p)\n"
		"            b2   1/2     [001]  1.000000300:          1   branches:u:   402005 f+0x5 (/p) =>   0 [unknown] ([unknown])\n"
		"            b2   1/2     [001]  1.000000400:          1   branches:u:   0 [unknown] ([unknown]) =>   402005 f+0x5 (/p)\n";
	struct run r;
	int a = 0, b = 0;
	(void)state;

	run_text(&r, text);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.n, 5);
	for (int i = 0; i < r.n; i++) {
		assert_int_equal(r.ev[i].pid, 1);
		if (r.ev[i].tid == 1) {
			if (a == 0) {
				assert_int_equal(r.ev[i].kind, DC_EV_TRACE_OFF);
				assert_int_equal(r.ev[i].reason, DC_OFF_SYSCALL);
				assert_string_equal(r.comm[i], "a");
			} else {
				assert_int_equal(r.ev[i].kind, DC_EV_TRACE_ON);
			}
			a++;
		} else {
			if (b == 0) {
				assert_int_equal(r.ev[i].kind, DC_EV_CALL);
				assert_string_equal(r.comm[i], "b");
			}
			if (b == 1) {
				assert_int_equal(r.ev[i].kind, DC_EV_TRACE_OFF);
				assert_int_equal(r.ev[i].reason, DC_OFF_FAULT);
				assert_string_equal(r.comm[i], "b2");
			}
			b++;
		}
	}
	assert_int_equal(a, 2);
	assert_int_equal(b, 3);
	run_end(&r);
}

static void test_import_bad_input(void **state)
{
	struct run r;
	(void)state;

	run_text(&r, "\n# comment\nmain;foo 12\n");
	assert_int_equal(r.rc, -EBADMSG);
	assert_int_equal(dc_script_bad_line(r.s), 3);
	run_end(&r);
	/* junk after a good start is skipped and counted */
	run_text(&r, "     9 [001]     2.000000100:   call     401005 main+0x5 =>     402000 f+0x0\n"
		     "garbage\n"
		     "\t    7f0011223344 foo+0x10 (/lib/x.so)\n"
		     "     9 [001]     2.000000200:   return   402005 f+0x5 =>     401008 main+0x8\n");
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.st.skipped, 2);
	run_end(&r);
	/* nothing at all, or comments only: say what ptflame needs */
	run_text(&r, "");
	assert_int_equal(r.rc, -ENOMSG);
	assert_int_equal(r.n, 0);
	assert_non_null(strstr(dc_script_errmsg(r.s, r.rc), "no 'perf script' samples"));
	run_end(&r);
	run_text(&r, "# ========\n# captured on: x\n");
	assert_int_equal(r.rc, -ENOMSG);
	run_end(&r);
	/* samples of another event (cycles with call chains): named, and no
	 * "0 samples lack '=> addr'" */
	run_text(&r, "825432/825432 339457.445933440:       1 cycles:u: \n"
		     "\t    7f5c0c875c60 _dl_open+0x0 (/usr/lib64/ld-2.28.so)\n"
		     "\n"
		     "825432/825432 339457.445933441:       1 cycles:u: \n"
		     "\t    7f5c0c875c60 _dl_open+0x0 (/usr/lib64/ld-2.28.so)\n");
	assert_int_equal(r.rc, -ENOMSG);
	assert_non_null(strstr(dc_script_errmsg(r.s, r.rc), "2 samples of 'cycles:u'"));
	assert_null(strstr(dc_script_errmsg(r.s, r.rc), "lack"));
	run_end(&r);
}

/* Same names -> same key across processes; different dsos -> different. */
/* Lines of other perf events, branches without targets, -F+misc. */
static void test_import_other_lines(void **state)
{
	struct run r;
	const char *misc =
		"     emu 20492 [000] U           1.000000100:          1  branches:u:  401005 main+0x5 (/p) =>  402000 f+0x0 (/p)\n";
	struct dc_script_line l;
	(void)state;

	/* default `perf script`: psb/cbr lines before the branches */
	run_text(&r, "     emu 20492 [000]  2340.096217:                   psb:  psb offs: 0                                      0 [unknown] ([unknown])\n"
		     "     emu 20492 [000]  2340.096217:                   cbr:  cbr: 20 freq: 2000 MHz (100%)                    0 [unknown] ([unknown])\n"
		     "     emu 20492 [000]  2340.096217:          1            branches:u:      401005 main+0x5 (/p) =>      402000 f+0x0 (/p)\n");
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.st.other, 2);
	run_end(&r);
	assert_true(dc_script_detect("     emu 20492 [000]  2340.096217:                   psb:  psb offs: 0   0 [unknown] ([unknown])\n", 90));

	/* -F+pid drops "=> addr": an error at the end, saying what to do */
	run_text(&r, "     emu 20492/20492 [000]  2340.096217:          1            branches:u:      401005 main+0x5 (/p)\n");
	assert_int_equal(r.rc, -ENOMSG);
	assert_int_equal(r.st.no_target, 1);
	assert_non_null(strstr(dc_script_errmsg(r.s, r.rc), "-F+addr"));
	run_end(&r);
	run_text(&r, "x\n");
	assert_int_equal(r.rc, -EBADMSG);
	assert_string_equal(dc_script_errmsg(r.s, r.rc), "line 1 is not 'perf script' output");
	run_end(&r);

	dc_script_parse_line(misc, &l);
	assert_int_equal(l.kind, DC_SL_SAMPLE);
	assert_int_equal(l.tid, 20492);
	assert_int_equal(l.cpu, 0);
}

/* Without flags but with every branch (--itrace=b): jumps inside a
 * function are no events; a recursive call and its return are. */
static void test_import_noflags_jumps(void **state)
{
	const char *text =
		"  r  5 [000]  1.000000100:  1 branches:u:  401005 main+0x5 (/r) =>  402000 rec+0x0 (/r)\n"
		"  r  5 [000]  1.000000150:  1 branches:u:  402004 rec+0x4 (/r) =>  402030 rec+0x30 (/r)\n"
		"  r  5 [000]  1.000000200:  1 branches:u:  402010 rec+0x10 (/r) =>  402000 rec+0x0 (/r)\n"
		"  r  5 [000]  1.000000250:  1 branches:u:  402034 rec+0x34 (/r) =>  402008 rec+0x8 (/r)\n"
		"  r  5 [000]  1.000000300:  1 branches:u:  402020 rec+0x20 (/r) =>  402015 rec+0x15 (/r)\n"
		"  r  5 [000]  1.000000400:  1 branches:u:  402020 rec+0x20 (/r) =>  40100a main+0xa (/r)\n";
	struct run r;
	(void)state;

	run_text(&r, text);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.n, 4);
	assert_int_equal(r.ev[0].kind, DC_EV_CALL);
	assert_int_equal(r.ev[1].kind, DC_EV_CALL);
	assert_int_equal(r.ev[1].time_ns, 1000000200);
	assert_int_equal(r.ev[2].kind, DC_EV_RETURN);
	assert_int_equal(r.ev[3].kind, DC_EV_RETURN);
	assert_int_equal(r.st.ignored, 2);
	run_end(&r);
}

/* Mangled lines (bytes changed, cut short, spaces doubled) never crash the
 * parser or the importer; whatever parses is a consistent sample. */
static void test_parse_mangled(void **state)
{
	static const char *const alphabet = " 0123456789abcdef:;=>()[]+x/.-\tcalltr end";
	unsigned seed = 99;
	char line[512], text[8192];
	size_t tl = 0;
	struct run r;
	(void)state;

	for (int i = 0; i < 20000; i++) {
		struct fmt f = i % 2 ? fmt_default : fmt_ptflame;
		struct dc_script_line l;
		size_t len;

		gen(line, sizeof(line), &f, &prog[(unsigned)i % (sizeof(prog) / sizeof(prog[0]))]);
		len = strlen(line);
		for (int k = 0; k < 1 + i % 4; k++) {
			seed = seed * 1103515245 + 12345;
			line[(seed >> 8) % len] = alphabet[(seed >> 20) % strlen(alphabet)];
		}
		seed = seed * 1103515245 + 12345;
		if (seed % 3 == 0)
			line[(seed >> 8) % len] = '\0';
		dc_script_parse_line(line, &l);
		if (l.kind == DC_SL_SAMPLE)
			assert_true(l.from.sym.len <= strlen(line) && l.to.sym.len <= strlen(line));
		if (tl + strlen(line) + 2 < sizeof(text) && i % 5 == 0) {
			memcpy(text + tl, line, strlen(line));
			tl += strlen(line);
			text[tl++] = '\n';
		}
	}
	text[tl] = '\0';
	run_text(&r, text);
	assert_true(r.rc == 0 || r.rc == -EBADMSG || r.rc == -ENOMSG);
	run_end(&r);
}

static void test_keys(void **state)
{
	const char *text =
		"  p  1/1 [000] 1.000000100:  1 branches:u:  401005 main+0x5 (/p) =>  402000 f+0x0 (/p)\n"
		"  q  2/2 [000] 1.000000200:  1 branches:u:  401005 main+0x5 (/p) =>  402000 f+0x0 (/p)\n"
		"  q  2/2 [000] 1.000000300:  1 branches:u:  402003 f+0x3 (/p) =>  7f0000 f+0x0 (/lib/l.so)\n";
	struct run r;
	(void)state;

	run_text(&r, text);
	assert_int_equal(r.rc, 0);
	assert_int_equal(dc_script_func_key(r.s, 1, 0x402000), dc_script_func_key(r.s, 2, 0x402000));
	assert_int_equal(dc_script_func_key(r.s, 1, 0x401005), dc_script_func_key(r.s, 2, 0x401005));
	assert_int_not_equal(dc_script_func_key(r.s, 2, 0x7f0000), dc_script_func_key(r.s, 2, 0x402000));
	assert_string_equal(fname(&r, 2, 0x7f0000), "f");
	assert_null(dc_script_name(r.s, 0));
	assert_null(dc_script_name(r.s, 999));
	run_end(&r);

	/* no pid column: one address table for all threads, names by the
	 * latest line */
	run_text(&r, "  p  5 [000] 1.000000100:  1 branches:u:  401005 main+0x5 (/p) =>  402000 f+0x0 (/p)\n"
		     "  p  6 [000] 1.000000200:  1 branches:u:  401005 main+0x5 (/p) =>  402000 f+0x0 (/p)\n");
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.ev[0].pid, 5);
	assert_int_equal(r.ev[1].pid, 6);
	assert_string_equal(fname(&r, 5, 0x402000), "f");
	assert_string_equal(fname(&r, 6, 0x402000), "f");
	assert_string_equal(fname(&r, 7, 0x401005), "main");
	run_end(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_default),
		cmocka_unit_test(test_parse_ptflame_fields),
		cmocka_unit_test(test_parse_flag_names),
		cmocka_unit_test(test_parse_in_tx),
		cmocka_unit_test(test_parse_field_matrix),
		cmocka_unit_test(test_parse_decimal_looking_ip),
		cmocka_unit_test(test_parse_error_lines),
		cmocka_unit_test(test_parse_junk),
		cmocka_unit_test(test_detect),
		cmocka_unit_test(test_import_ptflame_fields),
		cmocka_unit_test(test_import_default_fields),
		cmocka_unit_test(test_import_jumps),
		cmocka_unit_test(test_import_noflags_recursion),
		cmocka_unit_test(test_import_noflags_signal_plt),
		cmocka_unit_test(test_import_noflags_longjmp),
		cmocka_unit_test(test_import_errors),
		cmocka_unit_test(test_import_kernel),
		cmocka_unit_test(test_import_gaps_and_span),
		cmocka_unit_test(test_import_threads),
		cmocka_unit_test(test_import_bad_input),
		cmocka_unit_test(test_import_other_lines),
		cmocka_unit_test(test_import_noflags_jumps),
		cmocka_unit_test(test_parse_mangled),
		cmocka_unit_test(test_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
