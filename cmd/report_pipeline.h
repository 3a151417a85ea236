/* ptflame - the report pipeline shared by `report` and `diff`: an input
 * (perf.data or `perf script` text) -> branch events -> stack machine -> CCT.
 * Wiring only: every piece of logic lives in its room. */
#ifndef PTFLAME_REPORT_PIPELINE_H
#define PTFLAME_REPORT_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "decoder/outfile.h"
#include "stackrebuild/stackrebuild.h"

enum report_input {
	REPORT_INPUT_AUTO = 0,
	REPORT_INPUT_PERF,       /* perf.data (PERFILE2)                */
	REPORT_INPUT_SCRIPT,     /* `perf script` text                  */
};

struct report_opts {
	const char *input;       /* path; "-" for stdin                 */
	enum report_input format;
	const char *symfs;       /* --symfs DIR or NULL                 */
	const char *vmlinux;     /* --vmlinux FILE, --kcore DIR,        */
	const char *kcore_dir;   /* --kallsyms FILE (perf.data input):  */
	const char *kallsyms;    /* the kernel's code and names, or NULL */
	struct sr_options sr;    /* filters, per_thread                 */
	bool progress;           /* progress on stderr                  */
	bool quiet;              /* no summary line                     */
	bool syscall_names;      /* "[kernel] NAME" where the syscall number
	                            can be read from the code (PT has none) */
	const char *cmd;         /* command name for messages           */
	unsigned jobs;           /* decoding threads (0: the online CPUs) */
	bool libipt_only;        /* --pt-decoder libipt                 */
};
#define REPORT_MAX_JOBS 1024

/* What the summary line says. */
struct report_summary {
	uint64_t threads;
	uint64_t traced_ns;
	uint64_t bytes;          /* PT bytes decoded, or text bytes read */
	uint64_t lost;           /* lost segments                        */
	uint64_t lost_ns;
	uint64_t undecoded;      /* gaps in code that cannot be decoded  */
	uint64_t undecoded_ns;
	uint64_t events;
	uint64_t truncated;      /* calls cut by --max-stack             */
	uint64_t wakes;          /* wake records read (--wakers)         */
	bool wakers;             /* --wakers: the next two are known     */
	uint64_t waits, waits_woken; /* [off-cpu] waits, those a wake ended */
};

struct report_run;

/* An input, read exactly once: a regular file, or a stream (stdin "-", a
 * pipe, FIFO, process substitution, device) whose first bytes are kept for
 * the reader, never lost. */
struct report_src {
	const char *name;        /* as given ("-": stdin), for messages   */
	int fd, spool;           /* spool: a stream's perf.data, copied   */
	FILE *f;
	bool stream;             /* not a regular file                    */
	enum report_input kind;  /* by its first bytes: PERF, SCRIPT, or
	                            AUTO for neither (maybe folded)      */
	unsigned char head[4096];
	size_t nhead, headpos;
	char fdpath[32];
};
/* Open and sniff. A directory, an empty file, or a stream that gives no
 * byte is an error. 0 or a negative errno with one line in err; -ENODATA
 * for an empty input (diff reads it as an empty folded profile; err says
 * what report needs). */
int report_src_open(struct report_src *s, const char *path, char *err, size_t errlen);
/* The whole input as a FILE, from its first byte (NULL: out of memory). */
FILE *report_src_file(struct report_src *s);
/* A path that opens the input as a regular file (a stream is spooled into
 * an unlinked temporary file first); NULL with one line in err. */
const char *report_src_path(struct report_src *s, char *err, size_t errlen);
void report_src_close(struct report_src *s);

/* Build the CCT. On failure returns a negative errno and puts one line
 * (no "ptflame CMD:" prefix, no newline) into err. */
int report_run(const struct report_opts *opt, struct report_run **out,
	       char *err, size_t errlen);
/* The same on an opened input (taken over: closed in any case). */
int report_run_src(const struct report_opts *opt, struct report_src *src,
		   struct report_run **out, char *err, size_t errlen);
void report_run_free(struct report_run *r);
const struct sr_cct *report_cct(const struct report_run *r);
const struct sr_machine *report_machine(const struct report_run *r);
const struct sr_symbolizer *report_symbolizer(const struct report_run *r);
const struct report_summary *report_summary(const struct report_run *r);
/* "threads 3, traced 12.3 ms, decoded 1.2 MB, lost 2 segments (0.5 % of time)" */
void report_print_summary(const struct report_run *r, const char *cmd);

/* An output as decoder/outfile.h's rule says (NULL or "-" is stdout), as a
 * FILE. report_out_close(o, ret) finishes it: with ret 0 (everything was
 * written) it is committed, else dropped; returns 0 or a negative errno
 * with "cannot write NAME: REASON" (or the rule's own line) in err. Both
 * return 0 or a negative errno with one line in err. */
struct report_out {
	FILE *f;
	struct dc_out out;
	int err;                 /* first write error (errno)           */
	const char *path;
};
int report_out_open(struct report_out *o, const char *path, char *err, size_t errlen);
int report_out_close(struct report_out *o, int ret, char *err, size_t errlen);

