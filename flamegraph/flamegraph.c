#include "flamegraph/flamegraph.h"

const char *fg_room_name(void)
{
	return "flamegraph";
}
