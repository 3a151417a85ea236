/* ptflame record (hardware Intel PT): option parsing and signal wiring
 * for rc_pt_record (record/pt.c). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "record/record.h"

static const char record_pt_help[] =
	"usage: ptflame record [-o FILE] [-d SECONDS] [-p PID[,PID...] | -t TID[,TID...] | -- CMD [ARGS]]\n"
	"\n"
	"Record with Intel Processor Trace (perf_event_open, intel_pt PMU) into a\n"
	"perf.data file, as 'perf record -e intel_pt//u' would: one PT event and\n"
	"AUX buffer per CPU following every thread of the target, present and\n"
	"future, plus sideband (mmaps, comms, forks, exits, context switches).\n"
	"Stops when the target exits, after -d, or on Ctrl-C (SIGINT/SIGTERM);\n"
	"the file appears only when complete. No PT hardware? Use --emulate.\n"
	"Exit status: CMD's own (128+N when signal N killed it), 0 when record\n"
	"stopped it or with -p/-t.\n"
	"\n"
	"target (exactly one):\n"
	"  -p, --pid PID[,PID...]   attach to running processes (all their threads)\n"
	"  -t, --tid TID[,TID...]   trace only these threads (per-thread buffers,\n"
	"                           new threads are not followed)\n"
	"  -- CMD [ARGS]            run CMD and trace it from its first instruction\n"
	"\n"
	"options:\n"
	"  -o, --output FILE        output file (default perf.data)\n"
	"  -z, --compression-level[=N]\n"
	"                           write the sideband records zstd-compressed at\n"
	"                           level N (1-22, default 1), as perf record -z\n"
	"  -d, --duration SECONDS   stop after this long (decimals allowed)\n"
	"  -m, --aux-size SIZE      AUX (trace) buffer per CPU, power of two, K/M\n"
	"                           suffix (default 4M as root, else 128K)\n"
	"      --data-size SIZE     sideband ring per CPU (default 2M as root,\n"
	"                           else 128K; CPU-wide switches of every task)\n"
	"      --cyc                cycle-accurate timing (CYC packets)\n"
	"      --mtc-period N       MTC packet period (caps/mtc_periods)\n"
	"      --psb-period N       PSB period, 2^(N+11) bytes (caps/psb_periods)\n"
	"      --noretcomp          no return compression (a TIP for every ret)\n"
	"      --kernel             trace the kernel too (needs\n"
	"                           kernel.perf_event_paranoid <= 1 or root)\n"
	"      --filter FUNC        trace only inside function FUNC of the target's\n"
	"                           executable (hardware address filter)\n"
	"  -S, --snapshot           overwrite mode: keep only the newest trace; a\n"
	"                           snapshot is written on SIGUSR2 and at the end\n"
	"      --no-wakers          no wake records (by default the sched:sched_waking\n"
	"                           tracepoint on every CPU, when tracefs and the\n"
	"                           kernel allow it, tells report who ended each\n"
	"                           wait; without, one line says why)\n"
	"      --sideband-only      test/diagnostic mode: no PT event, only the\n"
	"                           sideband events (runs without PT hardware; also\n"
	"                           PTFLAME_SIDEBAND_ONLY=1)\n"
	"  -h, --help               this text\n"
	"\n"
	"environment: PTFLAME_SYSFS=DIR reads the PMU from DIR instead of /sys,\n"
	"PTFLAME_TRACEFS=DIR the tracepoint from DIR instead of /sys/kernel/tracing\n"
	"(tests). Errors name what to change: kernel.perf_event_paranoid,\n"
	"/proc/sys/kernel/perf_event_mlock_kb, 'ulimit -l'.\n";

/* Set by signal handlers, read by the recorder's loop. */
static volatile sig_atomic_t stop_flag;
static volatile sig_atomic_t snap_flag;

static void on_stop(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void on_snap(int sig)
{
	(void)sig;
	snap_flag = 1;
}

/* Only here so that poll() wakes up when the command exits. */
static void on_child(int sig)
{
	(void)sig;
}

static void install(int sig, void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);   /* no SA_RESTART: interrupt poll() */
}

/* "123,456" -> ids (each > 0). */
static int parse_ids(const char *opt, const char *s, int **ids, size_t *n)
{
	char *dup = strdup(s), *save = NULL;
	int rc = 0;

	if (!dup)
		return cmd_error("record", "out of memory");
	for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		unsigned long long v;
		int *p;

		if (cmd_parse_u64(t, &v) || !v || v > 0x3fffffff) {
			rc = cmd_usage_error("record", "%s: '%s' is not a process/thread id", opt, t);
			break;
		}
		p = realloc(*ids, (*n + 1) * sizeof(*p));
		if (!p) {
			rc = cmd_error("record", "out of memory");
			break;
		}
		*ids = p;
		(*ids)[(*n)++] = (int)v;
	}
	if (!rc && !*n)
		rc = cmd_usage_error("record", "%s needs at least one id", opt);
	free(dup);
	return rc;
}

