/* ptflame - flamegraph/fold: CCT -> folded stacks (plain or annotated).
 *
 * The tree is walked once without recursion, keeping the folded path of the
 * current frame in one buffer, and every line is printed as soon as it is
 * known: memory grows with the depth and the width of one level, never with
 * the number of lines. At each level the children of the frame being
 * printed are sorted by their printed name, and nodes printing alike (two
 * functions of one name, from two files) are one frame: their calls,
 * latencies, time and children are added up, as the tables do.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/dc_vec.h"
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

struct ent {
	const struct sr_node *n;
	size_t name;                /* offset in the level's names          */
};

/* The children of one printed frame (of all its nodes), sorted by name. */
struct level {
	struct ent *e;
	size_t n, cap, pos;
	char *names;
	size_t nlen, ncap;
	size_t path_len;            /* the path's length before this level  */
};

struct fold {
	const struct sr_cct *cct;
	const struct sr_symbolizer *sym;
	enum fg_fold_style style;
	uint64_t min_ns;
	bool part;
	int (*on_frame)(void *ctx, const char *path, const struct sr_hist *lat);
	void *frame_ctx;
	FILE *out;
	char *path;                 /* folded path of the current frame     */
	size_t len, cap;
	struct level *lv;
	size_t nlv;
};

static int by_name(const void *a, const void *b, void *names)
{
	return strcmp((const char *)names + ((const struct ent *)a)->name,
		      (const char *)names + ((const struct ent *)b)->name);
}

/* L = the children of the nodes of group[0..n), named and sorted. */
static int fill(struct fold *f, struct level *L, const struct ent *group, size_t n)
{
	L->n = L->pos = L->nlen = 0;
	for (size_t g = 0; g < n; g++) {
		for (const struct sr_node *c = group[g].n->first_child; c; c = c->next_sibling) {
			const char *raw = sr_cct_name(f->cct, c, f->sym);
			size_t need = (raw ? strlen(raw) : 0) + sizeof("[unknown]");

			if (DC_VEC_PUSH_ROOM(L->e, L->n, L->cap, 16))
				return -ENOMEM;
			if (dc_vec_reserve((void **)&L->names, &L->ncap, L->nlen + need, 1, 256))
				return -ENOMEM;
			L->e[L->n++] = (struct ent){ .n = c, .name = L->nlen };
			L->nlen += fg_frame_sanitize(L->names + L->nlen, need, raw) + 1;
		}
	}
	if (L->n > 1)
		qsort_r(L->e, L->n, sizeof(*L->e), by_name, L->names);
	return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* Print the frame of e[0..n) (nodes of one name) at path length base. */
static int print_frame(struct fold *f, const struct level *L, const struct ent *e, size_t n,
		       bool *has_children)
{
	uint64_t calls = 0, complete = 0, self = 0, lat_sum = 0;
	const char *name = L->names + e[0].name;
	size_t nlen = strlen(name);
	char ann[64] = "";
	size_t alen;

	*has_children = false;
	for (size_t i = 0; i < n; i++) {
		calls = sat_add(calls, e[i].n->calls);
		complete = sat_add(complete, e[i].n->lat.count);
		lat_sum = sat_add(lat_sum, e[i].n->lat.sum);
		self = sat_add(self, e[i].n->self_ns);
		*has_children |= e[i].n->first_child != NULL;
	}
	if (f->style == FG_FOLD_ANNOTATED && calls) {
		if (complete)
			snprintf(ann, sizeof(ann), ":%" PRIu64 ",avg:%" PRIu64, calls,
				 lat_sum / complete + (lat_sum % complete >= complete - complete / 2));
		else
			snprintf(ann, sizeof(ann), ":%" PRIu64 "(inferred)", calls);
	}
	alen = strlen(ann);
	f->len = L->path_len;
	if (dc_vec_reserve((void **)&f->path, &f->cap, f->len + 1 + nlen + alen + 1, 1, 256))
		return -ENOMEM;
	if (f->len)
		f->path[f->len++] = ';';
	memcpy(f->path + f->len, name, nlen);
	memcpy(f->path + f->len + nlen, ann, alen + 1);
	f->len += nlen + alen;
	/* A leaf with calls but no time still gets a (0) line when
	 * annotated, so that every counted call shows somewhere. */
	if ((self || (f->style == FG_FOLD_ANNOTATED && !*has_children && calls && !f->part)) &&
	    self >= f->min_ns &&
	    fprintf(f->out, "%s %" PRIu64 "\n", f->path, self) < 0)
		return -EIO;
	if (f->on_frame) {
		struct sr_hist h;
		int ret = 0;

		if (n == 1)
			return f->on_frame(f->frame_ctx, f->path, &e[0].n->lat);
		sr_hist_init(&h);
		for (size_t i = 0; i < n && !ret; i++)
			ret = sr_hist_merge(&h, &e[i].n->lat);
		if (!ret)
			ret = f->on_frame(f->frame_ctx, f->path, &h);
		sr_hist_free(&h);
		return ret;
	}
	return 0;
}

static int walk(struct fold *f)
{
	struct ent root = { .n = sr_cct_root(f->cct) };
	size_t depth = 0;
	int ret;

	if (!(f->lv = calloc(1, sizeof(*f->lv))))
		return -ENOMEM;
	f->nlv = 1;
	if ((ret = fill(f, &f->lv[0], &root, 1)))
		return ret;
	for (;;) {
		struct level *L = &f->lv[depth];
		size_t i = L->pos, j = i + 1;
		bool kids;

		if (i == L->n) {
			if (!depth--)
				return 0;
			continue;
		}
		while (j < L->n && !strcmp(L->names + L->e[j].name, L->names + L->e[i].name))
			j++;
		L->pos = j;
		if ((ret = print_frame(f, L, L->e + i, j - i, &kids)))
			return ret;
		if (!kids)
			continue;
		if (depth + 1 == f->nlv) {
			struct level *v = realloc(f->lv, (f->nlv * 2) * sizeof(*v));

			if (!v)
				return -ENOMEM;
			memset(v + f->nlv, 0, f->nlv * sizeof(*v));
			f->lv = v;
			f->nlv *= 2;
			L = &f->lv[depth];
		}
		if ((ret = fill(f, &f->lv[depth + 1], L->e + i, j - i)))
			return ret;
		f->lv[++depth].path_len = f->len;
	}
}

int fg_fold(FILE *out, const struct sr_cct *cct, const struct sr_symbolizer *sym,
	    const struct fg_fold_options *opt)
{
	struct fold f = {
		.cct = cct,
		.sym = sym,
		.style = opt ? opt->style : FG_FOLD_ANNOTATED,
		.min_ns = opt ? opt->min_ns : 0,
		.part = opt && opt->part,
		.on_frame = opt ? opt->on_frame : NULL,
		.frame_ctx = opt ? opt->frame_ctx : NULL,
		.out = out,
	};
	int ret = walk(&f);

	if (!ret && (fflush(out) || ferror(out)))
		ret = -EIO;
	for (size_t i = 0; i < f.nlv; i++) {
		free(f.lv[i].e);
		free(f.lv[i].names);
	}
	free(f.lv);
	free(f.path);
	return ret;
}
