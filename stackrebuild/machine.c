/* ptflame - stackrebuild/machine: per-thread shadow stacks and wall-clock
 * accounting (DESIGN.md section 4).
 *
 * Each thread has a stack of function frames and, on top of it, a small
 * stack of pseudo-frames for the state it is in ([kernel], [off-cpu],
 * [preempted], [lost]). The time between two consecutive events of a thread
 * goes to the topmost frame of the two; so every traced nanosecond lands on
 * exactly one stack and the sum over a thread's stacks is its traced time.
 *
 * Frames point at nodes of the thread's current "segment" tree. A segment
 * ends when the stack is thrown away (data lost and the resumed ip proves
 * nothing, exec, end of trace); its tree is then merged into the thread's
 * part of the work tree. Keeping the open segment apart is what lets a
 * return above the root put an inferred caller BELOW everything seen so far
 * without touching time that was accounted on an older, unrelated stack.
 *
 * Memory grows with the number of distinct calling contexts and threads,
 * never with the number of events.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/dc_hash.h"
#include "decoder/dc_vec.h"
#include "stackrebuild/cct_internal.h"

enum { F_INFERRED = 1, F_ASYNC = 2, F_TRAMP = 4, F_STUB = 8, F_CALLED = 16 };
enum { MAX_PSEUDO = 8, CHILD_CACHE = 64 };
enum { NR_RT_SIGRETURN = 15, NR_EXECVE = 59, NR_EXECVEAT = 322 };

struct frame {             /* (a field more: set it in frame_init too) */
	struct sr_node *node;      /* in the thread's segment tree           */
	struct sr_node *leaf;      /* its innermost inline frame's node, else
	                              node: where its time and callees go    */
	uint32_t ictx;             /* inline context (sr_symbolizer.inline_at) */
	uint64_t ilo, ihi;         /* range around the last ip with it        */
	uint32_t ibase;            /* its inline frames: thread inl[ibase..] */
	uint16_t ninl;
	bool iset;                 /* ictx was set once                      */
	uint64_t alias;            /* another key execution fell through into
	                              within this frame (0: none)            */
	uint64_t from;             /* the function this frame jumped out of
	                              (a tail call; a hot part's jump into its
	                              .cold part): a jump back into its middle
	                              goes on in this frame (0: none)        */
	uint64_t site;             /* the last call this frame made: its ip
	                              (0: none seen)                         */
	uint64_t t0;               /* entry time                             */
	uint64_t by0[SR_TIME_NKINDS]; /* the thread's traced_by at t0: the
	                              call's time split for sr_options.on_call */
	uint64_t stub0;            /* node's user self time when the frame
	                              became that node (fold_stub)           */
	uint8_t flags;             /* F_INFERRED: entry not seen; F_ASYNC:
	                              signal handler (and what replaced it);
	                              F_TRAMP: what a handler returned into,
	                              the sigreturn trampoline; F_STUB: a
	                              PLT stub's call going on in the PLT
	                              header or the lazy resolver; F_CALLED:
	                              a frame or pseudo frame went on top    */
};

/* An inline frame: a function inlined into a frame's function (or into
 * another inline frame of it), entered at t0. */
struct inl {
	struct sr_node *node;
	uint64_t t0;
	uint64_t by0[SR_TIME_NKINDS]; /* the thread's traced_by at t0       */
	uint32_t ctx;              /* the instance (inline context id)       */
	bool inferred;             /* entered before the trace showed it     */
};
enum { MAX_INLINE = 32 };

struct pseudo {
	struct sr_node *node;
	uint64_t t0;
	uint64_t self0;            /* [off-cpu] with wakers: node's OFFCPU self
	                              time at t0 (what the wait added to it) */
	uint64_t by0[SR_TIME_NKINDS];
	uint8_t time_kind;         /* enum sr_time_kind                      */
	bool born;                 /* [preempted] of a new thread before its
	                              first run: its creator woke it (with
	                              wakers: self0 as for [off-cpu])        */
};

/* A part of a thread's life that an exec ended: the stacks it had (its
 * own THREAD node in m->work), its name then and its wake edges. */
struct tpart {
	struct sr_node *work_node;
	char *comm;                /* its last comm ("" / NULL: none known)  */
	bool comm_matched;         /* had opt.comm at some time in it        */
	struct sr_cct *edges;      /* its wake edges (opt.wakers), or NULL   */
};

enum { RCHAIN_N = 16 };

struct thread {
	struct sr_thread_stats st; /* st.comm is not used until finish       */
	bool unwanted;             /* not in --tid: followed only as a waker
	                              (opt.wakers), never output            */
	/* The current part of its life (since its last exec): the name, and
	 * whether it had opt.comm. While exec_pending, the stack is still the
	 * old program's and these still the old part's: the comms from the
	 * exec on go to next_*, which become these at the split. */
	char *comm;
	uint64_t comm_time;
	bool comm_matched;         /* had opt.comm at some time in this part */
	char *next_comm;
	uint64_t next_comm_time;
	bool next_matched;
	struct tpart *parts;       /* the parts that execs ended, in order   */
	uint32_t nparts, pcap;
	bool started;              /* has had an activating event            */
	bool active;               /* traced now: time is being accounted    */
	bool fresh;                /* current event (re)started tracing      */
	bool async_off;            /* its last event an asynchronous TRACE_OFF
	                              (interrupt, fault, tracing disabled) */
	bool need_resync;          /* after LOST: stack unproven             */
	bool gap_undecoded;        /* the [lost] gap open is one in code that
	                              cannot be decoded (DC_LOST_UNDECODED),
	                              not data the trace lost                */
	bool since_loss;           /* data was lost since the trace (re)started:
	                              the stack's bottom frames were guessed
	                              from where it resumed, so a jump into a
	                              function below them proves no caller */
	/* The functions the segment's root frame has been, oldest first: its
	 * first root and each caller a return above the root made (each one
	 * called the one before), since the segment began or a resync after
	 * a loss last kept its stack (a ring: the last RCHAIN_N). A caller
	 * found in it called itself through the others (bash's subexpr ->
	 * readtok -> subexpr): a recursive function, as if seen calling
	 * itself. */
	uint64_t rchain[RCHAIN_N];
	uint32_t nrchain;
	uint32_t unproven;         /* the bottom frames a resync kept below the
	                              one it resumed in: a loss (or untraced
	                              code) may have changed them, so a return
	                              that contradicts one proves the stack
	                              wrong, not an unseen jump of that frame */
	/* After a loss, a resync that kept frames holds the thread's next
	 * events while their returns go down those frames (hold_take). */
	struct {
		struct dc_event *ev;
		uint32_t n, cap;
		uint32_t depth;        /* calls held that have not returned  */
		uint32_t level;        /* the frame their next return leaves */
		uint64_t t0, ip;       /* the resync's time and ip            */
		uint8_t root_flags;    /* a new root's, as the resync had it  */
		bool on;
		bool after;            /* from the end of the event being fed */
	} hold;
	bool exec_pending;         /* exec'ed: next ip starts a new stack    */
	bool jumps_seen;           /* its events show every jump that leaves a
	                              function (DC_BR_JUMPS_SEEN)            */
	uint32_t last_sysno;       /* of the [kernel] entry being left       */
	bool sigreturn;            /* that entry was (likely) rt_sigreturn   */
	struct frame *frames;
	uint32_t nframes, cap;
	struct inl *inl;           /* the frames' inline frames, in order     */
	uint32_t icap;
	struct pseudo ps[MAX_PSEUDO];
	uint32_t nps;
	/* Kernel frames (functions of kernel code the trace shows), stacked
	 * on the [kernel] pseudo-frame ps[kps]; pseudo-frames above kps sit
	 * on them (a switch-out in the scheduler). */
	struct frame *kf;
	uint32_t nkf, kcap, kps;
	struct sr_cct *seg;        /* open segment                            */
	/* Recently used children of the segment tree, checked against the
	 * node itself, so only freeing the segment makes it stale. Saves the
	 * tree's hash lookup on most calls (loops call the same callees). */
	struct sr_node *child_cache[CHILD_CACHE];
	uint64_t seg_t0;
	uint64_t seg_by[SR_TIME_NKINDS]; /* st.traced_by at seg_t0           */
	uint64_t last_ns;
	struct sr_node *work_node; /* THREAD node in m->work                  */
	struct twake *wk;          /* wakes (opt.wakers), NULL until one      */
	/* Made during the recording (sr_machine_fork) and not started yet:
	 * its life begins at born_ns when its first event comes; born_in is
	 * its first switch-in (0: none seen), born_out the switch-out after
	 * it, also before its first event (0: none). */
	uint64_t born_ns, born_in, born_out;
};

struct sr_machine {
	const struct sr_symbolizer *sym;
	struct sr_options opt;     /* strings and tids owned                  */
	uint64_t win_lo, win_hi;   /* accounting window [lo, hi)              */
	unsigned keep;
	bool inl;                  /* inline frames (symbolizer, options)    */
	struct thread **threads;   /* in order of creation                    */
	size_t nthreads, threads_cap;
	struct dc_hash tid_idx;    /* tid -> index in threads                */
	struct sr_cct *work;
	struct sr_machine_stats st;
	bool finished;
	struct mwake *wk;          /* opt.wakers: the waker frames' names     */
	struct key_bits *kbits;    /* KEY_BITS_N, direct-mapped by key       */
	struct dc_hash recur;      /* keys of functions seen calling
	                              themselves (recursive())               */
	uint64_t recur_last;       /* the last key noted there (+1; 0: none) */
	struct dc_hash seen_keys;  /* depth_unknown's scratch                 */
	struct thread *last;       /* the thread of the last event           */
	uint32_t nholding;         /* threads whose events are held          */
	bool replaying;            /* feeding held events: none held again   */
};

/* What a function key's name says (key_flags, unnamed), kept per key: a
 * key names one function for the whole run, and the name tests (string
 * compares) were paid on every call and return. */
enum { KEY_BITS_N = 1024, KB_UNNAMED = 0x40, KB_VALID = 0x80, KB_RECUR = 0x100 };
struct key_bits {
	uint64_t key;
	uint16_t bits;             /* SR_FUNC_* | KB_UNNAMED | KB_VALID, and
	                              KB_RECUR: in m->recur already        */
};

struct twake;
struct mwake;
static struct mwake *wake_new(void);
static void wake_free(struct mwake *w);
static void twake_free(struct twake *w);
static void wake_begin(struct sr_machine *m, struct thread *t);
static int wake_snap(struct sr_machine *m, struct thread *t, uint64_t time_ns,
		     uint32_t waker_pid, uint32_t waker_tid, const char *waker_comm);
static int wake_end(struct sr_machine *m, struct thread *t, const struct pseudo *p,
		    uint64_t now, bool end_seen, struct sr_call *wake);
static int wake_output(struct sr_machine *m, struct sr_cct *out, const struct sr_cct *edges);
static int wake_underflow(struct sr_machine *m, struct thread *t, uint64_t key);
static void wake_new_segment(struct thread *t);
static struct sr_cct *wake_take_edges(struct thread *t);
static struct sr_cct *wake_edges(const struct thread *t);
static int wake_finish(struct sr_machine *m, struct sr_cct *out);

/* ---- setup ---- */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

struct sr_machine *sr_machine_new(const struct sr_symbolizer *sym,
				  const struct sr_options *opt)
{
	struct sr_machine *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->sym = sym;
	if (opt)
		m->opt = *opt;
	m->opt.tids = NULL;
	m->opt.comm = NULL;
	m->opt.root = NULL;
	if (opt && opt->ntids) {
		uint32_t *tids = malloc(opt->ntids * sizeof(*tids));

		if (!tids)
			goto fail;
		memcpy(tids, opt->tids, opt->ntids * sizeof(*tids));
		qsort(tids, opt->ntids, sizeof(*tids), cmp_u32);
		m->opt.tids = tids;
	}
	if (opt && opt->comm && !(m->opt.comm = strdup(opt->comm)))
		goto fail;
	if (opt && opt->root && !(m->opt.root = strdup(opt->root)))
		goto fail;
	m->win_lo = m->opt.time_start;
	m->win_hi = m->opt.time_end ? m->opt.time_end : UINT64_MAX;
	m->keep = m->opt.keep_time ? m->opt.keep_time : SR_KEEP_ALL;
	m->inl = sym && sym->inline_at && sym->inline_up && !m->opt.no_inline;
	m->work = sr_cct_new(sym);
	m->kbits = calloc(KEY_BITS_N, sizeof(*m->kbits));
	if (!m->work || !m->kbits)
		goto fail;
	if (m->opt.wakers && !(m->wk = wake_new()))
		goto fail;
	return m;
fail:
	sr_machine_free(m);
	return NULL;
}

static void thread_free(struct thread *t)
{
	for (uint32_t i = 0; i < t->nparts; i++) {
		free(t->parts[i].comm);
		sr_cct_free(t->parts[i].edges);
	}
	free(t->parts);
	free(t->comm);
	free(t->next_comm);
	free(t->frames);
	free(t->inl);
	free(t->kf);
	free(t->hold.ev);
	sr_cct_free(t->seg);
	twake_free(t->wk);
	free(t);
}

void sr_machine_free(struct sr_machine *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nthreads; i++)
		thread_free(m->threads[i]);
	free(m->threads);
	dc_hash_free(&m->tid_idx);
	dc_hash_free(&m->recur);
	dc_hash_free(&m->seen_keys);
	free(m->kbits);
	sr_cct_free(m->work);
	wake_free(m->wk);
	free((void *)m->opt.tids);
	free((char *)m->opt.comm);
	free((char *)m->opt.root);
	free(m);
}

/* ---- threads ---- */

static bool tid_wanted(const struct sr_machine *m, uint32_t tid)
{
	return !m->opt.ntids ||
	       bsearch(&tid, m->opt.tids, m->opt.ntids, sizeof(tid), cmp_u32);
}

static struct thread *thread_find(const struct sr_machine *m, uint32_t tid)
{
	uint64_t i;

	return dc_hash_get(&m->tid_idx, tid, &i) ? m->threads[i] : NULL;
}

static struct thread *thread_other(struct sr_machine *m, uint32_t pid, uint32_t tid);

/* (events come in runs of one thread, and threads live to the end: the
 * last one's test inline, as it is asked for every event) */
static inline struct thread *thread_get(struct sr_machine *m, uint32_t pid, uint32_t tid)
{
	return m->last && m->last->st.tid == tid ? m->last : thread_other(m, pid, tid);
}

/* thread_get for another thread than the last: found, or made. */
static struct thread *thread_other(struct sr_machine *m, uint32_t pid, uint32_t tid)
{
	struct thread *t;

	if ((t = thread_find(m, tid)))
		return m->last = t;
	if (DC_VEC_PUSH_ROOM(m->threads, m->nthreads, m->threads_cap, 16))
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->st.pid = pid;
	t->st.tid = tid;
	t->unwanted = !tid_wanted(m, tid);
	t->seg = sr_cct_new(m->sym);
	t->work_node = sr_cct_child(m->work, NULL, SR_NODE_THREAD, tid);
	if (!t->seg || !t->work_node) {
		thread_free(t);
		return NULL;
	}
	if (dc_hash_put(&m->tid_idx, tid, m->nthreads)) {
		thread_free(t);
		return NULL;
	}
	m->threads[m->nthreads++] = t;
	return t;
}

/* A name from time_ns on into *comm (unless an older one than *when). */
static int set_comm(char **comm, uint64_t *when, bool *matched, const struct sr_machine *m,
		    const char *name, uint64_t time_ns)
{
	if (m->opt.comm && !strcmp(name, m->opt.comm))
		*matched = true;
	if (*comm && time_ns < *when)
		return 0;
	free(*comm);
	*comm = strdup(name);
	*when = time_ns;
	return *comm ? 0 : -ENOMEM;
}

int sr_machine_comm(struct sr_machine *m, uint32_t pid, uint32_t tid,
		    const char *comm, uint64_t time_ns)
{
	struct thread *t;

	if (m->finished || !comm || (!m->wk && !tid_wanted(m, tid)))
		return 0;
	t = thread_get(m, pid, tid);
	if (!t)
		return -ENOMEM;
	/* (after an exec: the new program's name, for the part that its
	 * first event starts) */
	if (t->exec_pending)
		return set_comm(&t->next_comm, &t->next_comm_time, &t->next_matched, m, comm,
				time_ns);
	return set_comm(&t->comm, &t->comm_time, &t->comm_matched, m, comm, time_ns);
}

