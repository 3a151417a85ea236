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
#include "decoder/decoder.h"
#include "decoder/script_import.h"
#include "flamegraph/flamegraph.h"
#include "stackrebuild/stackrebuild.h"

const char cmd_diff_help[] =
	"usage: ptflame diff [options] A B\n"
	"\n"
	"Compare two runs. A and B are folded files (ptflame's annotated or --plain\n"
	"output, or any FlameGraph folded file), 'perf script' text of a PT\n"
	"recording, or perf.data files.\n"
	"\n"
	"Default output: FlameGraph's difffolded form, one line per stack of either\n"
	"run, 'stack VALUE_A VALUE_B' with plain names and 0 where a stack is\n"
	"missing; 'flamegraph.pl' colours it (red: grew in B).\n"
	"\n"
	"options:\n"
	"  -n, --normalize     scale A's values to B's total (as difffolded.pl -n)\n"
	"      --table         a table per function instead: calls, inferred calls,\n"
	"                      total, self, avg, p50, p90, p99, max of A and B and\n"
	"                      the change (percentiles need trace inputs)\n"
	"      --by-stack      table rows per call path instead of per function\n"
	"      --sort KEY      total, self, avg, p99 or calls: largest change first\n"
	"                      (default total)\n"
	"      --top N         only the first N rows\n"
	"      --raw           times in plain nanoseconds\n"
	"  -o, --output FILE   write there instead of stdout\n"
	"\n"
	"filters (trace inputs only, as in 'ptflame report'):\n"
	"      --oncpu         only on-CPU time (user and kernel)\n"
	"      --offcpu        only off-CPU time (blocked and preempted)\n"
	"      --tid LIST      only these threads (comma-separated)\n"
	"      --comm NAME     only threads with this command name\n"
	"      --root FUNC     only time under FUNC, re-rooted there\n"
	"      --time START,END  only this window, in seconds on the trace clock\n"
	"                      (either end may be empty)\n"
	"  -h, --help          this help\n"
	"\n"
	"examples:\n"
	"  ptflame diff before.folded after.folded | flamegraph.pl > diff.svg\n"
	"  ptflame diff --table --sort self before.data after.data\n";

enum {
	OPT_TABLE = 256, OPT_BY_STACK, OPT_SORT, OPT_TOP, OPT_RAW, OPT_ONCPU, OPT_OFFCPU,
	OPT_TID, OPT_COMM, OPT_ROOT, OPT_TIME,
};

struct diff_opts {
	bool normalize, table, by_stack, raw, filtered;
	enum fg_sort sort;
	size_t top;
	const char *output;
	struct sr_options sr;
	uint32_t *tids;
};

/* One loaded run. */
struct input {
	const char *path;
	struct fg_folded *folded;      /* folded input, or a trace folded plain */
	struct sr_cct *cct;            /* trace input                          */
	struct dc_script *script;      /* owns the CCT's names (perf script)   */
	struct sr_symbolizer sym;
	FILE *f;
};

static void input_free(struct input *in)
{
	fg_folded_free(in->folded);
	sr_cct_free(in->cct);
	dc_script_free(in->script);
	if (in->f)
		fclose(in->f);
	memset(in, 0, sizeof(*in));
}

static uint64_t script_key(void *ctx, uint32_t pid, uint64_t ip)
{
	return dc_script_func_key(ctx, pid, ip);
}

static const char *script_name(void *ctx, uint64_t key)
{
	return dc_script_name(ctx, key);
}

static uint64_t script_start(void *ctx, uint32_t pid, uint64_t ip)
{
	return dc_script_func_start(ctx, pid, ip);
}