/* "64K", "4M", "8192" -> bytes. */
static int parse_size(const char *opt, const char *s, uint64_t *out)
{
	char num[32];
	size_t len = strlen(s);
	unsigned long long v, mul = 1;

	if (!len || len >= sizeof(num))
		return cmd_usage_error("record", "%s: bad size '%s'", opt, s);
	memcpy(num, s, len + 1);
	switch (num[len - 1]) {
	case 'k': case 'K': mul = 1ULL << 10; num[len - 1] = '\0'; break;
	case 'm': case 'M': mul = 1ULL << 20; num[len - 1] = '\0'; break;
	case 'g': case 'G': mul = 1ULL << 30; num[len - 1] = '\0'; break;
	}
	if (cmd_parse_u64(num, &v) || !v || v > (1ULL << 40) / mul)
		return cmd_usage_error("record", "%s: bad size '%s' (want e.g. 64K, 4M)", opt, s);
	*out = v * mul;
	return 0;
}

static int parse_period(const char *opt, const char *s, int *out)
{
	unsigned long long v;

	if (cmd_parse_u64(s, &v) || v > 63)
		return cmd_usage_error("record", "%s: '%s' is not a period (0-63)", opt, s);
	*out = (int)v;
	return 0;
}

enum { O_DATA = 256, O_CYC, O_MTC, O_PSB, O_NORET, O_KERNEL, O_FILTER, O_SIDEBAND,
       O_NO_WAKERS };

static void summary(const struct rc_pt_opts *o, const struct rc_pt_stats *st)
{
	fprintf(stderr, "ptflame record: wrote %s: ", o->output);
	if (o->sideband_only)
		fprintf(stderr, "sideband only (no PT), ");
	else
		fprintf(stderr, "%llu bytes of trace in %llu AUX records, ",
			(unsigned long long)st->aux_bytes, (unsigned long long)st->auxtrace_records);
	fprintf(stderr, "%llu sideband records, %u %s%s\n",
		(unsigned long long)st->sideband_records,
		st->cpus ? st->cpus : st->threads, st->cpus ? "CPUs" : "threads",
		st->cpu_wide_switch ? "" : " (per-task switch events: CPU-wide not allowed)");
	if (!o->sideband_only)
		fprintf(stderr, "ptflame record: AUX buffer full %llu times (aux_watermark %u), "
			"PT re-enabled %llu times (%llu holes without a kernel TRUNCATED record)%s\n",
			(unsigned long long)st->truncated, st->aux_watermark,
			(unsigned long long)st->restarts, (unsigned long long)st->marked,
			st->restarts ? ": trace lost there (use a larger -m/--aux-size, or "
			"--data-size when sideband events were lost)" : "");
	if (!o->sideband_only && !st->aux_bytes)
		fprintf(stderr, "ptflame record: warning: no trace was written: no traced thread ran "
			"in user space during the recording, and report will have nothing to show\n");
	if (o->snapshot)
		fprintf(stderr, "ptflame record: %llu snapshots\n", (unsigned long long)st->snapshots);
	if (st->wakes)
		fprintf(stderr, "ptflame record: wake records: sched:sched_waking on every CPU\n");
	else if (st->wake_note[0])
		fprintf(stderr, "ptflame record: %s\n", st->wake_note);
	if (st->lost_records)
		fprintf(stderr, "ptflame record: %llu sideband events lost in %llu LOST records "
			"(use a larger --data-size)\n",
			(unsigned long long)st->lost_events, (unsigned long long)st->lost_records);
}

