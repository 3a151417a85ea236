/* ptflame - flamegraph/svg: folded stacks -> interactive SVG flame graph.
 *
 * A merged tree of frames (children by name), each node's width the sum of
 * the values below it, siblings in name order like flamegraph.pl so graphs
 * of two runs line up. Frames are written as one flat list of <g> elements
 * carrying their position in value units (data-x, data-v) and level
 * (data-l); the embedded script (svg_script.js) zooms and searches on those.
 * Walks are iterative: a deep recursion in the traced program must not
 * become a deep recursion here.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph/flamegraph.h"
#include "flamegraph/svg_script.h"

struct svg_node {
	char *name;                /* the folded frame, annotation included */
	uint64_t total;            /* after (or only) run                   */
	uint64_t before;           /* differential: the first run           */
	uint64_t x;                /* offset from the left, value units     */
	struct svg_node *parent;
	struct svg_node *child;    /* first child                           */
	struct svg_node *sibling;  /* next sibling                          */
	struct sr_hist *lat;       /* latency of its calls (fg_svg_add_hist) */
};

struct fg_svg {
	struct svg_node root;
	unsigned depth;            /* deepest stack seen                    */
	bool diff;                 /* fg_svg_add_diff was used              */
	uint64_t max_delta;        /* differential: largest stack change    */
};

enum { FRAME_H = 16, PAD_SIDE = 10, FONT_PX = 12, LEGEND_SW = 12 };
/* Monospace fonts advance 0.6 em (DejaVu Sans Mono 0.602, Liberation Mono
 * 0.6, Menlo 0.602, Consolas 0.55); a little more keeps labels inside. */
#define CHAR_EM 0.62
#define FONT_FAMILY "'DejaVu Sans Mono','Liberation Mono',Menlo,Consolas,monospace"

double fg_svg_text_width(size_t n)
{
	return (double)n * CHAR_EM * FONT_PX;
}

int fg_svg_parse_minwidth(const char *s, double *px)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 0)
		return -EINVAL;
	*px = v > 0 ? v : -1;
	return 0;
}

struct fg_svg *fg_svg_new(void)
{
	return calloc(1, sizeof(struct fg_svg));
}

void fg_svg_free(struct fg_svg *svg)
{
	struct svg_node *n;

	if (!svg)
		return;
	/* free leaves first: unlink each node from its parent as it goes */
	n = svg->root.child;
	while (n) {
		if (n->child) {
			n = n->child;
			continue;
		}
		struct svg_node *p = n->parent;

		p->child = n->sibling;
		free(n->name);
		if (n->lat)
			sr_hist_free(n->lat);
		free(n->lat);
		free(n);
		n = p == &svg->root ? p->child : p;
	}
	free(svg);
}

static struct svg_node *child_get(struct svg_node *parent, const char *name, size_t len)
{
	struct svg_node **link = &parent->child;

	for (; *link; link = &(*link)->sibling)
		if (!strncmp((*link)->name, name, len) && (*link)->name[len] == '\0')
			return *link;
	*link = calloc(1, sizeof(**link));
	if (!*link)
		return NULL;
	(*link)->name = strndup(name, len);
	if (!(*link)->name) {
		free(*link);
		*link = NULL;
		return NULL;
	}
	(*link)->parent = parent;
	return *link;
}

/* The child of n that the frame at *p of a folded stack names (made when
 * new), *p then past the frame and its ';'. NULL on ENOMEM. */
static struct svg_node *frame_child(struct svg_node *n, const char **p)
{
	const char *end = strchr(*p, ';');
	size_t len = end ? (size_t)(end - *p) : strlen(*p);

	n = child_get(n, *p, len);
	*p += len;
	if (**p == ';')
		(*p)++;
	return n;
}

