/* ptflame - flamegraph/table: per-function latency statistics and tables.
 *
 * Statistics are gathered into rows keyed by a name (a function's display
 * name, or a call path). From a CCT every node adds its calls, self time
 * and latency histogram to its row; its total time only when no ancestor
 * has the same name, so a recursive function's time counts once. From a
 * folded file the same sums come from the line values, and calls / avg
 * from the annotations, once per distinct calling context.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/dc_hash.h"
#include "decoder/dc_vec.h"
#include "flamegraph/flamegraph.h"
#include "flamegraph/folded_internal.h"

struct srow {
	struct fg_row r;
	char *name;
	unsigned __int128 avg_sum;  /* folded: sum of avg * calls             */
	uint64_t avg_n;             /* folded: calls that have an avg         */
	struct sr_hist hist;        /* cct: latencies of complete calls       */
	uint64_t active;            /* frames of this row on the walked path  */
	size_t last_line;           /* folded: last line that added total     */
};

struct fg_stats {
	struct srow *rows;
	size_t n, cap;
	struct dc_hash map;         /* chain of a name's dc_strhash -> row */
	bool from_cct;
	bool part;                  /* the CCT kept on- or off-CPU time only */
	bool uninline;              /* FG_STATS_INLINED_AS_FUNC             */
	bool unitless;              /* folded, no annotation: values of any
	                               unit (samples, say), calls unknown   */
};

/* ------------------------------------------------------------- rows */

static struct fg_stats *stats_new(bool from_cct)
{
	struct fg_stats *st = calloc(1, sizeof(*st));

	if (st)
		st->from_cct = from_cct;
	return st;
}

void fg_stats_free(struct fg_stats *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->n; i++) {
		free(st->rows[i].name);
		sr_hist_free(&st->rows[i].hist);
	}
	free(st->rows);
	dc_hash_free(&st->map);
	free(st);
}

/* Index of the row named name[0..len) (dc_strhash hash), created when
 * new; SIZE_MAX on ENOMEM. */
static size_t row_get_h(struct fg_stats *st, const char *name, size_t len, uint64_t hash)
{
	uint64_t k = dc_hash_chain_start(hash), i;
	struct srow *r;

	while (dc_hash_chain(&st->map, &k, &i))
		if (dc_str_eq(st->rows[i].name, name, len))
			return i;
	if (DC_VEC_PUSH_ROOM(st->rows, st->n, st->cap, 64))
		return SIZE_MAX;
	r = &st->rows[st->n];
	memset(r, 0, sizeof(*r));
	r->last_line = SIZE_MAX;
	sr_hist_init(&r->hist);
	r->name = malloc(len + 1);
	if (!r->name)
		return SIZE_MAX;
	memcpy(r->name, name, len);
	r->name[len] = '\0';
	if (dc_hash_put(&st->map, k, st->n)) {
		free(r->name);
		return SIZE_MAX;
	}
	return st->n++;
}

static size_t row_get(struct fg_stats *st, const char *name, size_t len)
{
	return row_get_h(st, name, len, dc_strhash(name, len));
}

/* Fill the public views once all sums are in. */
static void stats_finish(struct fg_stats *st)
{
	for (size_t i = 0; i < st->n; i++) {
		struct srow *r = &st->rows[i];

		r->r.name = r->name;
		r->r.no_calls = st->unitless;
		if (st->part) {
			/* the latencies are of whole calls, wall clock: not
			 * of the part of the time kept */
			r->r.has_avg = r->r.calls > 0;
			if (r->r.has_avg)
				r->r.avg_ns = (r->r.total_ns + r->r.calls / 2) / r->r.calls;
		} else if (st->from_cct) {
			r->r.has_hist = r->hist.count > 0;
			r->r.hist = r->r.has_hist ? &r->hist : NULL;
			r->r.has_avg = r->hist.count > 0;
			if (r->r.has_avg)
				r->r.avg_ns = (r->hist.sum + r->hist.count / 2) / r->hist.count;
		} else {
			r->r.has_avg = r->avg_n > 0;
			if (r->r.has_avg)
				r->r.avg_ns = (uint64_t)((r->avg_sum + r->avg_n / 2) / r->avg_n);
		}
	}
}

size_t fg_stats_count(const struct fg_stats *st)
{
	return st->n;
}

const struct fg_row *fg_stats_row(const struct fg_stats *st, size_t i)
{
	return i < st->n ? &st->rows[i].r : NULL;
}