/* The name the thread has now: the new program's after an exec. */
static const char *comm_now(const struct thread *t)
{
	return t->exec_pending && t->next_comm ? t->next_comm : t->comm;
}

static int hold_flush(struct sr_machine *m);

int sr_machine_exec(struct sr_machine *m, uint32_t pid, uint32_t tid, uint64_t time_ns)
{
	struct thread *t;
	int ret;

	(void)time_ns;
	if (m->finished || (!m->wk && !tid_wanted(m, tid)))
		return 0;
	if ((ret = hold_flush(m)))
		return ret;
	t = thread_get(m, pid, tid);
	if (!t)
		return -ENOMEM;
	/* a new part of its life begins, named by the comms from here on (an
	 * exec again before the first event: the part between had no event) */
	free(t->next_comm);
	t->next_comm = NULL;
	t->next_comm_time = 0;
	t->next_matched = false;
	t->exec_pending = true;
	return 0;
}

/* Was any code of the program traced in this part (a function frame at
 * its root, not only [kernel], [off-cpu] and the like)? */
static bool part_ran_code(const struct sr_node *work_node)
{
	for (const struct sr_node *c = work_node->first_child; c; c = c->next_sibling)
		if (c->kind == SR_NODE_FUNC)
			return true;
	return false;
}

/* At the first event after an exec, the stack of which the old program's
 * frames have just ended (end_segment): the part of the thread's life
 * before the exec is done, when code of the old program ran in it; a new
 * one begins, named by the comms since the exec. A thread with none of its
 * code traced before the exec stays one part: a program traced from its
 * start, or from its exec with the kernel (perf record -- CMD: the exec's
 * kernel time, most of it after the new name, is the new program's, as
 * perf names it). */
static int split_at_exec(struct sr_machine *m, struct thread *t)
{
	char *name = t->next_comm;

	if (part_ran_code(t->work_node)) {
		struct tpart p = { .work_node = t->work_node, .comm = t->comm,
				   .comm_matched = t->comm_matched };
		uint64_t key = (uint64_t)(t->nparts + 1) << 32 | t->st.tid;
		struct sr_node *n;

		/* (no comm since the exec: the old name goes on) */
		if (!name && t->comm && !(name = strdup(t->comm)))
			return -ENOMEM;
		if (DC_VEC_PUSH_ROOM32(t->parts, t->nparts, t->pcap, 4) ||
		    !(n = sr_cct_child(m->work, NULL, SR_NODE_THREAD, key))) {
			if (name != t->next_comm)
				free(name);
			return -ENOMEM;
		}
		p.edges = wake_take_edges(t);
		t->parts[t->nparts++] = p;
		t->work_node = n;
		t->comm = name;
	} else if (name) {
		free(t->comm);
		t->comm = name;
	}
	if (t->next_comm) {
		t->comm_time = t->next_comm_time;
		t->comm_matched = t->next_matched;
	} else {
		t->comm_matched = t->comm && m->opt.comm && !strcmp(t->comm, m->opt.comm);
	}
	t->next_comm = NULL;
	t->next_matched = false;
	return 0;
}

/* ---- accounting primitives ---- */

static uint64_t key_of(const struct sr_machine *m, uint32_t pid, uint64_t ip)
{
	return m->sym && m->sym->func_key ? m->sym->func_key(m->sym->ctx, pid, ip) : 0;
}

static struct sr_node *top_node(const struct thread *t)
{
	return t->nframes ? t->frames[t->nframes - 1].leaf : NULL;
}

/* How many frames the stack holds, inline frames included: the depth
 * of what is pushed next (sr_call.depth). */
static uint32_t stack_depth(const struct thread *t)
{
	const struct frame *f = t->nframes ? &t->frames[t->nframes - 1] : NULL;

	return f ? t->nframes + f->ibase + f->ninl : 0;
}

static uint64_t top_key(const struct thread *t)
{
	return t->frames[t->nframes - 1].node->key;
}

/* Is execution in function key inside frame f: its function, or a symbol
 * it fell through into (a label or alias inside it)? */
static bool frame_is(const struct frame *f, uint64_t key)
{
	return f->node->key == key || (f->alias && f->alias == key);
}

static bool top_is(const struct thread *t, uint64_t key)
{
	return frame_is(&t->frames[t->nframes - 1], key);
}

/* Give [last_ns, now) to the thread's current leaf. */
static inline __attribute__((always_inline)) int charge(struct sr_machine *m, struct thread *t,
							  uint64_t now)
{
	uint64_t lo = t->last_ns, hi = now;
	unsigned kind = t->nps ? t->ps[t->nps - 1].time_kind : SR_TIME_USER;
	struct sr_node *leaf;

	if (!t->active || hi <= lo)
		return 0;
	t->st.traced_ns += hi - lo;
	t->st.traced_by[kind] += hi - lo;
	if (kind == SR_TIME_LOST && t->gap_undecoded)
		t->st.undecoded_ns += hi - lo;
	if (!(m->keep & SR_KEEP(kind)))
		return 0;
	if (lo < m->win_lo)
		lo = m->win_lo;
	if (hi > m->win_hi)
		hi = m->win_hi;
	if (hi <= lo)
		return 0;
	if (t->nkf && t->nps - 1 == t->kps)
		leaf = t->kf[t->nkf - 1].node;
	else
		leaf = t->nps ? t->ps[t->nps - 1].node : top_node(t);
	if (!leaf)
		leaf = sr_cct_child(t->seg, NULL, SR_NODE_UNKNOWN, 0);
	if (!leaf)
		return -ENOMEM;
	sr_node_add_time(leaf, kind, hi - lo);
	return 0;
}

static bool name_matches(const char *name, const char *want);

/* Is node, or a function on its path, opt.root (or is there no --root)? */
static bool under_root(const struct sr_machine *m, const struct thread *t,
		       const struct sr_node *n)
{
	if (!m->opt.root)
		return true;
	for (; n && n->kind != SR_NODE_ROOT; n = n->parent)
		if (n->kind == SR_NODE_FUNC &&
		    name_matches(sr_cct_name(t->seg, n, NULL), m->opt.root))
			return true;
	return false;
}

/* A call of node over [t0, t1] ends: counted, unless it is outside the
 * --time window (1: not counted); one straddling an edge of the window
 * counts as inferred (*complete cleared). < 0: no memory. Inline: the
 * common case of every return. */
static inline int count_end(const struct sr_machine *m, struct sr_node *node, uint64_t t0,
			    uint64_t t1, bool *complete)
{
	if (t0 >= m->win_hi || (t1 <= m->win_lo && !(t0 == t1 && t0 == m->win_lo)))
		return 1;
	if (t0 < m->win_lo || t1 >= m->win_hi)
		*complete = false;
	if (!m->opt.counts_only)
		return sr_node_add_call(node, *complete, t1 - t0);
	sr_node_count_call(node, *complete, t1 - t0);
	return 0;
}

/* The call counted by count_end, to opt.on_call (by0: the thread's
 * traced_by at t0, depth: its place on the stack, wake: who woke it;
 * NULL or not woken: no one known). */
static int report_end(const struct sr_machine *m, const struct thread *t, struct sr_node *node,
		      uint64_t t0, const uint64_t *by0, uint32_t depth, uint64_t t1, bool complete,
		      const struct sr_call *wake)
{
	struct sr_call c = {
		.pid = t->st.pid, .tid = t->st.tid, .depth = depth, .node = node,
		.name = sr_cct_name(t->seg, node, NULL), .cct = t->seg,
		.start_ns = t0 < m->win_lo ? m->win_lo : t0,
		.end_ns = t1 > m->win_hi ? m->win_hi : t1,
		.complete = complete,
		.in_root = under_root(m, t, node),
		.selected = !m->opt.comm || t->comm_matched,
	};

	if (wake && wake->woken) {
		c.woken = true;
		c.waker_pid = wake->waker_pid;
		c.waker_tid = wake->waker_tid;
		c.wake_ns = wake->wake_ns;
	}
	for (int k = 0; k < SR_TIME_NKINDS; k++)
		c.by[k] = t->st.traced_by[k] - by0[k];
	return m->opt.on_call(m->opt.call_ctx, &c);
}

/* One call of node over [t0, t1] ends: counted, and reported to on_call. */
static inline int end_call_woken(const struct sr_machine *m, const struct thread *t,
				 struct sr_node *node, uint64_t t0, const uint64_t *by0,
				 uint32_t depth, uint64_t t1, bool complete,
				 const struct sr_call *wake)
{
	int ret = count_end(m, node, t0, t1, &complete);

	if (ret)
		return ret < 0 ? ret : 0;
	if (!m->opt.on_call || t->unwanted)
		return 0;
	return report_end(m, t, node, t0, by0, depth, t1, complete, wake);
}

static inline int end_call(const struct sr_machine *m, const struct thread *t,
			   struct sr_node *node, uint64_t t0, const uint64_t *by0, uint32_t depth,
			   uint64_t t1, bool complete)
{
	return end_call_woken(m, t, node, t0, by0, depth, t1, complete, NULL);
}

static int pop_frame(struct sr_machine *m, struct thread *t, uint64_t now, bool end_seen)
{
	struct frame *f = &t->frames[--t->nframes];

	uint32_t depth = t->nframes + f->ibase;

	if (t->unproven > t->nframes)
		t->unproven = t->nframes;

	/* its inline frames end with it (each one place above the last) */
	while (f->ninl) {
		const struct inl *e = &t->inl[f->ibase + --f->ninl];
		int ret = end_call(m, t, e->node, e->t0, e->by0, depth + 1 + f->ninl, now,
				   end_seen && !e->inferred);

		if (ret)
			return ret;
	}
	return end_call(m, t, f->node, f->t0, f->by0, depth, now,
			end_seen && !(f->flags & F_INFERRED));
}

static int pop_pseudo(struct sr_machine *m, struct thread *t, uint64_t now, bool end_seen)
{
	struct sr_call wake = { 0 };   /* (only its waker fields) */
	struct pseudo *p;
	int ret = 0;

	/* the kernel's frames end with the kernel entry they ran in */
	while (t->nkf && t->nps - 1 == t->kps && !ret) {
		struct frame *f = &t->kf[--t->nkf];

		ret = end_call(m, t, f->node, f->t0, f->by0, stack_depth(t) + t->kps + 1 + t->nkf, now,
			       end_seen && !(f->flags & F_INFERRED));
	}
	if (ret)
		return ret;
	p = &t->ps[--t->nps];
	if (m->wk && (p->node->kind == SR_NODE_OFFCPU || p->born) &&
	    (ret = wake_end(m, t, p, now, end_seen, &wake)))
		return ret;
	return end_call_woken(m, t, p->node, p->t0, p->by0,
			      stack_depth(t) + t->nps + (t->nkf && t->nps > t->kps ? t->nkf : 0),
			      now, end_seen, &wake);
}

/* [lost] ends when data is seen again (a complete "call": its length is the
 * gap); other states popped by anything but their proper end are inferred. */
static int pop_all_pseudo(struct sr_machine *m, struct thread *t, uint64_t now, bool end_seen)
{
	int ret = 0;

	while (t->nps && !ret)
		ret = pop_pseudo(m, t, now, end_seen ||
				 t->ps[t->nps - 1].node->kind == SR_NODE_LOST);
	return ret;
}

static int pop_to(struct sr_machine *m, struct thread *t, uint32_t keep, uint64_t now,
		  bool end_seen)
{
	int ret = 0;

	while (t->nframes > keep && !ret)
		ret = pop_frame(m, t, now, end_seen);
	return ret;
}

static struct sr_node *seg_child(struct thread *t, struct sr_node *parent,
				 enum sr_node_kind kind, uint64_t key)
{
	size_t i = (size_t)(((uintptr_t)parent >> 4) ^ (key * 0x9e3779b97f4a7c15ull >> 40) ^ kind)
		   % CHILD_CACHE;
	struct sr_node *n = t->child_cache[i];

	if (n && n->key == key && n->kind == kind &&
	    n->parent == (parent ? parent : &t->seg->root))
		return n;
	n = sr_cct_child(t->seg, parent, kind, key);
	t->child_cache[i] = n;
	return n;
}

/* A new frame of node n entered at t0, by0 left to the caller. Field by
 * field: a compound literal is zeroed whole first, and for its 136 bytes
 * GCC emits rep stos, whose start-up cost was 5 % of report's time on a
 * trace of short calls. */
static void frame_init(struct frame *f, struct sr_node *n, uint64_t t0, uint8_t flags)
{
	f->node = f->leaf = n;
	f->ictx = 0;
	f->ilo = f->ihi = 0;
	f->ibase = 0;
	f->ninl = 0;
	f->iset = false;
	f->alias = f->from = f->site = 0;
	f->t0 = t0;
	f->stub0 = n->self_by[SR_TIME_USER];
	f->flags = flags;
}

static int push_frame(struct sr_machine *m, struct thread *t, uint64_t key,
		      uint64_t t0, uint8_t flags)
{
	struct sr_node *n;

	if (t->nframes)
		t->frames[t->nframes - 1].flags |= F_CALLED;
	if (t->nframes >= SR_MAX_DEPTH) {
		m->st.depth_overflows++;
		return 0;
	}
	if (dc_vec_reserve32((void **)&t->frames, &t->cap, t->nframes + 1, sizeof(*t->frames), 32))
		return -ENOMEM;
	n = top_node(t);
	if (t->nframes >= (m->opt.max_stack ? m->opt.max_stack : SR_DEFAULT_MAX_STACK)) {
		/* too deep: a [truncated] frame under the last kept one (the
		 * frame keeps its key, so returns still match it) */
		m->st.truncated++;
		if (n->kind == SR_NODE_TRUNCATED)
			n = n->parent;
		n = seg_child(t, n, SR_NODE_TRUNCATED, key);
	} else {
		n = seg_child(t, n, SR_NODE_FUNC, key);
	}
	if (!n)
		return -ENOMEM;
	frame_init(&t->frames[t->nframes], n, t0, flags);
	/* (only an inferred caller made by underflow() starts before now: at
	 * its segment's start; by0 is read only for on_call) */
	if (m->opt.on_call)
		memcpy(t->frames[t->nframes].by0, t0 == t->last_ns ? t->st.traced_by : t->seg_by,
		       sizeof(t->seg_by));
	if (t->nframes) {
		const struct frame *below = &t->frames[t->nframes - 1];

		t->frames[t->nframes].ibase = below->ibase + below->ninl;
	}
	t->nframes++;
	return 0;
}

/* The inline context of ip for the top frame: given by the event (inl,
 * context + 1), else the symbolizer's (and the range around ip with it). */
static uint32_t context_of(struct sr_machine *m, struct frame *f, uint32_t pid, uint64_t ip,
			   uint32_t inl)
{
	if (inl) {
		f->ilo = f->ihi = 0;
		return inl - 1;
	}
	return m->sym->inline_at(m->sym->ctx, pid, ip, &f->ilo, &f->ihi);
}

/* The top frame executes at ip: its inline frames become those of ip's
 * inline context. Frames of instances left end (a complete call when
 * their entry was seen); instances entered start a call now, inferred
 * only when the frame's first context is set with its entry unseen. */

