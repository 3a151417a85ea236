/* ptflame - stackrebuild/: the room's one public header. Names prefixed sr_.
 * Knows branch events (decoder/branch.h), nothing of libipt or perf.data.
 *
 * Three parts:
 *  - sr_hist: a log-linear latency histogram (HdrHistogram style).
 *  - sr_cct / sr_node: the calling-context tree with per-node statistics,
 *    what every printer (flamegraph/) reads.
 *  - sr_machine: per-thread shadow stacks fed with branch events; it does the
 *    wall-clock accounting of DESIGN.md section 4 and produces a CCT.
 */
#ifndef PTFLAME_STACKREBUILD_H
#define PTFLAME_STACKREBUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoder/branch.h"

const char *sr_room_name(void);

/* How the stack machine identifies functions: a symbolizer maps an address
 * of a process to a function key, equal for every address inside the same
 * function (and across processes for the same function of the same binary).
 * Keys are opaque to stackrebuild/ and flamegraph/; 0 means "no key" (the
 * symbolizer should rather return a key for "[unknown] (dso)"). The decoder
 * implements it with ELF symbols, the perf-script importer with the names
 * perf printed. Implementations cache per distinct address.
 *
 * func_key() is only called from inside sr_machine_feed() for the event being
 * fed, so a symbolizer whose mappings change over time (mmap, exec, dlopen)
 * answers with the mappings current at that event. name() may be called any
 * time later, until the symbolizer is freed. */
struct sr_symbolizer {
	void *ctx;
	uint64_t (*func_key)(void *ctx, uint32_t pid, uint64_t ip);
	/* Display name of a key, valid as long as the symbolizer lives.
	 * NULL is shown as "[unknown]". */
	const char *(*name)(void *ctx, uint64_t key);
	/* Optional (may be NULL): start address of the function containing ip,
	 * 0 when unknown. Lets a JUMP to a function's entry be told from a
	 * longjmp into the middle of a function lower on the stack. */
	uint64_t (*func_start)(void *ctx, uint32_t pid, uint64_t ip);
	/* Optional: "file:line" of a key's function (report --srcline),
	 * NULL when unknown; valid as long as the symbolizer lives. */
	const char *(*srcline)(void *ctx, uint64_t key);
	/* Optional (NULL: no inline frames): the inline context of ip, 0
	 * when ip is no inlined code, else an id of the innermost inlined
	 * function instance holding ip (one id per place a function was
	 * inlined at), with [*lo, *hi) around ip where the answer is the
	 * same (lo == hi: just ip); and, for an id, its inlined function's
	 * key (*key, named like any key) and the id it was inlined into (0:
	 * the function itself). */
	uint32_t (*inline_at)(void *ctx, uint32_t pid, uint64_t ip, uint64_t *lo, uint64_t *hi);
	uint32_t (*inline_up)(void *ctx, uint32_t id, uint64_t *key);
};

/* ------------------------------------------------------------------------
 * Latency histogram. Values are u64 (ns). Buckets: values below 256 are
 * exact; above, each power-of-two range [2^k, 2^(k+1)) is cut into 128
 * equal buckets. A reported percentile is the middle of its bucket, clamped
 * to [min, max], so its relative error is at most 1/256 (< 0.4 %). Storage
 * is sparse: only buckets that hold values take memory.
 */
struct sr_hist_bucket {
	uint32_t idx;              /* bucket index, see sr_hist_bucket_lo()  */
	uint32_t pad_;
	uint64_t count;
};

struct sr_hist {
	uint64_t count;            /* values added                           */
	uint64_t sum;              /* sum of values (saturates at UINT64_MAX) */
	uint64_t min, max;         /* 0, 0 when empty                        */
	uint32_t nb, cap;          /* buckets used / allocated               */
	struct sr_hist_bucket *b;  /* sorted by idx, counts > 0              */
};

void sr_hist_init(struct sr_hist *h);
void sr_hist_free(struct sr_hist *h);     /* leaves h empty (re-usable) */
int sr_hist_add(struct sr_hist *h, uint64_t v);            /* 0 or -ENOMEM */
int sr_hist_add_n(struct sr_hist *h, uint64_t v, uint64_t n);
/* v into count, sum, min and max only: no bucket (percentiles of such a
 * histogram are not kept; sr_options.counts_only). */
void sr_hist_add_summary(struct sr_hist *h, uint64_t v);
int sr_hist_merge(struct sr_hist *dst, const struct sr_hist *src);
/* Nearest-rank percentile: the value v such that ceil(p/100 * count) values
 * are <= v (p in [0, 100]; p <= 0 gives min, p >= 100 gives max). Returns 0
 * for an empty histogram. */
