/* ptflame diff: compare two runs.
 *
 * Inputs are folded files (ours, annotated or plain, or any FlameGraph
 * folded file), `perf script` text of a PT recording, or perf.data files.
 * Folded files are read as they are; trace inputs go through the stack
 * machine into a calling-context tree first, which also brings per-call
 * latency histograms for the table.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/report_pipeline.h"
#include "decoder/dc_hash.h"
#include "decoder/script_import.h"
#include "flamegraph/flamegraph.h"
#include "stackrebuild/stackrebuild.h"

const char cmd_diff_help[] =
	"usage: ptflame diff [options] A B\n"
	"\n"
	"Compare two runs. A and B are folded files (ptflame's annotated or --plain\n"
	"output, or any FlameGraph folded file), 'perf script' text of a PT\n"
	"recording, or perf.data files. An empty file is an empty profile (a note\n"
	"says so). Options may come before or after A and B ('--' ends them).\n"
	"\n"
	"A frame 'X (inlined)' is X: a function is the same whether the compiler\n"
	"inlined it or not, so stacks and table rows match across that change and\n"
	"show it as X (its time and calls summed; the inlining is no change of its\n"
	"own). A note on stderr says when A and B share no function or ran\n"
	"different programs (no comm in common): likely not the diff meant.\n"
	"\n"
	"Default output: FlameGraph's difffolded form, one line per stack of either\n"
	"run, 'stack VALUE_A VALUE_B' with plain names and 0 where a stack is\n"
	"missing; 'flamegraph.pl' colours it (red: grew in B).\n"
	"\n"
	"options:\n"
	"  -n, --normalize     scale A's values to B's total (as difffolded.pl -n)\n"
	"      --table         a table per function instead: the --sort metric of A\n"
	"                      and B, its change and change in percent, and A and B\n"
	"                      of two of total, avg, calls (fits 120 columns;\n"
	"                      p99 needs trace inputs)\n"
	"      --by-stack      table rows per call path instead of per function\n"
	"      --sort KEY      total, self, avg, p99 or calls: largest change first\n"
	"                      (default total)\n"
	"      --top N         only the first N rows\n"
	"      --raw           times in plain nanoseconds\n"
	"      --svg FILE      draw a differential flame graph into FILE (B's widths,\n"
	"                      red grew, blue shrank); the text then only with -o\n"
	"  -o, --output FILE   write there instead of stdout\n"
	"      --symfs DIR     look for binaries under DIR first, before their\n"
	"                      recorded paths (perf.data input; a copy of the\n"
	"                      recording machine's files)\n"
	"      --max-stack N   keep N frames per stack (default 1024): of trace\n"
	"                      inputs, and of folded inputs in --by-stack tables\n"
	"                      (deeper frames: one [truncated] row)\n"
	"      --wakers[=N]    trace inputs: each [off-cpu] frame's time under\n"
	"                      '[woken by COMM-TID]' and the waker's stack, through\n"
	"                      up to N threads (as 'ptflame report --wakers')\n"
	"  -j, --jobs N        decode perf.data inputs with N threads (default: the\n"
	"                      online CPUs), as 'ptflame report -j'\n"
	"  -h, --help          this help\n"
	"\n"
	"filters, applied to both runs (trace inputs only, as in 'ptflame report'):\n"
	REPORT_FILTER_HELP
	"\n"
	"examples:\n"
	"  ptflame diff before.folded after.folded | flamegraph.pl > diff.svg\n"
	"  ptflame diff --table --sort self before.data after.data\n";

enum {
	OPT_TABLE = REPORT_OPT_NEXT, OPT_BY_STACK, OPT_SORT, OPT_TOP, OPT_RAW, OPT_SYMFS,
	OPT_MAX_STACK, OPT_SVG, OPT_WAKERS,
};

struct diff_opts {
	bool normalize, table, by_stack, raw, filtered;
	enum fg_sort sort;
	size_t top;
	const char *output;
	const char *symfs;
	const char *svg;
	struct sr_options sr;
	uint32_t *tids;
	unsigned jobs;
};

/* One loaded run. */
struct input {
	const char *path;
	struct fg_folded *folded;      /* folded input, or a trace folded plain */
	struct report_run *run;        /* trace input: owns the CCT and names  */
	const struct sr_cct *cct;
	struct report_src src;         /* a folded input, read once          */
	bool empty;                    /* a file or stream with no byte      */
	char **comms;                  /* trace input: its threads' comms    */
	size_t ncomms;
};

