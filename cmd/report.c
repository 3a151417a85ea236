/* ptflame report: decode a recording, rebuild every thread's stacks and print
 * folded stacks (default), a latency table, or an SVG flame graph. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/report_pipeline.h"
#include "decoder/dc_vec.h"
#include "flamegraph/flamegraph.h"

const char cmd_report_help[] =
	"usage: ptflame report [-i FILE] [options] > out.folded\n"
	"\n"
	"Decode a recording (perf.data from 'ptflame record' or 'perf record -e\n"
	"intel_pt//', or the text of 'perf script --itrace=cr'), rebuild every\n"
	"thread's call stacks in wall-clock time and print folded stacks for\n"
	"flamegraph.pl: 'frame;frame;frame NANOSECONDS'. Each frame is annotated\n"
	"'name:calls[,avg:NS]' ('name:calls(inferred)' when no call was seen whole).\n"
	"Waiting shows as [off-cpu], [preempted] and [kernel] frames, missing data\n"
	"as [lost].\n"
	"\n"
	"  -i, --input FILE    perf.data (default) or perf script text; - for stdin\n"
	"      --input-format auto|perf|perf-script\n"
	"  -o, --output FILE   write there instead of stdout\n"
	"      --plain         bare function names, no annotations\n"
	"      --min-ns N      drop stacks with less self time (N ns, or 2us, 1ms);\n"
	"                      with --timeline, calls shorter than N\n"
	"      --max-stack N   keep N frames per stack (default 1024); deeper calls\n"
	"                      show as [truncated] under the last kept frame\n"
	REPORT_FILTER_HELP
	"      --svg FILE      draw an SVG flame graph into FILE (the folded stacks\n"
	"                      too only with -o, the table with --table)\n"
	"      --title TEXT    the SVG's title\n"
	"      --width PX      the SVG's width (default 1200)\n"
	"      --minwidth PX   omit frames narrower than PX (default 0.1; 0: none)\n"
	"      --inverted      an icicle graph: the root at the top\n"
	"      --timeline FILE every call of every thread into FILE as Chrome\n"
	"                      trace-event JSON (Perfetto, chrome://tracing,\n"
	"                      speedscope); filters apply (the folded stacks too\n"
	"                      only with -o, the table with --table)\n"
	"      --slowest N FUNC  the N slowest single calls of FUNC instead of folded\n"
	"                      stacks: each one's start and end (as --time takes\n"
	"                      them), thread, duration split on-CPU / off-CPU /\n"
	"                      kernel, and the calls inside it with their times\n"
	"      --wakers[=N]    who kept each wait: under every [off-cpu] frame a wake\n"
	"                      record ended, '[woken by COMM-TID]' and the waker's\n"
	"                      user stack at the wake take its blocked time; with N\n"
	"                      (default 1, at most 64) the waker's own blocked time\n"
	"                      during the wait goes on below, through up to N\n"
	"                      threads (the critical path). With --table: wait site\n"
	"                      -> waker site rows (waits, total, avg, p50, p99)\n"
	"      --table         a per-function latency table instead of folded stacks\n"
	"                      (avg and max exact; p50/p90/p99 within 1 %)\n"
	"      --by-stack      table rows per call path\n"
	"      --sort KEY      table order: total (default), self, avg, p99, calls\n"
	"      --top N         table: first N rows only\n"
	"      --format F      table: text (default), csv or json (for scripts:\n"
	"                      the same rows, times in plain ns)\n"
	"      --raw           table, --slowest: plain nanoseconds\n"
	"      --srcline       table: each function's file:line (DWARF line table)\n"
	"      --symfs DIR     look for binaries under DIR first, before their\n"
	"                      recorded paths (a copy of the recording machine's)\n"
	"  -k, --vmlinux FILE  the kernel's ELF image (vmlinux): a user+kernel\n"
	"                      trace's kernel code becomes frames under [kernel]\n"
	"                      (its build-id must be the recording's)\n"
	"      --kcore DIR     the same from DIR/kcore and DIR/kallsyms (the\n"
	"                      kcore_dir of 'perf record --kcore', or /proc as root\n"
	"                      on the machine and boot that recorded)\n"
	"      --kallsyms FILE kernel names only (a copy of /proc/kallsyms): the\n"
	"                      kernel function a syscall or fault entered is named\n"
	"                      even where its code cannot be decoded\n"
	"      --syscall-names name [kernel] frames by syscall where the number can be\n"
	"                      read from the code before it (most, not all, syscalls)\n"
	"  -j, --jobs N        decode with N threads (default: the online CPUs);\n"
	"                      the output is the same for every N\n"
	"      --pt-decoder D  walk (default): ptflame's own block decoder, which\n"
	"                      hands over to libipt's wherever it cannot answer as\n"
	"                      libipt would; libipt: libipt's only (slower; the\n"
	"                      output is the same)\n"
	"  -q, --quiet         no summary line on stderr\n"
	"  -h, --help          this text\n"
	"\n"
	"examples:\n"
	"  ptflame report > out.folded && flamegraph.pl out.folded > out.svg\n"
	"  ptflame report --svg out.svg --offcpu --per-thread\n"
	"  ptflame report --table --sort p99 --top 20\n"
	"  ptflame report --wakers --offcpu --svg waits.svg\n";

enum {
	OPT_INPUT_FORMAT = REPORT_OPT_NEXT, OPT_PLAIN, OPT_MIN_NS, OPT_SVG, OPT_TABLE,
	OPT_BY_STACK, OPT_SORT, OPT_TOP, OPT_RAW, OPT_SYMFS, OPT_SYSCALL_NAMES, OPT_MAX_STACK,
	OPT_TITLE, OPT_WIDTH, OPT_MINWIDTH, OPT_INVERTED, OPT_SRCLINE, OPT_KCORE, OPT_KALLSYMS,
	OPT_TIMELINE, OPT_SLOWEST, OPT_FORMAT, OPT_WAKERS, OPT_PT_DECODER,
};

struct report_args {
	struct report_opts run;
	const char *output;
	const char *svg;
	const char *timeline;
	const char *slowest;      /* FUNC of --slowest N FUNC           */
	size_t slowest_n;
	struct fg_svg_options svgo;
	struct fg_fold_options fold;
	bool table;
	enum fg_stats_key by;
	struct fg_table_options tab;
	uint32_t *tids;
};

