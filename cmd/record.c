/* ptflame record: pick the backend. --emulate anywhere before "--" selects
 * the ptrace emulator (record_emulate.c); otherwise hardware Intel PT
 * (record_pt.c). */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "cmd/cmd.h"
#include "cmd/report_pipeline.h"

/* 'ptflame help record' shows this with the hardware recorder's options
 * (record_pt.c prints those first). */
const char cmd_record_help[] =
	"\n"
	"Without Intel PT hardware:\n"
	"  ptflame record --emulate [-o FILE] [--start SYMBOL] [--max-insns N] [--cpus N]\n"
	"                 [--ns-per-insn N] [--truth FILE] [-p PID | -- PROG [ARGS]]\n"
	"  runs PROG under qemu-user (tens of millions of instructions/s) or\n"
	"  follows it with ptrace (-p; 10,000-30,000 instructions/s) and emits the\n"
	"  PT packets the hardware would. 'ptflame record --emulate --help' lists\n"
	"  its options.\n";

int cmd_record(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		int ret = cmd_record_pt(argc, argv);

		fputs(cmd_record_help, stdout);
		return ret;
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--emulate") || !strncmp(argv[i], "--emulate=", 10))
			return cmd_record_emulate(argc, argv);
	}
	return cmd_record_pt(argc, argv);
}

/* -d SECONDS (decimals allowed) as milliseconds, at least 1; 0 or an
 * error said (exit 2). */
int cmd_record_parse_duration(const char *s, uint64_t *ms)
{
	uint64_t ns;

	/* (report's durations: decimal seconds, or with a unit: 500ms) */
	if (report_parse_duration(s, &ns) || !ns || ns > UINT64_C(10000000) * 1000000000)
		return cmd_usage_error("record", "-d: '%s' is not a duration (> 0): seconds, "
				       "or with a unit (500ms, 2s)", s);
	*ms = (ns + 500000) / 1000000;
	if (!*ms)
		*ms = 1;
	return 0;
}

int cmd_record_ended(const char *prog, int wstatus, int stopped)
{
	if (wstatus == -1)
		return 0;
	if (WIFEXITED(wstatus)) {
		if (WEXITSTATUS(wstatus))
			fprintf(stderr, "ptflame record: %s exited with status %d\n", prog,
				WEXITSTATUS(wstatus));
		return stopped ? 0 : WEXITSTATUS(wstatus);
	}
	if (!WIFSIGNALED(wstatus))
		return 0;
	if (stopped) {
		fprintf(stderr, "ptflame record: %s was stopped by signal %d (%s) when the recording ended\n",
			prog, WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
		return 0;
	}
	fprintf(stderr, "ptflame record: %s was killed by signal %d (%s)%s\n", prog,
		WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)),
		WCOREDUMP(wstatus) ? ", core dumped" : "");
	return 128 + WTERMSIG(wstatus);
}

/* -z[N], --compression-level[=N]: zstd's level, 1 (the default, as perf
 * record's) to 22; 0 or an error said (exit 2). */
int cmd_record_parse_level(const char *s, int *level)
{
	unsigned long long v;

	if (!s) {
		*level = 1;
		return 0;
	}
	if (cmd_parse_u64(s, &v) || v < 1 || v > 22)
		return cmd_usage_error("record", "--compression-level: '%s' is not a level "
				       "from 1 (fastest) to 22 (smallest)", s);
	*level = (int)v;
	return 0;
}
