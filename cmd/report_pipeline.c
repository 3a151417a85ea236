/* ptflame - report pipeline: wiring an input to the stack machine.
 * Logic lives in the rooms; this file only connects them and turns their
 * error codes into one message. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/report_pipeline.h"
#include "decoder/decoder.h"
#include "decoder/ptdecode.h"
#include "decoder/script_import.h"
#include "decoder/symbols.h"
#include "flamegraph/flamegraph.h"

struct report_run {
	struct sr_symbolizer sym;
	struct sr_machine *machine;
	struct sr_cct *cct;
	struct report_summary sum;
	struct report_src src;     /* the input, read once              */
	struct dc_script *script;
	struct dc_session *session;/* perf.data input                   */
	int err;                   /* first failure inside a callback   */
	const char *cmd;
	uint32_t max_stack;
	bool progress, progress_shown;
	bool wakers;               /* --wakers                          */
	bool wake_attr;            /* the file records wakes            */
	uint64_t win_lo, win_hi;   /* --time (win_hi 0: no end)         */
};

static enum report_input sniff(const unsigned char *buf, size_t n)
{
	if (n >= 8 && !memcmp(buf, "PERFILE2", 8))
		return REPORT_INPUT_PERF;
	if (dc_script_detect((const char *)buf, n))
		return REPORT_INPUT_SCRIPT;
	return REPORT_INPUT_AUTO;
}

/* What an empty input is told it should have been. */
static const char needs[] = "ptflame needs a perf.data file (ptflame record, perf record -e "
			    "intel_pt//u) or the text of 'perf script --itrace=cr'";

int report_src_open(struct report_src *s, const char *path, char *err, size_t errlen)
{
	bool std = !strcmp(path, "-");
	struct stat st;
	int ret;

	*s = (struct report_src){ .name = path, .fd = -1, .spool = -1 };
	s->fd = std ? fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3) : open(path, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot open %s: %s%s", std ? "stdin" : path, strerror(errno),
			 errno == ENOENT ? " (record one with 'ptflame record')" : "");
		return ret;
	}
	if (fstat(s->fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	ret = -EINVAL;
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: is a directory", path);
		goto fail;
	}
	s->stream = !S_ISREG(st.st_mode);
	if (!s->stream) {
		off_t at = lseek(s->fd, 0, SEEK_CUR);
		ssize_t n;

		if (st.st_size == 0 || at >= st.st_size) {
			snprintf(err, errlen, "%s: is empty: %s", path, needs);
			ret = -ENODATA;
			goto fail;
		}
		n = pread(s->fd, s->head, sizeof(s->head), at < 0 ? 0 : at);
		if (n < 0) {
			ret = -errno;
			snprintf(err, errlen, "%s: read error: %s", path, strerror(errno));
			goto fail;
		}
		s->nhead = (size_t)n;
	} else {
		/* a pipe, FIFO, device: what is read here is kept for the reader */
		while (s->nhead < sizeof(s->head)) {
			ssize_t n = read(s->fd, s->head + s->nhead, sizeof(s->head) - s->nhead);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				ret = -errno;
				snprintf(err, errlen, "%s: read error: %s", path, strerror(errno));
				goto fail;
			}
			if (!n)
				break;
			s->nhead += (size_t)n;
		}
		if (!s->nhead) {
			snprintf(err, errlen, "%s: is empty (nothing could be read from it): %s", path, needs);
			ret = -ENODATA;
			goto fail;
		}
	}
	s->kind = sniff(s->head, s->nhead);
	return 0;
fail:
	report_src_close(s);
	return ret;
}