static int set_inline(struct sr_machine *m, struct thread *t, uint32_t pid, uint64_t ip,
		      uint32_t inl, uint64_t now)
{
	struct frame *f = &t->frames[t->nframes - 1];
	uint32_t c = context_of(m, f, pid, ip, inl), ids[2 * MAX_INLINE];
	uint64_t keys[2 * MAX_INLINE];
	uint32_t n = 0, k = 0, id;
	bool inferred = !f->iset && (f->flags & F_INFERRED);
	struct sr_node *parent;

	f->iset = true;
	if (f->node->kind != SR_NODE_FUNC)
		f->ilo = f->ihi = 0;  /* ([truncated]: none) */
	if (c == f->ictx || f->node->kind != SR_NODE_FUNC)
		return 0;
	/* the chain, innermost first, then turned round; deeper than
	 * MAX_INLINE, the outermost MAX_INLINE are kept */
	for (id = c; id && n < 2 * MAX_INLINE; n++) {
		id = m->sym->inline_up(m->sym->ctx, id, &keys[n]);
		ids[n] = id;
	}
	/* (ids[i] holds the parent of keys[i]: shift to the instance) */
	for (uint32_t i = n; i-- > 1;)
		ids[i] = ids[i - 1];
	if (n)
		ids[0] = c;
	if (n > MAX_INLINE) {
		memmove(ids, ids + (n - MAX_INLINE), MAX_INLINE * sizeof(*ids));
		memmove(keys, keys + (n - MAX_INLINE), MAX_INLINE * sizeof(*keys));
		n = MAX_INLINE;
	}
	for (uint32_t i = 0; i < n / 2; i++) {
		uint32_t ti = ids[i];
		uint64_t tk = keys[i];

		ids[i] = ids[n - 1 - i];
		keys[i] = keys[n - 1 - i];
		ids[n - 1 - i] = ti;
		keys[n - 1 - i] = tk;
	}
	while (k < f->ninl && k < n && t->inl[f->ibase + k].ctx == ids[k])
		k++;
	while (f->ninl > k) {
		const struct inl *e = &t->inl[f->ibase + --f->ninl];
		int ret = end_call(m, t, e->node, e->t0, e->by0,
				   t->nframes + f->ibase + f->ninl, now, !e->inferred);

		if (ret)
			return ret;
	}
	if (dc_vec_reserve32((void **)&t->inl, &t->icap, f->ibase + n, sizeof(*t->inl), 16))
		return -ENOMEM;
	parent = k ? t->inl[f->ibase + k - 1].node : f->node;
	for (; k < n; k++) {
		struct sr_node *node = seg_child(t, parent, SR_NODE_FUNC, keys[k]);

		if (!node)
			return -ENOMEM;
		t->inl[f->ibase + k] = (struct inl){ .node = node, .t0 = now, .ctx = ids[k],
						    .inferred = inferred };
		memcpy(t->inl[f->ibase + k].by0, t->st.traced_by, sizeof(t->st.traced_by));
		f->ninl++;
		parent = node;
	}
	f->leaf = parent;
	f->ictx = c;
	return 0;
}

static int push_pseudo(struct thread *t, enum sr_node_kind kind, uint64_t key,
		       enum sr_time_kind time_kind, uint64_t now)
{
	struct sr_node *parent = t->nkf && t->nps - 1 == t->kps ? t->kf[t->nkf - 1].node :
				 t->nps ? t->ps[t->nps - 1].node : top_node(t);
	struct sr_node *n;

	if (t->nps == MAX_PSEUDO)
		return 0;
	n = seg_child(t, parent, kind, key);
	if (!n)
		return -ENOMEM;
	if (t->nframes)
		t->frames[t->nframes - 1].flags |= F_CALLED;
	t->ps[t->nps] = (struct pseudo){ .node = n, .t0 = now, .time_kind = (uint8_t)time_kind };
	memcpy(t->ps[t->nps++].by0, t->st.traced_by, sizeof(t->st.traced_by));
	return 0;
}

/* Topmost frame below the top with this function, or -1. */
static int find_below(const struct thread *t, uint64_t key)
{
	for (int i = (int)t->nframes - 2; i >= 0; i--)
		if (frame_is(&t->frames[i], key))
			return i;
	return -1;
}

/* Throw the stack away and start a new segment at now. */
/* A switch-out at the very end (the recorder stopped, the thread exited)
 * is no wait: no "[off-cpu]:1(inferred)" of 0 ns. (A kernel entry there is
 * kept: the thread did make that call.) */
static void drop_final_switch(struct thread *t, uint64_t now)
{
	while (t->nps && t->ps[t->nps - 1].t0 == now &&
	       (t->ps[t->nps - 1].node->kind == SR_NODE_OFFCPU ||
		t->ps[t->nps - 1].node->kind == SR_NODE_PREEMPT)) {
		struct sr_node *n = t->ps[--t->nps].node;

		/* made for this entry alone: no node of 0 calls is left
		 * behind (tables list every node) */
		if (!n->calls && !n->self_ns && !n->first_child)
			sr_cct_detach(t->seg, n);
	}
}

static int end_segment(struct sr_machine *m, struct thread *t, uint64_t now)
{
	int ret = 0;

	drop_final_switch(t, now);
	while (t->nps && !ret)
		ret = pop_pseudo(m, t, now, false);

	if (!ret)
		ret = pop_to(m, t, 0, now, false);
	if (m->wk)
		wake_new_segment(t);
	t->seg_t0 = now;
	memcpy(t->seg_by, t->st.traced_by, sizeof(t->seg_by));
	if (ret || !t->seg->root.first_child)
		return ret;
	ret = sr_cct_merge_subtree(m->work, t->work_node, &t->seg->root, false, NULL);
	sr_cct_free(t->seg);
	memset(t->child_cache, 0, sizeof(t->child_cache));
	t->seg = sr_cct_new(m->sym);
	return ret ? ret : t->seg ? 0 : -ENOMEM;
}

static void rchain_add(struct thread *t, uint64_t key)
{
	t->rchain[t->nrchain++ % RCHAIN_N] = key;
}

/* Has the segment's root frame been function key before (see
 * thread.rchain)? */
static bool rchain_has(const struct thread *t, uint64_t key)
{
	uint32_t n = t->nrchain < RCHAIN_N ? t->nrchain : RCHAIN_N;

	for (uint32_t i = 0; i < n; i++)
		if (t->rchain[i] == key)
			return true;
	return false;
}

/* The stack is empty: the function we are in becomes its root. Anything the
 * segment holds (pseudo-frames with no stack) stays where it was. */
static int establish_root(struct sr_machine *m, struct thread *t, uint64_t key,
			  uint64_t now, uint8_t flags)
{
	if (t->nps || t->seg->root.first_child) {
		int ret = end_segment(m, t, now);

		if (ret)
			return ret;
	}
	t->seg_t0 = now;
	memcpy(t->seg_by, t->st.traced_by, sizeof(t->seg_by));
	t->nrchain = 0;
	rchain_add(t, key);
	return push_frame(m, t, key, now, flags);
}

enum resync_mode {
	RS_RESET,   /* not proven by the stack: throw it away               */
	RS_ASYNC,   /* back from the kernel: maybe a signal handler         */
};

/* What resync() returns when, after a loss, it kept frames below the
 * function the trace resumed in: the thread's next events wait for that
 * function's return (hold_take). */
enum { RS_KEPT = 2 };

static int kept(const struct sr_machine *m, struct thread *t, uint64_t now, uint64_t ip,
		uint8_t root_flags)
{
	if (!t->nframes || m->replaying)
		return 0;
	t->hold.t0 = now;
	t->hold.ip = ip;
	t->hold.root_flags = root_flags;
	return RS_KEPT;
}

/* Where the kernel resumed user mode, as the ip tells. */
enum resume_at {
	AT_UNKNOWN, /* no func_start, or no symbol there                    */
	AT_ENTRY,   /* a function's first byte                              */
	AT_MIDDLE,  /* inside a function                                    */
};

/* Throw the stack away; key is a new root (an inferred call unless entered
 * at its first byte). */
static int reset_to(struct sr_machine *m, struct thread *t, uint64_t key,
		    uint64_t now, uint8_t root_flags)
{
	int ret;

	t->st.resets++;
	m->st.resets++;
	ret = end_segment(m, t, now);
	return ret ? ret : establish_root(m, t, key, now, root_flags);
}

/* Back from the kernel in function key, which is not on the stack.
 * A signal handler starts at a function's first byte; code resumed in the
 * middle of a function was interrupted there, below anything this stack
 * saw (sigreturn after a trace started inside the handler): a new segment,
 * whose callers come from the returns above it. After rt_sigreturn even a
 * first byte is interrupted code (the signal came just after the call),
 * unless the trampoline had the interrupted frames below it: then the
 * sigreturn unblocked a pending signal, whose handler runs on them. */
static int resume_unseen(struct sr_machine *m, struct thread *t, uint64_t key,
			 uint64_t now, enum resume_at at, bool sigreturn)
{
	int ret;

	if (sigreturn && at == AT_ENTRY && t->nframes > 1) {
		ret = pop_frame(m, t, now, true);
		return ret ? ret : push_frame(m, t, key, now, F_ASYNC);
	}
	if (sigreturn || at == AT_MIDDLE)
		return reset_to(m, t, key, now, F_INFERRED);
	return push_frame(m, t, key, now, F_ASYNC);
}

/* How many frames hold key: more than one is recursion, whose depth after
 * a loss is unknown (the calls and returns just before an OVF that took no
 * packet are not decoded, by libipt nor by perf), so it proves nothing. */
static unsigned occurrences(const struct thread *t, uint64_t key)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < t->nframes; i++)
		n += t->frames[i].node->key == key;
	return n;
}

/* Has function key been seen calling itself (a call from its frame to
 * it, a return from it into it)? After a loss, execution in such a
 * function proves nothing about which level of it runs: the calls and
 * returns the loss took may have moved it up or down, and keeping the
 * frame found would hang what follows at the wrong depth (main;rec;tiny
 * where main called rec four levels further down, the returns seen after
 * the gap stacking one inferred rec each). */
static bool recursive(const struct sr_machine *m, uint64_t key)
{
	uint64_t v;

	return dc_hash_get(&m->recur, key, &v);
}

/* Does the stack, up to the frame of key the trace resumed in (the top,
 * or the frame of it further down it would pop to), hold a function whose
 * depth a loss may have changed: one seen calling itself, or one on the
 * stack twice (mutual recursion)? The frames kept across a loss then prove
 * nothing about the levels between: the loss may have taken returns up
 * out of the levels kept and calls back down to the function resumed in,
 * and the returns seen after it would underflow past the kept levels into
 * more (main;rec x 11 where rec recursed 9 deep: a stress recording of
 * emu_fault). Recursion above that frame is popped anyway. */
static int depth_unknown(struct sr_machine *m, const struct thread *t, uint64_t key)
{
	int upto = top_is(t, key) ? (int)t->nframes - 1 : find_below(t, key);

	dc_hash_clear(&m->seen_keys);
	for (int i = 0; i <= upto; i++) {
		uint64_t k = t->frames[i].node->key, v;

		if (k == UINT64_MAX)    /* (the map's empty slot: no function's) */
			continue;
		if (recursive(m, k) || dc_hash_get(&m->seen_keys, k, &v))
			return 1;
		if (dc_hash_put(&m->seen_keys, k, 1))
			return -ENOMEM;
	}
	return 0;
}

static struct key_bits *kb_slot(const struct sr_machine *m, uint64_t key)
{
	return &m->kbits[(key ^ (key >> 32) ^ (key >> 10)) & (KEY_BITS_N - 1)];
}

static inline unsigned key_bits(const struct sr_machine *m, uint64_t key);

static __attribute__((noinline)) int note_recursive_slow(struct sr_machine *m, uint64_t key)
{
	m->recur_last = key + 1;
	if (key_bits(m, key) & KB_RECUR)
		return 0;
	kb_slot(m, key)->bits |= KB_RECUR;
	/* (UINT64_MAX is the map's empty slot: no key of a function) */
	return key == UINT64_MAX ? 0 : dc_hash_put(&m->recur, key, 1);
}

/* Note that key called itself. (A recursion noted before is not hashed
 * again: the last key noted, or the key's cache entry, says so.) */
static inline int note_recursive(struct sr_machine *m, uint64_t key)
{
	return key + 1 == m->recur_last ? 0 : note_recursive_slow(m, key);
}

static bool unnamed(const struct sr_machine *m, uint64_t key);
static bool entered_again(const struct thread *t, uint64_t key);

/* After a loss, execution resumed at ip in function key, whose frame i is
 * further down the stack (the loss took the returns out of the frames
 * above it). Does that frame prove its callers? Not when ip is key's first
 * byte (resync: a frame further down is past it, in a call it made; only a
 * new call of key runs its first byte, and the loss hid who made it: in two
 * of find's functions that call each other, A calling B calling A, an OVF
 * took A's second call of B, and the trace resumed at B's first byte;
 * popping to the B below put what followed two levels too high, a path
 * find never had, stress seeds 9145 and 9176). Nor when ip lies before
 * the call that frame made last (the call the frames above came from:
 * going on in the same call needs a jump back) and the function runs
 * more than once in the thread: the loss may as well have taken its
 * return, and callers', and a new call of it from elsewhere, entered at
 * its start (sqlite3: a loss in sqlite3FindFunction, called from
 * sqlite3_create_window_function, resumed at the start of a later
 * sqlite3FindFunction, called from sqlite3_create_function, and its
 * callees hung under the first's callers). Counted only here, a walk of
 * the thread's trees, never on every call. */
static bool resumed_anew(const struct thread *t, uint32_t i, uint64_t key, uint64_t ip,
			 enum resume_at at)
{
	uint64_t site = t->frames[i].site;

	return at == AT_ENTRY || (ip && site && ip < site && entered_again(t, key));
}

static bool top_is_stub_of(const struct sr_machine *m, const struct thread *t, uint64_t key);
static int stub_jump(struct sr_machine *m, struct thread *t, uint64_t key, uint64_t now);

/* Execution is now in function key (at ip, 0: not known). Keep what the
 * stack proves. A new root at_entry (trace started exactly at a
 * function's first instruction) has its call start seen. */
static int resync(struct sr_machine *m, struct thread *t, uint64_t key, uint64_t ip,
		  uint64_t now, enum resync_mode mode, enum resume_at at,
		  bool sigreturn)
{
	uint8_t root_flags = at == AT_ENTRY ? 0 : F_INFERRED;
	int i;

	if (!t->nframes)
		return establish_root(m, t, key, now, root_flags);
	/* After a loss, resumed at a function's first byte with that
	 * function's PLT stub on top (its call seen, its jump lost): the
	 * stub's jump, taken as sync_top takes a seen one. Whatever else the
	 * loss hid, the stub's caller calls key: a frame of key further down
	 * proves nothing (dlopen's _dl_open calls _dl_catch_exception through
	 * its stub inside an outer _dl_catch_exception: popping to that one
	 * made paths the program never had, stress seed 4929). */
	if (mode == RS_RESET && t->since_loss && at == AT_ENTRY && top_is_stub_of(m, t, key)) {
		int ret = stub_jump(m, t, key, now);

		t->unproven = t->nframes - 1;
		return ret ? ret : kept(m, t, now, ip, root_flags);
	}
	/* (after a loss, nor does a frame of unnamed code: all of a
	 * binary's unnamed code is one key, so the code resumed in may be
	 * another function of it, called unseen: crtstuff's
	 * __do_global_dtors_aux and deregister_tm_clones in libstdc++) */
	if (mode == RS_RESET) {
		int d = occurrences(t, key) > 1;

		if (!d && t->since_loss)
			d = recursive(m, key) || unnamed(m, key) ? 1 : depth_unknown(m, t, key);
		if (d)
			return d < 0 ? d : reset_to(m, t, key, now, root_flags);
	}
	if (mode == RS_RESET) {
		/* (a stack kept across a loss: its root frame proves no
		 * roots it was before) */
		t->nrchain = 0;
		rchain_add(t, t->frames[0].node->key);
	}
	if (top_is(t, key)) {
		if (mode != RS_RESET)
			return 0;
		t->unproven = t->nframes - 1;
		return t->since_loss ? kept(m, t, now, ip, root_flags) : 0;
	}
	/* (out of the kernel into unnamed code, a signal handler of a
	 * stripped binary say: a frame below of the same key proves
	 * nothing, all of a binary's unnamed code is one key, as for a
	 * jump) */
	i = mode == RS_ASYNC && !sigreturn && unnamed(m, key) ? -1 : find_below(t, key);
	if (i >= 0 && mode == RS_RESET && t->since_loss && resumed_anew(t, (uint32_t)i, key, ip, at))
		return reset_to(m, t, key, now, root_flags);
	if (i >= 0) {
		int ret = pop_to(m, t, (uint32_t)i + 1, now, mode == RS_ASYNC);

		if (ret || mode != RS_RESET)
			return ret;
		t->unproven = (uint32_t)i;
		return t->since_loss ? kept(m, t, now, ip, root_flags) : 0;
	}
	if (mode == RS_ASYNC)
		return resume_unseen(m, t, key, now, at, sigreturn);
	return reset_to(m, t, key, now, root_flags);
}

/* A return (or an unwinder's jump) to a function that is not on the stack:
 * the trace started below it. Everything this segment accounted so far ran
 * under that function. all_end: every frame ends here (a longjmp past the
 * root), else only the top one (a return). */