uint64_t sr_hist_percentile(const struct sr_hist *h, double p);
/* Bucket geometry, for printers that draw the distribution. */
uint32_t sr_hist_bucket_index(uint64_t v);
uint64_t sr_hist_bucket_lo(uint32_t idx);  /* smallest value in bucket   */
uint64_t sr_hist_bucket_hi(uint32_t idx);  /* largest value in bucket    */

/* ------------------------------------------------------------------------
 * Calling-context tree.
 *
 * A node is one calling context: the path of frames from the root. Frames
 * are functions (keys from the symbolizer) or pseudo-frames. A thread root
 * frame "comm-tid" exists only in a per-thread CCT.
 */
enum sr_node_kind {
	SR_NODE_ROOT = 0,   /* the invisible root of the tree                  */
	SR_NODE_FUNC,       /* key: symbolizer function key                    */
	SR_NODE_THREAD,     /* key: tid (| part << 32 for the part of its life
	                       after its part-th exec, when it ran before
	                       that); name "comm-tid" ("unknown-tid")       */
	SR_NODE_KERNEL,     /* key: syscall number, or SR_KEY_NONE for a fault,
	                       interrupt or unknown syscall. Name "[kernel]" or
	                       "[kernel] NAME" (e.g. "[kernel] futex"), or
	                       "[kernel] sys_N" for a number without a name    */
	SR_NODE_OFFCPU,     /* "[off-cpu]": switched out, blocked              */
	SR_NODE_PREEMPT,    /* "[preempted]": switched out while runnable      */
	SR_NODE_LOST,       /* "[lost]": trace data lost                       */
	SR_NODE_UNKNOWN,    /* "[unknown]": traced time with no stack at all   */
	SR_NODE_TRUNCATED,  /* "[truncated]": frames deeper than max_stack; key:
	                       the function (one node per function at the cut) */
	SR_NODE_UNTRACED,   /* "[untraced]": a gap in the trace that the input
	                       gives no reason for (DC_OFF_UNTRACED); its time
	                       is the thread's, of kind USER                   */
	SR_NODE_WAKER,      /* "[woken by COMM-TID]" under an [off-cpu] frame
	                       (sr_options.wakers): the thread that ended the
	                       wait; under it that thread's user stack at the
	                       wake. key: the machine's number for the name   */
	SR_NODE_NKINDS
};
#define SR_KEY_NONE UINT64_MAX

/* The kinds of time. Each nanosecond of a thread's traced time has exactly
 * one kind, set by the innermost state: [lost] -> LOST, [off-cpu] ->
 * OFFCPU, [preempted] -> PREEMPT, [kernel] -> KERNEL, else USER. */
enum sr_time_kind {
	SR_TIME_USER = 0,   /* on CPU, user mode                               */
	SR_TIME_KERNEL,     /* on CPU, in the kernel (syscall, fault, irq)     */
	SR_TIME_OFFCPU,     /* blocked                                         */
	SR_TIME_PREEMPT,    /* runnable but not running                        */
	SR_TIME_LOST,       /* unknown: trace data lost                        */
	SR_TIME_NKINDS
};
/* Masks for sr_options.keep_time. */
#define SR_KEEP(kind)   (1u << (kind))
#define SR_KEEP_ONCPU   (SR_KEEP(SR_TIME_USER) | SR_KEEP(SR_TIME_KERNEL))
#define SR_KEEP_OFFCPU  (SR_KEEP(SR_TIME_OFFCPU) | SR_KEEP(SR_TIME_PREEMPT))
#define SR_KEEP_ALL     ((1u << SR_TIME_NKINDS) - 1)

/* Read-only for printers (walk with first_child / next_sibling). Children
 * are in no particular order: printers sort what they print. */
struct sr_node {
	struct sr_node *parent;        /* NULL for the root                   */
	struct sr_node *first_child;
	struct sr_node *next_sibling;
	uint64_t key;
	uint8_t kind;                  /* enum sr_node_kind                   */

	/* Calls = frame instances of this context. A call is "inferred" when
	 * its start or its end was not seen (trace started or ended inside it,
	 * data lost, caller created from a return above the stack, or outside
	 * the --time window). Complete calls feed the latency statistics. */
	uint64_t calls;                /* complete + inferred                 */
	uint64_t calls_inferred;
	struct sr_hist lat;            /* wall latency of complete calls:
	                                  count, sum, min, max, percentiles   */

	uint64_t self_by[SR_TIME_NKINDS];  /* time with this node the leaf    */
	uint64_t total_by[SR_TIME_NKINDS]; /* inclusive (this subtree)        */
	uint64_t self_ns;              /* sum of self_by                      */
	uint64_t total_ns;             /* sum of total_by                     */
};