const struct fg_row *fg_stats_find(const struct fg_stats *st, const char *name)
{
	size_t len = strlen(name);
	uint64_t k = dc_hash_chain_start(dc_strhash(name, len)), i;

	while (dc_hash_chain(&st->map, &k, &i))
		if (dc_str_eq(st->rows[i].name, name, len))
			return &st->rows[i].r;
	return NULL;
}

/* ------------------------------------------------------------ from a CCT */

struct walk {
	size_t *row;            /* row of each frame on the path             */
	size_t *plen;           /* path length before each frame (by stack)  */
	uint64_t *ph;           /* FNV state of the path up to each frame    */
	size_t depth, cap;
	char *path;
	size_t pathlen, pathcap;
};

static int walk_reserve(struct walk *w)
{
	size_t pcap = w->cap, hcap = w->cap;   /* (row owns the capacity: it grows last) */

	if (DC_VEC_PUSH_ROOM(w->plen, w->depth, pcap, 64) ||
	    DC_VEC_PUSH_ROOM(w->ph, w->depth, hcap, 64) ||
	    DC_VEC_PUSH_ROOM(w->row, w->depth, w->cap, 64))
		return -ENOMEM;
	return 0;
}

static int path_append(struct walk *w, const char *name, size_t len)
{
	size_t need = w->pathlen + len + 2;

	if (dc_vec_reserve((void **)&w->path, &w->pathcap, need, 1, 256))
		return -ENOMEM;
	if (w->pathlen)
		w->path[w->pathlen++] = ';';
	memcpy(w->path + w->pathlen, name, len);
	w->pathlen += len;
	w->path[w->pathlen] = '\0';
	return 0;
}

static int enter(struct fg_stats *st, const struct sr_cct *cct, const struct sr_symbolizer *sym,
		 enum fg_stats_key by, struct walk *w, const struct sr_node *n)
{
	/* by function, a [truncated] frame counts as the function it runs */
	const char *name = by == FG_BY_FUNCTION && n->kind == SR_NODE_TRUNCATED ?
			   sr_cct_func_name(cct, n, sym) : sr_cct_name(cct, n, sym);
	size_t plen = w->pathlen, len = strlen(name), ri = SIZE_MAX;
	uint64_t h = w->depth ? w->ph[w->depth - 1] : DC_FNV_BASIS;
	struct srow *r;

	if (st->uninline && n->kind != SR_NODE_THREAD)
		len = fg_frame_uninlined_len(name, len);
	if (walk_reserve(w))
		return -ENOMEM;
	if (by == FG_BY_STACK) {
		if (path_append(w, name, len))
			return -ENOMEM;
		h = dc_fnv(plen ? dc_fnv(h, ";", 1) : h, name, len);
	}
	/* (a node with no call, no time and nothing under it has no row: a
	 * PLT stub folded into its target leaves one behind) */
	if (n->kind != SR_NODE_THREAD && (n->calls || n->total_ns || n->first_child) &&
	    (!st->part || n->total_ns)) {
		ri = by == FG_BY_STACK ? row_get_h(st, w->path, w->pathlen, dc_fnv_end(h))
				       : row_get(st, name, len);
		if (ri == SIZE_MAX)
			return -ENOMEM;
		r = &st->rows[ri];
		if (!r->active)
			r->r.total_ns += n->total_ns;
		r->active++;
		r->r.self_ns += n->self_ns;
		r->r.calls += n->calls;
		r->r.inferred += n->calls_inferred;
		if (!r->r.srcline && n->kind == SR_NODE_FUNC && sym && sym->srcline)
			r->r.srcline = sym->srcline(sym->ctx, n->key);
		if (sr_hist_merge(&r->hist, &n->lat))
			return -ENOMEM;
	}
	w->row[w->depth] = ri;
	w->plen[w->depth] = plen;
	w->ph[w->depth] = h;
	w->depth++;
	return 0;
}

static void leave(struct fg_stats *st, struct walk *w)
{
	w->depth--;
	if (w->row[w->depth] != SIZE_MAX)
		st->rows[w->row[w->depth]].active--;
	w->pathlen = w->plen[w->depth];
	if (w->path)
		w->path[w->pathlen] = '\0';
}

int fg_stats_from_cct(const struct sr_cct *cct, const struct sr_symbolizer *sym,
		      enum fg_stats_key by, struct fg_stats **out)
{
	return fg_stats_from_cct_flags(cct, sym, by, 0, out);
}