/* The outputs out[0, n) (their options opt[]: "-o", "--svg"...; out[0]
 * NULL or "-": stdout, a later NULL: not asked for), before any work:
 * refuse (one line, returns 1) one that is the same file as the
 * regular-file input (same device and inode, through links; "-": stdin),
 * two naming one file, and a file that cannot be created (a missing or
 * read-only directory: said now, not after the decoding). 0 when all is
 * well. */
int report_check_outputs(const char *cmd, const char *input, const char *const *opt,
			 const char *const *out, size_t n);
/* opt's argument dir is a directory (1 and one usage line if not). */
int report_need_dir(const char *cmd, const char *opt, const char *dir);

/* (report_notes.c) Did the run see a function named want (its name, or
 * up to its '(')? If not, the closest name in *best (empty: none close),
 * PLT stubs left out unless show_plt. */
bool report_func_seen(const struct sr_machine *m, const char *want, bool show_plt,
		      char *best, size_t n);
/* (report_notes.c) Each filter of opt that matched nothing in the run
 * (cct, made by m) is said on stderr, one line each: --tid N (no such
 * thread), --comm and --root with "did you mean" for a close name,
 * --time with the recording's range; filters that each matched but left
 * nothing together are said so. */
void report_note_filters(const char *cmd, const struct report_opts *opt,
			 const struct sr_cct *cct, const struct sr_machine *m);
/* The threads' first to last event as --time takes it, "S.N,S.N", into
 * buf; false when there is no thread. */
bool report_time_range(const struct sr_cct *cct, char *buf, size_t n);
/* The same cut to the --time window [win_lo, win_hi) (win_hi 0: no end);
 * false when they do not meet. */
bool report_window_range(const struct sr_cct *cct, uint64_t win_lo, uint64_t win_hi,
			 char *buf, size_t n);

/* Helpers for option parsing shared by report and diff. 0 or -EINVAL. */
/* "12,13,14" -> malloc'ed array (caller frees). */
int report_parse_tids(const char *s, uint32_t **tids, size_t *n);
/* "START,END" with either side empty for open; -ERANGE: END not after START. */
int report_parse_time(const char *s, uint64_t *start, uint64_t *end);

/* The filter options report and diff share. Put REPORT_FILTER_LONGOPTS in a
 * command's getopt_long table; report_filter_option() applies one to sr:
 * returns 1 if c was one of them, 0 if not, CMD_OPT_ERR after printing a
 * usage error. *tids_owner receives the --tid array (caller frees). */
enum {
	REPORT_OPT_TID = 0x100, REPORT_OPT_COMM, REPORT_OPT_ROOT, REPORT_OPT_TIME,
	REPORT_OPT_ONCPU, REPORT_OPT_OFFCPU, REPORT_OPT_PER_THREAD, REPORT_OPT_SHOW_PLT,
	REPORT_OPT_NO_INLINE,
	REPORT_OPT_NEXT,          /* first free code for the command's own */
};
#define REPORT_FILTER_LONGOPTS \
	{ "tid", required_argument, NULL, REPORT_OPT_TID }, \
	{ "comm", required_argument, NULL, REPORT_OPT_COMM }, \
	{ "root", required_argument, NULL, REPORT_OPT_ROOT }, \
	{ "time", required_argument, NULL, REPORT_OPT_TIME }, \
	{ "oncpu", no_argument, NULL, REPORT_OPT_ONCPU }, \
	{ "offcpu", no_argument, NULL, REPORT_OPT_OFFCPU }, \
	{ "per-thread", no_argument, NULL, REPORT_OPT_PER_THREAD }, \
	{ "show-plt", no_argument, NULL, REPORT_OPT_SHOW_PLT }, \
	{ "no-inline", no_argument, NULL, REPORT_OPT_NO_INLINE }
#define REPORT_FILTER_HELP \
	"  --per-thread        a comm-tid root frame per thread (diff: the comm,\n" \
	"                      so that two runs' threads match by name); an exec\n" \
	"                      splits a thread: each part gets its own, named by\n" \
	"                      the comm it had (a rename does not split)\n" \
	"  --tid LIST          only these threads (comma separated)\n" \
	"  --comm NAME         only the parts of threads (split at exec) that had\n" \
	"                      this name (a part renamed: any of its names)\n" \
	"  --root FUNC         only time under FUNC, re-rooted there\n" \
	"  --time START,END    only this window of the perf clock (seconds as perf\n" \
	"                      prints them, or with a unit: 1500ms, 20us, 7ns)\n" \
	"  --oncpu, --offcpu   keep only on-CPU (user+kernel) or off-CPU time (a\n" \
	"                      table's avg is then that time per call, without\n" \
	"                      the percentiles of whole calls)\n" \
	"  --show-plt          PLT stubs as frames of their own (foo@plt); by\n" \
	"                      default a stub's call shows as its target's\n" \
	"  --no-inline         no frames for inlined functions; by default code\n" \
	"                      the compiler inlined shows as 'NAME (inlined)'\n" \
	"                      frames, from the binary's DWARF (perf.data input)\n"
int report_filter_option(const char *cmd, int c, const char *arg, struct sr_options *sr,
			 uint32_t **tids_owner);
/* A time or duration: "1.5" (seconds, as perf prints them), or with a unit
 * suffix "200us", "12ms", "3s", "12345ns". 0 or -EINVAL. */
int report_parse_duration(const char *s, uint64_t *ns);

#endif