static inline uint64_t sr_node_complete_calls(const struct sr_node *n)
{
	return n->calls - n->calls_inferred;
}
/* Inclusive times by class. */
static inline uint64_t sr_node_oncpu_ns(const struct sr_node *n)
{
	return n->total_by[SR_TIME_USER] + n->total_by[SR_TIME_KERNEL];
}
static inline uint64_t sr_node_offcpu_ns(const struct sr_node *n)
{
	return n->total_by[SR_TIME_OFFCPU] + n->total_by[SR_TIME_PREEMPT];
}
static inline uint64_t sr_node_kernel_ns(const struct sr_node *n)
{
	return n->total_by[SR_TIME_KERNEL];
}
static inline uint64_t sr_node_lost_ns(const struct sr_node *n)
{
	return n->total_by[SR_TIME_LOST];
}

/* What the machine knows of each thread it saw (after the tid filter). */
struct sr_thread_stats {
	uint32_t pid, tid;
	const char *comm;          /* last comm by time; "" when none known
	                              (its frames: each part's own, see
	                              sr_options.per_thread)                 */
	uint64_t first_ns;         /* time of its first event                 */
	uint64_t last_ns;          /* time of its last event (or finish end)  */
	uint64_t traced_ns;        /* traced wall time: last - first minus the
	                              gaps after TRACE_OFF(END); before filters */
	uint64_t traced_by[SR_TIME_NKINDS]; /* traced_ns split by kind        */
	uint64_t kept_ns;          /* what landed in the CCT after all filters */
	uint64_t events;           /* branch events fed                        */
	uint64_t lost;             /* LOST events                              */
	uint64_t lost_gaps;        /* [lost] segments (LOSTs before the next
	                              event with an ip count once)             */
	uint64_t undecoded_gaps;   /* of which in code that cannot be decoded
	                              (a missing binary): not data lost; not
	                              in lost_gaps                             */
	uint64_t undecoded_ns;     /* their time (in traced_by[SR_TIME_LOST]) */
	uint64_t resets;           /* stack thrown away at a resync / exec /
	                              sigreturn into a frame never seen        */
	uint64_t held_moves;       /* after a loss, the frame the trace resumed
	                              in moved by its first return (machine.c,
	                              hold_verdict)                            */
	uint64_t underflows;       /* returns above the root (inferred callers)*/
	uint64_t repairs;          /* top frame fixed from a branch source
	                              (unseen returns or jumps)                */
	bool selected;             /* passed --comm (and --tid) filters: a
	                              part of its life did                   */
};

struct sr_cct;

/* An empty CCT (for printers' tests and for building trees by hand). sym
 * may be NULL (then function names print as "[unknown]"). NULL on ENOMEM. */
struct sr_cct *sr_cct_new(const struct sr_symbolizer *sym);
void sr_cct_free(struct sr_cct *cct);
const struct sr_node *sr_cct_root(const struct sr_cct *cct);
/* Display name of a node. sym NULL: the CCT's own symbolizer. Never NULL;
 * valid as long as the CCT and the symbolizer live. Not sanitized for the
 * folded format (see fg_frame_sanitize()). */
const char *sr_cct_name(const struct sr_cct *cct, const struct sr_node *n,
			const struct sr_symbolizer *sym);
/* The function a node runs: a function's name as sr_cct_name gives it,
 * also for a [truncated] frame (below --max-stack: it keeps its function's
 * key), else NULL. For what counts calls of one function (the function
 * table, --slowest), which a stack's depth must not change. */
const char *sr_cct_func_name(const struct sr_cct *cct, const struct sr_node *n,
			     const struct sr_symbolizer *sym);
size_t sr_cct_node_count(const struct sr_cct *cct);
/* Threads, in order of first appearance (only those passing --tid). */
size_t sr_cct_nthreads(const struct sr_cct *cct);
const struct sr_thread_stats *sr_cct_thread(const struct sr_cct *cct, size_t i);

/* Building (used by the machine; public for tests and merging tools).
 * sr_cct_child() finds or creates the child (kind, key) of parent (NULL:
 * the root); NULL on ENOMEM. Time and calls go to one node; call
 * sr_cct_finalize() before reading total_* / self_ns. */
struct sr_node *sr_cct_child(struct sr_cct *cct, const struct sr_node *parent,
			     enum sr_node_kind kind, uint64_t key);
void sr_node_add_time(struct sr_node *n, enum sr_time_kind kind, uint64_t ns);
/* complete: latency is known (recorded in lat); else counted as inferred. */
int sr_node_add_call(struct sr_node *n, bool complete, uint64_t latency_ns);
/* The same into lat's count, sum, min and max only (sr_hist_add_summary). */
void sr_node_count_call(struct sr_node *n, bool complete, uint64_t latency_ns);
int sr_cct_set_thread(struct sr_cct *cct, const struct sr_thread_stats *st);
/* Recompute self_ns, total_by and total_ns from self_by, bottom-up. */
void sr_cct_finalize(struct sr_cct *cct);
/* Add src into dst (same key space: same symbolizer). Thread stats of src
 * are appended (merged by tid when dst has the tid already), so are the
 * names of its thread and waker frames and its wake edges. dst is
 * finalized. 0 or -ENOMEM. */