int fg_stats_from_cct_part(const struct sr_cct *cct, const struct sr_symbolizer *sym,
			   enum fg_stats_key by, bool part, struct fg_stats **out)
{
	return fg_stats_from_cct_flags(cct, sym, by, part ? FG_STATS_PART : 0, out);
}

int fg_stats_from_cct_flags(const struct sr_cct *cct, const struct sr_symbolizer *sym,
			    enum fg_stats_key by, unsigned flags, struct fg_stats **out)
{
	struct fg_stats *st = stats_new(true);
	const struct sr_node *root = sr_cct_root(cct), *n;
	struct walk w = { 0 };
	int err = 0;

	*out = NULL;
	if (!st)
		return -ENOMEM;
	st->part = flags & FG_STATS_PART;
	st->uninline = flags & FG_STATS_INLINED_AS_FUNC;
	/* Iterative depth-first walk: deep recursion in the traced program
	 * must not become deep recursion here. */
	n = root->first_child;
	while (n && !err) {
		err = enter(st, cct, sym, by, &w, n);
		if (err)
			break;
		if (n->first_child) {
			n = n->first_child;
			continue;
		}
		while (n) {
			leave(st, &w);
			if (n->next_sibling) {
				n = n->next_sibling;
				break;
			}
			n = n->parent;
			if (n == root)
				n = NULL;
		}
	}
	free(w.row);
	free(w.plen);
	free(w.ph);
	free(w.path);
	if (err) {
		fg_stats_free(st);
		return err;
	}
	stats_finish(st);
	*out = st;
	return 0;
}

/* ---------------------------------------------------------- from folded */

/* By stack, a line's frames deeper than max_stack are one row,
 * "kept;frames;[truncated]", as report shows deeper calls: every row is a
 * path, so without a bound a line of n frames would make n rows of up to
 * n frames each (a few hundred KB of folded text: gigabytes of rows). */
static const char truncated_frame[] = "[truncated]";

static int add_folded_line(struct fg_stats *st, struct dc_hash *seen, enum fg_stats_key by,
			   uint32_t max_stack, const char *s, uint64_t value, size_t line,
			   char **pathbuf, size_t *pathcap)
{
	size_t len = strlen(s), i = 0, pathlen = 0, last = SIZE_MAX, done = 0, depth = 0;
	uint64_t ctx = DC_FNV_BASIS, ph = DC_FNV_BASIS;   /* see dc_fnv */

	if (len + sizeof(truncated_frame) + 1 > *pathcap) {
		char *p = realloc(*pathbuf, len + sizeof(truncated_frame) + 1);

		if (!p)
			return -ENOMEM;
		*pathbuf = p;
		*pathcap = len + sizeof(truncated_frame) + 1;
	}
	while (i <= len) {
		size_t j = i, name_len, ri;
		uint64_t calls = 0, avg = 0;
		bool has_avg = false, ann;
		struct srow *r;
		uint64_t ck, v;
		bool added;

		while (j < len && s[j] != ';')
			j++;
		if (by == FG_BY_STACK && depth++ == max_stack) {
			/* the rest of the line: one row, its time, no calls */
			(*pathbuf)[pathlen++] = ';';
			memcpy(*pathbuf + pathlen, truncated_frame, sizeof(truncated_frame) - 1);
			pathlen += sizeof(truncated_frame) - 1;
			ri = row_get(st, *pathbuf, pathlen);
			if (ri == SIZE_MAX)
				return -ENOMEM;
			if (st->rows[ri].last_line != line) {
				st->rows[ri].last_line = line;
				st->rows[ri].r.total_ns += value;
			}
			last = ri;
			break;
		}
		ann = fg_frame_split(s + i, j - i, &name_len, &calls, &has_avg, &avg);
		if (!ann)
			name_len = j - i;
		if (st->uninline)
			name_len = fg_frame_uninlined_len(s + i, name_len);
		if (pathlen) {
			(*pathbuf)[pathlen++] = ';';
			ph = dc_fnv(ph, ";", 1);
		}
		memcpy(*pathbuf + pathlen, s + i, name_len);
		pathlen += name_len;
		ph = dc_fnv(ph, s + i, name_len);
		ri = by == FG_BY_STACK ? row_get_h(st, *pathbuf, pathlen, dc_fnv_end(ph))
				       : row_get(st, s + i, name_len);
		if (ri == SIZE_MAX)
			return -ENOMEM;
		r = &st->rows[ri];
		if (r->last_line != line) {     /* total: once per line */
			r->last_line = line;
			r->r.total_ns += value;
		}
		/* The context is the annotated path so far: count its calls
		 * the first time it shows up. */
		ctx = dc_fnv(ctx, s + done, j - done);
		done = j;
		ck = dc_hash_chain_start(dc_fnv_end(ctx) ^ j);
		added = !dc_hash_get(seen, ck, &v);
		if (added && dc_hash_put(seen, ck, 1))
			return -ENOMEM;
		if (added && ann) {
			r->r.calls += calls;
			if (has_avg) {
				r->avg_sum += (unsigned __int128)avg * calls;
				r->avg_n += calls;
			} else {
				r->r.inferred += calls;
			}
		}
		last = ri;
		i = j + 1;
	}
	if (last != SIZE_MAX)
		st->rows[last].r.self_ns += value;
	return 0;
}

