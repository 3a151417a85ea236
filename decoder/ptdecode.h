/* ptflame - decoder/ptdecode.h: Intel PT decoding into branch events.
 *
 * Two levels:
 *  - dc_ptq: one AUX queue (a CPU, or a thread in per-thread mode) decoded
 *    with its own libipt block decoder. Its data is a list of chunks (the
 *    AUXTRACE payloads, zero-copy); consecutive chunks are one PT stream,
 *    decoded window by window (a window ends at a PSB and the next starts
 *    there), so memory stays at about one chunk plus one PSB period. All
 *    per-queue state lives in struct dc_ptq so queues can be decoded by
 *    separate workers later.
 *  - dc_session: a perf.data file: sideband model, symbolizer, one shared
 *    image section cache, and a heap that merges every queue's events and
 *    the sideband's context-switch events in time order.
 * Part of decoder/decoder.h's public interface.
 */
#ifndef PTFLAME_PTDECODE_H
#define PTFLAME_PTDECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <intel-pt.h>

#include "decoder/wdec.h"

#include "decoder/branch.h"
#include "decoder/perfdata.h"

struct dc_sideband;
struct dc_symbols;

/* ---- one queue ---------------------------------------------------------- */

struct dc_ptq;
struct dc_ptq_pool;

/* Stream bytes [offset, offset + size) of the queue's AUX area. DC_PT_SLACK
 * (decoder/ptpkt.h) bytes after data must be readable: a window that is
 * one chunk goes to libipt as it is, and libipt 2.0.5 may read a byte past
 * its end (perf.data's mapping has a page of zeros after the file).
 * lost_before: data was lost right before this chunk (TRUNCATED AUX, a gap
 * in offsets): the decoder emits LOST(TRUNCATED) and resyncs. part: the
 * queue's own (dc_ptq_add_chunk keeps a long chunk in parts; a part after
 * the first has it). */
struct dc_ptq_chunk {
	const uint8_t *data;
	uint64_t size;
	uint64_t offset;
	bool lost_before;
	bool part;
};

/* What a queue asks of its owner. */
struct dc_ptq_ops {
	/* The thread running at time_ns on this queue (tracing (re)starts or
	 * the decoder synchronised there) and the libipt image of its
	 * process. *first: no event of this thread was emitted before (the
	 * TRACE_ON is then a START). *since: when that thread got the CPU (0:
	 * unknown), so that a thread switched in during lost data gets its
	 * own LOST from then on. 0 or a negative errno code (fatal). */
	int (*context)(void *ctx, struct dc_ptq *q, uint64_t time_ns, uint32_t *pid,
		       uint32_t *tid, struct pt_image **image, bool *first, uint64_t *since);
	/* The lookups below are asked "as of generation gen": the process's
	 * mappings as they were when the image the code is decoded with was
	 * built (image_gen), whatever mapping records were applied since, so
	 * that their answer does not depend on when they are asked. */
	/* Function key of ip in pid and that function's [lo, hi). */
	uint64_t (*func_range)(void *ctx, uint32_t pid, uint32_t gen, uint64_t ip,
			       uint64_t *lo, uint64_t *hi);
	/* ip lies in a mapping whose binary is missing (decode errors there
	 * are no data loss: the time goes to "[unknown] (path)"). May be NULL. */
	bool (*is_missing)(void *ctx, uint32_t pid, uint32_t gen, uint64_t ip);
	/* Kernel ip: is its code in the image (it is decoded into kernel
	 * branches), has it a name (the kernel entry of code that cannot be
	 * decoded is told)? May be NULL: no kernel image, no names. */
	bool (*kernel_code)(void *ctx, uint64_t ip, bool *named);
	/* Optional (NULL: no DC_EV_INLINE events): the inline context of ip
	 * (dc_sym_inline_at: 0 none) and the range [*lo, *hi) around ip that
	 * has it. */
	uint32_t (*inline_at)(void *ctx, uint32_t pid, uint32_t gen, uint64_t ip,
			      uint64_t *lo, uint64_t *hi);
	/* The mappings generation image was built with (the gen the lookups
	 * above are given; asked at each context point and when the owner
	 * calls dc_ptq_image_changed). May be NULL: 0. */
	uint32_t (*image_gen)(void *ctx, struct pt_image *image);
	/* For decoding ahead (dc_ptq_config.ahead), both or neither: a
	 * private copy of image as it is now, that a worker thread decodes
	 * with (the owner keeps it until the queue is freed; NULL: none),
	 * and the image's version, which changes whenever its contents do
	 * (the owner also calls dc_ptq_image_changed then). */
	struct pt_image *(*image_snapshot)(void *ctx, struct pt_image *image);
	uint64_t (*image_version)(void *ctx, struct pt_image *image);
	/* The code of image for our walker (decoder/ptwalk.h), kept as the
	 * image changes; NULL (or no op): libipt decodes with that image. */
	struct dc_wcode *(*image_code)(void *ctx, struct pt_image *image);
	/* Optional (coarse clocks): the time of the first switch record of
	 * q's CPU in [lo, hi) when it is thread tid's switch-out, else 0;
	 * *none: the sideband is known to have no switch record of that CPU
	 * in [lo, hi), other than tid's own switch-in (and the switch-out
	 * naming tid as next). */
	uint64_t (*switch_out)(void *ctx, struct dc_ptq *q, uint32_t tid, uint64_t lo,
			       uint64_t hi, bool *none);
};