static int add(struct fg_svg *svg, const char *stack, uint64_t before, uint64_t after)
{
	struct svg_node *n = &svg->root;
	unsigned depth = 0;
	const char *p = stack;
	uint64_t d = after > before ? after - before : before - after;

	n->total += after;
	n->before += before;
	while (*p) {
		n = frame_child(n, &p);
		if (!n)
			return -ENOMEM;
		n->total += after;
		n->before += before;
		depth++;
	}
	if (depth > svg->depth)
		svg->depth = depth;
	if (d > svg->max_delta)
		svg->max_delta = d;
	return 0;
}

int fg_svg_add_hist(struct fg_svg *svg, const char *stack, const struct sr_hist *h)
{
	struct svg_node *n = &svg->root;
	const char *p = stack;

	if (!h->count)
		return 0;
	while (*p) {
		n = frame_child(n, &p);
		if (!n)
			return -ENOMEM;
	}
	if (n == &svg->root)
		return 0;
	if (!n->lat) {
		n->lat = malloc(sizeof(*n->lat));
		if (!n->lat)
			return -ENOMEM;
		sr_hist_init(n->lat);
	}
	return sr_hist_merge(n->lat, h);
}

int fg_svg_add_diff(struct fg_svg *svg, const char *stack, uint64_t before, uint64_t after)
{
	svg->diff = true;
	return add(svg, stack, before, after);
}

int fg_svg_add(struct fg_svg *svg, const char *stack, uint64_t value)
{
	return add(svg, stack, 0, value);
}

int fg_svg_add_line(struct fg_svg *svg, const char *line)
{
	size_t len = strcspn(line, "\r\n");
	const char *sp;
	char *stack, *end;
	unsigned long long v;
	int ret;

	while (len && line[len - 1] == ' ')
		len--;
	sp = memrchr(line, ' ', len);
	if (!sp || sp == line)
		return -EINVAL;
	errno = 0;
	v = strtoull(sp + 1, &end, 10);
	if (errno || end != line + len || end == sp + 1 || sp[1] == '-')
		return -EINVAL;
	stack = strndup(line, (size_t)(sp - line));
	if (!stack)
		return -ENOMEM;
	ret = fg_svg_add(svg, stack, v);
	free(stack);
	return ret;
}

/* Length of the valid UTF-8 sequence at s (1..4), 0 when s does not start
 * one (a stray or truncated byte). */
static size_t utf8_len(const unsigned char *s)
{
	size_t n = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3
		 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;

	if (s[0] >= 0x80 && s[0] < 0xc2)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* Characters (code points; a bad byte is one) of s[0..len). */
static size_t text_chars(const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; n++) {
		size_t l = utf8_len((const unsigned char *)s + i);

		i += l && i + l <= len ? l : 1;
	}
	return n;
}

/* Write s[0..len) as XML text: markup escaped, control bytes and bytes that
 * are not UTF-8 as '?', at most max_chars characters. */
static void put_escaped_n(FILE *out, const char *s, size_t len, size_t max_chars)
{
	size_t n = 0;

	for (size_t i = 0; i < len && n < max_chars; n++) {
		unsigned char c = (unsigned char)s[i];
		size_t l = utf8_len((const unsigned char *)s + i);

		if (!l || i + l > len) {
			fputc('?', out);
			i++;
			continue;
		}
		switch (c) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default:
			if (c < 0x20 || c == 0x7f)
				fputc('?', out);
			else
				fwrite(s + i, 1, l, out);
		}
		i += l;
	}
}

static void put_escaped(FILE *out, const char *s)
{
	put_escaped_n(out, s, strlen(s), SIZE_MAX);
}

/* The label that fits w px: the whole name, or its start and "..", or
 * nothing when not even three characters fit. */
static void put_label(FILE *out, const char *s, size_t len, double w)
{
	double room = w - 6;
	size_t fit = room > 0 ? (size_t)(room / (CHAR_EM * FONT_PX)) : 0;

	if (fit < 3)
		return;
	if (text_chars(s, len) <= fit) {
		put_escaped_n(out, s, len, SIZE_MAX);
		return;
	}
	put_escaped_n(out, s, len, fit - 2);
	fputs("..", out);
}

