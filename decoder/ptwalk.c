/* ptflame decoder: a block decoder of our own over our query decoder
 * (see ptwalk.h). The state and the order of the queries follow libipt
 * 2.0's block decoder (pt_block_decoder.c) step for step, as it runs with
 * end_on_call, end_on_jump and tick events: the time after each call is
 * the query decoder's, so it is libipt's only if the queries are the same
 * ones in the same order. Where this file says "libipt" it means what that
 * decoder does; doc/DESIGN.md section 7 says how it is checked. */
#include "decoder/ptwalk.h"

#include <Zydis/Zydis.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/dc_hash.h"
#include "decoder/dc_vec.h"
#include "decoder/ptquery.h"

/* PTFLAME_WALK_DEBUG=1: where the walker hands over to libipt, on stderr
 * (read once; every thread that walks goes through the once first, in
 * dc_walk_alloc, so none reads it unsynchronized). */
static bool walk_debug;
static pthread_once_t walk_debug_once = PTHREAD_ONCE_INIT;

static void walk_debug_read(void)
{
	walk_debug = getenv("PTFLAME_WALK_DEBUG") != NULL;
}

static int bail_at(int line)
{
	if (walk_debug)
		fprintf(stderr, "ptwalk: bail at ptwalk.c:%d\n", line);
	return DC_WALK_BAIL;
}
#define BAIL() bail_at(__LINE__)

/* (for the steps of a block's branch: each has two or three callers, and
 * the calls cost more than their work) */
#define ALWAYS_INLINE inline __attribute__((always_inline))

/* ---- the code: block ends per address ---------------------------------- */

enum wkind {
	WK_COND,                   /* jcc, loop, jrcxz: a TNT bit            */
	WK_JMP,                    /* direct jump                            */
	WK_CALL,                   /* direct call                            */
	WK_CALL_IND,               /* indirect call: a TIP                   */
	WK_RET,                    /* near return: a TNT bit or a TIP        */
	WK_JMP_IND,                /* indirect jump: a TIP                   */
	WK_FAR,                    /* syscall, int, iret, far ...: a TIP      */
};

/* What a block of one entry's run holds after its ip: struct pt_block's
 * fields from end_ip to ninsn, laid out as there (and the two bytes after
 * them, raw's first, zero), so that block_of copies them in one go. */
struct wrun {
	uint64_t end;              /* the branch                              */
	int isid;
	enum pt_exec_mode mode;    /* (64-bit: the only code entries are for) */
	enum pt_insn_class iclass; /* the branch's                            */
	uint16_t ninsn;            /* instructions, the branch included       */
	uint16_t zero;
};
#define WRUN_AT(f, g) \
	(offsetof(struct pt_block, f) - offsetof(struct pt_block, end_ip) == offsetof(struct wrun, g))
_Static_assert(WRUN_AT(isid, isid) && WRUN_AT(mode, mode) && WRUN_AT(iclass, iclass) &&
	       WRUN_AT(ninsn, ninsn) && WRUN_AT(raw, zero) &&
	       sizeof(struct wrun) == offsetof(struct pt_block, raw) + 2 -
					  offsetof(struct pt_block, end_ip),
	       "struct wrun is struct pt_block's end_ip .. ninsn");

/* From an ip, the instructions up to and including the next branch. */
struct went {
	struct wrun run;
	uint64_t target;           /* a direct branch's                       */
	/* the ips of the entries that came next, and those entries (index +
	 * 1; 0: none, its ip DC_HASH_EMPTY, which no entry has, but a trace
	 * can send the walker to): following a link reads no other entry */
	uint64_t link_ip[2];
	uint32_t link[2];
	uint8_t len, kind;         /* the branch's length, wkind              */
};
_Static_assert(sizeof(struct went) == 64, "an entry fills one cache line");

struct dc_wcode {
	struct pt_image_section_cache *isc;
	struct dc_wsec *secs;      /* sorted by start                        */
	size_t nsecs;
	struct went *ents;
	size_t nents, cap;
	struct dc_hash at;         /* ip -> index into ents                  */
	uint64_t gen;              /* bumped when ents are dropped or moved */
	ZydisDecoder zy;
};

enum { SCAN_MAX = 4096, WALK_RETS = 64 };

struct dc_wcode *dc_wcode_new(struct pt_image_section_cache *isc)
{
	struct dc_wcode *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->isc = isc;
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&c->zy, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64))) {
		free(c);
		return NULL;
	}
	return c;
}

