/* ptflame - decoder/dc_strpool.h: strings appended to one growing buffer
 * and named by their offset (internal to decoder/): the symbol names of a
 * binary, of the kernel. Offsets stay valid when the buffer moves.
 */
#ifndef PTFLAME_DC_STRPOOL_H
#define PTFLAME_DC_STRPOOL_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/dc_vec.h"

/* Append s (with its NUL) to *buf of *len bytes in *cap (first growth to
 * first_cap); *off: where it starts. 0 or -ENOMEM. */
static inline int dc_strpool_add(char **buf, size_t *len, size_t *cap, size_t first_cap,
				 const char *s, uint32_t *off)
{
	size_t n = strlen(s) + 1;

	if (dc_vec_reserve((void **)buf, cap, *len + n, 1, first_cap))
		return -ENOMEM;
	memcpy(*buf + *len, s, n);
	*off = (uint32_t)*len;
	*len += n;
	return 0;
}

#endif