static int parse(int argc, char **argv, struct report_args *a)
{
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "input-format", required_argument, NULL, OPT_INPUT_FORMAT },
		{ "plain", no_argument, NULL, OPT_PLAIN },
		{ "min-ns", required_argument, NULL, OPT_MIN_NS },
		{ "svg", required_argument, NULL, OPT_SVG },
		{ "table", no_argument, NULL, OPT_TABLE },
		{ "by-stack", no_argument, NULL, OPT_BY_STACK },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "raw", no_argument, NULL, OPT_RAW },
		{ "symfs", required_argument, NULL, OPT_SYMFS },
		{ "vmlinux", required_argument, NULL, 'k' },
		{ "kcore", required_argument, NULL, OPT_KCORE },
		{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
		{ "syscall-names", no_argument, NULL, OPT_SYSCALL_NAMES },
		{ "max-stack", required_argument, NULL, OPT_MAX_STACK },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "width", required_argument, NULL, OPT_WIDTH },
		{ "minwidth", required_argument, NULL, OPT_MINWIDTH },
		{ "inverted", no_argument, NULL, OPT_INVERTED },
		{ "srcline", no_argument, NULL, OPT_SRCLINE },
		{ "timeline", required_argument, NULL, OPT_TIMELINE },
		{ "slowest", required_argument, NULL, OPT_SLOWEST },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "wakers", optional_argument, NULL, OPT_WAKERS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "pt-decoder", required_argument, NULL, OPT_PT_DECODER },
		{ "help", no_argument, NULL, 'h' },
		REPORT_FILTER_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	const char *table_only = NULL;   /* --sort, --top, --by-stack, --format */
	const char *svg_only = NULL;     /* --title, --width, --minwidth, --inverted */
	unsigned long long v;
	int c, r;

	optind = 1;
	while ((c = cmd_getopt("report", argc, argv, "i:o:k:j:qh", opts)) != -1) {
		if (c == CMD_OPT_HELP)
			return 0;
		if (c == CMD_OPT_ERR)
			return 2;
		r = report_filter_option("report", c, optarg, &a->run.sr, &a->tids);
		if (r == CMD_OPT_ERR)
			return 2;
		if (r)
			continue;
		switch (c) {
		case 'i': a->run.input = optarg; break;
		case 'o': a->output = optarg; break;
		case 'q': a->run.quiet = true; break;
		case 'j':
			if (cmd_parse_u64(optarg, &v) || !v || v > REPORT_MAX_JOBS)
				return cmd_usage_error("report", "--jobs wants a count from 1 to %d, not '%s'",
						       REPORT_MAX_JOBS, optarg);
			a->run.jobs = (unsigned)v;
			break;
		case OPT_PT_DECODER:
			if (strcmp(optarg, "walk") && strcmp(optarg, "libipt"))
				return cmd_usage_error("report", "--pt-decoder wants walk or libipt, not '%s'",
						       optarg);
			a->run.libipt_only = !strcmp(optarg, "libipt");
			break;
		case OPT_PLAIN: a->fold.style = FG_FOLD_PLAIN; break;
		case OPT_SVG: a->svg = optarg; break;
		case OPT_TIMELINE: a->timeline = optarg; break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "text"))
				a->tab.format = FG_TABLE_TEXT;
			else if (!strcmp(optarg, "csv"))
				a->tab.format = FG_TABLE_CSV;
			else if (!strcmp(optarg, "json"))
				a->tab.format = FG_TABLE_JSON;
			else
				return cmd_usage_error("report", "--format is text, csv or json, not '%s'", optarg);
			table_only = "--format";
			break;
		case OPT_SLOWEST:
			if (cmd_parse_u64(optarg, &v) || !v || v > 100000)
				return cmd_usage_error("report", "--slowest wants a count from 1 to 100000 "
						       "and a function: --slowest N FUNC, not '%s'", optarg);
			if (optind >= argc || !argv[optind][0] || argv[optind][0] == '-')
				return cmd_usage_error("report", "--slowest %s wants a function too: "
						       "--slowest N FUNC", optarg);
			a->slowest_n = (size_t)v;
			a->slowest = argv[optind++];
			break;
		case OPT_TABLE: a->table = true; break;
		case OPT_WAKERS:
			v = 1;
			if (optarg && (cmd_parse_u64(optarg, &v) || !v || v > 64))
				return cmd_usage_error("report", "--wakers=N wants a count of threads "
						       "from 1 to 64, not '%s'", optarg);
			a->run.sr.wakers = (uint32_t)v;
			break;
		case OPT_BY_STACK: a->by = FG_BY_STACK; table_only = "--by-stack"; break;
		case OPT_RAW: a->tab.raw = true; break;
		case OPT_SRCLINE: a->tab.srcline = true; table_only = "--srcline"; break;
		case OPT_SYMFS:
			if (report_need_dir("report", "--symfs", optarg))
				return 2;
			a->run.symfs = optarg;
			break;
		case 'k': a->run.vmlinux = optarg; break;
		case OPT_KCORE: a->run.kcore_dir = optarg; break;
		case OPT_KALLSYMS: a->run.kallsyms = optarg; break;
		case OPT_SYSCALL_NAMES: a->run.syscall_names = true; break;
		case OPT_TITLE: a->svgo.title = optarg; svg_only = "--title"; break;
		case OPT_INVERTED: a->svgo.inverted = true; svg_only = "--inverted"; break;
		case OPT_WIDTH:
			svg_only = "--width";
			if (cmd_parse_u64(optarg, &v) || v < 200 || v > 100000)
				return cmd_usage_error("report", "--width wants pixels from 200 to 100000, not '%s'", optarg);
			a->svgo.width = (unsigned)v;
			break;
		case OPT_MINWIDTH:
			svg_only = "--minwidth";
			if (fg_svg_parse_minwidth(optarg, &a->svgo.min_width_px))
				return cmd_usage_error("report", "--minwidth wants pixels (0 or more), not '%s'", optarg);
			break;
		case OPT_INPUT_FORMAT:
			if (!strcmp(optarg, "auto"))
				a->run.format = REPORT_INPUT_AUTO;
			else if (!strcmp(optarg, "perf"))
				a->run.format = REPORT_INPUT_PERF;
			else if (!strcmp(optarg, "perf-script"))
				a->run.format = REPORT_INPUT_SCRIPT;
			else
				return cmd_usage_error("report", "--input-format is auto, perf or perf-script, not '%s'", optarg);
			break;
		case OPT_MIN_NS: {
			uint64_t ns;

			if (cmd_parse_u64(optarg, &v) == 0)
				ns = v;
			else if (report_parse_duration(optarg, &ns))
				return cmd_usage_error("report", "--min-ns wants decimal nanoseconds or a "
						       "duration like 2.5us, 1ms, not '%s'", optarg);
			a->fold.min_ns = ns;
			break;
		}
		case OPT_SORT:
			if (!fg_sort_parse(optarg, &a->tab.sort))
				return cmd_usage_error("report", "--sort is total, self, avg, p99 or calls, not '%s'", optarg);
			table_only = "--sort";
			break;
		case OPT_TOP:
			if (cmd_parse_u64(optarg, &v) || !v)
				return cmd_usage_error("report", "--top wants a positive count, not '%s'", optarg);
			a->tab.top = (size_t)v;
			table_only = "--top";
			break;
		case OPT_MAX_STACK:
			if (cmd_parse_u64(optarg, &v) || !v || v > SR_MAX_DEPTH)
				return cmd_usage_error("report", "--max-stack wants a count from 1 to %d, not '%s'",
						       SR_MAX_DEPTH, optarg);
			a->run.sr.max_stack = (uint32_t)v;
			break;
		default:
			return cmd_usage_error("report", "unexpected option");
		}
	}
	if (optind < argc)
		return cmd_usage_error("report", "unexpected argument '%s' (the input is -i FILE)", argv[optind]);
	if (!a->table && table_only)
		return cmd_usage_error("report", "%s is an option of the table: add --table", table_only);
	if (a->tab.raw && !a->table && !a->slowest)
		return cmd_usage_error("report", "--raw is an option of the table and of "
				       "--slowest: add one of them");
	if (!a->svg && svg_only)
		return cmd_usage_error("report", "%s is an option of the SVG: add --svg FILE", svg_only);
	if (a->table && (a->run.sr.per_thread || a->fold.min_ns))
		return cmd_usage_error("report", "%s is not an option of the table (its rows are "
				       "functions or stacks of all threads): drop it or --table",
				       a->run.sr.per_thread ? "--per-thread" : "--min-ns");
	if (a->table && a->slowest)
		return cmd_usage_error("report", "--slowest and --table are two outputs: choose one");
	if (a->slowest && a->run.sr.keep_time)
		return cmd_usage_error("report", "--slowest ranks whole calls by wall-clock time: "
				       "%s does not apply to it", a->run.sr.keep_time == SR_KEEP_ONCPU ?
				       "--oncpu" : "--offcpu");
	if (a->table && a->run.sr.wakers && a->by == FG_BY_STACK)
		return cmd_usage_error("report", "--table --wakers has one row per wait site and "
				       "waker site: --by-stack is for the function table");
	if (a->table && a->run.sr.wakers && a->tab.sort == FG_SORT_SELF)
		return cmd_usage_error("report", "--table --wakers rows are waits, which have no self "
				       "time: sort by total, avg, p99 or calls (the waits)");
	if (a->table && a->run.sr.wakers && a->tab.srcline)
		return cmd_usage_error("report", "--srcline is for the function table, not "
				       "--table --wakers");
	a->fold.part = a->run.sr.keep_time != 0;
	/* only the table's and the SVG's tooltips print percentiles; the
	 * folded lines need each node's calls and their sum */
	a->run.sr.counts_only = !a->table && !a->svg;
	/* The function tables count calls at every depth: stacks are not
	 * cut for them (by stack, each row is a path: those are cut, or a
	 * deep line would make rows quadratic in its depth; --slowest keeps
	 * the cut too, its subtrees are of paths) */
	if (a->table && a->by == FG_BY_FUNCTION) {
		if (a->run.sr.max_stack)
			return cmd_usage_error("report", "--max-stack cuts stacks: the table counts "
					       "the calls at every depth (drop it%s)",
					       a->run.sr.wakers ? "" : ", or add --by-stack");
		a->run.sr.max_stack = SR_MAX_DEPTH;
	}
	return -1;
}

