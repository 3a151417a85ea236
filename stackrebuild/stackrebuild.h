/* ptflame - stackrebuild/: the room's one public header. Names prefixed sr_.
 * Knows branch events (decoder/branch.h), nothing of libipt or perf.data. */
#ifndef PTFLAME_STACKREBUILD_H
#define PTFLAME_STACKREBUILD_H

#include "decoder/branch.h"

const char *sr_room_name(void);

#endif