static int underflow(struct sr_machine *m, struct thread *t, uint64_t key, uint64_t now,
		     bool all_end)
{
	struct sr_node *list = NULL, *c, *caller;
	int ret = pop_frame(m, t, now, true);

	if (!ret)
		ret = pop_to(m, t, 0, now, all_end);
	if (ret)
		return ret;
	while ((c = t->seg->root.first_child)) {
		sr_cct_detach(t->seg, c);
		c->next_sibling = list;
		list = c;
	}
	caller = sr_cct_child(t->seg, NULL, SR_NODE_FUNC, key);
	for (struct sr_node *next; list; list = next) {
		next = list->next_sibling;
		list->next_sibling = NULL;
		if (caller)
			sr_cct_attach(t->seg, caller, list);
	}
	if (!caller || (m->wk && wake_underflow(m, t, key)))
		return -ENOMEM;
	/* (key called the roots before it: key itself among them is a
	 * recursion through them, seen by its returns) */
	if (rchain_has(t, key) && note_recursive(m, key))
		return -ENOMEM;
	rchain_add(t, key);
	t->st.underflows++;
	m->st.underflows++;
	/* The caller made the call that returned into it: F_CALLED, or a
	 * lazy resolver's frame would fold into the symbol it then jumps to
	 * and leave its node, which holds that callee, with no call. */
	return push_frame(m, t, key, t->seg_t0, F_INFERRED | F_CALLED);
}

/* The unwinder's entry points that end in a jump to a landing pad (libgcc's
 * and their SjLj forms). Not every _Unwind_ name: _Unwind_DeleteException
 * tail-calls the exception's cleanup function (libstdc++'s has no symbol),
 * which would have been taken for a landing pad in the nearest unnamed
 * frame below. (LLVM's libunwind gets there by a return.) */
static bool is_unwinder(const char *name)
{
	static const char *const pads[] = { "RaiseException", "Resume", "Resume_or_Rethrow",
					    "ForcedUnwind" };

	if (strncmp(name, "_Unwind_", 8))
		return false;
	name += 8;
	if (!strncmp(name, "SjLj_", 5))
		name += 5;
	for (size_t i = 0; i < sizeof(pads) / sizeof(pads[0]); i++)
		if (!strcmp(name, pads[i]))
			return true;
	return false;
}

/* ucontext's functions that restore a saved context and return into it:
 * glibc's (setcontext, swapcontext, and their "__" names) and
 * libucontext's. */
static bool is_context_switcher(const char *name)
{
	static const char *const fns[] = { "setcontext", "swapcontext" };

	if (!strncmp(name, "libucontext_", 12))
		name += 12;
	else if (!strncmp(name, "__", 2))
		name += 2;
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (!strcmp(name, fns[i]))
			return true;
	return false;
}

static unsigned key_flags_of(const struct sr_machine *m, uint64_t key)
{
	const char *name;
	size_t len;

	if (m->opt.func_flags)
		return m->opt.func_flags(m->sym->ctx, key);
	name = m->sym->name ? m->sym->name(m->sym->ctx, key) : NULL;
	if (!name)
		return 0;
	len = strlen(name);
	/* (perf script names .plt.sec / .plt.got slots "_init+0x..": _init
	 * itself never jumps to another function) */
	if ((len >= 4 && !strcmp(name + len - 4, "@plt")) || !strcmp(name, "_init") ||
	    !strncmp(name, "_dl_runtime_resolve", 19))
		return SR_FUNC_STUB;
	if (strstr(name, "longjmp") || is_unwinder(name))
		return SR_FUNC_UNWIND;
	if (!strcmp(name, "gogo") || !strcmp(name, "runtime.gogo"))
		return SR_FUNC_SWITCH;  /* not runtime.gogo.abi0: it jumps to gogo */
	if (is_context_switcher(name))
		return SR_FUNC_CONTEXT;
	if (!strcmp(name, "__restore_rt") || !strcmp(name, "__restore") ||
	    !strcmp(name, "__kernel_rt_sigreturn") || !strcmp(name, "__vdso_rt_sigreturn"))
		return SR_FUNC_SIGRETURN;
	return 0;
}

static __attribute__((noinline)) unsigned key_bits_fill(const struct sr_machine *m,
							 struct key_bits *e, uint64_t key);

/* key_flags and unnamed of a key, from the per-key cache (the hit inline). */
static inline unsigned key_bits(const struct sr_machine *m, uint64_t key)
{
	struct key_bits *e = kb_slot(m, key);

	return (e->bits & KB_VALID) && e->key == key ? e->bits : key_bits_fill(m, e, key);
}

/* key_bits of a key not in its cache entry e: asked, and kept there. */
static unsigned key_bits_fill(const struct sr_machine *m, struct key_bits *e, uint64_t key)
{
	const char *name;

	name = m->sym && m->sym->name ? m->sym->name(m->sym->ctx, key) : NULL;
	e->key = key;
	e->bits = (uint16_t)(KB_VALID | (!name || name[0] == '[' ? KB_UNNAMED : 0) |
			    (m->sym ? key_flags_of(m, key) & 0x3f : 0));
	return e->bits;
}

static unsigned key_flags(const struct sr_machine *m, uint64_t key)
{
	return key_bits(m, key) & 0x3f;
}

static unsigned func_flags(const struct sr_machine *m, const struct sr_node *n)
{
	return n->kind == SR_NODE_FUNC || n->kind == SR_NODE_TRUNCATED ? key_flags(m, n->key) : 0;
}

/* Code without a function symbol: "[unknown] (dso)", "[.plt]", ... Where
 * it "starts" says nothing of entries. (Code the decoder names by its FDE,
 * "file+0xADDR", is a function with a key and entry of its own: named.) */
static bool unnamed(const struct sr_machine *m, uint64_t key)
{
	return key_bits(m, key) & KB_UNNAMED;
}

/* Is the syscall entered now rt_sigreturn? Its number tells when known;
 * else the frame making it: the trampoline a handler returned into, or one
 * named like it (the handler's return was not seen: trace started in it). */
static bool is_sigreturn(const struct sr_machine *m, const struct thread *t, uint32_t sysno)
{
	const struct frame *top;

	if (sysno != UINT32_MAX)
		return sysno == NR_RT_SIGRETURN;
	if (!t->nframes)
		return false;
	top = &t->frames[t->nframes - 1];
	return (top->flags & F_TRAMP) || (func_flags(m, top->node) & SR_FUNC_SIGRETURN);
}

/* Does a function with these key_bits only jump on (a PLT stub, the lazy
 * resolver) or have no name (the PLT header)? (One lookup for both: a
 * sqlite3 trace folds a stub every eighth event.) */
static bool stub_bits(unsigned kb)
{
	return (kb & KB_UNNAMED) || (kb & SR_FUNC_STUB);
}

/* The top frame is a PLT stub (or the lazy resolver, or unnamed code: the
 * PLT header a stub jumps to, a slot perf script cannot name) and jumps on
 * to key: unless show_plt, it is the
 * same call going on in key, as perf shows it. The frame takes key's node
 * under the same parent, keeps its start (so the call's latency covers the
 * stub), and this call's self time in the stub moves with it. A stub call
 * that made calls (the lazy resolver binding the symbol: _dl_fixup; an
 * interrupt in the stub) stays a frame of its own, so that every frame
 * with callees has calls. That is decided per call, not by whether the
 * stub's node has callees from an earlier call: otherwise how a stub
 * folds would depend on the history of its context, and contexts are split
 * further by inline frames. Returns 1 when folded. */
static int fold_stub(struct sr_machine *m, struct thread *t, uint64_t key)
{
	struct frame *top = &t->frames[t->nframes - 1];
	struct sr_node *stub = top->node, *n;
	uint64_t mine;

	if (m->opt.show_plt || stub->kind != SR_NODE_FUNC || (top->flags & F_CALLED) ||
	    (!(top->flags & F_STUB) && !stub_bits(key_bits(m, stub->key))))
		return 0;
	n = seg_child(t, stub->parent, SR_NODE_FUNC, key);
	if (!n)
		return -ENOMEM;
	/* A frame with nothing on top gets user time only (a pseudo frame
	 * would take any other kind), all of it since it became this node. */
	mine = stub->self_by[SR_TIME_USER] - top->stub0;
	stub->self_by[SR_TIME_USER] -= mine;
	top->stub0 = n->self_by[SR_TIME_USER];
	n->self_by[SR_TIME_USER] += mine;
	top->node = top->leaf = n;
	top->ilo = top->ihi = 0;
	top->alias = 0;
	top->flags &= (uint8_t)~F_STUB;
	if (stub_bits(key_bits(m, key)))
		top->flags |= F_STUB;
	return 1;
}

/* Is the top frame key's PLT stub ("NAME@plt", NAME key's name)? Only
 * the name tells a stub's target before its jump; a resume elsewhere after
 * a loss (usleep@plt on top, resumed at the start of the __nanosleep that
 * usleep calls) proves nothing of where the stub went. */
static bool top_is_stub_of(const struct sr_machine *m, const struct thread *t, uint64_t key)
{
	const struct frame *top = &t->frames[t->nframes - 1];
	const char *stub, *name;
	size_t n;

	if (top->node->kind != SR_NODE_FUNC || !m->sym || !m->sym->name ||
	    !(name = m->sym->name(m->sym->ctx, key)) ||
	    !(stub = m->sym->name(m->sym->ctx, top->node->key)))
		return false;
	n = strlen(name);
	return !strncmp(stub, name, n) && !strcmp(stub + n, "@plt");
}

static int replace_top(struct sr_machine *m, struct thread *t, uint64_t key, uint64_t now,
		       uint8_t flags);

/* The top frame, a PLT stub, jumped on to key: the stub's call becomes
 * key's (fold_stub), or, where that call made calls or --show-plt keeps
 * stubs as frames, key's call replaces it (as sync_top does with a jump
 * seen). */
static int stub_jump(struct sr_machine *m, struct thread *t, uint64_t key, uint64_t now)
{
	int ret = fold_stub(m, t, key);

	if (ret)
		return ret < 0 ? ret : 0;
	return replace_top(m, t, key, now, t->frames[t->nframes - 1].flags & F_ASYNC);
}

/* The top frame's function jumps on to key's, a call of its own under the
 * same caller (a tail call; a hot part's jump into its .cold part and back),
 * which remembers the function it came from. */
static int replace_top(struct sr_machine *m, struct thread *t, uint64_t key, uint64_t now,
		       uint8_t flags)
{
	uint64_t from = t->frames[t->nframes - 1].node->key;
	uint32_t n = t->nframes;
	int ret = pop_frame(m, t, now, true);

	if (!ret)
		ret = push_frame(m, t, key, now, flags);
	if (!ret && t->nframes == n)
		t->frames[n - 1].from = from;
	return ret;
}

/* The thread is executing in function key (a branch's source), and it is
 * not the top frame: a jump went unseen (`perf script --itrace=cr` shows
 * none). Out of a longjmp or an exception unwinder, it went into a frame
 * further down: pop to it. Out of anything else (a PLT stub, the lazy
 * resolver, a tail call), key replaces the top frame, even when key is
 * further down too (recursion; overloads sharing a name): popping real
 * frames on a wrong guess would damage every stack after it, while a wrong
 * replacement heals at the next return. add: flags of the frame pushed for
 * key besides the top's F_ASYNC (F_INFERRED when a return went there). */
static int sync_top_other(struct sr_machine *m, struct thread *t, uint64_t key, uint64_t now,
			  uint8_t add);

/* (the top frame is key's nearly always: that test inline) */
static inline int sync_top(struct sr_machine *m, struct thread *t, uint64_t key, uint64_t now,
			   uint8_t add)
{
	return frame_is(&t->frames[t->nframes - 1], key) ? 0 : sync_top_other(m, t, key, now, add);
}

static int sync_top_other(struct sr_machine *m, struct thread *t, uint64_t key, uint64_t now,
			  uint8_t add)
{
	struct frame *top = &t->frames[t->nframes - 1];
	uint8_t flags = (top->flags & F_ASYNC) | add;
	int i, ret;

	/* With every jump shown, nothing but falling through gets here: a
	 * label or alias symbol inside the function (glibc's __write running
	 * into __write_nocancel), or code running on into the next symbol.
	 * No call: the same frame. */
	if (t->jumps_seen) {
		top->alias = key;
		return 0;
	}
	t->st.repairs++;
	m->st.repairs++;
	if ((func_flags(m, top->node) & SR_FUNC_UNWIND) && (i = find_below(t, key)) >= 0)
		return pop_to(m, t, (uint32_t)i + 1, now, true);
	if ((ret = fold_stub(m, t, key)))
		return ret < 0 ? ret : 0;
	return replace_top(m, t, key, now, flags);
}

/* Before a user-mode branch: leave any pseudo state, resync after a loss,
 * give an empty stack its root, and pop frames the branch proves returned
 * unseen (its source lies in a frame further down). */
static int user_prep(struct sr_machine *m, struct thread *t, uint32_t pid,
		     uint64_t from_ip, uint64_t now)
{
	uint64_t key;
	int ret = pop_all_pseudo(m, t, now, false);

	if (ret)
		return ret;
	if (!from_ip) {
		if (t->need_resync || t->fresh) {
			t->need_resync = false;
			if (t->nframes) {
				t->st.resets++;
				m->st.resets++;
			}
			return end_segment(m, t, now);
		}
		return 0;
	}
	key = key_of(m, pid, from_ip);
	if (t->need_resync || t->fresh) {
		t->need_resync = false;
		return resync(m, t, key, from_ip, now, RS_RESET, AT_UNKNOWN, false);
	}
	if (!t->nframes)
		return establish_root(m, t, key, now, F_INFERRED);
	return sync_top(m, t, key, now, 0);
}


/* ---- kernel code (frames under [kernel]) ---- */

static int kpush(struct sr_machine *m, struct thread *t, uint64_t key, uint64_t now,
		 uint8_t flags)
{
	struct sr_node *parent, *n;

	if (!t->nkf) {
		if (!t->nps || t->ps[t->nps - 1].node->kind != SR_NODE_KERNEL)
			return 0;
		t->kps = t->nps - 1;
	}
	if (t->nkf >= SR_MAX_DEPTH) {
		m->st.depth_overflows++;
		return 0;
	}
	if (dc_vec_reserve32((void **)&t->kf, &t->kcap, t->nkf + 1, sizeof(*t->kf), 16))
		return -ENOMEM;
	parent = t->nkf ? t->kf[t->nkf - 1].node : t->ps[t->kps].node;
	n = seg_child(t, parent, SR_NODE_FUNC, key);
	if (!n)
		return -ENOMEM;
	t->kf[t->nkf] = (struct frame){ .node = n, .t0 = now, .flags = flags };
	memcpy(t->kf[t->nkf++].by0, t->st.traced_by, sizeof(t->st.traced_by));
	return 0;
}

static int kpop_to(struct sr_machine *m, struct thread *t, uint32_t keep, uint64_t now)
{
	int ret = 0;

	while (t->nkf > keep && !ret) {
		struct frame *f = &t->kf[--t->nkf];

		ret = end_call(m, t, f->node, f->t0, f->by0, stack_depth(t) + t->kps + 1 + t->nkf, now,
			       !(f->flags & F_INFERRED));
	}
	return ret;
}

static int kfind_below(const struct thread *t, uint64_t key)
{
	for (int i = (int)t->nkf - 2; i >= 0; i--)
		if (frame_is(&t->kf[i], key))
			return i;
	return -1;
}

/* The kernel runs in function key: its top frame, a label fallen into
 * (every jump shown), or else a jump went unseen: key replaces the top. */
static int ksync(struct sr_machine *m, struct thread *t, uint64_t key, uint64_t now)
{
	int ret;

	if (!t->nkf)
		return kpush(m, t, key, now, F_INFERRED);
	if (frame_is(&t->kf[t->nkf - 1], key))
		return 0;
	if (t->jumps_seen) {
		t->kf[t->nkf - 1].alias = key;
		return 0;
	}
	ret = kpop_to(m, t, t->nkf - 1, now);
	return ret ? ret : kpush(m, t, key, now, F_INFERRED);
}

/* The thread runs kernel code: on its current stack under [kernel] (a
 * kernel entry the trace did not show, or one after a loss: the stack is
 * proven, or not, when user code resumes). */
static int enter_kernel(struct sr_machine *m, struct thread *t, uint64_t now)
{
	int ret = 0;

	while (t->nps && t->ps[t->nps - 1].node->kind != SR_NODE_KERNEL && !ret)
		ret = pop_pseudo(m, t, now, true);
	if (ret || t->nps)
		return ret;
	t->last_sysno = UINT32_MAX;
	t->sigreturn = false;
	return push_pseudo(t, SR_NODE_KERNEL, SR_KEY_NONE, SR_TIME_KERNEL, now);
}

static uint64_t start_of(const struct sr_machine *m, uint32_t pid, uint64_t ip)
{
	return m->sym && m->sym->func_start ? m->sym->func_start(m->sym->ctx, pid, ip) : 0;
}