/* ---------------------------------------------------------------- colour */

enum kind {
	K_CODE, K_KERNEL, K_OFFCPU, K_PREEMPTED, K_LOST, K_UNKNOWN, K_UNTRACED, K_WOKEN,
	K_WAKER, K_N
};

static const struct {
	const char *name;            /* the pseudo-frame, NULL for code   */
	const char *legend;
	unsigned base[3], spread[3];  /* rgb = base + hash % spread       */
} kinds[K_N] = {
	[K_CODE]      = { NULL, "on-CPU code", { 205, 60, 0 }, { 50, 170, 55 } },
	[K_KERNEL]    = { "[kernel]", "[kernel]", { 0, 165, 150 }, { 40, 35, 35 } },
	[K_OFFCPU]    = { "[off-cpu]", "[off-cpu]", { 60, 110, 230 }, { 30, 35, 25 } },
	[K_PREEMPTED] = { "[preempted]", "[preempted]", { 165, 115, 235 }, { 25, 25, 20 } },
	[K_LOST]      = { "[lost]", "[lost]", { 138, 138, 138 }, { 12, 12, 12 } },
	[K_UNKNOWN]   = { "[unknown]", "[unknown]", { 208, 208, 208 }, { 12, 12, 12 } },
	[K_UNTRACED]  = { "[untraced]", "[untraced]", { 150, 170, 70 }, { 20, 20, 20 } },
	/* report --wakers: the frame that names the waker, and the waker's
	 * stack above it (its code, not this thread's time on a CPU) */
	[K_WOKEN]     = { "[woken by", "[woken by ..]", { 0, 150, 140 }, { 20, 20, 20 } },
	[K_WAKER]     = { NULL, "waker's stack", { 120, 200, 225 }, { 40, 35, 30 } },
};

/* (A function named by its FDE, "file+0xADDR", is code like any other:
 * K_CODE; "[unknown] (path)", code nothing names, is K_UNKNOWN's grey.) */
static enum kind frame_kind(const char *name, size_t len)
{
	for (int k = 1; k < K_N; k++) {
		size_t kl = kinds[k].name ? strlen(kinds[k].name) : 0;

		if (!kl)
			continue;

		if (len >= kl && !memcmp(name, kinds[k].name, kl) && (len == kl || name[kl] == ' '))
			return (enum kind)k;
	}
	return K_CODE;
}

/* Stable per name (the whole name: every "std::" frame differs), so a
 * function has the same colour in every graph. */
static void kind_colour(enum kind k, const char *name, size_t len, unsigned rgb[3])
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	h ^= h >> 15;
	for (int c = 0; c < 3; c++) {
		rgb[c] = kinds[k].base[c] + (kinds[k].spread[c] ? h % (kinds[k].spread[c] + 1) : 0);
		h = h * 2654435761u + 0x9e3779b9u;
		h ^= h >> 13;
	}
}

/* Differential: red grew, blue shrank, near white unchanged; saturation by
 * the change relative to the largest change of one stack (capped). */
static void diff_colour(const struct fg_svg *svg, const struct svg_node *n, unsigned rgb[3])
{
	uint64_t d = n->total > n->before ? n->total - n->before : n->before - n->total;
	double s = svg->max_delta ? (double)d / (double)svg->max_delta : 0;
	unsigned v;

	if (s > 1)
		s = 1;
	v = (unsigned)lround(235 - 200 * s);
	if (n->total == n->before)
		rgb[0] = rgb[1] = rgb[2] = 235;
	else if (n->total > n->before)
		rgb[0] = 255, rgb[1] = rgb[2] = v;
	else
		rgb[0] = rgb[1] = v, rgb[2] = 255;
}

/* ---------------------------------------------------------------- layout */