static void input_free(struct input *in)
{
	fg_folded_free(in->folded);
	report_run_free(in->run);
	for (size_t i = 0; i < in->ncomms; i++)
		free(in->comms[i]);
	free(in->comms);
	if (in->path)
		report_src_close(&in->src);
	memset(in, 0, sizeof(*in));
}

/* perf.data or perf script text: the report pipeline builds the CCT. */
static int load_trace(struct input *in, const struct diff_opts *o)
{
	struct report_opts ro = {
		.input = in->path, .format = REPORT_INPUT_AUTO, .symfs = o->symfs,
		.sr = o->sr, .quiet = true, .cmd = "diff", .jobs = o->jobs,
	};
	char err[512] = "";

	if (report_run_src(&ro, &in->src, &in->run, err, sizeof(err)))
		return cmd_error("diff", "%s", err[0] ? err : "cannot decode the input");
	in->cct = report_cct(in->run);
	return 0;
}

static int load_folded(struct input *in)
{
	size_t bad = 0;
	FILE *f = report_src_file(&in->src);
	int rc = f ? fg_folded_read(f, &in->folded, &bad) : -ENOMEM;

	if (rc == -EBADMSG && bad == 1)
		return cmd_error("diff", "%s: neither a perf.data file, the text of 'perf script "
				 "--itrace=cr', nor folded stacks ('frame;frame VALUE'): line 1 "
				 "is none of them", in->path);
	if (rc == -EBADMSG)
		return cmd_error("diff", "%s: line %zu is not a folded stack ('frame;frame VALUE')",
				 in->path, bad);
	if (rc == -EOVERFLOW)
		return cmd_error("diff", "%s: line %zu: the values add up past 2^64-1 (18446744073709551615)",
				 in->path, bad);
	if (rc)
		return cmd_error("diff", "%s: %s", in->path, rc == -EIO ? "read error" : strerror(-rc));
	return 0;
}

/* --per-thread: a line's root frame "comm-TID" of a thread of cct becomes
 * "comm", so that two recordings' threads match by name (their tids never
 * do); threads of one name are one. Returns the new text, or NULL. */
static char *threads_by_comm(const struct sr_cct *cct, const char *buf, size_t len,
			     size_t *outlen)
{
	struct dc_hash tids = { 0 };
	char *out = malloc(len + 1);
	size_t n = 0;

	for (size_t i = 0; out && i < sr_cct_nthreads(cct); i++)
		if (dc_hash_put(&tids, sr_cct_thread(cct, i)->tid, 1)) {
			free(out);
			out = NULL;
		}
	for (size_t i = 0; out && i < len;) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - buf) + 1 : len, sp = end, fe = i, d;
		uint64_t tid = 0, v;

		while (sp > i && buf[sp - 1] != ' ')     /* the value's space */
			sp--;
		while (fe + 1 < sp && buf[fe] != ';')    /* the root frame's end */
			fe++;
		for (d = fe; d > i && fe - d < 10 && buf[d - 1] >= '0' && buf[d - 1] <= '9'; d--)
			;
		for (size_t k = d; k < fe; k++)
			tid = tid * 10 + (uint64_t)(buf[k] - '0');
		if (d < fe && d > i + 1 && buf[d - 1] == '-' && dc_hash_get(&tids, tid, &v)) {
			memcpy(out + n, buf + i, d - 1 - i);
			n += d - 1 - i;
			i = fe;
		}
		memcpy(out + n, buf + i, end - i);
		n += end - i;
		i = end;
	}
	dc_hash_free(&tids);
	*outlen = n;
	return out;
}

