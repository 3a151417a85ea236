/* ptflame - flamegraph/diff_note: notes on the two inputs of a diff.
 *
 * An empty side, two runs with no comm in common (different programs), or
 * no function in common: the diff is likely not the one meant. Moved here
 * from cmd/diff.c; the text of each note is unchanged. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "decoder/dc_hash.h"
#include "flamegraph/flamegraph.h"

static uint64_t name_key(const char *s, size_t len)
{
	uint64_t k = dc_strhash(s, len);

	return k == UINT64_MAX ? k - 1 : k;     /* (UINT64_MAX: dc_hash's own) */
}

/* Each frame of stack s (';' separated) that names a function (not a
 * [pseudo] frame) into set, or, with check, whether one is in set. */
static bool each_func(struct dc_hash *set, const char *s, bool check)
{
	uint64_t v;

	while (*s) {
		const char *e = strchr(s, ';');
		size_t len = e ? (size_t)(e - s) : strlen(s);

		if (len && s[0] != '[') {
			if (check && dc_hash_get(set, name_key(s, len), &v))
				return true;
			if (!check && dc_hash_put(set, name_key(s, len), 1))
				return false;
		}
		s += len + (e ? 1 : 0);
	}
	return false;
}

/* The stacks (or table rows) of a side, one at a time; NULL at the end. */
static const char *stack_at(const struct fg_diff_side *in, size_t i)
{
	if (in->stats) {
		const struct fg_row *r = fg_stats_row(in->stats, i);

		return r ? r->name : NULL;
	}
	return in->folded ? fg_folded_stack(in->folded, i, NULL) : NULL;
}

bool fg_diff_shares_function(const struct fg_diff_side *a, const struct fg_diff_side *b,
			     bool *a_has)
{
	struct dc_hash set = { 0 };
	const char *s;
	bool found = false;

	for (size_t i = 0; (s = stack_at(a, i)); i++)
		each_func(&set, s, false);
	*a_has = set.used > 0;
	for (size_t i = 0; !found && (s = stack_at(b, i)); i++)
		found = each_func(&set, s, true);
	dc_hash_free(&set);
	return found;
}

static bool no_stacks(const struct fg_diff_side *in)
{
	if (in->stats)
		return !fg_stats_count(in->stats);
	return !in->folded || !fg_folded_count(in->folded);
}

/* "'a', 'b'" of up to 3 comms. */
static void comm_list(const struct fg_diff_side *in, char *buf, size_t n)
{
	size_t at = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < in->ncomms && i < 3 && at < n; i++)
		at += (size_t)snprintf(buf + at, n - at, "%s'%s'", i ? ", " : "", in->comms[i]);
	if (in->ncomms > 3 && at < n)
		snprintf(buf + at, n - at, " ...");
}

unsigned fg_diff_note_inputs(FILE *f, const struct fg_diff_side *a, const struct fg_diff_side *b,
			     bool filtered)
{
	const struct fg_diff_side *in[2] = { a, b };
	bool empty[2], a_has = false;
	unsigned notes = 0;

	for (int k = 0; k < 2; k++) {
		empty[k] = no_stacks(in[k]);
		/* (filters that left nothing: report_note_filters said so) */
		if (empty[k] && !filtered) {
			fprintf(f, "ptflame diff: note: %s (%s) %s: an empty profile\n",
				k ? "B" : "A", in[k]->path, in[k]->empty ? "is empty" : "has no stacks");
			notes |= k ? FG_DIFF_NOTE_B_EMPTY : FG_DIFF_NOTE_A_EMPTY;
		}
	}
	if (empty[0] || empty[1])
		return notes;
	if (a->ncomms && b->ncomms) {
		bool common = false;

		for (size_t i = 0; i < a->ncomms && !common; i++)
			for (size_t j = 0; j < b->ncomms && !common; j++)
				common = !strcmp(a->comms[i], b->comms[j]);
		if (!common) {
			char ca[128], cb[128];

			comm_list(a, ca, sizeof(ca));
			comm_list(b, cb, sizeof(cb));
			fprintf(f, "ptflame diff: note: A ran %s and B ran %s (comm): different "
				"programs, is this the diff meant?\n", ca, cb);
			notes |= FG_DIFF_NOTE_NO_COMM;
		}
	}
	if (!fg_diff_shares_function(a, b, &a_has) && a_has) {
		fprintf(f, "ptflame diff: note: A (%s) and B (%s) share no function: are "
			"they runs of the same program?\n", a->path, b->path);
		notes |= FG_DIFF_NOTE_NO_FUNCTION;
	}
	return notes;
}