struct layout {
	FILE *out;
	const struct fg_svg *svg;
	unsigned width;
	double scale;      /* px per value unit */
	double min_px;
	bool inverted, ns;
	unsigned top;      /* y of the frames area */
	uint64_t grand;
	const char *unit;
};

static double frame_y(const struct layout *l, unsigned level)
{
	return l->top + (double)(l->inverted ? level : l->svg->depth - level) * FRAME_H;
}

static void put_amount(const struct layout *l, uint64_t v)
{
	char buf[64];

	if (l->ns) {
		fg_format_ns(buf, sizeof(buf), v);
		fputs(buf, l->out);
	} else {
		fprintf(l->out, "%" PRIu64 " ", v);
		put_escaped(l->out, l->unit);
	}
}

static double pct(uint64_t v, uint64_t of)
{
	return of ? 100.0 * (double)v / (double)of : 0.0;
}

/* The distribution as text: percentiles, then one block character per
 * log2 bucket from the lowest to the highest, as tall as its count. */
static void put_hist(const struct layout *l, const struct sr_hist *h)
{
	static const char *const bars[8] = { "\u2581", "\u2582", "\u2583", "\u2584",
					     "\u2585", "\u2586", "\u2587", "\u2588" };
	uint64_t cnt[65] = { 0 }, top = 0;
	unsigned lo = 64, hi = 0;
	FILE *out = l->out;

	for (uint32_t i = 0; i < h->nb; i++) {
		uint64_t v = sr_hist_bucket_lo(h->b[i].idx);
		unsigned k = v ? 64 - (unsigned)__builtin_clzll(v) : 0;  /* 0, 1, 2-3: 2, ... */

		cnt[k] += h->b[i].count;
		lo = k < lo ? k : lo;
		hi = k > hi ? k : hi;
	}
	fputs("\np50 ", out);
	put_amount(l, sr_hist_percentile(h, 50));
	fputs(", p90 ", out);
	put_amount(l, sr_hist_percentile(h, 90));
	fputs(", p99 ", out);
	put_amount(l, sr_hist_percentile(h, 99));
	fputs(", max ", out);
	put_amount(l, h->max);
	if (lo > hi)
		return;
	for (unsigned k = lo; k <= hi; k++)
		top = cnt[k] > top ? cnt[k] : top;
	fputc('\n', out);
	put_amount(l, h->min);
	fputc(' ', out);
	for (unsigned k = lo; k <= hi; k++) {
		if (!cnt[k]) {
			fputs("\u2007", out);   /* a figure space: an empty bucket */
			continue;
		}
		fputs(bars[(cnt[k] * 8 + top - 1) / top - 1], out);
	}
	fputc(' ', out);
	put_amount(l, h->max);
	fputs(" (log2 buckets)", out);
}

/* Tooltip: name, time and share; calls and average from an annotation;
 * the change for a differential graph. Lines end in '\n' (the script reads
 * the first line as the name). */
static void put_title(const struct layout *l, const struct svg_node *n, const char *name,
		      size_t name_len, bool ann, uint64_t calls, bool has_avg, uint64_t avg)
{
	FILE *out = l->out;

	fputs("<title>", out);
	put_escaped_n(out, name, name_len, SIZE_MAX);
	fputc('\n', out);
	put_amount(l, n->total);
	fprintf(out, " (%.2f%%)", pct(n->total, l->grand));
	if (ann) {
		fprintf(out, "\n%" PRIu64 " call%s", calls, calls == 1 ? "" : "s");
		if (has_avg) {
			fputs(", avg ", out);
			put_amount(l, avg);
		} else {
			fputs(" (inferred: none seen whole)", out);
		}
	}
	if (n->lat && n->lat->count)
		put_hist(l, n->lat);
	if (l->svg->diff) {
		uint64_t d = n->total > n->before ? n->total - n->before : n->before - n->total;

		fputs("\nbefore ", out);
		put_amount(l, n->before);
		fprintf(out, ", change %c", n->total >= n->before ? '+' : '-');
		put_amount(l, d);
		if (n->before)
			fprintf(out, " (%c%.2f%%)", n->total >= n->before ? '+' : '-',
				pct(d, n->before));
		else if (n->total)
			fputs(" (new)", out);
	}
	fputs("</title>", out);
}