int fg_stats_from_folded(const struct fg_folded *f, enum fg_stats_key by,
			 struct fg_stats **out)
{
	return fg_stats_from_folded_max(f, by, 0, out);
}

int fg_stats_from_folded_max(const struct fg_folded *f, enum fg_stats_key by,
			     uint32_t max_stack, struct fg_stats **out)
{
	return fg_stats_from_folded_flags(f, by, max_stack, 0, out);
}

int fg_stats_from_folded_flags(const struct fg_folded *f, enum fg_stats_key by,
			       uint32_t max_stack, unsigned flags, struct fg_stats **out)
{
	struct fg_stats *st = stats_new(false);
	struct dc_hash seen = { 0 };
	char *path = NULL;
	size_t pathcap = 0;
	int err = 0;

	*out = NULL;
	if (!st)
		return -ENOMEM;
	st->unitless = !fg_folded_annotated(f);
	st->uninline = flags & FG_STATS_INLINED_AS_FUNC;
	for (size_t i = 0; i < f->raw.n && !err; i++)
		err = add_folded_line(st, &seen, by, max_stack ? max_stack : SR_DEFAULT_MAX_STACK,
				      f->raw.e[i].stack, f->raw.e[i].value, i, &path, &pathcap);
	free(path);
	dc_hash_free(&seen);
	if (err) {
		fg_stats_free(st);
		return err;
	}
	stats_finish(st);
	*out = st;
	return 0;
}

/* ---------------------------------------------------------------- table */

int fg_format_ns(char *buf, size_t n, uint64_t ns)
{
	if (ns < 1000)
		return snprintf(buf, n, "%" PRIu64 " ns", ns);
	if (ns < 1000000)
		return snprintf(buf, n, "%.3f µs", (double)ns / 1e3);
	if (ns < 1000000000)
		return snprintf(buf, n, "%.3f ms", (double)ns / 1e6);
	return snprintf(buf, n, "%.3f s", (double)ns / 1e9);
}

bool fg_sort_parse(const char *s, enum fg_sort *out)
{
	static const char *const names[] = { "total", "self", "avg", "p99", "calls" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i])) {
			*out = (enum fg_sort)i;
			return true;
		}
	}
	return false;
}

enum metric { M_CALLS, M_INFERRED, M_TOTAL, M_SELF, M_AVG, M_P50, M_P90, M_P99, M_MAX, M_N };

static const char *const metric_names[M_N] = {
	"Calls", "Inferred", "Total", "Self", "Avg", "p50", "p90", "p99", "Max",
};

static bool metric_is_time(enum metric m)
{
	return m >= M_TOTAL;
}

/* A row's value for metric m; false when unknown. A missing row is zero
 * for sums and unknown for the latency statistics. */
static bool metric_get(const struct fg_row *r, enum metric m, uint64_t *v)
{
	*v = 0;
	switch (m) {
	case M_CALLS:
		*v = r ? r->calls : 0;
		return !r || !r->no_calls;
	case M_INFERRED:
		*v = r ? r->inferred : 0;
		return !r || !r->no_calls;
	case M_TOTAL:
		*v = r ? r->total_ns : 0;
		return true;
	case M_SELF:
		*v = r ? r->self_ns : 0;
		return true;
	case M_AVG:
		if (!r || !r->has_avg)
			return false;
		*v = r->avg_ns;
		return true;
	case M_P50:
	case M_P90:
	case M_P99:
		if (!r || !r->has_hist)
			return false;
		*v = sr_hist_percentile(r->hist, m == M_P50 ? 50.0 : m == M_P90 ? 90.0 : 99.0);
		return true;
	case M_MAX:
		if (!r || !r->has_hist)
			return false;
		*v = r->hist->max;
		return true;
	default:
		return false;
	}
}