/* A stream's text: the bytes already read, then the rest. */
static ssize_t src_read(void *cookie, char *buf, size_t n)
{
	struct report_src *s = cookie;
	ssize_t r;

	if (s->headpos < s->nhead) {
		size_t k = s->nhead - s->headpos < n ? s->nhead - s->headpos : n;

		memcpy(buf, s->head + s->headpos, k);
		s->headpos += k;
		return (ssize_t)k;
	}
	do
		r = read(s->fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r;
}

static int src_close(void *cookie)
{
	struct report_src *s = cookie;
	int ret = close(s->fd);

	s->fd = -1;
	return ret;
}

FILE *report_src_file(struct report_src *s)
{
	if (s->f)
		return s->f;
	if (s->stream)
		s->f = fopencookie(s, "r", (cookie_io_functions_t){ .read = src_read,
								    .close = src_close });
	else if ((s->f = fdopen(s->fd, "r")))
		s->fd = -1;    /* the FILE owns it (read from where the head is) */
	return s->f;
}

const char *report_src_path(struct report_src *s, char *err, size_t errlen)
{
	int fd = s->fd;

	if (s->stream && s->spool < 0) {
		/* perf.data is read by seeking: spool the stream into an
		 * unlinked temporary file, once */
		char buf[1 << 16];
		ssize_t n;
		int ret = dc_tmpfile();

		if (ret < 0) {
			snprintf(err, errlen, "%s: cannot create a temporary file for it: %s", s->name,
				 strerror(-ret));
			return NULL;
		}
		s->spool = ret;
		for (n = (ssize_t)s->nhead, memcpy(buf, s->head, s->nhead); n != 0;
		     n = read(s->fd, buf, sizeof(buf))) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 || write(s->spool, buf, (size_t)n) != n) {
				snprintf(err, errlen, "%s: %s %s", s->name,
					 n < 0 ? "read error:" : "cannot spool it:", strerror(errno));
				return NULL;
			}
		}
	}
	if (!s->stream && strcmp(s->name, "-"))
		return s->name;        /* a regular file by its own name */
	if (s->stream)
		fd = s->spool;
	snprintf(s->fdpath, sizeof(s->fdpath), "/proc/self/fd/%d", fd);
	return s->fdpath;
}

void report_src_close(struct report_src *s)
{
	if (s->f)
		fclose(s->f);
	else if (s->fd >= 0)
		close(s->fd);
	if (s->spool >= 0)
		close(s->spool);
	s->f = NULL;
	s->fd = s->spool = -1;
}

/* "/proc/self/fd/N: msg" -> "NAME: msg" in place. */
static void rename_in_msg(char *msg, size_t len, const char *from, const char *to)
{
	char *at = strstr(msg, from), *rest;

	if (!at || !(rest = strdup(at + strlen(from))))
		return;
	snprintf(at, len - (size_t)(at - msg), "%s%s", to, rest);
	free(rest);
}

static int machine_new(struct report_run *r, const struct report_opts *opt)
{
	r->machine = sr_machine_new(&r->sym, &opt->sr);
	return r->machine ? 0 : -ENOMEM;
}

/* end_ns: the recording's end (0: not known), until when a thread then
 * waiting or in the kernel was so (sr_machine_finish) */
static int machine_finish(struct report_run *r, uint64_t end_ns)
{
	struct sr_machine_stats st;
	int ret;

	ret = sr_machine_finish(r->machine, end_ns, &r->cct);
	if (ret)
		return ret;
	sr_machine_stats(r->machine, &st);
	r->sum.threads = st.threads;
	r->sum.traced_ns = st.traced_ns;
	r->sum.lost_ns = st.lost_ns;
	r->sum.undecoded = st.undecoded_gaps;
	r->sum.undecoded_ns = st.undecoded_ns;
	r->sum.events = st.events;
	r->sum.lost = st.lost_gaps;
	r->sum.truncated = st.truncated;
	r->sum.wakes = st.wakes;
	r->sum.wakers = r->wakers;
	r->sum.waits = st.waits_woken + st.waits_plain;
	r->sum.waits_woken = st.waits_woken;
	return 0;
}

