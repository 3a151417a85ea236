/* ptflame - decoder/script_parse: one line of `perf script` text.
 *
 * perf builds a sample line from optional fields, each in a fixed printf
 * format (tools/perf/builtin-script.c, perf_sample__fprintf_start and
 * process_event / perf_sample__fprintf_bts):
 *
 *   comm "%16s "  pid/tid "%7d/%-7d " | tid "%7d "  cpu "[%03d] "
 *   time "%5lu.%09llu: " (--ns) | "%12s: " (secs.usecs)
 *   period "%10lu "  event "%*s: "  flags "  %-21s " (older perf: %-19s)
 *   " " ip "%16lx" " sym+0xoff" " (dso)"  " => " addr "%16lx" " sym+0xoff" " (dso)"
 *
 * so the line is read from both ends of the time stamp: what precedes it is
 * comm / tid / cpu, what follows is period / event / flags / from => to.
 * Auxtrace errors are printed by perf_event__fprintf_auxtrace_error:
 *   " instruction trace error type 1 time 12.000000123 cpu 0 pid 7 tid 7
 *     ip 0x401000 code 6: Trace doesn't match instruction"
 * ("time ..." is missing in older perf).
 */
#include <ctype.h>
#include <string.h>

#include "decoder/script_import.h"

enum { MAX_TOKENS = 16 };

struct tok {
	const char *s, *e;
};

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && is_ws(*p))
		p++;
	return p;
}

static const char *tok_end(const char *p, const char *end)
{
	while (p < end && !is_ws(*p))
		p++;
	return p;
}