/* A branch of kernel code, or a trace (re)starting in the kernel: the same
 * rules as user code, on the kernel frames above [kernel]. */
static int on_kernel(struct sr_machine *m, struct thread *t, const struct dc_event *ev,
		     uint64_t now)
{
	uint64_t kto = key_of(m, ev->pid, ev->to_ip), start, from;
	int ret = enter_kernel(m, t, now), i;
	uint32_t n;

	if (ret)
		return ret;
	if (ev->kind == DC_EV_TRACE_ON) {
		if (t->nkf)
			return ksync(m, t, kto, now);
		return kpush(m, t, kto, now,
			     start_of(m, ev->pid, ev->to_ip) == ev->to_ip ? 0 : F_INFERRED);
	}
	if (ev->from_ip && (ret = ksync(m, t, key_of(m, ev->pid, ev->from_ip), now)))
		return ret;
	if (!dc_ip_is_kernel(ev->to_ip))
		return 0;
	switch (ev->kind) {
	case DC_EV_CALL:
		return kpush(m, t, kto, now, 0);
	case DC_EV_RETURN:
		i = kfind_below(t, kto);
		if (i >= 0)
			return kpop_to(m, t, (uint32_t)i + 1, now);
		/* above the kernel frames seen: the caller replaces them */
		ret = kpop_to(m, t, t->nkf ? t->nkf - 1 : 0, now);
		return ret ? ret : ksync(m, t, kto, now);
	default:
		if (t->nkf && frame_is(&t->kf[t->nkf - 1], kto))
			return 0;
		start = start_of(m, ev->pid, ev->to_ip);
		i = kfind_below(t, kto);
		/* (back into the function the top frame jumped out of, a .cold
		 * part rejoining: no unwinding, as in user code) */
		if (t->nkf && t->kf[t->nkf - 1].from == kto)
			i = -1;
		if (i >= 0 && start && start != ev->to_ip && !unnamed(m, kto))
			return kpop_to(m, t, (uint32_t)i + 1, now);
		from = t->nkf ? t->kf[t->nkf - 1].node->key : 0;
		n = t->nkf;
		ret = kpop_to(m, t, t->nkf ? t->nkf - 1 : 0, now);
		if (!ret)
			ret = kpush(m, t, kto, now, start == ev->to_ip ? 0 : F_INFERRED);
		if (!ret && n && t->nkf == n)
			t->kf[n - 1].from = from;
		return ret;
	}
}

/* ---- events ---- */

static int on_call(struct sr_machine *m, struct thread *t, const struct dc_event *ev, uint64_t now)
{
	int ret = user_prep(m, t, ev->pid, ev->from_ip, now);
	uint64_t key = key_of(m, ev->pid, ev->to_ip);

	if (ret)
		return ret;
	if (!t->nframes)
		return establish_root(m, t, key, now, 0);
	t->frames[t->nframes - 1].site = ev->from_ip;
	if (top_is(t, key) && note_recursive(m, key))
		return -ENOMEM;
	return push_frame(m, t, key, now, 0);
}

/* Could a return to ip be the return from caller frame f's last call
 * seen? (An x86 instruction is at most 15 bytes; no call seen: maybe.) */
/* Ended calls of function key in the tree under n, counting up to 2. */
static uint64_t calls_in(const struct sr_node *n, uint64_t key)
{
	const struct sr_node *top = n;
	uint64_t calls = 0;

	while (n && calls < 2) {
		if (n->kind == SR_NODE_FUNC && n->key == key)
			calls += n->calls;
		if (n->first_child) {
			n = n->first_child;
			continue;
		}
		while (n != top && !n->next_sibling)
			n = n->parent;
		n = n == top ? NULL : n->next_sibling;
	}
	return calls;
}

/* Has the thread entered function key more than once (the frame on its
 * stack included)? Only asked when a root kept across a loss returns:
 * a walk of its trees, not a count kept on every call. */
static bool entered_again(const struct thread *t, uint64_t key)
{
	uint64_t n = occurrences(t, key) + calls_in(&t->seg->root, key);

	return n > 1 || n + calls_in(t->work_node, key) > 1;
}

static bool ret_after_call(const struct frame *f, uint64_t ip)
{
	return !f->site || (ip > f->site && ip - f->site <= 15);
}

static int on_return(struct sr_machine *m, struct thread *t, const struct dc_event *ev, uint64_t now)
{
	int ret = user_prep(m, t, ev->pid, ev->from_ip, now), i;
	uint64_t key = key_of(m, ev->pid, ev->to_ip);
	uint8_t flags;

	if (ret)
		return ret;
	if (!t->nframes)
		return establish_root(m, t, key, now, F_INFERRED);
	if (top_is(t, key) && note_recursive(m, key))
		return -ENOMEM;
	/* The caller, or a frame further down (longjmp, exception unwind):
	 * every frame above it ends here. */
	i = find_below(t, key);
	if (i >= 0)
		return pop_to(m, t, (uint32_t)i + 1, now, true);
	/* A signal handler returns into the sigreturn trampoline (also one
	 * whose entry was not seen, after a loss: the trampoline is nobody's
	 * caller). */
	flags = t->frames[t->nframes - 1].flags;
	if ((flags & F_ASYNC) || (key_flags(m, key) & SR_FUNC_SIGRETURN)) {
		ret = pop_frame(m, t, now, true);
		return ret ? ret : push_frame(m, t, key, now, F_ASYNC | F_TRAMP);
	}
	/* Returning from the root: the trace started below its caller. Not
	 * out of setcontext or swapcontext: they return into the context
	 * they restore, whose function need not be their caller (after a
	 * loss took __start_context's call of setcontext, its return into
	 * main made main;setcontext, a path no program had). */
	if (t->nframes == 1) {
		if (key_flags(m, top_key(t)) & SR_FUNC_CONTEXT)
			return reset_to(m, t, key, now, F_INFERRED);
		/* Nor from a root a resync kept without proof, when its
		 * function runs more than once: the loss may have taken its
		 * return and another call of it, and what the segment saw
		 * before the loss need not have run under the function
		 * returned into now (bash's dispose_command tail-called free
		 * from the root, a loss resumed in another free, called from
		 * dispose_words, whose return put dispose_command under
		 * dispose_words, a call no program made). The function
		 * returned into starts a new segment. (A main entered once
		 * is the same frame on both sides of a loss.) */
		if (t->unproven && entered_again(t, top_key(t))) {
			ret = pop_frame(m, t, now, true);
			return ret ? ret : reset_to(m, t, key, now, F_INFERRED);
		}
		return underflow(m, t, key, now, false);
	}
	/* A function returning into itself while the frame below is another:
	 * a recursion level the trace lost (the calls just before an OVF that
	 * took no packet). It gets an inferred frame above the caller frame,
	 * which stays (sync_top would replace that frame: its own return then
	 * underflowed into an inferred copy of itself, main under main). */
	if (frame_is(&t->frames[t->nframes - 1], key)) {
		ret = pop_frame(m, t, now, true);
		return ret ? ret : push_frame(m, t, key, now, F_INFERRED);
	}
	/* A call that was the last instruction of its caller's symbol returns
	 * to the first byte of the next symbol, a label the caller goes on
	 * in (ld.so's _start calls _dl_start and runs on in _dl_start_user):
	 * no call of it, the same frame, which answers to that key too. Only
	 * where that call could have been (one instruction, at most 15 bytes,
	 * after the caller's last call seen): swapcontext returning into a
	 * coroutine whose function follows the caller's in the binary lands
	 * on that function's first byte too, far from any call. */
	if (ret_after_call(&t->frames[t->nframes - 2], ev->to_ip) &&
	    frame_is(&t->frames[t->nframes - 2], key_of(m, ev->pid, ev->to_ip - 1))) {
		ret = pop_frame(m, t, now, true);
		if (!ret)
			t->frames[t->nframes - 1].alias = key;
		return ret;
	}
	/* The caller frame is not the function returned to: it left for that
	 * one unseen (see sync_top), or the return switched stacks
	 * (swapcontext, setcontext and coroutine libraries return into a
	 * context saved on another stack). Either way the function returned
	 * into was not seen entered: an inferred call, as a return above the
	 * root makes. Never rewrite what lies below. Unless the caller frame
	 * is one a resync kept without proof: then the stack was wrong
	 * (after a loss, a signal handler's return into a function its
	 * context was rewritten to start, then that one's into libc, made
	 * main the callee of raise: emu_sigctx), and the function returned
	 * into starts a new segment, its callers told by its returns. */
	if (t->nframes - 2 < t->unproven) {
		ret = pop_frame(m, t, now, true);
		return ret ? ret : reset_to(m, t, key, now, F_INFERRED);
	}
	ret = pop_frame(m, t, now, true);
	return ret ? ret : sync_top(m, t, key, now, F_INFERRED);
}

static int on_jump(struct sr_machine *m, struct thread *t, const struct dc_event *ev, uint64_t now)
{
	int ret = user_prep(m, t, ev->pid, ev->from_ip, now), i;
	uint64_t key = key_of(m, ev->pid, ev->to_ip), start = 0;
	unsigned top_flags;
	bool entry;
	uint8_t flags;

	if (ret)
		return ret;
	if (!t->nframes)
		return establish_root(m, t, key, now, 0);
	if (top_is(t, key))
		return 0;
	/* Into the middle of a function further down: back to that frame,
	 * every frame above it ends (longjmp, an exception's jump to its
	 * handler, OCaml's raise, Go's gogo resuming the goroutine that
	 * parked). Out of a longjmp or an unwinder also when where functions
	 * start is unknown. Out of a PLT stub it is the PLT header (unnamed
	 * code that may share its key with a frame further down). Anything
	 * else is a tail call, even to a function further down (mutual
	 * recursion). */
	if (m->sym && m->sym->func_start)
		start = m->sym->func_start(m->sym->ctx, ev->pid, ev->to_ip);
	entry = start == ev->to_ip;
	/* (tail calls and PLT jumps go to entries: nothing to look up) */
	top_flags = func_flags(m, t->frames[t->nframes - 1].node);
	/* Back into the middle of the function this frame jumped out of (a
	 * .cold part rejoining its hot part): the same call goes on, also
	 * when that function is further down (recursion). */
	if (!entry && !(top_flags & SR_FUNC_UNWIND) && t->frames[t->nframes - 1].from == key)
		entry = true;
	if (!entry) {
		if ((top_flags & SR_FUNC_UNWIND) || (start && !(top_flags & SR_FUNC_STUB))) {
			i = find_below(t, key);
			if (i >= 0 && ((top_flags & SR_FUNC_UNWIND) ||
				       (!unnamed(m, key) && !unnamed(m, top_key(t)))))
				return pop_to(m, t, (uint32_t)i + 1, now, true);
		}
		/* A stack switcher (Go's gogo) resuming code that is not on
		 * this stack: another goroutine's stack, a new segment (its
		 * callers come from its returns). */
		if (top_flags & SR_FUNC_SWITCH)
			return reset_to(m, t, key, now, F_INFERRED);
		/* An unwinder jumping into the middle of a function that is
		 * not on the stack: a frame above the root (the trace started
		 * below the setjmp), an inferred caller of everything. Not
		 * after a loss: the root was then only where the trace
		 * resumed (inside the unwinder, say), and the function jumped
		 * into lies somewhere below it, not necessarily right below:
		 * a new segment, claiming no caller. */
		if ((top_flags & SR_FUNC_UNWIND) && !unnamed(m, key))
			return t->since_loss ? reset_to(m, t, key, now, F_INFERRED) :
			       underflow(m, t, key, now, true);
	}
	if ((ret = fold_stub(m, t, key)))
		return ret < 0 ? ret : 0;
	flags = t->frames[t->nframes - 1].flags & F_ASYNC;
	return replace_top(m, t, key, now, flags);
}

static bool in_kernel_state(const struct thread *t)
{
	return t->nps && t->ps[t->nps - 1].node->kind != SR_NODE_LOST;
}

static bool switched_out(const struct thread *t)
{
	unsigned k = t->nps ? t->ps[t->nps - 1].node->kind : SR_NODE_ROOT;

	return k == SR_NODE_OFFCPU || k == SR_NODE_PREEMPT;
}

static int on_off(struct sr_machine *m, struct thread *t, const struct dc_event *ev, uint64_t now)
{
	int ret = 0;

	if (ev->reason == DC_OFF_END) {
		drop_final_switch(t, now);
		ret = pop_all_pseudo(m, t, now, false);
		t->active = false;
		t->sigreturn = false;
		return ret;
	}
	/* The ip where user mode was left proves (or fixes) the stack. */
	if (ev->from_ip && !in_kernel_state(t)) {
		uint64_t key = key_of(m, ev->pid, ev->from_ip);

		if (t->need_resync || t->fresh) {
			ret = pop_all_pseudo(m, t, now, false);
			t->need_resync = false;
			/* (kept: the events after this kernel entry wait) */
			if (!ret && (ret = resync(m, t, key, ev->from_ip, now, RS_RESET,
						  AT_UNKNOWN, false)) == RS_KEPT) {
				t->hold.after = true;
				ret = 0;
			}
		} else if (!t->nframes) {
			ret = establish_root(m, t, key, now, F_INFERRED);
		} else {
			ret = sync_top(m, t, key, now, 0);
		}
		if (ret)
			return ret;
	}
	switch (ev->reason) {
	case DC_OFF_SYSCALL:
		if (in_kernel_state(t))
			return 0;
		t->last_sysno = ev->sysno;
		t->sigreturn = is_sigreturn(m, t, ev->sysno);
		ret = push_pseudo(t, SR_NODE_KERNEL,
				  ev->sysno == UINT32_MAX ? SR_KEY_NONE : ev->sysno,
				  SR_TIME_KERNEL, now);
		break;
	case DC_OFF_FAULT:
	case DC_OFF_KERNEL:     /* in the kernel since the trace (re)started */
		if (in_kernel_state(t))
			return 0;
		t->last_sysno = UINT32_MAX;
		t->sigreturn = false;
		ret = push_pseudo(t, SR_NODE_KERNEL, SR_KEY_NONE, SR_TIME_KERNEL, now);
		break;
	case DC_OFF_UNTRACED:
		if (in_kernel_state(t))
			return 0;
		t->last_sysno = UINT32_MAX;
		t->sigreturn = false;
		return push_pseudo(t, SR_NODE_UNTRACED, 0, SR_TIME_USER, now);
	case DC_OFF_SWITCH:
		if (switched_out(t))
			return 0;
		ret = push_pseudo(t, SR_NODE_OFFCPU, 0, SR_TIME_OFFCPU, now);
		if (!ret && m->wk)
			wake_begin(m, t);
		return ret;
	case DC_OFF_PREEMPT:
		return switched_out(t) ? 0 :
		       push_pseudo(t, SR_NODE_PREEMPT, 0, SR_TIME_PREEMPT, now);
	default:
		m->st.bad_events++;
		return 0;
	}
	/* the kernel entry point, when the trace shows kernel code */
	if (!ret && dc_ip_is_kernel(ev->to_ip))
		ret = kpush(m, t, key_of(m, ev->pid, ev->to_ip), now,
			    start_of(m, ev->pid, ev->to_ip) == ev->to_ip ? 0 : F_INFERRED);
	return ret;
}

