#include "ut.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/grow.h"

UT_TEST(grow_cap_doubles_from_first_until_need_fits)
{
	size_t c = 0;
	UT_EQ_INT(grow_cap(0, 1, 8, 4, &c), 0);
	UT_EQ_U64(c, 8);
	UT_EQ_INT(grow_cap(8, 9, 8, 4, &c), 0);
	UT_EQ_U64(c, 16);
	UT_EQ_INT(grow_cap(8, 100, 8, 4, &c), 0);
	UT_EQ_U64(c, 128);
	UT_EQ_INT(grow_cap(16, 3, 8, 4, &c), 0);   /* fits already: unchanged */
	UT_EQ_U64(c, 16);
	UT_EQ_INT(grow_cap(0, 0, 0, 4, &c), 0);    /* first 0 means 1 */
	UT_EQ_U64(c, 1);
}

UT_TEST(grow_cap_refuses_overflow_of_count_and_bytes)
{
	size_t c = 7;
	/* doubling past SIZE_MAX */
	UT_EQ_INT(grow_cap((SIZE_MAX >> 1) + 1, SIZE_MAX, 8, 1, &c), -EOVERFLOW);
	UT_EQ_U64(c, 7);
	/* the count fits, its bytes do not */
	UT_EQ_INT(grow_cap(SIZE_MAX / 16 + 1, SIZE_MAX / 16 + 2, 8, 8, &c), -EOVERFLOW);
	UT_EQ_INT(grow_cap(0, SIZE_MAX / 4 + 1, 8, 4, &c), -EOVERFLOW);
	UT_EQ_U64(c, 7);
	/* the largest that fits */
	UT_EQ_INT(grow_cap(1, (SIZE_MAX >> 1) + 1, 1, 1, &c), 0);
	UT_EQ_U64(c, (SIZE_MAX >> 1) + 1);
}

UT_TEST(grow_array_keeps_items_and_grows_by_doubling)
{
	uint64_t *v = NULL;
	size_t cap = 0;

	for (size_t i = 0; i < 1000; i++) {
		UT_EQ_INT(grow_array(&v, &cap, i + 1, 16), 0);
		UT_ASSERT(cap >= i + 1);
		UT_ASSERT(cap == 16 || (cap & (cap - 1)) == 0);
		v[i] = i * 3;
	}
	UT_EQ_U64(cap, 1024);
	for (size_t i = 0; i < 1000; i++)
		UT_EQ_U64(v[i], i * 3);
	free(v);
}

UT_TEST(grow_array_leaves_array_unchanged_on_overflow)
{
	uint32_t *v = NULL;
	size_t cap = 0;

	UT_EQ_INT(grow_array(&v, &cap, 4, 4), 0);
	uint32_t *before = v;
	v[3] = 42;
	UT_EQ_INT(grow_array(&v, &cap, SIZE_MAX / 2, 4), -EOVERFLOW);
	UT_EQ_INT(grow_array(&v, &cap, SIZE_MAX, 4), -EOVERFLOW);
	UT_ASSERT(v == before);
	UT_EQ_U64(cap, 4);
	UT_EQ_U64(v[3], 42);
	free(v);
}

UT_TEST(resize_array_is_exact_and_overflow_checked)
{
	uint16_t *v = NULL;

	UT_EQ_INT(resize_array(&v, 5), 0);
	v[4] = 9;
	UT_EQ_INT(resize_array(&v, SIZE_MAX / 2 + 1), -EOVERFLOW);
	UT_EQ_U64(v[4], 9);
	UT_EQ_INT(resize_array(&v, 3), 0);
	free(v);
}