/* under_waker: n is above a "[woken by" frame (report --wakers): its code
 * is the waker's stack. */
static void draw_frame(const struct layout *l, const struct svg_node *n, unsigned level,
		       bool under_waker, unsigned kinds_seen[K_N])
{
	const char *fname = n == &l->svg->root ? "all" : n->name;
	size_t len = strlen(fname), name_len = len;
	uint64_t calls = 0, avg = 0;
	bool has_avg = false, ann = n != &l->svg->root &&
		fg_frame_split(fname, len, &name_len, &calls, &has_avg, &avg);
	double x = PAD_SIDE + (double)n->x * l->scale, w = (double)n->total * l->scale;
	double y = frame_y(l, level);
	unsigned rgb[3];

	if (!ann)
		name_len = len;
	if (n == &l->svg->root) {
		rgb[0] = 240, rgb[1] = 225, rgb[2] = 195;
	} else if (l->svg->diff) {
		diff_colour(l->svg, n, rgb);
	} else {
		enum kind k = frame_kind(fname, name_len);

		if (k == K_CODE && under_waker)
			k = K_WAKER;
		kind_colour(k, fname, name_len, rgb);
		kinds_seen[k]++;
	}
	fprintf(l->out, "<g class=\"f\" data-x=\"%" PRIu64 "\" data-v=\"%" PRIu64 "\" "
		"data-l=\"%u\">", n->x, n->total, level);
	put_title(l, n, fname, name_len, ann, calls, has_avg, avg);
	fprintf(l->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
		"fill=\"rgb(%u,%u,%u)\" rx=\"2\" ry=\"2\"/><text x=\"%.1f\" y=\"%.1f\">",
		x, y, w, FRAME_H - 1, rgb[0], rgb[1], rgb[2], x + 3, y + FRAME_H - 4.5);
	put_label(l->out, fname, name_len, w);
	fputs("</text></g>\n", l->out);
}

static int by_name(const void *a, const void *b)
{
	const struct svg_node *x = *(const struct svg_node *const *)a;
	const struct svg_node *y = *(const struct svg_node *const *)b;

	return strcmp(x->name, y->name);
}

/* Siblings in name order (as flamegraph.pl), each node's x after its
 * previous siblings. */
static int sort_children(struct svg_node *n, struct svg_node ***buf, size_t *cap)
{
	size_t nr = 0, i = 0;
	uint64_t x = n->x;

	for (struct svg_node *c = n->child; c; c = c->sibling)
		nr++;
	if (nr > 1) {
		if (nr > *cap) {
			struct svg_node **v = realloc(*buf, nr * sizeof(*v));

			if (!v)
				return -ENOMEM;
			*buf = v;
			*cap = nr;
		}
		for (struct svg_node *c = n->child; c; c = c->sibling)
			(*buf)[i++] = c;
		qsort(*buf, nr, sizeof(**buf), by_name);
		for (i = 0; i + 1 < nr; i++)
			(*buf)[i]->sibling = (*buf)[i + 1];
		(*buf)[nr - 1]->sibling = NULL;
		n->child = (*buf)[0];
	}
	for (struct svg_node *c = n->child; c; c = c->sibling) {
		c->x = x;
		x += c->total;
	}
	return 0;
}

/* ---------------------------------------------------------------- legend */

enum { LEGEND_ROW = 18 };