static int run_script(struct report_run *r, const struct report_opts *opt,
		      char *err, size_t errlen)
{
	struct dc_event ev;
	const char *comm;
	off_t pos;
	int ret;

	FILE *in;

	if (opt->vmlinux || opt->kcore_dir || opt->kallsyms) {
		snprintf(err, errlen, "%s: perf script text names its kernel code itself: "
			 "--vmlinux, --kcore and --kallsyms are for perf.data", opt->input);
		return -EINVAL;
	}
	in = report_src_file(&r->src);
	if (!in) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = dc_script_new(&r->script, in);
	if (ret)
		goto fail;
	r->sym = (struct sr_symbolizer){
		.ctx = r->script,
		.func_key = dc_script_func_key,
		.name = dc_script_name,
		.func_start = dc_script_func_start,
	};
	ret = machine_new(r, opt);
	if (ret)
		goto fail;
	while ((ret = dc_script_next(r->script, &ev, &comm)) > 0) {
		if (comm && (ret = sr_machine_comm(r->machine, ev.pid, ev.tid, comm, ev.time_ns)))
			goto fail;
		if ((ret = sr_machine_feed(r->machine, &ev)))
			goto fail;
	}
	if (ret < 0) {
		snprintf(err, errlen, "%s: %s", opt->input, dc_script_errmsg(r->script, ret));
		return ret;
	}
	/* Bytes read: known for a file, not for a pipe (ftello fails). */
	pos = ftello(in);
	r->sum.bytes = pos > 0 ? (uint64_t)pos : 0;
	ret = machine_finish(r, 0);
	if (ret)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "%s: %s", opt->input, strerror(-ret));
	return ret;
}

/* ---- perf.data input: the PT decoder's session ---- */

static uint64_t sym_func_key(void *ctx, uint32_t pid, uint64_t ip)
{
	return dc_sym_func_key(ctx, pid, ip);
}

static const char *sym_name(void *ctx, uint64_t key)
{
	return dc_sym_name(ctx, key);
}

static const char *sym_srcline(void *ctx, uint64_t key)
{
	return dc_sym_srcline(ctx, key);
}

static uint32_t sym_inline_at(void *ctx, uint32_t pid, uint64_t ip, uint64_t *lo, uint64_t *hi)
{
	return dc_sym_inline_at(ctx, pid, ip, lo, hi);
}

static uint32_t sym_inline_up(void *ctx, uint32_t id, uint64_t *key)
{
	return dc_sym_inline_up(ctx, id, key);
}

static uint64_t sym_func_start(void *ctx, uint32_t pid, uint64_t ip)
{
	return dc_sym_func_start(ctx, pid, ip);
}

static void on_comm(void *ctx, uint32_t pid, uint32_t tid, const char *comm, uint64_t time_ns)
{
	struct report_run *r = ctx;

	if (r->machine && !r->err && sr_machine_comm(r->machine, pid, tid, comm, time_ns))
		r->err = -ENOMEM;
}

/* A new program image: the process's stacks start anew. */
static void on_exec(void *ctx, uint32_t pid, uint32_t tid, uint64_t time_ns)
{
	struct report_run *r = ctx;

	if (r->machine && !r->err && sr_machine_exec(r->machine, pid, tid, time_ns))
		r->err = -ENOMEM;
}

static void on_warning(void *ctx, const char *msg)
{
	struct report_run *r = ctx;

	fprintf(stderr, "ptflame %s: warning: %s\n", r->cmd, msg);
}

/* Redrawn in place at most every 1 MiB of PT data, only on a terminal. */
static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct report_run *r = ctx;

	if (!r->progress || !total)
		return;
	fprintf(stderr, "\rptflame %s: decoding %5.1f%% (%" PRIu64 " of %" PRIu64 " MB)",
		r->cmd, 100.0 * (double)done / (double)total, done >> 20, total >> 20);
	r->progress_shown = true;
}

/* --wakers: a wake, in time order with the events. */
static void on_wake(void *ctx, const struct dc_wake *w, const char *waker_comm)
{
	struct report_run *r = ctx;

	if (r->machine && !r->err && sr_machine_wake(r->machine, w->time, w->waker_pid,
						     w->waker_tid, waker_comm, w->wakee_tid))
		r->err = -ENOMEM;
}

