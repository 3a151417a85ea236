/* ptflame - decoder/dc_vec.h: the one growable array (internal to the
 * rooms; stackrebuild/, flamegraph/, record/ and cmd/ use it too). An array
 * is a pointer, a count and a capacity the caller keeps; dc_vec_reserve
 * makes room, doubling the capacity (from min when empty) so that n
 * appends cost O(n). The element count times its size never wraps.
 */
#ifndef PTFLAME_DC_VEC_H
#define PTFLAME_DC_VEC_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* Room for need elements of elem bytes in *v, of capacity *cap, which
 * stays at most max. 0, or -ENOMEM (out of memory, or need over max, or
 * the bytes over SIZE_MAX: *v and *cap are then as they were). */
static inline int dc_vec_reserve_max(void **v, size_t *cap, size_t need, size_t elem, size_t min,
				     size_t max)
{
	size_t c = *cap ? *cap : (min ? min : 1);
	void *n;

	if (need <= *cap)
		return 0;
	if (need > max || !elem)
		return -ENOMEM;
	while (c < need)
		c = c > max / 2 ? max : c * 2;
	if (c > max)
		c = max;
	if (c > SIZE_MAX / elem || !(n = realloc(*v, c * elem)))
		return -ENOMEM;
	*v = n;
	*cap = c;
	return 0;
}

static inline int dc_vec_reserve(void **v, size_t *cap, size_t need, size_t elem, size_t min)
{
	return dc_vec_reserve_max(v, cap, need, elem, min, SIZE_MAX);
}

/* The same for a 32-bit capacity (structures kept small). */
static inline int dc_vec_reserve32(void **v, uint32_t *cap, size_t need, size_t elem, uint32_t min)
{
	size_t c = *cap;
	int ret;

	if (need <= c)
		return 0;
	ret = dc_vec_reserve_max(v, &c, need, elem, min, UINT32_MAX);
	if (!ret)
		*cap = (uint32_t)c;
	return ret;
}

/* Room for one more element after the n in array p of capacity cap (an
 * lvalue of type size_t; uint32_t with ..._ROOM32), doubled from min. */
#define DC_VEC_PUSH_ROOM(p, n, cap, min) \
	dc_vec_reserve((void **)&(p), &(cap), (size_t)(n) + 1, sizeof(*(p)), (min))
#define DC_VEC_PUSH_ROOM32(p, n, cap, min) \
	dc_vec_reserve32((void **)&(p), &(cap), (size_t)(n) + 1, sizeof(*(p)), (min))

/* In v[0, n), sorted by FIELD, the number of elements whose FIELD is at or
 * below key: the index after the last of them (a binary search). */
#define DC_VEC_UPPER(v, n, field, key)                                        \
	({                                                                     \
		size_t dc_a_ = 0, dc_b_ = (n);                                 \
		while (dc_a_ < dc_b_) {                                        \
			size_t dc_m_ = (dc_a_ + dc_b_) / 2;                    \
			if ((v)[dc_m_].field <= (key))                         \
				dc_a_ = dc_m_ + 1;                             \
			else                                                   \
				dc_b_ = dc_m_;                                 \
		}                                                              \
		dc_a_;                                                         \
	})

#endif