int sr_cct_merge(struct sr_cct *dst, const struct sr_cct *src);
/* Name the SR_NODE_WAKER frames of key ("[woken by COMM-TID]"). 0/-ENOMEM. */
int sr_cct_name_waker(struct sr_cct *cct, uint64_t key, const char *name);

/* Wake edges (sr_options.wakers): which code waited on which, a tree of
 * two levels. Each child of the root is a wait site: the innermost user
 * frame of a thread when it blocked ([off-cpu]), as a node of kind FUNC
 * (or TRUNCATED, or UNKNOWN with no stack); each of its children a waker
 * site: the innermost frame of the waker's user stack at the wake (FUNC),
 * the [woken by COMM-TID] frame itself (WAKER) when the waker had none
 * traced, or SR_KEY_NONE of kind WAKER ("[no wake record]") for the waits
 * no wake record ended. A waker site node has calls = waits, one latency
 * per wait (its blocked time: lat's count, sum, percentiles) and the
 * blocked time as OFFCPU self time. NULL when wakers were off. Names:
 * sr_cct_name(edges, node, NULL). */
const struct sr_cct *sr_cct_wake_edges(const struct sr_cct *cct);

/* ------------------------------------------------------------------------
 * The stack machine.
 *
 * Per thread: a stack of function frames, topped by pseudo-frames for the
 * state the thread is in. The time between two events of a thread goes to
 * the top frame (and its kind of time to the innermost state), so the sum
 * over a thread's stacks is its traced time.
 *   CALL      push the callee (entry seen: a complete call once it returns).
 *   RETURN    to the caller frame, or to a frame further down (longjmp,
 *             exception unwinding): every frame above it ends there. From
 *             the root to a function not on the stack: the trace started
 *             below; that function becomes an inferred caller under which
 *             everything of the current stack segment is re-parented. Not
 *             out of a context switcher (SR_FUNC_CONTEXT: setcontext,
 *             swapcontext): it returns into another context, not to its
 *             caller; the function returned into is a new segment's root.
 *             Into a sigreturn trampoline (SR_FUNC_SIGRETURN) not on the
 *             stack: the returning frame was a signal handler (its entry
 *             unseen after a loss); the trampoline replaces it. A function
 *             returning into itself over another caller frame: a recursion
 *             level lost with an OVF; an inferred frame of it goes above
 *             the caller frame, which stays. To another function whose
 *             preceding byte is the caller frame's, within 15 bytes after
 *             the caller's last call seen (or none seen): the call was the last
 *             instruction of its symbol and the caller runs on into the
 *             label after it (ld.so's _start into _dl_start_user): the
 *             same frame, which answers to that key too. To any other
 *             function: a stack switch (swapcontext, coroutines) or a
 *             jump unseen; the caller frame ends and the function
 *             returned into replaces it as an inferred call (its entry
 *             was not seen); but where the caller frame is one a resync
 *             kept below the frame it resumed in (unproven: see LOST),
 *             the stack was wrong, and the function returned into starts
 *             a new stack segment.
 *   JUMP      to another function replaces the top frame (tail call, PLT
 *             stub, lazy resolver), except: into the middle of a function
 *             further down (func_start says it is no entry; not out of a
 *             PLT stub; neither function unnamed, "[...]": a
 *             decoder's FDE-named code, "file+0xADDR", is named), or out
 *             of an unwinder (longjmp, _Unwind_RaiseException and the
 *             others that jump to a landing pad: see func_flags) to no
 *             known entry, pop to that frame (longjmp,
 *             exceptions, OCaml's raise, Go's gogo resuming the goroutine
 *             that parked); out of a stack switcher (SR_FUNC_SWITCH, Go's
 *             gogo) into the middle of a function not on the stack, a
 *             new stack segment with it as inferred root (a goroutine's
 *             first run, at an entry, is not told from a tail call); out of an
 *             unwinder to no entry of a function not on the stack, that
 *             function is above the root: an inferred caller under which
 *             the segment is re-parented, as for a return above the root
 *             (every frame ends there); but after a LOST (since the
 *             trace last started) the stack's root is only where the
 *             trace resumed, and the function jumped into is somewhere
 *             below it, not known to be its caller: a new stack segment
 *             with that function as inferred root. Not out of an unwinder, back into
 *             the function the top frame jumped out of (a .cold part
 *             rejoining its hot part, -O2): a replacement like a tail
 *             call, even when that function is further down too
 *             (recursion): the same call goes on.
 *   branch source not in the top function: with DC_BR_JUMPS_SEEN on
 *             the thread's branches (every jump is an event) it fell
 *             through into a label or alias inside the function: the same
 *             frame, which now also answers to that key (returns to it,
 *             trace resumes in it); else a jump went unseen: see
 *             sr_options.func_flags.
 *   TRACE_OFF SYSCALL/FAULT  + "[kernel] NAME" / "[kernel]"   (KERNEL time)
 *             SWITCH         + "[off-cpu]"                    (OFFCPU)
 *             PREEMPT        + "[preempted]"                  (PREEMPT)
 *             UNTRACED       + "[untraced]"  (USER; leaving it is like
 *                            leaving the kernel: see TRACE_ON)
 *             END            not traced until the next event with an ip
 *   TRACE_ON  SWITCH: leaves [off-cpu]/[preempted] (still [kernel] if it
 *             was). With an ip: leaves the kernel states; the ip's function
 *             is the top frame, a frame further down (sigreturn: pop to it;
 *             after a kernel entry not into unnamed code, "[unknown]
 *             (dso)", which is one key per binary (code without a symbol
 *             or an FDE) and proves no frame below), or, after a kernel
 *             entry, a function not on the stack:
 *             - at its first byte (func_start): a signal handler, pushed on
 *               top; its return into the sigreturn trampoline replaces it;
 *             - in its middle, or after rt_sigreturn (sysno 15; number
 *               unknown: made by the trampoline a handler returned into or
 *               by an SR_FUNC_SIGRETURN function): interrupted code below
 *               anything the stack saw (the trace started in the handler):
 *               a new stack segment as after LOST, the resumed function an
 *               inferred root. Except a first byte after rt_sigreturn out
 *               of a trampoline with frames below: a pending signal's
 *               handler, pushed in the trampoline's place;
 *             - else (no func_start) a signal handler.
 *             After exec (sysno 59/322, or sr_machine_exec()) a new stack.
 *             SYNC (a resync after lost data) is no return from the
 *             kernel, also without a LOST of this thread: as after LOST.
 *   LOST      + "[lost]" (LOST time) until the next event with an ip; that
 *             ip keeps the stack when it is the top function, pops to a
 *             frame further down, or else starts a new stack segment (the
 *             old frames end as inferred; nothing is re-parented across).
 *             Also a new segment where the level is unknown: the function
 *             holds more than one frame, or has been seen calling itself
 *             (a call or a return from it into it, any thread; or a return
 *             above a segment's root into a function the root frame had
 *             been before: through others), or such a
 *             function is on the stack below the frame kept: the loss may
 *             have taken calls or returns between its levels. And where
 *             the ip is in unnamed code ("[unknown] (file)": one key for
 *             all of a file's unnamed code, so maybe another function).
 *             The frames kept below the one resumed in stay unproven
 *             until popped (see RETURN).
 *   INLINE    (with the symbolizer's inline_at, unless no_inline) the top
 *             frame goes on at to_ip in another inline context: its inline
 *             frames ("NAME (inlined)" nodes above the function's, taking
 *             its self time and callees) become to_ip's. Instances left end
 *             (complete calls), instances entered start a call (an inline
 *             frame's calls are entries into its instance from outside).
 *             The targets of CALL, RETURN, JUMP and TRACE_ON set the top
 *             frame's context the same way, and a CALL sets its caller's
 *             from from_ip when the caller had none yet. A frame's inline
 *             frames end with it.
 * The first event of a thread: its function is the root frame (inferred
 * call, unless tracing starts exactly at the function's entry).
 */
