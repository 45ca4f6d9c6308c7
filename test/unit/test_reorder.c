/* Unit tests: probe/reorder — perf buffer records back in time order. */
#include <stdint.h>
#include <string.h>

#include "probe/reorder.h"
#include "ut.h"

static void push_at(struct reorder *r, uint64_t t, uint32_t tag)
{
	uint8_t rec[12];

	memcpy(rec, &t, 8);
	memcpy(rec + 8, &tag, 4);
	UT_EQ_INT(reorder_push(r, rec, sizeof(rec)), 0);
}

static uint32_t pop_tag(struct reorder *r, uint64_t mark)
{
	const struct reorder_item *it = reorder_peek(r, mark);
	uint32_t tag;

	if (!it)
		return UINT32_MAX;
	memcpy(&tag, it->data + 8, 4);
	reorder_pop(r);
	return tag;
}

/* Two CPUs' buffers read one after the other: out in time order, ties in
 * the order read, nothing at or past the watermark until it moves. */
UT_TEST(reorder_hands_out_in_time_order_up_to_the_watermark)
{
	struct reorder r = { 0 };

	push_at(&r, 10, 0);
	push_at(&r, 30, 1);
	push_at(&r, 50, 2);      /* CPU 0 */
	push_at(&r, 20, 3);
	push_at(&r, 30, 4);
	push_at(&r, 60, 5);      /* CPU 1 */
	UT_EQ_INT((int)r.bytes, 6 * 12);
	UT_EQ_INT((int)pop_tag(&r, 50), 0);
	UT_EQ_INT((int)pop_tag(&r, 50), 3);
	UT_EQ_INT((int)pop_tag(&r, 50), 1);
	UT_EQ_INT((int)pop_tag(&r, 50), 4);
	UT_ASSERT(pop_tag(&r, 50) == UINT32_MAX);   /* 50 is not below 50 */
	push_at(&r, 40, 6);      /* a later drain */
	UT_EQ_INT((int)pop_tag(&r, UINT64_MAX), 6);
	UT_EQ_INT((int)pop_tag(&r, UINT64_MAX), 2);
	UT_EQ_INT((int)pop_tag(&r, UINT64_MAX), 5);
	UT_ASSERT(!reorder_peek(&r, UINT64_MAX));
	UT_EQ_INT((int)r.bytes, 0);
	reorder_free(&r);
}

/* Many records in reverse order: the heap keeps them all, and a record
 * shorter than a time sorts first. */
UT_TEST(reorder_many_records_and_a_short_one)
{
	struct reorder r = { 0 };
	uint8_t tiny = 7;

	for (uint32_t i = 0; i < 5000; i++)
		push_at(&r, 100000 - i, i);
	UT_EQ_INT(reorder_push(&r, &tiny, 1), 0);
	UT_EQ_INT((int)reorder_peek(&r, 1)->size, 1);
	reorder_pop(&r);
	for (uint32_t i = 0; i < 5000; i++)
		UT_EQ_INT((int)pop_tag(&r, UINT64_MAX), (int)(4999 - i));
	push_at(&r, 5, 1);
	reorder_free(&r);   /* frees what is still held */
	UT_ASSERT(!r.heap && !r.n);
}
