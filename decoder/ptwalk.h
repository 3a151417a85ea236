/* ptflame decoder: a block decoder of our own, over our query decoder
 * (ptquery.h, which answers as libipt's does).
 *
 * dc_walk_* answer what libipt's pt_blk_* answer, call for call, for the
 * configuration the queue decodes with (blocks end at calls and jumps, tick
 * events): the same blocks (up to the class of an indirect branch, which
 * libipt reports as ptic_error once its block cache knows the address), the
 * same events, statuses, times and offsets. The time and the events come
 * from the query decoder; the walk over the instructions is a cache of
 * where the next branch is from each address reached (decoded once, with
 * Zydis), so that a block costs a lookup where libipt decodes instruction
 * by instruction.
 *
 * What it does not know how to answer exactly (an error, kernel code or
 * code outside the sections given, VMCS and PTWRITE events, the errata
 * workarounds, whatever the query decoder does not answer) it does not
 * answer: DC_WALK_BAIL, and the caller decodes the window with libipt,
 * repeating the calls made so far. */
#ifndef PTFLAME_DECODER_PTWALK_H
#define PTFLAME_DECODER_PTWALK_H

#include <intel-pt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { DC_WALK_BAIL = -1000 };   /* (not a libipt error code) */

/* One section of an image: [start, end) holds the iscache's section isid,
 * or, with bytes, those bytes (memory libipt reads through the image's
 * callback, such as the [vdso]: isid 0); opaque: code libipt has that the
 * walker does not walk (kernel code): it hands over there. An image's
 * sections are all the code it has: where none is, libipt finds none
 * either (-pte_nomap), and the walker says so too. */
struct dc_wsec {
	uint64_t start, end;
	int isid;
	const uint8_t *bytes;
	bool opaque;
};

/* The code of one image: its sections, and the block ends decoded there
 * (one thread at a time). */
struct dc_wcode;

struct dc_wcode *dc_wcode_new(struct pt_image_section_cache *isc);
/* The image's sections now (any order; none overlap): what was decoded is
 * dropped. 0 or -ENOMEM. */
int dc_wcode_set(struct dc_wcode *c, const struct dc_wsec *secs, size_t n);
void dc_wcode_free(struct dc_wcode *c);

struct dc_walk;

/* A decoder over cfg's [begin, end) (cfg as for pt_blk_alloc_decoder). */
struct dc_walk *dc_walk_alloc(const struct pt_config *cfg, struct dc_wcode *code);
void dc_walk_free(struct dc_walk *w);
/* The image changed (pt_blk_set_image; code may be NULL: no code). */
void dc_walk_set_code(struct dc_walk *w, struct dc_wcode *code);
/* Has it read code since it was allocated? (If not, nothing it answered
 * depended on the image.) */
bool dc_walk_read_code(const struct dc_walk *w);

/* The class libipt gives the instruction in code[0, n): ptic_other for
 * one that is no branch, ptic_error when it cannot tell. (libipt's block
 * cache says ptic_error for an indirect branch or far transfer it knows.)
 * *len: its length in bytes (0 when it cannot be decoded). */
enum pt_insn_class dc_walk_iclass(const uint8_t *code, size_t n, uint8_t *len);

int dc_walk_sync_forward(struct dc_walk *w);
int dc_walk_next(struct dc_walk *w, struct pt_block *b);
int dc_walk_event(struct dc_walk *w, struct pt_event *ev);
/* A call made again, for a hand-over's repeat of the calls so far
 * (wdec.c): op 's', 'e' (into *ev) or 'n' (into *b), answered as
 * dc_walk_sync_forward, dc_walk_event and dc_walk_next answer it; a
 * block by dc_walk_next's general path alone, which its fast path only
 * shortens. (Out of line, so that those three keep one caller each, the
 * queue's, and are inlined there.) */
int dc_walk_again(struct dc_walk *w, int op, struct pt_block *b, struct pt_event *ev);
int dc_walk_time(struct dc_walk *w, uint64_t *tsc);
int dc_walk_get_offset(const struct dc_walk *w, uint64_t *off);
int dc_walk_get_sync_offset(const struct dc_walk *w, uint64_t *off);

#endif
