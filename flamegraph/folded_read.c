/* ptflame - flamegraph/folded_read: read folded stacks back.
 *
 * Any FlameGraph folded file ("a;b;c 123"), or ours with pt-flame
 * annotations ("a:1,avg:50;b:3(inferred) 123"). Two views are kept: the raw
 * lines (annotations intact, for the tables) and the plain stacks (names
 * only, summed and sorted, for diffs).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/dc_hash.h"
#include "decoder/dc_vec.h"
#include "flamegraph/flamegraph.h"
#include "flamegraph/folded_internal.h"

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Append stack/value to list, summing into an existing entry. */
static int add_entry(struct fg_folded_list *l, struct dc_hash *m, const char *s,
		     size_t len, uint64_t value)
{
	uint64_t k = dc_hash_chain_start(dc_strhash(s, len)), i;
	char *copy;

	while (dc_hash_chain(m, &k, &i))
		if (dc_str_eq(l->e[i].stack, s, len)) {
			if (l->e[i].value + value < value)
				return -EOVERFLOW;     /* never a wrapped sum */
			l->e[i].value += value;
			return 0;
		}
	if (DC_VEC_PUSH_ROOM(l->e, l->n, l->cap, 64))
		return -ENOMEM;
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, len);
	copy[len] = '\0';
	l->e[l->n].stack = copy;
	l->e[l->n].value = value;
	if (dc_hash_put(m, k, l->n)) {
		free(copy);
		return -ENOMEM;
	}
	l->n++;
	return 0;
}

/* "123" or "12.5" (rounded). */
static bool parse_value(const char *s, const char *e, uint64_t *v)
{
	uint64_t x = 0;
	const char *p = s;

	if (p == e)
		return false;
	for (; p < e && *p >= '0' && *p <= '9'; p++) {
		if (x > (UINT64_MAX - 9) / 10)
			return false;
		x = x * 10 + (uint64_t)(*p - '0');
	}
	if (p == s)
		return false;
	if (p < e && *p == '.') {
		const char *q = p + 1;

		while (q < e && *q >= '0' && *q <= '9')
			q++;
		if (q != e)
			return false;
		if (p + 1 < e && p[1] >= '5')
			x++;
		p = e;
	}
	*v = x;
	return p == e;
}

/* The plain form of an annotated stack. */
static size_t plain_stack(const char *s, size_t len, char *dst, bool *annotated)
{
	size_t out = 0, i = 0;

	while (i <= len) {
		size_t j = i, name_len;

		while (j < len && s[j] != ';')
			j++;
		if (fg_frame_split(s + i, j - i, &name_len, NULL, NULL, NULL))
			*annotated = true;
		else
			name_len = j - i;
		if (out)
			dst[out++] = ';';
		memcpy(dst + out, s + i, name_len);
		out += name_len;
		i = j + 1;
	}
	return out;
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct fg_folded_entry *)a)->stack,
		      ((const struct fg_folded_entry *)b)->stack);
}

static void list_free(struct fg_folded_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->e[i].stack);
	free(l->e);
}

void fg_folded_free(struct fg_folded *f)
{
	if (!f)
		return;
	list_free(&f->raw);
	list_free(&f->plain);
	free(f);
}

