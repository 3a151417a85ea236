/* ptflame record --emulate: argument parsing and wiring of the ptrace
 * emulator (record/emulate.h). */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "record/emulate.h"
#include "record/qemu.h"

/* SIGINT/SIGTERM: stop tracing and still write the file (like perf record);
 * counted, so that a second one while waiting for the program kills it.
 * cmd/ may hold global state; the emulator only reads this. */
static volatile int emulate_interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	emulate_interrupted++;
}

static const char emulate_help[] =
	"usage: ptflame record --emulate[=qemu|ptrace] [OPTIONS] -- PROG [ARGS...]\n"
	"       ptflame record --emulate[=ptrace] [OPTIONS] -p PID\n"
	"(one process, all its threads; -t and -p lists are for PT hardware)\n"
	"\n"
	"Backends: qemu (the default for a command when qemu-x86_64 is installed:\n"
	"PROG runs under qemu-user with ptflame's TCG plugin, tens of millions of\n"
	"instructions per second) or ptrace (the single-stepper described below;\n"
	"the only one for -p and --dump-insns). PTFLAME_EMULATE=NAME\n"
	"in the environment sets the default.\n"
	"\n"
	"Record PROG without Intel PT hardware: run its threads from a start symbol\n"
	"on (qemu) or single-step them (ptrace) and emit the PT packets the\n"
	"hardware would, into a perf.data file like 'perf record -e intel_pt//u'\n"
	"writes (per-CPU AUX queues on virtual CPUs). ptrace is slow (about\n"
	"10,000-30,000 instructions per second): keep its traced region short\n"
	"(--start, --max-insns).\n"
	"\n"
	"  -o, --output FILE     perf.data file to write (default ./perf.data)\n"
	"  -z, --compression-level[=N]\n"
	"                        write the sideband records zstd-compressed at level N\n"
	"                        (1-22, default 1), as perf record -z does\n"
	"  -d, --duration SECONDS\n"
	"                        stop after this long (decimals allowed), as at\n"
	"                        SIGINT\n"
	"      --start SYMBOL    run natively up to SYMBOL of PROG (a function or an asm\n"
	"                        label), trace from there\n"
	"                        (a C++ name may be demangled: 'ns::f(int)' or 'ns::f')\n"
	"                        (default main, or from exec in a program that has\n"
	"                        none, as a stripped one; '' traces from exec).\n"
	"                        Symbols come from PROG and its separate debug file\n"
	"                        (build-id, .gnu_debuglink), as report finds them.\n"
	"                        Each thread is traced from its own first arrival\n"
	"                        at SYMBOL, with the threads it creates from then\n"
	"                        on; threads that never reach it run untraced\n"
	"                        (unless SYMBOL starts with endbr64 or a push, a\n"
	"                        thread reaching it just while a traced one steps\n"
	"                        over it is missed)\n"
	"      --max-insns N     stop tracing once N instructions in total have run\n"
	"                        (the program runs on untraced): ptrace stops after\n"
	"                        exactly N, qemu at the end of the first translation\n"
	"                        block that reaches N (up to a block more); 0 = no\n"
	"                        limit (default)\n"
	"      --cpus N          virtual CPUs / AUX queues (default 2)\n"
	"      --ns-per-insn N   virtual time per instruction in ns (default 1);\n"
	"                        syscalls add their measured duration\n"
	"      --time-slice N    preempt a thread after N instructions when another\n"
	"                        one is ready (default 4000)\n"
	"      --truth FILE      write the ground-truth event log (tests/TRUTH.md)\n"
	"      --dump-insns FILE write every stepped instruction: 'TID IP' lines\n"
	"      --follow-fork     trace forked children too\n"
	"      --inject-ovf N    simulate an internal overflow every N packets\n"
	"      --drop-aux N      lose every Nth AUX chunk (AUX record TRUNCATED)\n"
	"      --inject-interrupts RATE\n"
	"                        asynchronous exits (interrupts, faults) of the\n"
	"                        running thread, RATE per million instructions on\n"
	"                        average (1..1000000; the gap is random, 1 to\n"
	"                        2*10^6/RATE-1 instructions per CPU): FUP+TIP.PGD,\n"
	"                        1-10 us of kernel time (random), TIP.PGE where it\n"
	"                        was; --emulate=qemu takes them between blocks\n"
	"      --seed N          seed of --inject-interrupts (default 1): the same\n"
	"                        seed and schedule give the same exits\n"
	"      --psb-period N    bytes between PSB packets (power of 2, >= 256)\n"
	"      --aux-chunk N     bytes per AUXTRACE record (default 4096)\n"
	"      --mtc-period N    MTC packet every 2^N CTC ticks, 0..15 (default 3:\n"
	"                        256 ns); one every period while the thread is on\n"
	"                        its CPU, in syscalls too, as on the hardware: with\n"
	"                        a slow --ns-per-insn pick a period about as long\n"
	"                        as an instruction (10 us: 9) to keep traces small\n"
	"      --no-cyc          no CYC packets (default: CYC on, so that decoders\n"
	"                        get exact times; without it, MTC precision)\n"
	"      --no-wakers       no wake records (by default a sched:sched_waking\n"
	"                        sample for each wait a traced thread ended: futex\n"
	"                        wake, exit waking a join, write/close of a pipe)\n"
	"  -p, --pid PID         attach to a running process instead (all its\n"
	"                        threads; a thread's id means its process). A\n"
	"                        thread blocked in a syscall shows as off-CPU in\n"
	"                        it from the start; the detach leaves the program\n"
	"                        running as before\n"
	"  -q, --quiet           no summary line\n"
	"SIGINT/SIGTERM (or -d running out) stop tracing and write the file, the\n"
	"threads still waiting then waiting until that moment; then PROG gets\n"
	"SIGTERM unless the signal reached it too (Ctrl-C signals both; SIGKILL at\n"
	"a second one) and is waited for (a note says so when it has not exited\n"
	"1.5 s after SIGTERM). The exit status is PROG's (128+N when signal N\n"
	"killed it; 0 when record stopped it).\n"
	"  -h, --help            this help\n";

