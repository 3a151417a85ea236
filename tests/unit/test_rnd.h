/* The unit tests' one random number generator (xorshift64*): seeded by
 * the test, so that a failure reproduces. */
#ifndef PTFLAME_TEST_RND_H
#define PTFLAME_TEST_RND_H

#include <stdint.h>

static inline uint64_t test_rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

#endif