/* One finished call, for sr_options.on_call: a function frame, a kernel
 * function, or a pseudo-frame span ([kernel], [off-cpu], [preempted],
 * [lost], [untraced]). Calls end innermost first, so in one thread a call
 * is reported after every call inside it; intervals of one thread nest. */
struct sr_call {
	uint32_t pid, tid;
	uint32_t depth;            /* its place on the stack: 0 the outermost */
	const struct sr_node *node;/* kind and key; the parent chain is the
	                              call path (the thread's open segment:
	                              valid during the callback only)         */
	const char *name;          /* display name (sr_cct_name)              */
	const struct sr_cct *cct;  /* the tree node is in: sr_cct_name(cct, n,
	                              NULL) names any node of the path (as
	                              long as node is valid)                 */
	uint64_t start_ns, end_ns; /* clipped to the --time window            */
	uint64_t by[SR_TIME_NKINDS]; /* the thread's traced time inside it, by
	                              kind (what is not there was untraced);
	                              of the whole call, not clipped          */
	bool complete;             /* start and end seen (inside the window)  */
	bool in_root;              /* no --root, or under (or at) a ROOT call */
	bool selected;             /* no --comm, or the thread had it so far
	                              in this part of its life (since its
	                              last exec)                             */
	/* An [off-cpu] call that a wake ended (sr_options.wakers: the wake its
	 * time went under): woken, the waker and the wake's time. */
	bool woken;
	uint32_t waker_pid, waker_tid;
	uint64_t wake_ns;
};