/* A trace's CCT folded plain and read back: the diff works on stacks. */
static int fold_cct(struct input *in, bool per_thread)
{
	struct fg_fold_options fo = { .style = FG_FOLD_PLAIN };
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	int rc;

	if (!mem)
		return cmd_error("diff", "out of memory");
	rc = fg_fold(mem, in->cct, NULL, &fo);
	if (fclose(mem) || rc) {
		free(buf);
		return cmd_error("diff", "%s: cannot fold its stacks", in->path);
	}
	if (per_thread && len) {
		char *by = threads_by_comm(in->cct, buf, len, &len);

		free(buf);
		if (!(buf = by))
			return cmd_error("diff", "out of memory");
	}
	if (!len)
		buf[0] = '\n';         /* no stacks: one blank line */
	mem = fmemopen(buf, len ? len : 1, "r");
	if (!mem) {
		free(buf);
		return cmd_error("diff", "out of memory");
	}
	rc = fg_folded_read(mem, &in->folded, NULL);
	fclose(mem);
	free(buf);
	if (rc)
		return cmd_error("diff", "%s: cannot read its folded stacks back", in->path);
	/* the stacks are all the diff needs: let the tree go before the
	 * other input is decoded */
	report_run_free(in->run);
	in->run = NULL;
	in->cct = NULL;
	return 0;
}

/* An empty input (no byte at all): a folded profile of no stack. */
static int load_empty(struct input *in)
{
	FILE *mem = fmemopen((char[]){ "\n" }, 1, "r");
	int rc = mem ? fg_folded_read(mem, &in->folded, NULL) : -ENOMEM;

	if (mem)
		fclose(mem);
	in->empty = true;
	return rc ? cmd_error("diff", "out of memory") : 0;
}

/* The comms of the threads a trace kept time of, each once. */
static int keep_comms(struct input *in)
{
	for (size_t i = 0; i < sr_cct_nthreads(in->cct); i++) {
		const struct sr_thread_stats *t = sr_cct_thread(in->cct, i);
		size_t j = 0;
		char **p;

		if (!t->kept_ns || !t->comm || !t->comm[0])
			continue;
		while (j < in->ncomms && strcmp(in->comms[j], t->comm))
			j++;
		if (j < in->ncomms)
			continue;
		p = realloc(in->comms, (in->ncomms + 1) * sizeof(*p));
		if (!p)
			return cmd_error("diff", "out of memory");
		in->comms = p;
		if (!(in->comms[in->ncomms] = strdup(t->comm)))
			return cmd_error("diff", "out of memory");
		in->ncomms++;
	}
	return 0;
}

static int load(struct input *in, const char *path, const struct diff_opts *o)
{
	char err[512];
	int rc;

	in->path = path;
	rc = report_src_open(&in->src, path, err, sizeof(err));
	if (rc == -ENODATA && !o->filtered)
		return load_empty(in);
	if (rc) {
		in->path = NULL;       /* nothing to close */
		if (rc == -ENODATA)
			return cmd_error("diff", "%s: is empty: the filters need trace inputs", path);
		return cmd_error("diff", "%s", err);
	}
	if (in->src.kind == REPORT_INPUT_AUTO) {
		if (o->filtered)
			return cmd_error("diff", "%s: a folded file has no threads or time kinds; the "
					 "filters need trace inputs", path);
		if (load_folded(in))
			return 1;
	} else {
		if (load_trace(in, o) || keep_comms(in))
			return 1;
		if (o->table)
			return 0;
		if (fold_cct(in, o->sr.per_thread))
			return 1;
	}
	/* X and X (inlined) are one function to the diff */
	rc = fg_folded_merge_inlined(in->folded);
	if (rc == -EOVERFLOW)
		return cmd_error("diff", "%s: a count overflows when X (inlined) and X are merged",
				 in->path);
	return rc ? cmd_error("diff", "out of memory") : 0;
}