static int sec_cmp(const void *a, const void *b)
{
	const struct dc_wsec *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int dc_wcode_set(struct dc_wcode *c, const struct dc_wsec *secs, size_t n)
{
	struct dc_wsec *s = n ? malloc(n * sizeof(*s)) : NULL;

	if (n && !s)
		return -ENOMEM;
	if (n)
		memcpy(s, secs, n * sizeof(*s));
	if (n)
		qsort(s, n, sizeof(*s), sec_cmp);
	free(c->secs);
	c->secs = s;
	c->nsecs = n;
	c->nents = 0;
	dc_hash_free(&c->at);
	c->gen++;
	return 0;
}

void dc_wcode_free(struct dc_wcode *c)
{
	if (!c)
		return;
	free(c->secs);
	free(c->ents);
	dc_hash_free(&c->at);
	free(c);
}

static const struct dc_wsec *sec_of(const struct dc_wcode *c, uint64_t ip)
{
	size_t lo = 0, hi = c->nsecs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->secs[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || ip >= c->secs[lo - 1].end)
		return NULL;
	return &c->secs[lo - 1];
}

/* An instruction, as libipt classes it: 1 a branch (kind, iclass set),
 * 0 not one, -1 one we do not walk (the caller bails). */
static int classify(const ZydisDecodedInstruction *d, uint8_t *kind, uint8_t *iclass)
{
	bool far = d->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR;
	bool rel = d->raw.imm[0].is_relative;

	switch (d->mnemonic) {
	case ZYDIS_MNEMONIC_JMP:
		*kind = far ? WK_FAR : rel ? WK_JMP : WK_JMP_IND;
		*iclass = far ? ptic_far_jump : ptic_jump;
		return 1;
	case ZYDIS_MNEMONIC_CALL:
		*kind = far ? WK_FAR : rel ? WK_CALL : WK_CALL_IND;
		*iclass = far ? ptic_far_call : ptic_call;
		return 1;
	case ZYDIS_MNEMONIC_RET:
		*kind = far ? WK_FAR : WK_RET;
		*iclass = far ? ptic_far_return : ptic_return;
		return 1;
	case ZYDIS_MNEMONIC_SYSCALL:
	case ZYDIS_MNEMONIC_SYSENTER:
	case ZYDIS_MNEMONIC_INT:
	case ZYDIS_MNEMONIC_INT1:
	case ZYDIS_MNEMONIC_INT3:
	case ZYDIS_MNEMONIC_INTO:
		*kind = WK_FAR;
		*iclass = ptic_far_call;
		return 1;
	case ZYDIS_MNEMONIC_IRET:
	case ZYDIS_MNEMONIC_IRETD:
	case ZYDIS_MNEMONIC_IRETQ:
	case ZYDIS_MNEMONIC_SYSEXIT:
	case ZYDIS_MNEMONIC_SYSRET:
		*kind = WK_FAR;
		*iclass = ptic_far_return;
		return 1;
	case ZYDIS_MNEMONIC_XBEGIN:   /* (not a branch to libipt) */
		return 0;
	default:
		break;
	}
	if (d->meta.category == ZYDIS_CATEGORY_COND_BR) {
		*kind = WK_COND;
		*iclass = ptic_cond_jump;
		return 1;
	}
	/* anything else that moves control (vmcall, uiret, ...) or that
	 * libipt looks at (mov to cr3, ptwrite, vmptrld) */
	if (d->meta.branch_type != ZYDIS_BRANCH_TYPE_NONE ||
	    d->meta.category == ZYDIS_CATEGORY_UNCOND_BR || d->meta.category == ZYDIS_CATEGORY_CALL ||
	    d->meta.category == ZYDIS_CATEGORY_RET || d->meta.category == ZYDIS_CATEGORY_SYSCALL ||
	    d->meta.category == ZYDIS_CATEGORY_SYSRET || d->meta.category == ZYDIS_CATEGORY_INTERRUPT ||
	    d->meta.category == ZYDIS_CATEGORY_VTX || d->mnemonic == ZYDIS_MNEMONIC_PTWRITE ||
	    (d->opcode_map == ZYDIS_OPCODE_MAP_0F && d->opcode == 0x22))   /* mov to CRn */
		return -1;
	return 0;
}

enum pt_insn_class dc_walk_iclass(const uint8_t *code, size_t n, uint8_t *len)
{
	ZydisDecoder zy;
	ZydisDecodedInstruction d;
	uint8_t kind, iclass;
	int k;

	*len = 0;
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&zy, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)) ||
	    !ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&zy, NULL, code, n, &d)))
		return ptic_error;
	*len = d.length;
	k = classify(&d, &kind, &iclass);
	return k < 0 ? ptic_error : k ? (enum pt_insn_class)iclass : ptic_other;
}

/* Decoded code from ip: the bytes of its section, read in pieces. */
struct reader {
	const struct dc_wcode *c;
	const struct dc_wsec *s;
	uint8_t buf[256];
	uint64_t at;               /* buf holds [at, at + n)                 */
	size_t n;
};

/* The instruction at ip into d; false: none (unreadable, undecodable, or
 * cut at the section's end: libipt's truncated instruction). */
static bool read_insn(struct reader *r, uint64_t ip, ZydisDecodedInstruction *d)
{
	if (ip < r->at || ip + ZYDIS_MAX_INSTRUCTION_LENGTH > r->at + r->n) {
		int n;

		if (ip < r->s->start || ip >= r->s->end)
			return false;
		if (r->s->bytes) {
			n = r->s->end - ip < sizeof(r->buf) ? (int)(r->s->end - ip) :
							      (int)sizeof(r->buf);
			memcpy(r->buf, r->s->bytes + (ip - r->s->start), (size_t)n);
		} else {
			n = pt_iscache_read(r->c->isc, r->buf, sizeof(r->buf), r->s->isid, ip);
		}
		if (n <= 0)
			return false;
		r->at = ip;
		r->n = (size_t)n;
		if (r->n > r->s->end - ip)
			r->n = (size_t)(r->s->end - ip);
	}
	return ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&r->c->zy, NULL, r->buf + (ip - r->at),
							    r->n - (size_t)(ip - r->at), d));
}

