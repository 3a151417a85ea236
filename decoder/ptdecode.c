/* ptflame - decoder/ptdecode.c: one AUX queue decoded with libipt's block
 * decoder into branch events.
 *
 * Blocks end at calls and jumps (end_on_call/end_on_jump), so a block's
 * last instruction and the next block's first ip give each branch: a call
 * -> CALL, a ret -> RETURN, anything else that lands in another function
 * -> JUMP. Events: TIP.PGE -> TRACE_ON, TIP.PGD -> TRACE_OFF(SYSCALL)
 * (synchronous: the far transfer into the kernel), FUP+TIP.PGD ->
 * TRACE_OFF(FAULT), OVF -> LOST; decode errors -> LOST(DECODE) and resync
 * at the next PSB.
 *
 * Windows: the chunks of a queue are one byte stream, but libipt wants one
 * contiguous buffer. A window is [carry][chunk...] ending where more data
 * follows at its last PSB ("stop"); when the decoder reaches that PSB (the
 * PSB+ status event, bound to the ip where it was emitted) the rest of the
 * window becomes the next window's carry, so nothing is decoded twice and
 * nothing is lost at chunk borders.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "decoder/dc_hash.h"
#include "decoder/dc_vec.h"
#include "decoder/ptdecode.h"
#include "decoder/pt_lastip.h"
#include "decoder/ptdecode_clk.h"
#include "decoder/ptpkt.h"
#include "decoder/decoder.h"

enum ctx_kind { CTX_NONE, CTX_ENABLE, CTX_SYNC };
enum { RETS_MAX = 64 };
/* Instructions decoded with no packet read: past this, the decoder runs
 * in a loop of direct jumps (a damaged trace sent it there) and would run
 * for ever. Real code takes a conditional or indirect branch long before. */
enum { STALL_INSNS = 1 << 22, STALL_STEP = 1 << 16 };
/* Entries of the per-queue cache of branch instructions (code_at). */
enum { CODE_CACHE = 4096 };

struct code_ent {
	uint64_t ip;
	int isid;                  /* 0: empty                               */
	uint8_t call_len;
	bool indirect;
	uint8_t iclass;            /* enum pt_insn_class, as libipt gives it */
	uint8_t len;               /* its length (0: unknown)                */
};

struct pending {
	bool valid;
	uint64_t end_ip;
	enum pt_insn_class iclass;
	uint64_t icount;           /* instructions up to and with end_ip     */
	uint64_t start_ip;         /* where the straight run it ends began:
	                              its first instruction, or that of a
	                              block that fell through into it       */
	int isid;                  /* its image section                      */
};

/* Coarse clocks: the lines t = b + T + c * (x - x0) (x: instruction count)
 * that keep within every bound of a piece of the trace form a convex
 * polygon in (T, c) (T: ns after b at x0, c: ns per instruction). */
enum { PIECE_MAXV = 64 };
struct piece {
	int n;                     /* constraints so far (0: no piece)      */
	int nv;                    /* polygon vertices                      */
	double T[PIECE_MAXV], c[PIECE_MAXV];
	uint64_t x0, b;            /* the first constraint's x and time     */
	uint64_t x_last;           /* the last constraint's x               */
	uint64_t L_last;
	double prior, prior_w;     /* the best rate known and its spread    */
	unsigned stale;            /* pieces since prior was set            */
	uint64_t cap;              /* times at most (a PGD's), or 0         */
	bool late;                 /* it ends at a PGD the sideband's switch-out
				    * bounds: spread up to it (piece_event) */
	bool mid;                  /* it ends at a PGD with no switch on the CPU
				    * in its period: the middle (piece_event) */
	bool pend;                 /* a branch's bound, until its tick      */
	uint64_t pend_x, pend_L, pend_U;
	/* Bounds known to leave the polygon as it is (piece_within): any
	 * instruction in [w_xlo, w_xhi] with a bound at least as loose as
	 * (w_kL, w_kU); w_ok false when the polygon changed since. The last
	 * bound checked in full, to fill them only for a bound seen twice. */
	bool w_ok, w_upper;
	double w_kL, w_kU, w_xlo, w_xhi;
	double l_kL, l_kU;
	uint64_t w_x, w_xmax, w_L, w_U; /* the same in piece_add's terms   */
};

/* A window's packets scanned up to the decoder's position at a coarse
 * TIP.PGE (pge_scan): where the scan is and its last ip; the last TIP.PGE
 * it passed: the offset after it, its ip and the clock there. */
struct pge_scan {
	uint64_t gen;              /* the window's windows + resumes + 1 (0: none) */
	bool bad;                  /* a packet it could not decode: no more */
	uint64_t off, last_ip;
	struct clk clk;
	bool have_pge;
	uint64_t pge_end, pge_ip;
	struct clk pge_clk;
};

/* An output event; branch events wait for their time (tentative) until
 * the next time anchor (see anchor()). */
struct qev {
	struct dc_event ev;
	uint64_t icount;
};

/* Where CBRs go in (cyc_fix_copy): offsets and ratios. */
struct ovf_cbr {
	struct cbr_at {
		size_t at;
		uint8_t ratio;
	} *v;
	size_t n, cap;
	bool nomem;
};

struct dc_ptq {
	struct dc_ptq_config cfg;
	struct dc_ptq_ops ops;
	void *ctx, *user;

	struct dc_ptq_chunk *chunks;
	size_t nchunks, cap_chunks, next_chunk;
	size_t dropped;            /* chunks [0, dropped) are done with      */
	const uint8_t *drop_lo, *drop_hi; /* their pages not yet dropped     */

	/* the window */
	uint8_t *wbuf;             /* owned copy when the window is not one chunk */
	size_t wcap;
	uint8_t *rbuf;             /* a window rebuilt to resume (resume_at) */
	size_t rbuf_len;           /* ... its bytes (windows in it end there) */
	uint8_t *obuf;             /* a window with CBRs after OVFs (cyc_fix_copy) */
	struct ovf_cbr oc;         /* (its scan's)                           */
	const uint8_t *win;
	size_t win_len;
	size_t stop_off;           /* 0: decode to the end                   */
	size_t psb_left;           /* PSB+ status events before the stop's   */
	const uint8_t *carry;      /* bytes for the next window (in win)     */
	size_t carry_len;
	struct dc_wdec dec;        /* the window's (wdec.h)                */
	enum dc_wdec_mode wmode;
	struct dc_wdec_stats wst;
	int status;
	bool synced;
	bool started;              /* a window was opened before             */
	bool cont;                 /* the last window stopped at a PSB: the
				    * next one goes on there, nothing lost   */
	bool lost;                 /* data lost: next ip announces SYNC      */
	uint32_t lost_tid;         /* the thread the LOST went to            */
	uint8_t lost_reason;
	uint64_t lost_ns;
	bool lost_tail;            /* data lost after the last chunk         */

	/* thread context */
	uint32_t pid, tid;
	struct pt_image *image;
	uint32_t gen;              /* image's mappings generation (ops.image_gen):
				    * the lookups' "as of"                 */

	/* branch state */
	struct pending pend;
	/* Return addresses of the calls seen since the last loss or enable
	 * (a thread switch comes with one), less those a return past them
	 * showed left unseen (rets_pop): the target
	 * of a return libipt decoded just before an OVF (the OVF's FUP goes
	 * elsewhere, so no next block tells it). A ring: the oldest go. */
	uint64_t rets[RETS_MAX];
	unsigned nrets, rtop;
	uint64_t cur_lo, cur_hi;   /* function range around the last ip     */
	/* Inline context of the last instruction (ops.inline_at), and the
	 * range around it (in process il_pid) with that same context. */
	uint32_t ictx, il_pid;
	uint64_t il_lo, il_hi;
	struct dc_insn_counter *insns;
	uint64_t last_ns;
	uint64_t last_tsc;         /* the TSC last_ns was made from (now_ns) */
	uint64_t last_push;        /* events leave in time order            */
	bool off_async;            /* the last TRACE_OFF was an interrupt/fault */
	bool off_sys;              /* ... was a syscall's                    */
	/* Times between timing packets, by instruction count: an anchor is
	 * (instructions so far, exact time); branches between two anchors get
	 * times interpolated linearly. pend_t: a time read ahead, for the next
	 * branch that consumes a packet. */
	uint64_t icount;
	uint64_t a_i, a_t, pend_t;
	/* A CBR outside PSB+ is an event: libipt's read-ahead stops at it, so
	 * the time read for the branch after it (cbr_t, the CBR's) is only a
	 * lower bound: that branch's own packet may come after more timing
	 * packets, and then a tick brings its time. Its anchor waits
	 * (tent_i, tent_t) for that tick, up to the next block or event. */
	uint64_t cbr_t, tent_i, tent_t;
	bool tent;
	/* Coarse clock (MTC without CYC in the window): timing packets only
	 * bound the branches around them; see "coarse clocks" below. */
	bool coarse, saw_cyc;
	uint64_t mtc_ns;           /* one MTC period in ns (0: not yet)     */
	struct piece pc;
	uint64_t psb_t;            /* time of a PSB+ met in flow, or 0      */
	uint64_t psb_read;         /* time of the last PSB+ read            */
	uint64_t stall_off, stall_insns; /* trace offset, insns decoded there */
	uint64_t stall_acc;        /* insns since the offset was looked at  */
	uint8_t announce;          /* TRACE_ON reason for the next block    */
	uint64_t announce_ns;
	/* Code the decoder cannot follow (no image: a kernel without one, a
	 * binary not found): nothing can be decoded until the next TIP.PGE
	 * or PSB. unk_tid's time meanwhile is [kernel] (the kernel: RESUME
	 * at the sync), or after the call into missing user code [lost]
	 * (LOST UNDECODED: where that code went, a return included, is not
	 * known; the sync resyncs the stack). */
	enum { UNK_NONE, UNK_KERNEL, UNK_USER } unk;
	uint32_t unk_tid;
	uint64_t unk_mark;         /* nadded right after that LOST          */
	bool resumed;              /* went on at a TIP.PGE since the last PSB */
	bool resuming;             /* ... the next sync is that */
	/* Bytes the resumes at a TIP (not a PGE) of the window numbered
	 * tip_gen scanned and copied, and the most they may: each scans
	 * from the last PSB (and the timing packets it keeps pile up), and
	 * one in a window that is not rbuf's copies the rest of it (in
	 * rbuf's, the bytes before the TIP are rewritten in place), so
	 * without a bound a missing library's calls into libc in a loop
	 * were quadratic (a 1.5 MB recording of 200,000 such calls: 47 s
	 * instead of 0.1 s); past it only a TIP.PGE or the next PSB goes
	 * on. */
	uint64_t tip_gen, tip_copied, tip_budget;
	uint64_t async_from;       /* the FUP of an async branch, until the
				    * next block                            */
	uint64_t async_ns;         /* ... and its time                      */

	/* the head: output events, then at most one context point */
	struct qev *fifo;
	size_t fhead, fn, fcap;
	uint64_t nadded;           /* events ever added                     */
	size_t nfinal;             /* head entries whose time is known      */
	enum ctx_kind ctx_kind;
	uint64_t ctx_ns, ctx_ip;
	uint64_t ctx_up;           /* in ops.context: a coarse PGE's time is
				    * below this (0: not one)               */
	const uint8_t *ctx_win;    /* the window and offset the decoder was */
	uint64_t ctx_off;          /* at when a PGE set the context point   */
	struct pge_scan ps;        /* ... and the packets up to there       */
	bool done;

	struct dc_ptq_stats st;
	struct code_ent code[CODE_CACHE];

	/* decoding ahead (dc_ptq_config.ahead; see "ahead" below) */
	bool wopen;                /* a window is open (decoder or replay)  */
	struct ahead *ah;          /* the worker, while it runs             */
	bool rp;                   /* this window is replayed from ah       */
	bool rp_stale;             /* the image changed during the replay   */
	struct pt_image *rp_img;   /* the snapshot the worker decodes with, */
	struct pt_image *rp_src;   /* ... taken of this image               */
	uint64_t rp_ver;           /* ... at this version                   */
	uint8_t *rp_buf;           /* the replayed window's bytes (owned)   */
	/* The calls replayed in this window, for going live: each sync or
	 * event call (kind | the dc_wdec_next calls before it << 8), and
	 * the dc_wdec_next calls since the last of them. */
	uint64_t *rp_ops;
	size_t rp_nops, rp_capops;
	uint64_t rp_nexts;
	/* The record taken last, still held (its slot goes back when the
	 * next is taken): the decoder's time and offset after that call
	 * are read from it. NULL: none taken in this window. */
	const struct rrec *rp_cur;
	int rp_soff_ret;           /* (the last sync's)                     */
	uint64_t rp_soff;
	int fatal;                 /* -ENOMEM met inside a decoder op       */
	uint32_t ah_devs;          /* windows that went back to this thread */
	uint64_t ah_wait;          /* windows to decode here before a restart */
	uint64_t ah_windows;       /* windows replayed                      */
	uint64_t ah_prebuilt;      /* ... of them built here (ah_prebuild)  */
	struct dc_ptq_pool *own_pool; /* a thread of its own (no cfg.pool)  */
};

static const uint8_t psb_pattern[16] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
};

struct dc_ptq *dc_ptq_new(const struct dc_ptq_config *cfg, const struct dc_ptq_ops *ops,
			  void *ctx)
{
	struct dc_ptq *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->cfg = *cfg;
	q->ops = *ops;
	q->ctx = ctx;
	q->pid = q->tid = UINT32_MAX;
	q->wmode = q->cfg.decoder;
	return q;
}

static void ahead_stop(struct dc_ptq *q);
static inline void rp_release(struct dc_ptq *q);

void dc_ptq_free(struct dc_ptq *q)
{
	if (!q)
		return;
	ahead_stop(q);
	dc_ptq_pool_free(q->own_pool);
	free(q->rp_buf);
	free(q->rp_ops);
	dc_wdec_close(&q->dec);
	free(q->dec.ops);
	dc_insn_counter_free(q->insns);
	free(q->wbuf);
	free(q->rbuf);
	free(q->obuf);
	free(q->oc.v);
	free(q->chunks);
	free(q->fifo);
	free(q);
}

/* A long chunk is kept in parts of CHUNK_MAX bytes. A window ends at the
 * last PSB of a chunk, so this bounds the windows: the first one, which the
 * queue decodes itself before its worker can start (a tenth of a 10 MiB
 * trace in 1 MiB chunks), and the copies the worker and the queue make. */
enum { CHUNK_MAX = 256 << 10 };

int dc_ptq_add_chunk(struct dc_ptq *q, const struct dc_ptq_chunk *c)
{
	struct dc_ptq_chunk part = *c;

	part.part = false;
	do {
		uint64_t n = part.size < CHUNK_MAX ? part.size : CHUNK_MAX;

		if (DC_VEC_PUSH_ROOM(q->chunks, q->nchunks, q->cap_chunks, 16))
			return -ENOMEM;
		q->chunks[q->nchunks] = part;
		q->chunks[q->nchunks++].size = n;
		part.data += n;
		part.offset += n;
		part.size -= n;
		part.lost_before = false;
		part.part = true;
	} while (part.size);
	return 0;
}

/* The queue's data is lost from its start (up to the first PSB of its
 * first chunk, or for good when it has none): no thread is known yet, so
 * no LOST event; each thread the sideband shows on the CPU meanwhile gets
 * its own (dc_ptq_in_loss at its switch-in, or do_ctx at the sync). */
static void lost_from_start(struct dc_ptq *q)
{
	if (q->lost)
		return;
	q->lost = true;
	q->lost_tid = UINT32_MAX;
	q->lost_reason = DC_LOST_TRUNCATED;
	q->lost_ns = 0;
	q->st.lost_truncated++;
}

void dc_ptq_mark_breaks(struct dc_ptq *q, const uint64_t *offs, size_t n)
{
	const struct dc_ptq_chunk *last = q->nchunks ? &q->chunks[q->nchunks - 1] : NULL;

	/* (a break is where a chunk the owner gave starts, not a part's;
	 * the chunks are in ascending offsets, so each break is a binary
	 * search: a recording of 2 million chunks and 500,000 breaks took
	 * hours comparing every pair) */
	for (size_t k = 0; k < n; k++) {
		size_t i = DC_VEC_UPPER(q->chunks, q->nchunks, offset, offs[k]);

		if (i >= 2 && q->chunks[i - 1].offset == offs[k] && !q->chunks[i - 1].part)
			q->chunks[i - 1].lost_before = true;
	}
	for (size_t k = 0; k < n; k++) {
		if (!last || offs[k] <= q->chunks[0].offset)
			lost_from_start(q);
		else if (offs[k] > last->offset + last->size)
			q->lost_tail = true;
	}
}

const struct dc_ptq_config *dc_ptq_config(const struct dc_ptq *q) { return &q->cfg; }
void dc_ptq_set_user(struct dc_ptq *q, void *user) { q->user = user; }
void *dc_ptq_user(const struct dc_ptq *q) { return q->user; }

uint64_t dc_ptq_ctx_enable(const struct dc_ptq *q, uint64_t *period, uint64_t *after,
			   bool *async, bool *sys)
{
	*period = q->ctx_up ? q->ctx_up - q->ctx_ns : 0;
	*after = q->last_push;
	*async = q->off_async;
	*sys = q->off_sys;
	return q->ctx_up ? q->ctx_ip : 0;
}

void dc_ptq_ctx_raise(struct dc_ptq *q, uint64_t t)
{
	if (q->ctx_up && t > q->ctx_ns)
		q->ctx_ns = t < q->ctx_up ? t : q->ctx_up - 1;
}

const uint8_t *dc_ptq_pending_data(const struct dc_ptq *q)
{
	return q->dropped < q->nchunks ? q->chunks[q->dropped].data : NULL;
}

enum { DROP_GAP = 64 << 10 };

/* Chunks before `upto` are decoded (or copied into the window): their
 * pages may go (see dc_ptq_config.drop_chunks). */
static void drop_chunks(struct dc_ptq *q, size_t upto)
{
	for (; q->dropped < upto && q->cfg.drop_chunks; q->dropped++) {
		const struct dc_ptq_chunk *c = &q->chunks[q->dropped];

		/* Chunks up to DROP_GAP apart in the file go in one call,
		 * made when the span reaches 1 MiB (or the next chunk is
		 * further on, or at the end): each call interrupts the other
		 * CPUs that run this process's threads, to flush their TLBs.
		 * Between them may be records, or other queues' chunks (a
		 * per-CPU trace's queues take turns in the file every few
		 * KiB: a call per chunk was 3756 calls on a 2-queue trace of
		 * 18 MiB); their pages, if still needed, are read again from
		 * the page cache. */
		if (q->drop_hi && c->data >= q->drop_hi && c->data - q->drop_hi <= DROP_GAP) {
			q->drop_hi = c->data + c->size;
			continue;
		}
		if (q->drop_hi)
			dc_drop_pages(q->drop_lo, (uint64_t)(q->drop_hi - q->drop_lo));
		q->drop_lo = c->data;
		q->drop_hi = c->data + c->size;
	}
	q->dropped = upto > q->dropped ? upto : q->dropped;
	if (q->drop_hi && (upto >= q->nchunks || q->drop_hi - q->drop_lo >= (1 << 20))) {
		dc_drop_pages(q->drop_lo, (uint64_t)(q->drop_hi - q->drop_lo));
		q->drop_lo = q->drop_hi = NULL;
	}
}

void dc_ptq_stats(const struct dc_ptq *q, struct dc_ptq_stats *st)
{
	*st = q->st;
	/* (a worker's count is added when it stops) */
	st->walk_windows = q->wst.walked;
	st->walk_bails = q->wst.bailed;
}

bool dc_ptq_in_loss(const struct dc_ptq *q, uint64_t t, uint8_t *reason)
{
	if (!q->lost || t < q->lost_ns)
		return false;
	*reason = q->lost_reason;
	return true;
}

void dc_ptq_loss_taken(struct dc_ptq *q, uint32_t tid)
{
	if (q->lost)
		q->lost_tid = tid;
}

/* ---- output ------------------------------------------------------------- */

static struct qev *fifo_add(struct dc_ptq *q)
{
	struct qev *e;

	if (q->fhead + q->fn == q->fcap) {
		/* slide down only when the done head is 3/4 of the room,
		 * else grow: a piece holds up to 8192 events, and sliding
		 * them whenever the head had as many was 1.6 % of a
		 * synthetic trace's instructions */
		if (q->fhead && q->fhead >= 3 * q->fn) {
			memmove(q->fifo, q->fifo + q->fhead, q->fn * sizeof(*q->fifo));
			q->fhead = 0;
		} else if (DC_VEC_PUSH_ROOM(q->fifo, q->fhead + q->fn, q->fcap, 16)) {
			return NULL;
		}
	}
	e = &q->fifo[q->fhead + q->fn++];
	q->nadded++;
	memset(e, 0, sizeof(*e));
	e->ev.pid = q->pid;
	e->ev.tid = q->tid;
	e->ev.cpu = q->cfg.cpu;
	return e;
}

static void set_final(struct dc_ptq *q, struct qev *e, uint64_t t)
{
	if (t < q->last_push)
		t = q->last_push;
	q->last_push = t;
	e->ev.time_ns = t;
	q->nfinal++;
}

static void piece_commit(struct dc_ptq *q);
static void piece_close(struct dc_ptq *q, uint64_t x_end);

/* a * b / c, exactly (c > 0; the result fits: b <= c). In 64 bits when
 * the product fits, as it nearly always does (the 128-bit division is a
 * library call). */
static inline uint64_t mul_div(uint64_t a, uint64_t b, uint64_t c)
{
	if ((a | b) <= UINT32_MAX)
		return a * b / c;
	return (uint64_t)((unsigned __int128)a * b / c);
}

/* Instruction ai retired at time at: tentative events up to it get their
 * times, interpolated from the previous anchor by instruction count (on a
 * coarse clock the open piece gives the times up to its last bound). */
static void anchor(struct dc_ptq *q, uint64_t ai, uint64_t at)
{
	if (q->coarse) {
		piece_commit(q);
		if (q->pc.n)
			piece_close(q, q->pc.x_last);
	}
	if (at < q->a_t)
		at = q->a_t;
	while (q->nfinal < q->fn) {
		struct qev *e = &q->fifo[q->fhead + q->nfinal];
		uint64_t t = at;

		if (e->icount > ai)
			break;
		if (ai > q->a_i && e->icount > q->a_i)
			t = q->a_t + mul_div(at - q->a_t, e->icount - q->a_i, ai - q->a_i);
		set_final(q, e, t);
	}
	q->a_i = ai;
	q->a_t = at;
}