struct dc_ptq_config {
	/* libipt config template: cpu, errata, mtc_freq, nom_freq,
	 * cpuid_0x15_eax/ebx. begin/end/flags are set per window. */
	struct pt_config pt;
	/* TSC -> ns conversion (time_shift/mult/zero). */
	struct dc_pt_info conv;
	uint16_t cpu;              /* for dc_event.cpu                        */
	uint32_t idx;              /* queue index (AUXTRACE idx)              */
	/* The image's section cache, to tell direct from indirect calls when
	 * placing times (NULL: calls and jumps count as direct). */
	struct pt_image_section_cache *iscache;
	/* Read syscall numbers from the code (`mov $NR,%eax; syscall` in the
	 * block): right when found, but not found for every syscall (then
	 * UINT32_MAX), so one syscall may show both ways. Needs iscache. */
	bool syscall_numbers;
	/* The PT event was recorded without CYC (its config lacks the cyc
	 * bit): there are no CYC packets, nothing for the gap fix to scan. */
	bool no_cyc;
	/* ... and with MTC (its config has the mtc bit; false when the file
	 * does not tell): the clock is coarse even before an MTC is seen. */
	bool mtc;
	/* The chunks lie in a dc_perf_file's read-only mapping: drop their
	 * pages once decoded (dc_drop_pages), so memory stays flat. A drop
	 * may take the pages of what lies between a queue's chunks (other
	 * queues' chunks, records), which are read again from the file if
	 * still needed: never set it for chunks in memory of one's own. */
	bool drop_chunks;
	/* Decode ahead: a worker thread runs libipt over the coming windows
	 * (with a snapshot of the current image) while the owner's thread
	 * turns its results into events; whatever the worker could not know
	 * (the image changed, a decoding path it does not take) makes the
	 * queue decode that window itself, so the events are the same as
	 * without. Needs ops->image_snapshot. */
	bool ahead;
	/* ... by a thread of this pool, shared with other queues (NULL: the
	 * queue starts a thread of its own). */
	struct dc_ptq_pool *pool;
	/* Tests: the worker starts at the first window (before any context,
	 * with no image) and again at the window after each time it had to
	 * stop, and the queue builds windows ahead of it at every window it
	 * opens (not only while it waits), so that small traces take every
	 * path of it. */
	bool ahead_eager;
	/* Records in the ring of a queue decoded ahead: a power of two, 256
	 * or more, 128 bytes each (else DC_PTQ_RING_DEFAULT, 2 MiB). */
	unsigned ahead_ring;
#define DC_PTQ_RING_DEFAULT 16384
	/* Whose block decoder decodes (wdec.h; with ops->image_code). */
	enum dc_wdec_mode decoder;
};

struct dc_ptq_stats {
	uint64_t bytes;            /* chunk bytes taken into windows          */
	uint64_t blocks;           /* blocks (straight runs: libipt's pieces of one count once) */
	uint64_t events;           /* branch events emitted                   */
	uint64_t lost_ovf, lost_truncated, lost_decode;
	uint64_t missing;          /* decode stops in binaries not found      */
	uint64_t kernel_skips;     /* decode stops in kernel code (no image)  */
	uint64_t inline_events;    /* DC_EV_INLINE events                     */
	uint64_t resumes;          /* ... gone on at a TIP.PGE, not a PSB     */
	uint64_t windows;
	uint64_t syncs;            /* sync points (PSB) found                 */
	uint64_t walk_windows;     /* windows our walker decoded (wdec.h) ... */
	uint64_t walk_bails;       /* ... and the ones libipt took over       */
	uint64_t first_ns, last_ns;
};

