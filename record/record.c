#include "record/record.h"

const char *rc_room_name(void)
{
	return "record";
}