/* perf script text -> branch events -> stack machine -> CCT. */
static int load_script(struct input *in, const struct diff_opts *o)
{
	struct sr_machine *m;
	struct dc_event ev;
	const char *comm;
	int rc;

	if (dc_script_new(&in->script, in->f))
		return cmd_error("diff", "out of memory");
	in->sym = (struct sr_symbolizer){ in->script, script_key, script_name, script_start };
	m = sr_machine_new(&in->sym, &o->sr);
	if (!m)
		return cmd_error("diff", "out of memory");
	while ((rc = dc_script_next(in->script, &ev, &comm)) == 1) {
		if (comm && sr_machine_comm(m, ev.pid, ev.tid, comm, ev.time_ns)) {
			rc = -ENOMEM;
			break;
		}
		if (sr_machine_feed(m, &ev)) {
			rc = -ENOMEM;
			break;
		}
	}
	if (rc == 0)
		rc = sr_machine_finish(m, 0, &in->cct);
	sr_machine_free(m);
	if (rc == -EBADMSG)
		return cmd_error("diff", "%s: line %llu is not 'perf script' output", in->path,
				 (unsigned long long)dc_script_bad_line(in->script));
	if (rc == -EIO)
		return cmd_error("diff", "%s: read error", in->path);
	if (rc)
		return cmd_error("diff", "%s: %s", in->path, strerror(-rc));
	return 0;
}

/* Seam: perf.data inputs go through the report pipeline (the lead's
 * cmd/report_pipeline.c). Hook it here: build in->cct (and keep whatever
 * owns its symbolizer in struct input) with o->sr as the machine options. */
static int load_perfdata(struct input *in, const struct diff_opts *o)
{
	(void)o;
	return cmd_error("diff", "%s: perf.data inputs need the report pipeline, not built in "
			 "this version; give folded files or 'perf script --itrace=cr' text",
			 in->path);
}

static int load_folded(struct input *in)
{
	size_t bad = 0;
	int rc = fg_folded_read(in->f, &in->folded, &bad);

	if (rc == -EBADMSG)
		return cmd_error("diff", "%s: line %zu is not a folded stack ('frame;frame VALUE')",
				 in->path, bad);
	if (rc)
		return cmd_error("diff", "%s: %s", in->path, rc == -EIO ? "read error" : strerror(-rc));
	return 0;
}

/* A trace's CCT folded plain and read back: the diff works on stacks. */
static int fold_cct(struct input *in)
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
	return 0;
}

static int load(struct input *in, const char *path, const struct diff_opts *o)
{
	char head[4096];
	size_t n;
	bool trace;

	in->path = path;
	in->f = fopen(path, "r");
	if (!in->f)
		return cmd_error("diff", "cannot open %s: %s", path, strerror(errno));
	n = fread(head, 1, sizeof(head), in->f);
	if (ferror(in->f) || fseek(in->f, 0, SEEK_SET))
		return cmd_error("diff", "%s: read error", path);
	if (n >= 8 && !memcmp(head, "PERFILE2", 8)) {
		if (load_perfdata(in, o))
			return 1;
		trace = true;
	} else if (dc_script_detect(head, n)) {
		if (load_script(in, o))
			return 1;
		trace = true;
	} else {
		if (o->filtered)
			return cmd_error("diff", "%s: a folded file has no threads or time kinds; the "
					 "filters need trace inputs", path);
		return load_folded(in) ? 1 : 0;
	}
	if (trace && !o->table)
		return fold_cct(in) ? 1 : 0;
	return 0;
}

static int stats_of(const struct input *in, const struct diff_opts *o, struct fg_stats **st)
{
	enum fg_stats_key by = o->by_stack ? FG_BY_STACK : FG_BY_FUNCTION;
	int rc = in->cct ? fg_stats_from_cct(in->cct, NULL, by, st)
			 : fg_stats_from_folded(in->folded, by, st);

	return rc ? cmd_error("diff", "out of memory") : 0;
}

static int parse_tids(struct diff_opts *o, const char *arg)
{
	size_t n = 1;
	char *copy, *save = NULL;

	for (const char *p = arg; *p; p++)
		n += *p == ',';
	free(o->tids);
	o->tids = calloc(n, sizeof(*o->tids));
	copy = strdup(arg);
	if (!o->tids || !copy) {
		free(copy);
		return -1;
	}
	o->sr.ntids = 0;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		unsigned long long v;

		if (cmd_parse_u64(t, &v) || v > UINT32_MAX) {
			free(copy);
			return -1;
		}
		o->tids[o->sr.ntids++] = (uint32_t)v;
	}
	free(copy);
	o->sr.tids = o->tids;
	return o->sr.ntids ? 0 : -1;
}