static int stats_of(const struct input *in, const struct diff_opts *o, struct fg_stats **st)
{
	enum fg_stats_key by = o->by_stack ? FG_BY_STACK : FG_BY_FUNCTION;
	unsigned fl = FG_STATS_INLINED_AS_FUNC;
	int rc = in->cct ? fg_stats_from_cct_flags(in->cct, NULL, by, fl, st)
			 : fg_stats_from_folded_flags(in->folded, by, o->sr.max_stack, fl, st);

	return rc ? cmd_error("diff", "out of memory") : 0;
}

/* The notes on the pair (flamegraph/diff_note.c). */
static void note_inputs(const struct diff_opts *o, const struct input *a, const struct fg_stats *sa,
			const struct input *b, const struct fg_stats *sb)
{
	fg_diff_note_inputs(stderr,
		&(struct fg_diff_side){ .path = a->path, .folded = a->folded, .stats = sa,
					.empty = a->empty, .comms = a->comms, .ncomms = a->ncomms },
		&(struct fg_diff_side){ .path = b->path, .folded = b->folded, .stats = sb,
					.empty = b->empty, .comms = b->comms, .ncomms = b->ncomms },
		o->filtered);
}

static int write_svg(const struct diff_opts *o, const struct input *a, const struct input *b)
{
	char sub[512], msg[512];
	struct report_out out;
	int err;

	snprintf(sub, sizeof(sub), "before: %s, after: %s", a->path, b->path);
	if (report_out_open(&out, o->svg, msg, sizeof(msg)))
		return cmd_error("diff", "%s", msg);
	err = fg_diff_svg(out.f, a->folded, b->folded, o->normalize,
			  &(struct fg_svg_options){ .subtitle = sub });
	if (report_out_close(&out, err, msg, sizeof(msg)))
		return cmd_error("diff", "%s", msg);
	return 0;
}

