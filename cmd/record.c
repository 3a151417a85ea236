/* ptflame record: pick the backend. --emulate anywhere before "--" selects
 * the ptrace emulator (record_emulate.c); otherwise hardware Intel PT
 * (record_pt.c). */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"

const char cmd_record_help[] =
	"usage: ptflame record [-o FILE] [-d SECONDS] [-p PID[,PID...] | -t TID[,TID...] | -- CMD [ARGS]]\n"
	"       ptflame record --emulate [-o FILE] [--start SYMBOL] [--max-insns N] [--cpus N]\n"
	"                      [--ns-per-insn N] [--truth FILE] [-p PID | -- PROG [ARGS]]\n"
	"\n"
	"Record a process with Intel Processor Trace into a perf.data file\n"
	"(default ./perf.data), as 'perf record -e intel_pt//u' would.\n"
	"\n"
	"  --emulate   no PT hardware: follow the process with ptrace and emit the\n"
	"              PT packets the hardware would (slow: ~10k instructions/s)\n"
	"\n"
	"Run 'ptflame record --emulate --help' or 'ptflame record --pt-help' for\n"
	"each backend's options.\n";

int cmd_record(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(cmd_record_help, stdout);
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--emulate"))
			return cmd_record_emulate(argc, argv);
	}
	return cmd_record_pt(argc, argv);
}