/* A thread created during the recording, and its first switch-in: its
 * life from its creation (runnable until that switch-in). */
static void on_fork(void *ctx, uint32_t ppid, uint32_t ptid, const char *parent_comm,
		    uint32_t pid, uint32_t tid, uint64_t time_ns)
{
	struct report_run *r = ctx;

	if (r->machine && !r->err &&
	    sr_machine_fork(r->machine, ppid, ptid, parent_comm, pid, tid, time_ns))
		r->err = -ENOMEM;
}

static void on_first_in(void *ctx, uint32_t pid, uint32_t tid, uint64_t time_ns)
{
	struct report_run *r = ctx;

	(void)pid;
	if (r->machine && !r->err && sr_machine_first_in(r->machine, tid, time_ns))
		r->err = -ENOMEM;
}

static void on_first_out(void *ctx, uint32_t pid, uint32_t tid, uint64_t time_ns)
{
	struct report_run *r = ctx;

	(void)pid;
	if (r->machine && !r->err && sr_machine_first_out(r->machine, tid, time_ns))
		r->err = -ENOMEM;
}

static int on_event(const struct dc_event *ev, void *ctx)
{
	struct report_run *r = ctx;

	return r->err ? r->err : sr_machine_feed(r->machine, ev);
}

static int run_perf(struct report_run *r, const struct report_opts *opt,
		    char *err, size_t errlen)
{
	struct dc_session_opts so = {
		.symfs = opt->symfs,
		.on_comm = on_comm,
		.on_progress = on_progress,
		.on_warning = on_warning,
		.on_exec = on_exec,
		.syscall_numbers = opt->syscall_names,
		.vmlinux = opt->vmlinux,
		.kcore_dir = opt->kcore_dir,
		.kallsyms = opt->kallsyms,
		.inline_frames = !opt->sr.no_inline,
		.ctx = r,
		.jobs = opt->jobs,
		.libipt_only = opt->libipt_only,
		.on_wake = opt->sr.wakers ? on_wake : NULL,
		.on_fork = on_fork,
		.on_first_in = on_first_in,
		.on_first_out = on_first_out,
	};
	struct dc_session_stats st;
	struct dc_symbols *syms;
	int ret;

	const char *path = report_src_path(&r->src, err, errlen);

	if (!so.jobs) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		so.jobs = n < 1 ? 1 : n > REPORT_MAX_JOBS ? REPORT_MAX_JOBS : (unsigned)n;
	}

	if (!path)
		return -EIO;
	/* The session maps the file itself (the one opened, through
	 * /proc/self/fd: a pipe's bytes were spooled into a file). */
	ret = dc_session_open(path, &so, &r->session, err, errlen);
	if (ret) {
		rename_in_msg(err, errlen, path, opt->input);
		return ret;
	}
	syms = dc_session_symbols(r->session);
	r->sym = (struct sr_symbolizer){
		.ctx = syms,
		.func_key = sym_func_key,
		.name = sym_name,
		.func_start = sym_func_start,
		.srcline = sym_srcline,
		.inline_at = opt->sr.no_inline ? NULL : sym_inline_at,
		.inline_up = opt->sr.no_inline ? NULL : sym_inline_up,
	};
	ret = machine_new(r, opt);
	if (ret)
		goto fail;
	ret = dc_session_run(r->session, on_event, r);
	if (!ret)
		ret = r->err;  /* a comm/exec callback after the last event */
	if (r->progress_shown)
		fputc('\n', stderr);
	if (ret) {
		if (ret != -ENOMEM && dc_session_errmsg(r->session)[0]) {
			snprintf(err, errlen, "%s", dc_session_errmsg(r->session));
			rename_in_msg(err, errlen, path, opt->input);
			return ret;
		}
		goto fail;
	}
	dc_session_stats(r->session, &st);
	r->sum.bytes = st.bytes_decoded;
	r->wake_attr = st.wake_attr;
	if (st.bytes_decoded && !st.syncs) {
		/* not one PSB: nothing could be decoded, and an empty
		 * profile would say the threads did nothing */
		snprintf(err, errlen, "%s: no sync point (PSB) in its %" PRIu64 " bytes of PT data: "
			 "the trace is damaged", opt->input, st.bytes_decoded);
		return -EINVAL;
	}
	ret = machine_finish(r, st.end_ns);
	if (ret)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "%s: %s", opt->input, strerror(-ret));
	return ret;
}