enum {
	OPT_EMULATE = 256, OPT_START, OPT_MAX_INSNS, OPT_CPUS, OPT_NS, OPT_SLICE, OPT_TRUTH,
	OPT_DUMP, OPT_FOLLOW, OPT_OVF, OPT_DROP, OPT_PSB, OPT_CYC, OPT_HELP, OPT_CHUNK, OPT_MTC,
	OPT_IRQ, OPT_SEED, OPT_NO_WAKERS,
};


static int parse_num(const char *opt, const char *arg, unsigned long long min,
		     unsigned long long max, unsigned long long *out)
{
	if (cmd_parse_u64(arg, out) || *out < min || *out > max) {
		cmd_usage_error("record", "%s wants a number from %llu to %llu, not '%s'", opt, min,
				max, arg);
		return -1;
	}
	return 0;
}

int cmd_record_emulate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "emulate", optional_argument, NULL, OPT_EMULATE },
		{ "output", required_argument, NULL, 'o' },
		{ "compression-level", optional_argument, NULL, 'z' },
		{ "duration", required_argument, NULL, 'd' },
		{ "start", required_argument, NULL, OPT_START },
		{ "max-insns", required_argument, NULL, OPT_MAX_INSNS },
		{ "cpus", required_argument, NULL, OPT_CPUS },
		{ "ns-per-insn", required_argument, NULL, OPT_NS },
		{ "time-slice", required_argument, NULL, OPT_SLICE },
		{ "truth", required_argument, NULL, OPT_TRUTH },
		{ "dump-insns", required_argument, NULL, OPT_DUMP },
		{ "follow-fork", no_argument, NULL, OPT_FOLLOW },
		{ "inject-ovf", required_argument, NULL, OPT_OVF },
		{ "drop-aux", required_argument, NULL, OPT_DROP },
		{ "inject-interrupts", required_argument, NULL, OPT_IRQ },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "no-wakers", no_argument, NULL, OPT_NO_WAKERS },
		{ "psb-period", required_argument, NULL, OPT_PSB },
		{ "no-cyc", no_argument, NULL, OPT_CYC },
		{ "mtc-period", required_argument, NULL, OPT_MTC },
		{ "aux-chunk", required_argument, NULL, OPT_CHUNK },
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	struct rc_emu_opts o = { 0 };
	uint64_t duration_ms = 0;
	unsigned long long v;
	bool quiet = false;
	const char *backend = getenv("PTFLAME_EMULATE");
	int c;

	o.output = "perf.data";
	o.cpus = 2;
	o.ns_per_insn = 1;
	o.cyc = true;
	o.seed = 1;
	optind = 1;
	/* '+': stop at the first non-option (PROG) even without "--" */
	while ((c = cmd_getopt("record", argc, argv, "+o:p:t:d:qHz::", opts)) != -1) {
		switch (c) {
		case CMD_OPT_ERR:
			return 2;
		case OPT_HELP:
		case 'H':
			fputs(emulate_help, stdout);
			return 0;
		case OPT_EMULATE:
			if (optarg)
				backend = optarg;
			break;
		case 'o':
			if (!*optarg)
				return cmd_usage_error("record", "-o wants a file name");
			o.output = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'z':
			if (cmd_record_parse_level(optarg, &o.compress))
				return 2;
			break;
		case 'd':
			if (cmd_record_parse_duration(optarg, &duration_ms))
				return 2;
			break;
		case 't':
			return cmd_usage_error("record", "--emulate follows whole processes, not "
					       "single threads (-t is for PT hardware): use -p PID "
					       "(a thread's id means its process)");
		case 'p':
			if (strchr(optarg, ','))
				return cmd_usage_error("record", "--emulate follows one process: -p "
						       "takes one PID, not '%s' (record each on its own)",
						       optarg);
			if (parse_num("-p", optarg, 1, 0x7fffffff, &v))
				return 2;
			o.pid = (pid_t)v;
			break;
		case OPT_START:
			o.start_sym = optarg;
			break;
		case OPT_MAX_INSNS:
			if (parse_num("--max-insns", optarg, 0, ~0ull, &v))
				return 2;
			o.max_insns = v;
			break;
		case OPT_CPUS:
			if (parse_num("--cpus", optarg, 1, 256, &v))
				return 2;
			o.cpus = (unsigned)v;
			break;
		case OPT_NS:
			if (parse_num("--ns-per-insn", optarg, 1, 1000000, &v))
				return 2;
			o.ns_per_insn = v;
			break;
		case OPT_SLICE:
			if (parse_num("--time-slice", optarg, 1, ~0ull, &v))
				return 2;
			o.slice_insns = v;
			break;
		case OPT_TRUTH:
			o.truth_path = optarg;
			break;
		case OPT_DUMP:
			o.dump_insns_path = optarg;
			break;
		case OPT_FOLLOW:
			o.follow_fork = true;
			break;
		case OPT_OVF:
			if (parse_num("--inject-ovf", optarg, 1, ~0ull, &v))
				return 2;
			o.inject_ovf = v;
			break;
		case OPT_DROP:
			if (parse_num("--drop-aux", optarg, 1, ~0ull, &v))
				return 2;
			o.drop_aux = v;
			break;
		case OPT_IRQ:
			if (parse_num("--inject-interrupts", optarg, 1, 1000000, &v))
				return 2;
			o.irq_rate = v;
			break;
		case OPT_SEED:
			if (parse_num("--seed", optarg, 0, ~0ull, &v))
				return 2;
			o.seed = v;
			break;
		case OPT_NO_WAKERS:
			o.no_wakers = true;
			break;
		case OPT_PSB:
			if (parse_num("--psb-period", optarg, 256, 1ull << 30, &v))
				return 2;
			if (v & (v - 1))
				return cmd_usage_error("record", "--psb-period wants a power of 2, not %llu", v);
			o.psb_period = v;
			break;
		case OPT_CHUNK:
			if (parse_num("--aux-chunk", optarg, 64, 1ull << 30, &v))
				return 2;
			o.aux_chunk = v;
			break;
		case OPT_CYC:
			o.cyc = false;
			break;
		case OPT_MTC:
			if (parse_num("--mtc-period", optarg, 0, 15, &v))
				return 2;
			o.mtc_period = (unsigned)v;
			o.mtc_period_set = true;
			break;
		default:
			return cmd_usage_error("record", "unexpected option");
		}
	}
	if (o.pid && optind < argc)
		return cmd_usage_error("record", "give either -p PID or a program, not both");
	if (!o.pid && optind >= argc)
		return cmd_usage_error("record", "--emulate needs a program to run (-- PROG [ARGS]) or -p PID");
	if (backend && *backend && strcmp(backend, "qemu") && strcmp(backend, "ptrace"))
		return cmd_usage_error("record", "--emulate=%s: the backends are qemu and ptrace", backend);
	bool ptrace_only = o.pid || o.dump_insns_path;
	bool use_qemu;
	if (backend && !strcmp(backend, "qemu")) {
		if (ptrace_only)
			return cmd_usage_error("record", "-p and --dump-insns need --emulate=ptrace");
		use_qemu = true;
	} else if (backend && !strcmp(backend, "ptrace")) {
		use_qemu = false;
	} else {
		char *q = ptrace_only ? NULL : rc_qemu_find();
		use_qemu = q != NULL;
		free(q);
	}
	o.argv = o.pid ? NULL : argv + optind;
	o.cmdline = (const char *const *)argv;
	o.cmdline_argc = (size_t)argc;

	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt;  /* no SA_RESTART: waitpid returns EINTR */
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	o.interrupted = &emulate_interrupted;
	/* -d: the same stop as SIGINT's, when the timer's SIGALRM comes */
	struct sigaction old_alrm;
	struct itimerval it = { .it_value = { .tv_sec = (time_t)(duration_ms / 1000),
					      .tv_usec = (suseconds_t)(duration_ms % 1000) * 1000 } };
	if (duration_ms) {
		sigaction(SIGALRM, &sa, &old_alrm);
		setitimer(ITIMER_REAL, &it, NULL);
	}

	struct rc_emu_stats st = { .exit_status = -1 };
	char err[512];
	int rc = use_qemu ? rc_qemu_emulate(&o, &st, err, sizeof(err)) : rc_emulate(&o, &st, err, sizeof(err));
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (duration_ms) {
		memset(&it, 0, sizeof(it));
		setitimer(ITIMER_REAL, &it, NULL);
		sigaction(SIGALRM, &old_alrm, NULL);
	}
	if (rc < 0)
		return cmd_error("record", "%s", err[0] ? err : "emulation failed");
	if (!quiet)
		fprintf(stderr,
			"ptflame record: emulated %llu instructions of %llu thread(s) in %.2f s "
			"(%.0f insns/s), %llu bytes of PT, wrote %s\n",
			(unsigned long long)st.insns, (unsigned long long)st.threads, st.seconds,
			st.seconds > 0 ? (double)st.insns / st.seconds : 0.0,
			(unsigned long long)st.aux_bytes, o.output);
	if (!st.aux_bytes)
		fprintf(stderr, "ptflame record: warning: no traced thread ran during the recording "
			"(they were all blocked): %s has no trace, and report will have nothing to show\n",
			o.output);
	if (st.from_exec)
		fprintf(stderr, "ptflame record: note: no 'main' in %s%s (stripped?): traced from "
			"exec, the dynamic loader included; --start=SYMBOL starts elsewhere\n",
			st.from_exec_path, st.from_exec > 1 ? " and other programs" : "");
	if (st.forks_untraced)
		fprintf(stderr, "ptflame record: warning: %llu process(es) forked: the children ran "
			"untraced (--follow-fork traces them)\n",
			(unsigned long long)st.forks_untraced);
	if (st.execs_untraced)
		fprintf(stderr, "ptflame record: warning: %llu process(es) called execve: qemu-user "
			"runs the new program untraced (--emulate=ptrace follows exec)\n",
			(unsigned long long)st.execs_untraced);
	/* attached (-p): not our child, its end is not ours to report */
	return cmd_record_ended(o.pid ? "" : o.argv[0], o.pid ? -1 : st.exit_status,
				emulate_interrupted > 0);
}