static const struct {
	const char *text;
	unsigned rgb[3];
} diff_legend[] = {
	{ "grew (after > before)", { 255, 35, 35 } },
	{ "shrank", { 35, 35, 255 } },
	{ "unchanged", { 235, 235, 235 } },
};
#define DIFF_LEGEND_N (sizeof(diff_legend) / sizeof(diff_legend[0]))

struct legend {
	FILE *out;         /* NULL: only count rows */
	double x, y;
	unsigned width, rows;
};

static void legend_item(struct legend *lg, const unsigned rgb[3], const char *text)
{
	double w = LEGEND_SW + 4 + fg_svg_text_width(strlen(text));

	if (!lg->rows)
		lg->rows = 1;
	if (lg->x > PAD_SIDE && lg->x + w > lg->width - PAD_SIDE) {
		lg->x = PAD_SIDE;
		lg->y += LEGEND_ROW;
		lg->rows++;
	}
	if (lg->out) {
		fprintf(lg->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" "
			"fill=\"rgb(%u,%u,%u)\" stroke=\"#666\" stroke-width=\"0.5\"/>"
			"<text x=\"%.1f\" y=\"%.1f\">", lg->x, lg->y, LEGEND_SW, LEGEND_SW,
			rgb[0], rgb[1], rgb[2], lg->x + LEGEND_SW + 4, lg->y + 10);
		put_escaped(lg->out, text);
		fputs("</text>\n", lg->out);
	}
	lg->x += w + 18;
}

/* Rows the legend needs at most (every entry present). */
static unsigned legend_rows(unsigned width, bool diff)
{
	struct legend lg = { .x = PAD_SIDE, .width = width };
	static const unsigned none[3];

	for (size_t i = 0; i < (diff ? DIFF_LEGEND_N : (size_t)K_N); i++)
		legend_item(&lg, none, diff ? diff_legend[i].text : kinds[i].legend);
	return lg.rows;
}

static void put_button(FILE *out, const char *id, double x, double y, const char *anchor,
		       const char *text, const char *hint)
{
	fprintf(out, "<text id=\"%s\" class=\"btn\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">"
		"<title>%s</title>%s</text>\n", id, x, y, anchor, hint, text);
}

