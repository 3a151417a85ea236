/* ptflame - stackrebuild/: the room's one public header. Names prefixed sr_.
 * Knows branch events (decoder/branch.h), nothing of libipt or perf.data. */
#ifndef PTFLAME_STACKREBUILD_H
#define PTFLAME_STACKREBUILD_H

#include "decoder/branch.h"

const char *sr_room_name(void);

/* How the stack machine identifies functions: a symbolizer maps an address
 * of a process to a function key, equal for every address inside the same
 * function (and across processes for the same function of the same binary).
 * Keys are opaque to stackrebuild/ and flamegraph/; 0 means "no key" (the
 * symbolizer should rather return a key for "[unknown] (dso)"). The decoder
 * implements it with ELF symbols, the perf-script importer with the names
 * perf printed. Implementations cache per distinct address. */
struct sr_symbolizer {
	void *ctx;
	uint64_t (*func_key)(void *ctx, uint32_t pid, uint64_t ip);
	/* Display name of a key, valid as long as the symbolizer lives. */
	const char *(*name)(void *ctx, uint64_t key);
};

#endif
