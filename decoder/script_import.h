/* ptflame - decoder/script_import: `perf script` text -> branch events.
 *
 * Reads the text `perf script` prints for an Intel PT recording and turns it
 * into the same branch events (branch.h) the PT decoder makes, so the same
 * stack machine rebuilds the stacks. Understood inputs (perf 4.x .. 6.x):
 *
 *   perf script --itrace=cr[e]             default fields: comm tid cpu time
 *                                          period event ip sym+off (dso) => addr ...
 *   perf script --itrace=b --ns -F-event,-period,+addr,-comm,+flags,-dso
 *                                          pt-flame's field set (with flags)
 *
 * with or without --ns, `tid` or `pid/tid`, with or without comm, cpu,
 * period, event name, dso and symbol offsets. Branch kinds come from the
 * flags column when printed (`call`, `return`, `jcc`, `jmp`, `syscall`,
 * `sysret`, `hw int`, `int`, `iret`, `tr strt ...`, `tr end  ...`, or perf's
 * flag letters); without it a branch from ip 0 is a trace start, to addr 0 a
 * trace end, and calls are told from returns by their target (a function
 * entry, or just after a call seen before); jumps, not printed then, are
 * inferred when a branch comes from another function than the one last
 * called (PLT stub -> target, tail call, longjmp). ` instruction trace error ...`
 * lines (--itrace=...e) become LOST events. Lines that are not samples
 * (callchains, srclines, blank lines, `#` headers) are skipped and counted.
 *
 * Memory: one line buffer plus tables of distinct names, addresses and
 * threads; nothing grows with the number of events.
 *
 * The importer is also the symbolizer for what it emits: function keys come
 * from the symbol and dso names perf printed (the `+0x..` offset stripped),
 * `[unknown]` gets one key per dso. Adapt dc_script_func_key / _name /
 * _func_start to struct sr_symbolizer with ctx = the struct dc_script.
 */
#ifndef PTFLAME_SCRIPT_IMPORT_H
#define PTFLAME_SCRIPT_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "decoder/branch.h"

/* True when buf (the first n bytes of a file) looks like `perf script` text
 * rather than a perf.data file (PERFILE2 magic) or anything else: the first
 * line that is not blank or a `#` comment parses as a sample or an
 * instruction trace error line. */
bool dc_script_detect(const char *buf, size_t n);

/* ------------------------------------------------------------------------
 * One line, parsed (exposed for tests and tools). Text fields point into
 * the line and are not NUL-terminated.
 */
struct dc_script_text {
	const char *s;
	size_t len;                /* 0: absent                              */
};

/* Branch flags as perf prints them (its PERF_IP_FLAG_* bits, by name). */
enum dc_script_flag {
	DC_SF_BRANCH      = 1u << 0,
	DC_SF_CALL        = 1u << 1,
	DC_SF_RETURN      = 1u << 2,
	DC_SF_CONDITIONAL = 1u << 3,
	DC_SF_SYSCALLRET  = 1u << 4,
	DC_SF_ASYNC       = 1u << 5,
	DC_SF_INTERRUPT   = 1u << 6,
	DC_SF_TX_ABORT    = 1u << 7,
	DC_SF_TRACE_BEGIN = 1u << 8,
	DC_SF_TRACE_END   = 1u << 9,
	DC_SF_IN_TX       = 1u << 10,
	DC_SF_VMENTRY     = 1u << 11,
	DC_SF_VMEXIT      = 1u << 12,
	DC_SF_INTR_DISABLE = 1u << 13,
	DC_SF_INTR_TOGGLE = 1u << 14,
	DC_SF_BRANCH_MISS = 1u << 15,
};

enum dc_script_line_kind {
	DC_SL_SKIP = 0,            /* blank or `#` comment                    */
	DC_SL_SAMPLE,              /* a branch sample                         */
	DC_SL_ERROR,               /* instruction trace error                 */
	DC_SL_BAD,                 /* not understood                          */
	DC_SL_OTHER,               /* a perf sample line (thread, time) that is
	                              no branch: psb:, cbr:, instructions
	                              without a target, ...                   */
};

