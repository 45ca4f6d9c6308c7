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

struct hslot {
	uint64_t key;   /* 0: empty */
	uint32_t value;
};

static bool hslot_hash(const void *slot, uint64_t *hash)
{
	const struct hslot *s = slot;

	*hash = s->key * 0x9e3779b97f4a7c15ull;
	return s->key != 0;
}

static struct hslot *hfind(struct hslot *tab, size_t cap, uint64_t key)
{
	uint64_t h;

	hslot_hash(&(struct hslot){ .key = key }, &h);
	for (size_t i = (size_t)h & (cap - 1); tab[i].key; i = (i + 1) & (cap - 1))
		if (tab[i].key == key)
			return &tab[i];
	return NULL;
}

UT_TEST(grow_hash_table_rehashes_every_used_slot)
{
	struct hslot *tab = NULL;
	size_t cap = 0, used = 0;

	for (uint64_t k = 1; k <= 3000; k++) {
		if ((used + 1) * 2 > cap) {
			size_t before = cap;
			UT_EQ_INT(grow_hash_table(&tab, &cap, 8, hslot_hash), 0);
			UT_EQ_U64(cap, before ? before * 2 : 8);
		}
		uint64_t h;
		hslot_hash(&(struct hslot){ .key = k }, &h);
		size_t i = (size_t)h & (cap - 1);
		while (tab[i].key)
			i = (i + 1) & (cap - 1);
		tab[i] = (struct hslot){ .key = k, .value = (uint32_t)(k * 7) };
		used++;
	}
	UT_EQ_U64(cap, 8192);
	size_t n = 0;
	for (size_t i = 0; i < cap; i++)
		n += tab[i].key != 0;
	UT_EQ_U64(n, 3000);
	for (uint64_t k = 1; k <= 3000; k++) {
		struct hslot *s = hfind(tab, cap, k);
		UT_ASSERT(s != NULL);
		UT_EQ_U64(s->value, k * 7);
	}
	UT_ASSERT(hfind(tab, cap, 3001) == NULL);
	free(tab);
}

UT_TEST(grow_hash_table_leaves_table_unchanged_on_overflow)
{
	struct hslot *tab = NULL;
	size_t cap = 0;

	UT_EQ_INT(grow_hash_table(&tab, &cap, 4, hslot_hash), 0);
	tab[1] = (struct hslot){ .key = 5, .value = 1 };
	struct hslot *before = tab;
	size_t huge = (SIZE_MAX >> 1) + 1;
	UT_EQ_INT(grow_hash_table(&tab, &huge, 4, hslot_hash), -EOVERFLOW);
	UT_ASSERT(tab == before);
	UT_EQ_U64(cap, 4);
	UT_EQ_U64(tab[1].key, 5);
	free(tab);
}
