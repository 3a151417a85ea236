/* ptflame - decoder room: version string and shared helpers. */
#include "decoder/decoder.h"

const char *dc_room_name(void)
{
	return "decoder";
}
