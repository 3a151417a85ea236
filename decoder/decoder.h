/* ptflame - decoder/: the room's one public header.
 * perf.data reader, sideband model, libipt decoding and symbols, all turning
 * a recording into branch events (branch.h). Names are prefixed dc_.
 * Sub-headers included here are part of this public interface.
 */
#ifndef PTFLAME_DECODER_H
#define PTFLAME_DECODER_H

#include "decoder/branch.h"
#include "decoder/perfdata.h"
#include "decoder/sideband.h"
#include "decoder/symbols.h"
#include "decoder/ptdecode.h"
#include "decoder/outfile.h"

const char *dc_room_name(void);

#endif
