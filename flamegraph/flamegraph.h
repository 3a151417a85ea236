/* ptflame - flamegraph/: the room's one public header. Names prefixed fg_.
 * Reads only the calling-context tree (stackrebuild.h). */
#ifndef PTFLAME_FLAMEGRAPH_H
#define PTFLAME_FLAMEGRAPH_H

#include "stackrebuild/stackrebuild.h"

const char *fg_room_name(void);

#endif
