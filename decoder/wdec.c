/* ptflame decoder: a window's block decoder, ours or libipt's (wdec.h). */
#include "decoder/wdec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/dc_vec.h"

static size_t bail_env(void)
{
	const char *e = getenv("PTFLAME_WALK_BAIL");

	return e ? (size_t)strtoul(e, NULL, 10) : 0;
}

enum dc_wdec_mode dc_wdec_mode_env(void)
{
	const char *e = getenv("PTFLAME_DECODER");

	static bool warned;

	if (e && !strcmp(e, "libipt"))
		return DC_WDEC_LIBIPT;
	if (e && !strcmp(e, "check"))
		return DC_WDEC_CHECK;
	if (e && *e && strcmp(e, "walk") && !warned) {
		warned = true;   /* (a test's knob: not worth an error) */
		fprintf(stderr, "ptflame: PTFLAME_DECODER='%s' is not libipt, walk or check: "
			"decoding with walk\n", e);
	}
	return DC_WDEC_WALK;
}

static struct pt_block_decoder *blk_new(struct dc_wdec *d)
{
	struct pt_block_decoder *b = pt_blk_alloc_decoder(&d->cfg);

	if (b && d->image && pt_blk_set_image(b, d->image) < 0) {
		pt_blk_free_decoder(b);
		return NULL;
	}
	return b;
}

int dc_wdec_open(struct dc_wdec *d, enum dc_wdec_mode mode, const struct pt_config *base,
		 const uint8_t *buf, size_t len, struct pt_image *image, struct dc_wcode *code,
		 struct dc_wdec_stats *st)
{
	uint64_t *ops = d->ops;
	size_t cap = d->cap;

	dc_wdec_close(d);
	*d = (struct dc_wdec){ .cfg = *base, .image = image, .code = code, .mode = mode,
			       .ops = ops, .cap = cap,
			       .st = st, .bail_at = bail_env() };
	d->cfg.size = sizeof(d->cfg);
	d->cfg.begin = (uint8_t *)buf;
	d->cfg.end = (uint8_t *)buf + len;
	d->cfg.flags.variant.block.end_on_call = 1;
	d->cfg.flags.variant.block.end_on_jump = 1;
	/* a tick event at each branch whose packet brought a new time */
	d->cfg.flags.variant.block.enable_tick_events = 1;
	/* (with no code yet: the first image often comes after the sync) */
	if (mode != DC_WDEC_LIBIPT && !(d->walk = dc_walk_alloc(&d->cfg, code)))
		return -ENOMEM;
	if ((mode != DC_WDEC_WALK || !d->walk) && !(d->blk = blk_new(d))) {
		dc_walk_free(d->walk);
		d->walk = NULL;
		return -ENOMEM;
	}
	if (d->walk && st)
		st->walked++;
	d->plain = d->walk && !d->blk && !d->bail_at;
	return 0;
}

void dc_wdec_close(struct dc_wdec *d)
{
	dc_walk_free(d->walk);
	pt_blk_free_decoder(d->blk);
	d->walk = NULL;
	d->blk = NULL;
	d->plain = false;
	d->ncalls = d->nops = 0;
}

/* libipt's next block, as long as the walker's (ninsn instructions):
 * libipt ends a block early where its block cache is being filled up to
 * an address it knew already, which depends on what it decoded before in
 * any thread; nothing happens there (no packet, no event), so the pieces
 * are joined. */
static int blk_next(struct dc_wdec *d, struct pt_block *b, uint32_t ninsn)
{
	int st = pt_blk_next(d->blk, b, sizeof(*b));

	while (st >= 0 && !(st & pts_event_pending) && b->iclass == ptic_other &&
	       b->ninsn && b->ninsn < ninsn) {
		struct pt_block n;
		int sn = pt_blk_next(d->blk, &n, sizeof(n));

		if (sn < 0 && !n.ninsn)
			return sn;
		b->ninsn = (uint16_t)(b->ninsn + n.ninsn);
		b->end_ip = n.end_ip;
		b->iclass = n.iclass;
		b->truncated = n.truncated;
		st = sn;
	}
	return st;
}

/* libipt and rw, a walker of the window's own, repeat the calls made so
 * far (the log, wdec.h): false where libipt does not answer as rw does. */
static bool repeat(struct dc_wdec *d, struct dc_walk *rw)
{
	size_t k = 0;

	for (size_t i = 0; i < d->ncalls; i++) {
		int op = k < d->nops && d->ops[k] >> 8 == i ? (int)(d->ops[k++] & 0xff) : 'n';
		struct pt_block b = { 0 }, rb = { 0 };
		struct pt_event ev;
		int sw, sb;

		sw = dc_walk_again(rw, op, &rb, &ev);
		if (op == 's')
			sb = pt_blk_sync_forward(d->blk);
		else if (op == 'e')
			sb = pt_blk_event(d->blk, &ev, sizeof(ev));
		else
			sb = blk_next(d, &b, rb.ninsn);
		if (sw == DC_WALK_BAIL || sb != sw || b.ninsn != rb.ninsn)
			return false;
	}
	return true;
}