static enum metric sort_metric(enum fg_sort s)
{
	static const enum metric map[] = { M_TOTAL, M_SELF, M_AVG, M_P99, M_CALLS };

	return (size_t)s < sizeof(map) / sizeof(map[0]) ? map[s] : M_TOTAL;
}

struct trow {
	const char *name;
	const struct fg_row *a, *b;
	uint64_t key;               /* sort key                               */
};

static int cmp_trow(const void *x, const void *y)
{
	const struct trow *p = x, *q = y;

	if (p->key != q->key)
		return p->key > q->key ? -1 : 1;
	return strcmp(p->name, q->name);
}

static void fmt_value(char *buf, size_t n, bool known, uint64_t v, bool time, bool raw)
{
	if (!known)
		snprintf(buf, n, "-");
	else if (time && !raw)
		fg_format_ns(buf, n, v);
	else
		snprintf(buf, n, "%" PRIu64, v);
}

static void fmt_delta(char *buf, size_t n, bool ka, uint64_t a, bool kb, uint64_t b, bool time,
		      bool raw)
{
	uint64_t d = a > b ? a - b : b - a;
	char sign = a > b ? '-' : '+';

	if (!ka || !kb) {
		snprintf(buf, n, "-");
		return;
	}
	if (d == 0) {
		snprintf(buf, n, "0");
		return;
	}
	buf[0] = sign;
	fmt_value(buf + 1, n - 1, true, d, time, raw);
}

/* The change from a to b in percent of a: "+12.5%", "-100.0%", "0%";
 * "new" when a is 0 and b is not; "-" when either is unknown. */
static void fmt_pct(char *buf, size_t n, bool ka, uint64_t a, bool kb, uint64_t b)
{
	double p;

	if (!ka || !kb)
		snprintf(buf, n, "-");
	else if (a == b)
		snprintf(buf, n, "0%%");
	else if (!a)
		snprintf(buf, n, "new");
	else if ((p = 100.0 * ((double)b - (double)a) / (double)a) >= 99999.5)
		snprintf(buf, n, ">+99999%%");
	else
		snprintf(buf, n, p > -999.95 && p < 999.95 ? "%+.1f%%" : "%+.0f%%", p);
}

/* Display width of UTF-8 text (µ is two bytes, one column). */
size_t fg_text_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

static void pad(FILE *out, size_t n)
{
	while (n--)
		fputc(' ', out);
}

enum { CELL = 32 };

/* A table column: a metric's value in run A or B, or its change from A to
 * B, absolute or in percent. */
enum part { P_A, P_B, P_CHANGE, P_PCT };

struct col {
	enum metric m;
	enum part part;
};

/* Two runs: the sort metric in full (A, B, change, %), and A and B of two
 * more, so that the numbers stay within 92 columns (times below 1000 s,
 * counts below 10^10) and a function name of 28 fits in 120. */
static size_t two_run_cols(enum metric key, struct col *c)
{
	static const enum metric context[] = { M_TOTAL, M_AVG, M_CALLS };
	size_t n = 0, more = 0;

	for (int p = P_A; p <= P_PCT; p++)
		c[n++] = (struct col){ key, (enum part)p };
	for (size_t i = 0; i < sizeof(context) / sizeof(context[0]) && more < 2; i++) {
		if (context[i] == key)
			continue;
		c[n++] = (struct col){ context[i], P_A };
		c[n++] = (struct col){ context[i], P_B };
		more++;
	}
	return n;
}

static void fmt_cell(char *cell, const struct trow *r, struct col c, bool raw)
{
	uint64_t va, vb;
	bool ka = metric_get(r->a, c.m, &va), kb = metric_get(r->b, c.m, &vb);
	bool t = metric_is_time(c.m);

	switch (c.part) {
	case P_A: fmt_value(cell, CELL, ka, va, t, raw); break;
	case P_B: fmt_value(cell, CELL, kb, vb, t, raw); break;
	case P_CHANGE: fmt_delta(cell, CELL, ka, va, kb, vb, t, raw); break;
	case P_PCT: fmt_pct(cell, CELL, ka, va, kb, vb); break;
	}
}