/* NULL on ENOMEM. ops are copied. */
/* Threads that decode ahead for queues (dc_ptq_config.pool): each
 * serves any number of queues in turn. Freed after the queues. */
struct dc_ptq_pool *dc_ptq_pool_new(unsigned threads);
void dc_ptq_pool_free(struct dc_ptq_pool *p);

struct dc_ptq *dc_ptq_new(const struct dc_ptq_config *cfg, const struct dc_ptq_ops *ops,
			  void *ctx);
void dc_ptq_free(struct dc_ptq *q);
/* Append a chunk (before the first dc_ptq_fill; offsets ascending, as the
 * stream's). 0 or -ENOMEM. */
int dc_ptq_add_chunk(struct dc_ptq *q, const struct dc_ptq_chunk *c);
/* Data was lost before each of these stream offsets (TRUNCATED AUX
 * records): the chunks starting there get lost_before; an offset past the
 * last chunk means the end of the queue's data was lost; one at or before
 * the first chunk's offset (any, when the queue has no chunk) means its
 * data was lost from the start: dc_ptq_in_loss() holds from time 0 until
 * the decoder synchronises (for good when it never does). */
void dc_ptq_mark_breaks(struct dc_ptq *q, const uint64_t *offs, size_t n);
/* Decode until the queue has a head: 1 it has, 0 the queue is done, < 0 a
 * fatal error (-ENOMEM). */
int dc_ptq_fill(struct dc_ptq *q);
/* Time of the head (valid after dc_ptq_fill returned 1). */
uint64_t dc_ptq_head_time(const struct dc_ptq *q);
/* dc_ptq_take of the head when it is an event of time le or earlier and
 * dc_ptq_fill would do nothing before it (NULL otherwise, nothing taken):
 * the session takes such events in a run, without the fill and its heap
 * between them. */
const struct dc_event *dc_ptq_take_upto(struct dc_ptq *q, uint64_t le);
/* Take the head: 1 an event was stored in *ev; 0 the head was a context
 * point (ops->context was called, nothing to deliver); < 0 fatal. */
int dc_ptq_pop(struct dc_ptq *q, struct dc_event *ev);
/* dc_ptq_pop without the copy: *ev points at the head in the queue's fifo,
 * valid up to the next call on q (the session's loop, once per event). */
int dc_ptq_take(struct dc_ptq *q, const struct dc_event **ev);
void dc_ptq_stats(const struct dc_ptq *q, struct dc_ptq_stats *st);
/* Is the queue's data lost at time t (a LOST was emitted at or before t
 * and the decoder has not synchronised again)? *reason: the LOST's. */
bool dc_ptq_in_loss(const struct dc_ptq *q, uint64_t t, uint8_t *reason);
/* The owner gave thread tid its own LOST for the queue's current loss (at
 * its switch-in, seen in the sideband): the queue does not give it a
 * second one when it synchronises with tid on the CPU. */
void dc_ptq_loss_taken(struct dc_ptq *q, uint32_t tid);
const struct dc_ptq_config *dc_ptq_config(const struct dc_ptq *q);
/* image is about to be rebuilt in place (before dc_ptq_image_changed):
 * a window our decoder walks with it goes to libipt while the image still
 * holds the code read so far. 0 or -ENOMEM. */
int dc_ptq_image_changing(struct dc_ptq *q, struct pt_image *image);
/* image's contents changed (rebuilt in place): a worker decoding ahead
 * with a snapshot of it has to stop there. */
void dc_ptq_image_changed(struct dc_ptq *q, struct pt_image *image);
/* Windows decoded ahead by the worker and windows that went back to the
 * owner's thread (see dc_ptq_config.ahead). */
void dc_ptq_ahead_stats(const struct dc_ptq *q, uint64_t *replayed, uint64_t *deviations,
			uint64_t *prebuilt);
/* The first byte of the queue's data still to be decoded (in its first
 * chunk not yet dropped), NULL when none is left. */
const uint8_t *dc_ptq_pending_data(const struct dc_ptq *q);
/* Inside ops.context, a TIP.PGE on a coarse clock (MTC without CYC): its
 * ip, and *period: the time given to ops.context is only a lower bound, the
 * code after it ran before time_ns + *period (0 otherwise: a sync point,
 * or an exact time); *after: the queue's last event (a TIP.PGD placed no
 * later than it was), which that code ran after; *async: that TRACE_OFF
 * was asynchronous (an interrupt or fault), *sys: a syscall's (neither:
 * another kind, or none). */