/* The walker cannot answer: libipt repeats its calls, then goes on. Each
 * must answer as the walker did, or the next call fails (-pte_internal:
 * the queue counts a decode error and goes on at the next PSB). */
static int bail(struct dc_wdec *d)
{
	struct dc_walk *rw;

	dc_walk_free(d->walk);
	d->walk = NULL;
	d->plain = false;
	if (d->st) {
		d->st->walked--;
		d->st->bailed++;
	}
	if (d->blk)                /* (checking: it is there already) */
		return 0;
	if (!(d->blk = blk_new(d)))
		return -pte_nomem;
	if (d->ncalls) {
		if (!(rw = dc_walk_alloc(&d->cfg, d->code)))
			return -pte_nomem;
		d->failed = !repeat(d, rw);
		dc_walk_free(rw);
	}
	d->ncalls = d->nops = 0;
	return 0;
}

int dc_wdec_hand_over(struct dc_wdec *d)
{
	return d->walk && dc_walk_read_code(d->walk) && bail(d) ? -ENOMEM : 0;
}

int dc_wdec_set_image(struct dc_wdec *d, struct pt_image *image, struct dc_wcode *code)
{
	int err;

	if (image == d->image)     /* (rebuilt in place: its code was too) */
		return 0;
	/* the calls so far read code of the old image: libipt repeats them
	 * with it (a new image in mid-window after code is rare) */
	if (d->walk && dc_walk_read_code(d->walk) && (err = bail(d)))
		return err;
	d->image = image;
	d->code = code;
	if (d->walk)
		dc_walk_set_code(d->walk, code);
	if (d->blk && pt_blk_set_image(d->blk, image) < 0)
		return -pte_nomem;
	return 0;
}

static void differ(struct dc_wdec *d, const char *what, int sw, int sb)
{
	uint64_t off = 0;

	pt_blk_get_offset(d->blk, &off);
	fprintf(stderr, "ptflame: PTFLAME_DECODER=check: the walker's %s differs from libipt's "
		"at offset %#" PRIx64 " of the window (status %d against %d)\n", what, off, sw, sb);
	abort();
}

static void differ_block(struct dc_wdec *d, const struct pt_block *w, const struct pt_block *b,
			 int st)
{
	const struct pt_block *x[2] = { w, b };

	for (int i = 0; i < 2; i++)
		fprintf(stderr, "%s: ip %#" PRIx64 " end %#" PRIx64 " ninsn %u class %d isid %d "
			"mode %d speculative %d truncated %d\n", i ? "libipt" : "walker",
			x[i]->ip, x[i]->end_ip, x[i]->ninsn, x[i]->iclass, x[i]->isid, x[i]->mode,
			x[i]->speculative, x[i]->truncated);
	differ(d, "block", st, st);
}

/* libipt's block cache forgets the class of indirect branches and far
 * transfers (ptic_error); a decoder of it asks the instruction. */
static bool same_block(const struct pt_block *w, const struct pt_block *b)
{
	struct pt_block x = *w;

	if (b->iclass == ptic_error && w->iclass != ptic_cond_jump && w->iclass != ptic_return &&
	    w->iclass != ptic_other)
		x.iclass = ptic_error;
	return !memcmp(&x, b, sizeof(x));
}

static void check_state(struct dc_wdec *d)
{
	uint64_t tw = 0, tb = 0, ow = 0, ob = 0;
	uint32_t lm, lc;
	int rw = dc_walk_time(d->walk, &tw), rb = pt_blk_time(d->blk, &tb, &lm, &lc);

	if (rw != rb || tw != tb)
		differ(d, "time", rw, rb);
	rw = dc_walk_get_offset(d->walk, &ow);
	rb = pt_blk_get_offset(d->blk, &ob);
	if (rw != rb || ow != ob)
		differ(d, "offset", rw, rb);
}

/* Checking: libipt answered sb where the walker answered st. */
static __attribute__((noinline)) int checked(struct dc_wdec *d, int op, int st, int sb)
{
	if (sb != st)
		differ(d, op == 's' ? "sync status" : op == 'e' ? "event status" : "block status",
		       st, sb);
	check_state(d);
	return st;
}

/* The walker alone answered st (not DC_WALK_BAIL) to the call op ('s',
 * 'e', 'n'): it is counted, and logged unless it is a dc_wdec_next, for a
 * hand-over to repeat (wdec.h). */
