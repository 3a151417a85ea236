/* ptflame - flamegraph/svg: folded stacks -> SVG flame graph.
 *
 * A merged tree of frames (children by name), each node's width is the sum
 * of values below it; drawn root at the bottom like flamegraph.pl so users
 * read it the way they are used to. Tooltips (<title>) carry the exact value
 * and share. No script: the file stays small and safe to open anywhere.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph/svg.h"

struct svg_node {
	char *name;
	uint64_t total;
	struct svg_node *child;    /* first child                           */
	struct svg_node *sibling;  /* next sibling                          */
};

struct fg_svg {
	struct svg_node root;
	unsigned depth;            /* deepest stack seen                    */
};

struct fg_svg *fg_svg_new(void)
{
	return calloc(1, sizeof(struct fg_svg));
}

static void node_free(struct svg_node *n)
{
	while (n) {
		struct svg_node *next = n->sibling;

		node_free(n->child);
		free(n->name);
		free(n);
		n = next;
	}
}

void fg_svg_free(struct fg_svg *svg)
{
	if (!svg)
		return;
	node_free(svg->root.child);
	free(svg);
}

static struct svg_node *child_get(struct svg_node *parent, const char *name, size_t len)
{
	struct svg_node **link = &parent->child;

	for (; *link; link = &(*link)->sibling)
		if (strlen((*link)->name) == len && !memcmp((*link)->name, name, len))
			return *link;
	*link = calloc(1, sizeof(**link));
	if (!*link)
		return NULL;
	(*link)->name = strndup(name, len);
	if (!(*link)->name) {
		free(*link);
		*link = NULL;
	}
	return *link;
}

int fg_svg_add(struct fg_svg *svg, const char *stack, uint64_t value)
{
	struct svg_node *n = &svg->root;
	unsigned depth = 0;
	const char *p = stack;

	n->total += value;
	while (*p) {
		const char *end = strchr(p, ';');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		n = child_get(n, p, len);
		if (!n)
			return -ENOMEM;
		n->total += value;
		depth++;
		p += len;
		if (*p == ';')
			p++;
	}
	if (depth > svg->depth)
		svg->depth = depth;
	return 0;
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
	if (errno || end != line + len || end == sp + 1)
		return -EINVAL;
	stack = strndup(line, (size_t)(sp - line));
	if (!stack)
		return -ENOMEM;
	ret = fg_svg_add(svg, stack, v);
	free(stack);
	return ret;
}

static void put_escaped(FILE *out, const char *s, size_t max_chars)
{
	size_t n = 0;

	for (; *s && n < max_chars; s++, n++) {
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default:
			/* Control bytes are not allowed in XML 1.0. */
			fputc((unsigned char)*s < 0x20 ? '?' : *s, out);
		}
	}
	if (*s && max_chars >= 2)
		fputs("..", out);
}

/* Warm colours like a classic CPU flame graph, stable per name so the same
 * function has the same colour in every graph; pseudo-frames ([off-cpu],
 * [kernel], ...) get cool blues so waiting stands out from running. */
