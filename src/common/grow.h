/* grow.h — the one way an array grows: its capacity doubles from a first
 * size until the items needed fit, and every size on the way is checked for
 * overflow.  `make test-growth` (test/build/growth.py) fails on an
 * open-coded `cap ? cap * 2 : N` or a realloc outside grow.c. */
#ifndef UPROBESTATS_COMMON_GROW_H
#define UPROBESTATS_COMMON_GROW_H

#include <stddef.h>

/* The capacity for need items of elem bytes: cap (first when 0) doubled
 * until need fits, cap itself when it does already.  0, or -EOVERFLOW when
 * the capacity or its size in bytes passes SIZE_MAX (*out untouched). */
int grow_cap(size_t cap, size_t need, size_t first, size_t elem, size_t *out);

/* *p, a realloc'd array of *cap items of elem bytes, made to hold at least
 * need items (see grow_cap); the new items are not initialised.  0, -ENOMEM
 * or -EOVERFLOW; on failure *p and *cap are unchanged (and still owned by the
 * caller).  Call it through grow_array(), which takes a typed pointer. */
int grow_array_bytes(void **p, size_t *cap, size_t need, size_t first, size_t elem);

/* *p made an array of exactly n items of elem bytes (realloc); for sizes
 * that are not a doubling (a table padded to a power of two, a clamp).
 * 0, -ENOMEM or -EOVERFLOW; *p unchanged on failure. */
int resize_array_bytes(void **p, size_t n, size_t elem);

/* grow_array(&v, &cap, need, first) and resize_array(&v, n): the same for
 * `T *v; size_t cap;`, the element size taken from v's type. */
#define grow_array(pp, capp, need, first)                                              \
	__extension__({                                                                \
		void *grow_p_ = *(pp);                                                 \
		int grow_rc_ = grow_array_bytes(&grow_p_, (capp), (need), (first),     \
						sizeof(**(pp)));                       \
		*(pp) = grow_p_;                                                       \
		grow_rc_;                                                              \
	})
#define resize_array(pp, n)                                                            \
	__extension__({                                                                \
		void *grow_p_ = *(pp);                                                 \
		int grow_rc_ = resize_array_bytes(&grow_p_, (n), sizeof(**(pp)));      \
		*(pp) = grow_p_;                                                       \
		grow_rc_;                                                              \
	})

#endif