static inline int logged(struct dc_wdec *d, int op, int st)
{
	size_t i = d->ncalls++;

	if (op == 'n')
		return st;
	if (d->nops == d->cap && DC_VEC_PUSH_ROOM(d->ops, d->nops, d->cap, 256))
		return -pte_nomem;
	d->ops[d->nops++] = (uint64_t)i << 8 | (unsigned)op;
	return st;
}

/* The walker answered st (not DC_WALK_BAIL): checking, libipt answers
 * too (sb) and the two must agree; else the call is logged. Inlined: it
 * runs for every call (the check's calls kept out of it). */
static inline int walked(struct dc_wdec *d, int op, int st, int sb)
{
	if (d->blk)
		return checked(d, op, st, sb);
	return logged(d, op, st);
}

/* A hand-over a test asked for (wdec.h): at the bail_at-th call. */
static bool forced(struct dc_wdec *d)
{
	return d->bail_at && d->ncalls + 1 == d->bail_at && d->mode == DC_WDEC_WALK;
}

/* Before a call goes to libipt: the walker hands over first if it has
 * not, and a repeat libipt did not answer as the walker did fails the
 * call. 0, or the call's error. */
static int to_libipt(struct dc_wdec *d)
{
	int err;

	if (d->walk && (err = bail(d)))
		return err;
	if (d->failed) {
		d->failed = false;
		return -pte_internal;
	}
	return 0;
}

int dc_wdec_sync_forward(struct dc_wdec *d)
{
	int st, err;

	if (d->walk && !forced(d)) {
		if ((st = dc_walk_sync_forward(d->walk)) != DC_WALK_BAIL)
			return walked(d, 's', st, d->blk ? pt_blk_sync_forward(d->blk) : 0);
	}
	if ((err = to_libipt(d)))
		return err;
	return pt_blk_sync_forward(d->blk);
}

/* Checking: libipt's block too, which must be the walker's b (st). */
static __attribute__((noinline)) int next_checked(struct dc_wdec *d, const struct pt_block *b,
						  int st)
{
	struct pt_block lb;
	int sb = blk_next(d, &lb, b->ninsn);

	if (sb == st && !same_block(b, &lb))
		differ_block(d, b, &lb, st);
	return checked(d, 'n', st, sb);
}

/* libipt's block, the walker handing over first if it has not. */
static __attribute__((noinline)) int next_libipt(struct dc_wdec *d, struct pt_block *b)
{
	int err = to_libipt(d);

	return err ? err : pt_blk_next(d->blk, b, sizeof(*b));
}

int dc_wdec_next(struct dc_wdec *d, struct pt_block *b)
{
	int st;

	/* (the checks and libipt out of line: what is left of the walker's
	 * common call needs few registers) */
	if (d->plain || (d->walk && !forced(d))) {
		if ((st = dc_walk_next(d->walk, b)) != DC_WALK_BAIL)
			return d->blk ? next_checked(d, b, st) : logged(d, 'n', st);
	}
	return next_libipt(d, b);
}

/* Checking: libipt's event too, which must be the walker's ev (st). */
static __attribute__((noinline)) int event_checked(struct dc_wdec *d, const struct pt_event *ev,
						   int st)
{
	struct pt_event le;
	int sb = pt_blk_event(d->blk, &le, sizeof(le));

	if (sb == st && memcmp(ev, &le, sizeof(le)))
		differ(d, "event", st, sb);
	return checked(d, 'e', st, sb);
}

/* libipt's event, the walker handing over first if it has not. */
static __attribute__((noinline)) int event_libipt(struct dc_wdec *d, struct pt_event *ev)
{
	int err = to_libipt(d);

	return err ? err : pt_blk_event(d->blk, ev, sizeof(*ev));
}

int dc_wdec_event(struct dc_wdec *d, struct pt_event *ev)
{
	int st;

	if (d->plain || (d->walk && !forced(d))) {
		if ((st = dc_walk_event(d->walk, ev)) != DC_WALK_BAIL)
			return d->blk ? event_checked(d, ev, st) : logged(d, 'e', st);
	}
	return event_libipt(d, ev);
}

int dc_wdec_time(struct dc_wdec *d, uint64_t *tsc)
{
	uint32_t lost_mtc, lost_cyc;

	if (d->walk)
		return dc_walk_time(d->walk, tsc);
	return d->blk ? pt_blk_time(d->blk, tsc, &lost_mtc, &lost_cyc) : -pte_internal;
}

int dc_wdec_offset(struct dc_wdec *d, uint64_t *off)
{
	if (d->walk)
		return dc_walk_get_offset(d->walk, off);
	return d->blk ? pt_blk_get_offset(d->blk, off) : -pte_internal;
}

int dc_wdec_sync_offset(struct dc_wdec *d, uint64_t *off)
{
	if (d->walk)
		return dc_walk_get_sync_offset(d->walk, off);
	return d->blk ? pt_blk_get_sync_offset(d->blk, off) : -pte_internal;
}