struct sr_options {
	/* Keep a "comm-tid" root frame per thread; per part of its life: an
	 * exec (sr_machine_exec) ends a part that ran, and the next one gets
	 * a frame of its own, each named by its last comm (a rename inside a
	 * part, prctl PR_SET_NAME, does not split it: the stack lives on);
	 * parts of one name share one frame. */
	bool per_thread;
	/* Only these threads (NULL / 0: all). Copied. */
	const uint32_t *tids;
	size_t ntids;
	/* Only the parts of threads' lives (split at execs, see per_thread)
	 * that had this comm at some time (NULL: all). Copied. */
	const char *comm;
	/* Only time under this function, re-rooted there: every outermost node
	 * named ROOT becomes a top-level frame (under the thread frame with
	 * per_thread). Matches the name exactly, or a C++ name up to its '('
	 * ("ns::f" matches "ns::f(int)"). NULL: no re-rooting. Copied. */
	const char *root;
	/* Clip accounting to [time_start, time_end) on the perf clock (ns).
	 * time_end 0: no end. Calls are counted when they overlap the window
	 * and are complete only when both ends lie inside it. */
	uint64_t time_start, time_end;
	/* Mask of SR_KEEP(kind) time kinds to account; 0 means SR_KEEP_ALL.
	 * --oncpu: SR_KEEP_ONCPU, --offcpu: SR_KEEP_OFFCPU. */
	unsigned keep_time;
	/* Optional (NULL: names decide): SR_FUNC_* bits for a function key,
	 * called with the symbolizer's ctx. Used only when a branch comes from
	 * a function that is not the top frame, i.e. a jump went unseen
	 * (`perf script --itrace=cr` shows no jumps): out of an SR_FUNC_UNWIND
	 * frame it was a longjmp or an exception's jump to its handler (pop to
	 * the frame further down that holds the function); out of any other
	 * frame a tail call or a PLT stub's jump (the function replaces the top
	 * frame, even when it is further down as well: recursion). Without it:
	 * SR_FUNC_STUB for names ending in "@plt", "_init" (perf script's
	 * name of .plt.sec slots) or starting with "_dl_runtime_resolve",
	 * SR_FUNC_UNWIND for names containing "longjmp" and for
	 * _Unwind_{RaiseException,Resume,Resume_or_Rethrow,ForcedUnwind} and
	 * their _Unwind_SjLj_ forms (not _Unwind_DeleteException: it
	 * tail-calls a cleanup function), SR_FUNC_SWITCH for "gogo"
	 * and "runtime.gogo", SR_FUNC_CONTEXT for glibc's and libucontext's
	 * setcontext and swapcontext (also "__"-prefixed). Also asked for
	 * the frame making a syscall of unknown number: SR_FUNC_SIGRETURN
	 * (without the callback: "__restore_rt", "__restore",
	 * "__kernel_rt_sigreturn", "__vdso_rt_sigreturn") means rt_sigreturn
	 * (see TRACE_ON). */
	unsigned (*func_flags)(void *sym_ctx, uint64_t key);
	/* Frames kept per stack (0: SR_DEFAULT_MAX_STACK). A call deeper than
	 * that is still followed (returns match it) but accounted to a
	 * "[truncated]" frame under the last kept one, so no input makes the
	 * tree or the folded output grow with depth beyond it. */
	uint32_t max_stack;
	/* Keep PLT stubs as frames of their own. Default (false): a stub
	 * (SR_FUNC_STUB: "foo@plt", the lazy resolver, and the unnamed PLT
	 * header between them) that jumps on to its target is the same call:
	 * its frame becomes the target's, keeping its start and its time,
	 * unless that call of the stub made calls (the lazy resolver's
	 * _dl_fixup, an interrupt in the stub): decided per call, whatever
	 * the stub's node did in earlier calls. */
	bool show_plt;
	/* Keep each node's call latencies as count, sum, min and max only
	 * (sr_node_count_call), without the buckets that percentiles need:
	 * for outputs that print none (the folded ones: calls and average).
	 * A call's end then costs no bucket search: 8 % of report's time on
	 * a trace of short calls. */
	bool counts_only;
	/* Optional: called for every call that ends and overlaps the --time
	 * window (also inferred ones, and at sr_machine_finish() for the open
	 * ones), from inside sr_machine_feed() / sr_machine_finish(), by the
	 * machine of the call's thread. A non-zero return stops the machine's
	 * work and is returned by it. --tid is applied; --root, --comm,
	 * --oncpu/--offcpu are left to the callee (see in_root, selected). */
	int (*on_call)(void *call_ctx, const struct sr_call *call);
	void *call_ctx;
	/* No inline frames even when the symbolizer has inline_at. */
	bool no_inline;
	/* report --wakers[=N]: 0 off. With N >= 1, the blocked time of each
	 * [off-cpu] frame that a wake (sr_machine_wake) ended goes below it,
	 * under "[woken by COMM-TID]" and the waker's user stack at the wake
	 * (root first); with N >= 2 the waker's own blocked time during the
	 * wait goes on below that, through up to N threads (the critical
	 * path, see sr_machine_wake). The CCT gets wake edges
	 * (sr_cct_wake_edges). */
	uint32_t wakers;
};
#define SR_DEFAULT_MAX_STACK 1024
#define SR_FUNC_STUB   1u   /* only jumps on: PLT entry, lazy resolver  */
#define SR_FUNC_UNWIND 2u   /* ends by jumping into a frame further down */
#define SR_FUNC_SIGRETURN 4u /* the sigreturn trampoline (rt_sigreturn)  */
#define SR_FUNC_SWITCH 8u   /* switches stacks by a jump (Go's gogo)     */
#define SR_FUNC_CONTEXT 16u /* returns into another context (setcontext) */

