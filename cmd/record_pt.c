/* ptflame record (hardware Intel PT): not built yet. */
#include "cmd/cmd.h"

int cmd_record_pt(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cmd_usage_error("record", "'record (hardware Intel PT)' is not built yet in this version");
}
