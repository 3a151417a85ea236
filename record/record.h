/* ptflame - record/: the room's one public header. Names prefixed rc_.
 * Uses the perf.data format definitions of decoder/. */
#ifndef PTFLAME_RECORD_H
#define PTFLAME_RECORD_H

#include "record/perfwriter.h"
#include "record/ptrecord.h"

const char *rc_room_name(void);

#endif