/* Counters over all threads, for the summary line and for tests. */
struct sr_machine_stats {
	uint64_t events;           /* fed (including filtered-out threads)    */
	uint64_t threads;          /* threads with state (after --tid)        */
	uint64_t lost;             /* LOST events                             */
	uint64_t lost_gaps;        /* [lost] segments of data lost            */
	uint64_t lost_ns;          /* their time, unfiltered                  */
	uint64_t undecoded_gaps;   /* [lost] segments in code that cannot be
	                              decoded (missing binaries)              */
	uint64_t undecoded_ns;     /* their time, unfiltered                  */
	uint64_t traced_ns;        /* sum of threads' traced_ns               */
	uint64_t resets;           /* stacks thrown away at a resync          */
	uint64_t held_moves;       /* resumed frames moved by their return    */
	uint64_t underflows;       /* inferred callers created                */
	uint64_t repairs;          /* top frame fixed (unseen returns, jumps)  */
	uint64_t time_backwards;   /* events older than the thread's last one */
	uint64_t depth_overflows;  /* calls beyond SR_MAX_DEPTH (not pushed)  */
	uint64_t truncated;        /* calls beyond max_stack ([truncated])    */
	uint64_t bad_events;       /* unknown kind: ignored                   */
	uint64_t wakes;            /* sr_machine_wake calls (wakers on)       */
	uint64_t waits_woken;      /* [off-cpu] intervals given a waker (of
	                              the threads --tid shows)               */
	uint64_t waits_plain;      /* ... that had no wake in them            */
	uint64_t nodes;            /* CCT nodes held now (all trees)          */
	uint64_t mem_bytes;        /* memory held now (nodes, stacks, hists)  */
};
#define SR_MAX_DEPTH 65536

struct sr_machine;

/* opt may be NULL (defaults). sym must outlive the machine and the CCT it
 * makes. NULL on ENOMEM. */
struct sr_machine *sr_machine_new(const struct sr_symbolizer *sym,
				  const struct sr_options *opt);
void sr_machine_free(struct sr_machine *m);
/* Events arrive in time order PER THREAD; threads interleave freely.
 * Returns 0, or -ENOMEM. Events of unknown kind are counted and ignored. */
int sr_machine_feed(struct sr_machine *m, const struct dc_event *ev);
/* A thread's name from time_ns on (COMM records, exec). After
 * sr_machine_exec (the COMM exec record: exec first), the name of the
 * part of its life the exec starts. 0 or -ENOMEM. */
int sr_machine_comm(struct sr_machine *m, uint32_t pid, uint32_t tid,
		    const char *comm, uint64_t time_ns);
/* The thread exec'ed (PERF_RECORD_COMM with PERF_RECORD_MISC_COMM_EXEC):
 * its next event with an ip starts a new stack, even in a function that
 * was on the old one (a program that execs itself), and a new part of its
 * life (sr_options.per_thread, comm), named by the comms from here on. Needed when the exec
 * syscall's number is unknown (sysno UINT32_MAX); with sysno 59/322 on the
 * TRACE_OFF the machine sees it by itself, and there an ip that proves
 * the stack keeps it (a failed exec returns where it was made).
 * 0 or -ENOMEM. */