/* One side of a branch: "ip sym+0xoff (dso)". */
struct dc_script_loc {
	uint64_t ip;
	struct dc_script_text sym; /* without the +0x.. offset; may be "[unknown]" */
	bool has_off;
	uint64_t off;              /* symbol offset when has_off              */
	bool has_dso;
	struct dc_script_text dso; /* without the parentheses                 */
};

struct dc_script_line {
	enum dc_script_line_kind kind;
	struct dc_script_text comm;  /* absent when not printed                */
	struct dc_script_text event; /* event name with its ':' ("branches:u:",
	                                "cycles:u:"), absent when not printed */
	int64_t pid;                 /* -1 when not printed                    */
	int64_t tid;
	int32_t cpu;                 /* -1 when not printed                    */
	bool has_time;
	uint64_t time_ns;
	bool has_flags;
	uint32_t flags;              /* enum dc_script_flag                    */
	bool has_addr;
	struct dc_script_loc from;   /* the sample ip                          */
	struct dc_script_loc to;     /* the sample addr (after "=>")           */
	/* DC_SL_ERROR only */
	uint64_t err_ip;
	uint32_t err_code;
	struct dc_script_text err_msg;
};

/* Parse one line (with or without its '\n'). Never fails: the result's kind
 * says what it was. */
void dc_script_parse_line(const char *line, struct dc_script_line *out);

/* ------------------------------------------------------------------------
 * The streaming importer.
 */
struct dc_script;

struct dc_script_stats {
	uint64_t lines;            /* lines read                               */
	uint64_t samples;          /* sample lines understood                  */
	uint64_t errors;           /* instruction trace error lines (-> LOST)  */
	uint64_t skipped;          /* lines not understood (skipped)           */
	uint64_t other;            /* sample lines that are no branch          */
	uint64_t no_target;        /* branch samples without "=> addr"         */
	uint64_t ignored;          /* samples with no effect on stacks (jumps
	                              inside a function, kernel-only branches) */
	uint64_t events;           /* branch events returned                   */
	uint64_t names;            /* distinct functions                       */
	bool flags;                /* the input had a flags column             */
};

/* in is read line by line and not closed. 0 or -ENOMEM. */
int dc_script_new(struct dc_script **out, FILE *in);
void dc_script_free(struct dc_script *s);

/* The next branch event, in time order per thread.
 * Returns 1 (an event in *ev), 0 at the end of the input, -EIO on a read
 * error, -ENOMEM, -EBADMSG when the first line that is not blank or a
 * comment is not perf script text (dc_script_bad_line() gives its number),
 * or -ENOMSG at the end when the text had sample lines but no branch with
 * its target ("=> addr": `perf script -F` without +addr, or without ip).
 * *comm (comm may be NULL) is set to the thread's name when the line that
 * produced this event is the first to show it or shows a new one (else
 * NULL); valid until the next call. Feed it to the stack machine before the
 * event (sr_machine_comm). */
int dc_script_next(struct dc_script *s, struct dc_event *ev, const char **comm);

/* Line number (1-based) of the line that made dc_script_next fail. */
uint64_t dc_script_bad_line(const struct dc_script *s);
/* One line saying why dc_script_next returned err (-EBADMSG, -ENOMSG,
 * -EIO, -ENOMEM), without the input's name; valid while s lives. */
const char *dc_script_errmsg(struct dc_script *s, int err);
void dc_script_get_stats(const struct dc_script *s, struct dc_script_stats *st);

/* The symbolizer, ctx = struct dc_script *. Answers for addresses of events
 * already returned, with the names current at the latest of them. */
uint64_t dc_script_func_key(void *ctx, uint32_t pid, uint64_t ip);
const char *dc_script_name(void *ctx, uint64_t key);
/* Start of the function containing ip (ip - symbol offset), 0 if unknown. */
uint64_t dc_script_func_start(void *ctx, uint32_t pid, uint64_t ip);

#endif