/* Filters that match nothing are said (the run still succeeds). */
static void note_empty_filters(const struct report_run *r, const struct report_opts *opt)
{
	report_note_filters(r->cmd, opt, r->cct, r->machine);
}

int report_run(const struct report_opts *opt, struct report_run **out,
	       char *err, size_t errlen)
{
	struct report_src src;
	int ret = report_src_open(&src, opt->input, err, errlen);

	return ret ? ret : report_run_src(opt, &src, out, err, errlen);
}

int report_run_src(const struct report_opts *opt, struct report_src *src,
		   struct report_run **out, char *err, size_t errlen)
{
	struct report_run *r = calloc(1, sizeof(*r));
	enum report_input fmt = opt->format;
	int ret;

	if (!r) {
		report_src_close(src);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r->src = *src;             /* taken over */
	src->f = NULL;
	src->fd = src->spool = -1;
	r->cmd = opt->cmd ? opt->cmd : "report";
	r->progress = opt->progress;
	r->wakers = opt->sr.wakers != 0;
	r->max_stack = opt->sr.max_stack ? opt->sr.max_stack : SR_DEFAULT_MAX_STACK;
	r->win_lo = opt->sr.time_start;
	r->win_hi = opt->sr.time_end;
	if (fmt == REPORT_INPUT_AUTO)
		fmt = r->src.kind;
	switch (fmt) {
	case REPORT_INPUT_SCRIPT:
		ret = run_script(r, opt, err, errlen);
		break;
	case REPORT_INPUT_PERF:
		ret = run_perf(r, opt, err, errlen);
		break;
	default:
		snprintf(err, errlen, "%s: neither a perf.data file nor perf script text", opt->input);
		ret = -EINVAL;
	}
	if (ret) {
		report_run_free(r);
		return ret;
	}
	note_empty_filters(r, opt);
	if (opt->sr.wakers && !r->sum.wakes && r->wake_attr)
		fprintf(stderr, "ptflame %s: note: %s records wakes (sched:sched_waking), but "
			"none came in it: showing plain [off-cpu]\n", r->cmd, opt->input);
	else if (opt->sr.wakers && !r->sum.wakes)
		fprintf(stderr, "ptflame %s: note: %s: %s: showing plain [off-cpu] (record with "
			"'ptflame record', which writes them, or add -e sched:sched_waking to "
			"'perf record')\n", r->cmd, opt->input, fmt == REPORT_INPUT_SCRIPT ?
			"perf script text has no wake records" : "no wake records in this file");
	*out = r;
	return 0;
}

void report_run_free(struct report_run *r)
{
	if (!r)
		return;
	sr_cct_free(r->cct);
	sr_machine_free(r->machine);
	dc_script_free(r->script);
	dc_session_close(r->session);
	report_src_close(&r->src);
	free(r);
}

const struct sr_machine *report_machine(const struct report_run *r)
{
	return r->machine;
}

const struct sr_cct *report_cct(const struct report_run *r)
{
	return r->cct;
}

const struct sr_symbolizer *report_symbolizer(const struct report_run *r)
{
	return &r->sym;
}

const struct report_summary *report_summary(const struct report_run *r)
{
	return &r->sum;
}

static const char *human_bytes(uint64_t b, char *buf, size_t n)
{
	if (b >= 10ull << 20)
		snprintf(buf, n, "%.1f MB", (double)b / (1 << 20));
	else if (b >= 10ull << 10)
		snprintf(buf, n, "%.1f KB", (double)b / (1 << 10));
	else
		snprintf(buf, n, "%" PRIu64 " bytes", b);
	return buf;
}

/* The summary's line for --time: the window as it met the recording above,
 * and the thread time the output holds from it (after every filter). No
 * line when they do not meet: report_note_filters said so. */
static void print_window(const struct report_run *r, const char *cmd)
{
	char kept[32], range[80];

	if (!report_window_range(r->cct, r->win_lo, r->win_hi, range, sizeof(range)))
		return;
	fg_format_ns(kept, sizeof(kept), sr_cct_root(r->cct)->total_ns);
	fprintf(stderr, "ptflame %s: --time %s: the output holds %s of thread time\n", cmd, range,
		kept);
}

void report_print_summary(const struct report_run *r, const char *cmd)
{
	const struct report_summary *s = &r->sum;
	char traced[32], bytes[32], range[80] = " in ";

	fg_format_ns(traced, sizeof(traced), s->traced_ns);
	/* the range as --time takes it */
	if (!r->cct || !report_time_range(r->cct, range + 4, sizeof(range) - 4))
		range[0] = '\0';
	fprintf(stderr, "ptflame %s: %" PRIu64 " thread%s, traced %s%s, decoded %s, "
		"%" PRIu64 " lost segment%s (%.2f%% of time)\n", cmd, s->threads,
		s->threads == 1 ? "" : "s", traced, range, human_bytes(s->bytes, bytes, sizeof(bytes)),
		s->lost, s->lost == 1 ? "" : "s",
		s->traced_ns ? 100.0 * (double)s->lost_ns / (double)s->traced_ns : 0.0);
	if (s->undecoded)
		fprintf(stderr, "ptflame %s: %" PRIu64 " stretch%s in code that cannot be decoded "
			"(%.2f%% of time; a binary missing or changed, named above): [lost] under "
			"[unknown] (BINARY)\n", cmd, s->undecoded, s->undecoded == 1 ? "" : "es",
			s->traced_ns ? 100.0 * (double)s->undecoded_ns / (double)s->traced_ns : 0.0);
	if ((r->win_lo || r->win_hi) && r->cct)
		print_window(r, cmd);
	if (s->wakers && s->wakes)
		fprintf(stderr, "ptflame %s: --wakers: %" PRIu64 " of %" PRIu64 " wait%s ([off-cpu]) "
			"ended by a wake record\n", cmd, s->waits_woken, s->waits,
			s->waits == 1 ? "" : "s");
	if (s->truncated)
		fprintf(stderr, "ptflame %s: %" PRIu64 " call%s deeper than --max-stack %" PRIu32
			" shown as [truncated]\n", cmd, s->truncated, s->truncated == 1 ? "" : "s",
			r->max_stack);
}

/* The output's FILE writes through this, keeping the first error's errno
 * (a full disk is ENOSPC, not the EIO a FILE reports). */
static ssize_t out_write(void *cookie, const char *buf, size_t n)
{
	struct report_out *o = cookie;
	size_t done = 0;

	while (done < n) {
		ssize_t w = write(o->out.fd, buf + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (!o->err)
				o->err = w < 0 ? -errno : -EIO;
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)w;
	}
	return (ssize_t)done;
}

int report_out_open(struct report_out *o, const char *path, char *err, size_t errlen)
{
	int ret;

	*o = (struct report_out){ .path = path };
	ret = dc_out_open(&o->out, path, 0, 0666, err, errlen);
	if (ret)
		return ret;
	o->f = fopencookie(o, "w", (cookie_io_functions_t){ .write = out_write });
	if (!o->f) {
		dc_out_abort(&o->out);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

int report_out_close(struct report_out *o, int ret, char *err, size_t errlen)
{
	const char *name = o->path ? o->path : "stdout";

	if (fclose(o->f) && !ret)
		ret = o->err ? o->err : -EIO;
	if (o->err)
		ret = o->err;   /* what the writer saw as EIO */
	if (ret) {
		snprintf(err, errlen, "cannot write %s: %s", name, strerror(-ret));
		dc_out_abort(&o->out);
		return ret;
	}
	return dc_out_commit(&o->out, err, errlen);
}

/* stat() of an input or output name ("-": stdin or stdout). */
static int stat_name(const char *path, int std_fd, struct stat *st)
{
	if (!path || !strcmp(path, "-"))
		return fstat(std_fd, st);
	return stat(path, st);
}

int report_need_dir(const char *cmd, const char *opt, const char *dir)
{
	struct stat st;

	if (stat(dir, &st))
		return cmd_usage_error(cmd, "%s %s: %s", opt, dir, strerror(errno)), 1;
	if (!S_ISDIR(st.st_mode))
		return cmd_usage_error(cmd, "%s %s: not a directory", opt, dir), 1;
	return 0;
}

/* Two outputs into one file: one would replace the other (a device or
 * FIFO takes both). */
static bool same_output(const char *a, const char *b)
{
	struct stat st, st2;

	if (!a || !b || !strcmp(a, "-") || !strcmp(b, "-"))
		return false;
	if (stat(a, &st))
		return !strcmp(a, b);
	return S_ISREG(st.st_mode) && !stat(b, &st2) && st.st_dev == st2.st_dev &&
	       st.st_ino == st2.st_ino;
}

/* Can path be written as dc_out_open would (a new or regular file: its
 * temporary file made and removed; anything else is opened in place
 * later, a FIFO would block here)? */
static int output_creatable(const char *path, char *err, size_t errlen)
{
	struct stat st;
	struct dc_out o;

	if (!path || !strcmp(path, "-") || (!stat(path, &st) && !S_ISREG(st.st_mode)))
		return 0;
	if (dc_out_open(&o, path, 0, 0666, err, errlen))
		return -1;
	dc_out_abort(&o);
	return 0;
}

int report_check_outputs(const char *cmd, const char *input, const char *const *opt,
			 const char *const *out, size_t n)
{
	struct stat in, st;
	bool have_in = !stat_name(input, STDIN_FILENO, &in) && S_ISREG(in.st_mode);
	char err[512];

	for (size_t i = 0; i < n; i++) {
		if ((i && !out[i]) || stat_name(out[i], STDOUT_FILENO, &st) || !have_in)
			continue;
		if (st.st_dev == in.st_dev && st.st_ino == in.st_ino)
			return cmd_error(cmd, "%s is the input %s: writing it would destroy the input; "
					 "choose another output", out[i] ? out[i] : "stdout",
					 input ? input : "-");
	}
	for (size_t i = 0; i < n; i++)
		for (size_t k = i + 1; k < n; k++)
			if (same_output(out[i], out[k]))
				return cmd_error(cmd, "%s and %s name the same file %s; choose two",
						 opt[i], opt[k], out[i]);
	for (size_t i = 0; i < n; i++)
		if ((i == 0 || out[i]) && output_creatable(out[i], err, sizeof(err)))
			return cmd_error(cmd, "%s: %s", opt[i], err);
	return 0;
}

/* ---- option helpers shared by report and diff ---- */

int report_parse_tids(const char *s, uint32_t **tids, size_t *n)
{
	size_t cap = 1, nr = 0;
	uint32_t *v;
	const char *p = s;

	for (const char *q = s; *q; q++)
		cap += *q == ',';
	v = calloc(cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	while (*p) {
		char *end;
		unsigned long t;

		if (*p < '0' || *p > '9')
			goto bad;
		errno = 0;
		t = strtoul(p, &end, 10);
		if (errno || t > UINT32_MAX || (*end && *end != ','))
			goto bad;
		v[nr++] = (uint32_t)t;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			goto bad;
	}
	if (!nr)
		goto bad;
	*tids = v;
	*n = nr;
	return 0;
bad:
	free(v);
	return -EINVAL;
}

int report_parse_duration(const char *s, uint64_t *ns)
{
	static const struct { const char *suffix; double mult; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1e9 },
	};
	char *end;
	double v;

	/* decimal only: strtod would read hex ("0x10") too */
	if (!*s || *s == '-' || *s == '+' || isspace((unsigned char)*s) || strpbrk(s, "xX"))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v >= 0) || !isfinite(v))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		if (v * units[i].mult >= 1.8e19)
			return -EINVAL;
		/* Plain decimal ns must stay exact: doubles hold only 2^53. */
		if (units[i].mult == 1 && strspn(s, "0123456789") == (size_t)(end - s))
			*ns = strtoull(s, NULL, 10);
		else
			*ns = (uint64_t)(v * units[i].mult + 0.5);
		return 0;
	}
	return -EINVAL;
}