int fg_svg_write(struct fg_svg *svg, FILE *out, const struct fg_svg_options *opt)
{
	static const struct fg_svg_options defopt = { 0 };
	unsigned kinds_seen[K_N] = { 0 };
	struct svg_node **buf = NULL;
	size_t cap = 0;
	struct layout l = { .out = out, .svg = svg };
	const char *title;
	unsigned height, frames_end;
	struct legend lg;

	if (!opt)
		opt = &defopt;
	l.width = opt->width ? opt->width : 1200;
	if (l.width < 200)
		l.width = 200;
	l.min_px = opt->min_width_px > 0 ? opt->min_width_px : opt->min_width_px < 0 ? 0 : 0.1;
	l.inverted = opt->inverted;
	l.unit = opt->unit ? opt->unit : "ns";
	l.ns = !strcmp(l.unit, "ns");
	l.grand = svg->root.total;
	l.scale = l.grand ? (double)(l.width - 2 * PAD_SIDE) / (double)l.grand : 0;
	l.top = opt->subtitle ? 72 : 56;
	title = opt->title ? opt->title : svg->diff ? "Differential Flame Graph"
		: opt->inverted ? "Icicle Graph" : "Flame Graph";
	frames_end = l.top + (svg->depth + 1) * FRAME_H;
	/* the details line, then the legend: room for every kind's entry */
	height = frames_end + 24 + legend_rows(l.width, svg->diff) * LEGEND_ROW + 8;

	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" id=\"ptflame\" width=\"%u\" height=\"%u\" "
		"viewBox=\"0 0 %u %u\" xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>\n"
		"text { font-family: " FONT_FAMILY "; font-size: %dpx; fill: #000; }\n"
		"#frames text { pointer-events: none; }\n"
		"#frames g.f { cursor: pointer; }\n"
		"#frames g.f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
		"#frames g.parent { opacity: 0.55; }\n"
		"#frames g.hide { display: none; }\n"
		".btn { cursor: pointer; fill: #1a3d8f; text-decoration: underline; }\n"
		".btn.off { opacity: 0; pointer-events: none; }\n"
		"#matched { fill: #8a1a8a; }\n"
		"</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
		"<text id=\"title\" x=\"%u\" y=\"24\" text-anchor=\"middle\" style=\"font-size:17px\">",
		l.width, height, l.width, height, FONT_PX, l.width / 2);
	put_escaped(out, title);
	fputs("</text>\n", out);
	if (opt->subtitle) {
		fprintf(out, "<text id=\"subtitle\" x=\"%u\" y=\"42\" text-anchor=\"middle\">",
			l.width / 2);
		put_escaped(out, opt->subtitle);
		fputs("</text>\n", out);
	}
	put_button(out, "unzoom", PAD_SIDE, l.top - 8, "start", "Reset Zoom",
		   "back to the whole graph");
	put_button(out, "search", l.width - PAD_SIDE, l.top - 8, "end", "Search",
		   "highlight frames matching a regular expression (Ctrl-F); again: clear");
	fprintf(out, "<text id=\"matched\" x=\"%.1f\" y=\"%u\" text-anchor=\"end\"></text>\n",
		(double)l.width - PAD_SIDE, frames_end + 18);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n", PAD_SIDE,
		frames_end + 18);

	fputs("<g id=\"frames\">\n", out);
	if (sort_children(&svg->root, &buf, &cap))
		goto nomem;
	draw_frame(&l, &svg->root, 0, false, kinds_seen);
	{
		struct svg_node *n = svg->root.child;
		unsigned level = 1, woken = 0;   /* level of the "[woken by" below */

		while (n) {
			bool wide = n->total && (double)n->total * l.scale >= l.min_px;

			if (woken >= level)
				woken = 0;
			if (wide) {
				draw_frame(&l, n, level, woken != 0, kinds_seen);
				if (!woken && frame_kind(n->name, strlen(n->name)) == K_WOKEN)
					woken = level;
				if (sort_children(n, &buf, &cap))
					goto nomem;
			}
			/* next: first child of a drawn frame, else the next
			 * sibling of it or of an ancestor */
			if (wide && n->child) {
				n = n->child;
				level++;
				continue;
			}
			while (n != &svg->root && !n->sibling) {
				n = n->parent;
				level--;
			}
			n = n == &svg->root ? NULL : n->sibling;
		}
	}
	fputs("</g>\n", out);
	free(buf);

	/* legend */
	lg = (struct legend){ .out = out, .x = PAD_SIDE, .y = frames_end + 30, .width = l.width };
	fputs("<g id=\"legend\">\n", out);
	if (svg->diff) {
		for (size_t i = 0; i < DIFF_LEGEND_N; i++)
			legend_item(&lg, diff_legend[i].rgb, diff_legend[i].text);
	} else {
		for (int k = 0; k < K_N; k++) {
			unsigned rgb[3];

			if (!kinds_seen[k])
				continue;
			/* the swatch: the middle of the kind's colour family */
			for (int c = 0; c < 3; c++)
				rgb[c] = kinds[k].base[c] + kinds[k].spread[c] / 2;
			legend_item(&lg, rgb, kinds[k].legend);
		}
	}
	fputs("</g>\n", out);

	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n"
		"var fg_cfg = { width: %u, pad: %d, cw: %.4f, minpx: %.3f, total: %" PRIu64
		", inverted: %s };\n", l.width, PAD_SIDE, CHAR_EM * FONT_PX, l.min_px, l.grand,
		l.inverted ? "true" : "false");
	fputs(fg_svg_script, out);
	fputs("]]></script>\n</svg>\n", out);
	return ferror(out) ? -EIO : 0;
nomem:
	free(buf);
	return -ENOMEM;
}