/* "12.5" seconds -> ns; empty -> 0. */
static int parse_secs(const char *s, size_t len, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0;
	size_t i = 0;
	int nd = 0;

	*ns = 0;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
		sec = sec * 10 + (uint64_t)(s[i] - '0');
	if (i < len && s[i] == '.')
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			if (nd < 9) {
				frac = frac * 10 + (uint64_t)(s[i] - '0');
				nd++;
			}
	if (i != len || sec > UINT64_MAX / 1000000000ull - 1)
		return -1;
	for (; nd < 9; nd++)
		frac *= 10;
	*ns = sec * 1000000000ull + frac;
	return 0;
}

static int parse_time(struct diff_opts *o, const char *arg)
{
	const char *comma = strchr(arg, ',');

	if (!comma || parse_secs(arg, (size_t)(comma - arg), &o->sr.time_start) ||
	    parse_secs(comma + 1, strlen(comma + 1), &o->sr.time_end))
		return -1;
	return o->sr.time_end && o->sr.time_end <= o->sr.time_start ? -1 : 0;
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
		{ "oncpu", no_argument, NULL, OPT_ONCPU },
		{ "offcpu", no_argument, NULL, OPT_OFFCPU },
		{ "tid", required_argument, NULL, OPT_TID },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "time", required_argument, NULL, OPT_TIME },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long v;
	int c;

	optind = 1;
	while ((c = cmd_getopt("diff", argc, argv, "+hno:", opts)) != -1) {
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
		case OPT_ONCPU:
			o->sr.keep_time |= SR_KEEP_ONCPU;
			o->filtered = true;
			break;
		case OPT_OFFCPU:
			o->sr.keep_time |= SR_KEEP_OFFCPU;
			o->filtered = true;
			break;
		case OPT_TID:
			if (parse_tids(o, optarg))
				return cmd_usage_error("diff", "bad thread list '%s'", optarg);
			o->filtered = true;
			break;
		case OPT_COMM:
			o->sr.comm = optarg;
			o->filtered = true;
			break;
		case OPT_ROOT:
			o->sr.root = optarg;
			o->filtered = true;
			break;
		case OPT_TIME:
			if (parse_time(o, optarg))
				return cmd_usage_error("diff", "bad --time '%s' (START,END in seconds)",
						       optarg);
			o->filtered = true;
			break;
		default:
			return 2;
		}
	}
	if (argc - optind != 2)
		return cmd_usage_error("diff", "needs two inputs, A and B (got %d)", argc - optind);
	if ((o->by_stack || o->sort || o->top || o->raw) && !o->table)
		return cmd_usage_error("diff", "--by-stack, --sort, --top and --raw go with --table");
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
	FILE *out = stdout;
	int rc;

	rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		goto done;
	rc = 1;
	if (load(&a, argv[optind], &o) || load(&b, argv[optind + 1], &o))
		goto done;
	if (o.output) {
		out = fopen(o.output, "w");
		if (!out) {
			cmd_error("diff", "cannot create %s: %s", o.output, strerror(errno));
			out = stdout;
			goto done;
		}
	}
	if (o.table) {
		if (stats_of(&a, &o, &sa) || stats_of(&b, &o, &sb))
			goto done;
		rc = fg_table_write(out, sa, sb, &(struct fg_table_options){
			.sort = o.sort, .top = o.top, .raw = o.raw });
	} else {
		rc = fg_diff_write(out, a.folded, b.folded, o.normalize);
	}
	if (fflush(out) || rc) {
		cmd_error("diff", "writing %s failed", o.output ? o.output : "the output");
		rc = 1;
		goto done;
	}
	rc = 0;
done:
	if (out != stdout)
		fclose(out);
	fg_stats_free(sa);
	fg_stats_free(sb);
	input_free(&a);
	input_free(&b);
	free(o.tids);
	return rc;
}