int sr_machine_exec(struct sr_machine *m, uint32_t pid, uint32_t tid, uint64_t time_ns);
/* A wake (sr_options.wakers; ignored without): at time_ns thread
 * waker_tid (of process waker_pid; its name then waker_comm, NULL: the
 * one the machine knows, else "unknown") woke wakee_tid. In time order
 * with the events: the waker's stack now is its stack at the wake.
 *
 * Which wake ends a wait: an [off-cpu] interval of thread T, from its
 * switch-out to its switch-in (or whatever else ends it: end of trace,
 * lost data), is attributed to the LAST wake of T at a time inside the
 * interval, both ends included; earlier wakes of the interval are
 * ignored (T slept on: they did not end it), a wake while T was not
 * switched out is forgotten at its next switch-out. An interval without
 * one stays plain [off-cpu]. Every ns of an attributed interval moves
 * below it: its [woken by W-TID] frame and W's stack take the interval's
 * time, each frame counting one call (the wait; complete when the
 * [off-cpu] is, latency the interval's length).
 *
 * Chains (wakers >= 2): of the interval [t0, t1] of T woken by W at w,
 * the part [t0, w] is what T waited on W for; where W itself was blocked
 * ([off-cpu]) during that part, and a wake ended that block of W, the
 * overlap goes further down, below W's stack: "[woken by X-TID]" and X's
 * stack at its wake of W, and so on through up to `wakers` threads (the
 * overlap of X's own blocks with [max(t0, W's block start), X's wake of
 * W]...). What W spent running, preempted, or blocked with no wake
 * record stays on W's stack frame. A thread's last 256 blocks are
 * looked at, and one wait gets at most 4096 such paths. Returns 0 or
 * -ENOMEM. */
int sr_machine_wake(struct sr_machine *m, uint64_t time_ns, uint32_t waker_pid,
		    uint32_t waker_tid, const char *waker_comm, uint32_t wakee_tid);
/* A thread created during the recording (a FORK record): at time_ns
 * thread ptid (of process ppid; its name then parent_comm, NULL: the one
 * the machine knows) made tid (of process pid). The new task is on a run
 * queue from then on (the kernel's wake_up_new_task) until its first
 * switch-in (sr_machine_first_in), and in the kernel until its first
 * event. So when that first event comes, the thread's life starts at
 * time_ns, not at the event: a [kernel] frame at its root from time_ns
 * to the first event, and on it a [preempted] frame (a runnable wait)
 * from time_ns to the first switch-in, when one was given; with
 * sr_options.wakers that wait was ended by its creator: under
 * [preempted] "[woken by COMM-PTID]" and the creator's user stack at the
 * fork (its clone), as for a wake record (sr_machine_wake). A thread that
 * had an event already, or never has one, is not changed. In time order
 * with the events. 0 or -ENOMEM. */
int sr_machine_fork(struct sr_machine *m, uint32_t ppid, uint32_t ptid, const char *parent_comm,
		    uint32_t pid, uint32_t tid, uint64_t time_ns);
/* The first switch-in of a thread that sr_machine_fork made, before its
 * first event (later ones are ignored). 0 or -ENOMEM. */
int sr_machine_first_in(struct sr_machine *m, uint32_t tid, uint64_t time_ns);
/* ... and its first switch-out after that, also before its first event:
 * it ran, and none of its trace came (lost, or the file cut): from its
 * first switch-in to its first event it is [lost], not [kernel]. 0 or
 * -ENOMEM. */
int sr_machine_first_out(struct sr_machine *m, uint32_t tid, uint64_t time_ns);
void sr_machine_stats(const struct sr_machine *m, struct sr_machine_stats *st);
/* End of the trace. Threads still traced (no TRACE_OFF(END) last) are
 * accounted up to end_ns when end_ns is later than their last event (pass 0
 * to stop every thread at its own last event), except one whose last event
 * is an asynchronous TRACE_OFF (DC_OFF_FAULT: the TIP.PGD of tracing
 * disabled while it ran). Open calls end as inferred.
 * Applies the filters and returns the finalized CCT in *out (the caller
 * frees it). The machine accepts no more events afterwards. 0 or -ENOMEM. */
int sr_machine_finish(struct sr_machine *m, uint64_t end_ns, struct sr_cct **out);

/* After sr_machine_finish: fn for the name of every calling context of a
 * function the threads had (--tid applied, not --root nor --comm; a name
 * comes once per context), for "did you mean". Stops at fn's first
 * non-zero return and returns it; else 0. */
int sr_machine_func_names(const struct sr_machine *m,
			  int (*fn)(void *ctx, const char *name), void *ctx);

/* x86-64 syscall name for a number, NULL when unknown. */
const char *sr_syscall_name(uint32_t nr);

#endif
