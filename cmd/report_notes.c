/* ptflame - report's notes on stderr: filters that matched nothing (with
 * "did you mean" for names) and the recording's time range, as --time
 * takes it. Wiring only; the names come from the stack machine. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/report_pipeline.h"

/* Levenshtein distance, capped: for "did you mean". */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), *row, best;

	if (la > 256 || lb > 256)
		return SIZE_MAX;
	row = malloc((lb + 1) * sizeof(*row));
	if (!row)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], v = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < v)
				v = up + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			row[j] = v;
			diag = up;
		}
	}
	best = row[lb];
	free(row);
	return best;
}

/* The closest of the names offered to want: a name containing want (or
 * the other way round) first, else the fewest edits, if that is at most a
 * third of want's length (2 at least). */
struct suggest {
	const char *want;
	char best[128];
	size_t dist;
	bool found;              /* a name matched exactly              */
	bool no_plt;             /* PLT stubs (NAME@plt) are no frames  */
};

static int suggest_name(void *ctx, const char *name)
{
	struct suggest *g = ctx;
	size_t n = strlen(g->want), d, len = strlen(name);

	if (g->no_plt && len > 4 && !strcmp(name + len - 4, "@plt"))
		return 0;
	if (!strcmp(name, g->want) ||
	    (!strncmp(name, g->want, n) && name[n] == '(')) {
		g->found = true;
		return 1;
	}
	if (strstr(name, g->want) || strstr(g->want, name))
		d = 0;
	else
		d = edit_distance(g->want, name) + 1;
	if (d <= (n / 3 > 2 ? n / 3 : 2) + 1 && d < g->dist &&
	    strlen(name) < sizeof(g->best)) {
		g->dist = d;
		snprintf(g->best, sizeof(g->best), "%s", name);
	}
	return 0;
}

static void say(const char *cmd, const struct report_opts *opt, int *said,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void say(const char *cmd, const struct report_opts *opt, int *said,
		const char *fmt, ...)
{
	va_list ap;

	(*said)++;
	fprintf(stderr, "ptflame %s: note: %s: nothing matched ", cmd, opt->input);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The recording's time range, from the threads' first and last events. */
static bool time_range(const struct sr_cct *cct, uint64_t *lo, uint64_t *hi)
{
	*lo = UINT64_MAX;
	*hi = 0;
	for (size_t i = 0; i < sr_cct_nthreads(cct); i++) {
		const struct sr_thread_stats *st = sr_cct_thread(cct, i);

		if (st->first_ns < *lo)
			*lo = st->first_ns;
		if (st->last_ns > *hi)
			*hi = st->last_ns;
	}
	return *lo <= *hi;
}

/* "S.NNNNNNNNN,S.NNNNNNNNN": as --time takes it. */
static const char *range_str(char *buf, size_t n, uint64_t lo, uint64_t hi)
{
	snprintf(buf, n, "%" PRIu64 ".%09" PRIu64 ",%" PRIu64 ".%09" PRIu64,
		 lo / 1000000000, lo % 1000000000, hi / 1000000000, hi % 1000000000);
	return buf;
}

bool report_time_range(const struct sr_cct *cct, char *buf, size_t n)
{
	uint64_t lo, hi;

	if (!time_range(cct, &lo, &hi))
		return false;
	range_str(buf, n, lo, hi);
	return true;
}

bool report_window_range(const struct sr_cct *cct, uint64_t win_lo, uint64_t win_hi,
			 char *buf, size_t n)
{
	uint64_t lo, hi;

	if (!time_range(cct, &lo, &hi))
		return false;
	if (lo < win_lo)
		lo = win_lo;
	if (win_hi && hi > win_hi)
		hi = win_hi;
	if (lo >= hi)
		return false;
	range_str(buf, n, lo, hi);
	return true;
}

bool report_func_seen(const struct sr_machine *m, const char *want, bool show_plt,
		      char *best, size_t n)
{
	struct suggest g = { .want = want, .dist = SIZE_MAX, .no_plt = !show_plt };

	sr_machine_func_names(m, suggest_name, &g);
	snprintf(best, n, "%s", g.found ? "" : g.best);
	return g.found;
}

void report_note_filters(const char *cmd, const struct report_opts *opt,
			 const struct sr_cct *cct, const struct sr_machine *m)
{
	const struct sr_options *o = &opt->sr;
	size_t nth = sr_cct_nthreads(cct);
	char buf[512];
	uint64_t lo, hi;
	size_t n = 0;
	int said = 0;

	for (size_t i = 0; i < o->ntids; i++) {
		bool seen = false;

		for (size_t k = 0; k < nth && !seen; k++)
			seen = sr_cct_thread(cct, k)->tid == o->tids[i];
		if (!seen && n < sizeof(buf))
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%" PRIu32, n ? "," : "",
					      o->tids[i]);
	}
	if (n)
		say(cmd, opt, &said, "--tid %s (no such thread was traced)", buf);
	if (o->comm) {
		struct suggest g = { .want = o->comm, .dist = SIZE_MAX };
		bool any = false;

		for (size_t k = 0; k < nth; k++) {
			const struct sr_thread_stats *st = sr_cct_thread(cct, k);

			any |= st->selected;
			if (st->comm && *st->comm)
				suggest_name(&g, st->comm);
		}
		if (!any && nth)
			say(cmd, opt, &said, "--comm %s%s%s%s", o->comm, g.best[0] ? " (did you mean '" : "",
			    g.best, g.best[0] ? "'?)" : "");
	}
	if (o->root) {
		char best[128];
		size_t len = strlen(o->root);

		if (!report_func_seen(m, o->root, o->show_plt, best, sizeof(best)))
			say(cmd, opt, &said, "--root %s%s%s%s%s", o->root, best[0] ? " (did you mean '" : "",
			    best, best[0] ? "'?)" : "",
			    !o->show_plt && len > 4 && !strcmp(o->root + len - 4, "@plt") ?
			    " (PLT stubs are folded into the function they call; --show-plt keeps them)" :
			    "");
	}
	if ((o->time_start || o->time_end) && time_range(cct, &lo, &hi) &&
	    (o->time_start > hi || (o->time_end && o->time_end <= lo)))
		say(cmd, opt, &said, "--time (the recording spans %s)", range_str(buf, sizeof(buf), lo, hi));
	if (sr_cct_root(cct)->first_child || said)
		return;
	/* each filter matched something, not all of them together */
	n = 0;
#define ADD(cond, ...) if ((cond) && n < sizeof(buf)) \
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, __VA_ARGS__)
	ADD(o->ntids, "%s--tid", n ? ", " : "");
	ADD(o->comm, "%s--comm %s", n ? ", " : "", o->comm);
	ADD(o->root, "%s--root %s", n ? ", " : "", o->root);
	ADD(o->time_start || o->time_end, "%s--time", n ? ", " : "");
	ADD(o->keep_time == SR_KEEP_ONCPU, "%s--oncpu", n ? ", " : "");
	ADD(o->keep_time == SR_KEEP_OFFCPU, "%s--offcpu", n ? ", " : "");
#undef ADD
	if (n)
		say(cmd, opt, &said, "%s together, the profile is empty", buf);
}