static int on_on(struct sr_machine *m, struct thread *t, const struct dc_event *ev, uint64_t now)
{
	enum resync_mode mode = RS_RESET;
	enum resume_at at = AT_UNKNOWN;
	bool was_kernel = false, sigreturn;
	int ret;

	if (ev->reason == DC_ON_SWITCH || !ev->to_ip) {
		/* Switched in: leave [off-cpu] / [preempted], still in the kernel
		 * if it went there first. A resume to user mode without an ip
		 * leaves the kernel states but proves nothing of the stack. */
		int j = (int)t->nps - 1;

		if (ev->reason == DC_ON_SWITCH) {
			while (j >= 0 && t->ps[j].node->kind != SR_NODE_OFFCPU &&
			       t->ps[j].node->kind != SR_NODE_PREEMPT)
				j--;
		} else {
			while (j >= 0 && t->ps[j].node->kind != SR_NODE_LOST)
				j--;
			j++;
		}
		while (j >= 0 && (int)t->nps > j)
			if ((ret = pop_pseudo(m, t, now, true)))
				return ret;
		if (ev->reason == DC_ON_SWITCH && !t->nps && !t->nframes)
			return push_pseudo(t, SR_NODE_KERNEL, SR_KEY_NONE, SR_TIME_KERNEL, now);
		return 0;
	}
	for (uint32_t i = 0; i < t->nps; i++)
		was_kernel |= t->ps[i].node->kind == SR_NODE_KERNEL ||
			      t->ps[i].node->kind == SR_NODE_UNTRACED;
	/* A resync after lost data (DC_ON_SYNC) is no return from the
	 * kernel, also where the loss was not this thread's to see (the
	 * decoder gave it to the thread before it on the CPU): where the
	 * trace resumed proves what it proves after any loss. */
	if (ev->reason == DC_ON_SYNC)
		t->since_loss = true;
	else if (!t->need_resync && !t->fresh && was_kernel &&
		 t->last_sysno != NR_EXECVE && t->last_sysno != NR_EXECVEAT)
		mode = RS_ASYNC;
	sigreturn = t->sigreturn;
	t->last_sysno = UINT32_MAX;
	t->sigreturn = false;
	t->need_resync = false;
	ret = pop_all_pseudo(m, t, now, true);
	if (ret)
		return ret;
	if (m->sym && m->sym->func_start) {
		uint64_t start = m->sym->func_start(m->sym->ctx, ev->pid, ev->to_ip);

		at = start == ev->to_ip ? AT_ENTRY : start ? AT_MIDDLE : AT_UNKNOWN;
	}
	return resync(m, t, key_of(m, ev->pid, ev->to_ip), ev->to_ip, now, mode, at, sigreturn);
}

static int on_lost(struct sr_machine *m, struct thread *t, const struct dc_event *ev,
		   uint64_t now)
{
	int ret;

	/* A return to a place not known (DC_LOST_RETURN: the decoder went on
	 * at a TIP.PGE or TIP after code it cannot decode, and the function it
	 * resumed in returned): that function's frame ends, the caller is
	 * not known: the gap is on the frames below (none: at the root). */
	if (ev && ev->reason == DC_LOST_RETURN && !t->need_resync && !t->nps && t->nframes &&
	    top_is(t, key_of(m, ev->pid, ev->from_ip)) && (ret = pop_frame(m, t, now, true)))
		return ret;
	t->st.lost++;
	m->st.lost++;
	if (t->need_resync) {
		/* Still lost: one gap. Leave states stacked on top of it. */
		while (t->nps && t->ps[t->nps - 1].node->kind != SR_NODE_LOST)
			if ((ret = pop_pseudo(m, t, now, false)))
				return ret;
		if (t->nps)
			return 0;
	}
	ret = pop_all_pseudo(m, t, now, false);
	t->need_resync = true;
	t->since_loss = true;
	/* (the summary tells the trace's losses from code it could not
	 * decode: a missing binary is no lost data) */
	t->gap_undecoded = ev && (ev->reason == DC_LOST_UNDECODED || ev->reason == DC_LOST_RETURN);
	if (t->gap_undecoded) {
		t->st.undecoded_gaps++;
		m->st.undecoded_gaps++;
	} else {
		t->st.lost_gaps++;
		m->st.lost_gaps++;
	}
	return ret ? ret : push_pseudo(t, SR_NODE_LOST, 0, SR_TIME_LOST, now);
}

/* Execution went on at to_ip inside the top frame's function with another
 * inline context (DC_EV_INLINE): its time so far is charged, its inline
 * frames change. Not an event of the thread's own (no activation, no
 * count); ignored where the stack is not known to be that function's. */
static int on_inline(struct sr_machine *m, struct thread *t, const struct dc_event *ev)
{
	uint64_t now = ev->time_ns;
	int ret;

	if (!t->active || t->need_resync || t->nps || !t->nframes ||
	    !m->inl || ev->pid != t->st.pid)
		return 0;
	if (now < t->last_ns) {
		m->st.time_backwards++;
		now = t->last_ns;
	}
	if ((ret = charge(m, t, now)))
		return ret;
	t->last_ns = t->st.last_ns = now;
	if (!top_is(t, key_of(m, ev->pid, ev->to_ip)))
		return 0;
	return set_inline(m, t, ev->pid, ev->to_ip, ev->inl, now);
}

/* The first event (at now) of a thread made during the recording: its
 * life began at its creation (sr_machine_fork), in the kernel, runnable
 * until its first switch-in: [kernel] from then to now, and on it
 * [preempted] up to that switch-in (ended by the creator: wakers). */
static int begin_born(struct sr_machine *m, struct thread *t, uint64_t now)
{
	uint64_t t0 = t->born_ns, t1 = t->born_in;
	bool ran = t->born_out && t1 && t->born_out <= now;
	int ret;

	t->born_ns = t->born_in = t->born_out = 0;
	if (t0 >= now)
		return 0;   /* (nothing before its first event, or a clock skew) */
	if (t1 > now)
		t1 = 0;
	t->st.first_ns = t->seg_t0 = t->last_ns = t0;
	t->active = true;
	t->last_sysno = UINT32_MAX;
	t->sigreturn = false;
	ret = push_pseudo(t, SR_NODE_KERNEL, SR_KEY_NONE, SR_TIME_KERNEL, t0);
	if (!ret && t1 > t0) {
		ret = push_pseudo(t, SR_NODE_PREEMPT, 0, SR_TIME_PREEMPT, t0);
		if (!ret && t->nps > 1) {
			struct pseudo *p = &t->ps[t->nps - 1];

			p->born = true;
			p->self0 = p->node->self_by[SR_TIME_PREEMPT];
			ret = charge(m, t, t1);
			t->last_ns = t1;
			if (!ret)
				ret = pop_pseudo(m, t, t1, true);
		}
	}
	/* (it ran from t1 and left its CPU with no event: its trace is
	 * missing from there) */
	if (!ret && ran && t1 > t0)
		ret = on_lost(m, t, NULL, t1);
	if (!ret)
		ret = charge(m, t, now);
	t->last_ns = now;
	return ret;
}

int sr_machine_fork(struct sr_machine *m, uint32_t ppid, uint32_t ptid, const char *parent_comm,
		    uint32_t pid, uint32_t tid, uint64_t time_ns)
{
	struct thread *t;
	int ret;

	if (m->finished || !time_ns || tid == ptid || (!m->wk && !tid_wanted(m, tid)))
		return 0;
	if ((ret = hold_flush(m)))
		return ret;
	t = thread_get(m, pid, tid);
	if (!t)
		return -ENOMEM;
	if (t->started)
		return 0;
	t->born_ns = time_ns;
	t->born_in = 0;
	/* (the creator's stack now: at its clone) */
	if (m->wk && (m->opt.wakers >= 2 || tid_wanted(m, tid)))
		return wake_snap(m, t, time_ns, ppid, ptid, parent_comm);
	return 0;
}

int sr_machine_first_in(struct sr_machine *m, uint32_t tid, uint64_t time_ns)
{
	struct thread *t = thread_find(m, tid);

	if (!m->finished && t && !t->started && t->born_ns && !t->born_in &&
	    time_ns >= t->born_ns)
		t->born_in = time_ns;
	return 0;
}

int sr_machine_first_out(struct sr_machine *m, uint32_t tid, uint64_t time_ns)
{
	struct thread *t = thread_find(m, tid);

	if (!m->finished && t && !t->started && t->born_in && !t->born_out &&
	    time_ns >= t->born_in)
		t->born_out = time_ns;
	return 0;
}

/* Sideband alone (no ip) does not start the accounting of a thread that
 * is not traced: an exited or filtered-out thread keeps being switched. */
static bool activates(const struct dc_event *ev)
{
	switch (ev->kind) {
	case DC_EV_CALL:
	case DC_EV_RETURN:
	case DC_EV_JUMP:
	case DC_EV_LOST:
		return true;
	case DC_EV_TRACE_ON:
		return ev->to_ip != 0;
	case DC_EV_TRACE_OFF:
		return (ev->from_ip != 0 && ev->reason != DC_OFF_END) ||
		       ev->reason == DC_OFF_KERNEL;
	default:
		return false;
	}
}

static int hold_take(struct sr_machine *m, struct thread *t, const struct dc_event *ev);

static void hold_start(struct sr_machine *m, struct thread *t)
{
	t->hold.on = true;
	t->hold.n = t->hold.depth = 0;
	t->hold.level = t->nframes - 1;
	m->nholding++;
}

int sr_machine_feed(struct sr_machine *m, const struct dc_event *ev)
{
	uint64_t now = ev->time_ns;
	struct thread *t;
	int ret;

	m->st.events++;
	/* (with wakers every thread is followed: a waker's stack is needed
	 * whether or not --tid shows it) */
	if (m->finished || (!m->wk && !tid_wanted(m, ev->tid)))
		return 0;
	if (ev->kind < DC_EV_CALL || ev->kind > DC_EV_INLINE) {
		m->st.bad_events++;
		return 0;
	}
	t = thread_get(m, ev->pid, ev->tid);
	if (!t)
		return -ENOMEM;
	if (t->hold.on)
		return hold_take(m, t, ev);
	if (ev->kind == DC_EV_INLINE)
		return on_inline(m, t, ev);
	t->st.events++;
	if (t->started && now < t->last_ns) {
		m->st.time_backwards++;
		now = t->last_ns;
	}
	ret = charge(m, t, now);
	if (ret)
		return ret;
	/* Sideband after a thread's end (its EXIT: the kernel's exit path
	 * still switches it) moves no time of it: the frames left open end
	 * at the end, in the folded stacks and the timeline alike. */
	if (!t->active && !activates(ev))
		return 0;
	t->last_ns = now;
	t->fresh = false;
	if (!t->active) {
		if (!t->started) {
			t->started = true;
			t->st.first_ns = now;
			t->st.pid = ev->pid;
			t->seg_t0 = now;
			memcpy(t->seg_by, t->st.traced_by, sizeof(t->seg_by));
			if (t->born_ns && (ret = begin_born(m, t, now)))
				return ret;
		}
		t->active = true;
		t->fresh = true;
		t->since_loss = false;
	}
	t->st.last_ns = now;
	t->async_off = ev->kind == DC_EV_TRACE_OFF && ev->reason == DC_OFF_FAULT;
	if (ev->pid != t->st.pid) {
		/* tid reused by another process */
		t->st.pid = ev->pid;
		t->fresh = true;
		t->since_loss = false;
	}
	if (t->exec_pending && activates(ev) && ev->kind != DC_EV_LOST) {
		/* The new program starts with no stack: the old one's frames
		 * end here, even where a function of the same name and binary
		 * is on it (a program that execs itself, traced from main). */
		t->fresh = true;
		t->since_loss = false;
		if ((t->nframes || t->nps || t->seg->root.first_child) &&
		    (ret = end_segment(m, t, now)))
			return ret;
		/* (after the old frames ended: their calls were the old part's) */
		if ((ret = split_at_exec(m, t)))
			return ret;
		t->exec_pending = false;
	}
	if (ev->kind <= DC_EV_JUMP && (ev->reason & DC_BR_JUMPS_SEEN))
		t->jumps_seen = true;
	if ((ev->kind <= DC_EV_JUMP && (dc_ip_is_kernel(ev->from_ip) ||
					(!ev->from_ip && dc_ip_is_kernel(ev->to_ip)))) ||
	    (ev->kind == DC_EV_TRACE_ON && dc_ip_is_kernel(ev->to_ip)))
		return on_kernel(m, t, ev, now);
	switch (ev->kind) {
	case DC_EV_CALL:
		/* the caller's inline frames, when not known yet */
		if (m->inl && t->nframes && !t->nps && !t->fresh &&
		    !t->need_resync && ev->from_ip && !t->frames[t->nframes - 1].iset &&
		    top_is(t, key_of(m, ev->pid, ev->from_ip)) &&
		    (ret = set_inline(m, t, ev->pid, ev->from_ip, 0, now)))
			return ret;
		ret = on_call(m, t, ev, now);
		break;
	case DC_EV_RETURN:
		ret = on_return(m, t, ev, now);
		break;
	case DC_EV_JUMP:
		ret = on_jump(m, t, ev, now);
		break;
	case DC_EV_TRACE_OFF:
		ret = on_off(m, t, ev, now);
		if (ret || !t->hold.after)
			return ret;
		t->hold.after = false;
		hold_start(m, t);
		return 0;
	case DC_EV_TRACE_ON:
		ret = on_on(m, t, ev, now);
		break;
	default:
		return on_lost(m, t, ev, now);
	}
	if (ret == RS_KEPT) {
		/* A resync after a loss kept frames: what follows waits,
		 * this branch too (fed again from its start, the resync
		 * done), unless it was the resync itself. */
		hold_start(m, t);
		if (ev->kind != DC_EV_TRACE_ON) {
			t->st.events--;   /* (counted when fed again) */
			return hold_take(m, t, ev);
		}
		ret = 0;
	}
	/* where execution goes on: the top frame's inline frames (the
	 * context first: it is nearly always the frame's already) */
	if (!ret && m->inl && ev->to_ip && t->nframes && !t->nps) {
		struct frame *f = &t->frames[t->nframes - 1];

		if (!ev->inl && f->iset && ev->to_ip >= f->ilo && ev->to_ip < f->ihi)
			;   /* (a return into the range the call left) */
		else if (context_of(m, f, ev->pid, ev->to_ip, ev->inl) == f->ictx)
			f->iset = true;
		else if (top_is(t, key_of(m, ev->pid, ev->to_ip)))
			ret = set_inline(m, t, ev->pid, ev->to_ip, ev->inl, now);
		else
			f->ilo = f->ihi = 0;  /* (that range is not this frame's) */
	}
	return ret;
}

/* ---- events held after a loss ---- */

/* After a loss, the trace resumed in function F with frames of it found
 * on the stack (its top, or further down). That may be the same call of
 * F going on, or another call of it from elsewhere: the loss may have
 * taken its return and its callers', and a call from somewhere else
 * (readelf's free, called from _IO_free_backup_area before the loss and
 * from elsewhere after it, hung the second's _int_free under the first's
 * caller: stress seed 7412). The returns tell: F's first one into the
 * frame below, and that one's into the frame below it, and so on, show
 * the frames kept to be the ones it runs on; a return into a frame
 * further down shows the frames between it ended in the loss (objdump's
 * __vfprintf_internal resumed under __vsnprintf_internal, right, under
 * a function of objdump's, wrong: libopcodes had called vsnprintf
 * itself, seed 7615); one into a function not on the stack, that the
 * frames returned from were called from code the stack never had. So
 * the thread's events are held while its returns go down the frames
 * kept, one by one (hold.level: the frame the next return leaves), and
 * fed under the stack a return proves wrong, once one does
 * (hold_verdict). Anything else the thread does first (another loss,
 * its end, kernel code traced, a return the count of calls cannot
 * place), and too many events, feed them under the stack kept, as
 * nothing held would. */
/* (at most 768 KiB per thread holding; the room of more than a KiB of
 * events is given back after each hold, so that a trace of many threads
 * keeps none) */
enum { HOLD_MAX = 1 << 14, HOLD_KEPT_ROOM = 1024 / sizeof(struct dc_event) };
enum hold_how { HOLD_KEEP, HOLD_ON, HOLD_REHOME, HOLD_RESET };

/* Events that can wait: user-mode branches, and the kernel entries and
 * switches between them, which come back to where they left (a signal
 * handler run there returns into the trampoline, not a caller: the count
 * stops there, hold_verdict). Not a loss, the thread's end, kernel code. */
static bool holdable(const struct thread *t, const struct dc_event *ev)
{
	if (ev->pid != t->st.pid || t->exec_pending || dc_ip_is_kernel(ev->from_ip) ||
	    dc_ip_is_kernel(ev->to_ip))
		return false;
	switch (ev->kind) {
	case DC_EV_CALL:
	case DC_EV_RETURN:
	case DC_EV_JUMP:
		return ev->from_ip != 0;
	case DC_EV_INLINE:
		return true;
	case DC_EV_TRACE_OFF:
		return ev->reason == DC_OFF_SYSCALL || ev->reason == DC_OFF_FAULT ||
		       ev->reason == DC_OFF_SWITCH || ev->reason == DC_OFF_PREEMPT;
	case DC_EV_TRACE_ON:
		return ev->reason == DC_ON_RESUME || ev->reason == DC_ON_SWITCH;
	default:
		return false;
	}
}

/* Frame hold.level returns (ev): into the frame below it (HOLD_ON: hold
 * on, a frame lower), into frame *j further down (HOLD_REHOME), into a
 * function not on the stack (HOLD_RESET), or something a caller's
 * frame need not explain (HOLD_KEEP). */
