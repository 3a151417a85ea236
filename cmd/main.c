/* ptflame - main: dispatch `ptflame <command> [options]`, git/perf style. */
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include "cmd/cmd.h"

#ifndef PTFLAME_VERSION
#define PTFLAME_VERSION "unknown"
#endif

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "record", cmd_record, "record a process: Intel PT (or --emulate) into perf.data" },
	{ "report", cmd_report, "decode perf.data, rebuild stacks, print folded stacks or tables" },
	{ "diff",   cmd_diff,   "compare two recordings or folded files" },
	{ "dump",   cmd_dump,   "print every perf.data record as text" },
	{ "help",   NULL,       "show help for ptflame or a command" },
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ptflame [--version] [--help] <command> [options]\n"
		"\n"
		"Wall-clock flame graphs from Intel Processor Trace: every call and\n"
		"return of every thread, replayed from one recording.\n"
		"\n"
		"commands:\n");
	for (size_t i = 0; i < NR_COMMANDS; i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(out,
		"\n"
		"examples:\n"
		"  ptflame record --emulate -o perf.data -- ./prog    (no PT hardware needed)\n"
		"  ptflame record -p PID -d 5\n"
		"  ptflame report > out.folded\n"
		"  ptflame diff before.data after.data\n"
		"\n"
		"'ptflame help CMD' or 'ptflame CMD --help' shows a command's options.\n");
}

/* "ptflame CMD: MESSAGE" on stderr, without the end of the line. */
static void vmessage(const char *cmd, const char *fmt, va_list ap)
{
	fprintf(stderr, "ptflame%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	vfprintf(stderr, fmt, ap);
}

int cmd_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(cmd, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'ptflame %s%s--help')\n", cmd ? cmd : "", cmd ? " " : "");
	return 2;
}

int cmd_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(cmd, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

int cmd_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
	       const struct option *longopts)
{
	int saved_optind = optind;
	int c;

	opterr = 0;
	c = getopt_long(argc, argv, shortopts, longopts, NULL);
	if (c == 'h') {
		const char *text = cmd_help_text(cmd);

		fputs(text ? text : "", stdout);
		return CMD_OPT_HELP;
	}
	if (c == '?' || c == ':') {
		const char *arg = argv[optind - 1 >= saved_optind ? optind - 1 : saved_optind];

		if (optopt && optopt < 256 && !strchr(shortopts, optopt))
			cmd_usage_error(cmd, "unknown option '-%c'", optopt);
		else if (c == ':' || (optopt && strchr(shortopts, optopt)))
			cmd_usage_error(cmd, "option '%s' needs an argument", arg);
		else
			cmd_usage_error(cmd, "unknown option '%s'", arg);
		return CMD_OPT_ERR;
	}
	return c;
}

int cmd_parse_u64(const char *s, unsigned long long *out)
{
	unsigned long long v = 0;

	/* plain decimal only: no sign, no 0x (hex) or leading-0 (octal)
	 * reading, no blanks; overflow is junk too */
	if (!s || !*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (ULLONG_MAX - (unsigned)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (unsigned)(*s - '0');
	}
	*out = v;
	return 0;
}

const char *cmd_help_text(const char *name)
{
	if (!strcmp(name, "record"))
		return cmd_record_help;
	if (!strcmp(name, "report"))
		return cmd_report_help;
	if (!strcmp(name, "diff"))
		return cmd_diff_help;
	if (!strcmp(name, "dump"))
		return cmd_dump_help;
	if (!strcmp(name, "help"))
		return "usage: ptflame help [COMMAND]\n\nShow ptflame's usage, or a command's options.\n";
	return NULL;
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static int cmd_help(int argc, char **argv)
{
	const struct command *c;
	const char *text;

	if (argc < 2) {
		usage(stdout);
		return 0;
	}
	c = find_command(argv[1]);
	if (c && c->run) {
		char *args[] = { (char *)c->name, (char *)"--help", NULL };

		return c->run(2, args);
	}
	text = cmd_help_text(argv[1]);
	if (!text)
		return cmd_usage_error(NULL, "no help for unknown command '%s'", argv[1]);
	fputs(text, stdout);
	return 0;
}

static int run(int argc, char **argv)
{
	const struct command *c;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("ptflame %s\n", PTFLAME_VERSION);
		return 0;
	}
	if (argv[1][0] == '-')
		return cmd_usage_error(NULL, "unknown option '%s'", argv[1]);
	c = find_command(argv[1]);
	if (!c)
		return cmd_usage_error(NULL, "'%s' is not a ptflame command", argv[1]);
	if (!c->run)
		return cmd_help(argc - 1, argv + 1);
	return c->run(argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
	int rc = run(argc, argv);

	/* What went to stdout (help, version, dump) must have arrived: a
	 * closed or full stdout is an error, not exit 0. */
	errno = 0;
	if ((fflush(stdout) || ferror(stdout)) && errno != EPIPE && rc == 0)
		rc = cmd_error(NULL, "cannot write to stdout: %s",
			       strerror(errno ? errno : EIO));
	return rc;
}
