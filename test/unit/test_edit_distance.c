#include "ut.h"

#include <string.h>

#include "common/edit_distance.h"
#include "config/schema.h"

static size_t dist(const char *a, const char *b)
{
	return edit_distance(a, strlen(a), b, strlen(b));
}

UT_TEST(edit_distance_counts_inserts_deletes_substitutions)
{
	UT_EQ_U64(dist("", ""), 0);
	UT_EQ_U64(dist("abc", ""), 3);
	UT_EQ_U64(dist("", "abc"), 3);
	UT_EQ_U64(dist("kitten", "sitting"), 3);
	UT_EQ_U64(dist("sitting", "kitten"), 3);
	UT_EQ_U64(dist("probe_config", "probe_configs"), 1);
	UT_EQ_U64(dist("flaw", "lawn"), 2);
	UT_EQ_U64(dist("same", "same"), 0);
}

/* The two copies this replaced disagreed past 64 and 200 bytes: one called
 * every long pair "far" (no suggestion), the other cut both at 200 bytes and
 * called names differing only after that "equal". */
UT_TEST(edit_distance_is_exact_for_long_names)
{
	char a[1001], b[1001];

	memset(a, 'x', 1000);
	a[1000] = 0;
	memcpy(b, a, sizeof(a));
	UT_EQ_U64(dist(a, b), 0);
	b[999] = 'y';                        /* differs past 200 bytes only */
	UT_EQ_U64(dist(a, b), 1);
	b[70] = 'y';
	UT_EQ_U64(dist(a, b), 2);
	b[999] = 0;                          /* and one shorter */
	UT_EQ_U64(dist(a, b), 2);
	UT_EQ_U64(dist(b, a), 2);
	UT_EQ_U64(dist(a, "x"), 999);        /* heap row for the longer, short stays short */
	UT_EQ_U64(edit_distance(a, 300, b, 300), 1);   /* lengths given, not strlen */
}

UT_TEST(closest_name_suggests_for_long_names_too)
{
	char want[121], have[121];
	const char *names[] = { "short_name", have };

	memset(have, 'a', 120);
	have[120] = 0;
	memcpy(want, have, sizeof(have));
	want[100] = 'b';
	UT_ASSERT(schema_closest_name(names, 2, want, strlen(want)) == have);
	UT_ASSERT(schema_closest_name(names, 2, "short_nam", 9) == names[0]);
	UT_ASSERT(!schema_closest_name(names, 2, "zzzzzzzzzzzz", 12));
}