/* The entry for ip, decoded now; -1: none (we bail), -2: no code there. */
static long went_decode(struct dc_wcode *c, uint64_t ip)
{
	struct reader r = { .c = c };
	uint64_t at = ip;

	if (!(r.s = sec_of(c, ip)))
		return -2;
	if (r.s->opaque)
		return -1;
	for (uint32_t i = 0; i < SCAN_MAX; i++) {
		ZydisDecodedInstruction d;
		uint8_t kind, iclass;
		int k;

		if (!read_insn(&r, at, &d) || (k = classify(&d, &kind, &iclass)) < 0)
			return -1;
		if (k) {
			uint64_t next = at + d.length;

			if (c->nents == c->cap) {
				/* (walkers point into them: a move is a new gen) */
				if (DC_VEC_PUSH_ROOM(c->ents, c->nents, c->cap, 1024))
					return -1;
				c->gen++;
			}
			c->ents[c->nents] = (struct went){
				.run = { .end = at, .isid = r.s->isid, .mode = ptem_64bit,
					 .iclass = (enum pt_insn_class)iclass,
					 .ninsn = (uint16_t)(i + 1) },
				.len = d.length, .kind = kind,
				.target = d.raw.imm[0].is_relative ?
					next + (uint64_t)d.raw.imm[0].value.s : 0,
				.link_ip = { DC_HASH_EMPTY, DC_HASH_EMPTY },
			};
			if (dc_hash_put(&c->at, ip, c->nents))
				return -1;
			return (long)c->nents++;
		}
		at += d.length;
	}
	return -1;                 /* (a block this long: libipt's would split) */
}

/* The number of instructions from ip before to (to on an instruction's
 * start within ip's entry e), the last of them at *lastip; -1 if to is
 * not one of them. */
static long insns_before(struct dc_wcode *c, const struct went *e, uint64_t ip, uint64_t to,
			 uint64_t *lastip)
{
	struct reader r = { .c = c, .s = sec_of(c, ip) };
	long k = 0;

	if (!r.s)
		return -1;
	while (ip < to && ip < e->run.end) {
		ZydisDecodedInstruction d;

		if (!read_insn(&r, ip, &d))
			return -1;
		*lastip = ip;
		ip += d.length;
		k++;
	}
	return ip == to ? k : -1;
}

/* Erratum SKD022 (libipt's workaround): an async disable at a VMLAUNCH or
 * VMRESUME is a disable. false: the instruction at ip is neither; true:
 * it is, or it is not in our sections (libipt may read it elsewhere). */
static bool skd022_applies(struct dc_wcode *c, uint64_t ip)
{
	struct reader r = { .c = c, .s = c ? sec_of(c, ip) : NULL };
	ZydisDecodedInstruction d;

	if (!r.s)
		return true;
	if (!read_insn(&r, ip, &d))
		return false;          /* (libipt: not decodable, not it) */
	return d.mnemonic == ZYDIS_MNEMONIC_VMLAUNCH || d.mnemonic == ZYDIS_MNEMONIC_VMRESUME;
}

/* ---- the decoder --------------------------------------------------------- */

struct dc_walk {
	struct dc_qry qry;         /* (first: the hottest)                  */
	struct pt_config cfg;      /* (its errata)                          */
	struct dc_wcode *code;
	uint64_t gen;              /* code->gen that last is good for       */
	struct went *last;         /* the last entry (its links), or NULL   */
	bool read_code;
	bool fast;                 /* (settle)                               */
	/* a tick found event.tsc at that time, and no query has been made
	 * since (nor event changed): until the next query, tick has nothing
	 * to compare (a TNT bit from the cache is no query to the time) */
	bool ticked;

	/* libipt's block decoder state */
	uint64_t ip;
	enum pt_exec_mode mode;
	int status;
	bool enabled, process_event, speculative;
	struct pt_event event;
	uint64_t rets[WALK_RETS + 1];
	uint8_t rtop, rbottom;
};

struct dc_walk *dc_walk_alloc(const struct pt_config *cfg, struct dc_wcode *code)
{
	struct dc_walk *w = calloc(1, sizeof(*w));
	struct pt_config q;

	if (!w)
		return NULL;
	pthread_once(&walk_debug_once, walk_debug_read);
	w->cfg = *cfg;
	q = *cfg;
	memset(&q.flags, 0, sizeof(q.flags));   /* (the query decoder's) */
	if (dc_qry_init(&w->qry, &q)) {
		free(w);
		return NULL;
	}
	w->code = code;
	return w;
}

void dc_walk_free(struct dc_walk *w)
{
	if (!w)
		return;
	free(w);
}

void dc_walk_set_code(struct dc_walk *w, struct dc_wcode *code)
{
	w->code = code;
	w->last = NULL;
	w->fast = false;           /* (settle: no last entry) */
}

bool dc_walk_read_code(const struct dc_walk *w)
{
	return w->read_code;
}

/* The query decoder's time (pt_qry_time: the time at the last query,
 * which it keeps; its outputs are set whatever it returns). */
static int qtime(const struct dc_walk *w, uint64_t *tsc)
{
	uint32_t lost_mtc, lost_cyc;

	return dc_qry_time(&w->qry, tsc, &lost_mtc, &lost_cyc);
}