int report_parse_time(const char *s, uint64_t *start, uint64_t *end)
{
	const char *comma = strchr(s, ',');
	char first[64];

	if (!comma || (size_t)(comma - s) >= sizeof(first))
		return -EINVAL;
	memcpy(first, s, (size_t)(comma - s));
	first[comma - s] = 0;
	*start = 0;
	*end = 0;
	if (*first && report_parse_duration(first, start))
		return -EINVAL;
	if (comma[1] && report_parse_duration(comma + 1, end))
		return -EINVAL;
	if (*end && *end <= *start)
		return -ERANGE;
	return 0;
}

int report_filter_option(const char *cmd, int c, const char *arg, struct sr_options *sr,
			 uint32_t **tids_owner)
{
	switch (c) {
	case REPORT_OPT_TID:
		free(*tids_owner);
		*tids_owner = NULL;
		if (report_parse_tids(arg, tids_owner, &sr->ntids))
			return cmd_usage_error(cmd, "--tid wants thread ids like 12,13: '%s'", arg),
			       CMD_OPT_ERR;
		sr->tids = *tids_owner;
		return 1;
	case REPORT_OPT_COMM:
	case REPORT_OPT_ROOT:
		if (!*arg)
			return cmd_usage_error(cmd, "--%s wants a name, not ''",
					       c == REPORT_OPT_COMM ? "comm" : "root"), CMD_OPT_ERR;
		if (c == REPORT_OPT_COMM)
			sr->comm = arg;
		else
			sr->root = arg;
		return 1;
	case REPORT_OPT_TIME:
		switch (report_parse_time(arg, &sr->time_start, &sr->time_end)) {
		case 0:
			break;
		case -ERANGE:
			return cmd_usage_error(cmd, "--time START,END: END must come after START: '%s'",
					       arg), CMD_OPT_ERR;
		default:
			return cmd_usage_error(cmd, "--time wants START,END (e.g. 12.5,13 or 100ms,): '%s'",
					       arg), CMD_OPT_ERR;
		}
		return 1;
	case REPORT_OPT_ONCPU:
	case REPORT_OPT_OFFCPU:
		/* (each keeps what the other drops: together, nothing) */
		if (sr->keep_time &&
		    sr->keep_time != (c == REPORT_OPT_ONCPU ? SR_KEEP_ONCPU : SR_KEEP_OFFCPU))
			return cmd_usage_error(cmd, "--oncpu and --offcpu exclude each other: "
					       "give one (neither: both kinds of time)"), CMD_OPT_ERR;
		sr->keep_time = c == REPORT_OPT_ONCPU ? SR_KEEP_ONCPU : SR_KEEP_OFFCPU;
		return 1;
	case REPORT_OPT_PER_THREAD:
		sr->per_thread = true;
		return 1;
	case REPORT_OPT_SHOW_PLT:
		sr->show_plt = true;
		return 1;
	case REPORT_OPT_NO_INLINE:
		sr->no_inline = true;
		return 1;
	default:
		return 0;
	}
}