uint64_t dc_ptq_ctx_enable(const struct dc_ptq *q, uint64_t *period, uint64_t *after,
			   bool *async, bool *sys);
/* ... the ips of the TIP.PGEs after it in the trace before its next
 * timing packet (MTC, TSC; a PSB or an OVF ends the look too): the code
 * after each ran before that packet's time, within the PGE's period. At
 * most max; the count (0: none, or the data is not at hand). *mtcs: the
 * MTCs between it and its TIP.PGD (so many period edges the code after it
 * ran past: with k of them it ran until after time_ns + (k - 1) period).
 * async[i]: the TIP.PGD before ips[i] was asynchronous (FUP + TIP.PGD: an
 * interrupt, where a preempted thread is switched out). *next_ns: the
 * time of the MTC that ends the look (the PGE's time read at a TSC falls
 * anywhere in its period: that MTC may come well before time_ns + period,
 * and a PGE after it is not among these), time_ns when max cut the look
 * short, 0 when not known. *tail_async: the TIP.PGD after the last of
 * them (the PGE itself if none) before that packet was asynchronous (1)
 * or not (0: a syscall's, a far branch's); -1: none came before it. */
size_t dc_ptq_ctx_next_pges(struct dc_ptq *q, uint64_t *ips, bool *async, size_t max,
			    unsigned *mtcs, uint64_t *next_ns, int *tail_async);
/* ... the owner learnt from the sideband that the code after it ran at or
 * after t (the thread got the CPU then): its time is at least t. */
void dc_ptq_ctx_raise(struct dc_ptq *q, uint64_t t);
/* Owner's per-queue pointer. */
void dc_ptq_set_user(struct dc_ptq *q, void *user);
void *dc_ptq_user(const struct dc_ptq *q);

/* ---- a perf.data file --------------------------------------------------- */

struct dc_session;

struct dc_session_opts {
	const char *symfs;         /* --symfs DIR                             */
	const char *debug_dir;     /* NULL: /usr/lib/debug                    */
	const char *buildid_dir;   /* NULL: $HOME/.debug                      */
	/* Thread names: every COMM record (exec or rename), and a new
	 * thread's or process's inherited name at its FORK, in time order
	 * with the events. */
	void (*on_comm)(void *ctx, uint32_t pid, uint32_t tid, const char *comm,
			uint64_t time_ns);
	/* Decoding progress: AUX bytes done of total, at most every 1 MiB. */
	void (*on_progress)(void *ctx, uint64_t done, uint64_t total);
	/* One line per problem worth telling once (a missing binary...). */
	void (*on_warning)(void *ctx, const char *msg);
	void *ctx;
	/* Optional: a process exec'd (COMM record with the exec flag), called
	 * before on_comm, in time order with the events: its threads' stacks
	 * start anew (the syscall number of a TRACE_OFF is unknown in PT). */
	void (*on_exec)(void *ctx, uint32_t pid, uint32_t tid, uint64_t time_ns);
	/* Guess TRACE_OFF(SYSCALL) numbers from the code (see
	 * dc_ptq_config.syscall_numbers); off: always UINT32_MAX. */
	bool syscall_numbers;
	/* The kernel's code and names (decoder/kernel.c, dc_kernel_opts):
	 * report --vmlinux, --kcore, --kallsyms. NULL: none. */
	const char *vmlinux, *kcore_dir, *kallsyms;
	/* Emit DC_EV_INLINE events (inline frames from DWARF, report's
	 * default; off: --no-inline, and nothing is looked up). */
	bool inline_frames;
	/* Threads to decode with (0, 1: this one only): up to jobs - 1
	 * worker threads (a dc_ptq_pool) decode ahead of this one for the
	 * largest AUX queues, up to 4 each (dc_ptq_config.ahead); the events
	 * are the same. */
	unsigned jobs;
	bool ahead_eager;          /* tests: see dc_ptq_config.ahead_eager  */
	/* Decode with libipt's block decoder only, not our walker
	 * (decoder/wdec.h; report --pt-decoder libipt). Unset, the
	 * environment's PTFLAME_DECODER decides (tests), else the walker. */
	bool libipt_only;
	/* Optional: every wake record (dc_perf_wake), in time order with the
	 * events; waker_comm is the waker's name then (NULL: none known). At
	 * one time stamp wakes come before the other sideband records, so a
	 * wake at the moment a thread is switched in is seen first. A wake
	 * record that cannot be read is counted (stats.wakes_bad) and said
	 * once through on_warning. */
	void (*on_wake)(void *ctx, const struct dc_wake *w, const char *waker_comm);
	/* Optional: a thread or process created during the recording (a FORK
	 * record stamped with a time: the creator ptid of process ppid made
	 * tid of process pid at time_ns; parent_comm its name then, NULL: none
	 * known), in time order with the events, before the new thread's
	 * inherited name (on_comm). */
	void (*on_fork)(void *ctx, uint32_t ppid, uint32_t ptid, const char *parent_comm,
			uint32_t pid, uint32_t tid, uint64_t time_ns);
	/* Optional, with on_fork: that new thread's first switch-in (a SWITCH
	 * record), when it comes before any event of the thread (events are
	 * not made of it: the thread is not seen yet). */
	void (*on_first_in)(void *ctx, uint32_t pid, uint32_t tid, uint64_t time_ns);
	/* Optional, with on_first_in: that new thread's first switch-out, when
	 * it too comes before any event of the thread: it ran and none of its
	 * trace came (the data was lost, or the file cut). */
	void (*on_first_out)(void *ctx, uint32_t pid, uint32_t tid, uint64_t time_ns);
};

