/* grow.h — the one way an array grows: its capacity doubles from a first
 * size until the items needed fit, and every size on the way is checked for
 * overflow.  `make test-growth` (test/build/growth.py) fails on an
 * open-coded `cap ? cap * 2 : N` or a realloc outside grow.c. */
#ifndef UPROBESTATS_COMMON_GROW_H
#define UPROBESTATS_COMMON_GROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* An open-addressing hash table (linear probing, a power-of-two capacity) of
 * *cap slots of elem bytes, rebuilt at the next capacity (grow_cap from
 * first, a power of two; a calloc'd array, so a new slot is all zero bytes): every slot that
 * slot_hash says is used moves to the first free slot from its hash.
 * 0, -ENOMEM or -EOVERFLOW; on failure *tab and *cap are unchanged.  Call it
 * through grow_hash_table(), which takes a typed pointer. */
int grow_hash_table_bytes(void **tab, size_t *cap, size_t first, size_t elem,
			  bool (*slot_hash)(const void *slot, uint64_t *hash));

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

#define grow_hash_table(pp, capp, first, slot_hash)                                    \
	__extension__({                                                                \
		void *grow_p_ = *(pp);                                                 \
		int grow_rc_ = grow_hash_table_bytes(&grow_p_, (capp), (first),        \
						     sizeof(**(pp)), (slot_hash));     \
		*(pp) = grow_p_;                                                       \
		grow_rc_;                                                              \
	})

#endif
