/* ptflame - flamegraph/fold: CCT -> folded stacks (plain or annotated).
 *
 * The tree is walked once without recursion, keeping the folded path of the
 * current node in one buffer; lines are collected, sorted and merged so the
 * output does not depend on the order children were created in.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph/flamegraph.h"

/* ---- names ---- */

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Where a trailing number as flamegraph.pl reads one (\d+(\.\d*)?) starts in
 * s[0..len), or len when s does not end in one. */
static size_t trailing_number(const char *s, size_t len)
{
	size_t i = len, j;

	while (i && is_digit(s[i - 1]))
		i--;
	if (i && s[i - 1] == '.') {
		j = i - 1;
		while (j && is_digit(s[j - 1]))
			j--;
		if (j < i - 1)
			return j;
	}
	return i < len ? i : len;
}

/* True when s[0..len) ends in whitespace, or in whitespace and a number. */
static bool bad_ending(const char *s, size_t len)
{
	size_t num = trailing_number(s, len);

	return num > 0 && is_ws(s[num - 1]);
}

size_t fg_frame_sanitize(char *dst, size_t dstsz, const char *name)
{
	size_t len, num, i;
	char *buf;

	if (!name || !*name)
		name = "[unknown]";
	len = strlen(name);
	/* The rules need the whole name: work in dst when it holds it, else
	 * on a copy (a failed malloc gives an empty name). */
	buf = dstsz > len ? dst : malloc(len + 1);
	if (!buf) {
		if (dstsz)
			dst[0] = '\0';
		return 0;
	}
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		buf[i] = c == ';' ? '_' : (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	/* flamegraph.pl would take "name 12" at the end of a line as an extra
	 * value column; trailing blanks are invisible anyway. */
	num = trailing_number(buf, len);
	while (num > 0 && buf[num - 1] == ' ')
		buf[--num] = '_';
	if (buf == dst) {
		dst[len] = '\0';
		return len;
	}
	if (dstsz) {
		size_t n = len < dstsz - 1 ? len : dstsz - 1;

		memcpy(dst, buf, n);
		dst[n] = '\0';
	}
	free(buf);
	return len;
}

bool fg_frame_split(const char *frame, size_t len, size_t *name_len,
		    uint64_t *calls, bool *has_avg, uint64_t *avg_ns)
{
	static const char inferred[] = "(inferred)";
	size_t end = len, i, colon;
	bool avg = false;
	uint64_t a = 0, c = 0;

	/* From the right: ",avg:N" or "(inferred)", then ":N". */
	if (end >= sizeof(inferred) - 1 &&
	    !memcmp(frame + end - (sizeof(inferred) - 1), inferred, sizeof(inferred) - 1)) {
		end -= sizeof(inferred) - 1;
	} else {
		i = end;
		while (i && is_digit(frame[i - 1]))
			i--;
		if (i == end || i < 5 || memcmp(frame + i - 5, ",avg:", 5))
			goto bare;
		for (size_t k = i; k < end; k++)
			a = a * 10 + (uint64_t)(frame[k] - '0');
		avg = true;
		end = i - 5;
	}
	i = end;
	while (i && is_digit(frame[i - 1]))
		i--;
	if (i == end || i < 2 || frame[i - 1] != ':')
		goto bare;
	colon = i - 1;
	for (size_t k = i; k < end; k++)
		c = c * 10 + (uint64_t)(frame[k] - '0');
	if (name_len)
		*name_len = colon;
	if (calls)
		*calls = c;
	if (has_avg)
		*has_avg = avg;
	if (avg_ns)
		*avg_ns = a;
	return true;
bare:
	if (name_len)
		*name_len = len;
	if (calls)
		*calls = 0;
	if (has_avg)
		*has_avg = false;
	if (avg_ns)
		*avg_ns = 0;
	return false;
}

bool fg_folded_line_valid(const char *line)
{
	size_t len = strlen(line), sp, start;

	if (len && line[len - 1] == '\n')
		len--;
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			return false;
	sp = len;
	while (sp && line[sp - 1] != ' ')
		sp--;
	if (!sp || sp == len)           /* no space, or no value           */
		return false;
	for (size_t i = sp; i < len; i++)
		if (!is_digit(line[i]))
			return false;
	sp--;                           /* the stack is line[0..sp)        */
	start = 0;
	for (size_t i = 0; i <= sp; i++) {
		if (i < sp && line[i] != ';')
			continue;
		if (i == start || bad_ending(line + start, i - start))
			return false;
		start = i + 1;
	}
	return true;
}

/* ---- folding ---- */

struct line {
	char *stack;
	uint64_t value;
};

struct fold {
	const struct sr_cct *cct;
	const struct sr_symbolizer *sym;
	enum fg_fold_style style;
	char *path;                 /* folded path of the current node     */
	size_t len, cap;
	char *name;                 /* sanitize scratch                     */
	size_t name_cap;
	struct line *lines;
	size_t nlines, lines_cap;
};

static int reserve(char **buf, size_t *cap, size_t need)
{
	char *p;
	size_t c = *cap ? *cap : 256;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	p = realloc(*buf, c);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = c;
	return 0;
}

/* Append ";frame" (or "frame" at depth 1) for n to the path. */
static int push_frame(struct fold *f, const struct sr_node *n)
{
	const char *raw = sr_cct_name(f->cct, n, f->sym);
	char ann[64] = "";
	size_t nlen, alen;

	/* room for the name or "[unknown]": sanitized in one pass */
	if (reserve(&f->name, &f->name_cap, (raw ? strlen(raw) : 0) + sizeof("[unknown]")))
		return -ENOMEM;
	nlen = fg_frame_sanitize(f->name, f->name_cap, raw);
	if (f->style == FG_FOLD_ANNOTATED && n->calls) {
		uint64_t complete = n->lat.count;

		if (complete)
			snprintf(ann, sizeof(ann), ":%" PRIu64 ",avg:%" PRIu64, n->calls,
				 (n->lat.sum + complete / 2) / complete);
		else
			snprintf(ann, sizeof(ann), ":%" PRIu64 "(inferred)", n->calls);
	}
	alen = strlen(ann);
	if (reserve(&f->path, &f->cap, f->len + 1 + nlen + alen + 1))
		return -ENOMEM;
	if (f->len)
		f->path[f->len++] = ';';
	memcpy(f->path + f->len, f->name, nlen);
	memcpy(f->path + f->len + nlen, ann, alen + 1);
	f->len += nlen + alen;
	return 0;
}

static int add_line(struct fold *f, uint64_t value)
{
	char *s;

	if (f->nlines == f->lines_cap) {
		size_t cap = f->lines_cap ? f->lines_cap * 2 : 64;
		struct line *v = realloc(f->lines, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		f->lines = v;
		f->lines_cap = cap;
	}
	s = strndup(f->path, f->len);
	if (!s)
		return -ENOMEM;
	f->lines[f->nlines++] = (struct line){ .stack = s, .value = value };
	return 0;
}

static int by_stack(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->stack, ((const struct line *)b)->stack);
}

/* Pre-order walk; lens[d] is the path length before the frame at depth d. */
static int collect(struct fold *f)
{
	const struct sr_node *root = sr_cct_root(f->cct), *n = root->first_child;
	size_t *lens = NULL, depth = 0, lens_cap = 0;
	int ret = 0;

	while (n && !ret) {
		if (depth == lens_cap) {
			size_t cap = lens_cap ? lens_cap * 2 : 64;
			size_t *v = realloc(lens, cap * sizeof(*v));

			if (!v) {
				ret = -ENOMEM;
				break;
			}
			lens = v;
			lens_cap = cap;
		}
		lens[depth++] = f->len;
		ret = push_frame(f, n);
		/* A leaf with calls but no time still gets a (0) line when
		 * annotated, so that every counted call shows somewhere. */
		if (!ret && (n->self_ns || (f->style == FG_FOLD_ANNOTATED &&
					    !n->first_child && n->calls)))
			ret = add_line(f, n->self_ns);
		if (n->first_child) {
			n = n->first_child;
			continue;
		}
		/* Leave n and every ancestor that has no next sibling. */
		while (n != root) {
			f->len = lens[--depth];
			if (n->next_sibling)
				break;
			n = n->parent;
		}
		n = n == root ? NULL : n->next_sibling;
	}
	free(lens);
	return ret;
}

int fg_fold(FILE *out, const struct sr_cct *cct, const struct sr_symbolizer *sym,
	    const struct fg_fold_options *opt)
{
	struct fold f = {
		.cct = cct,
		.sym = sym,
		.style = opt ? opt->style : FG_FOLD_ANNOTATED,
	};
	uint64_t min_ns = opt ? opt->min_ns : 0;
	int ret = collect(&f);

	if (!ret) {
		if (f.nlines)
			qsort(f.lines, f.nlines, sizeof(*f.lines), by_stack);
		for (size_t i = 0; i < f.nlines; i++) {
			uint64_t v = f.lines[i].value;

			/* Two contexts can print alike (same name, two keys). */
			while (i + 1 < f.nlines && !strcmp(f.lines[i].stack, f.lines[i + 1].stack))
				v += f.lines[++i].value;
			if (v < min_ns)
				continue;
			fprintf(out, "%s %" PRIu64 "\n", f.lines[i].stack, v);
		}
		if (ferror(out))
			ret = -EIO;
	}
	for (size_t i = 0; i < f.nlines; i++)
		free(f.lines[i].stack);
	free(f.lines);
	free(f.path);
	free(f.name);
	return ret;
}