static enum hold_how hold_verdict(struct sr_machine *m, const struct thread *t,
				  const struct dc_event *ev, int *j)
{
	uint32_t level = t->hold.level;
	const struct frame *f = &t->frames[level], *below = f - 1;
	uint64_t key = key_of(m, ev->pid, ev->to_ip);

	/* (a return from elsewhere than the frame counted: a jump the count
	 * did not follow; a handler's return into the sigreturn trampoline,
	 * a context switcher's into the context it restores, a return into
	 * the function itself (a recursion level lost): on_return's cases,
	 * not a caller's) */
	if (!frame_is(f, key_of(m, ev->pid, ev->from_ip)) || frame_is(f, key) ||
	    (f->flags & F_ASYNC) ||
	    ((key_flags(m, key) | key_flags(m, f->node->key)) & (SR_FUNC_SIGRETURN | SR_FUNC_CONTEXT)))
		return HOLD_KEEP;
	/* The root returns: into its caller, which underflow makes the
	 * caller of everything the segment had before the loss too. Not
	 * when its function ran before in the thread: the call before the
	 * loss and the one after it may be two (objdump's root
	 * __vfprintf_internal, printf's, called _IO_file_xsputn; the trace
	 * resumed in one of sprintf's, whose return put that call under
	 * __vsprintf_internal). Then the frames from the root up start a
	 * new segment at the resync. */
	if (!level)
		return entered_again(t, f->node->key) ? HOLD_RESET : HOLD_KEEP;
	if (frame_is(below, key) ||
	    (ret_after_call(below, ev->to_ip) && frame_is(below, key_of(m, ev->pid, ev->to_ip - 1))))
		return HOLD_ON;
	for (*j = (int)level - 2; *j >= 0; (*j)--)
		if (frame_is(&t->frames[*j], key))
			return HOLD_REHOME;
	return HOLD_RESET;
}

/* Put the frames from hold.level up, which the returns held showed to
 * be one chain, where the verdict says, at the resync's time: on frame
 * j (the frames between ended in the loss), or as a new segment, whose
 * callers the returns will tell. */
static int hold_move(struct sr_machine *m, struct thread *t, enum hold_how how, int j)
{
	uint32_t level = t->hold.level, n = t->nframes - level, i = 0;
	uint64_t t0 = t->hold.t0, *keys = malloc(n * sizeof(*keys));
	int ret;

	if (!keys)
		return -ENOMEM;
	for (uint32_t k = 0; k < n; k++)
		keys[k] = t->frames[level + k].node->key;
	if (how == HOLD_RESET) {
		ret = reset_to(m, t, keys[i++], t0, n == 1 ? t->hold.root_flags : F_INFERRED);
	} else {
		ret = pop_to(m, t, (uint32_t)j + 1, t0, false);
		t->unproven = (uint32_t)j + 1;
	}
	for (; i < n && !ret; i++)
		ret = push_frame(m, t, keys[i], t0, F_INFERRED);
	free(keys);
	if (!ret && m->inl && top_is(t, key_of(m, t->st.pid, t->hold.ip)))
		ret = set_inline(m, t, t->st.pid, t->hold.ip, 0, t0);
	return ret;
}

/* Feed the held events (after moving frames, unless how is HOLD_KEEP),
 * then ev when given. */
static int hold_release(struct sr_machine *m, struct thread *t, enum hold_how how, int j,
			const struct dc_event *ev)
{
	int ret = 0;

	t->hold.on = false;
	m->nholding--;
	if (how != HOLD_KEEP) {
		t->st.held_moves++;
		m->st.held_moves++;
		ret = hold_move(m, t, how, j);
	}
	/* (fed as they came, not counted again) */
	m->replaying = true;
	for (uint32_t i = 0; i < t->hold.n && !ret; i++, m->st.events--)
		ret = sr_machine_feed(m, &t->hold.ev[i]);
	m->replaying = false;
	t->hold.n = 0;
	if (t->hold.cap > HOLD_KEPT_ROOM) {
		free(t->hold.ev);
		t->hold.ev = NULL;
		t->hold.cap = 0;
	}
	if (ret || !ev)
		return ret;
	m->st.events--;
	return sr_machine_feed(m, ev);
}

static int hold_take(struct sr_machine *m, struct thread *t, const struct dc_event *ev)
{
	enum hold_how how;
	int j = -1;

	if (!holdable(t, ev) || t->hold.n >= HOLD_MAX ||
	    dc_vec_reserve32((void **)&t->hold.ev, &t->hold.cap, t->hold.n + 1,
			     sizeof(*t->hold.ev), 64))
		return hold_release(m, t, HOLD_KEEP, 0, ev);
	t->hold.ev[t->hold.n++] = *ev;
	if (ev->kind == DC_EV_CALL) {
		t->hold.depth++;
	} else if (ev->kind == DC_EV_RETURN && t->hold.depth) {
		t->hold.depth--;
	} else if (ev->kind == DC_EV_RETURN) {
		how = hold_verdict(m, t, ev, &j);
		if (how != HOLD_ON)
			return hold_release(m, t, how, j, NULL);
		t->hold.level--;
	}
	return 0;
}

/* Before anything that reads or changes a thread from outside its
 * events (a wake's waker stack, a fork, an exec, the end): every thread
 * holding events feeds them under the stack kept. */
static int hold_flush(struct sr_machine *m)
{
	int ret = 0;

	for (size_t i = 0; m->nholding && i < m->nthreads && !ret; i++)
		if (m->threads[i]->hold.on)
			ret = hold_release(m, m->threads[i], HOLD_KEEP, 0, NULL);
	return ret;
}

/* ---- finish ---- */

static bool name_matches(const char *name, const char *want)
{
	size_t n = strlen(want);

	return !strncmp(name, want, n) && (name[n] == '\0' || name[n] == '(');
}

/* Outermost nodes named opt.root under the thread's node go under dst. */
static int extract_root(struct sr_machine *m, struct sr_cct *out, struct sr_node *dst,
			const struct sr_node *top, uint64_t *kept)
{
	const struct sr_node *s = top->first_child;

	while (s) {
		bool descend = true;

		if (s->kind == SR_NODE_FUNC &&
		    name_matches(sr_cct_name(m->work, s, NULL), m->opt.root)) {
			if (sr_cct_merge_subtree(out, dst, s, true, kept))
				return -ENOMEM;
			descend = false;
		}
		/* (a waker's stack is no part of this thread's) */
		if (s->kind == SR_NODE_WAKER)
			descend = false;
		s = sr_cct_walk_next(top, s, descend);
	}
	return 0;
}

static int finish_thread(struct sr_machine *m, struct thread *t, uint64_t end_ns)
{
	int ret = 0;

	/* a thread that waits, or runs in the kernel, when the recording
	 * ends does so until then (what it is in ends inferred); one that
	 * ran user code ends at its asynchronous TRACE_OFF, the TIP.PGD of
	 * tracing being disabled */
	if (t->active && !t->async_off && end_ns > t->last_ns) {
		ret = charge(m, t, end_ns);
		t->last_ns = t->st.last_ns = end_ns;
	}
	return ret ? ret : end_segment(m, t, t->last_ns);
}

/* One part of a thread's life (key: its THREAD node's) into out. */
static int output_part(struct sr_machine *m, struct sr_cct *out, uint64_t key,
		       const struct sr_node *work_node, const struct sr_cct *edges, uint64_t *kept)
{
	struct sr_node *dst = &out->root;
	int ret;

	if (m->opt.per_thread)
		dst = sr_cct_child(out, NULL, SR_NODE_THREAD, key);
	if (!dst)
		return -ENOMEM;
	if (m->opt.root)
		ret = extract_root(m, out, dst, work_node, kept);
	else
		ret = sr_cct_merge_subtree(out, dst, work_node, false, kept);
	if (!ret && edges)
		ret = wake_output(m, out, edges);
	return ret;
}

/* A thread into out: each part of its life (split at its execs) that
 * --comm keeps, under its own "comm-tid" root frame with --per-thread,
 * named by its last comm; parts of one name share one (a program that
 * execs itself). The thread's stats: its last comm, selected when any
 * part was. */
static int output_thread(struct sr_machine *m, struct sr_cct *out, struct thread *t)
{
	struct sr_thread_stats st = t->st;
	uint32_t n = t->nparts + 1;
	int ret = 0;

	st.comm = comm_now(t) ? comm_now(t) : "";
	st.selected = false;
	st.kept_ns = 0;
	for (uint32_t i = 0; !ret && i < n; i++) {
		const struct tpart cur = { .work_node = t->work_node, .comm = t->comm,
					   .comm_matched = t->comm_matched,
					   .edges = wake_edges(t) };
		const struct tpart *p = i < t->nparts ? &t->parts[i] : &cur;
		const char *name = p->comm ? p->comm : "";
		uint64_t key = i ? (uint64_t)i << 32 | t->st.tid : t->st.tid;

		if (m->opt.comm && !p->comm_matched)
			continue;
		/* (the part an exec started and nothing traced: no frame) */
		if (i && i == t->nparts && !p->work_node->first_child)
			continue;
		st.selected = true;
		for (uint32_t k = 0; k < i; k++)
			if (!strcmp(t->parts[k].comm ? t->parts[k].comm : "", name)) {
				key = k ? (uint64_t)k << 32 | t->st.tid : t->st.tid;
				break;
			}
		ret = sr_cct_name_thread(out, key, name);
		if (!ret)
			ret = output_part(m, out, key, p->work_node, p->edges, &st.kept_ns);
	}
	return ret ? ret : sr_cct_set_thread(out, &st);
}

int sr_machine_finish(struct sr_machine *m, uint64_t end_ns, struct sr_cct **out)
{
	struct sr_cct *cct;
	int ret = 0;

	*out = NULL;
	if (m->finished)
		return -EINVAL;
	if ((ret = hold_flush(m)))
		return ret;
	m->finished = true;
	cct = sr_cct_new(m->sym);
	if (!cct)
		return -ENOMEM;
	for (size_t i = 0; !ret && i < m->nthreads; i++) {
		struct thread *t = m->threads[i];

		if (!t->started || t->unwanted)
			continue;
		ret = finish_thread(m, t, end_ns);
		if (!ret)
			ret = output_thread(m, cct, t);
	}
	if (!ret && m->wk) {
		/* the waker frames' names, for the tree and its edges */
		if (!cct->edges && !(cct->edges = sr_cct_new(m->sym)))
			ret = -ENOMEM;
		if (!ret)
			ret = wake_finish(m, cct);
		if (!ret)
			ret = sr_cct_copy_names(cct, m->work);
		if (!ret)
			ret = sr_cct_copy_names(cct->edges, m->work);
		if (!ret)
			sr_cct_finalize(cct->edges);
	}
	if (ret) {
		sr_cct_free(cct);
		return ret;
	}
	sr_cct_finalize(cct);
	*out = cct;
	return 0;
}

int sr_machine_func_names(const struct sr_machine *m,
			  int (*fn)(void *ctx, const char *name), void *ctx)
{
	const struct sr_node *top = &m->work->root, *s = top->first_child;
	int ret = 0;

	while (s && !ret) {
		const struct thread *t;
		bool skip = false;

		/* (a thread outside --tid, followed as a waker) */
		if (s->kind == SR_NODE_THREAD && s->parent == top &&
		    (t = thread_find(m, (uint32_t)s->key)) && t->unwanted)
			skip = true;
		if (s->kind == SR_NODE_FUNC)
			ret = fn(ctx, sr_cct_name(m->work, s, NULL));
		s = sr_cct_walk_next(top, s, !skip);
	}
	return ret;
}

void sr_machine_stats(const struct sr_machine *m, struct sr_machine_stats *st)
{
	*st = m->st;
	st->threads = 0;
	st->nodes = m->work->nnodes;
	st->mem_bytes = sizeof(*m) + sr_cct_mem_bytes(m->work) +
			m->threads_cap * sizeof(*m->threads) + m->tid_idx.cap * sizeof(*m->tid_idx.slots);
	for (size_t i = 0; i < m->nthreads; i++) {
		const struct thread *t = m->threads[i];

		if (t->unwanted) {
			/* (followed for its wakes only) */
			st->nodes += t->seg->nnodes;
			st->mem_bytes += sizeof(*t) + sr_cct_mem_bytes(t->seg);
			continue;
		}
		st->threads += t->started;
		st->traced_ns += t->st.traced_ns;
		st->lost_ns += t->st.traced_by[SR_TIME_LOST] - t->st.undecoded_ns;
		st->undecoded_ns += t->st.undecoded_ns;
		st->nodes += t->seg->nnodes;
		st->mem_bytes += sizeof(*t) + (t->cap + t->kcap) * sizeof(*t->frames) +
				 t->icap * sizeof(*t->inl) +
				 sr_cct_mem_bytes(t->seg);
	}
}

/* ---- wakes (opt.wakers): blocked time under its waker's stack ----------
 *
 * A wake takes a snapshot of the waker's stack for the woken thread (its
 * last wake); when that thread's [off-cpu] ends, the snapshot decides where
 * the interval's time goes (sr_machine_wake). The time is moved, not
 * charged again: the [off-cpu] node got it while the thread was switched
 * out (self0 says how much), and it goes from there to the frames below. */

enum { WAKE_HIST = 256, WAKE_MAX_LEGS = 4096 };

struct wkey {                      /* one frame of a snapshot path */
	uint64_t key;
	uint32_t kind;
};

struct wleg {                      /* a path below [off-cpu] and its time */
	uint32_t off, len;         /* in wsnap.keys                          */
	uint32_t shared;           /* leading frames counted by a leg before */
	uint64_t span;             /* its length (the call's latency)        */
	uint64_t self;             /* time for its last frame                */
};

struct wsnap {                     /* the last wake of a thread */
	bool set;
	uint64_t time;
	uint32_t waker_pid, waker_tid;
	uint64_t chain_ns;         /* time of legs[1..] (chains)             */
	struct wkey *keys;
	uint32_t nkeys, kcap;
	struct wleg *legs;         /* legs[0]: [woken by W] + W's stack      */
	uint32_t nlegs, lcap;
};

struct whist {                     /* a past wait of the thread that a wake
	                              ended: [t0, t1], woken at wtime      */
	uint64_t t0, t1, wtime;
	uint32_t waker_tid;
	uint32_t nkeys;
	struct wkey *keys;         /* [woken by W] + W's stack               */
};

struct wadd {                      /* an inferred caller a segment got */
	uint32_t seg;
	uint64_t key;
};

struct twake {
	struct wsnap snap;
	/* As a waker: its segments (the serial of the open one) and the
	 * callers underflows put below them, in order; its last context. */
	uint32_t seg;
	struct wadd *adds;
	uint32_t nadds, addcap;
	bool has_ctx;
	uint32_t last_ctx;
	struct whist *hist;        /* ring of WAKE_HIST (chains only)        */
	uint32_t nhist, hpos;
	struct sr_cct *edges;      /* wait site -> waker site                */
};

/* A waker frame's context: the waker (its name, thread), and where its
 * stack stood: the waker's segment and how many inferred callers it had
 * been given then. Callers an underflow gives that segment later go
 * below the waker frame at the end (wake_finish), as they go below
 * everything the segment held in the waker's own stacks. The key of an
 * SR_NODE_WAKER node is its context's index. */
struct wctx {
	uint32_t name, tid;
	uint32_t seg, pre;         /* seg UINT32_MAX: no stack (untraced)   */
};

struct mwake {
	char **names;              /* interned "[woken by COMM-TID]"         */
	uint32_t n, cap;
	uint32_t *plain;           /* names[i]'s context with no stack + 1   */
	struct wctx *ctx;
	uint32_t nctx, ctxcap;
	struct dc_hash by_name;    /* dc_hash chain of a name -> its number  */
};

static struct mwake *wake_new(void)
{
	return calloc(1, sizeof(struct mwake));
}

static void wake_free(struct mwake *w)
{
	if (!w)
		return;
	for (uint32_t i = 0; i < w->n; i++)
		free(w->names[i]);
	free(w->names);
	free(w->plain);
	free(w->ctx);
	dc_hash_free(&w->by_name);
	free(w);
}

static void twake_free(struct twake *w)
{
	if (!w)
		return;
	free(w->snap.keys);
	free(w->snap.legs);
	free(w->adds);
	for (uint32_t i = 0; w->hist && i < w->nhist; i++)
		free(w->hist[i].keys);
	free(w->hist);
	sr_cct_free(w->edges);
	free(w);
}