/* The branch timed at a CBR (see cbr_t) gets that time: no tick came. */
static void tent_flush(struct dc_ptq *q)
{
	if (q->tent) {
		q->tent = false;
		anchor(q, q->tent_i, q->tent_t);
	}
}

/* A branch event (its time comes with the next anchor). */
static int push_branch(struct dc_ptq *q, uint8_t kind, uint64_t from, uint64_t to,
		       uint64_t icount)
{
	struct qev *e = fifo_add(q);

	if (!e)
		return -ENOMEM;
	e->ev.kind = kind;
	e->ev.from_ip = from;
	e->ev.to_ip = to;
	e->icount = icount;
	if (icount <= q->a_i && q->nfinal == q->fn - 1)
		set_final(q, e, q->a_t);
	return 0;
}

/* An event with a known time (tracing on/off, loss): an anchor too. */
static int push(struct dc_ptq *q, uint8_t kind, uint8_t reason, uint64_t from,
		uint64_t to, uint64_t time)
{
	struct qev *e;

	tent_flush(q);
	anchor(q, q->icount, time);
	e = fifo_add(q);
	if (!e)
		return -ENOMEM;
	e->ev.from_ip = from;
	e->ev.to_ip = to;
	e->ev.kind = kind;
	e->ev.reason = reason;
	e->ev.sysno = kind == DC_EV_TRACE_OFF && reason == DC_OFF_SYSCALL ? UINT32_MAX : 0;
	if (kind == DC_EV_TRACE_OFF) {
		q->off_async = reason == DC_OFF_FAULT;
		q->off_sys = reason == DC_OFF_SYSCALL;
	}
	e->icount = q->icount;
	set_final(q, e, q->a_t);
	return 0;
}

/* ---- coarse clocks: MTC without CYC ------------------------------------
 *
 * A timing packet binds to no instruction: the packets before it stand for
 * instructions that retired before its time, those after it for ones that
 * retired at or after it (SDM vol. 3, Intel PT, "TSC Packet" and "MTC
 * Packet", Application). The hardware flushes a pending TNT before an MTC
 * (the Skylake recording in ../shared/realtraces has a partial TNT right
 * before most of its MTCs), so a time e read at the packet of a branch
 * bounds it: e <= t < e + one MTC period. With CYC each packet has its own
 * exact time and is an anchor; without, the decoder anchored e at that
 * branch too, making every branch early by up to an MTC period, and at
 * 1000 ns per instruction by up to the whole instructions since the edge.
 *
 * Instead the bounds of a piece of trace (instruction x, [L, U)) are
 * collected: the lines t = b + T + c (x - x0) through all of them form a
 * convex polygon in (T, c), clipped by each bound. When a bound leaves no
 * line (the rate changed, as real code does) or the piece ends (tracing
 * stops, an exact anchor, data lost), the piece's events get their times
 * from one line of the polygon: the best rate a piece pinned to 1 %, if
 * this one allows it (else its own, if it pins it; else, as before, the
 * rate from the last anchor to the last time read), and the earliest
 * offset allowed at that rate. A run at a constant rate so decodes as
 * exactly as its bounds allow; a varying rate becomes a line per stretch
 * of constant rate, each within all its bounds. (The earliest offset: a
 * piece the trace says little about, say a few instructions between a
 * TIP.PGE and an interrupt, keeps the time of its timing packet, as
 * before, and its events stay before the sideband's switch-out; the
 * middle would put them up to half a period later.) */

#define PIECE_CMAX 1e6             /* ns per instruction, at most        */

static uint64_t mtc_period_first(struct dc_ptq *q)
{
	const struct pt_config *pc = &q->cfg.pt;

	if (!q->mtc_ns && pc->cpuid_0x15_eax && pc->cpuid_0x15_ebx && pc->mtc_freq < 16) {
		uint64_t tsc = (UINT64_C(1) << pc->mtc_freq) * pc->cpuid_0x15_ebx /
			       pc->cpuid_0x15_eax;

		q->mtc_ns = dc_pt_tsc_to_ns(&q->cfg.conv, tsc) - dc_pt_tsc_to_ns(&q->cfg.conv, 0);
	}
	return q->mtc_ns;
}

/* (asked per branch with a packet on a coarse clock) */
static inline uint64_t mtc_period_ns(struct dc_ptq *q)
{
	return q->mtc_ns ? q->mtc_ns : mtc_period_first(q);
}

/* Into (oT, oc), room for PIECE_MAXV + 1: the part of the polygon
 * (T, c, nv) with T + xi c >= k (lower) or <= k; returns its vertices. */
static int poly_clip(const double *pT, const double *pc, int nv, double *T, double *c,
		     double xi, double k, bool lower)
{
	int m = 0;

	for (int i = 0; i < nv; i++) {
		int j = i + 1 == nv ? 0 : i + 1;
		double fi = pT[i] + xi * pc[i] - k, fj = pT[j] + xi * pc[j] - k;

		if (!lower) {
			fi = -fi;
			fj = -fj;
		}
		if (fi >= 0 && m <= PIECE_MAXV) {
			T[m] = pT[i];
			c[m++] = pc[i];
		}
		/* (strictly across: a vertex on the line is kept as it is,
		 * not doubled, or bounds at one time for many instructions
		 * add a vertex each, and the piece ends at PIECE_MAXV) */
		if (((fi > 0 && fj < 0) || (fi < 0 && fj > 0)) && m <= PIECE_MAXV) {
			double u = fi / (fi - fj);

			T[m] = pT[i] + u * (pT[j] - pT[i]);
			c[m++] = pc[i] + u * (pc[j] - pc[i]);
		}
	}
	return m > PIECE_MAXV ? 0 : m;   /* (cannot happen: a clip adds one vertex at most) */
}

/* Does every vertex of the piece's polygon already lie within the bound
 * (kL, and kU when upper)? Then clipping would copy it unchanged: most
 * bounds of a run at a steady rate are such. (The same expressions as
 * poly_clip, so the same answers.) */
static bool vertex_within(double T, double c, double x, double kL, bool upper, double kU)
{
	double v = T + x * c;

	return v - kL >= 0 && (!upper || -(v - kU) >= 0);
}

static bool poly_within(const struct piece *p, double xi, double kL, bool upper, double kU)
{
	for (int i = 0; i < p->nv; i++)
		if (!vertex_within(p->T[i], p->c[i], xi, kL, upper, kU))
			return false;
	return true;
}

/* After poly_within(p, xi, kL, upper, kU) said yes: how far that answer
 * holds, so that a run of branches read at one time (all bound by one
 * timing packet and the next) is checked once, not once per branch and
 * vertex. Every vertex has c >= 0, and rounding is monotone, so each T + x c
 * as computed is nondecreasing in x: the lower bound met at xi is met at
 * any larger x, and the upper bound met at some x_hi at any smaller one.
 * x_hi is the nearest vertex's crossing of kU less a margin, and is itself
 * checked with poly_within's expressions: the answers are poly_within's. */
static void piece_fill_within(struct piece *p, double xi, double kL, bool upper, double kU)
{
	double x_hi = 1e300;

	p->w_ok = false;
	if (!(xi >= 0) || !(xi < 1e300))
		return;
	for (int i = 0; i < p->nv; i++) {
		if (!(p->c[i] >= 0))
			return;
		if (upper && p->c[i] > 0) {
			double x = (kU - p->T[i]) / p->c[i];

			x_hi = x < x_hi ? x : x_hi;
		}
	}
	x_hi -= (x_hi < 0 ? -x_hi : x_hi) * 1e-9 + 1;
	if (!(x_hi > xi))
		x_hi = xi;
	for (int i = 0; i < p->nv && x_hi > xi; i++)
		if (!vertex_within(p->T[i], p->c[i], x_hi, kL, upper, kU))
			x_hi = xi;
	p->w_ok = true;
	p->w_upper = upper;
	p->w_kL = kL;
	p->w_kU = kU;
	p->w_xlo = xi;
	p->w_xhi = x_hi;
}

/* piece_add's x (instructions) and times whose xi, kL and kU are all
 * within what piece_fill_within kept: those conversions are monotone, so
 * x from the one checked (x) to the last whose xi is at most w_xhi, a
 * lower time at most L and an upper one at least U (U: 0, none). */
static void piece_fill_ints(struct piece *p, uint64_t x, uint64_t L, uint64_t U)
{
	uint64_t xmax = x;

	if (!p->w_upper) {
		xmax = UINT64_MAX;           /* (any x: no upper bound) */
	} else if (p->w_xhi - p->w_xlo < 1e15) {
		xmax = x + (uint64_t)(p->w_xhi - p->w_xlo);
		while (xmax > x && !((double)xmax - (double)p->x0 <= p->w_xhi))
			xmax = x + (xmax - x) / 2;
	}
	p->w_x = x;
	p->w_xmax = xmax;
	p->w_L = L;
	p->w_U = U;
}

/* Does the polygon lie within the bound (poly_within's answer), asked of
 * what piece_fill_within kept first? */
static bool piece_within(struct piece *p, double xi, double kL, bool upper, double kU)
{
	if (p->w_ok && xi >= p->w_xlo && xi <= p->w_xhi && kL <= p->w_kL &&
	    (!upper || (p->w_upper && kU >= p->w_kU)))
		return true;
	if (!poly_within(p, xi, kL, upper, kU))
		return false;
	if (kL == p->l_kL && kU == p->l_kU)
		piece_fill_within(p, xi, kL, upper, kU);
	p->l_kL = kL;
	p->l_kU = kU;
	return true;
}

/* The line of the polygon the piece's events get (see above): the rate
 * known (if the piece allows it and does not pin its own better), else the
 * piece's own if pinned to 1 %, else the old rule's; at it, the earliest
 * offset allowed, or, for a piece that piece_event says ends at a PGD with
 * no switch near (mid) and a rate of the first two, the middle of the
 * offsets allowed (where in its period a syscall returned, no packet
 * tells: the middle halves the worst error). True when the rate is one of
 * the first two.
 * *cmid, *cw: the middle and spread of the rates the piece allows. */
static bool piece_line(const struct dc_ptq *q, double *T, double *c, double *cmid, double *cw)
{
	const struct piece *p = &q->pc;
	double cmin = PIECE_CMAX, cmax = 0, want, tmin = 0, tmax = 0;
	bool any = false, known = false;

	for (int i = 0; i < p->nv; i++) {
		cmin = p->c[i] < cmin ? p->c[i] : cmin;
		cmax = p->c[i] > cmax ? p->c[i] : cmax;
	}
	*cmid = (cmin + cmax) / 2;
	*cw = cmax < PIECE_CMAX / 2 ? cmax - cmin : PIECE_CMAX;
	if (p->prior > 0 && !(*cw < p->prior_w)) {
		want = p->prior;
		known = true;
	} else if (*cw <= *cmid / 100) {
		want = *cmid;
		known = true;
	} else if (p->late)
		/* ended by a switch-out (piece_event): the rate known, else
		 * the gap spread over the instructions, none of it left after
		 * the PGD */
		want = p->prior > 0 ? p->prior : cmax;
	else if (p->x_last > q->a_i && p->L_last > q->a_t)
		/* nothing pins the rate: as the decoder did before, from the
		 * last anchor to the last time read */
		want = (double)(p->L_last - q->a_t) / (double)(p->x_last - q->a_i);
	else
		want = cmin;
	want = want < cmin ? cmin : want > cmax ? cmax : want;
	for (int i = 0; i < p->nv; i++) {
		int j = (i + 1) % p->nv;
		double ci = p->c[i], cj = p->c[j], t;

		if ((ci - want) * (cj - want) > 0)
			continue;
		t = ci == cj ? p->T[i] : p->T[i] + (want - ci) * (p->T[j] - p->T[i]) / (cj - ci);
		if (!any || t < tmin)
			tmin = t;
		if (!any || t > tmax)
			tmax = t;
		any = true;
		if (ci == cj) {
			tmin = p->T[j] < tmin ? p->T[j] : tmin;
			tmax = p->T[j] > tmax ? p->T[j] : tmax;
		}
	}
	*T = p->mid && known ? (tmin + tmax) / 2 : tmin;
	*c = want;
	return known;
}

static uint64_t piece_at(const struct piece *p, double T, double c, uint64_t x)
{
	double v = T + c * ((double)x - (double)p->x0);
	long long d;

	v = v > 4e18 ? 4e18 : v < -4e18 ? -4e18 : v;   /* (a damaged trace) */
	d = (long long)(v >= 0 ? v + 0.5 : v - 0.5);

	return d < 0 && (uint64_t)-d > p->b ? 0 : p->b + (uint64_t)d;
}

/* The time the open piece gives instruction x. */
static uint64_t piece_time(const struct dc_ptq *q, uint64_t x)
{
	double T, c, cm, cw;

	piece_line(q, &T, &c, &cm, &cw);
	return piece_at(&q->pc, T, c, x);
}

/* Events up to instruction x_end get the piece's times; the piece ends. */
static void piece_close(struct dc_ptq *q, uint64_t x_end)
{
	struct piece *p = &q->pc;
	double T, c, cm, cw;
	uint64_t t;

	if (!p->n)
		return;
	piece_line(q, &T, &c, &cm, &cw);
	while (q->nfinal < q->fn) {
		struct qev *e = &q->fifo[q->fhead + q->nfinal];

		uint64_t te;

		if (e->icount > x_end)
			break;
		te = piece_at(p, T, c, e->icount);
		set_final(q, e, p->cap && te > p->cap ? p->cap : te);
	}
	t = piece_at(p, T, c, x_end);
	if (p->cap && t > p->cap)
		t = p->cap;
	if (x_end >= q->a_i) {
		q->a_i = x_end;
		q->a_t = t > q->a_t ? t : q->a_t;
	}
	/* the rate known: the best one a piece pinned to 1 % (a looser one
	 * after 64 pieces: real code changes its rate) */
	if (cw <= cm / 100 && (!(p->prior > 0) || cw <= p->prior_w || ++p->stale > 64)) {
		p->prior = cm;
		p->prior_w = cw;
		p->stale = 0;
	}
	p->n = 0;
	p->nv = 0;
	p->w_ok = false;
	p->cap = 0;
	p->late = false;
	p->mid = false;
}

/* PTFLAME_DECODER=check (tests): what piece_add's fast path said, that
 * the bound leaves the polygon as it is, is what poly_within says. */
static void piece_check(const struct dc_ptq *q, uint64_t x, uint64_t L, uint64_t U)
{
	const struct piece *p = &q->pc;

	if (poly_within(p, (double)x - (double)p->x0, (double)(int64_t)(L - p->b), U != 0,
			U ? (double)(int64_t)(U - 1 - p->b) : 0))
		return;
	fprintf(stderr, "ptflame: PTFLAME_DECODER=check: a time bound (instruction %" PRIu64
		", [%" PRIu64 ", %" PRIu64 ")) cuts the piece its fast path said it left as it "
		"is\n", x, L, U);
	abort();
}

/* The piece took a bound at instruction x (read at L) that left its
 * polygon as it was, or cut it and left a line. */
static inline void piece_took(struct dc_ptq *q, uint64_t x, uint64_t L)
{
	struct piece *p = &q->pc;

	p->n++;
	if (x >= p->x_last) {
		p->x_last = x;
		p->L_last = L;
	}
	/* long pieces are cut, not to hold too many events */
	if (q->fn - q->nfinal > 8192)
		piece_close(q, p->x_last);
}

static void piece_add_slow(struct dc_ptq *q, uint64_t x, uint64_t L, uint64_t U);

/* Instruction x retired in [L, U) (U 0: no upper bound). Inline: a bound
 * of a run read at one time is decided here (piece_fill_ints), and the
 * call and prologue of the polygon's code were most of its cost. */
static inline void piece_add(struct dc_ptq *q, uint64_t x, uint64_t L, uint64_t U)
{
	struct piece *p = &q->pc;

	if (U && U <= L)
		U = L + 1;
	if (p->w_ok && x >= p->w_x && x <= p->w_xmax && L <= p->w_L &&
	    (!U || (p->w_upper && U >= p->w_U))) {
		if (q->cfg.decoder == DC_WDEC_CHECK)
			piece_check(q, x, L, U);
		piece_took(q, x, L);
		return;
	}
	piece_add_slow(q, x, L, U);
}

/* piece_add's other bounds (U adjusted). The polygon is clipped into
 * scratch arrays and copied back only when the bound cut it and left a
 * line: the piece itself is never copied (it holds 1 KiB). */
static __attribute__((noinline)) void piece_add_slow(struct dc_ptq *q, uint64_t x, uint64_t L,
						     uint64_t U)
{
	struct piece *p = &q->pc;
	double xi, kL, kU;

	if (!p->n) {
		/* (a new piece: a cap or late rule set on an empty one, cut by
		 * piece_add itself, was not this piece's) */
		p->cap = 0;
		p->late = false;
		p->mid = false;
		p->x0 = p->x_last = x;
		p->b = p->L_last = L;
		p->nv = 4;
		p->T[0] = 0;
		p->c[0] = 0;
		p->T[1] = U ? (double)(U - 1 - L) : 1e15;
		p->c[1] = 0;
		p->T[2] = p->T[1];
		p->c[2] = PIECE_CMAX;
		p->T[3] = 0;
		p->c[3] = PIECE_CMAX;
		p->w_ok = false;
		p->n = 1;
		return;
	}
	xi = (double)x - (double)p->x0;
	kL = (double)(int64_t)(L - p->b);
	kU = U ? (double)(int64_t)(U - 1 - p->b) : 0;
	if (piece_within(p, xi, kL, U != 0, kU)) {
		if (q->cfg.decoder == DC_WDEC_CHECK)
			piece_check(q, x, L, U);
		if (p->w_ok && p->w_xlo == xi && p->w_kL == kL)
			piece_fill_ints(p, x, L, U);
	} else {
		double T1[PIECE_MAXV + 1], c1[PIECE_MAXV + 1], T2[PIECE_MAXV + 1],
			c2[PIECE_MAXV + 1];
		const double *rT = T1, *rc = c1;
		int m = poly_clip(p->T, p->c, p->nv, T1, c1, xi, kL, true);

		if (U && m) {
			m = poly_clip(T1, c1, m, T2, c2, xi, kU, false);
			rT = T2;
			rc = c2;
		}
		if (!m || m >= PIECE_MAXV - 1) {
			/* no line through them all: the rate changed. What the
			 * piece holds retired no later than x did, before U: its
			 * line may say later where x is its last instruction read
			 * again (a PGD's bound by the thread's switch-out, under
			 * its branch's period: the exit_group of an emu_signal
			 * run went after the switch-out, a [kernel] lost) */
			if (U && (!p->cap || p->cap > U - 1))
				p->cap = U - 1;
			piece_close(q, p->x_last);
			piece_add(q, x, L, U);
			return;
		}
		p->nv = m;
		p->w_ok = false;
		memcpy(p->T, rT, sizeof(double) * (size_t)m);
		memcpy(p->c, rc, sizeof(double) * (size_t)m);
	}
	piece_took(q, x, L);
}

/* A time L read after the held branch's packet: a timing packet came
 * after that packet, so the branch retired before L (the first such
 * packet's time, at most L); tighter than its period when the time before
 * it came from a TSC (a PSB+, the one before a TIP.PGE), which falls
 * anywhere in a period. */
static void piece_later(struct dc_ptq *q, uint64_t L)
{
	if (q->pc.pend && L > q->pc.pend_L && (!q->pc.pend_U || L + 1 < q->pc.pend_U))
		q->pc.pend_U = L + 1;
}

/* A branch that took a packet, read at time L: a bound, but held until
 * its tick (which may tell a later time read at its own packet). */
static void piece_branch(struct dc_ptq *q, uint64_t x, uint64_t L, uint64_t U)
{
	piece_later(q, L);
	piece_commit(q);
	q->pc.pend = true;
	q->pc.pend_x = x;
	q->pc.pend_L = L;
	q->pc.pend_U = U;
}

static void piece_commit(struct dc_ptq *q)
{
	if (!q->pc.pend)
		return;
	q->pc.pend = false;
	piece_add(q, q->pc.pend_x, q->pc.pend_L, q->pc.pend_U);
}

/* A TIP.PGD read at t, its thread's time on the CPU ending before hi:
 * the sideband's switch-out of the thread, sw, if it is the CPU's next
 * switch record in [t, hi) and no TIP.PGE can come before it (none in
 * the packets after the PGD up to the second MTC, a TSC at sw or later,
 * or the end of the queue's data); else 0. Where only a TIP.PGE may come
 * first, sw still bounds the PGD (*bound; 0: no switch-out there): the
 * PGD ended the stint that sw ends, whatever ran between them. *none:
 * the sideband has no switch record of the CPU in [t, hi) at all. */
static bool have_thread(const struct dc_ptq *q);
static int d_offset(struct dc_ptq *q, uint64_t *off);

/* A packet decoder over the window's first len bytes (NULL: no memory). */
static struct pt_packet_decoder *win_packets(const struct dc_ptq *q, size_t len)
{
	struct pt_config pc = q->cfg.pt;

	pc.size = sizeof(pc);
	pc.begin = (uint8_t *)q->win;
	pc.end = (uint8_t *)q->win + len;
	return pt_pkt_alloc_decoder(&pc);
}

static uint64_t pgd_switch_out(struct dc_ptq *q, uint64_t t, uint64_t hi, uint64_t *bound,
			       bool *none)
{
	struct pt_packet_decoder *pd;
	struct pt_packet pkt;
	uint64_t sw, off;
	unsigned mtcs = 0;
	bool ok = false;
	int r;

	*bound = 0;
	*none = false;
	if (!q->ops.switch_out || !have_thread(q))
		return 0;
	sw = q->ops.switch_out(q->ctx, q, q->tid, t, hi, none);
	if (sw <= t)
		return 0;
	*bound = sw;
	/* (sw == t + 1: nothing to spread, the PGD is at t; an event
	 * pending: the decoder read on past the PGD) */
	if (sw == t + 1 || !q->wopen || (q->status & pts_event_pending) ||
	    d_offset(q, &off) < 0 || off > q->win_len)
		return 0;
	pd = win_packets(q, q->win_len);
	if (!pd)
		return 0;
	if ((r = pt_pkt_sync_set(pd, off)) >= 0) {
		while ((r = pt_pkt_next(pd, &pkt, sizeof(pkt))) >= 0) {
			if (pkt.type == ppt_tip_pge || pkt.type == ppt_ovf || pkt.type == ppt_fup)
				break;
			if (pkt.type == ppt_mtc && ++mtcs == 2) {
				ok = true;
				break;
			}
			if (pkt.type == ppt_tsc) {
				ok = dc_pt_tsc_to_ns(&q->cfg.conv, pkt.payload.tsc.tsc) >= sw;
				break;
			}
		}
		if (r == -pte_eos && !q->stop_off && q->next_chunk >= q->nchunks && !q->carry_len)
			ok = true;
	}
	pt_pkt_free_decoder(pd);
	return ok ? sw : 0;
}