/* A query to the query decoder moves its time. */
static struct dc_qry *qry(struct dc_walk *w)
{
	w->ticked = false;
	return &w->qry;
}

int dc_walk_time(struct dc_walk *w, uint64_t *tsc)
{
	return qtime(w, tsc);
}

int dc_walk_get_offset(const struct dc_walk *w, uint64_t *off)
{
	return dc_qry_get_offset(&w->qry, off);
}

int dc_walk_get_sync_offset(const struct dc_walk *w, uint64_t *off)
{
	return dc_qry_get_sync_offset(&w->qry, off);
}

/* The entry at ip when it is one of the last entry's links (went_at's
 * first look, which is all a steady loop needs); NULL: not linked. (An
 * entry is linked only while the code is 64-bit code; w->fast: there is a
 * last entry.) */
static inline const struct went *went_linked(struct dc_walk *w, uint64_t ip)
{
	const struct went *f = w->last;   /* (not NULL: w->fast) */

	if (w->gen != w->code->gen)
		return NULL;
	for (int k = 0; k < 2; k++)
		if (f->link_ip[k] == ip && f->link[k])   /* (ip may be DC_HASH_EMPTY) */
			return w->last = &w->code->ents[f->link[k] - 1];
	return NULL;
}

/* The entry at ip: through the last one's links when it is one of them
 * (no hashing in a steady loop), else looked up or decoded, and linked.
 * NULL: none; *nocode then says whether the image has no code at ip. */
static const struct went *went_at(struct dc_walk *w, uint64_t ip, bool *nocode)
{
	struct dc_wcode *c = w->code;
	uint64_t idx;
	long i, from = -1;

	w->read_code = true;
	if (!c || w->mode != ptem_64bit)
		return NULL;
	if (w->gen != c->gen) {
		w->gen = c->gen;
		w->last = NULL;
	}
	if (w->last) {
		for (int k = 0; k < 2; k++)
			if (w->last->link_ip[k] == ip && w->last->link[k])
				return w->last = &c->ents[w->last->link[k] - 1];
		from = w->last - c->ents;
	}
	if (ip == DC_HASH_EMPTY)
		return NULL;
	if (dc_hash_get(&c->at, ip, &idx))
		i = (long)idx;
	else if ((i = went_decode(c, ip)) < 0) {
		*nocode = i == -2;
		return NULL;
	}
	w->gen = c->gen;           /* (went_decode may have moved the entries) */
	if (from >= 0) {
		struct went *f = &c->ents[from];
		int k = !f->link[0] ? 0 : !f->link[1] ? 1 : (int)(ip & 1);

		f->link[k] = (uint32_t)i + 1;
		f->link_ip[k] = ip;
	}
	return w->last = &c->ents[i];
}

static void ret_push(struct dc_walk *w, uint64_t ip)
{
	w->rets[w->rtop] = ip;
	w->rtop = w->rtop == WALK_RETS ? 0 : w->rtop + 1;
	if (w->rbottom == w->rtop)
		w->rbottom = w->rbottom == WALK_RETS ? 0 : w->rbottom + 1;
}

static int ret_pop(struct dc_walk *w, uint64_t *ip)
{
	if (w->rtop == w->rbottom)
		return -pte_retstack_empty;
	w->rtop = w->rtop ? w->rtop - 1 : WALK_RETS;
	*ip = w->rets[w->rtop];
	return 0;
}

static int status_of(const struct dc_walk *w, int flags)
{
	if (!w->enabled)
		flags |= pts_ip_suppressed;
	if ((w->status & pts_eos) && !w->process_event)
		flags |= pts_eos;
	return flags;
}

/* A tick event when the time moved since the last event (pt_blk_tick). */
static ALWAYS_INLINE int tick(struct dc_walk *w, uint64_t ip)
{
	uint64_t tsc = 0;
	int err;

	if (!w->enabled)
		return BAIL();
	if (w->process_event || w->ticked)
		return 0;
	err = qtime(w, &tsc);
	if (err < 0 && err != -pte_no_time)
		return BAIL();
	w->ticked = true;          /* (event.tsc is tsc from here on) */
	if (tsc == w->event.tsc)
		return 0;
	memset(&w->event, 0, sizeof(w->event));
	w->event.type = ptev_tick;
	w->event.variant.tick.ip = ip;
	w->event.has_tsc = err != -pte_no_time;
	w->event.tsc = tsc;
	w->event.lost_mtc = w->qry.lt_mtc;
	w->event.lost_cyc = w->qry.lt_cyc;
	w->process_event = true;
	return 0;
}

/* The queries, with libipt's tick; errors other than the end of the data
 * are left to libipt. */
static ALWAYS_INLINE int cond_branch(struct dc_walk *w, int *taken)
{
	struct dc_qry *q = &w->qry;
	int st = 0, err;

	/* a bit from the cache reads no packet: the time stays the last
	 * query's (libipt's too), so it is no query to qtime or tick */
	if (q->tnt_index)
		st = dc_qry_cond_branch_cached(q, taken);
	else if ((st = dc_qry_cond_branch_slow(qry(w), taken)) < 0) {
		return st == -pte_eos || st == -pte_bad_query ? st : BAIL();
	}
	if ((err = tick(w, w->ip)))
		return err;
	return st;
}

