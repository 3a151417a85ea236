/* ptflame dump: not built yet. */
#include <getopt.h>

#include "cmd/cmd.h"

const char cmd_dump_help[] = "usage: ptflame dump (not built yet)\n";

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	while ((c = cmd_getopt("dump", argc, argv, "+h", opts)) != -1) {
		if (c == CMD_OPT_HELP)
			return 0;
		if (c == CMD_OPT_ERR)
			return 2;
	}
	return cmd_usage_error("dump", "'dump' is not built yet in this version");
}