/* The PGD's time: at, within [t, hi); the piece's events come no later. */
static uint64_t pgd_cap(struct piece *p, uint64_t at, uint64_t t, uint64_t hi)
{
	at = at < t ? t : at > hi - 1 ? hi - 1 : at;
	p->cap = at;
	return at;
}

/* Instruction x retired at a time read as t, and tracing stopped there (a
 * PGD, a FUP): bound it and return the earliest time the piece's bounds
 * allow it, which no event of the piece passes; or, where the thread's
 * switch-out follows (pgd_switch_out), the time of the piece's line at
 * the rate known, else spread up to that switch-out; or, where the
 * sideband has no switch on the CPU within the period, the time of the
 * piece's line at the rate known, if there is one. (Not later than it
 * was otherwise: the sideband's switch-out often follows within the MTC
 * period, and a PGD after it would leave the thread's stack on the next
 * one.) */
static uint64_t piece_event(struct dc_ptq *q, uint64_t x, uint64_t t)
{
	struct piece *p = &q->pc;
	double lo = 0, xi;
	uint64_t bound = 0, at, per = mtc_period_ns(q);
	bool none = false;
	uint64_t sw = per ? pgd_switch_out(q, t, t + per, &bound, &none) : 0;
	double T, c, cm, cw;

	piece_later(q, t);
	piece_commit(q);
	if (sw) {
		/* the thread's switch-out follows and nothing ran on the CPU
		 * in between: the PGD came before it, and the code up to
		 * the PGD gets its times at the rate known (else spread up
		 * to it), within its bounds */
		piece_add(q, x, t, sw);
		p->late = true;
		return pgd_cap(p, piece_time(q, x), t, sw);
	}
	piece_add(q, x, t, bound ? bound : per ? t + per : 0);
	p->mid = none;
	if (none && piece_line(q, &T, &c, &cm, &cw)) {
		/* nothing else ran on the CPU in the period: the short piece
		 * before a syscall or an interrupt keeps the rate known, not
		 * squeezed to the period's start */
		return pgd_cap(p, piece_at(p, T, c, x), t, t + per);
	}
	xi = (double)x - (double)p->x0;
	for (int i = 0; i < p->nv; i++) {
		double v = p->T[i] + xi * p->c[i];

		if (!i || v < lo)
			lo = v;
	}
	at = piece_at(p, lo, 0, p->x0);
	if (at < t)
		at = t;
	if (piece_time(q, x) < at)
		at = piece_time(q, x);
	if (bound && at > bound - 1)
		at = bound - 1;
	p->cap = at;
	return at;
}

/* On a coarse clock: an event at instruction x whose time comes with the
 * piece around it (a TIP.PGE's, a sync's: the first instruction). */
static int push_at(struct dc_ptq *q, uint8_t kind, uint8_t reason, uint64_t to, uint64_t x)
{
	struct qev *e = fifo_add(q);

	if (!e)
		return -ENOMEM;
	e->ev.kind = kind;
	e->ev.reason = reason;
	e->ev.to_ip = to;
	e->icount = x;
	return 0;
}

/* The decoder's current time in ns (never going back). The conversion
 * is done once per distinct TSC (most blocks bring no new time). */
static int d_time(struct dc_ptq *q, uint64_t *tsc);

static __attribute__((noinline)) uint64_t now_ns_moved(struct dc_ptq *q, uint64_t tsc)
{
	uint64_t ns = dc_pt_tsc_to_ns(&q->cfg.conv, tsc);

	q->last_tsc = tsc;
	if (ns > q->last_ns)
		q->last_ns = ns;
	return q->last_ns;
}

/* The decoder's time in ns, never going back. (Inline: it is asked before
 * every block, and the time moves at one block in four.) */
static inline uint64_t now_ns(struct dc_ptq *q)
{
	uint64_t tsc;

	if (q->wopen && d_time(q, &tsc) >= 0 && tsc && tsc != q->last_tsc)
		return now_ns_moved(q, tsc);
	return q->last_ns;
}

static uint64_t event_ns(struct dc_ptq *q, const struct pt_event *ev)
{
	if (ev->has_tsc) {
		uint64_t ns = dc_pt_tsc_to_ns(&q->cfg.conv, ev->tsc);

		if (ns > q->last_ns)
			q->last_ns = ns;
		return q->last_ns;
	}
	return now_ns(q);
}

/* Are a and b in one function (of the current process)? */
static bool same_function(struct dc_ptq *q, uint64_t a, uint64_t b)
{
	uint64_t lo, hi, ka, kb;

	/* (a's key is looked up again even when a is in the cached range:
	 * symbols may overlap, so an address in a range need not have its
	 * key) */
	if (a >= q->cur_lo && a < q->cur_hi && b >= q->cur_lo && b < q->cur_hi)
		return true;
	ka = q->ops.func_range(q->ctx, q->pid, q->gen, a, &lo, &hi);
	if (b >= lo && b < hi) {
		q->cur_lo = lo;
		q->cur_hi = hi;
		return true;
	}
	kb = q->ops.func_range(q->ctx, q->pid, q->gen, b, &q->cur_lo, &q->cur_hi);
	return ka == kb;
}

/* A legacy prefix (operand/address size, rep, segment) or REX byte. */
static bool insn_prefix(uint8_t c)
{
	return c == 0x66 || c == 0x67 || c == 0xf2 || c == 0xf3 || c == 0x2e || c == 0x3e ||
	       c == 0x26 || c == 0x36 || c == 0x64 || c == 0x65 || (c >= 0x40 && c <= 0x4f);
}

/* Length of the near call in b[0, n) (e8 rel32 or ff /2), 0 if unknown. */
static unsigned call_len_of(const uint8_t *b, int n)
{
	int i = 0;
	unsigned mod, rm, len;

	while (i < n && insn_prefix(b[i]))
		i++;
	if (i >= n)
		return 0;
	if (b[i] == 0xe8)
		return (unsigned)i + 5;
	if (b[i] != 0xff || i + 1 >= n)
		return 0;
	mod = b[i + 1] >> 6;
	rm = b[i + 1] & 7;
	len = (unsigned)i + 2;
	if (mod != 3 && rm == 4) {          /* SIB */
		if (i + 2 >= n)
			return 0;
		if (mod == 0 && (b[i + 2] & 7) == 5)
			len += 4;
		len++;
	}
	if (mod == 1)
		len += 1;
	else if (mod == 2 || (mod == 0 && rm == 5))
		len += 4;
	return len;
}

/* Is the branch in b[0, n) indirect (its first opcode byte 0xff, within
 * the first 8 bytes)? */
static bool indirect_of(const uint8_t *b, int n)
{
	for (int i = 0; i < n && i < 8; i++)
		if (!insn_prefix(b[i]))
			return b[i] == 0xff;
	return false;
}

/* What the branch instruction at ip of section isid is: its call length
 * and whether it is indirect, read once per distinct (isid, ip) and kept
 * in a small direct-mapped cache (a section's bytes never change), so the
 * hot path does not go through the section cache's lock for every call. */
static __attribute__((noinline)) const struct code_ent *code_fill(struct dc_ptq *q,
								   struct code_ent *e, int isid,
								   uint64_t ip);

/* (the hit inline, the read out of line: a call or jump block asks once
 * or twice) */
static inline const struct code_ent *code_at(struct dc_ptq *q, int isid, uint64_t ip)
{
	struct code_ent *e = &q->code[(ip ^ (ip >> 12) ^ (uint64_t)isid * 0x9e37u) &
				      (CODE_CACHE - 1)];

	return e->isid == isid && e->ip == ip ? e : code_fill(q, e, isid, ip);
}

static const struct code_ent *code_fill(struct dc_ptq *q, struct code_ent *e, int isid,
					uint64_t ip)
{
	uint8_t b[15];
	int n = 0;

	if (q->cfg.iscache && isid > 0)
		n = pt_iscache_read(q->cfg.iscache, b, sizeof(b), isid, ip);
	e->ip = ip;
	e->isid = isid;
	e->call_len = (uint8_t)call_len_of(b, n);
	e->indirect = indirect_of(b, n);
	e->len = 0;
	e->iclass = n > 0 ? (uint8_t)dc_walk_iclass(b, (size_t)n, &e->len) : ptic_error;
	return e;
}

/* Length of the near call at the pending branch, 0 if unknown. */
static unsigned call_len(struct dc_ptq *q, const struct pending *p)
{
	if (!q->cfg.iscache || p->isid <= 0)
		return 0;
	return code_at(q, p->isid, p->end_ip)->call_len;
}

/* The address after the pending branch, 0 if unknown. */
static uint64_t fall_through(struct dc_ptq *q, const struct pending *p)
{
	unsigned len;

	if (!q->cfg.iscache || p->isid <= 0)
		return 0;
	len = code_at(q, p->isid, p->end_ip)->len;
	return len ? p->end_ip + len : 0;
}

/* Where the pending branch went, when the code or the calls seen tell
 * without a next block: a return goes after its call, a direct call or
 * jump to its displacement's target. 0 if unknown. */
static uint64_t pend_target(const struct dc_ptq *q)
{
	const struct pending *p = &q->pend;
	uint8_t b[5];
	int32_t rel;
	int n;

	if (!p->valid)
		return 0;
	if (p->iclass == ptic_return)
		return q->nrets ? q->rets[q->rtop] : 0;
	if ((p->iclass != ptic_call && p->iclass != ptic_jump) || !q->cfg.iscache ||
	    p->isid <= 0)
		return 0;
	n = pt_iscache_read(q->cfg.iscache, b, sizeof(b), p->isid, p->end_ip);
	if (n >= 2 && b[0] == 0xeb)
		return p->end_ip + 2 + (uint64_t)(int64_t)(int8_t)b[1];
	if (n != sizeof(b) || (b[0] != 0xe8 && b[0] != 0xe9))
		return 0;
	memcpy(&rel, b + 1, sizeof(rel));
	return p->end_ip + 5 + (uint64_t)(int64_t)rel;
}

static uint32_t syscall_nr(const struct dc_ptq *q, const struct pending *p);

/* A far transfer decoded whole (a kernel image, user+kernel tracing):
 * user -> kernel is a TRACE_OFF (syscall, or FAULT for a far jump) with
 * the kernel entry as to_ip, kernel -> user (sysret, iret) a TRACE_ON;
 * inside the kernel a far call nests like a call, a far return (iret)
 * returns. Its time comes by instruction count, as a branch's. */
static int far_branch(struct dc_ptq *q, const struct pending *p, uint64_t to)
{
	bool kf = dc_ip_is_kernel(p->end_ip), kt = dc_ip_is_kernel(to);
	struct qev *e;
	int ret;

	if (!to || (!kf && !kt))
		return 0;
	if (kf && kt) {
		if (p->iclass == ptic_far_jump)
			return 0;
		return push_branch(q, p->iclass == ptic_far_call ? DC_EV_CALL : DC_EV_RETURN,
				   p->end_ip, to, p->icount);
	}
	if (!kf) {
		if ((ret = push_branch(q, DC_EV_TRACE_OFF, p->end_ip, to, p->icount)))
			return ret;
		e = &q->fifo[q->fhead + q->fn - 1];
		e->ev.reason = p->iclass == ptic_far_jump ? DC_OFF_FAULT : DC_OFF_SYSCALL;
		q->off_async = e->ev.reason == DC_OFF_FAULT;
		q->off_sys = e->ev.reason == DC_OFF_SYSCALL;
		e->ev.sysno = e->ev.reason == DC_OFF_SYSCALL ? syscall_nr(q, p) : 0;
		return 0;
	}
	if ((ret = push_branch(q, DC_EV_TRACE_ON, 0, to, p->icount)))
		return ret;
	q->fifo[q->fhead + q->fn - 1].ev.reason = DC_ON_RESUME;
	return 0;
}

/* The far transfer a block without its class (ptic_error: libipt's block
 * cache) ends with, from its bytes: syscall, sysenter, int n -> far call;
 * iret, sysret, sysexit -> far return. Bytes not at hand, a branch between user and
 * kernel code is one all the same (no near branch crosses). Else
 * ptic_error. */
static enum pt_insn_class far_class(const struct dc_ptq *q, const struct pending *p,
				    uint64_t to)
{
	uint8_t b[4];
	int n = 0, i = 0;

	if (q->cfg.iscache && p->isid > 0)
		n = pt_iscache_read(q->cfg.iscache, b, sizeof(b), p->isid, p->end_ip);
	while (i < n && insn_prefix(b[i]))
		i++;
	if (i < n && (b[i] == 0xcf || b[i] == 0xcd))
		return b[i] == 0xcf ? ptic_far_return : ptic_far_call;
	if (i + 1 < n && b[i] == 0x0f && (b[i + 1] == 0x05 || b[i + 1] == 0x34))
		return ptic_far_call;
	if (i + 1 < n && b[i] == 0x0f && (b[i + 1] == 0x07 || b[i + 1] == 0x35))
		return ptic_far_return;
	if (!n && dc_ip_is_kernel(p->end_ip) != dc_ip_is_kernel(to))
		return dc_ip_is_kernel(p->end_ip) ? ptic_far_return : ptic_far_call;
	return ptic_error;
}

/* How far below the top the first return address in [lo, hi) is, or -1
 * (none, or an address not known comes first: nothing known past it). */
static int rets_find(const struct dc_ptq *q, uint64_t lo, uint64_t hi)
{
	for (unsigned i = 0; i < q->nrets; i++) {
		uint64_t a = q->rets[(q->rtop + RETS_MAX - i) % RETS_MAX];

		if (!a)
			break;
		if (a >= lo && a < hi)
			return (int)i;
	}
	return -1;
}

/* The top n return addresses go. */
static void rets_drop(struct dc_ptq *q, unsigned n)
{
	q->nrets -= n;
	q->rtop = (q->rtop + RETS_MAX - n % RETS_MAX) % RETS_MAX;
}

/* A return went to `to` (0: unknown). To the top return address, or one
 * not known: that call's. To one further down: the frames above it were
 * left unseen (longjmp, an unwinder), their calls' addresses go too; kept,
 * a stale one became the target of a return at an OVF (emu_longjmp: main's
 * return to __libc_start_call_main taken for one into deepest, a call path
 * the program never had). To none of them: only the top goes, as for a
 * retpoline's return to the branch target (its call's address was the
 * top; the thunk's caller's, below it, is still to come) or a stack
 * switch's. */
static void rets_pop(struct dc_ptq *q, uint64_t to)
{
	int i = to ? rets_find(q, to, to + 1) : -1;

	if (q->nrets)
		rets_drop(q, i > 0 ? (unsigned)i + 1 : 1);
}

/* An indirect jump into the middle of another function (same_function
 * left that function's range in cur_lo/cur_hi): a longjmp, an exception's
 * landing pad, a coroutine switch. The frames above that function's were
 * left unseen: the return addresses of their calls go, and that of its own
 * last call (in its range: it runs on instead). None in its range (or an
 * address not known first): none is known any more. Kept, a stale one
 * became the target of a return at an OVF (emu_longjmp: try_it returning
 * into siglongjmp, after __longjmp's jump back into try_it). */
static void rets_jump(struct dc_ptq *q, const struct pending *p, uint64_t to)
{
	const struct code_ent *c;
	int i;

	if (!q->nrets || to <= q->cur_lo || to >= q->cur_hi)   /* an entry, or out of range */
		return;
	c = code_at(q, p->isid, p->end_ip);
	if (c->iclass != ptic_jump || !c->indirect)
		return;
	i = rets_find(q, q->cur_lo, q->cur_hi);
	rets_drop(q, i >= 0 ? (unsigned)i + 1 : q->nrets);
}

/* The last block's branch went to `to`. (The pending branch is read in
 * place, field by field: a copy of the whole struct, in wide loads right
 * after on_block's narrow stores to it, stalled on store forwarding; in
 * place, 1-2 % less time at -j 1.) */
static int resolve(struct dc_ptq *q, uint64_t to)
{
	struct pending *p = &q->pend;

	if (!p->valid)
		return 0;
	p->valid = false;
	switch (p->iclass) {
	case ptic_call: {
		unsigned len = call_len(q, p);

		q->rtop = (q->rtop + 1) % RETS_MAX;
		q->rets[q->rtop] = len ? p->end_ip + len : 0;
		if (q->nrets < RETS_MAX)
			q->nrets++;
		return push_branch(q, DC_EV_CALL, p->end_ip, to, p->icount);
	}
	case ptic_return:
		rets_pop(q, to);
		return push_branch(q, DC_EV_RETURN, p->end_ip, to, p->icount);
	case ptic_far_call:
	case ptic_far_return:
	case ptic_far_jump:
		return far_branch(q, p, to);
	case ptic_error:
		/* (only kernel code: a user-only trace's far branches end
		 * in TIP.PGD, never here; the class found stays in the
		 * spent pending branch) */
		if ((dc_ip_is_kernel(p->end_ip) || dc_ip_is_kernel(to)) &&
		    (p->iclass = far_class(q, p, to)) != ptic_error)
			return far_branch(q, p, to);
		/* fall through */
	default:
		/* (a block that ends at a plain instruction goes on at the
		 * next one, whatever function that is in: libipt ends a block
		 * there when its block cache knew the next address, which
		 * depends on what it decoded before; our decoder does not) */
		if (!to || p->iclass == ptic_other || same_function(q, p->end_ip, to))
			return 0;
		/* nor at a conditional branch not taken, that falls through
		 * into the next function or into bytes no symbol covers
		 * (glibc's __memmove_chk: a jb to __chk_fail, then padding,
		 * then __memmove); taken, into another function, it is a
		 * jump like jmp's (a tail call, a function's .cold part) */
		if (p->iclass == ptic_cond_jump && fall_through(q, p) == to)
			return 0;
		rets_jump(q, p, to);
		return push_branch(q, DC_EV_JUMP, p->end_ip, to, p->icount);
	}
}

/* resolve, with its most common case first and inline (it runs for every
 * block): a conditional branch that stayed in the function looked up
 * last, or a plain instruction, makes no event. */
static inline int resolve_block(struct dc_ptq *q, uint64_t to)
{
	struct pending *p = &q->pend;

	if (p->valid && (p->iclass == ptic_other ||
			 (p->iclass == ptic_cond_jump && to && p->end_ip >= q->cur_lo &&
			  p->end_ip < q->cur_hi && to >= q->cur_lo && to < q->cur_hi))) {
		p->valid = false;
		return 0;
	}
	return resolve(q, to);
}

static int lost(struct dc_ptq *q, uint8_t reason, uint64_t from, uint64_t t);

/* ---- windows ------------------------------------------------------------ */

/* Bytes a PSB+ may take (PSB, TSC, TMA, CBR, MODEs, FUP, PIP, VMCS,
 * PSBEND, with room to spare): a stop PSB must have them in its window. */
#define PSB_PLUS_MAX 128

/* Offset of the last PSB in buf at or after min with a whole PSB+ after
 * it in buf, or -1. */
static long last_psb(const uint8_t *buf, size_t len, size_t min)
{
	size_t end;   /* (the last start looked at, plus 2) */

	if (len < PSB_PLUS_MAX || len - PSB_PLUS_MAX < min)
		return -1;
	/* backwards through the 0x82 bytes (memrchr: a byte loop over each
	 * 4 KiB chunk was 1.5 % of a sqlite3 report) */
	for (end = len - PSB_PLUS_MAX + 2; end > min + 1;) {
		const uint8_t *p = memrchr(buf + min + 1, 0x82, end - min - 1);
		size_t i;

		if (!p)
			break;
		i = (size_t)(p - buf) - 1;
		if (buf[i] == 0x02 && !memcmp(buf + i, psb_pattern, sizeof(psb_pattern)))
			return (long)i;
		end = i + 1;
	}
	return -1;
}

/* PSBs in buf (the stream between a sync point and the stop PSB). */
static size_t count_psbs(const uint8_t *buf, size_t len)
{
	size_t n = 0;

	for (const uint8_t *p = buf; len >= sizeof(psb_pattern);) {
		const uint8_t *f = memmem(p, len, psb_pattern, sizeof(psb_pattern));

		if (!f)
			break;
		n++;
		len -= (size_t)(f - p) + sizeof(psb_pattern);
		p = f + sizeof(psb_pattern);
	}
	return n;
}

static int wbuf_reserve(struct dc_ptq *q, size_t need)
{
	uint8_t *n;
	size_t ncap;

	if (need <= q->wcap)
		return 0;
	ncap = q->wcap ? q->wcap : 65536;
	while (ncap < need)
		ncap *= 2;
	n = malloc(ncap + DC_PT_SLACK);   /* (wbuf_seal) */
	if (!n)
		return -ENOMEM;
	/* the carry may live in the old buffer */
	if (q->carry_len)
		memcpy(n, q->carry, q->carry_len);
	if (q->carry && q->wbuf && q->carry >= q->wbuf && q->carry < q->wbuf + q->wcap)
		q->carry = n;
	else if (q->carry_len)
		q->carry = n;
	free(q->wbuf);
	q->wbuf = n;
	q->wcap = ncap;
	return 0;
}

/* A window of len bytes is in wbuf: the zeros after it (DC_PT_SLACK). */
static void wbuf_seal(struct dc_ptq *q, size_t len)
{
	memset(q->wbuf + len, 0, DC_PT_SLACK);
}