/* The number of the name "[woken by COMM-TID]". UINT32_MAX on ENOMEM. */
static uint32_t waker_key(struct sr_machine *m, const char *comm, uint32_t tid)
{
	struct mwake *w = m->wk;
	char *name;
	uint64_t k, i;
	uint32_t pcap;

	/* (tid 0: the idle task, woken from an interrupt; the kernel's name) */
	if (asprintf(&name, "[woken by %s-%u]", comm && *comm ? comm : tid ? "unknown" : "swapper",
		     tid) < 0)
		return UINT32_MAX;
	k = dc_hash_chain_start(dc_strhash(name, strlen(name)));
	while (dc_hash_chain(&w->by_name, &k, &i))
		if (!strcmp(w->names[i], name)) {
			free(name);
			return (uint32_t)i;
		}
	pcap = w->cap;   /* (names owns the capacity: it grows last) */
	if (DC_VEC_PUSH_ROOM32(w->plain, w->n, pcap, 16) ||
	    DC_VEC_PUSH_ROOM32(w->names, w->n, w->cap, 16) || dc_hash_put(&w->by_name, k, w->n))
		goto oom;
	w->plain[w->n] = 0;
	w->names[w->n] = name;
	return w->n++;
oom:
	free(name);
	return UINT32_MAX;
}

static struct twake *twake_get(struct thread *t)
{
	if (!t->wk)
		t->wk = calloc(1, sizeof(*t->wk));
	return t->wk;
}

/* The context of a waker frame for waker tid (w: its thread, NULL when
 * untraced) now, registered in m->work with its name. UINT32_MAX on
 * ENOMEM. */
static uint32_t waker_ctx(struct sr_machine *m, const char *comm, uint32_t tid, struct thread *w)
{
	struct mwake *mw = m->wk;
	uint32_t name = waker_key(m, comm, tid);
	struct twake *tw = NULL;
	struct wctx c = { .name = name, .tid = tid, .seg = UINT32_MAX };

	if (name == UINT32_MAX)
		return UINT32_MAX;
	if (w && w->started && w->nframes) {
		if (!(tw = twake_get(w)))
			return UINT32_MAX;
		c.seg = tw->seg;
		c.pre = tw->nadds;
		if (tw->has_ctx && !memcmp(&mw->ctx[tw->last_ctx], &c, sizeof(c)))
			return tw->last_ctx;
	} else if (mw->plain[name]) {
		return mw->plain[name] - 1;
	}
	if (DC_VEC_PUSH_ROOM32(mw->ctx, mw->nctx, mw->ctxcap, 16))
		return UINT32_MAX;
	if (sr_cct_name_waker(m->work, mw->nctx, mw->names[name]))
		return UINT32_MAX;
	mw->ctx[mw->nctx] = c;
	if (tw) {
		tw->has_ctx = true;
		tw->last_ctx = mw->nctx;
	} else {
		mw->plain[name] = mw->nctx + 1;
	}
	return mw->nctx++;
}

/* An underflow gave t's segment the inferred caller key. */
static int wake_underflow(struct sr_machine *m, struct thread *t, uint64_t key)
{
	struct twake *tw = t->wk;

	(void)m;
	if (!tw || !tw->has_ctx)
		return 0;   /* no waker frame was taken from its stack yet */
	if (DC_VEC_PUSH_ROOM32(tw->adds, tw->nadds, tw->addcap, 8))
		return -ENOMEM;
	tw->adds[tw->nadds++] = (struct wadd){ .seg = tw->seg, .key = key };
	return 0;
}

/* The thread's wake edges so far (for the part of its life an exec
 * ended), which it no longer holds. */
static struct sr_cct *wake_take_edges(struct thread *t)
{
	struct sr_cct *e = t->wk ? t->wk->edges : NULL;

	if (e)
		t->wk->edges = NULL;
	return e;
}

static struct sr_cct *wake_edges(const struct thread *t)
{
	return t->wk ? t->wk->edges : NULL;
}

static void wake_new_segment(struct thread *t)
{
	if (t->wk)
		t->wk->seg++;
}

/* Below every waker frame of out, the inferred callers the waker's segment
 * got after the frame's stack was taken (outermost first), each with the
 * frame's calls: the stack as the waker's own stacks show it. */
static int wake_finish(struct sr_machine *m, struct sr_cct *out)
{
	const struct mwake *mw = m->wk;
	struct sr_node *top = &out->root, *n = top->first_child;

	while (n) {
		if (n->kind == SR_NODE_WAKER && n->key < mw->nctx) {
			const struct wctx *c = &mw->ctx[n->key];
			const struct thread *w = c->seg != UINT32_MAX ? thread_find(m, c->tid) : NULL;
			const struct twake *tw = w ? w->wk : NULL;
			struct sr_node *list = NULL, *x, *p = n;

			for (uint32_t i = tw ? tw->nadds : 0; i-- > c->pre;) {
				if (tw->adds[i].seg != c->seg)
					continue;
				if (p == n) {
					/* (the first: take the frame's subtree off) */
					while ((x = n->first_child)) {
						sr_cct_detach(out, x);
						x->next_sibling = list;
						list = x;
					}
				}
				p = sr_cct_child(out, p, SR_NODE_FUNC, tw->adds[i].key);
				if (!p)
					return -ENOMEM;
				p->calls += n->calls;
				p->calls_inferred += n->calls_inferred;
				if (sr_hist_merge(&p->lat, &n->lat))
					return -ENOMEM;
			}
			for (struct sr_node *next; list; list = next) {
				next = list->next_sibling;
				list->next_sibling = NULL;
				sr_cct_attach(out, p, list);
			}
		}
		n = sr_cct_walk_next(top, n, true);
	}
	return 0;
}

static int keys_reserve(struct wsnap *s, uint32_t more)
{
	return dc_vec_reserve32((void **)&s->keys, &s->kcap, s->nkeys + more, sizeof(*s->keys), 64);
}

static int leg_push(struct wsnap *s, const struct wleg *l)
{
	if (dc_vec_reserve32((void **)&s->legs, &s->lcap, s->nlegs + 1, sizeof(*s->legs), 8))
		return -ENOMEM;
	s->legs[s->nlegs++] = *l;
	return 0;
}

/* The user stack of w now, root first (inline frames included, as the
 * folded output names it), appended to s->keys. */
static int push_stack(struct wsnap *s, const struct thread *w)
{
	uint32_t n = 0, at = s->nkeys;
	const struct sr_node *leaf = w && w->started && w->nframes ? top_node(w) : NULL;

	for (const struct sr_node *x = leaf; x && x->kind != SR_NODE_ROOT; x = x->parent)
		n++;
	if (keys_reserve(s, n))
		return -ENOMEM;
	s->nkeys += n;
	for (const struct sr_node *x = leaf; n; x = x->parent) {
		n--;
		s->keys[at + n] = (struct wkey){ .key = x->key, .kind = x->kind };
	}
	return 0;
}

/* Chains: the blocks of thread `tid` inside [lo, hi) that a wake ended go
 * below the leg at prefix (legs are in pre-order, each one's time its span
 * less its sub-legs'); *used gets their spans' sum. */
static int chain(struct sr_machine *m, struct wsnap *s, uint32_t prefix, uint32_t tid,
		 uint64_t lo, uint64_t hi, uint32_t depth, uint64_t *used)
{
	struct thread *w = thread_find(m, tid);
	struct twake *tw = w ? w->wk : NULL;

	*used = 0;
	if (!tw || !tw->hist || !depth)
		return 0;
	for (uint32_t k = 0; k < tw->nhist; k++) {
		/* oldest first */
		const struct whist *h = &tw->hist[(tw->hpos + WAKE_HIST - tw->nhist + k) % WAKE_HIST];
		uint64_t a = h->t0 > lo ? h->t0 : lo, b = h->t1 < hi ? h->t1 : hi, sub = 0;
		struct wleg l;
		uint32_t idx;
		int ret;

		if (b <= a)
			continue;
		if (s->nlegs >= WAKE_MAX_LEGS)
			break;   /* (a bound on one wait's paths: the rest stays above) */
		l.off = s->nkeys;
		l.shared = s->legs[prefix].len;
		l.len = l.shared + h->nkeys;
		l.span = b - a;
		l.self = 0;
		if (keys_reserve(s, l.len))
			return -ENOMEM;
		memcpy(s->keys + l.off, s->keys + s->legs[prefix].off, l.shared * sizeof(*s->keys));
		memcpy(s->keys + l.off + l.shared, h->keys, h->nkeys * sizeof(*s->keys));
		s->nkeys += l.len;
		idx = s->nlegs;
		if (leg_push(s, &l))
			return -ENOMEM;
		ret = chain(m, s, idx, h->waker_tid, a, b < h->wtime ? b : h->wtime, depth - 1, &sub);
		if (ret)
			return ret;
		s->legs[idx].self = l.span - (sub < l.span ? sub : l.span);
		*used += l.span;
	}
	return 0;
}

/* t's last wake: by waker_tid at time_ns (its stack now). */
static int wake_snap(struct sr_machine *m, struct thread *t, uint64_t time_ns,
		     uint32_t waker_pid, uint32_t waker_tid, const char *waker_comm)
{
	struct thread *w = thread_find(m, waker_tid);
	struct wsnap *s;
	uint32_t key;
	struct wleg base = { 0 };
	int ret;

	if (!waker_comm && w)
		waker_comm = comm_now(w);
	key = waker_ctx(m, waker_comm, waker_tid, w);
	if (key == UINT32_MAX || !twake_get(t))
		return -ENOMEM;
	s = &t->wk->snap;
	s->set = true;
	s->time = time_ns;
	s->waker_pid = w ? w->st.pid : waker_pid;
	s->waker_tid = waker_tid;
	s->chain_ns = 0;
	s->nkeys = s->nlegs = 0;
	if (keys_reserve(s, 1))
		return -ENOMEM;
	s->keys[s->nkeys++] = (struct wkey){ .key = key, .kind = SR_NODE_WAKER };
	if ((ret = push_stack(s, w)))
		return ret;
	base.len = s->nkeys;
	return leg_push(s, &base);
}

int sr_machine_wake(struct sr_machine *m, uint64_t time_ns, uint32_t waker_pid,
		    uint32_t waker_tid, const char *waker_comm, uint32_t wakee_tid)
{
	struct thread *t;
	struct wsnap *s;
	int ret;

	if (!m->wk || m->finished)
		return 0;
	m->st.wakes++;
	/* (a thread outside --tid needs its waits only for chains) */
	if (waker_tid == wakee_tid || (m->opt.wakers < 2 && !tid_wanted(m, wakee_tid)))
		return 0;
	t = thread_find(m, wakee_tid);
	if (!t || !t->started)
		return 0;
	if ((ret = hold_flush(m)) ||
	    (ret = wake_snap(m, t, time_ns, waker_pid, waker_tid, waker_comm)))
		return ret;
	s = &t->wk->snap;
	/* what the thread waited on W for, since it blocked: W's own blocks */
	if (m->opt.wakers >= 2 && t->active && t->nps &&
	    t->ps[t->nps - 1].node->kind == SR_NODE_OFFCPU && (m->keep & SR_KEEP(SR_TIME_OFFCPU))) {
		uint64_t lo = t->ps[t->nps - 1].t0, hi = time_ns;

		lo = lo > m->win_lo ? lo : m->win_lo;
		hi = hi < m->win_hi ? hi : m->win_hi;
		if (hi > lo && (ret = chain(m, s, 0, waker_tid, lo, hi, m->opt.wakers - 1,
					    &s->chain_ns)))
			return ret;
	}
	return 0;
}

static void wake_begin(struct sr_machine *m, struct thread *t)
{
	struct pseudo *p = &t->ps[t->nps - 1];

	(void)m;
	if (p->node->kind == SR_NODE_OFFCPU)
		p->self0 = p->node->self_by[SR_TIME_OFFCPU];
}

static int hist_push(struct twake *tw, uint64_t t0, uint64_t t1, const struct wsnap *s)
{
	struct whist *h;
	struct wkey *keys = malloc(s->legs[0].len * sizeof(*keys));

	if (!keys)
		return -ENOMEM;
	if (!tw->hist && !(tw->hist = calloc(WAKE_HIST, sizeof(*tw->hist)))) {
		free(keys);
		return -ENOMEM;
	}
	memcpy(keys, s->keys + s->legs[0].off, s->legs[0].len * sizeof(*keys));
	h = &tw->hist[tw->hpos];
	if (tw->nhist == WAKE_HIST)
		free(h->keys);
	else
		tw->nhist++;
	*h = (struct whist){ .t0 = t0, .t1 = t1, .wtime = s->time, .waker_tid = s->waker_tid,
			     .nkeys = s->legs[0].len, .keys = keys };
	tw->hpos = (tw->hpos + 1) % WAKE_HIST;
	return 0;
}

/* The [off-cpu] p of t ends at now: its time goes under its last wake,
 * which *wake (its waker fields) tells. */
static int wake_end(struct sr_machine *m, struct thread *t, const struct pseudo *p,
		    uint64_t now, bool end_seen, struct sr_call *wake)
{
	/* ([preempted] of a new thread's first run: its own kind of time) */
	enum sr_time_kind kind = (enum sr_time_kind)p->time_kind;
	uint64_t charged = p->node->self_by[kind] - p->self0;
	struct twake *tw = twake_get(t);
	struct wsnap *s;
	/* (a new thread has no stack yet: its wait site is the wait itself) */
	const struct sr_node *site = p->born ? p->node : top_node(t);
	struct sr_node *e, *leaf0 = NULL;
	bool complete, woken;

	if (!tw)
		return -ENOMEM;
	s = &tw->snap;
	woken = s->set && s->time >= p->t0 && s->time <= now;
	s->set = false;
	if (!(m->keep & SR_KEEP(kind)))
		return 0;   /* (--oncpu: no blocked time to place) */
	/* (as end_call counts the [off-cpu] call itself) */
	if (p->t0 >= m->win_hi || (now <= m->win_lo && !(p->t0 == now && now == m->win_lo)))
		return 0;
	complete = end_seen && p->t0 >= m->win_lo && now < m->win_hi;
	if (woken) {
		for (uint32_t i = 0; i < s->nlegs; i++) {
			const struct wleg *l = &s->legs[i];
			struct sr_node *n = p->node;

			for (uint32_t j = 0; j < l->len; j++) {
				const struct wkey *k = &s->keys[l->off + j];

				n = seg_child(t, n, (enum sr_node_kind)k->kind, k->key);
				if (!n)
					return -ENOMEM;
				if (!i && !j) {
					wake->woken = true;
					wake->waker_pid = s->waker_pid;
					wake->waker_tid = s->waker_tid;
					wake->wake_ns = s->time;
				}
				if (j >= l->shared &&
				    sr_node_add_call(n, complete, i ? l->span : now - p->t0))
					return -ENOMEM;
			}
			if (i)
				n->self_by[kind] += l->self;
			else
				leaf0 = n;
		}
		leaf0->self_by[kind] += charged - (s->chain_ns < charged ? s->chain_ns : charged);
		p->node->self_by[kind] -= charged;
		m->st.waits_woken += !t->unwanted && !p->born;
		/* (chains follow blocks: a new thread's wait to run is none) */
		if (m->opt.wakers >= 2 && !p->born && hist_push(tw, p->t0, now, s))
			return -ENOMEM;
	} else {
		m->st.waits_plain += !t->unwanted && !p->born;
	}
	/* the edge: wait site -> waker site */
	if (!tw->edges && !(tw->edges = sr_cct_new(m->sym)))
		return -ENOMEM;
	e = sr_cct_child(tw->edges, NULL, site ? (enum sr_node_kind)site->kind : SR_NODE_UNKNOWN,
			 site ? site->key : 0);
	if (e && woken) {
		const struct wkey *k = &s->keys[s->legs[0].off + s->legs[0].len - 1];

		e = sr_cct_child(tw->edges, e, (enum sr_node_kind)k->kind, k->key);
	} else if (e) {
		e = sr_cct_child(tw->edges, e, SR_NODE_WAKER, SR_KEY_NONE);
	}
	if (!e || sr_node_add_call(e, true, charged))
		return -ENOMEM;
	sr_node_add_time(e, kind, charged);
	return 0;
}

/* A selected part's edges into the output's. */
static int wake_output(struct sr_machine *m, struct sr_cct *out, const struct sr_cct *edges)
{
	if (!out->edges && !(out->edges = sr_cct_new(m->sym)))
		return -ENOMEM;
	return sr_cct_merge(out->edges, edges);
}