static ALWAYS_INLINE int indirect_branch(struct dc_walk *w, uint64_t *ip)
{
	uint64_t evip = w->ip;
	int st = dc_qry_indirect_branch(qry(w), ip), err;

	if (st < 0)
		return st == -pte_eos ? st : BAIL();
	if (st & pts_ip_suppressed)   /* (libipt's two paths differ there) */
		return BAIL();
	if ((err = tick(w, evip)))
		return err;
	return st;
}

static int fetch_event(struct dc_walk *w)
{
	int st;

	if (w->process_event)
		return 1;
	if (!(w->status & pts_event_pending))
		return 0;
	st = dc_qry_event(qry(w), &w->event);
	if (st < 0)
		return st == -pte_eos ? st : BAIL();
	w->process_event = true;
	w->status = st;
	return 1;
}

/* Put n instructions of section isid into b, the last at last, of class
 * c. 0: they do not fit (another section: b ends first); DC_WALK_BAIL: b
 * is full. */
static int add_insns(struct pt_block *b, int isid, uint32_t n, uint64_t last,
		     enum pt_insn_class c)
{
	if (b->ninsn && b->isid != isid)
		return 0;
	if ((uint32_t)b->ninsn + n > UINT16_MAX)
		return BAIL();
	b->isid = isid;
	b->ninsn = (uint16_t)(b->ninsn + n);
	b->end_ip = last;
	b->iclass = c;
	return 1;
}

/* Entry e's instructions, the branch included (add_insns). */
static int add_run(struct pt_block *b, const struct went *e)
{
	return add_insns(b, e->run.isid, e->run.ninsn, e->run.end, e->run.iclass);
}

/* From the branch at the end of e, where the trace says the code went
 * (libipt's pt_blk_next_ip, the call's return already pushed). */
static ALWAYS_INLINE int next_ip_with_trace(struct dc_walk *w, const struct went *e)
{
	int st, taken;

	switch (e->kind) {
	case WK_COND:
		if ((st = cond_branch(w, &taken)) < 0)
			return st == -pte_bad_query ? BAIL() : st;
		w->ip = taken ? e->target : e->run.end + e->len;
		return st;
	case WK_RET:
		st = cond_branch(w, &taken);
		if (st == -pte_bad_query)
			break;
		if (st < 0)
			return st;
		if (!taken)
			return BAIL();   /* (-pte_bad_retcomp) */
		if (ret_pop(w, &w->ip))
			return BAIL();
		return st;
	case WK_JMP:
	case WK_CALL:
		return BAIL();           /* (no trace needed) */
	default:
		break;
	}
	return indirect_branch(w, &w->ip);
}

static inline int take_branch(struct dc_walk *w, const struct went *e);

/* One block with no event pending: one entry, its branch taken. */
static int proceed_no_event(struct dc_walk *w, struct pt_block *b)
{
	bool nocode = false;
	const struct went *e = went_at(w, w->ip, &nocode);
	int st;

	/* (no code at all where the block starts: libipt fails with nothing
	 * decoded and the decoder where it was) */
	if (!e)
		return nocode ? -pte_nomap : BAIL();
	if ((st = add_run(b, e)) <= 0)
		return st ? st : BAIL();
	return take_branch(w, e);
}

/* From the branch at the end of entry e to where the code went (w->ip;
 * w->status: the query's status where the branch needed trace). */
static ALWAYS_INLINE int take_branch(struct dc_walk *w, const struct went *e)
{
	uint64_t next = e->run.end + e->len;
	int st;

	w->ip = e->run.end;
	switch (e->kind) {
	case WK_JMP:
		w->ip = e->target;
		return 0;
	case WK_CALL:
		/* (a call to the next instruction is PIC, not a call) */
		if (e->target != next)
			ret_push(w, next);
		w->ip = e->target;
		return 0;
	case WK_CALL_IND:
		ret_push(w, next);
		break;
	default:
		break;
	}
	if ((st = next_ip_with_trace(w, e)) < 0)
		return st;
	w->status = st;
	return 0;
}

/* Proceed without trace until ip is reached (libipt's
 * pt_blk_proceed_to_ip): 1 reached, 0 the block ended first (a direct
 * call or jump), -pte_bad_query the branch at *last needs trace (w->ip
 * left at it). */
static int proceed_to_ip(struct dc_walk *w, struct pt_block *b, uint64_t ip,
			 const struct went **last)
{
	for (;;) {
		const struct went *e;
		uint64_t lastip = 0;
		long k;
		int st;

		if (w->ip == ip)
			return 1;
		if (!(e = went_at(w, w->ip, &(bool){ false })))
			return BAIL();
		w->read_code = true;   /* (went_at did too) */
		if (ip > w->ip && ip <= e->run.end &&
		    (k = insns_before(w->code, e, w->ip, ip, &lastip)) > 0) {
			/* it is in this run, before the branch */
			if ((st = add_insns(b, e->run.isid, (uint32_t)k, lastip, ptic_other)) <= 0)
				return st ? st : BAIL();
			w->ip = ip;
			w->last = NULL;   /* (mid-entry: no link from here) */
			return 1;
		}
		if ((st = add_run(b, e)) <= 0)
			return st ? st : BAIL();
		*last = e;
		w->ip = e->run.end;
		switch (e->kind) {
		case WK_JMP:
			w->ip = e->target;
			return w->ip == ip;
		case WK_CALL:
			if (e->target != e->run.end + e->len)
				ret_push(w, e->run.end + e->len);
			w->ip = e->target;
			return w->ip == ip;
		case WK_CALL_IND:
			ret_push(w, e->run.end + e->len);
			return -pte_bad_query;
		default:
			return -pte_bad_query;
		}
	}
}