/* ---- CYC calibration across a time gap ---------------------------------
 *
 * libipt (2.0.5, pt_tcal_update_mtc) calibrates the cycles-to-TSC ratio
 * (FCR) at each MTC from the CYC payloads since the previous MTC and the
 * CTC distance between the two. When tracing stops for a while (PGD ..
 * gap CYC, TSC, TMA .. PGE) with no MTC in between, the next MTC's
 * calibration spans the gap: the CYC sum holds the whole gap while the CTC
 * distance is taken modulo the 8-bit MTC payload (TSC/TMA do not move
 * libipt's calibration CTC), so the FCR comes out far too small and every
 * CYC until the following MTC adds (almost) nothing: branch, PGD and PGE
 * times stay early by up to an MTC period. The gap CYC's value matters for
 * nothing else (the TSC right after it replaces the time it would give),
 * so in our copy of the window it is rewritten, in place and in its own
 * length, to the cycles that make that calibration give the nominal ratio
 * (nom_freq / CBR, libipt's own pre-MTC value). Mirrors libipt's tcal
 * state: reset at a sync, an OVF and a CBR outside PSB+; an MTC with no
 * cycles since the last one is skipped.
 *
 * When the gap spans nearly a whole number of 8-bit MTC wraps, the CTC
 * distance is so small that the other CYCs alone exceed it and no gap
 * value helps (libipt's FCR would be 0: time stands still for an MTC
 * period). Then the gap's CYC TSC TMA MODE.Exec is rewritten, in the same
 * bytes, to CBR TSC TMA PAD..: a CBR outside PSB+ resets libipt's
 * calibration to the nominal ratio, and the next MTC only starts a new
 * interval. (The MODE.Exec goes: the mode of the TIP.PGE is unchanged.)
 *
 * An OVF forgets the calibration too (libipt 2.0.5 keeps only the time
 * there), and nothing restores it before the second MTC after it: until
 * then every CYC adds nothing, and the branches of up to two MTC periods
 * after each overflow are placed by instruction count between the OVF's
 * TSC and the next MTC (at MTC period 9 and 1000 ns per instruction, 16
 * instructions early; an interrupt's PGE, so placed, went to the thread
 * switched out before). So in a window with CYC, a CBR at the last core
 * ratio is put in after the OVF's timing packets (PAD, CYC, TSC, TMA,
 * MTC), before its FUP or what comes before its TIP.PGE: libipt resets the
 * calibration to the nominal ratio there, as at any CBR, and times the
 * CYCs from there as before the overflow. These 4 bytes do not fit in the
 * packets there, so the window is copied with them (cyc_fix_copy); no
 * offset outside the window refers into it. An OVF followed by a PSB or
 * a CBR needs none.
 *
 * The scan reads every packet of every window of a CYC trace, and nearly
 * all of them are CYCs and packets that only end the newest CYC's claim
 * to be a gap CYC (TNT, TIP, FUP, TMA, ...). So cyc_fix_run steps over
 * runs of those itself, by their first bytes (dc_pkt_cyc, scan_plain: the
 * sizes and payloads dc_pkt_fast gives, and only where dc_pkt_fast reads
 * them), adding up the CYCs and keeping the newest, and stops at anything
 * else: a packet the scan acts on (PSB, PSBEND, CBR, OVF, TSC, MODE,
 * MTC), one it does not know, one cut short. That one goes through
 * dc_pkt_next as before, which reads it or resyncs at the next PSB the way
 * libipt does; after an OVF, until its binding packet, every packet does.
 * The iterator is then moved past the run as if dc_pkt_next had read it
 * (its offset and the last packet's, which a resync starts from).
 * PTFLAME_DECODER=check also runs the scan packet by packet and aborts
 * where the two differ (cyc_fix_check). */

/* (struct ovf_cbr: the CBRs that go in, near the top) */

enum { GAP_MAX = 8 };

struct cyc_fix {
	size_t off[GAP_MAX];       /* the gap CYCs since the last MTC       */
	int size[GAP_MAX];
	uint64_t val[GAP_MAX];
	uint8_t gcbr[GAP_MAX];     /* the core ratio there                  */
	int gexec[GAP_MAX];        /* the MODE.Exec byte before it, or -1   */
	int ngap;
	uint64_t cyc;              /* all CYC payloads since the last MTC   */
	size_t last_cyc;           /* offset+1 of the newest CYC, or 0      */
	int last_size;
	uint64_t last_val;
	uint32_t ctc;              /* CTC of the last calibrating MTC       */
	bool have_mtc, in_psb;
	uint8_t cbr;
	int exec;                  /* payload byte of the last MODE.Exec, -1 */
	const uint8_t *buf;        /* the bytes scanned, len of them        */
	size_t len;
};

static bool cyc_fits(int size, uint64_t v)
{
	unsigned bits = 5 + 7 * (unsigned)(size - 1);

	return size >= 1 && (bits >= 64 || !(v >> bits));
}

/* Rewrite the CYC packet at buf+off (size bytes) to payload v; false if v
 * does not fit in that many bytes. */
static bool cyc_rewrite(uint8_t *buf, size_t off, int size, uint64_t v)
{
	if (!cyc_fits(size, v))
		return false;
	buf[off] = (uint8_t)(((v & 0x1f) << 3) | (size > 1 ? 4 : 0) | 3);
	v >>= 5;
	for (int i = 1; i < size; i++, v >>= 7)
		buf[off + (size_t)i] = (uint8_t)(((v & 0x7f) << 1) | (i + 1 < size));
	return true;
}

/* Gap i is CYC TSC TMA MODE.Exec, the mode unchanged: rewrite it to CBR
 * TSC TMA PAD.. (see above). Only with a nominal ratio, which libipt then
 * takes. buf NULL: only tell whether it could be. */
static bool gap_to_cbr(const struct cyc_fix *f, const struct pt_config *pc, int i,
		       uint8_t *buf)
{
	size_t off = f->off[i], tsc = off + (size_t)f->size[i], tma = tsc + 8, mode = tma + 7;
	const uint8_t *b = f->buf;

	if (!pc->nom_freq || !f->gcbr[i] || f->size[i] < 2 || mode + 2 > f->len ||
	    b[tsc] != 0x19 || b[tma] != 0x02 || b[tma + 1] != 0x73 || b[mode] != 0x99 ||
	    (b[mode + 1] >> 5) || b[mode + 1] != f->gexec[i])
		return false;
	if (buf) {
		memmove(buf + off + 4, buf + tsc, 15);
		buf[off] = 0x02;
		buf[off + 1] = 0x03;
		buf[off + 2] = f->gcbr[i];
		buf[off + 3] = 0;
		memset(buf + off + 19, 0, mode + 2 - (off + 19));
	}
	return true;
}

/* An MTC at CTC ctc: fix the gaps of its calibration interval, if any.
 * buf NULL: only tell whether one would be rewritten. */
static bool cyc_fix_mtc(struct cyc_fix *f, const struct pt_config *pc, uint32_t ctc,
			uint8_t *buf)
{
	uint32_t mask = (1u << (pc->mtc_freq + 8)) - 1, delta;
	uint64_t fc, want, other = f->cyc;
	bool hit = false;

	if (!f->have_mtc) {
		/* the first MTC only starts an interval (libipt drops the
		 * cycles before it) */
		f->ctc = ctc;
		f->cyc = 0;
		f->have_mtc = true;
		f->ngap = 0;
		return false;
	}
	if (!f->cyc) {
		/* no cycles: libipt calibrates at the next MTC, over both
		 * periods (from the same CTC) */
		f->ngap = 0;
		return false;
	}
	delta = (ctc - f->ctc) & mask;
	if (f->ngap && pc->cpuid_0x15_eax && pc->cpuid_0x15_ebx) {
		fc = (uint64_t)delta * pc->cpuid_0x15_ebx / pc->cpuid_0x15_eax;
		want = pc->nom_freq && f->cbr ? fc * f->cbr / pc->nom_freq : fc;
		for (int i = 0; i < f->ngap; i++)
			other -= f->val[i];
		if (want >= other) {
			/* the remainder goes to the gap CYC with the most room
			 * (the others get 0); nothing is changed when it fits
			 * none of them */
			int big = 0;

			for (int i = 1; i < f->ngap; i++)
				if (f->size[i] > f->size[big])
					big = i;
			if (cyc_fits(f->size[big], want - other)) {
				hit = true;
				for (int i = 0; buf && i < f->ngap; i++)
					cyc_rewrite(buf, f->off[i], f->size[i],
						    i == big ? want - other : 0);
			}
		}
		/* any one gap will do: the calibration restarts there */
		for (int i = f->ngap; !hit && i-- > 0;)
			hit = gap_to_cbr(f, pc, i, buf);
	}
	f->ctc = ctc;
	f->cyc = 0;
	f->ngap = 0;
	return hit;
}

static void cyc_fix_reset(struct cyc_fix *f, const uint8_t *buf, size_t len)
{
	memset(f, 0, sizeof(*f));
	f->buf = buf;
	f->len = len;
	f->exec = -1;
}

/* A scan across packets: its state, and for cyc_fix_check the packets it
 * read and all their cycles. */
struct scan {
	const struct pt_config *base;
	const uint8_t *buf;
	size_t len;
	uint8_t *buf_w;
	int *coarse;
	struct ovf_cbr *oc;
	struct cyc_fix f;
	bool any, ovf, cyc;
	uint8_t ovf_cbr;
	uint64_t npkt, cycles;
};

/* One packet k as the scan reads it (libipt's decoder from the window's
 * first PSB): the calibration's state, the gap CYCs, the CBRs after
 * OVFs, the clock. */
static void scan_packet(struct scan *s, const struct dc_pkt *k)
{
	struct cyc_fix *f = &s->f;

	s->npkt++;
	if (s->ovf) {
		/* after an OVF: its binding packet (above) */
		switch (k->type) {
		case ppt_pad:
		case ppt_cyc:
		case ppt_tsc:
		case ppt_tma:
		case ppt_mtc:
			break;
		case ppt_cbr:
		case ppt_psb:
			s->ovf = false;
			break;
		default:
			s->ovf = false;
			if (s->oc && !s->oc->nomem && s->ovf_cbr && s->base->nom_freq) {
				if (DC_VEC_PUSH_ROOM(s->oc->v, s->oc->n, s->oc->cap, 16)) {
					s->oc->nomem = true;
					break;
				}
				s->oc->v[s->oc->n++] = (struct cbr_at){ (size_t)k->off, s->ovf_cbr };
			}
			break;
		}
	}
	switch (k->type) {
	case ppt_psb:
		f->in_psb = true;
		break;
	case ppt_psbend:
		f->in_psb = false;
		break;
	case ppt_cbr:
		/* outside PSB+, a CBR restarts the calibration */
		f->cbr = (uint8_t)k->val;
		if (f->in_psb)
			break;
		/* fall through */
	case ppt_ovf:
		if (k->type == ppt_ovf && !f->in_psb) {
			s->ovf = true;
			s->ovf_cbr = f->cbr;
		}
		f->have_mtc = false;
		f->cyc = 0;
		f->ngap = 0;
		break;
	case ppt_cyc:
		if (s->coarse)
			*s->coarse = 0;
		s->cyc = true;
		f->cyc += k->val;
		s->cycles += k->val;
		f->last_cyc = (size_t)k->off + 1;
		f->last_size = k->size;
		f->last_val = k->val;
		return;
	case ppt_tsc:
		if (f->last_cyc && f->ngap < GAP_MAX) {
			f->off[f->ngap] = f->last_cyc - 1;
			f->size[f->ngap] = f->last_size;
			f->val[f->ngap] = f->last_val;
			f->gcbr[f->ngap] = f->cbr;
			f->gexec[f->ngap] = f->exec;
			f->ngap++;
		}
		break;
	case ppt_mode:
		if (k->val == pt_mol_exec && k->off + 1 < s->len)
			f->exec = s->buf[k->off + 1];
		break;
	case ppt_mtc:
		if (s->coarse && *s->coarse < 0)
			*s->coarse = 1;
		s->any |= cyc_fix_mtc(f, s->base, (uint32_t)k->val << s->base->mtc_freq, s->buf_w);
		break;
	default:
		break;
	}
	if (k->type != ppt_pad)
		f->last_cyc = 0;
}

/* The packet at p (n bytes there) when dc_pkt_fast reads it as one the
 * scan only ends a gap CYC at (TNT-8, TNT-64, TMA, PIP, the IP packets):
 * its size; -1: a PAD (nothing at all); 0: any other, or one dc_pkt_fast
 * does not read (the CYCs are read before: dc_pkt_cyc). */
static inline int scan_plain(const uint8_t *p, size_t n)
{
	static const uint8_t ip_size[8] = { 1, 3, 5, 7, 7, 0, 9, 0 };
	uint8_t b = p[0];

	if (b & 1) {
		/* (b & 3) == 1: TIP 0x0d, TIP.PGE 0x11, TIP.PGD 0x01 and FUP
		 * 0x1d in the low 5 bits, bits 0, 3, 4 and 7 of 0x99 (the
		 * others: TSC, MTC, MODE and nothing read here) */
		uint8_t s = ip_size[b >> 5];

		return (0x99 >> ((b >> 2) & 7)) & 1 && s && n >= s ? s : 0;
	}
	if (b > 0x02)
		return 1;                       /* TNT-8 */
	if (!b)
		return -1;                      /* PAD */
	if (n < 2)
		return 0;
	switch (p[1]) {
	case 0x73:                              /* TMA */
		return n >= 7 && !p[4] && !(p[6] & 0xfe) ? 7 : 0;
	case 0xa3:                              /* TNT-64 */
		return n >= 8 && dc_pkt_le(p + 2, 6) >= 2 ? 8 : 0;
	case 0x43:                              /* PIP */
		return n >= 8 ? 8 : 0;
	default:
		return 0;
	}
}

/* The run of CYCs and plain packets at the iterator, read as scan_packet
 * would read them one by one; the iterator moved past it as dc_pkt_next
 * would have left it (its offset, and the last packet's: a resync starts
 * from there). */
static void scan_run(struct scan *s, struct dc_pkt_it *it)
{
	size_t off = it->off, lim = it->len, last = SIZE_MAX;
	const uint8_t *buf = s->buf;
	struct cyc_fix *f = &s->f;
	/* (in locals: the packet bytes, read through a uint8_t pointer, may
	 * alias anything, and stores to *s would be reloaded each packet) */
	uint64_t cyc = f->cyc, cycles = 0, npkt = 0, last_val = f->last_val;
	size_t last_cyc = f->last_cyc;
	int last_size = f->last_size;
	bool any_cyc = false;

	while (off < lim) {
		const uint8_t *p = buf + off;
		int n;

		if ((p[0] & 3) == 3) {
			uint64_t v;

			if ((n = dc_pkt_cyc(p, lim - off, &v)) <= 0)
				break;
			any_cyc = true;
			cyc += v;
			cycles += v;
			last_cyc = off + 1;
			last_size = n;
			last_val = v;
		} else if ((n = scan_plain(p, lim - off)) > 0) {
			last_cyc = 0;
		} else if (n < 0) {
			n = 1;                  /* PAD */
		} else {
			break;
		}
		last = off;
		npkt++;
		off += (size_t)n;
	}
	if (last == SIZE_MAX)
		return;
	it->prev = last;
	it->off = off;
	f->cyc = cyc;
	f->last_cyc = last_cyc;
	f->last_size = last_size;
	f->last_val = last_val;
	s->cycles += cycles;
	s->npkt += npkt;
	if (any_cyc) {
		if (s->coarse)
			*s->coarse = 0;
		s->cyc = true;
	}
}

/* Scan buf[0, len) (see above), the plain packets in runs (fast) or every
 * packet through dc_pkt_next (the reference, for cyc_fix_check); end:
 * where it ended. */
static inline __attribute__((always_inline)) bool
cyc_fix_run(const struct pt_config *base, const uint8_t *buf, size_t len, uint8_t *buf_w,
	    int *coarse, struct ovf_cbr *oc, bool fast, struct scan *end)
{
	struct scan s = { .base = base, .buf = buf, .len = len, .buf_w = buf_w,
			  .coarse = coarse, .oc = oc };
	struct dc_pkt_it it;
	struct dc_pkt k;
	int ret;

	cyc_fix_reset(&s.f, buf, len);
	if (oc)
		oc->n = 0;
	if (dc_pkt_it_init(&it, base, buf, len))
		return false;
	for (;;) {
		if (fast && !s.ovf && !it.done)
			scan_run(&s, &it);
		if ((ret = dc_pkt_next(&it, &k)) < 0)
			break;
		if (!ret) {
			/* libipt's decoder resyncs there: fresh state */
			cyc_fix_reset(&s.f, buf, len);
			s.ovf = false;
			continue;
		}
		scan_packet(&s, &k);
	}
	dc_pkt_it_fini(&it);
	if (end)
		*end = s;
	if (oc && !s.cyc)
		oc->n = 0;     /* (no CYC: no calibration to restore) */
	return s.any || (oc && oc->n);
}

/* PTFLAME_DECODER=check (tests): the scan in runs and packet by packet, on
 * copies where the scan rewrites, give the same answer, coarse clock,
 * CBRs and bytes, having read as many packets and cycles and ended in
 * the same state; else a line and abort. */
static __attribute__((noinline)) bool cyc_fix_check(const struct pt_config *base,
						     const uint8_t *buf, size_t len,
						     uint8_t *buf_w, int *coarse,
						     struct ovf_cbr *oc)
{
	struct ovf_cbr roc = { 0 };
	struct scan re, ge;
	int rcoarse = coarse ? *coarse : 0;
	uint8_t *rw = NULL;
	bool r, got;
	const char *what = NULL;

	if (oc)
		roc.nomem = oc->nomem;
	if (buf_w) {
		rw = dc_pt_alloc(len);
		if (!rw) {
			fprintf(stderr, "ptflame: PTFLAME_DECODER=check: no memory\n");
			abort();
		}
		memcpy(rw, buf_w, len);
		if (buf == buf_w)      /* (what libipt may read after it) */
			memcpy(rw + len, buf + len, DC_PT_SLACK);
	}
	r = cyc_fix_run(base, buf == buf_w && rw ? rw : buf, len, rw, coarse ? &rcoarse : NULL,
			oc ? &roc : NULL, false, &re);
	got = cyc_fix_run(base, buf, len, buf_w, coarse, oc, true, &ge);
	if (r != got)
		what = "answer";
	else if (re.npkt != ge.npkt || re.cycles != ge.cycles)
		what = "packets read";
	else if (re.ovf != ge.ovf || re.f.cyc != ge.f.cyc || re.f.last_cyc != ge.f.last_cyc ||
		 re.f.ngap != ge.f.ngap || re.f.ctc != ge.f.ctc ||
		 re.f.have_mtc != ge.f.have_mtc || re.f.in_psb != ge.f.in_psb ||
		 re.f.cbr != ge.f.cbr || re.f.exec != ge.f.exec)
		what = "state at the end";
	else if (coarse && rcoarse != *coarse)
		what = "clock";
	else if (oc && (roc.n != oc->n || roc.nomem != oc->nomem ||
			(roc.n && memcmp(roc.v, oc->v, roc.n * sizeof(*roc.v)))))
		what = "CBRs after OVFs";
	else if (buf_w && memcmp(rw, buf_w, len))
		what = "rewritten bytes";
	free(roc.v);
	free(rw);
	if (what) {
		fprintf(stderr, "ptflame: PTFLAME_DECODER=check: the CYC scan of a window "
			"(%zu bytes) differs from the reference scan: %s\n", len, what);
		abort();
	}
	return got;
}

/* Scan buf[0, len) as libipt's decoder will (from its first PSB); with
 * buf_w, rewrite the gap CYCs there (same bytes as buf). Returns whether
 * anything is (or would be) rewritten. check: also run the reference
 * scan and compare (PTFLAME_DECODER=check). */
static bool cyc_fix_scan(const struct pt_config *base, const uint8_t *buf, size_t len,
			 uint8_t *buf_w, int *coarse, struct ovf_cbr *oc, bool check)
{
	if (check)
		return cyc_fix_check(base, buf, len, buf_w, coarse, oc);
	return cyc_fix_run(base, buf, len, buf_w, coarse, oc, true, NULL);
}

/* The window buf[0, len) with the CBRs of oc put in (all before *stop,
 * or before len when *stop is 0): a new buffer (dc_pt_alloc), *len and
 * *stop moved; NULL: no memory. */
static uint8_t *cyc_fix_copy(const uint8_t *buf, size_t *len, size_t *stop,
			     const struct ovf_cbr *oc)
{
	uint8_t *n = dc_pt_alloc(*len + 4 * oc->n), *w = n;
	size_t from = 0;

	if (!n)
		return NULL;
	for (size_t i = 0; i < oc->n; i++) {
		memcpy(w, buf + from, oc->v[i].at - from);
		w += oc->v[i].at - from;
		from = oc->v[i].at;
		*w++ = 0x02;
		*w++ = 0x03;
		*w++ = oc->v[i].ratio;
		*w++ = 0;
	}
	memcpy(w, buf + from, *len - from);
	*len += 4 * oc->n;
	if (*stop)
		*stop += 4 * oc->n;
	return n;
}

/* Is there an MTC packet in buf (before lim)? */
static bool has_mtc(const struct pt_config *base, const uint8_t *buf, size_t lim)
{
	struct dc_pkt_it it;
	struct dc_pkt k;
	bool found = false;
	int ret;

	if (dc_pkt_it_init(&it, base, buf, lim))
		return false;
	while (!found && (ret = dc_pkt_next(&it, &k)) >= 0)
		found = ret && k.type == ppt_mtc;
	dc_pkt_it_fini(&it);
	return found;
}

/* A window's clock: 1 MTC without CYC (coarse), 0 CYC, -1 neither; *fix:
 * its CYC needs fixing (cyc_fix_scan). A recording whose config has no
 * CYC needs no fix, and only the first MTC is looked for. */
static int window_clock(const struct pt_config *pc, const uint8_t *buf, size_t lim,
			bool no_cyc, bool *fix, struct ovf_cbr *oc, bool check)
{
	int coarse = -1;

	oc->n = 0;
	if (no_cyc) {
		*fix = false;
		return has_mtc(pc, buf, lim) ? 1 : -1;
	}
	*fix = cyc_fix_scan(pc, buf, lim, NULL, &coarse, oc, check);
	return coarse;
}

/* The queue's clock from a window's (window_clock). A window without
 * either keeps the last one's clock; once a CYC was seen, the clock is
 * fine: a window of a CYC trace that happens to hold none, say one cut
 * short by an overflow, is no coarse one. */