/* What the stack machine hands over as calls end (--timeline, --slowest). */
struct call_sinks {
	struct fg_timeline *timeline;
	FILE *spool;
	struct fg_slowest *slowest;
};

/* Folded lines fed to the SVG as they are printed (no copy of them all). */
struct svg_sink {
	struct fg_svg *svg;
	char *line;
	size_t len, cap;
	int err;
};

static ssize_t svg_sink_write(void *cookie, const char *buf, size_t n)
{
	struct svg_sink *s = cookie;

	for (size_t i = 0; i < n && !s->err; i++) {
		if (dc_vec_reserve((void **)&s->line, &s->cap, s->len + 2, 1, 256)) {
			s->err = -ENOMEM;
			break;
		}
		if (buf[i] != '\n') {
			s->line[s->len++] = buf[i];
			continue;
		}
		s->line[s->len] = '\0';
		s->err = fg_svg_add_line(s->svg, s->line);
		s->len = 0;
	}
	return s->err ? -1 : (ssize_t)n;
}

/* Each frame's latency distribution into the SVG, for its tooltip. */
static int svg_frame(void *ctx, const char *path, const struct sr_hist *lat)
{
	return fg_svg_add_hist(ctx, path, lat);
}

static int write_svg(const struct report_args *a, const struct report_run *r,
		     char *err, size_t errlen)
{
	struct fg_svg_options so = a->svgo;
	struct svg_sink sink = { .svg = fg_svg_new() };
	struct fg_fold_options fold = a->fold;
	struct report_out o;
	FILE *f;
	int ret = -ENOMEM;

	if (!sink.svg || !(f = fopencookie(&sink, "w", (cookie_io_functions_t){
			.write = svg_sink_write }))) {
		fg_svg_free(sink.svg);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	fold.on_frame = svg_frame;
	fold.frame_ctx = sink.svg;
	ret = fg_fold(f, report_cct(r), report_symbolizer(r), &fold);
	if (fclose(f) && !ret)
		ret = -EIO;
	if (sink.err)
		ret = sink.err;
	free(sink.line);
	if (ret) {
		snprintf(err, errlen, "cannot draw the SVG: %s", strerror(-ret));
		goto out;
	}
	ret = report_out_open(&o, a->svg, err, errlen);
	if (ret)
		goto out;
	ret = report_out_close(&o, fg_svg_write(sink.svg, o.f, &so), err, errlen);
out:
	fg_svg_free(sink.svg);
	return ret;
}

static int write_main(const struct report_args *a, const struct call_sinks *k,
		      const struct report_run *r, char *err, size_t errlen)
{
	struct report_out o;
	struct fg_stats *st = NULL;
	int ret;

	ret = report_out_open(&o, a->output, err, errlen);
	if (ret)
		return ret;
	if (k->slowest) {
		ret = fg_slowest_write(k->slowest, o.f, report_cct(r), a->tab.raw);
		char best[128];

		if (!fg_slowest_calls(k->slowest) &&
		    !report_func_seen(report_machine(r), a->slowest, a->run.sr.show_plt, best,
				      sizeof(best)))
			fprintf(stderr, "ptflame report: note: %s: no function %s was traced%s%s%s\n",
				a->run.input, a->slowest, best[0] ? " (did you mean '" : "", best,
				best[0] ? "'?)" : "");
		else if (!fg_slowest_calls(k->slowest))
			fprintf(stderr, "ptflame report: note: %s: no complete call of %s%s\n",
				a->run.input, a->slowest,
				a->run.sr.root || a->run.sr.comm || a->run.sr.ntids ||
				a->run.sr.time_start || a->run.sr.time_end ? " (with these filters)" : "");
	} else if (a->table) {
		struct sr_symbolizer sym = *report_symbolizer(r);

		if (!a->tab.srcline)
			sym.srcline = NULL;  /* no DWARF read unless asked */
		if (a->run.sr.wakers) {
			ret = fg_wake_table_write(o.f, report_cct(r), &sym, &a->tab);
		} else {
			ret = fg_stats_from_cct_part(report_cct(r), &sym, a->by,
						     a->run.sr.keep_time != 0, &st);
			if (!ret)
				ret = fg_table_write(o.f, st, NULL, &a->tab);
			fg_stats_free(st);
		}
	} else {
		ret = fg_fold(o.f, report_cct(r), report_symbolizer(r), &a->fold);
	}
	return report_out_close(&o, ret, err, errlen);
}

static int on_call(void *ctx, const struct sr_call *c)
{
	struct call_sinks *k = ctx;
	int ret = k->timeline ? fg_timeline_call(k->timeline, c) : 0;

	return !ret && k->slowest ? fg_slowest_call(k->slowest, c) : ret;
}

static int sinks_open(struct report_args *a, struct call_sinks *k, char *err, size_t errlen)
{
	struct fg_timeline_options to = {
		.min_ns = a->fold.min_ns, .keep_time = a->run.sr.keep_time,
	};
	int fd;

	if (a->slowest) {
		k->slowest = fg_slowest_new(a->slowest_n, a->slowest);
		if (!k->slowest) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		a->run.sr.on_call = on_call;
		a->run.sr.call_ctx = k;
	}
	if (!a->timeline)
		return 0;
	fd = dc_tmpfile();
	if (fd < 0 || !(k->spool = fdopen(fd, "w+"))) {
		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "cannot create a temporary file for --timeline: %s",
			 strerror(fd < 0 ? -fd : errno));
		return -EIO;
	}
	k->timeline = fg_timeline_new(k->spool, &to);
	if (!k->timeline) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	a->run.sr.on_call = on_call;
	a->run.sr.call_ctx = k;
	return 0;
}