/* Proceed to ip, using trace for the branch that needs it, which ends the
 * block (pt_blk_proceed_to_ip_with_trace). */
static int proceed_to_ip_with_trace(struct dc_walk *w, struct pt_block *b, uint64_t ip)
{
	const struct went *last = NULL;
	int st = proceed_to_ip(w, b, ip, &last);

	if (st != -pte_bad_query)
		return st;
	if ((st = next_ip_with_trace(w, last)) < 0)
		return st;
	w->status = st;
	return 0;
}

/* To where tracing was disabled: the TIP.PGD's ip, or with none the next
 * branch (a syscall: tracing off on the way to the kernel). */
static int proceed_to_disabled(struct dc_walk *w, struct pt_block *b)
{
	const struct pt_event *ev = &w->event;
	const struct went *last = NULL;
	int st;

	if (ev->ip_suppressed && w->cfg.addr_filter.config.addr_cfg && w->cfg.errata.skl014)
		return BAIL();
	/* (with no ip: to the first instruction that changes CR3, which no
	 * user instruction does, so to the branch that needs trace) */
	st = proceed_to_ip(w, b, ev->ip_suppressed ? 0 : ev->variant.disabled.ip, &last);
	if (st != -pte_bad_query)
		return st;
	/* the resume ip: after a call, else unknown */
	w->ip = last->run.iclass == ptic_call || last->run.iclass == ptic_far_call ?
		last->run.end + last->len : 0;
	w->last = NULL;
	return 1;
}

/* Events that bind to no instruction: pending as soon as they come. */
static bool binds_nowhere(enum pt_event_type t)
{
	return t == ptev_enabled || t == ptev_overflow || t == ptev_stop || t == ptev_pwre ||
	       t == ptev_pwrx || t == ptev_tick || t == ptev_cbr || t == ptev_mnt;
}

/* Up to where the event in process binds (pt_blk_proceed_event). */
static int proceed_event(struct dc_walk *w, struct pt_block *b)
{
	const struct pt_event *ev = &w->event;
	const struct went *last = NULL;
	int st;

	if (binds_nowhere(ev->type))
		return status_of(w, pts_event_pending);
	switch (ev->type) {
	case ptev_disabled:
		if ((st = proceed_to_disabled(w, b)) <= 0)
			return st;
		break;
	case ptev_async_disabled:
		if ((st = proceed_to_ip(w, b, ev->variant.async_disabled.at, &last)) <= 0)
			return st == -pte_bad_query ? BAIL() : st;
		w->read_code = true;
		if (w->cfg.errata.skd022 && skd022_applies(w->code, ev->variant.async_disabled.at))
			return BAIL();
		break;
	case ptev_async_branch:
		if ((st = proceed_to_ip(w, b, ev->variant.async_branch.from, &last)) <= 0)
			return st == -pte_bad_query ? BAIL() : st;
		break;
	case ptev_exec_mode:
	case ptev_async_paging:
	case ptev_async_vmcs: {
		uint64_t ip = ev->type == ptev_exec_mode ? ev->variant.exec_mode.ip :
			      ev->type == ptev_async_paging ? ev->variant.async_paging.ip :
			      ev->variant.async_vmcs.ip;

		if (ev->ip_suppressed)
			break;
		if ((st = proceed_to_ip_with_trace(w, b, ip)) < 0)
			return st;
		if (w->ip != ip)
			return 0;
		break;
	}
	case ptev_tsx:
		if (ev->ip_suppressed)
			break;
		if ((st = proceed_to_ip(w, b, ev->variant.tsx.ip, &last)) <= 0)
			return st == -pte_bad_query ? BAIL() : st;
		break;
	case ptev_exstop:
	case ptev_mwait:
	case ptev_paging:
	case ptev_vmcs:
	case ptev_ptwrite:
		if (!w->enabled)
			break;
		return BAIL();
	default:
		return BAIL();
	}
	return status_of(w, pts_event_pending);
}

/* After a block: is an event pending here? (pt_blk_proceed_trailing_event,
 * with no instruction ever postponed: the events that postpone one bail.) */