static void set_clock(struct dc_ptq *q, int coarse)
{
	/* A window with neither, recorded with MTC and without CYC: coarse
	 * all the same. A CPU whose every stint follows an idle of more MTC
	 * periods than MTCs are sent for has TSCs only, and a TIP.PGE with no
	 * timing packet since the last TSC ran up to a period after it, as
	 * on a coarse clock: anchored there, a stint switched in later in that
	 * period was given to the thread before it. */
	if (coarse < 0 && q->cfg.no_cyc && q->cfg.mtc)
		coarse = 1;
	if (coarse == 0)
		q->saw_cyc = true;
	if (coarse >= 0 && !q->saw_cyc && q->coarse != (coarse == 1)) {
		anchor(q, q->icount, q->a_t);
		q->coarse = coarse == 1;
	} else if (q->saw_cyc && q->coarse) {
		anchor(q, q->icount, q->a_t);
		q->coarse = false;
	}
}

/* Apply the fix to the window (copying it first when it is a chunk). */
static int fix_window_cyc(struct dc_ptq *q, size_t len)
{
	size_t lim = q->stop_off ? q->stop_off : len;
	bool fix, check = q->cfg.decoder == DC_WDEC_CHECK;

	set_clock(q, window_clock(&q->cfg.pt, q->win, lim, q->cfg.no_cyc, &fix, &q->oc, check));
	if (q->oc.nomem)
		return -ENOMEM;
	if (!fix)
		return 0;
	if (q->oc.n) {
		/* (the carry was copied out of the last one: open_window) */
		uint8_t *n = cyc_fix_copy(q->win, &len, &q->stop_off, &q->oc);

		if (!n)
			return -ENOMEM;
		free(q->obuf);
		q->obuf = n;
		q->win = n;
		q->win_len = len;
		lim = q->stop_off ? q->stop_off : len;
		cyc_fix_scan(&q->cfg.pt, q->win, lim, n, NULL, NULL, check);
		return 0;
	}
	if (q->win != q->wbuf) {
		int ret = wbuf_reserve(q, len);

		if (ret)
			return ret;
		memcpy(q->wbuf, q->win, len);
		wbuf_seal(q, len);
		q->win = q->wbuf;
	}
	cyc_fix_scan(&q->cfg.pt, q->win, lim, q->wbuf, NULL, NULL, check);
	return 0;
}

/* Which chunks the window from chunk `first` takes (after *len bytes of
 * carry): up to one whose data has a PSB after offset 0 (when more
 * contiguous data follows) or to a loss. Returns the chunk after the
 * last; *len: the window's bytes, *stop: its stop PSB (0: none). */
static size_t window_span(const struct dc_ptq_chunk *chunks, size_t nchunks, size_t first,
			  size_t *len, size_t *stop)
{
	size_t last = first;

	*stop = 0;
	while (last < nchunks) {
		const struct dc_ptq_chunk *c = &chunks[last];

		if (*len && c->lost_before)
			break;
		*len += c->size;
		last++;
		if (last < nchunks && !chunks[last].lost_before) {
			/* Stop at the chunk's last PSB if it lies past the
			 * window's start (a PSB straddling two chunks is not
			 * seen: the window just grows to a later one). */
			size_t base = *len - c->size;
			long p = last_psb(c->data, c->size, base ? 0 : 1);

			if (p >= 0) {
				*stop = base + (size_t)p;
				break;
			}
		}
	}
	return last;
}

static int ahead_open(struct dc_ptq *q);

/* The walker's code for image (NULL: none, libipt decodes). */
static struct dc_wcode *code_of(const struct dc_ptq *q, struct pt_image *image)
{
	return image && q->ops.image_code ? q->ops.image_code(q->ctx, image) : NULL;
}

/* The queue's decoder over buf[0, len), as every window gets one. */
static int open_decoder(struct dc_ptq *q, const uint8_t *buf, size_t len, struct pt_image *image)
{
	return dc_wdec_open(&q->dec, q->wmode, &q->cfg.pt, buf, len, image, code_of(q, image),
			    &q->wst);
}

/* Build the next window and a decoder over it. 1 opened, 0 no more data. */
static int open_window(struct dc_ptq *q)
{
	size_t first = q->next_chunk, last = first, len = q->carry_len;
	int ret;

	if ((q->ah || q->cfg.ahead) && (ret = ahead_open(q)) != 2)
		return ret;
	if (first >= q->nchunks && !q->carry_len) {
		drop_chunks(q, q->nchunks);
		return 0;
	}
	last = window_span(q->chunks, q->nchunks, first, &len, &q->stop_off);
	if (!len)
		return 0;
	if (!q->carry_len && last == first + 1) {
		q->win = q->chunks[first].data;      /* zero-copy */
	} else {
		size_t off;

		if ((ret = wbuf_reserve(q, len)))
			return ret;
		if (q->carry_len && q->carry != q->wbuf)
			memmove(q->wbuf, q->carry, q->carry_len);
		off = q->carry_len;
		for (size_t i = first; i < last; i++) {
			memcpy(q->wbuf + off, q->chunks[i].data, q->chunks[i].size);
			off += q->chunks[i].size;
		}
		wbuf_seal(q, len);
		q->win = q->wbuf;
	}
	/* the carry and these chunks are in wbuf now; a zero-copy window
	 * still needs its chunk */
	drop_chunks(q, q->win == q->wbuf ? last : first);
	for (size_t i = first; i < last; i++)
		q->st.bytes += q->chunks[i].size;
	q->win_len = len;
	q->next_chunk = last;
	q->carry = NULL;
	q->carry_len = 0;
	q->st.windows++;
	if ((ret = fix_window_cyc(q, len)))
		return ret;
	len = q->win_len;        /* (CBRs put in after OVFs: cyc_fix_copy) */
	if (q->rp_buf && q->win != q->rp_buf) {
		/* (a replayed window's carry was copied above) */
		free(q->rp_buf);
		q->rp_buf = NULL;
	}
	if (open_decoder(q, q->win, len, q->image))
		return -ENOMEM;
	q->synced = false;
	q->started = true;
	q->wopen = true;
	return 1;
}

/* The window is finished: at its stop PSB (the rest is carried over) or
 * at the end of its data. */
static int end_window(struct dc_ptq *q, bool at_stop)
{
	int ret = 0;

	tent_flush(q);
	q->psb_t = 0;   /* set again by the next window's PSB+ */
	q->cont = at_stop && q->stop_off;
	if (q->cont) {
		q->carry = q->win + q->stop_off;
		q->carry_len = q->win_len - q->stop_off;
	} else {
		q->carry = NULL;
		q->carry_len = 0;
	}
	dc_wdec_close(&q->dec);
	q->wopen = false;
	if (q->rp)
		rp_release(q);
	q->rp = false;
	q->rp_nops = 0;
	q->rp_nexts = 0;
	q->synced = false;
	if (!at_stop && q->next_chunk < q->nchunks) {
		/* the next chunk starts after lost data */
		q->st.lost_truncated++;
		ret = lost(q, DC_LOST_TRUNCATED, 0, q->last_ns);
	}
	return ret;
}

/* ---- ahead: libipt in a worker thread ------------------------------------
 *
 * With dc_ptq_config.ahead, a worker thread builds the queue's coming
 * windows (the same chunks, carry and CYC fix as open_window) and runs the
 * block decoder over them the way step() does when nothing special
 * happens: sync, the pending events, a block, again; resync after an
 * error; the window ends at its stop PSB's MODE.Exec, at the end of its
 * data or when no PSB is left. Each call's result goes into a ring, with
 * the decoder's time and offset after it (a record). The owner's thread
 * runs everything else as before, taking each decoder call's result from
 * the next record (the d_* functions) instead of libipt.
 *
 * The worker cannot know the sideband: it decodes with a snapshot of the
 * image the queue had when it started. When the owner's thread does what
 * the worker did not (a context point brings another image or the image
 * changed, the decoder is rebuilt to resume at a TIP.PGE, a stalled
 * decoder resyncs), the window "goes live": a decoder of its own over the
 * same bytes repeats the calls replayed so far (their results are the
 * same: same bytes, same image) and takes the new image; the worker is
 * stopped and restarted at a later window (after 2, 4, 8.. windows decoded
 * here, as often as that happens). So the events are exactly those of a
 * decoder of the owner's own, whatever the worker did. */

enum { RK_WIN = 1, RK_END, RK_FAIL, RK_SYNC, RK_EVENT, RK_NEXT };
/* Records in the ring; each side publishes its position every AH_BATCH
 * records, and a side that had to wait is woken once, when AH_WAKE records
 * (or free slots) are there for it or when the other side is about to
 * wait itself or ends: a few thousand futex calls per second, not one per
 * batch. A side waits on a futex word of its own (ah_sleep; the worker's
 * thread, one for all its queues, ah_thread_main), which the
 * waker bumps: no lock is shared, so a wake never waits for the sleeper
 * to let go of one. */
enum { AH_BATCH = 64 };
#define AH_WAKE(a) ((a)->nring / 4)

/* Where a window starts: a chunk, after the carry (the bytes from the
 * last window's stop PSB on, in the file's chunk or the owner's copy). */
struct wpos {
	size_t next_chunk;
	const uint8_t *carry;
	size_t carry_len;
};

struct rwin {                      /* a window the worker built           */
	uint8_t *buf;              /* owned: the taker frees it            */
	size_t len, stop_off, next_chunk;
	uint64_t bytes;            /* chunk bytes in it (stats)            */
	int8_t clock;              /* its window_clock                     */
	bool by_owner;             /* ah_prebuild built it                 */
};

/* Windows the owner built ahead of the worker (ah_prebuild). */
enum { AH_PRE = 4 };

struct rrec {                      /* (two cache lines, none shared) */
	uint8_t kind;
	int status;                /* the call's return                    */
	int time_ret, off_ret, soff_ret;
	uint64_t tsc, off, soff;   /* time, offset, sync offset after it   */
	union {
		struct pt_block b;
		struct pt_event ev;
		struct rwin w;
	} u;
} __attribute__((aligned(64)));

struct ah_thread;

struct ahead {
	struct ah_thread *t;       /* the pool's thread that decodes it     */
	struct ahead *tnext;       /* in t's list                           */
	atomic_bool released;      /* t let go of it (cancelled)            */
	/* Each side writes its own cache line: the worker's count and the
	 * owner's count on one shared line moved it between the cores on
	 * every record. */
	alignas(64) _Atomic size_t head; /* records published by the worker */
	_Atomic size_t pwant;      /* wake the waiting worker at this count */
	atomic_bool pwait, cancel;
	_Atomic uint32_t *pseq;    /* the worker's futex word (its thread's) */
	alignas(64) _Atomic size_t tail; /* records the owner has taken     */
	_Atomic size_t cwant;      /* wake the waiting owner at this count */
	atomic_bool cwait;
	_Atomic uint32_t cseq;     /* the waiting owner's futex word       */
	alignas(64) size_t ltail, head_seen; /* owner side                 */
	alignas(64) size_t lhead, tail_seen; /* worker side                */
	/* Building a window (copying its chunks, the CYC scan: a tenth of
	 * the worker's time on a CYC trace when the scan went through
	 * libipt's packet decoder) is shared: the owner, when it
	 * would wait for records, builds the windows that come next
	 * (ah_prebuild), assuming that each window ends at its stop PSB, as
	 * it does unless the decoder fails for good; the worker takes them
	 * in order, and builds one itself (the owner's copy, still in the
	 * making, is then thrown away) when none is ready. Under wmu: */
	pthread_mutex_t wmu;
	struct wpos cur;           /* the next window nobody has claimed   */
	struct rwin pre[AH_PRE];   /* built by the owner, in order,        */
	struct wpos pre_at[AH_PRE]; /* ... starting there                  */
	size_t npre, pre0;
	bool inflight, stolen;     /* the owner builds one / it is taken   */
	struct wpos inflight_at;
	/* the worker's own state */
	const struct dc_ptq_chunk *chunks;
	size_t nchunks;
	size_t next_chunk;         /* where its next window starts, after  */
	const uint8_t *carry;      /* ... the carry: a chunk's tail or carry0 */
	size_t carry_len;
	struct pt_config pt;
	bool no_cyc;
	struct pt_image *image;
	struct dc_wcode *code;     /* image's, for the walker (or NULL)     */
	enum dc_wdec_mode wmode;
	struct dc_wdec_stats wst;  /* (the worker's; the queue's at stop)   */
	struct dc_wdec dec;        /* the worker's, one window at a time    */
	uint8_t *carry0;           /* the owner's carry at the start       */
	/* where the worker is (ah_step goes on from there): between windows
	 * or in window w, as the loop of step() would be */
	bool in_win, synced, at_stop, open_failed, finished;
	int status;
	size_t psb_left;
	struct rwin w;
	size_t nring;              /* records in the ring (a power of two:
	                              dc_ptq_config.ahead_ring)             */
	struct rrec ring[];
};

/* A worker thread of a dc_ptq_pool: it decodes ahead for every queue
 * given to it, a turn of up to a ring's worth of records each, and waits
 * on its futex word when none has room in its ring (each queue's owner
 * wakes it when a quarter is free again) or work. Its list is its own: queues
 * join through `incoming` (under mu) and leave when their owner cancels
 * them, which it acknowledges (ahead.released). */
struct ah_thread {
	pthread_t th;
	pthread_mutex_t mu;
	struct ahead *incoming;    /* (under mu)                            */
	struct ahead *list;        /* the thread's own                      */
	_Atomic unsigned n;        /* queues given to it, not yet let go    */
	_Atomic uint32_t seq;      /* its futex word                        */
	_Atomic uint32_t rel;      /* bumped when it lets go of a queue (the
	                              owners' futex word: the queue's own
	                              memory may be freed at once)          */
	atomic_bool attn;          /* an owner waits: end the turn          */
	atomic_bool quit;
};

struct dc_ptq_pool {
	unsigned n;
	struct ah_thread *t;
};

/* The ring's record for count i. */
static inline struct rrec *ah_rec(struct ahead *a, size_t i)
{
	return &a->ring[i & (a->nring - 1)];
}

