/* ptflame decoder: the block decoder of one window of a queue's data.
 *
 * Every window gets one, configured as the queue decodes (blocks end at
 * calls and jumps; tick events). It is our walker (ptwalk.h) while that can
 * answer; at the first call it cannot, libipt's block decoder takes over:
 * it repeats the calls made so far on the same bytes with the same image
 * (so reaches the same state) and answers that call and the rest. With
 * check set, libipt runs alongside all through and every answer is
 * compared (tests: PTFLAME_DECODER=check). */
#ifndef PTFLAME_DECODER_WDEC_H
#define PTFLAME_DECODER_WDEC_H

#include <intel-pt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoder/ptwalk.h"

enum dc_wdec_mode {
	DC_WDEC_LIBIPT,            /* libipt only                           */
	DC_WDEC_WALK,              /* the walker, libipt where it bails     */
	DC_WDEC_CHECK,             /* both, every answer compared           */
};

/* PTFLAME_DECODER=libipt|walk|check, else walk (another value is said
 * once on stderr). (Tests:
 * PTFLAME_WALK_BAIL=N hands each window over to libipt at the walker's
 * N-th call in it, so that the hand-over is exercised everywhere.) */
enum dc_wdec_mode dc_wdec_mode_env(void);

/* Windows the walker decoded, and the ones libipt took over. */
struct dc_wdec_stats {
	uint64_t walked, bailed;
};

struct dc_wdec {
	struct pt_block_decoder *blk;
	struct dc_walk *walk;
	struct pt_config cfg;      /* begin, end: the window               */
	struct pt_image *image;    /* what the calls so far were made with */
	struct dc_wcode *code;     /* (the walker's: image's code)         */
	/* those calls: how many, and the ones other than dc_wdec_next ('s',
	 * 'e' | the call's number << 8). A hand-over repeats them with a
	 * walker of its own beside libipt: the same bytes and code give it
	 * the answers the walker gave, and libipt must give them too. */
	size_t ncalls;
	uint64_t *ops;
	size_t nops, cap;
	enum dc_wdec_mode mode;
	size_t bail_at;            /* (PTFLAME_WALK_BAIL; 0: never)         */
	bool plain;                /* the walker alone, no hand-over asked
	                              for: its answers are only logged      */
	bool failed;               /* libipt did not repeat the walker's
	                              answers: the next call fails          */
	struct dc_wdec_stats *st;  /* (NULL: none kept)                    */
};

/* 0, or -ENOMEM. code: image's code for the walker (NULL: libipt). */
int dc_wdec_open(struct dc_wdec *d, enum dc_wdec_mode mode, const struct pt_config *base,
		 const uint8_t *buf, size_t len, struct pt_image *image, struct dc_wcode *code,
		 struct dc_wdec_stats *st);
void dc_wdec_close(struct dc_wdec *d);
static inline bool dc_wdec_is_open(const struct dc_wdec *d)
{
	return d->blk || d->walk;
}
/* libipt takes over now (if it has not: the walker's calls so far read
 * code of the image as it is). 0 or -ENOMEM. */
int dc_wdec_hand_over(struct dc_wdec *d);
/* The image changed (code: its code, or NULL). 0 or -ENOMEM. */
int dc_wdec_set_image(struct dc_wdec *d, struct pt_image *image, struct dc_wcode *code);

int dc_wdec_sync_forward(struct dc_wdec *d);
int dc_wdec_next(struct dc_wdec *d, struct pt_block *b);
int dc_wdec_event(struct dc_wdec *d, struct pt_event *ev);
int dc_wdec_time(struct dc_wdec *d, uint64_t *tsc);
int dc_wdec_offset(struct dc_wdec *d, uint64_t *off);
int dc_wdec_sync_offset(struct dc_wdec *d, uint64_t *off);

#endif