static void csv_field(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c >= 0x80)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static const char *const script_names[M_N] = {
	"calls", "inferred", "total_ns", "self_ns", "avg_ns", "p50_ns", "p90_ns", "p99_ns", "max_ns",
};

/* The sorted rows r[0..n) as CSV or JSON (see table.h). */
static int write_script(FILE *out, const struct trow *r, size_t n,
			const struct fg_table_options *opt)
{
	bool csv = opt->format == FG_TABLE_CSV;
	uint64_t v;

	if (csv) {
		fputs("function", out);
		for (int m = 0; m < M_N; m++)
			fprintf(out, ",%s", script_names[m]);
		fputs(opt->srcline ? ",source\n" : "\n", out);
	} else {
		fputs("{\"rows\":[", out);
	}
	for (size_t i = 0; i < n; i++) {
		const char *src = r[i].a ? r[i].a->srcline : NULL;

		if (csv) {
			csv_field(out, r[i].name);
		} else {
			fputs(i ? ",\n{\"function\":" : "\n{\"function\":", out);
			json_str(out, r[i].name);
		}
		for (int m = 0; m < M_N; m++) {
			bool known = metric_get(r[i].a, (enum metric)m, &v);

			if (csv && known)
				fprintf(out, ",%" PRIu64, v);
			else if (csv)
				fputc(',', out);
			else if (known)
				fprintf(out, ",\"%s\":%" PRIu64, script_names[m], v);
			else
				fprintf(out, ",\"%s\":null", script_names[m]);
		}
		if (opt->srcline && csv) {
			fputc(',', out);
			if (src)
				csv_field(out, src);
		} else if (opt->srcline) {
			fputs(",\"source\":", out);
			if (src)
				json_str(out, src);
			else
				fputs("null", out);
		}
		fputs(csv ? "\n" : "}", out);
	}
	if (!csv)
		fputs("\n]}\n", out);
	return ferror(out) ? -EIO : 0;
}

