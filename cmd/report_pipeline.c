/* ptflame - report pipeline: wiring an input to the stack machine.
 * Logic lives in the rooms; this file only connects them and turns their
 * error codes into one message. */
#include <errno.h>
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
	FILE *in;                  /* script text input                 */
	struct dc_script *script;
	struct dc_session *session;/* perf.data input                   */
	int err;                   /* first failure inside a callback   */
	const char *cmd;
	bool progress, progress_shown;
};

enum report_input report_sniff(FILE *in)
{
	char buf[4096];
	size_t n = fread(buf, 1, sizeof(buf), in);

	rewind(in);
	if (n >= 8 && !memcmp(buf, "PERFILE2", 8))
		return REPORT_INPUT_PERF;
	if (dc_script_detect(buf, n))
		return REPORT_INPUT_SCRIPT;
	return REPORT_INPUT_AUTO;
}

static int machine_new(struct report_run *r, const struct report_opts *opt)
{
	r->machine = sr_machine_new(&r->sym, &opt->sr);
	return r->machine ? 0 : -ENOMEM;
}

static int machine_finish(struct report_run *r)
{
	struct sr_machine_stats st;
	int ret;

	sr_machine_stats(r->machine, &st);
	r->sum.threads = st.threads;
	r->sum.traced_ns = st.traced_ns;
	r->sum.lost_ns = st.lost_ns;
	r->sum.events = st.events;
	r->sum.lost = st.lost_gaps;
	ret = sr_machine_finish(r->machine, 0, &r->cct);
	return ret;
}

static int run_script(struct report_run *r, const struct report_opts *opt,
		      char *err, size_t errlen)
{
	struct dc_event ev;
	const char *comm;
	off_t pos;
	int ret;

	ret = dc_script_new(&r->script, r->in);
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
	pos = ftello(r->in);
	r->sum.bytes = pos > 0 ? (uint64_t)pos : 0;
	ret = machine_finish(r);
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
		.ctx = r,
	};
	struct dc_session_stats st;
	struct dc_symbols *syms;
	int ret;

	/* The session maps the file itself. */
	fclose(r->in);
	r->in = NULL;
	ret = dc_session_open(opt->input, &so, &r->session, err, errlen);
	if (ret)
		return ret;
	syms = dc_session_symbols(r->session);
	r->sym = (struct sr_symbolizer){
		.ctx = syms,
		.func_key = sym_func_key,
		.name = sym_name,
		.func_start = sym_func_start,
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
			return ret;
		}
		goto fail;
	}
	dc_session_stats(r->session, &st);
	r->sum.bytes = st.bytes_decoded;
	if (st.bytes_decoded && !st.syncs) {
		/* not one PSB: nothing could be decoded, and an empty
		 * profile would say the threads did nothing */
		snprintf(err, errlen, "%s: no sync point (PSB) in its %" PRIu64 " bytes of PT data: "
			 "the trace is damaged", opt->input, st.bytes_decoded);
		return -EINVAL;
	}
	ret = machine_finish(r);
	if (ret)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "%s: %s", opt->input, strerror(-ret));
	return ret;
}

int report_run(const struct report_opts *opt, struct report_run **out,
	       char *err, size_t errlen)
{
	struct report_run *r = calloc(1, sizeof(*r));
	enum report_input fmt = opt->format;
	struct stat st;
	int ret;

	if (!r)
		return -ENOMEM;
	r->cmd = opt->cmd ? opt->cmd : "report";
	r->progress = opt->progress;
	if (!strcmp(opt->input, "-")) {
		r->in = stdin;
		if (fmt == REPORT_INPUT_AUTO)
			fmt = REPORT_INPUT_SCRIPT;
	} else {
		r->in = fopen(opt->input, "rb");
		if (!r->in) {
			ret = -errno;
			snprintf(err, errlen, "cannot open %s: %s%s", opt->input, strerror(errno),
				 errno == ENOENT ? " (record one with 'ptflame record')" : "");
			free(r);
			return ret;
		}
		if (fstat(fileno(r->in), &st) == 0 && (S_ISDIR(st.st_mode) || st.st_size == 0)) {
			snprintf(err, errlen, "%s: %s", opt->input,
				 S_ISDIR(st.st_mode) ? "is a directory" :
				 "is empty: ptflame needs a perf.data file (ptflame record, perf record "
				 "-e intel_pt//u) or the text of 'perf script --itrace=cr'");
			report_run_free(r);
			return -EINVAL;
		}
		if (fmt == REPORT_INPUT_AUTO)
			fmt = report_sniff(r->in);
	}
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
	if (r->in && r->in != stdin)
		fclose(r->in);
	free(r);
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

void report_print_summary(const struct report_run *r, const char *cmd)
{
	const struct report_summary *s = &r->sum;
	char traced[32], bytes[32];

	fg_format_ns(traced, sizeof(traced), s->traced_ns);
	fprintf(stderr, "ptflame %s: %" PRIu64 " thread%s, traced %s, decoded %s, "
		"%" PRIu64 " lost segment%s (%.2f%% of time)\n", cmd, s->threads,
		s->threads == 1 ? "" : "s", traced, human_bytes(s->bytes, bytes, sizeof(bytes)),
		s->lost, s->lost == 1 ? "" : "s",
		s->traced_ns ? 100.0 * (double)s->lost_ns / (double)s->traced_ns : 0.0);
}

int report_out_open(struct report_out *o, const char *path)
{
	o->path = path;
	o->tmp = NULL;
	if (!path || !strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	if (asprintf(&o->tmp, "%s.tmp.%d", path, (int)getpid()) < 0) {
		o->tmp = NULL;
		return -ENOMEM;
	}
	o->f = fopen(o->tmp, "w");
	if (!o->f) {
		int ret = -errno;

		free(o->tmp);
		o->tmp = NULL;
		return ret;
	}
	return 0;
}

int report_out_close(struct report_out *o, bool ok)
{
	int ret = 0;

	if (o->f == stdout)
		return fflush(stdout) ? -errno : 0;
	if (fclose(o->f))
		ok = false, ret = -EIO;
	if (ok && rename(o->tmp, o->path))
		ret = -errno;
	if (!ok || ret)
		unlink(o->tmp);
	free(o->tmp);
	return ret ? ret : (ok ? 0 : -EIO);
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

	if (!*s || *s == '-' || *s == '+')
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
		return -EINVAL;
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
		sr->comm = arg;
		return 1;
	case REPORT_OPT_ROOT:
		sr->root = arg;
		return 1;
	case REPORT_OPT_TIME:
		if (report_parse_time(arg, &sr->time_start, &sr->time_end))
			return cmd_usage_error(cmd, "--time wants START,END (e.g. 12.5,13 or 100ms,): '%s'",
					       arg), CMD_OPT_ERR;
		return 1;
	case REPORT_OPT_ONCPU:
		sr->keep_time = SR_KEEP_ONCPU;
		return 1;
	case REPORT_OPT_OFFCPU:
		sr->keep_time = SR_KEEP_OFFCPU;
		return 1;
	case REPORT_OPT_PER_THREAD:
		sr->per_thread = true;
		return 1;
	default:
		return 0;
	}
}