static bool all_digits(const char *s, const char *e)
{
	if (s >= e)
		return false;
	for (; s < e; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* perf prints addresses with %lx: lower-case hex, no 0x. */
static bool lower_hex(const char *s, const char *e)
{
	if (s >= e || e - s > 16)
		return false;
	for (; s < e; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

static uint64_t parse_hex(const char *s, const char *e)
{
	uint64_t v = 0;

	for (; s < e; s++)
		v = v * 16 + (uint64_t)(*s <= '9' ? *s - '0' : *s - 'a' + 10);
	return v;
}

static uint64_t parse_dec(const char *s, const char *e)
{
	uint64_t v = 0;

	for (; s < e; s++)
		v = v * 10 + (uint64_t)(*s - '0');
	return v;
}

/* "123.456789:" (usecs) or "123.456789012:" (--ns), any number of digits. */
static bool parse_time_tok(const char *s, const char *e, bool colon, uint64_t *ns)
{
	const char *dot;
	uint64_t frac = 0;
	int nd = 0;

	if (colon) {
		if (e - s < 3 || e[-1] != ':')
			return false;
		e--;
	}
	dot = memchr(s, '.', (size_t)(e - s));
	if (!dot || !all_digits(s, dot) || !all_digits(dot + 1, e) || e - dot - 1 > 9)
		return false;
	for (const char *p = dot + 1; p < e; p++, nd++)
		frac = frac * 10 + (uint64_t)(*p - '0');
	for (; nd < 9; nd++)
		frac *= 10;
	*ns = parse_dec(s, dot) * 1000000000ull + frac;
	return true;
}

static bool word_at(const char *p, const char *end, const char *w)
{
	size_t n = strlen(w);

	return (size_t)(end - p) >= n && !memcmp(p, w, n) &&
	       (p + n == end || is_ws(p[n]) || p[n] == '(');
}

static const struct {
	const char *name;
	uint32_t flags;
} flag_names[] = {
	/* two-word names first so "hw int" is not read as "hw" */
	{ "hw int", DC_SF_BRANCH | DC_SF_CALL | DC_SF_ASYNC | DC_SF_INTERRUPT },
	{ "tx abrt", DC_SF_BRANCH | DC_SF_TX_ABORT },
	{ "br miss", DC_SF_BRANCH | DC_SF_BRANCH_MISS },
	{ "call", DC_SF_BRANCH | DC_SF_CALL },
	{ "return", DC_SF_BRANCH | DC_SF_RETURN },
	{ "jcc", DC_SF_BRANCH | DC_SF_CONDITIONAL },
	{ "jmp", DC_SF_BRANCH },
	{ "int", DC_SF_BRANCH | DC_SF_CALL | DC_SF_INTERRUPT },
	{ "iret", DC_SF_BRANCH | DC_SF_RETURN | DC_SF_INTERRUPT },
	{ "syscall", DC_SF_BRANCH | DC_SF_CALL | DC_SF_SYSCALLRET },
	{ "sysret", DC_SF_BRANCH | DC_SF_RETURN | DC_SF_SYSCALLRET },
	{ "async", DC_SF_BRANCH | DC_SF_ASYNC },
	{ "vmentry", DC_SF_BRANCH | DC_SF_CALL | DC_SF_VMENTRY },
	{ "vmexit", DC_SF_BRANCH | DC_SF_CALL | DC_SF_VMEXIT },
};

/* perf's PERF_IP_FLAG_CHARS, bit i = letter i, for flag sets with no name. */
static const char flag_chars[] = "bcrosyiABExghDt";
static const uint32_t flag_char_bits[] = {
	DC_SF_BRANCH, DC_SF_CALL, DC_SF_RETURN, DC_SF_CONDITIONAL,
	DC_SF_SYSCALLRET, DC_SF_ASYNC, DC_SF_INTERRUPT, DC_SF_TX_ABORT,
	DC_SF_TRACE_BEGIN, DC_SF_TRACE_END, DC_SF_IN_TX, DC_SF_VMENTRY,
	DC_SF_VMEXIT, DC_SF_INTR_DISABLE, DC_SF_INTR_TOGGLE,
};

/* Read the flags column at *pp if there is one. */
static bool parse_flags(const char **pp, const char *end, uint32_t *flags)
{
	const char *p = skip_ws(*pp, end);
	bool matched = false;
	uint32_t f = 0;

	if (word_at(p, end, "tr strt")) {
		f |= DC_SF_BRANCH | DC_SF_TRACE_BEGIN;
		p = skip_ws(p + 7, end);
		matched = true;
	} else if (word_at(p, end, "tr end")) {
		f |= DC_SF_BRANCH | DC_SF_TRACE_END;
		p = skip_ws(p + 6, end);
		matched = true;
	}
	for (size_t i = 0; i < sizeof(flag_names) / sizeof(flag_names[0]); i++) {
		if (word_at(p, end, flag_names[i].name)) {
			f |= flag_names[i].flags;
			p += strlen(flag_names[i].name);
			matched = true;
			break;
		}
	}
	if (!matched) {
		const char *e = tok_end(p, end);

		if (e == p || lower_hex(p, e))
			return false;
		for (const char *c = p; c < e; c++) {
			const char *at = strchr(flag_chars, *c);

			if (!at || !*c)
				return false;
			f |= flag_char_bits[at - flag_chars];
		}
		p = e;
	}
	p = skip_ws(p, end);
	if (p < end && *p == '(') {      /* "(x)", "(D)", "(xDt)" ...          */
		const char *c = p + 1;

		for (; c < end && *c != ')'; c++) {
			if (*c == 'x')
				f |= DC_SF_IN_TX;
			else if (*c == 'D')
				f |= DC_SF_INTR_DISABLE;
			else if (*c == 't')
				f |= DC_SF_INTR_TOGGLE;
			else
				return false;
		}
		if (c == end)
			return false;
		p = c + 1;
	}
	*pp = p;
	*flags = f;
	return true;
}

static void set_text(struct dc_script_text *t, const char *s, const char *e)
{
	t->s = s;
	t->len = e > s ? (size_t)(e - s) : 0;
}

/* "sym+0xoff (dso)", "sym (dso)", "sym+0xoff", "(dso)", "" -> loc. */
static void parse_symdso(const char *s, const char *e, struct dc_script_loc *loc)
{
	s = skip_ws(s, e);
	while (e > s && is_ws(e[-1]))
		e--;
	if (e > s && e[-1] == ')') {
		/* The dso is the trailing "(...)" after a space; a C++ symbol's
		 * own parentheses follow a name character, never a space. */
		int depth = 0;
		const char *q = e - 1;

		for (; q >= s; q--) {
			if (*q == ')')
				depth++;
			else if (*q == '(' && --depth == 0)
				break;
		}
		if (q >= s && (q == s || q[-1] == ' ')) {
			const char *ds = q + 1, *de = e - 1, *plus;

			/* dsoff: "(/path+0x1a2b)" */
			plus = de;
			while (plus > ds && *plus != '+')
				plus--;
			if (plus > ds && de - plus > 3 && plus[1] == '0' && plus[2] == 'x' &&
			    lower_hex(plus + 3, de))
				de = plus;
			loc->has_dso = true;
			set_text(&loc->dso, ds, de);
			e = q;
			while (e > s && is_ws(e[-1]))
				e--;
		}
	}
	/* "+0x1f" at the end is the offset into the symbol. */
	for (const char *plus = e - 1; plus > s; plus--) {
		if (*plus == '+') {
			if (e - plus > 3 && plus[1] == '0' && plus[2] == 'x' &&
			    lower_hex(plus + 3, e)) {
				loc->has_off = true;
				loc->off = parse_hex(plus + 3, e);
				e = plus;
			}
			break;
		}
		if (!isxdigit((unsigned char)*plus) && *plus != 'x')
			break;
	}
	set_text(&loc->sym, s, e);
}

/* " ip sym (dso)" starting at p; returns false when there is no ip. */
static bool parse_loc(const char *p, const char *end, struct dc_script_loc *loc)
{
	const char *e;

	p = skip_ws(p, end);
	e = tok_end(p, end);
	if (!lower_hex(p, e))
		return false;
	loc->ip = parse_hex(p, e);
	parse_symdso(e, end, loc);
	return true;
}

/* Where the "to" location stops: extra fields perf may append. */
static const char *to_end(const char *p, const char *end)
{
	static const char *const stops[] = { "\t", " IPC:", " ilen:", " insn:" };
	const char *best = end;

	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++) {
		const char *q = memmem(p, (size_t)(end - p), stops[i], strlen(stops[i]));

		if (q && q < best)
			best = q;
	}
	return best;
}

static bool next_is(const char **pp, const char *end, const char *word)
{
	const char *p = skip_ws(*pp, end);
	const char *e = tok_end(p, end);

	if ((size_t)(e - p) != strlen(word) || memcmp(p, word, (size_t)(e - p)))
		return false;
	*pp = e;
	return true;
}

static bool next_int(const char **pp, const char *end, int64_t *v)
{
	const char *p = skip_ws(*pp, end);
	const char *e = tok_end(p, end);
	bool neg = p < e && *p == '-';

	if (!all_digits(p + neg, e))
		return false;
	*v = (int64_t)parse_dec(p + neg, e) * (neg ? -1 : 1);
	*pp = e;
	return true;
}

static bool parse_error_line(const char *p, const char *end, struct dc_script_line *out)
{
	int64_t v, code;
	const char *e;

	p = skip_ws(p, end);
	if (!word_at(p, end, "instruction"))
		return false;
	p += strlen("instruction");
	if (!next_is(&p, end, "trace") || !next_is(&p, end, "error") ||
	    !next_is(&p, end, "type") || !next_int(&p, end, &v))
		return false;
	if (next_is(&p, end, "time")) {
		p = skip_ws(p, end);
		e = tok_end(p, end);
		if (parse_time_tok(p, e, false, &out->time_ns))
			out->has_time = out->time_ns != 0;
		else if (!all_digits(p, e))
			return false;
		p = e;
	}
	if (next_is(&p, end, "machine_pid")) {
		if (!next_int(&p, end, &v) || !next_is(&p, end, "vcpu") || !next_int(&p, end, &v))
			return false;
	}
	if (!next_is(&p, end, "cpu") || !next_int(&p, end, &v))
		return false;
	out->cpu = (int32_t)v;
	if (!next_is(&p, end, "pid") || !next_int(&p, end, &out->pid) ||
	    !next_is(&p, end, "tid") || !next_int(&p, end, &out->tid) ||
	    !next_is(&p, end, "ip"))
		return false;
	p = skip_ws(p, end);
	e = tok_end(p, end);
	if (e - p > 2 && p[0] == '0' && p[1] == 'x' && lower_hex(p + 2, e))
		out->err_ip = parse_hex(p + 2, e);
	else if (e - p == 1 && *p == '0')
		out->err_ip = 0;
	else
		return false;
	p = e;
	if (!next_is(&p, end, "code"))
		return false;
	p = skip_ws(p, end);
	e = p;
	while (e < end && *e >= '0' && *e <= '9')
		e++;
	if (e == p || e == end || *e != ':')
		return false;
	code = (int64_t)parse_dec(p, e);
	out->err_code = (uint32_t)code;
	p = skip_ws(e + 1, end);
	set_text(&out->err_msg, p, end);
	out->kind = DC_SL_ERROR;
	return true;
}

/* pid/tid "%7d/%-7d" or tid "%7d". */
static bool parse_tid_tok(const char *s, const char *e, struct dc_script_line *out)
{
	const char *slash = memchr(s, '/', (size_t)(e - s));
	bool neg;

	if (slash) {
		neg = *s == '-';
		if (!all_digits(s + neg, slash))
			return false;
		out->pid = (int64_t)parse_dec(s + neg, slash) * (neg ? -1 : 1);
		s = slash + 1;
	}
	neg = s < e && *s == '-';
	if (!all_digits(s + neg, e))
		return false;
	out->tid = (int64_t)parse_dec(s + neg, e) * (neg ? -1 : 1);
	return true;
}

void dc_script_parse_line(const char *line, struct dc_script_line *out)
{
	const char *end = line + strlen(line);
	struct tok t[MAX_TOKENS];
	int nt = 0, ti = -1, j;
	const char *p, *arrow;

	memset(out, 0, sizeof(*out));
	out->pid = -1;
	out->tid = -1;
	out->cpu = -1;
	out->kind = DC_SL_BAD;
	while (end > line && (end[-1] == '\n' || end[-1] == '\r'))
		end--;

	p = skip_ws(line, end);
	if (p == end || *p == '#') {
		out->kind = DC_SL_SKIP;
		return;
	}
	if (parse_error_line(p, end, out))
		return;

	/* Tokens up to the time stamp: the first "digits.digits:". */
	while (p < end && nt < MAX_TOKENS) {
		t[nt].s = p;
		t[nt].e = tok_end(p, end);
		p = skip_ws(t[nt].e, end);
		if (parse_time_tok(t[nt].s, t[nt].e, true, &out->time_ns)) {
			ti = nt++;
			break;
		}
		nt++;
	}
	if (ti < 0)
		return;
	out->has_time = true;

	/* Before it, right to left: [cpu] , tid or pid/tid, comm (may hold
	 * spaces: it is everything left of the tid). */
	j = ti - 1;
	/* -F+misc: "K", "U", "US", ... padded to 6 columns */
	if (j >= 1 && strspn(t[j].s, "KUHGgMESp") >= (size_t)(t[j].e - t[j].s))
		j--;
	if (j >= 0 && t[j].e - t[j].s >= 3 && t[j].s[0] == '[' && t[j].e[-1] == ']' &&
	    all_digits(t[j].s + 1, t[j].e - 1)) {
		out->cpu = (int32_t)parse_dec(t[j].s + 1, t[j].e - 1);
		j--;
	}
	if (j < 0 || !parse_tid_tok(t[j].s, t[j].e, out))
		return;
	if (j > 0)
		set_text(&out->comm, t[0].s, t[j - 1].e);

	/* After it: [period] [event:] [flags] ip sym (dso) [=> addr sym (dso)] */
	p = t[ti].e;
	{
		const char *colon = t[ti].e - 1;
		const char *a = skip_ws(p, end), *ae = tok_end(a, end);
		const char *b = skip_ws(ae, end), *be = tok_end(b, end);

		if (all_digits(a, ae)) {
			uint32_t dummy;
			const char *bp = b;

			/* A period ("%10lu ") is followed by the event name or
			 * the flags; alone it ends 11 columns after the colon,
			 * where an ip ("%16lx" after ": " and " ") ends at 18. */
			if ((be > b && be[-1] == ':' && !lower_hex(b, be - 1)) ||
			    parse_flags(&bp, end, &dummy) || ae - colon == 12)
				p = ae;
		}
		a = skip_ws(p, end);
		ae = tok_end(a, end);
		if (ae - a >= 2 && ae[-1] == ':' && !lower_hex(a, ae - 1)) {
			set_text(&out->event, a, ae);
			p = ae;   /* event name, e.g. "branches:u:" */
		}
	}
	/* From here on the line is perf's, whatever else it holds. */
	out->kind = DC_SL_OTHER;
	if (parse_flags(&p, end, &out->flags))
		out->has_flags = true;

	arrow = NULL;
	for (const char *q = p; q + 4 <= end; q++) {
		if (q[0] == ' ' && q[1] == '=' && q[2] == '>' && q[3] == ' ') {
			arrow = q;
			break;
		}
	}
	if (!parse_loc(p, arrow ? arrow : to_end(p, end), &out->from))
		return;
	if (arrow) {
		const char *q = arrow + 4;

		if (!parse_loc(q, to_end(q, end), &out->to))
			return;
		out->has_addr = true;
	}
	out->kind = DC_SL_SAMPLE;
}

bool dc_script_detect(const char *buf, size_t n)
{
	char line[1024];
	size_t i = 0;

	if (n >= 8 && (!memcmp(buf, "PERFILE2", 8) || !memcmp(buf, "PERFFILE", 8)))
		return false;
	while (i < n) {
		size_t len = 0;
		struct dc_script_line l;

		while (i + len < n && buf[i + len] != '\n')
			len++;
		if (memchr(buf + i, '\0', len))
			return false;
		if (len >= sizeof(line))
			len = sizeof(line) - 1;
		memcpy(line, buf + i, len);
		line[len] = '\0';
		dc_script_parse_line(line, &l);
		if (l.kind == DC_SL_SAMPLE || l.kind == DC_SL_ERROR || l.kind == DC_SL_OTHER)
			return true;
		if (l.kind == DC_SL_BAD)
			return false;
		while (i < n && buf[i] != '\n')
			i++;
		i++;
	}
	return false;
}