int fg_table_write(FILE *out, const struct fg_stats *a, const struct fg_stats *b,
		   const struct fg_table_options *opt)
{
	static const char *const part_names[] = { "A", "B", "change", "%" };
	struct fg_table_options defopt = { 0 };
	size_t nr = 0, cap = fg_stats_count(a) + (b ? fg_stats_count(b) : 0);
	size_t ncol = 0, w[M_N] = { 0 };
	struct col cols[M_N];
	enum metric sm;
	struct trow *rows;
	char (*cells)[CELL] = NULL;
	bool nohist_a = false, nohist_b = false, raw;

	if (!opt)
		opt = &defopt;
	/* values of a folded file without annotations need not be ns */
	raw = opt->raw || a->unitless || (b && b->unitless);
	nohist_a = !a->from_cct;
	nohist_b = b && !b->from_cct;
	sm = sort_metric(opt->sort);
	if (b) {
		ncol = two_run_cols(sm, cols);
	} else {
		for (int m = 0; m < M_N; m++)
			cols[ncol++] = (struct col){ (enum metric)m, P_A };
	}
	rows = calloc(cap ? cap : 1, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < fg_stats_count(a); i++) {
		const struct fg_row *r = fg_stats_row(a, i);

		rows[nr++] = (struct trow){ r->name, r, b ? fg_stats_find(b, r->name) : NULL, 0 };
	}
	if (b) {
		for (size_t i = 0; i < fg_stats_count(b); i++) {
			const struct fg_row *r = fg_stats_row(b, i);

			if (!fg_stats_find(a, r->name))
				rows[nr++] = (struct trow){ r->name, NULL, r, 0 };
		}
	}
	for (size_t i = 0; i < nr; i++) {
		uint64_t va, vb;
		bool ka = metric_get(rows[i].a, sm, &va), kb = metric_get(rows[i].b, sm, &vb);

		if (!b)
			rows[i].key = ka ? va : 0;
		else
			rows[i].key = (ka ? va : 0) > (kb ? vb : 0) ? (ka ? va : 0) - (kb ? vb : 0)
								  : (kb ? vb : 0) - (ka ? va : 0);
	}
	qsort(rows, nr, sizeof(*rows), cmp_trow);
	if (opt->top && nr > opt->top)
		nr = opt->top;
	if (!b && opt->format != FG_TABLE_TEXT) {
		int ret = write_script(out, rows, nr, opt);

		free(rows);
		return ret;
	}

	cells = calloc((nr ? nr : 1) * ncol, CELL);
	if (!cells) {
		free(rows);
		return -ENOMEM;
	}
	for (size_t c = 0; c < ncol; c++)
		w[c] = strlen(b ? part_names[cols[c].part] : metric_names[cols[c].m]);
	for (size_t i = 0; i < nr; i++) {
		for (size_t c = 0; c < ncol; c++) {
			char *cell = cells[i * ncol + c];
			size_t cw;

			fmt_cell(cell, &rows[i], cols[c], raw);
			cw = fg_text_width(cell);
			if (cw > w[c])
				w[c] = cw;
		}
	}
	if (b) {
		/* groups (a metric's columns) as wide as their titles; titles
		 * right-aligned over their group */
		for (size_t c = 0, g; c < ncol; c = g) {
			size_t gw = 0, tl = strlen(metric_names[cols[c].m]);

			for (g = c; g < ncol && cols[g].m == cols[c].m; g++)
				gw += w[g] + (g > c);
			if (gw < tl)
				w[g - 1] += tl - gw;
			gw = gw < tl ? tl : gw;
			fputs("  ", out);
			pad(out, gw - tl);
			fputs(metric_names[cols[c].m], out);
		}
		fputs("\n", out);
	}
	for (size_t c = 0; c < ncol; c++) {
		const char *t = b ? part_names[cols[c].part] : metric_names[cols[c].m];

		fputs(!b || c == 0 || cols[c].m != cols[c - 1].m ? "  " : " ", out);
		pad(out, w[c] - strlen(t));
		fputs(t, out);
	}
	fputs(opt->srcline && !b ? "  Function  Source\n" : "  Function\n", out);
	for (size_t c = 0; c < ncol; c++) {
		fputs(!b || c == 0 || cols[c].m != cols[c - 1].m ? "  " : " ", out);
		for (size_t k = 0; k < w[c]; k++)
			fputc('=', out);
	}
	fputs("  ========\n", out);
	for (size_t i = 0; i < nr; i++) {
		for (size_t c = 0; c < ncol; c++) {
			const char *cell = cells[i * ncol + c];

			fputs(!b || c == 0 || cols[c].m != cols[c - 1].m ? "  " : " ", out);
			pad(out, w[c] - fg_text_width(cell));
			fputs(cell, out);
		}
		if (opt->srcline && !b && rows[i].a && rows[i].a->srcline)
			fprintf(out, "  %s  %s\n", rows[i].name, rows[i].a->srcline);
		else
			fprintf(out, "  %s\n", rows[i].name);
	}
	if (nohist_a || nohist_b)
		fprintf(out, "# p50/p90/p99/max need per-call latencies: %s from a folded file, "
			"which has none\n", b ? (nohist_a && nohist_b ? "A and B are" : nohist_a ?
							"A is" : "B is") : "the input is");
	free(cells);
	free(rows);
	return ferror(out) ? -EIO : 0;
}

/* ------------------------------------------------------ wake edges table */

struct wrow {
	const char *wait, *waker;
	const struct sr_node *n;
	uint64_t key;
};

static int cmp_wrow(const void *x, const void *y)
{
	const struct wrow *p = x, *q = y;
	int c;

	if (p->key != q->key)
		return p->key > q->key ? -1 : 1;
	c = strcmp(p->wait, q->wait);
	return c ? c : strcmp(p->waker, q->waker);
}

static uint64_t wrow_avg(const struct sr_node *n)
{
	return n->calls ? (n->total_ns + n->calls / 2) / n->calls : 0;
}