static void sinks_close(struct call_sinks *k)
{
	fg_slowest_free(k->slowest);
	fg_timeline_free(k->timeline);
	if (k->spool)
		fclose(k->spool);
}

static int write_timeline(const struct report_args *a, const struct call_sinks *k,
			  const struct report_run *r, char *err, size_t errlen)
{
	struct report_out o;
	int ret = report_out_open(&o, a->timeline, err, errlen);

	if (ret)
		return ret;
	ret = fg_timeline_write(k->timeline, o.f, report_cct(r));
	if (ret == -ENOMEM || (ret == -EIO && !o.err && !ferror(o.f))) {
		/* (the spool failed, not the output) */
		report_out_close(&o, ret, err, errlen);
		snprintf(err, errlen, "cannot write the timeline: %s",
			 ret == -ENOMEM ? "out of memory" : "the temporary file failed");
		return ret;
	}
	return report_out_close(&o, ret, err, errlen);
}

int cmd_report(int argc, char **argv)
{
	struct report_args a = { .run = { .input = "perf.data", .cmd = "report" } };
	struct report_run *r = NULL;
	struct call_sinks sinks = { 0 };
	char err[512] = "";
	int ret;

	ret = parse(argc, argv, &a);
	if (ret >= 0)
		goto out;
	ret = report_check_outputs("report", a.run.input,
				   (const char *const[]){ "-o", "--svg", "--timeline" },
				   (const char *const[]){ a.output, a.svg, a.timeline }, 3);
	if (ret)
		goto out;
	if (sinks_open(&a, &sinks, err, sizeof(err))) {
		ret = cmd_error("report", "%s", err);
		goto out;
	}
	if (!a.svgo.title)
		a.svgo.title = "ptflame: wall-clock flame graph";
	a.svgo.subtitle = a.run.input;
	a.run.progress = isatty(STDERR_FILENO);
	if (report_run(&a.run, &r, err, sizeof(err))) {
		ret = cmd_error("report", "%s", err);
		goto out;
	}
	if (!a.run.quiet)
		report_print_summary(r, "report");
	ret = 0;
	if (a.svg && write_svg(&a, r, err, sizeof(err))) {
		ret = cmd_error("report", "%s", err);
		goto out;
	}
	if (a.timeline && write_timeline(&a, &sinks, r, err, sizeof(err))) {
		ret = cmd_error("report", "%s", err);
		goto out;
	}
	/* With --svg or --timeline, the folded stacks go to stdout only when
	 * asked (-o); a table is asked for by --table itself. */
	if ((a.svg || a.timeline) && !a.output && !a.table && !a.slowest)
		goto out;
	if ((ret = write_main(&a, &sinks, r, err, sizeof(err))))
		ret = ret == -EPIPE ? 0 : cmd_error("report", "%s", err);
out:
	report_run_free(r);
	sinks_close(&sinks);
	free(a.tids);
	return ret;
}
