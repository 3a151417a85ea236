#include "stackrebuild/stackrebuild.h"

const char *sr_room_name(void)
{
	return "stackrebuild";
}