int cmd_record_pt(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output",        required_argument, NULL, 'o' },
		{ "compression-level", optional_argument, NULL, 'z' },
		{ "duration",      required_argument, NULL, 'd' },
		{ "pid",           required_argument, NULL, 'p' },
		{ "tid",           required_argument, NULL, 't' },
		{ "aux-size",      required_argument, NULL, 'm' },
		{ "data-size",     required_argument, NULL, O_DATA },
		{ "cyc",           no_argument,       NULL, O_CYC },
		{ "mtc-period",    required_argument, NULL, O_MTC },
		{ "psb-period",    required_argument, NULL, O_PSB },
		{ "noretcomp",     no_argument,       NULL, O_NORET },
		{ "kernel",        no_argument,       NULL, O_KERNEL },
		{ "filter",        required_argument, NULL, O_FILTER },
		{ "snapshot",      no_argument,       NULL, 'S' },
		{ "sideband-only", no_argument,       NULL, O_SIDEBAND },
		{ "no-wakers",     no_argument,       NULL, O_NO_WAKERS },
		{ NULL, 0, NULL, 0 },
	};
	struct rc_pt_opts o = { .output = "perf.data", .mtc_period = -1, .psb_period = -1 };
	int *pids = NULL, *tids = NULL, c, rc = 0;
	const char *env = getenv("PTFLAME_SIDEBAND_ONLY");
	struct rc_pt_stats st;
	const char **cmdline;
	char err[1024], self[4096];

	/* Our own help (the dispatcher's 'record --help' covers both backends). */
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help") || !strcmp(argv[i], "--pt-help")) {
			fputs(record_pt_help, stdout);
			return 0;
		}
	o.sideband_only = env && *env && strcmp(env, "0");
	o.sysfs = getenv("PTFLAME_SYSFS");
	o.tracefs = getenv("PTFLAME_TRACEFS");
	optind = 1;
	while (!rc && (c = cmd_getopt("record", argc, argv, "+o:d:p:t:m:Sz::", longopts)) != -1) {
		switch (c) {
		case 'o': o.output = optarg; break;
		case 'z': rc = cmd_record_parse_level(optarg, &o.compress); break;
		case 'd': rc = cmd_record_parse_duration(optarg, &o.duration_ms); break;
		case 'p': rc = parse_ids("-p", optarg, &pids, &o.nr_pids); break;
		case 't': rc = parse_ids("-t", optarg, &tids, &o.nr_tids); break;
		case 'm': rc = parse_size("-m/--aux-size", optarg, &o.aux_size); break;
		case O_DATA: rc = parse_size("--data-size", optarg, &o.data_size); break;
		case O_CYC: o.cyc = true; break;
		case O_MTC: rc = parse_period("--mtc-period", optarg, &o.mtc_period); break;
		case O_PSB: rc = parse_period("--psb-period", optarg, &o.psb_period); break;
		case O_NORET: o.noretcomp = true; break;
		case O_KERNEL: o.kernel = true; break;
		case O_FILTER: o.filter = optarg; break;
		case 'S': o.snapshot = true; break;
		case O_SIDEBAND: o.sideband_only = true; break;
		case O_NO_WAKERS: o.no_wakers = true; break;
		case CMD_OPT_HELP: rc = -1; break;
		default: rc = 2; break;          /* CMD_OPT_ERR: already said */
		}
	}
	if (rc) {
		free(pids);
		free(tids);
		return rc < 0 ? 0 : rc;
	}
	if (optind < argc)
		o.argv = argv + optind;
	if (!!o.argv + !!o.nr_pids + !!o.nr_tids != 1)
		rc = cmd_usage_error("record", o.argv || o.nr_pids || o.nr_tids
				     ? "give only one target: -p PID, -t TID or -- CMD"
				     : "nothing to record: give -p PID, -t TID or -- CMD");
	else if (!*o.output)
		rc = cmd_usage_error("record", "-o needs a file name");
	if (rc) {
		free(pids);
		free(tids);
		return rc;
	}
	o.pids = pids;
	o.tids = tids;
	o.stop = &stop_flag;
	o.snap = &snap_flag;
	/* perf's CMDLINE convention: the recorder's path, then its arguments. */
	cmdline = calloc((size_t)argc + 1, sizeof(*cmdline));
	if (cmdline) {
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		self[n > 0 ? n : 0] = '\0';
		cmdline[0] = n > 0 ? self : "ptflame";
		for (int i = 0; i < argc; i++)
			cmdline[i + 1] = argv[i];
		o.cmdline_argc = (size_t)argc + 1;
		o.cmdline = cmdline;
	}
	sigemptyset(&o.child_ignored);
	for (int s = 1; s < NSIG; s++) {
		struct sigaction old;

		if (!sigaction(s, NULL, &old) && old.sa_handler == SIG_IGN)
			sigaddset(&o.child_ignored, s);
	}
	install(SIGINT, on_stop);
	install(SIGTERM, on_stop);
	install(SIGUSR2, on_snap);
	install(SIGCHLD, on_child);
	/* a child that died before it was released must not kill us through
	 * the go-pipe (the temporary file would stay behind) */
	signal(SIGPIPE, SIG_IGN);
	rc = rc_pt_record(&o, &st, err, sizeof(err));
	free(cmdline);
	free(pids);
	free(tids);
	if (rc) {
		cmd_error("record", "%s", err[0] ? err : strerror(-rc));
		return rc == -ENODEV || rc == -EINVAL ? 2 : 1;
	}
	summary(&o, &st);
	return cmd_record_ended(o.argv ? o.argv[0] : "", st.child_exited ? st.child_status : -1,
				st.child_stopped);
}