int fg_wake_table_write(FILE *out, const struct sr_cct *cct, const struct sr_symbolizer *sym,
			const struct fg_table_options *opt)
{
	static const char *const titles[] = { "waits", "total", "avg", "p50", "p99" };
	const struct sr_cct *e = sr_cct_wake_edges(cct);
	struct fg_table_options defopt = { 0 };
	size_t nr = 0, cap = 0, w[5];
	struct wrow *rows = NULL;
	char (*cells)[CELL];

	if (!opt)
		opt = &defopt;
	for (const struct sr_node *a = e ? sr_cct_root(e)->first_child : NULL; a; a = a->next_sibling)
		for (const struct sr_node *b = a->first_child; b; b = b->next_sibling)
			cap++;
	rows = calloc(cap ? cap : 1, sizeof(*rows));
	cells = calloc((cap ? cap : 1) * 5, CELL);
	if (!rows || !cells) {
		free(rows);
		free(cells);
		return -ENOMEM;
	}
	for (const struct sr_node *a = e ? sr_cct_root(e)->first_child : NULL; a; a = a->next_sibling)
		for (const struct sr_node *b = a->first_child; b; b = b->next_sibling) {
			struct wrow *r = &rows[nr++];

			r->wait = sr_cct_name(e, a, sym);
			r->waker = sr_cct_name(e, b, sym);
			r->n = b;
			switch (opt->sort) {
			case FG_SORT_CALLS: r->key = b->calls; break;
			case FG_SORT_AVG: r->key = wrow_avg(b); break;
			case FG_SORT_P99: r->key = sr_hist_percentile(&b->lat, 99); break;
			default: r->key = b->total_ns; break;
			}
		}
	qsort(rows, nr, sizeof(*rows), cmp_wrow);
	if (opt->top && nr > opt->top)
		nr = opt->top;
	if (opt->format != FG_TABLE_TEXT) {
		bool csv = opt->format == FG_TABLE_CSV;

		fputs(csv ? "wait_site,waker_site,waits,total_ns,avg_ns,p50_ns,p99_ns\n" :
		      "{\"edges\":[", out);
		for (size_t i = 0; i < nr; i++) {
			const struct sr_node *n = rows[i].n;
			uint64_t v[5] = { n->calls, n->total_ns, wrow_avg(n),
					  sr_hist_percentile(&n->lat, 50),
					  sr_hist_percentile(&n->lat, 99) };

			if (csv) {
				csv_field(out, rows[i].wait);
				fputc(',', out);
				csv_field(out, rows[i].waker);
				for (int k = 0; k < 5; k++)
					fprintf(out, ",%" PRIu64, v[k]);
				fputc('\n', out);
				continue;
			}
			fputs(i ? ",{\"wait_site\":" : "{\"wait_site\":", out);
			json_str(out, rows[i].wait);
			fputs(",\"waker_site\":", out);
			json_str(out, rows[i].waker);
			fprintf(out, ",\"waits\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"avg_ns\":%" PRIu64
				",\"p50_ns\":%" PRIu64 ",\"p99_ns\":%" PRIu64 "}", v[0], v[1], v[2], v[3],
				v[4]);
		}
		if (!csv)
			fputs("]}\n", out);
		free(rows);
		free(cells);
		return ferror(out) ? -EIO : 0;
	}
	for (int c = 0; c < 5; c++)
		w[c] = strlen(titles[c]);
	for (size_t i = 0; i < nr; i++) {
		const struct sr_node *n = rows[i].n;

		snprintf(cells[i * 5], CELL, "%" PRIu64, n->calls);
		fmt_value(cells[i * 5 + 1], CELL, true, n->total_ns, true, opt->raw);
		fmt_value(cells[i * 5 + 2], CELL, true, wrow_avg(n), true, opt->raw);
		fmt_value(cells[i * 5 + 3], CELL, true, sr_hist_percentile(&n->lat, 50), true, opt->raw);
		fmt_value(cells[i * 5 + 4], CELL, true, sr_hist_percentile(&n->lat, 99), true, opt->raw);
		for (int c = 0; c < 5; c++)
			if (fg_text_width(cells[i * 5 + c]) > w[c])
				w[c] = fg_text_width(cells[i * 5 + c]);
	}
	for (int c = 0; c < 5; c++) {
		fputs("  ", out);
		pad(out, w[c] - strlen(titles[c]));
		fputs(titles[c], out);
	}
	fputs("  Wait site -> waker site\n", out);
	for (int c = 0; c < 5; c++) {
		fputs("  ", out);
		for (size_t k = 0; k < w[c]; k++)
			fputc('=', out);
	}
	fputs("  =======================\n", out);
	for (size_t i = 0; i < nr; i++) {
		for (int c = 0; c < 5; c++) {
			fputs("  ", out);
			pad(out, w[c] - fg_text_width(cells[i * 5 + c]));
			fputs(cells[i * 5 + c], out);
		}
		fprintf(out, "  %s -> %s\n", rows[i].wait, rows[i].waker);
	}
	free(rows);
	free(cells);
	return ferror(out) ? -EIO : 0;
}
