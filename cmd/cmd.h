/* ptflame - cmd/: one file per subcommand; argument parsing and wiring only.
 * Global mutable state (if any) lives here and nowhere else. */
#ifndef PTFLAME_CMD_H
#define PTFLAME_CMD_H

#include <stdint.h>
#include <stdio.h>

struct option;

/* A subcommand: argv[0] is the command name; returns the exit status. */
int cmd_record(int argc, char **argv);
int cmd_record_emulate(int argc, char **argv);  /* record --emulate        */
int cmd_record_pt(int argc, char **argv);       /* record (hardware PT)    */
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_dump(int argc, char **argv);

/* record (both backends): how PROG ended, given its wait status (-1:
 * unknown). Says it in one line on stderr unless it exited with status 0,
 * and returns record's exit status: PROG's own, 128+N when signal N killed
 * it; 0 when record stopped it (stopped: Ctrl-C, -d) or did not see it end. */
int cmd_record_ended(const char *prog, int wstatus, int stopped);
int cmd_record_parse_duration(const char *s, uint64_t *ms);
/* -z[N] / --compression-level[=N] of record (optarg NULL: 1). */
int cmd_record_parse_level(const char *s, int *level);

/* Each command's file defines its help text (printed by CMD --help). */
extern const char cmd_record_help[];
extern const char cmd_report_help[];
extern const char cmd_diff_help[];
extern const char cmd_dump_help[];

/* Help text of a command (the same text CMD --help and help CMD print);
 * NULL for an unknown command. */
const char *cmd_help_text(const char *name);

/* Print "ptflame CMD: <message>" plus a hint line naming --help, and return 2.
 * For usage errors: unknown options, missing or bad arguments. */
int cmd_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Print "ptflame CMD: <message>" (one line) and return 1. For runtime errors. */
int cmd_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* getopt_long wrapper shared by all commands: on an unknown option or a
 * missing argument it prints one line naming it and returns CMD_OPT_ERR (exit
 * 2); on 'h' (map -h/--help to 'h') it prints the command's help and returns
 * CMD_OPT_HELP (exit 0). Otherwise getopt_long's value (-1 at the end).
 * Set optind = 1 before the first call. */
#define CMD_OPT_ERR (-2)
#define CMD_OPT_HELP (-3)
int cmd_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
	       const struct option *longopts);

/* Parse a number: plain decimal digits only (no sign, hex, octal or
 * blanks), at most 2^64-1. 0 on success, -1 on junk or overflow. */
int cmd_parse_u64(const char *s, unsigned long long *out);

#endif