int fg_folded_read(FILE *in, struct fg_folded **out, size_t *bad_line)
{
	struct fg_folded *f = calloc(1, sizeof(*f));
	struct dc_hash mraw = { 0 }, mplain = { 0 };   /* stack -> its entry */
	char *line = NULL, *plain = NULL;
	size_t cap = 0, plaincap = 0, lineno = 0;
	ssize_t n;
	int err = 0;

	*out = NULL;
	if (bad_line)
		*bad_line = 0;
	if (!f)
		return -ENOMEM;
	while ((n = getline(&line, &cap, in)) >= 0) {
		const char *s = line, *e = line + n, *v;
		uint64_t value;
		size_t len;

		lineno++;
		while (e > s && is_ws(e[-1]))
			e--;
		while (s < e && is_ws(*s))
			s++;
		if (s == e || *s == '#')
			continue;
		v = e;
		while (v > s && !is_ws(v[-1]))
			v--;
		len = (size_t)(v - s);
		while (len && is_ws(s[len - 1]))
			len--;
		err = -EBADMSG;
		if (!len || !parse_value(v, e, &value) || memchr(s, '\0', len))
			break;
		/* "stack 12 34" is a difffolded line, not a folded one. */
		{
			const char *w = s + len;

			while (w > s && w[-1] >= '0' && w[-1] <= '9')
				w--;
			if (w < s + len && w > s && is_ws(w[-1]))
				break;
		}
		err = -EOVERFLOW;
		if (f->total + value < value)
			break;
		err = -ENOMEM;
		if (len + 1 > plaincap) {
			char *p = realloc(plain, len + 1);

			if (!p)
				break;
			plain = p;
			plaincap = len + 1;
		}
		if ((err = add_entry(&f->raw, &mraw, s, len, value)) ||
		    (err = add_entry(&f->plain, &mplain, plain,
				     plain_stack(s, len, plain, &f->annotated), value)))
			break;
		f->total += value;
		err = 0;
	}
	if (!err && ferror(in))
		err = -EIO;
	free(line);
	free(plain);
	dc_hash_free(&mraw);
	dc_hash_free(&mplain);
	if (err) {
		if (bad_line && (err == -EBADMSG || err == -EOVERFLOW))
			*bad_line = lineno;
		fg_folded_free(f);
		return err;
	}
	if (f->plain.n)
		qsort(f->plain.e, f->plain.n, sizeof(f->plain.e[0]), cmp_entry);
	*out = f;
	return 0;
}

size_t fg_folded_count(const struct fg_folded *f)
{
	return f->plain.n;
}

const char *fg_folded_stack(const struct fg_folded *f, size_t i, uint64_t *value)
{
	if (i >= f->plain.n)
		return NULL;
	if (value)
		*value = f->plain.e[i].value;
	return f->plain.e[i].stack;
}

uint64_t fg_folded_total(const struct fg_folded *f)
{
	return f->total;
}

bool fg_folded_annotated(const struct fg_folded *f)
{
	return f->annotated;
}

static const char inlined_suffix[] = " (inlined)";

size_t fg_frame_uninlined_len(const char *name, size_t len)
{
	size_t k = sizeof(inlined_suffix) - 1;

	return len > k && !memcmp(name + len - k, inlined_suffix, k) ? len - k : len;
}

/* stack with each frame's " (inlined)" left out, into dst (as long as
 * stack at least); its length. */
static size_t uninlined_stack(const char *s, size_t len, char *dst)
{
	size_t out = 0, i = 0;

	while (i <= len) {
		size_t j = i, n;

		while (j < len && s[j] != ';')
			j++;
		n = fg_frame_uninlined_len(s + i, j - i);
		if (i)
			dst[out++] = ';';
		memcpy(dst + out, s + i, n);
		out += n;
		i = j + 1;
	}
	return out;
}

int fg_folded_merge_inlined(struct fg_folded *f)
{
	struct fg_folded_list l = { 0 };
	struct dc_hash m = { 0 };
	char *buf = NULL;
	size_t cap = 0, i;
	int err = 0;

	for (i = 0; i < f->plain.n; i++)
		if (strstr(f->plain.e[i].stack, inlined_suffix))
			break;
	if (i == f->plain.n)
		return 0;              /* nothing inlined: as it is */
	for (i = 0; i < f->plain.n && !err; i++) {
		const char *s = f->plain.e[i].stack;
		size_t len = strlen(s);

		if (len + 1 > cap) {
			char *p = realloc(buf, len + 1);

			if (!p) {
				err = -ENOMEM;
				break;
			}
			buf = p;
			cap = len + 1;
		}
		err = add_entry(&l, &m, buf, uninlined_stack(s, len, buf), f->plain.e[i].value);
	}
	free(buf);
	dc_hash_free(&m);
	if (err) {
		list_free(&l);
		return err;
	}
	list_free(&f->plain);
	f->plain = l;
	if (f->plain.n)
		qsort(f->plain.e, f->plain.n, sizeof(f->plain.e[0]), cmp_entry);
	return 0;
}