static int trailing_event(struct dc_walk *w, const struct pt_block *block)
{
	const struct pt_event *ev = &w->event;
	int st = fetch_event(w);

	if (st <= 0)
		return st < 0 ? st : status_of(w, 0);
	switch (ev->type) {
	case ptev_disabled:
		break;
	case ptev_async_disabled:
		if (w->ip != ev->variant.async_disabled.at)
			break;
		w->read_code = true;
		if (w->cfg.errata.skd022 && skd022_applies(w->code, w->ip))
			return BAIL();
		return status_of(w, pts_event_pending);
	case ptev_async_branch:
		if (w->ip != ev->variant.async_branch.from)
			break;
		return status_of(w, pts_event_pending);
	case ptev_paging:
	case ptev_vmcs:
	case ptev_ptwrite:
		/* (with tracing on, they bind to an instruction ahead: the
		 * next block goes there) */
		if (!w->enabled)
			return status_of(w, pts_event_pending);
		break;
	case ptev_async_paging:
		if (!ev->ip_suppressed && w->ip != ev->variant.async_paging.ip)
			break;
		return status_of(w, pts_event_pending);
	case ptev_async_vmcs:
		if (!ev->ip_suppressed && w->ip != ev->variant.async_vmcs.ip)
			break;
		return status_of(w, pts_event_pending);
	case ptev_exec_mode:
		if (!ev->ip_suppressed && w->ip != ev->variant.exec_mode.ip)
			break;
		return status_of(w, pts_event_pending);
	case ptev_tsx:
		if (ev->ip_suppressed)
			return status_of(w, pts_event_pending);
		/* (erratum BDM64: an abort right after a branch; libipt
		 * checks whether the trace of that branch holds) */
		if (block && w->cfg.errata.bdm64 && ev->variant.tsx.aborted && block->ninsn)
			return BAIL();
		if (w->ip != ev->variant.tsx.ip)
			break;
		return status_of(w, pts_event_pending);
	case ptev_exstop:
		if (!ev->ip_suppressed && w->enabled && w->ip != ev->variant.exstop.ip)
			break;
		return status_of(w, pts_event_pending);
	case ptev_mwait:
		if (!ev->ip_suppressed && w->enabled && w->ip != ev->variant.mwait.ip)
			break;
		return status_of(w, pts_event_pending);
	default:
		if (binds_nowhere(ev->type))
			return status_of(w, pts_event_pending);
		return BAIL();
	}
	return status_of(w, 0);
}

/* Keeps w->fast: can the next block be dc_walk_next's common case
 * (next_linked)? Tracing on, no event in process or pending, not in a
 * transaction, a last entry to follow a link of. Every call that may
 * change those sets it on its way out. */
static int settle(struct dc_walk *w, int st)
{
	w->fast = w->enabled && !w->process_event && !(w->status & pts_event_pending) &&
		  !w->speculative && w->last;
	return st;
}

static void reset(struct dc_walk *w)
{
	w->mode = ptem_unknown;
	w->ip = 0;
	w->status = 0;
	w->enabled = w->process_event = w->speculative = w->ticked = w->fast = false;
	memset(&w->event, 0, sizeof(w->event));
	w->rtop = w->rbottom = 0;
	w->last = NULL;
}

static int sync_forward(struct dc_walk *w)
{
	int st;

	reset(w);
	st = dc_qry_sync_forward(qry(w), &w->ip);
	if (st < 0)
		return st == -pte_eos ? st : BAIL();
	w->status = st;
	if (!(st & pts_ip_suppressed))
		w->enabled = true;
	return trailing_event(w, NULL);
}

/* After a block whose branch took a TNT bit from the cache, with status
 * st: what trailing_event answers, which has something to look at only
 * where st says an event is pending. */
static inline int cached_bit_done(struct dc_walk *w, const struct pt_block *b, int st)
{
	w->status = st;
	return st & pts_event_pending ? settle(w, trailing_event(w, b)) : st;
}

/* Entry e's run from w->ip, as add_run puts it into a zeroed block (not
 * speculative: w->fast). */
static inline void block_of(struct pt_block *b, const struct dc_walk *w, const struct went *e)
{
	uint8_t *tail = (uint8_t *)&b->end_ip + sizeof(e->run);

	b->ip = w->ip;
	memcpy(&b->end_ip, &e->run, sizeof(e->run));
	/* (the rest zero: raw, size, the flags, the padding) */
	memset(tail, 0, sizeof(*b) - (size_t)(tail - (uint8_t *)b));
}

/* dc_walk_next's common case (w->fast), the block's entry e reached
 * through a link: the block is e's run. A direct branch changes neither
 * the status nor the time; a TNT bit from the cache with no tick to
 * compare (w->ticked) not the time, and the status only with the cache's
 * last bit: nothing is pending after them unless that status says so.
 * Any other branch goes the way proceed_no_event and trailing_event take
 * it. */
static int next_linked(struct dc_walk *w, struct pt_block *b, const struct went *e)
{
	struct dc_qry *q = &w->qry;
	int st, taken;

	block_of(b, w, e);
	/* (the most common block first, ahead of the switch) */
	if (e->kind == WK_COND && q->tnt_index && w->ticked) {
		st = dc_qry_cond_branch_cached(q, &taken);
		w->ip = taken ? e->target : e->run.end + e->len;
		return cached_bit_done(w, b, st);
	}
	switch (e->kind) {
	case WK_RET:
		/* (a compressed return: its bit taken, the stack not empty) */
		if (!q->tnt_index || !w->ticked || !(q->tnt & q->tnt_index) ||
		    w->rtop == w->rbottom)
			break;
		st = dc_qry_cond_branch_cached(q, &taken);
		ret_pop(w, &w->ip);
		return cached_bit_done(w, b, st);
	case WK_JMP:
		w->ip = e->target;
		return w->status & pts_eos;   /* (status_of: tracing is on) */
	case WK_CALL:
		if (e->target != e->run.end + e->len)
			ret_push(w, e->run.end + e->len);
		w->ip = e->target;
		return w->status & pts_eos;
	default:
		break;
	}
	if ((st = take_branch(w, e)) < 0)
		return settle(w, st);
	if (w->process_event) {
		/* a tick (the only event a branch makes), which binds
		 * nowhere: trailing_event's answer, tracing on */
		w->fast = false;
		return pts_event_pending;
	}
	if (w->status & pts_event_pending)
		return settle(w, trailing_event(w, b));
	return w->status & pts_eos;   /* (w->fast stays) */
}