static int parse_args(int argc, char **argv, struct diff_opts *o)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "normalize", no_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "table", no_argument, NULL, OPT_TABLE },
		{ "by-stack", no_argument, NULL, OPT_BY_STACK },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "raw", no_argument, NULL, OPT_RAW },
		{ "symfs", required_argument, NULL, OPT_SYMFS },
		{ "max-stack", required_argument, NULL, OPT_MAX_STACK },
		{ "svg", required_argument, NULL, OPT_SVG },
		{ "wakers", optional_argument, NULL, OPT_WAKERS },
		{ "jobs", required_argument, NULL, 'j' },
		REPORT_FILTER_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long v;
	int c, r;

	optind = 1;
	/* options anywhere, before or after A and B, as report takes them
	 * ('--' ends them) */
	while ((c = cmd_getopt("diff", argc, argv, "hno:j:", opts)) != -1) {
		r = c >= 0 ? report_filter_option("diff", c, optarg, &o->sr, &o->tids) : 0;
		if (r == CMD_OPT_ERR)
			return 2;
		if (r) {
			o->filtered = true;
			continue;
		}
		switch (c) {
		case CMD_OPT_HELP:
			return 0;
		case CMD_OPT_ERR:
			return 2;
		case 'n':
			o->normalize = true;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'j':
			if (cmd_parse_u64(optarg, &v) || !v || v > REPORT_MAX_JOBS)
				return cmd_usage_error("diff", "--jobs wants a count from 1 to %d, not '%s'",
						       REPORT_MAX_JOBS, optarg);
			o->jobs = (unsigned)v;
			break;
		case OPT_TABLE:
			o->table = true;
			break;
		case OPT_BY_STACK:
			o->by_stack = true;
			break;
		case OPT_SORT:
			if (!fg_sort_parse(optarg, &o->sort))
				return cmd_usage_error("diff", "unknown sort key '%s' (total, self, "
						       "avg, p99 or calls)", optarg);
			break;
		case OPT_TOP:
			if (cmd_parse_u64(optarg, &v) || v == 0)
				return cmd_usage_error("diff", "--top needs a positive number, not '%s'",
						       optarg);
			o->top = (size_t)v;
			break;
		case OPT_RAW:
			o->raw = true;
			break;
		case OPT_SYMFS:
			if (report_need_dir("diff", "--symfs", optarg))
				return 2;
			o->symfs = optarg;
			break;
		case OPT_MAX_STACK:
			if (cmd_parse_u64(optarg, &v) || !v || v > SR_MAX_DEPTH)
				return cmd_usage_error("diff", "--max-stack wants a count from 1 to %d, "
						       "not '%s'", SR_MAX_DEPTH, optarg);
			o->sr.max_stack = (uint32_t)v;
			break;
		case OPT_SVG:
			o->svg = optarg;
			break;
		case OPT_WAKERS:
			v = 1;
			if (optarg && (cmd_parse_u64(optarg, &v) || !v || v > 64))
				return cmd_usage_error("diff", "--wakers=N wants a count of threads "
						       "from 1 to 64, not '%s'", optarg);
			o->sr.wakers = (uint32_t)v;
			break;
		default:
			return 2;
		}
	}
	if (argc - optind != 2)
		return cmd_usage_error("diff", "needs two inputs, A and B (got %d)", argc - optind);
	if ((o->by_stack || o->sort || o->top || o->raw) && !o->table)
		return cmd_usage_error("diff", "--by-stack, --sort, --top and --raw go with --table");
	if (o->svg && o->table)
		return cmd_usage_error("diff", "--svg draws the stacks; it does not go with --table");
	if (o->normalize && o->table)
		return cmd_usage_error("diff", "-n scales the folded output; it does not go with "
				       "--table");
	return -1;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_opts o = { 0 };
	struct input a = { 0 }, b = { 0 };
	struct fg_stats *sa = NULL, *sb = NULL;
	struct report_out out;
	char msg[512];
	int rc, err;

	rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		goto done;
	rc = 1;
	if (report_check_outputs("diff", argv[optind], (const char *const[]){ "-o", "--svg" },
				 (const char *const[]){ o.output, o.svg }, 2) ||
	    report_check_outputs("diff", argv[optind + 1], (const char *const[]){ "-o", "--svg" },
				 (const char *const[]){ o.output, o.svg }, 2))
		goto done;
	if (load(&a, argv[optind], &o) || load(&b, argv[optind + 1], &o))
		goto done;
	/* (folded stacks have no single calls: a p99 column would be empty) */
	if (o.table && o.sort == FG_SORT_P99 && (!a.run || !b.run)) {
		rc = cmd_usage_error("diff", "--sort p99 needs two traces (perf.data or perf "
				     "script text): %s is folded stacks", !a.run ? a.path : b.path);
		goto done;
	}
	if (o.table && (stats_of(&a, &o, &sa) || stats_of(&b, &o, &sb)))
		goto done;
	note_inputs(&o, &a, sa, &b, sb);
	if (o.svg && write_svg(&o, &a, &b))
		goto done;
	if (o.svg && !o.output) {
		rc = 0;
		goto done;
	}
	if (report_out_open(&out, o.output, msg, sizeof(msg))) {
		cmd_error("diff", "%s", msg);
		goto done;
	}
	if (o.table)
		err = fg_table_write(out.f, sa, sb, &(struct fg_table_options){
			.sort = o.sort, .top = o.top, .raw = o.raw });
	else
		err = fg_diff_write(out.f, a.folded, b.folded, o.normalize);
	if (report_out_close(&out, err, msg, sizeof(msg))) {
		cmd_error("diff", "%s", msg);
		goto done;
	}
	rc = 0;
done:
	fg_stats_free(sa);
	fg_stats_free(sb);
	input_free(&a);
	input_free(&b);
	free(o.tids);
	return rc;
}
