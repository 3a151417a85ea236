/* ptflame bench: ipt_bare -w, a walker of our own (bench/ipt_walk.c). */
#ifndef PTFLAME_BENCH_IPT_WALK_H
#define PTFLAME_BENCH_IPT_WALK_H

#include <stddef.h>
#include <stdint.h>

#include <intel-pt.h>

struct walk_counts {
	uint64_t blocks, branches, errors, hash;
};

/* Code for the walker: an executable mapping of a file (MMAP record).
 * -1: not read (no such file, too many mappings). */
int walk_add_map(const char *path, uint64_t start, uint64_t len, uint64_t pgoff);
/* Decode one piece (from its first PSB) with the packet decoder and the
 * block-end cache; count calls and returns into c (hash: their sequence). */
void walk_chunk(const struct pt_config *base, const uint8_t *data, uint64_t size,
		struct walk_counts *c);
/* The same hash over a libipt block (ipt_bare's loop, to compare). */
uint64_t walk_hash(uint64_t h, uint64_t end_ip, int ret);
void walk_free(void);

#endif