static int next_slow(struct dc_walk *w, struct pt_block *b)
{
	int st;

	memset(b, 0, sizeof(*b));
	b->ip = w->ip;
	b->mode = w->mode;
	b->speculative = w->speculative;
	if ((st = fetch_event(w)) != 0)
		return st < 0 ? st : proceed_event(w, b);
	if (!w->enabled)
		return w->status & pts_eos ? -pte_eos : BAIL();   /* (or -pte_no_enable) */
	if ((st = proceed_no_event(w, b)) < 0)
		return st;
	return trailing_event(w, b);
}

int dc_walk_next(struct dc_walk *w, struct pt_block *b)
{
	const struct went *e;

	if (w->fast && (e = went_linked(w, w->ip)))
		return next_linked(w, b, e);
	return settle(w, next_slow(w, b));
}

static int take_event(struct dc_walk *w, struct pt_event *uev)
{
	struct pt_event *ev = &w->event;

	if (!w->process_event)
		return BAIL();
	switch (ev->type) {
	case ptev_enabled:
		if (ev->variant.enabled.ip == w->ip)
			ev->variant.enabled.resumed = 1;
		if (ev->status_update || ev->ip_suppressed || w->enabled)
			return BAIL();
		w->ip = ev->variant.enabled.ip;
		w->last = NULL;
		w->enabled = true;
		break;
	case ptev_async_disabled:
		if (w->ip != ev->variant.async_disabled.at)
			return BAIL();
		/* fall through */
	case ptev_disabled:
		if (ev->status_update || !w->enabled)
			return BAIL();
		w->enabled = false;
		break;
	case ptev_async_branch:
		if (w->ip != ev->variant.async_branch.from || ev->status_update || !w->enabled)
			return BAIL();
		w->ip = ev->variant.async_branch.to;
		w->last = NULL;
		break;
	case ptev_overflow:
		if (ev->status_update)
			return BAIL();
		w->enabled = !ev->ip_suppressed;
		w->ip = ev->ip_suppressed ? 0 : ev->variant.overflow.ip;
		w->last = NULL;
		w->speculative = false;
		break;
	case ptev_exec_mode:
		if (!ev->ip_suppressed && w->ip != ev->variant.exec_mode.ip)
			return BAIL();
		if (ev->status_update && w->enabled && w->mode != ptem_unknown &&
		    w->mode != ev->variant.exec_mode.mode)
			return BAIL();
		w->mode = ev->variant.exec_mode.mode;
		if (w->mode != ptem_64bit)
			w->last = NULL;   /* (no entries: went_at, went_linked) */
		break;
	case ptev_tsx:
		if (!ev->ip_suppressed && w->ip != ev->variant.tsx.ip)
			return BAIL();
		w->speculative = ev->variant.tsx.speculative;
		break;
	case ptev_stop:
		if (ev->status_update || w->enabled)
			return BAIL();
		break;
	case ptev_exstop:
		if (!ev->ip_suppressed && w->enabled && w->ip != ev->variant.exstop.ip)
			return BAIL();
		break;
	case ptev_mwait:
		if (!ev->ip_suppressed && w->enabled && w->ip != ev->variant.mwait.ip)
			return BAIL();
		break;
	case ptev_pwre:
	case ptev_pwrx:
	case ptev_ptwrite:
	case ptev_tick:
	case ptev_cbr:
	case ptev_mnt:
		break;
	case ptev_async_paging:
		if (!ev->ip_suppressed && w->ip != ev->variant.async_paging.ip)
			return BAIL();
		break;
	case ptev_async_vmcs:
		if (!ev->ip_suppressed && w->ip != ev->variant.async_vmcs.ip)
			return BAIL();
		break;
	case ptev_paging:
	case ptev_vmcs:
		/* (libipt keeps the CR3 and VMCS for its image's lookups; our
		 * images hold every section for any) */
		break;
	default:
		return BAIL();
	}
	w->process_event = false;
	*uev = *ev;
	return trailing_event(w, NULL);
}

int dc_walk_sync_forward(struct dc_walk *w)
{
	return settle(w, sync_forward(w));
}

int dc_walk_event(struct dc_walk *w, struct pt_event *uev)
{
	/* (nearly every event is a tick with nothing pending after it: it
	 * changes nothing, and trailing_event has nothing to look at) */
	if (w->process_event && w->event.type == ptev_tick &&
	    !(w->status & pts_event_pending)) {
		w->process_event = false;
		*uev = w->event;
		return settle(w, status_of(w, 0));
	}
	return settle(w, take_event(w, uev));
}

int dc_walk_again(struct dc_walk *w, int op, struct pt_block *b, struct pt_event *ev)
{
	if (op == 's')
		return settle(w, sync_forward(w));
	if (op == 'e')
		return settle(w, take_event(w, ev));
	return settle(w, next_slow(w, b));
}