static void ah_wake(_Atomic uint32_t *seq)
{
	atomic_fetch_add(seq, 1);
	syscall(SYS_futex, seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}


static void ah_publish(struct ahead *a, bool force)
{
	atomic_store(&a->head, a->lhead);
	/* one wake per wait: the first to see it takes the flag */
	if (atomic_load(&a->cwait) && (force || a->lhead >= atomic_load(&a->cwant)) &&
	    atomic_exchange(&a->cwait, false))
		ah_wake(&a->cseq);
}

static bool ah_has_room(struct ahead *a)
{
	a->tail_seen = atomic_load(&a->tail);
	return a->lhead - a->tail_seen < a->nring;
}
static bool ah_has_records(struct ahead *a)
{
	a->head_seen = atomic_load(&a->head);
	return a->head_seen != a->ltail;
}

/* The owner sleeps until the worker has records for it (checked after
 * cwait is up, so a wake between the check and the sleep is not lost:
 * the word has moved and the futex call returns at once). The worker's
 * thread sleeps on its own word (ah_thread_main). */
static void ah_sleep(struct ahead *a)
{
	for (;;) {
		uint32_t v = atomic_load(&a->cseq);

		atomic_store(&a->cwait, true);
		if (ah_has_records(a))
			break;
		syscall(SYS_futex, &a->cseq, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
	}
	atomic_store(&a->cwait, false);
}

/* The next free record; NULL when the ring is full (the worker turns to
 * its other queues) or the queue cancelled. */
static struct rrec *ah_slot(struct ahead *a)
{
	if (atomic_load_explicit(&a->cancel, memory_order_relaxed))
		return NULL;
	if (a->lhead - a->tail_seen >= a->nring) {
		a->tail_seen = atomic_load(&a->tail);
		if (a->lhead - a->tail_seen >= a->nring)
			return NULL;
	}
	return ah_rec(a, a->lhead);
}

static void ah_commit(struct ahead *a, bool now)
{
	a->lhead++;
	if (now || a->lhead % AH_BATCH == 0)
		ah_publish(a, now);
}

/* The decoder's state after a call. */
static void ah_state(struct dc_wdec *dec, struct rrec *r)
{
	r->tsc = r->off = 0;
	r->time_ret = dc_wdec_time(dec, &r->tsc);
	r->off_ret = dc_wdec_offset(dec, &r->off);
}

/* The carry after a window that ends at its stop PSB, carry_len bytes
 * before the end of its last chunk (window_span puts the stop there; the
 * CYC fix, up to the stop, leaves that tail as it is). */
static const uint8_t *chunk_tail(const struct ahead *a, size_t last, size_t carry_len)
{
	return carry_len ? a->chunks[last - 1].data + a->chunks[last - 1].size - carry_len : NULL;
}

/* Throw away the windows the owner built (under wmu, or once alone). */
static void pre_drop(struct ahead *a)
{
	for (; a->npre; a->npre--, a->pre0 = (a->pre0 + 1) % AH_PRE)
		free(a->pre[a->pre0].buf);
}

/* The window at p, as open_window builds it, into w: 0, 1 no more data,
 * -ENOMEM. p moves to the next window's start, as if this one ended at
 * its stop PSB. Touches only the chunks and p: either side may run it. */
static int build_window(const struct ahead *a, struct wpos *p, struct rwin *w)
{
	size_t first = p->next_chunk, len = p->carry_len, stop, last;
	uint64_t bytes = 0;
	uint8_t *buf;

	if (first >= a->nchunks && !p->carry_len)
		return 1;
	last = window_span(a->chunks, a->nchunks, first, &len, &stop);
	if (!len)
		return 1;
	buf = dc_pt_alloc(len);
	if (!buf)
		return -ENOMEM;
	*w = (struct rwin){ .buf = buf, .len = len, .stop_off = stop, .next_chunk = last };
	if (p->carry_len)
		memcpy(buf, p->carry, p->carry_len);
	len = p->carry_len;
	for (size_t i = first; i < last; i++) {
		memcpy(buf + len, a->chunks[i].data, a->chunks[i].size);
		len += a->chunks[i].size;
		bytes += a->chunks[i].size;
	}
	w->bytes = bytes;
	{
		size_t lim = stop ? stop : len;
		struct ovf_cbr oc = { 0 };
		bool fix;

		w->clock = (int8_t)window_clock(&a->pt, buf, lim, a->no_cyc, &fix, &oc,
						 a->wmode == DC_WDEC_CHECK);
		if (oc.n) {
			uint8_t *n = cyc_fix_copy(buf, &len, &stop, &oc);

			free(buf);
			w->buf = buf = n;
			w->len = len;
			w->stop_off = stop;
			lim = stop ? stop : len;
		}
		free(oc.v);
		if (!buf || oc.nomem) {
			free(buf);
			return -ENOMEM;
		}
		if (fix)
			cyc_fix_scan(&a->pt, buf, lim, buf, NULL, NULL, a->wmode == DC_WDEC_CHECK);
	}
	p->next_chunk = last;
	p->carry_len = stop ? w->len - stop : 0;
	p->carry = chunk_tail(a, last, p->carry_len);
	return 0;
}

static bool wpos_eq(const struct wpos *x, const struct wpos *y)
{
	return x->next_chunk == y->next_chunk && x->carry == y->carry &&
	       x->carry_len == y->carry_len;
}

/* The owner, instead of waiting: build the next window nobody claimed.
 * False when there is nothing to do. */
static bool ah_prebuild(struct ahead *a)
{
	struct wpos at;
	struct rwin w;
	int ret;

	pthread_mutex_lock(&a->wmu);
	if (a->npre == AH_PRE || a->inflight ||
	    (a->cur.next_chunk >= a->nchunks && !a->cur.carry_len)) {
		pthread_mutex_unlock(&a->wmu);
		return false;
	}
	a->inflight = true;
	a->stolen = false;
	at = a->inflight_at = a->cur;
	pthread_mutex_unlock(&a->wmu);
	ret = build_window(a, &at, &w);
	pthread_mutex_lock(&a->wmu);
	a->inflight = false;
	if (ret == 0 && !a->stolen) {
		w.by_owner = true;
		a->pre_at[(a->pre0 + a->npre) % AH_PRE] = a->inflight_at;
		a->pre[(a->pre0 + a->npre++) % AH_PRE] = w;
		a->cur = at;
	} else if (ret == 0) {
		free(w.buf);
	}
	pthread_mutex_unlock(&a->wmu);
	return ret == 0;
}

/* The worker's next window, into r (RK_WIN, RK_END or RK_FAIL). */
static void ah_window(struct ahead *a, struct rrec *r)
{
	struct wpos me = { a->next_chunk, a->carry, a->carry_len }, at;
	int ret;

	pthread_mutex_lock(&a->wmu);
	if (!wpos_eq(&me, a->npre ? &a->pre_at[a->pre0] : a->inflight ? &a->inflight_at : &a->cur)) {
		/* the last window did not end at its stop PSB */
		pre_drop(a);
		if (a->inflight)   /* (once taken, it stays taken) */
			a->stolen = true;
		a->inflight = false;
		a->cur = me;
	}
	if (a->npre) {
		r->u.w = a->pre[a->pre0];
		a->pre0 = (a->pre0 + 1) % AH_PRE;
		a->npre--;
		pthread_mutex_unlock(&a->wmu);
		r->kind = RK_WIN;
		a->next_chunk = r->u.w.next_chunk;
		return;
	}
	if (a->inflight) {
		/* the owner's is not done: ours instead */
		a->stolen = true;
		a->inflight = false;
		at = a->inflight_at;
	} else {
		at = a->cur;
	}
	ret = build_window(a, &at, &r->u.w);
	if (ret == 0)
		a->cur = at;
	pthread_mutex_unlock(&a->wmu);
	r->kind = ret == 0 ? RK_WIN : ret > 0 ? RK_END : RK_FAIL;
	if (ret == 0)
		a->next_chunk = r->u.w.next_chunk;
}

/* The worker is done with its window. */
static void ah_end_window(struct ahead *a)
{
	const struct rwin *w = &a->w;

	dc_wdec_close(&a->dec);
	a->in_win = false;
	/* (as build_window has it) */
	a->carry_len = a->at_stop && w->stop_off ? w->len - w->stop_off : 0;
	a->carry = chunk_tail(a, w->next_chunk, a->carry_len);
}

/* The worker's next record for a, going on where the last one left it:
 * the next window (RK_WIN, or its last record: RK_END, RK_FAIL), or in
 * its window the next call step() makes when nothing special happens
 * (sync; pending events; a block; resync after an error; the window ends
 * at its stop PSB's MODE.Exec, at the end of its data or when no PSB is
 * left). 1: a record written; 0: none now (its ring is full, or it is
 * cancelled); -1: its last record is written. */
static int ah_step(struct ahead *a)
{
	const struct rwin *w = &a->w;
	bool psb_end = false;
	struct rrec *r;
	int st;

	if (a->finished)
		return -1;
	if (!(r = ah_slot(a)))
		return 0;
	if (a->open_failed) {
		r->kind = RK_FAIL;
		ah_commit(a, true);
		a->finished = true;
		return -1;
	}
	if (!a->in_win) {
		uint8_t kind;

		ah_window(a, r);
		kind = r->kind;
		a->w = r->u.w;
		ah_commit(a, kind != RK_WIN); /* a window: with the next batch */
		if (kind != RK_WIN) {
			a->finished = true;
			return -1;
		}
		a->in_win = true;
		a->synced = a->at_stop = false;
		a->psb_left = 0;
		a->status = 0;
		a->open_failed = dc_wdec_open(&a->dec, a->wmode, &a->pt, w->buf, w->len, a->image,
					      a->code, &a->wst) != 0;
		return 1;
	}
	if (!a->synced) {
		uint64_t soff = 0;

		r->kind = RK_SYNC;
		st = r->status = dc_wdec_sync_forward(&a->dec);
		r->soff_ret = dc_wdec_sync_offset(&a->dec, &r->soff);
		soff = r->soff;
		ah_state(&a->dec, r);
		if (st >= 0 && w->stop_off && r->soff_ret >= 0 && soff < w->stop_off)
			a->psb_left = count_psbs(w->buf + soff, w->stop_off - soff);
		ah_commit(a, false);
		if (st < 0) {
			ah_end_window(a);
			return 1;
		}
		a->status = st;
		a->synced = true;
		if (w->stop_off && soff >= w->stop_off) {
			a->at_stop = true;
			ah_end_window(a);
		}
		return 1;
	}
	if (a->status & pts_event_pending) {
		r->kind = RK_EVENT;
		st = r->status = dc_wdec_event(&a->dec, &r->u.ev);
		psb_end = st >= 0 && r->u.ev.type == ptev_exec_mode && r->u.ev.status_update &&
			  w->stop_off && a->psb_left-- == 0;
		ah_state(&a->dec, r);
		ah_commit(a, false);
	} else {
		r->kind = RK_NEXT;
		memset(&r->u.b, 0, sizeof(r->u.b));
		st = r->status = dc_wdec_next(&a->dec, &r->u.b);
		ah_state(&a->dec, r);
		ah_commit(a, false);
	}
	if (st < 0) {
		if (st == -pte_eos) {
			a->at_stop = w->stop_off != 0;
			ah_end_window(a);
		} else {
			a->synced = false;
		}
		return 1;
	}
	a->status = st;
	if (psb_end) {
		a->at_stop = true;
		ah_end_window(a);
	}
	return 1;
}

/* The thread lets go of a cancelled queue: its owner may free it now. */
static void ah_release(struct ah_thread *t, struct ahead *a)
{
	/* (every record out, so the owner frees the windows in them) */
	atomic_store(&a->head, a->lhead);
	atomic_fetch_sub(&t->n, 1);
	atomic_store(&a->released, true);   /* a is the owner's from here */
	ah_wake(&t->rel);
}

/* One queue's turn: up to a ring's worth of records, fewer when an owner
 * waits for another of the thread's queues (or stops one). True if any. */
static bool ah_turn(struct ah_thread *t, struct ahead *a)
{
	size_t n = 0;

	/* (another queue's owner waits: end the turn; this one's own is
	 * woken when a quarter of the ring is there, not at every batch) */
	while (n < a->nring && ah_step(a) > 0)
		if (++n % AH_BATCH == 0 && atomic_load_explicit(&t->attn, memory_order_relaxed) &&
		    !atomic_load_explicit(&a->cwait, memory_order_relaxed))
			break;
	if (n)
		ah_publish(a, true);
	return n > 0;
}

/* A turn for each of the thread's queues; true if any made a record. */
static bool ah_turns(struct ah_thread *t)
{
	struct ahead *a, **pp;
	bool busy = false;

	pthread_mutex_lock(&t->mu);
	while ((a = t->incoming)) {
		t->incoming = a->tnext;
		a->tnext = t->list;
		t->list = a;
	}
	pthread_mutex_unlock(&t->mu);
	/* the cancelled let go, and first a turn for a queue whose owner
	 * waits for it (asleep in ah_peek) */
	atomic_store(&t->attn, false);
	for (pp = &t->list; (a = *pp);) {
		if (atomic_load(&a->cancel)) {
			*pp = a->tnext;
			ah_release(t, a);
			continue;
		}
		if (atomic_load(&a->cwait))
			busy |= ah_turn(t, a);
		pp = &a->tnext;
	}
	for (a = t->list; a && !atomic_load(&t->attn); a = a->tnext)
		busy |= ah_turn(t, a);
	return busy;
}

/* Could the thread do something now? If not, each queue with a full
 * ring is told to wake it when a quarter is free (checked again after
 * telling, so a wake in between is not lost). */
static bool ah_ready(struct ah_thread *t)
{
	bool ready = false;

	for (struct ahead *a = t->list; a && !ready; a = a->tnext) {
		if (atomic_load(&a->cancel))
			return true;
		if (a->finished)
			continue;
		atomic_store(&a->pwant, a->lhead - a->nring + AH_WAKE(a));
		atomic_store(&a->pwait, true);
		ready = ah_has_room(a);
	}
	pthread_mutex_lock(&t->mu);
	ready |= t->incoming != NULL;
	pthread_mutex_unlock(&t->mu);
	return ready || atomic_load(&t->quit);
}

static void *ah_thread_main(void *arg)
{
	struct ah_thread *t = arg;

	pthread_setname_np(pthread_self(), "ptflame-decode"); /* for top -H, perf */
	while (!atomic_load(&t->quit)) {
		uint32_t v = atomic_load(&t->seq);

		if (!ah_turns(t) && !ah_ready(t))
			syscall(SYS_futex, &t->seq, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
	}
	return NULL;
}

struct dc_ptq_pool *dc_ptq_pool_new(unsigned threads)
{
	struct dc_ptq_pool *p = calloc(1, sizeof(*p));

	if (!p || !threads || !(p->t = calloc(threads, sizeof(*p->t)))) {
		free(p);
		return NULL;
	}
	for (; p->n < threads; p->n++) {
		struct ah_thread *t = &p->t[p->n];

		pthread_mutex_init(&t->mu, NULL);
		if (pthread_create(&t->th, NULL, ah_thread_main, t)) {
			pthread_mutex_destroy(&t->mu);
			break;
		}
	}
	if (!p->n) {
		free(p->t);
		free(p);
		return NULL;
	}
	return p;
}

void dc_ptq_pool_free(struct dc_ptq_pool *p)
{
	if (!p)
		return;
	for (unsigned i = 0; i < p->n; i++) {
		atomic_store(&p->t[i].quit, true);
		ah_wake(&p->t[i].seq);
		pthread_join(p->t[i].th, NULL);
		pthread_mutex_destroy(&p->t[i].mu);
	}
	free(p->t);
	free(p);
}

/* The pool's thread with the fewest queues gets a. */
static void ah_give(struct dc_ptq_pool *p, struct ahead *a)
{
	struct ah_thread *t = &p->t[0];

	for (unsigned i = 1; i < p->n; i++)
		if (atomic_load(&p->t[i].n) < atomic_load(&t->n))
			t = &p->t[i];
	a->t = t;
	a->pseq = &t->seq;
	atomic_fetch_add(&t->n, 1);
	pthread_mutex_lock(&t->mu);
	a->tnext = t->incoming;
	t->incoming = a;
	pthread_mutex_unlock(&t->mu);
	ah_wake(&t->seq);
}

/* ah_peek when the records seen are all taken: look again, else wait. */
static __attribute__((noinline)) void ah_peek_wait(struct ahead *a)
{
	a->head_seen = atomic_load(&a->head);
	while (a->ltail == a->head_seen && ah_prebuild(a))
		a->head_seen = atomic_load(&a->head);
	if (a->ltail == a->head_seen) {
		atomic_store(&a->tail, a->ltail);
		atomic_store(&a->cwant, a->ltail + AH_WAKE(a));
		/* (the thread may be in another queue's turn: this one next) */
		atomic_store(&a->t->attn, true);
		if (atomic_exchange(&a->pwait, false))
			ah_wake(a->pseq);
		ah_sleep(a);
	}
}

/* The owner's next record (waiting for it). Inlined: runs for every
 * block, and the call cost more than the check. */
static inline struct rrec *ah_peek(struct ahead *a)
{
	if (a->ltail == a->head_seen)
		ah_peek_wait(a);
	return ah_rec(a, a->ltail);
}

/* Every AH_BATCH records: the owner's count out, the worker woken if it
 * waits for room. */
static __attribute__((noinline)) void ah_pop_batch(struct ahead *a)
{
	atomic_store(&a->tail, a->ltail);
	if (atomic_load(&a->pwait) && a->ltail >= atomic_load(&a->pwant) &&
	    atomic_exchange(&a->pwait, false))
		ah_wake(a->pseq);
}

/* The owner is done with its record. (Inline: it runs for every block.) */
static inline void ah_pop(struct ahead *a)
{
	a->ltail++;
	if (a->ltail % AH_BATCH == 0)
		ah_pop_batch(a);
}

/* The record held (rp_cur) goes back to the worker. */
static inline void rp_release(struct dc_ptq *q)
{
	if (q->rp_cur) {
		q->rp_cur = NULL;
		ah_pop(q->ah);
	}
}

/* Stop the worker (if any) and free what it made and nobody took. */
static void ahead_stop(struct dc_ptq *q)
{
	struct ahead *a = q->ah;
	size_t head;

	if (!a)
		return;
	rp_release(q);
	atomic_store(&a->cancel, true);
	atomic_store(&a->t->attn, true);
	ah_wake(a->pseq);
	for (;;) {
		uint32_t v = atomic_load(&a->t->rel);

		if (atomic_load(&a->released))
			break;
		syscall(SYS_futex, &a->t->rel, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
	}
	head = atomic_load(&a->head);
	for (size_t i = a->ltail; i < head; i++)
		if (ah_rec(a, i)->kind == RK_WIN)
			free(ah_rec(a, i)->u.w.buf);
	pre_drop(a);
	q->wst.walked += a->wst.walked;
	q->wst.bailed += a->wst.bailed;
	dc_wdec_close(&a->dec);
	free(a->dec.ops);
	free(a->carry0);
	pthread_mutex_destroy(&a->wmu);
	free(a);
	q->ah = NULL;
	q->rp = false;
}

/* Start a worker at the queue's next window (its chunk and carry). */
static int ahead_start(struct dc_ptq *q)
{
	struct ahead *a;
	size_t nring;

	if ((!q->image && !q->cfg.ahead_eager) || !q->ops.image_snapshot)
		return -EINVAL;
	/* (a power of two, and room for a few batches) */
	nring = q->cfg.ahead_ring;
	if (nring < 4 * AH_BATCH || (nring & (nring - 1)))
		nring = DC_PTQ_RING_DEFAULT;
	/* (a multiple of the alignment: the records are; the ring's pages
	 * are touched as the worker writes them) */
	a = aligned_alloc(alignof(struct ahead), sizeof(*a) + nring * sizeof(a->ring[0]));
	if (!a)
		return -ENOMEM;
	memset(a, 0, sizeof(*a));
	a->nring = nring;
	a->image = q->image ? q->ops.image_snapshot(q->ctx, q->image) : NULL;
	a->code = code_of(q, a->image);
	a->wmode = q->wmode;
	if ((q->image && !a->image) || (q->carry_len && !(a->carry0 = malloc(q->carry_len)))) {
		free(a);
		return -ENOMEM;
	}
	if (q->carry_len)
		memcpy(a->carry0, q->carry, q->carry_len);
	a->carry = a->carry0;
	a->carry_len = q->carry_len;
	a->cur = (struct wpos){ q->next_chunk, a->carry, a->carry_len };
	pthread_mutex_init(&a->wmu, NULL);
	a->chunks = q->chunks;
	a->nchunks = q->nchunks;
	a->next_chunk = q->next_chunk;
	a->pt = q->cfg.pt;
	a->no_cyc = q->cfg.no_cyc;
	if (!q->cfg.pool && !q->own_pool && !(q->own_pool = dc_ptq_pool_new(1))) {
		pthread_mutex_destroy(&a->wmu);
		free(a->carry0);
		free(a);
		return -EAGAIN;
	}
	ah_give(q->cfg.pool ? q->cfg.pool : q->own_pool, a);
	q->ah = a;
	q->rp_img = a->image;
	q->rp_src = q->image;
	q->rp_ver = q->image && q->ops.image_version ? q->ops.image_version(q->ctx, q->image) : 0;
	return 0;
}

/* The worker had to stop: the next 2, 4, .. 1024 windows are decoded
 * here before it starts again (eager: none). */
static void ahead_backoff(struct dc_ptq *q)
{
	q->ah_devs++;
	q->ah_wait = q->cfg.ahead_eager ? 0 : (uint64_t)1 << (q->ah_devs < 10 ? q->ah_devs : 10);
}

/* open_window's start with decoding ahead: 1 a replayed window is open, 0
 * no more data, 2 open one here (no worker), < 0 fatal. */
static int ahead_open(struct dc_ptq *q)
{
	struct rrec *r;

	if (q->ah && (q->image != q->rp_src ||
		      (q->image && q->ops.image_version &&
		       q->ops.image_version(q->ctx, q->image) != q->rp_ver))) {
		/* decoded with an image that is no more */
		ahead_stop(q);
		ahead_backoff(q);
	}
	if (!q->ah) {
		if (q->ah_wait) {
			q->ah_wait--;
			return 2;
		}
		if (!q->image && !q->cfg.ahead_eager)
			return 2;          /* no context yet: no image to copy */
		if (ahead_start(q) < 0) {
			q->ah_wait = UINT64_MAX;   /* no worker for this queue */
			return 2;
		}
		/* the carry went to the worker */
		q->carry = NULL;
		q->carry_len = 0;
	}
	if (q->cfg.ahead_eager)
		ah_prebuild(q->ah);
	r = ah_peek(q->ah);
	if (r->kind == RK_END) {
		ah_pop(q->ah);
		ahead_stop(q);
		q->ah_wait = UINT64_MAX;
		q->next_chunk = q->nchunks;
		drop_chunks(q, q->nchunks);
		return 0;
	}
	if (r->kind != RK_WIN) {
		/* the worker ran out of memory: fatal, as it is here */
		ah_pop(q->ah);
		ahead_stop(q);
		q->ah_wait = UINT64_MAX;
		return -ENOMEM;
	}
	free(q->rp_buf);
	set_clock(q, r->u.w.clock);
	q->rp_buf = r->u.w.buf;
	q->win = q->rp_buf;
	q->win_len = r->u.w.len;
	q->stop_off = r->u.w.stop_off;
	q->next_chunk = r->u.w.next_chunk;
	q->st.bytes += r->u.w.bytes;
	q->ah_prebuilt += r->u.w.by_owner;   /* (before the slot goes back) */
	ah_pop(q->ah);
	drop_chunks(q, q->next_chunk);
	q->carry = NULL;
	q->carry_len = 0;
	q->st.windows++;
	q->ah_windows++;
	q->rp = true;
	q->rp_stale = false;
	q->rp_nops = 0;
	q->rp_nexts = 0;
	q->rp_cur = NULL;
	q->rp_soff_ret = -pte_internal;
	q->synced = false;
	q->started = true;
	q->wopen = true;
	return 1;
}

/* The replay cannot go on: a decoder of our own at the same point. */
static int rp_go_live(struct dc_ptq *q)
{
	q->rp = false;
	q->rp_stale = false;
	ahead_stop(q);
	ahead_backoff(q);
	if (open_decoder(q, q->win, q->win_len, q->rp_img))
		return q->fatal = -ENOMEM;
	for (size_t i = 0; i <= q->rp_nops; i++) {
		uint64_t op = i < q->rp_nops ? q->rp_ops[i] : q->rp_nexts << 8;
		struct pt_block b;
		struct pt_event ev;

		for (uint64_t n = op >> 8; n; n--)
			dc_wdec_next(&q->dec, &b);
		if ((uint8_t)op == RK_SYNC)
			dc_wdec_sync_forward(&q->dec);
		else if ((uint8_t)op == RK_EVENT)
			dc_wdec_event(&q->dec, &ev);
	}
	q->rp_nops = 0;
	q->rp_nexts = 0;
	if ((q->image || q->rp_img) && dc_wdec_set_image(&q->dec, q->image, code_of(q, q->image)))
		return q->fatal = -ENOMEM;
	return 0;
}

/* The next record if it is of this kind and the replay can go on. */
static inline struct rrec *rp_take(struct dc_ptq *q, uint8_t kind)
{
	struct rrec *r;

	if (q->rp_stale)
		return NULL;
	rp_release(q);
	r = ah_peek(q->ah);
	if (r->kind != kind)
		return NULL;
	if (kind == RK_NEXT) {
		q->rp_nexts++;
	} else {
		if (DC_VEC_PUSH_ROOM(q->rp_ops, q->rp_nops, q->rp_capops, 4096))
			return NULL;
		q->rp_ops[q->rp_nops++] = q->rp_nexts << 8 | kind;
		q->rp_nexts = 0;
	}
	q->rp_cur = r;
	return r;
}

/* The decoder calls of step() and its helpers: replayed or libipt's.
 * Replaying, d_replay gives the record of the call when it is the next one,
 * held until the next call is replayed (d_time and d_offset read the
 * state after the call from it). NULL: the call goes to libipt (*err
 * -pte_nomem when going live failed, else 0). Inlined: d_next runs for
 * every block. */
static inline __attribute__((always_inline)) struct rrec *d_replay(struct dc_ptq *q, uint8_t kind,
								    int *err)
{
	struct rrec *r;

	*err = 0;
	if (!q->rp)
		return NULL;
	if ((r = rp_take(q, kind)))
		return r;
	if (rp_go_live(q))
		*err = -pte_nomem;
	return NULL;
}

static int d_sync(struct dc_ptq *q)
{
	int err;
	struct rrec *r = d_replay(q, RK_SYNC, &err);

	if (!r)
		return err ? err : dc_wdec_sync_forward(&q->dec);
	q->rp_soff_ret = r->soff_ret;
	q->rp_soff = r->soff;
	return r->status;
}

static int d_event(struct dc_ptq *q, struct pt_event *ev)
{
	int err;
	struct rrec *r = d_replay(q, RK_EVENT, &err);

	if (!r)
		return err ? err : dc_wdec_event(&q->dec, ev);
	*ev = r->u.ev;
	return r->status;
}

static int d_next(struct dc_ptq *q, struct pt_block *b)
{
	int err;
	struct rrec *r = d_replay(q, RK_NEXT, &err);

	if (!r) {
		memset(b, 0, sizeof(*b));   /* (a replayed one comes whole) */
		return err ? err : dc_wdec_next(&q->dec, b);
	}
	*b = r->u.b;
	return r->status;
}

static int d_time(struct dc_ptq *q, uint64_t *tsc)
{
	if (q->rp) {
		if (!q->rp_cur)
			return -pte_internal;
		*tsc = q->rp_cur->tsc;
		return q->rp_cur->time_ret;
	}
	return dc_wdec_time(&q->dec, tsc);
}

static int d_offset(struct dc_ptq *q, uint64_t *off)
{
	if (q->rp) {
		if (!q->rp_cur)
			return -pte_internal;
		*off = q->rp_cur->off;
		return q->rp_cur->off_ret;
	}
	return dc_wdec_offset(&q->dec, off);
}

static int d_sync_offset(struct dc_ptq *q, uint64_t *off)
{
	if (q->rp) {
		*off = q->rp_soff;
		return q->rp_soff_ret;
	}
	return dc_wdec_sync_offset(&q->dec, off);
}

int dc_ptq_image_changing(struct dc_ptq *q, struct pt_image *image)
{
	/* our decoder hands a window over to libipt by repeating its calls
	 * on the same image: do it while the image still holds the code
	 * those calls read */
	if (dc_wdec_is_open(&q->dec) && q->dec.image == image && dc_wdec_hand_over(&q->dec))
		return q->fatal = -ENOMEM;
	return 0;
}

void dc_ptq_image_changed(struct dc_ptq *q, struct pt_image *image)
{
	/* (the mappings changed: the ranges around the last addresses,
	 * function and inline context, are not kept) */
	q->cur_lo = q->cur_hi = 0;
	q->il_lo = q->il_hi = 0;
	if (image == q->image)
		q->gen = q->ops.image_gen ? q->ops.image_gen(q->ctx, image) : 0;
	if (q->rp && image == q->rp_src)
		q->rp_stale = true;
}

void dc_ptq_ahead_stats(const struct dc_ptq *q, uint64_t *replayed, uint64_t *deviations,
			uint64_t *prebuilt)
{
	*prebuilt = q->ah_prebuilt;
	*replayed = q->ah_windows;
	*deviations = q->ah_devs;
}

/* ---- decoding ----------------------------------------------------------- */

static int set_ctx(struct dc_ptq *q, enum ctx_kind kind, uint64_t ns, uint64_t ip)
{
	anchor(q, q->icount, ns);
	/* (a coarse clock's last piece may end later than this time read
	 * here, the earliest the context can start: the thread on the CPU is
	 * looked up at it) */
	if (!q->coarse)
		ns = q->a_t;
	q->ctx_kind = kind;
	q->ctx_ns = ns;
	q->ctx_ip = ip;
	q->ctx_win = NULL;
	if (kind == CTX_ENABLE && q->coarse && d_offset(q, &q->ctx_off) >= 0)
		q->ctx_win = q->win;
	return 0;
}

/* A thread is on the queue (a context point told which). */
static bool have_thread(const struct dc_ptq *q)
{
	return q->tid && q->tid != UINT32_MAX;
}

/* Data lost after time t (the last time known before the loss). Before
 * the queue's first context point no thread owns the loss: nothing is
 * emitted, the loss is only marked (see lost_from_start). */
static int lost(struct dc_ptq *q, uint8_t reason, uint64_t from, uint64_t t)
{
	int ret = 0;

	q->pend.valid = false;
	q->nrets = 0;
	q->lost = true;
	q->announce = 0;
	q->unk = UNK_NONE;
	q->psb_t = 0;        /* a PSB+ before the loss anchors nothing after */
	if (have_thread(q)) {
		ret = push(q, DC_EV_LOST, reason, from, 0, t);
	} else {
		anchor(q, q->icount, t);
		if (q->a_t > q->last_push)
			q->last_push = q->a_t;
	}
	q->lost_tid = q->tid;
	q->lost_reason = reason;
	q->lost_ns = q->last_push;
	return ret;
}

/* The number a syscall instruction at end_ip was given just before it:
 * "mov $NR,%eax" (b8 imm32, most of glibc) or "mov $NR,%rax" (48 c7 c0
 * imm32, e.g. the rt_sigreturn trampoline __restore_rt). PT carries no
 * register values, so anything else stays unknown: UINT32_MAX. */
static uint32_t syscall_nr(const struct dc_ptq *q, const struct pending *p)
{
	uint8_t b[9];
	uint32_t nr;

	if (!q->cfg.syscall_numbers || !q->cfg.iscache || p->isid <= 0 ||
	    p->end_ip < p->start_ip + 5)
		return UINT32_MAX;
	if (p->end_ip >= p->start_ip + 7 &&
	    pt_iscache_read(q->cfg.iscache, b, sizeof(b), p->isid, p->end_ip - 7) == sizeof(b) &&
	    b[0] == 0x48 && b[1] == 0xc7 && b[2] == 0xc0 && b[7] == 0x0f && b[8] == 0x05)
		memcpy(&nr, b + 3, 4);
	else if (pt_iscache_read(q->cfg.iscache, b, 7, p->isid, p->end_ip - 5) == 7 &&
		 b[0] == 0xb8 && b[5] == 0x0f && b[6] == 0x05)
		memcpy(&nr, b + 1, 4);
	else
		return UINT32_MAX;
	return nr < 4096 ? nr : UINT32_MAX;
}

/* A PSB+ met in flow (psb_t) and the code up to its FUP decoded: the
 * instruction at the FUP, IP, the next one, retired at its TSC, exactly,
 * and every one before it earlier. Done before the next block (on_block),
 * or before an interrupt at that very instruction (no block in between:
 * an emulated thread's stamp, rc_ptenc_stamp, has its PSB+ and its
 * FUP + TIP.PGD at one ip), or the PSB's bound was lost and the last
 * rounds before it were spread up to the PGD. */
static int psb_bound_at(struct dc_ptq *q, uint64_t ip);

/* (the test inline: asked at every block) */
static inline int psb_bound(struct dc_ptq *q, uint64_t ip)
{
	return q->psb_t ? psb_bound_at(q, ip) : 0;
}

static int psb_bound_at(struct dc_ptq *q, uint64_t ip)
{
	uint64_t pt = q->psb_t;
	int ret;

	q->psb_t = 0;
	if ((ret = resolve(q, ip)))
		return ret;
	if (q->coarse) {
		piece_commit(q);
		piece_add(q, q->icount + 1, pt, pt + 1);   /* exact */
	} else if (pt > q->a_t) {
		anchor(q, q->icount + 1, pt);
	}
	return 0;
}

static int on_event(struct dc_ptq *q, const struct pt_event *ev)
{
	uint64_t before, t;
	int ret;

	/* a branch timed at a CBR (cbr_t) gets its tick's time, or else the
	 * CBR's */
	if (q->tent) {
		q->tent = false;
		if (!(ev->type == ptev_tick && ev->has_tsc && q->icount == q->tent_i))
			anchor(q, q->tent_i, q->tent_t);
	}
	before = q->a_t;
	t = event_ns(q, ev);
	if (ev->type == ptev_cbr && !ev->status_update && ev->has_tsc)
		q->cbr_t = t;

	/* A time read ahead (pend_t) was that of the packets behind this
	 * event (a FUP+PGD, a PGE, a tick's TNT/TIP) when it is no later: the
	 * next branch that takes a packet waits for its own time. Kept, it
	 * would give a signal handler's first return the time of the
	 * handler's entry. */
	if (q->pend_t && q->pend_t <= t &&
	    (ev->type == ptev_enabled || ev->type == ptev_disabled ||
	     ev->type == ptev_async_disabled || ev->type == ptev_tick))
		q->pend_t = 0;
	/* A PSB+ in flow: its TSC is the time of the instruction at its FUP,
	 * not of a branch ahead (anchored once the branch before it is out:
	 * on_block). Only its MODE.Exec status update waits for the code up
	 * to the FUP to be decoded; the CBR's comes before. */
	if (ev->status_update && ev->has_tsc)
		q->psb_read = t;
	if (ev->type == ptev_exec_mode && ev->status_update && !ev->ip_suppressed &&
	    ev->has_tsc)
		q->psb_t = t;
	switch (ev->type) {
	case ptev_enabled:
		q->pend.valid = false;
		q->nrets = 0;   /* maybe another thread now: its calls are unseen */
		q->announce = 0;
		q->unk = UNK_NONE;
		q->psb_t = 0;   /* the PGE is the anchor now */
		return set_ctx(q, CTX_ENABLE, t, ev->variant.enabled.ip);
	case ptev_disabled: {
		/* synchronous: the block's last insn went to the kernel */
		uint64_t from = q->pend.valid ? q->pend.end_ip : 0;
		uint32_t nr = q->pend.valid ? syscall_nr(q, &q->pend) : UINT32_MAX;

		q->pend.valid = false;
		if (q->coarse)
			t = piece_event(q, q->icount, t);
		if ((ret = push(q, DC_EV_TRACE_OFF, DC_OFF_SYSCALL, from, 0, t)))
			return ret;
		q->fifo[q->fhead + q->fn - 1].ev.sysno = nr;
		return 0;
	}
	case ptev_async_disabled:
		if (dc_ip_is_kernel(ev->variant.async_disabled.at)) {
			/* disabled in the kernel (a user+kernel trace: the
			 * thread is switched out, the sideband says so) */
			q->pend.valid = false;
			anchor(q, q->icount, t);
			return 0;
		}
		if ((ret = resolve(q, ev->variant.async_disabled.at)) ||
		    (ret = psb_bound(q, ev->variant.async_disabled.at)))
			return ret;
		/* the FUP's instruction did not run: the interrupt came at its
		 * time, one after the last one decoded (the branches before,
		 * say a RET in the same TNT as an earlier JCC, are placed
		 * between that and the last anchor) */
		if (q->coarse)
			t = piece_event(q, q->icount + 1, t);
		anchor(q, q->icount + 1, t);
		return push(q, DC_EV_TRACE_OFF, DC_OFF_FAULT, ev->variant.async_disabled.at, 0, t);
	case ptev_async_branch:
		q->async_from = ev->variant.async_branch.from;
		q->async_ns = t;
		return resolve(q, ev->variant.async_branch.from);
	case ptev_overflow: {
		uint64_t to = pend_target(q);

		q->st.lost_ovf++;
		/* the branch decoded right before the OVF did retire, but no
		 * next block tells where it went (the OVF's FUP is elsewhere) */
		if (to && (ret = resolve(q, to)))
			return ret;
		if ((ret = lost(q, DC_LOST_OVF, 0, before)))
			return ret;
		if (!ev->ip_suppressed)
			return set_ctx(q, CTX_SYNC, t, ev->variant.overflow.ip);
		return 0;
	}
	case ptev_tick:
		/* The branch that just ended the last block took a packet with
		 * a new time: it retired then (exact with CYC). */
		if (!ev->has_tsc)
			return 0;
		t = dc_pt_tsc_to_ns(&q->cfg.conv, ev->tsc);
		if (!q->coarse) {
			anchor(q, q->icount, t);
		} else if (q->pc.pend && q->pc.pend_x == q->icount) {
			/* read at its own packet */
			if (t > q->pc.pend_L)
				q->pc.pend_L = t;
			if (q->pc.pend_U && t + mtc_period_ns(q) > q->pc.pend_U)
				q->pc.pend_U = t + mtc_period_ns(q);
		} else {
			piece_branch(q, q->icount, t,
				     mtc_period_ns(q) ? t + mtc_period_ns(q) : 0);
		}
		return 0;
	case ptev_exec_mode:
		/* Every PSB+ has one MODE.Exec status update; the one of the
		 * window's stop PSB ends the window: the next goes on there.
		 * (Counted: the decoder's offset runs ahead of its events.) */
		if (ev->status_update && q->stop_off && q->psb_left-- == 0)
			return end_window(q, true);
		return 0;
	default:
		return 0;
	}
}

/* Does the block's last instruction take a packet (TNT bit or TIP)? Direct
 * calls and jumps do not: their first opcode byte tells (0xff: indirect). */
static inline bool takes_packet(struct dc_ptq *q, const struct pt_block *b)
{
	/* by class: 1 always, 2 when indirect (a table: as a switch, its
	 * jump was mispredicted as often as the classes of blocks vary) */
	static const uint8_t by_class[] = {
		[ptic_cond_jump] = 1, [ptic_return] = 1, [ptic_error] = 1, [ptic_far_call] = 1,
		[ptic_far_return] = 1, [ptic_far_jump] = 1, [ptic_call] = 2, [ptic_jump] = 2,
	};
	unsigned c = (unsigned)b->iclass < sizeof(by_class) ? by_class[b->iclass] : 0;

	if (c != 2)
		return c;
	if (b->truncated)
		return indirect_of(b->raw, b->size);
	if (q->cfg.iscache && b->isid > 0)
		return code_at(q, b->isid, b->end_ip)->indirect;
	return false;
}

/* Inline context changes in block b, whose first instruction is number
 * icount0 + 1: a DC_EV_INLINE where the context differs from the
 * instruction before. At the block's start, when an event told where the
 * last branch went (evented: the last one queued), that event carries the
 * context instead. A change inside the block is placed by counting the
 * instructions before it; blocks are contiguous code. */
static int inline_block(struct dc_ptq *q, const struct pt_block *b, uint64_t icount0,
			bool evented)
{
	uint64_t ip = b->ip;
	uint8_t code[4096];

	if (q->il_pid != q->pid) {
		q->il_pid = q->pid;
		q->il_lo = q->il_hi = 0;
	}
	if (evented && ip >= q->il_lo && ip < q->il_hi) {
		struct dc_event *last = &q->fifo[q->fhead + q->fn - 1].ev;

		if (last->to_ip == ip)
			last->inl = q->ictx + 1;
	}
	while (ip <= b->end_ip) {
		if (ip < q->il_lo || ip >= q->il_hi) {
			uint32_t c = q->ops.inline_at(q->ctx, q->pid, q->gen, ip, &q->il_lo,
						      &q->il_hi);
			long k = 0;

			if (q->il_hi <= ip) {   /* (no range: this address only) */
				q->il_lo = ip;
				q->il_hi = ip + 1;
			}
			if (evented && ip == b->ip) {
				struct dc_event *last = &q->fifo[q->fhead + q->fn - 1].ev;

				if (last->to_ip == ip)
					last->inl = c + 1;
			}
			if (c != q->ictx && (ip != b->ip || !evented)) {
				if (ip != b->ip) {
					int n = -1;

					if (!q->insns)
						q->insns = dc_insn_counter_new();
					/* (the code is read only when not counted
					 * before: a read takes the iscache's lock) */
					k = dc_insn_count_known(q->insns, b->isid, b->ip, ip);
					if (k == -2 && q->cfg.iscache && b->isid > 0 &&
					    ip - b->ip <= sizeof(code))
						n = pt_iscache_read(q->cfg.iscache, code,
								    (uint64_t)(ip - b->ip), b->isid, b->ip);
					if (k == -2)
						k = n > 0 ? dc_insn_count(q->insns, b->isid, code,
									  (size_t)n, b->ip, ip) : -1;
				}
				/* (code not readable: at the block's start) */
				int ret = push_branch(q, DC_EV_INLINE, 0, ip,
						      icount0 + (uint64_t)(k > 0 ? k : 0));

				if (ret)
					return ret;
				q->st.inline_events++;
			}
			q->ictx = c;
		}
		if (q->il_hi > b->end_ip)
			break;
		ip = q->il_hi;
	}
	return 0;
}

/* t: the decoder's time before the block was decoded: it has read ahead
 * up to the packet that decides the next packet-taking branch, so that
 * branch retired at t (timing packets precede the packet they time). */
static int on_block(struct dc_ptq *q, const struct pt_block *b, uint64_t t)
{
	size_t fn0 = q->fn;
	uint64_t run = b->ip;
	int ret;

	/* a block after one that ended at a plain instruction (libipt's
	 * block cache ends some there) is the same straight run */
	if (q->pend.valid && q->pend.iclass == ptic_other && q->pend.isid == b->isid &&
	    b->ip > q->pend.end_ip && b->ip - q->pend.end_ip <= 15)
		run = q->pend.start_ip;
	else
		q->st.blocks++;   /* (libipt's pieces of one run count once) */
	tent_flush(q);
	if ((ret = psb_bound(q, b->ip)))
		return ret;
	/* (the time of a PSB+ read ahead is its FUP's, not a branch's) */
	if (t > q->a_t && t > q->pend_t && t != q->psb_read)
		q->pend_t = t;
	if (q->announce) {
		uint64_t at = q->announce_ns > q->pend_t ? q->announce_ns : q->pend_t;

		if (q->coarse)
			ret = push_at(q, DC_EV_TRACE_ON, q->announce, b->ip, q->icount + 1);
		else
			ret = push(q, DC_EV_TRACE_ON, q->announce, 0, b->ip, at);
		q->announce = 0;
		if (ret)
			return ret;
	}
	q->unk = UNK_NONE;
	if (q->async_from && dc_ip_is_kernel(b->ip)) {
		/* an interrupt or fault whose kernel code is decoded: out of
		 * user code (a TRACE_OFF with the kernel entry), or nested in
		 * kernel code like a call (its iret returns) */
		if (!dc_ip_is_kernel(q->async_from))
			ret = push(q, DC_EV_TRACE_OFF, DC_OFF_FAULT, q->async_from, b->ip,
				   q->async_ns);
		else
			ret = push_branch(q, DC_EV_CALL, q->async_from, b->ip, q->icount);
		if (ret)
			return ret;
	}
	q->async_from = 0;
	if ((ret = resolve_block(q, b->ip)))
		return ret;
	if (q->ops.inline_at) {
		if (b->ip >= q->il_lo && b->end_ip < q->il_hi && q->il_pid == q->pid) {
			/* one context all through: the event into it has it */
			if (q->fn > fn0 && q->fifo[q->fhead + q->fn - 1].ev.to_ip == b->ip)
				q->fifo[q->fhead + q->fn - 1].ev.inl = q->ictx + 1;
		} else if ((ret = inline_block(q, b, q->icount, q->fn > fn0))) {
			return ret;
		}
	}
	q->icount += b->ninsn;
	q->pend.valid = true;
	q->pend.end_ip = b->end_ip;
	q->pend.iclass = b->iclass;
	q->pend.icount = q->icount;
	q->pend.start_ip = run;
	q->pend.isid = b->isid;
	if (q->coarse) {
		/* every branch with a packet is bounded by the time read at
		 * it (t; a PSB+'s read ahead is after it: then only the next
		 * period bounds it, from above) */
		if (takes_packet(q, b)) {
			uint64_t per = mtc_period_ns(q), U = per ? t + per : 0;

			if (t != q->psb_read)
				piece_branch(q, q->icount, t, U);
			else if (q->pc.n)
				piece_branch(q, q->icount, q->pc.L_last, U);
		}
		q->pend_t = 0;
	} else if (q->pend_t && takes_packet(q, b)) {
		if (q->pend_t == q->cbr_t) {
			q->tent = true;
			q->tent_i = q->icount;
			q->tent_t = q->pend_t;
		} else {
			anchor(q, q->icount, q->pend_t);
		}
		q->pend_t = 0;
	}
	return 0;
}

/* ---- going on after code that cannot be decoded ---------------------------
 *
 * libipt can only start decoding at a PSB. After code it cannot follow (a
 * missing binary, a kernel without image) the next TIP.PGE, where tracing
 * comes back (after each syscall and interrupt of a user-only trace, each
 * switch-in), is a place to go on from as good as a PSB, and out of a
 * missing binary so is a TIP into code that can be decoded (only the
 * stack is not known there, as at the PGE: [lost] up to it): the window is
 * rebuilt from the last PSB with only its timing packets (PSB+, TSC, TMA,
 * CBR, MTC, CYC, MODE.Exec, PIP, VMCS: libipt keeps the exact time, and
 * without the PSB+'s FUP tracing is off), then the TIP.PGE with its full ip
 * (its last-ip base is gone) and the rest of the window as it was. */

/* Does the packet carry only time or state (kept in a rebuilt window)? */
static bool timing_packet(const struct pt_packet *p)
{
	switch (p->type) {
	case ppt_psb:
	case ppt_psbend:
	case ppt_tsc:
	case ppt_tma:
	case ppt_cbr:
	case ppt_mtc:
	case ppt_cyc:
	case ppt_pip:
	case ppt_vmcs:
		return true;
	case ppt_mode:
		return p->payload.mode.leaf == pt_mol_exec;
	default:
		return false;
	}
}

/* Scan the window (pd over it) from where the last scan stopped up to the
 * decoder's position at the context point: true when the last TIP.PGE
 * before it is the context point's (libipt may have read on past that
 * PGE: an MTC, a FUP), then q->ps has the offset after it and the clock
 * there. */
static bool pge_scan(struct dc_ptq *q, struct pt_packet_decoder *pd)
{
	struct pge_scan *s = &q->ps;
	uint64_t gen = q->st.windows + q->st.resumes + 1;
	struct pt_packet pkt;

	if (s->gen != gen) {
		memset(s, 0, sizeof(*s));
		s->gen = gen;
		s->bad = pt_pkt_sync_forward(pd) < 0 || pt_pkt_get_offset(pd, &s->off) < 0;
	}
	/* (a window the scan failed in is not scanned again: each PGE of it
	 * would scan it from its start) */
	if (s->bad || s->off > q->ctx_off || pt_pkt_sync_set(pd, s->off) < 0)
		return false;
	while (s->off < q->ctx_off) {
		if (pt_pkt_next(pd, &pkt, sizeof(pkt)) < 0) {
			s->bad = true;
			return false;
		}
		if (pkt.type == ppt_psb)
			s->last_ip = 0;
		if (pkt.type == ppt_tip || pkt.type == ppt_tip_pge ||
		    pkt.type == ppt_tip_pgd || pkt.type == ppt_fup)
			dc_pt_last_ip(&s->last_ip, &pkt);
		if (pkt.type == ppt_tip_pge && pkt.payload.ip.ipc != pt_ipc_suppressed) {
			s->have_pge = true;
			s->pge_ip = s->last_ip;
			s->pge_clk = s->clk;
			s->pge_end = s->off + pkt.size;
		}
		clk_note(&s->clk, &pkt, q->cfg.pt.mtc_freq);
		s->off += pkt.size;
	}
	return s->off == q->ctx_off && s->have_pge && s->pge_ip == q->ctx_ip;
}

size_t dc_ptq_ctx_next_pges(struct dc_ptq *q, uint64_t *ips, bool *async, size_t max,
			    unsigned *mtcs, uint64_t *next_ns, int *tail_async)
{
	struct pt_packet_decoder *pd;
	struct pt_packet pkt;
	uint64_t last_ip = q->ctx_ip, start = q->ctx_off;
	size_t n = 0;
	bool more = true, pgd = false;   /* PGEs still counted; its PGD seen */
	bool fup = false, pgd_async = false;  /* the last packet a FUP; the last PGD's */
	bool at_pge;

	*mtcs = 0;
	*next_ns = 0;
	*tail_async = -1;
	if (!q->ctx_up || !q->ctx_win || q->ctx_win != q->win || q->ctx_off >= q->win_len)
		return 0;
	pd = win_packets(q, q->win_len);
	if (!pd)
		return 0;
	/* from right after the PGE where it is known: the packets libipt
	 * read past it count too */
	at_pge = pge_scan(q, pd);
	if (at_pge)
		start = q->ps.pge_end;
	if (pt_pkt_sync_set(pd, start) >= 0) {
		while ((more || !pgd) && pt_pkt_next(pd, &pkt, sizeof(pkt)) >= 0) {
			/* (a TSC's time bounds the PGEs before it, as an MTC's:
			 * the one at a switch-in, where TraceEn was set again,
			 * tells that they came before it) */
			if (pkt.type == ppt_tsc && more && at_pge)
				*next_ns = dc_pt_tsc_to_ns(&q->cfg.conv, pkt.payload.tsc.tsc);
			if (pkt.type == ppt_tsc || pkt.type == ppt_psb || pkt.type == ppt_ovf)
				break;
			if (pkt.type == ppt_mtc) {
				uint64_t d = more && at_pge ?
					     clk_to_mtc(&q->ps.pge_clk, &q->cfg.pt, pkt.payload.mtc.ctc) : 0;

				if (d)
					*next_ns = q->ctx_ns + dc_pt_tsc_to_ns(&q->cfg.conv, d) -
						   dc_pt_tsc_to_ns(&q->cfg.conv, 0);
				more = false;
				*mtcs += !pgd;
			}
			if (pkt.type == ppt_tip_pgd) {
				pgd = true;
				pgd_async = fup;
				if (more)
					*tail_async = fup;
			}
			if (pkt.type == ppt_tip || pkt.type == ppt_tip_pge ||
			    pkt.type == ppt_tip_pgd || pkt.type == ppt_fup)
				dc_pt_last_ip(&last_ip, &pkt);
			if (more && pkt.type == ppt_tip_pge && pkt.payload.ip.ipc != pt_ipc_suppressed) {
				async[n] = pgd_async;
				ips[n++] = last_ip;
				*tail_async = -1;
				more = n < max;
				/* (the ones after were not read: none is owed) */
				if (!more)
					*next_ns = q->ctx_ns;
			}
			if (pkt.type != ppt_pad && pkt.type != ppt_mtc && pkt.type != ppt_cyc &&
			    pkt.type != ppt_mode)
				fup = pkt.type == ppt_fup;
		}
	}
	pt_pkt_free_decoder(pd);
	return n;
}

/* (see tip_budget: the scans and copies of TIP resumes in a window, at
 * most this many times its length, plus the floor) */
#define TIP_RESUME_BUDGET 16
#define TIP_RESUME_FLOOR (256u << 10)

/* Can decoding go on at a TIP to ip (user code of a binary found)? */
static bool tip_resumes(struct dc_ptq *q, uint64_t ip)
{
	return ip && !dc_ip_is_kernel(ip) && q->ops.is_missing &&
	       !q->ops.is_missing(q->ctx, q->pid, q->gen, ip);
}

/* Rebuild the window to go on at the next TIP.PGE (or, out of missing user
 * code, TIP into code found) at or after the decoder's position (see
 * above): 1 done, 0 a PSB, an OVF or the window's end comes first (libipt
 * goes on at the PSB), < 0 -ENOMEM. */
static int resume_at_pge(struct dc_ptq *q)
{
	struct pt_packet_decoder *pd;
	struct pt_packet pkt;
	uint64_t cur = 0, sync = 0, last_ip = 0, off, pge = 0, last_mode = 0, last_cbr = 0;
	size_t lim = q->stop_off ? q->stop_off : q->win_len, tail = 0, len, stop, pre;
	uint8_t *n = NULL, *w = NULL;
	bool found = false, in_psb = false;
	/* (out of missing user code a TIP into code that can be decoded is
	 * such a place too: an indirect branch's target, exact) */
	bool tip_ok = q->unk == UNK_USER && q->unk_tid == q->tid, at_tip = false, inplace;
	int ret;

	if (q->rp && (ret = rp_go_live(q)))
		return ret;
	if (dc_wdec_offset(&q->dec, &cur) < 0 || dc_wdec_sync_offset(&q->dec, &sync) < 0)
		return 0;
	if (q->tip_gen != q->st.windows + 1) {
		q->tip_gen = q->st.windows + 1;
		q->tip_copied = 0;
		q->tip_budget = TIP_RESUME_BUDGET * (uint64_t)q->win_len + TIP_RESUME_FLOOR;
	}
	inplace = q->rbuf && (uintptr_t)q->win >= (uintptr_t)q->rbuf &&
		  (uintptr_t)q->win + q->win_len == (uintptr_t)q->rbuf + q->rbuf_len;
	if (cur > q->win_len || q->tip_copied > q->tip_budget ||
	    (!inplace && q->tip_copied + (q->win_len - cur) > q->tip_budget))
		tip_ok = false;
	pd = win_packets(q, lim);
	if (!pd)
		return -ENOMEM;
	for (int pass = 0; pass < 2; pass++) {
		if (pt_pkt_sync_set(pd, sync) < 0)
			break;
		while (pt_pkt_get_offset(pd, &off) >= 0 && pt_pkt_next(pd, &pkt, sizeof(pkt)) >= 0) {
			if (pkt.type == ppt_psb || pkt.type == ppt_psbend)
				in_psb = pkt.type == ppt_psb;
			if (pass) {
				if (off == pge)
					break;
				/* libipt queues every MODE.Exec and CBR outside
				 * PSB+ while tracing is off (its queue is short):
				 * the last ones are all that count */
				if (!in_psb && ((pkt.type == ppt_mode && off != last_mode) ||
						(pkt.type == ppt_cbr && off != last_cbr)))
					continue;
				if (timing_packet(&pkt)) {
					memcpy(w, q->win + off, (size_t)pkt.size);
					w += pkt.size;
				}
				continue;
			}
			if (off > sync && off >= cur && (pkt.type == ppt_psb || pkt.type == ppt_ovf))
				break;
			if (!in_psb && pkt.type == ppt_mode && pkt.payload.mode.leaf == pt_mol_exec)
				last_mode = off;
			if (!in_psb && pkt.type == ppt_cbr)
				last_cbr = off;
			if (pkt.type == ppt_tip || pkt.type == ppt_tip_pge ||
			    pkt.type == ppt_tip_pgd || pkt.type == ppt_fup)
				dc_pt_last_ip(&last_ip, &pkt);
			if (off >= cur && (pkt.type == ppt_tip_pge || (pkt.type == ppt_tip && tip_ok)) &&
			    pkt.payload.ip.ipc != pt_ipc_suppressed &&
			    (pkt.type == ppt_tip_pge || tip_resumes(q, last_ip))) {
				at_tip = pkt.type == ppt_tip;
				pge = off;
				tail = (size_t)off + (size_t)pkt.size;
				found = true;
				break;
			}
		}
		if (!found)
			break;
		if (!pass) {
			/* at most: all of [sync, pge), the full TIP.PGE, the rest
			 * (not in place) */
			len = (size_t)(pge - sync) + 9 + (inplace ? 0 : q->win_len - tail);
			n = dc_pt_alloc(len);
			if (!n) {
				pt_pkt_free_decoder(pd);
				return -ENOMEM;
			}
			w = n;
		}
	}
	pt_pkt_free_decoder(pd);
	if (!found || !n)
		return 0;
	*w++ = 0xd1;                                  /* TIP.PGE, full ip */
	for (int i = 0; i < 8; i++)
		*w++ = (uint8_t)(last_ip >> (8 * i));
	pre = (size_t)(w - n);
	if (at_tip)
		q->tip_copied += 2 * (pge - sync);   /* (the two scans) */
	if (inplace && tail >= pre) {
		/* the new start right before the rest, over bytes decoded */
		uint8_t *b = q->rbuf + ((uintptr_t)q->win - (uintptr_t)q->rbuf) + (tail - pre);

		memcpy(b, n, pre);
		free(n);
		n = b;
	} else {
		if (inplace) {
			/* (no room there: a copy after all) */
			uint8_t *f = dc_pt_alloc(pre + (q->win_len - tail));

			if (!f) {
				free(n);
				return -ENOMEM;
			}
			memcpy(f, n, pre);
			free(n);
			n = f;
		}
		memcpy(n + pre, q->win + tail, q->win_len - tail);
		if (at_tip)
			q->tip_copied += pre + (q->win_len - tail);
		len = pre + (q->win_len - tail);
		memset(n + len, 0, DC_PT_SLACK);   /* (at most the length allocated) */
		free(q->rbuf);           /* (the old window may be it: copied now) */
		q->rbuf = n;
		q->rbuf_len = len;
	}
	stop = q->stop_off ? q->stop_off - tail + pre : 0;
	len = pre + (q->win_len - tail);
	q->win = n;
	q->win_len = len;
	q->stop_off = stop;
	if (open_decoder(q, n, len, q->image))
		return -ENOMEM;
	q->synced = false;
	q->cont = true;          /* the PSB is no new context point */
	q->resuming = true;
	q->st.resumes++;
	return 1;
}

/* Decoding stopped at kernel code there is no image of (a user+kernel
 * trace): the thread is in the kernel, its time [kernel], until the next
 * PSB shows where it is. Entered from user mode by a syscall (the pending
 * far call), an interrupt or fault (the async branch's FUP), or already
 * there when tracing started or synchronised (DC_OFF_KERNEL). Nothing is
 * lost. */
static int into_kernel(struct dc_ptq *q, uint64_t ip)
{
	uint64_t from = 0, t = now_ns(q), to = 0;
	uint8_t reason = DC_OFF_KERNEL;
	uint32_t nr = UINT32_MAX;
	bool again = q->unk == UNK_KERNEL && q->unk_tid == q->tid;
	int ret;

	q->st.kernel_skips++;
	if (q->pend.valid) {
		from = q->pend.end_ip;
		if (q->pend.iclass == ptic_far_call) {
			reason = DC_OFF_SYSCALL;
			nr = syscall_nr(q, &q->pend);
		} else {
			reason = DC_OFF_FAULT;
		}
	} else if (q->async_from) {
		from = q->async_from;
		reason = DC_OFF_FAULT;
	}
	if (q->ops.kernel_code) {
		/* names without code (kallsyms; a module not in the image):
		 * the function it entered is told, a frame under [kernel] */
		bool named = false;

		q->ops.kernel_code(q->ctx, ip, &named);
		if (named && dc_ip_is_kernel(from) && q->pend.valid && (ret = resolve(q, ip)))
			return ret;
		if (named && !dc_ip_is_kernel(from))
			to = ip;
	}
	if (dc_ip_is_kernel(from)) {
		/* from the kernel to the kernel: it was there already */
		from = 0;
		reason = DC_OFF_KERNEL;
	}
	q->pend.valid = false;
	q->async_from = 0;
	q->announce = 0;
	q->unk = UNK_KERNEL;
	q->unk_tid = q->tid;
	if (again && !from)
		return 0;
	if ((ret = push(q, DC_EV_TRACE_OFF, reason, from, from ? to : 0, t)))
		return ret;
	q->fifo[q->fhead + q->fn - 1].ev.sysno = reason == DC_OFF_SYSCALL ? nr : 0;
	return 0;
}

/* From here the thread runs code that cannot be decoded (from: where it
 * is; for DC_LOST_RETURN the return that went there): [lost] until the
 * next sync point. */
static int lost_undecoded(struct dc_ptq *q, uint8_t reason, uint64_t from)
{
	uint64_t t = now_ns(q);
	int ret;

	q->pend.valid = false;
	q->announce = 0;
	q->unk = UNK_USER;
	q->unk_tid = q->tid;
	ret = push(q, DC_EV_LOST, reason, from, 0, t > q->a_t ? t : q->a_t);
	q->unk_mark = q->nadded;
	return ret;
}

/* Decoding stopped at ip in a binary that was not found (or not the one
 * recorded): the last branch went there (a call, a PLT stub's jump), or
 * tracing started or synchronised there. Where that code goes next, a
 * return out of it included, is not known: the packets up to the next
 * sync point (TIP.PGE, PSB) cannot be read without it. Its frame is real
 * (the branch into it is), but the time from here on is [lost] (LOST
 * UNDECODED), and the next sync resyncs the stack as after any loss: the
 * code decoded after it is no callee of that frame unless the ip proves
 * it. Before (2026-11-28), all that time was the missing code's, and what
 * was decoded after a TIP.PGE ran under its frame: a library rebuilt
 * after recording put every later function of main under it. */
static int into_missing(struct dc_ptq *q, uint64_t ip)
{
	int ret;

	q->st.missing++;
	q->async_from = 0;
	if (q->unk == UNK_USER && q->unk_tid == q->tid && q->nadded == q->unk_mark &&
	    !q->announce && !q->pend.valid)
		return 0;   /* (nothing seen since that loss: the same gap) */
	if (q->announce) {
		/* tracing starts, comes back or synchronised in that code */
		ret = push(q, DC_EV_TRACE_ON, q->announce, 0, ip,
			   q->announce_ns > q->pend_t ? q->announce_ns : q->pend_t);
		q->announce = 0;
		q->pend.valid = false;
	} else {
		ret = resolve(q, ip);
	}
	return ret ? ret : lost_undecoded(q, DC_LOST_UNDECODED, ip);
}

static int on_error(struct dc_ptq *q, int err, const struct pt_block *b)
{
	uint64_t ip = b->ninsn ? 0 : b->ip;

	if (err == -pte_eos)
		return end_window(q, q->stop_off != 0);
	q->synced = false;   /* resync at the next PSB */
	if (err == -pte_nomap && ip && have_thread(q)) {
		int ret = 1;

		if (dc_ip_is_kernel(ip))
			ret = into_kernel(q, ip);
		else if (q->ops.is_missing && q->ops.is_missing(q->ctx, q->pid, q->gen, ip))
			ret = into_missing(q, ip);
		if (ret <= 0)
			return ret < 0 ? ret : resume_at_pge(q) < 0 ? -ENOMEM : 0;
	}
	if (err == -pte_retstack_empty && q->resumed && q->pend.valid &&
	    q->pend.iclass == ptic_return && have_thread(q)) {
		/* A return whose call libipt did not see (decoding went on at
		 * a TIP.PGE): to a place unknown (the missing code the thread
		 * was in is a guess: it may have returned before, and the
		 * thread called this function from elsewhere): the frame
		 * returning ends, [lost] from here, on from the next TIP.PGE
		 * or TIP into code that can be decoded. */
		int ret = lost_undecoded(q, DC_LOST_RETURN, q->pend.end_ip);

		if (ret)
			return ret;
		return resume_at_pge(q) < 0 ? -ENOMEM : 0;
	}
	/* the last branch did get to ip; what follows is lost */
	if (ip) {
		int ret = resolve(q, ip);

		if (ret)
			return ret;
	}
	q->st.lost_decode++;
	return lost(q, DC_LOST_DECODE, ip, q->a_t);
}

/* Has the decoder gone STALL_INSNS instructions without reading a packet?
 * The offset is looked at once STALL_STEP instructions went by since the
 * last look, not after every block (a query per block, 1 % of the work);
 * the look that sees it moved starts the count again, so a stall is
 * found up to STALL_STEP instructions later than at once. */
static bool stalled(struct dc_ptq *q, uint32_t ninsn)
{
	uint64_t off = UINT64_MAX;

	q->stall_acc += ninsn;
	if (q->stall_acc < STALL_STEP)
		return false;
	if (d_offset(q, &off) < 0 || off != q->stall_off) {
		q->stall_off = off;
		q->stall_insns = q->stall_acc = 0;
		return false;
	}
	q->stall_insns += q->stall_acc;
	q->stall_acc = 0;
	return q->stall_insns >= STALL_INSNS;
}

/* One unit of decoding work. */
static int step(struct dc_ptq *q)
{
	struct pt_block b;
	uint64_t t;
	int ret;

	if (!q->wopen) {
		ret = open_window(q);
		if (ret == 0 && q->lost_tail) {
			/* the data after the last chunk was dropped */
			q->lost_tail = false;
			q->st.lost_truncated++;
			return lost(q, DC_LOST_TRUNCATED, 0, q->last_ns);
		}
		if (ret <= 0) {
			q->done = ret == 0;
			return ret;
		}
	}
	if (!q->synced) {
		bool cont = q->cont;
		uint64_t off;

		q->cont = false;
		ret = d_sync(q);
		if (q->fatal)
			return q->fatal;
		if (ret < 0)
			return end_window(q, false);
		q->status = ret;
		q->synced = true;
		/* (offsets are the window's and repeat after each PSB+: a
		 * count from the last decoder must not go on here) */
		q->stall_off = UINT64_MAX;
		q->stall_insns = q->stall_acc = 0;
		q->resumed = q->resuming;
		q->resuming = false;
		q->st.syncs++;
		if (q->stop_off && d_sync_offset(q, &off) >= 0) {
			if (off >= q->stop_off) {
				/* nothing decoded here: the next window goes on
				 * in flow only if this one was to (not after a
				 * loss) */
				ret = end_window(q, true);
				q->cont = q->cont && cont;
				return ret;
			}
			q->psb_left = count_psbs(q->win + off, q->stop_off - off);
		}
		/* Going on at the last window's stop PSB: a PSB+ in flow (its
		 * MODE.Exec anchors it, on_event). Anchored here, its time
		 * would be given to the branch before it, whose event waits
		 * for the next block (the PSB came right after a TIP). */
		if (cont && have_thread(q))
			return 0;
		return set_ctx(q, CTX_SYNC, now_ns(q), 0);
	}
	while (q->status & pts_event_pending) {
		struct pt_event ev;

		ret = d_event(q, &ev);
		if (q->fatal)
			return q->fatal;
		if (ret < 0) {
			memset(&b, 0, sizeof(b));
			return on_error(q, ret, &b);
		}
		q->status = ret;
		if ((ret = on_event(q, &ev)))
			return ret;
		if (q->ctx_kind || !q->wopen || q->nfinal)
			return 0;
	}
	t = now_ns(q);
	ret = d_next(q, &b);
	if (q->fatal)
		return q->fatal;
	if (b.iclass == ptic_error && b.ninsn && b.isid > 0 && q->cfg.iscache && !b.truncated) {
		/* libipt's block cache forgets the class of an indirect branch
		 * or far transfer it knows: the code tells (as our decoder
		 * does, so nothing depends on what libipt decoded before) */
		enum pt_insn_class c = (enum pt_insn_class)code_at(q, b.isid, b.end_ip)->iclass;

		if (c != ptic_error && c != ptic_other && c != ptic_cond_jump)
			b.iclass = c;
	}
	if (b.ninsn) {
		int r2 = on_block(q, &b, t);

		if (r2)
			return r2;
		if (ret >= 0 && stalled(q, b.ninsn))
			return on_error(q, -pte_bad_insn, &b);
	} else if (b.ip && ret >= 0) {
		/* an empty block (an event comes first) still says where the
		 * last branch went */
		int r2 = resolve(q, b.ip);

		if (r2)
			return r2;
	}
	if (ret < 0)
		return on_error(q, ret, &b);
	q->status = ret;
	return 0;
}

int dc_ptq_fill(struct dc_ptq *q)
{
	while (!q->nfinal && !q->ctx_kind && !q->done) {
		int ret = step(q);

		if (ret < 0)
			return ret;
	}
	if (q->done && q->nfinal < q->fn)
		anchor(q, q->icount, q->a_t > q->last_ns ? q->a_t : q->last_ns);
	return q->nfinal || q->ctx_kind ? 1 : 0;
}

uint64_t dc_ptq_head_time(const struct dc_ptq *q)
{
	return q->nfinal ? q->fifo[q->fhead].ev.time_ns : q->ctx_ns;
}

/* Can kernel code at ip be decoded (an image of it was given)? */
static bool kernel_code(struct dc_ptq *q, uint64_t ip)
{
	bool named;

	return q->ops.kernel_code && q->ops.kernel_code(q->ctx, ip, &named);
}

/* A context point reached the head: learn the thread and its image. */
static int do_ctx(struct dc_ptq *q)
{
	enum ctx_kind kind = q->ctx_kind;
	struct pt_image *image = NULL;
	bool first = false;
	uint64_t since = 0, up;
	int ret;

	q->ctx_kind = CTX_NONE;
	/* a PGE on a coarse clock: its time read is a period's lower bound,
	 * which the sideband may raise (the thread got the CPU later) */
	q->ctx_up = kind == CTX_ENABLE && q->coarse && mtc_period_ns(q) ?
		    q->ctx_ns + mtc_period_ns(q) : 0;
	up = q->ctx_up;
	ret = q->ops.context(q->ctx, q, q->ctx_ns, &q->pid, &q->tid, &image, &first, &since);
	q->ctx_up = 0;
	if (ret < 0)
		return ret;
	if (q->lost && q->tid != q->lost_tid && have_thread(q)) {
		/* Another thread got the CPU while data was lost: its time
		 * since then is lost too (not the previous thread's). With
		 * the data lost from the queue's start and no switch-in
		 * known, from the sync point. */
		struct qev *e = fifo_add(q);
		uint64_t t = since > q->lost_ns ? since : q->lost_ns;

		if (!e)
			return -ENOMEM;
		e->ev.kind = DC_EV_LOST;
		e->ev.reason = q->lost_reason;
		e->icount = q->icount;
		set_final(q, e, t ? t : q->ctx_ns);
		q->lost_tid = q->tid;
		first = false;
	}
	q->cur_lo = q->cur_hi = 0;
	/* a window replayed with another image (or version) goes on here */
	if (q->rp && (image != q->rp_src ||
		      (q->ops.image_version && q->ops.image_version(q->ctx, image) != q->rp_ver)))
		q->rp_stale = true;
	/* (asked at every context point, as the image may be another
	 * process's or have been rebuilt for this one's new mappings) */
	q->gen = image && q->ops.image_gen ? q->ops.image_gen(q->ctx, image) : 0;
	if (image != q->image) {
		q->image = image;
		if (dc_wdec_is_open(&q->dec) &&
		    dc_wdec_set_image(&q->dec, image, code_of(q, image)))
			return q->fatal = -ENOMEM;
	}
	if (kind == CTX_ENABLE) {
		q->lost = false;   /* the enable's ip resyncs */
		/* enabled in the kernel (a user+kernel trace): in the kernel
		 * until the code says otherwise (into_kernel when it cannot be
		 * decoded) */
		if (dc_ip_is_kernel(q->ctx_ip) && !kernel_code(q, q->ctx_ip)) {
			q->unk = UNK_KERNEL;
			q->unk_tid = q->tid;
			return push(q, DC_EV_TRACE_OFF, DC_OFF_KERNEL, 0, 0, q->ctx_ns);
		}
		if (q->coarse) {
			/* its time comes with the piece that starts here */
			piece_add(q, q->icount + 1, q->ctx_ns,
				  up ? up : mtc_period_ns(q) ? q->ctx_ns + mtc_period_ns(q) : 0);
			return push_at(q, DC_EV_TRACE_ON, first ? DC_ON_START : DC_ON_RESUME,
				       q->ctx_ip, q->icount + 1);
		}
		ret = push(q, DC_EV_TRACE_ON, first ? DC_ON_START : DC_ON_RESUME, 0, q->ctx_ip,
			   q->ctx_ns);
		/* the PGE's time is that of its ip's instruction, the first
		 * one decoded after it (not of the last one before: with a
		 * coarse clock, say 1000 ns per instruction, every branch
		 * placed after it by count came half an instruction late) */
		anchor(q, q->icount + 1, q->a_t);
		return ret;
	}
	/* CTX_SYNC: the next ip tells where we are */
	if (q->lost || first) {
		q->announce = q->lost ? DC_ON_SYNC : DC_ON_START;
		q->announce_ns = q->ctx_ns;
		q->lost = false;
	} else if (q->unk) {
		/* out of code that could not be decoded: out of the kernel, or
		 * (the same thread, after missing user code: [lost]) a resync */
		q->announce = q->unk == UNK_USER && q->unk_tid == q->tid ? DC_ON_SYNC
									 : DC_ON_RESUME;
		q->announce_ns = q->ctx_ns;
	}
	return ret;
}

/* The head, a final event, taken. */
static inline const struct dc_event *take_head(struct dc_ptq *q)
{
	const struct dc_event *e = &q->fifo[q->fhead++].ev;

	q->nfinal--;
	if (!--q->fn)
		q->fhead = 0;   /* (the slot is written again only by a fill) */
	q->st.events++;
	if (!q->st.first_ns)
		q->st.first_ns = e->time_ns;
	q->st.last_ns = e->time_ns;
	return e;
}

int dc_ptq_take(struct dc_ptq *q, const struct dc_event **ev)
{
	if (q->nfinal) {
		*ev = take_head(q);
		return 1;
	}
	if (q->ctx_kind) {
		int ret = do_ctx(q);

		return ret < 0 ? ret : 0;
	}
	return 0;
}

const struct dc_event *dc_ptq_take_upto(struct dc_ptq *q, uint64_t le)
{
	/* (done: dc_ptq_fill may anchor the events not yet final) */
	if (!q->nfinal || q->done || q->fifo[q->fhead].ev.time_ns > le)
		return NULL;
	return take_head(q);
}

int dc_ptq_pop(struct dc_ptq *q, struct dc_event *ev)
{
	const struct dc_event *e;
	int ret = dc_ptq_take(q, &e);

	if (ret == 1)
		*ev = *e;
	return ret;
}