struct dc_session_stats {
	uint64_t queues;
	uint64_t threads;          /* threads with branch events              */
	uint64_t first_ns, last_ns;/* time span of the events                 */
	uint64_t end_ns;           /* the recording's end: the latest time of
	                              an event or a record (the AUX records
	                              written when tracing was disabled)     */
	uint64_t bytes_total;      /* AUX payload bytes in the file           */
	uint64_t bytes_decoded;
	uint64_t events;           /* delivered branch events                 */
	uint64_t blocks;
	uint64_t lost_ovf, lost_truncated, lost_decode;
	uint64_t lost;             /* LOST events (sum of the three)          */
	uint64_t missing_binaries;
	uint64_t syncs;            /* sync points (PSB) found in the PT data  */
	uint64_t sideband_records;
	uint64_t early_maps;       /* mappings applied at a coarse PGE before
	                              their time (session.c early_maps)     */
	uint64_t mtc_period_ns;    /* time between MTC packets (0: no MTC):
	                              the precision of times without CYC  */
	bool per_cpu;
	uint64_t ahead_windows;    /* windows a worker decoded (jobs > 1)   */
	uint64_t ahead_deviations; /* ... that went back to this thread     */
	uint64_t ahead_prebuilt;   /* ... built by this thread while it waited */
	uint64_t ahead_queues;     /* queues a worker decoded windows of    */
	uint64_t dwarf_asked;      /* binaries whose DWARF was opened ahead
				      (dc_sym_preload_dwarf) ...           */
	uint64_t dwarf_preloaded;  /* ... files that thread opened first    */
	uint64_t walk_windows;     /* windows our walker decoded (wdec.h)   */
	uint64_t walk_bails;       /* ... and those libipt took over        */
	bool wake_attr;            /* the file has a wake attr               */
	uint64_t wakes, wakes_bad; /* wake records read / unreadable (only
	                              counted with on_wake)                 */
};

/* Open and index a recording (one pass over the records, no payload is
 * read). Errors: negative errno code, one line in err. A file without
 * Intel PT data is an error (-EINVAL). */
int dc_session_open(const char *path, const struct dc_session_opts *opts,
		    struct dc_session **out, char *err, size_t errlen);
/* Decode everything: cb gets every branch event, per thread in time order
 * (globally nearly so). A non-zero return of cb stops the run and is
 * returned. Other failures: negative errno code, message in
 * dc_session_errmsg(). Can run once. */
int dc_session_run(struct dc_session *s,
		   int (*cb)(const struct dc_event *ev, void *ctx), void *ctx);
void dc_session_stats(const struct dc_session *s, struct dc_session_stats *st);
const char *dc_session_errmsg(const struct dc_session *s);
/* The symbolizer (dc_sym_func_key/dc_sym_name/...) answering with the
 * mappings current at the event being delivered. Lives until close. */
struct dc_symbols *dc_session_symbols(struct dc_session *s);
struct dc_sideband *dc_session_sideband(struct dc_session *s);
void dc_session_close(struct dc_session *s);

#endif
