/* ptflame record --emulate: not built yet. */
#include "cmd/cmd.h"

int cmd_record_emulate(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cmd_usage_error("record", "'record --emulate' is not built yet in this version");
}