static void frame_colour(const char *name, unsigned rgb[3])
{
	uint32_t h = 2166136261u;

	for (const char *p = name; *p && *p != ':'; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	if (name[0] == '[') {
		rgb[0] = 60 + h % 40;
		rgb[1] = 110 + (h >> 8) % 60;
		rgb[2] = 200 + (h >> 16) % 55;
		return;
	}
	rgb[0] = 205 + h % 50;
	rgb[1] = (h >> 8) % 200;
	rgb[2] = (h >> 16) % 55;
}

struct layout {
	FILE *out;
	double scale;      /* px per value unit */
	double min_px;
	unsigned height;   /* image height      */
	uint64_t grand;
	const char *unit;
};

enum { FRAME_H = 16, PAD_TOP = 50, PAD_SIDE = 10, PAD_BOTTOM = 30, CHAR_W = 7 };

static void draw(const struct layout *l, const struct svg_node *n, double x, unsigned level)
{
	double w = (double)n->total * l->scale;
	double y = l->height - PAD_BOTTOM - (double)(level + 1) * FRAME_H;
	unsigned rgb[3];

	if (w < l->min_px)
		return;
	frame_colour(n->name, rgb);
	fputs("<g><title>", l->out);
	put_escaped(l->out, n->name, (size_t)-1);
	fprintf(l->out, " (%" PRIu64 " %s, %.2f%%)</title>", n->total, l->unit,
		l->grand ? 100.0 * (double)n->total / (double)l->grand : 0.0);
	fprintf(l->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
		"fill=\"rgb(%u,%u,%u)\" rx=\"2\" ry=\"2\"/>", x, y, w, FRAME_H - 1,
		rgb[0], rgb[1], rgb[2]);
	if (w > 3 * CHAR_W) {
		fprintf(l->out, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + FRAME_H - 5);
		put_escaped(l->out, n->name, (size_t)((w - 6) / CHAR_W));
		fputs("</text>", l->out);
	}
	fputs("</g>\n", l->out);
	for (const struct svg_node *c = n->child; c; c = c->sibling) {
		draw(l, c, x, level + 1);
		x += (double)c->total * l->scale;
	}
}

static int by_name(const void *a, const void *b)
{
	const struct svg_node *x = *(const struct svg_node *const *)a;
	const struct svg_node *y = *(const struct svg_node *const *)b;

	return strcmp(x->name, y->name);
}

/* flamegraph.pl orders siblings alphabetically; so do we, so graphs of two
 * runs line up. */
static int sort_children(struct svg_node *n)
{
	size_t nr = 0, i = 0;
	struct svg_node **v;

	for (struct svg_node *c = n->child; c; c = c->sibling)
		nr++;
	if (nr > 1) {
		v = malloc(nr * sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (struct svg_node *c = n->child; c; c = c->sibling)
			v[i++] = c;
		qsort(v, nr, sizeof(*v), by_name);
		for (i = 0; i + 1 < nr; i++)
			v[i]->sibling = v[i + 1];
		v[nr - 1]->sibling = NULL;
		n->child = v[0];
		free(v);
	}
	for (struct svg_node *c = n->child; c; c = c->sibling)
		if (sort_children(c))
			return -ENOMEM;
	return 0;
}

int fg_svg_write(const struct fg_svg *svg, FILE *out, const struct fg_svg_options *opt)
{
	unsigned width = opt && opt->width ? opt->width : 1200;
	const char *title = opt && opt->title ? opt->title : "Flame Graph";
	struct layout l = {
		.out = out,
		.min_px = opt && opt->min_width_px > 0 ? opt->min_width_px : 0.1,
		.height = PAD_TOP + PAD_BOTTOM + (svg->depth + 1) * FRAME_H,
		.grand = svg->root.total,
		.unit = opt && opt->unit ? opt->unit : "ns",
	};

	if (sort_children((struct svg_node *)&svg->root))
		return -ENOMEM;
	l.scale = l.grand ? (double)(width - 2 * PAD_SIDE) / (double)l.grand : 0;
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text { font-family: monospace; font-size: 12px; fill: #000; }</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
		"<text x=\"%u\" y=\"24\" text-anchor=\"middle\" style=\"font-size:17px\">",
		width, l.height, width, l.height, width / 2);
	put_escaped(out, title, (size_t)-1);
	fputs("</text>\n", out);
	if (opt && opt->subtitle) {
		fprintf(out, "<text x=\"%u\" y=\"42\" text-anchor=\"middle\">", width / 2);
		put_escaped(out, opt->subtitle, (size_t)-1);
		fputs("</text>\n", out);
	}
	fprintf(out, "<g><title>all (%" PRIu64 " %s, 100%%)</title><rect x=\"%d\" y=\"%u\" "
		"width=\"%u\" height=\"%d\" fill=\"rgb(230,200,150)\" rx=\"2\" ry=\"2\"/>"
		"<text x=\"%d\" y=\"%u\">all</text></g>\n", l.grand, l.unit, PAD_SIDE,
		l.height - PAD_BOTTOM - FRAME_H, width - 2 * PAD_SIDE, FRAME_H - 1,
		PAD_SIDE + 3, l.height - PAD_BOTTOM - 5);
	double x = PAD_SIDE;
	for (const struct svg_node *c = svg->root.child; c; c = c->sibling) {
		draw(&l, c, x, 1);
		x += (double)c->total * l.scale;
	}
	fputs("</svg>\n", out);
	return ferror(out) ? -EIO : 0;
}
