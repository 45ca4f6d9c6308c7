/* test_utf8.c — common/utf8.h's repair (each invalid byte as U+FFFD) and the
 * protobuf string field built on it (common/wire.h's wire_put_str_field):
 * the one rule statsd, JSON and Perfetto strings share. */
#include "ut.h"

#include <stdint.h>
#include <string.h>

#include "common/utf8.h"
#include "common/wire.h"

/* The repaired copy of s[0..n) in out, and its length, which must be what
 * utf8_repaired_len said (else SIZE_MAX). */
static size_t repaired(const char *s, size_t n, char *out)
{
	unsigned char *end = utf8_repair((unsigned char *)out, (const unsigned char *)s, n);
	size_t len = (size_t)(end - (unsigned char *)out);

	return len == utf8_repaired_len((const unsigned char *)s, n) ? len : SIZE_MAX;
}

UT_TEST(utf8_repair_each_bad_byte_is_one_replacement)
{
	char out[64];
	size_t n;

	n = repaired("bad\xff\xfe" "A", 6, out);
	UT_EQ_U64(n, 10);
	UT_ASSERT(!memcmp(out, "bad\xef\xbf\xbd\xef\xbf\xbd" "A", n));
	/* valid multi-byte sequences are kept whole */
	n = repaired("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9, out);
	UT_EQ_U64(n, 9);
	UT_ASSERT(!memcmp(out, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9));
	/* a truncated sequence at the end, an overlong and a surrogate: one each per byte */
	n = repaired("\xe2\x82", 2, out);
	UT_EQ_U64(n, 6);
	n = repaired("\xc0\xaf", 2, out);
	UT_EQ_U64(n, 6);
	n = repaired("\xed\xa0\x80", 3, out);
	UT_EQ_U64(n, 9);
	/* the worst case is 3 bytes a byte */
	UT_EQ_U64(utf8_repaired_len((const unsigned char *)"\xff\xff\xff\xff", 4), 12);
	UT_EQ_U64(utf8_repaired_len((const unsigned char *)"", 0), 0);
}

UT_TEST(wire_str_field_repairs_and_keeps_valid_strings_as_they_are)
{
	struct wire_buf w = { 0 };
	static const uint8_t want_bad[] = { 0x0a, 7, 'x', 0xef, 0xbf, 0xbd, 0xef, 0xbf, 0xbd };

	wire_put_str_field(&w, 1, "ok", 2);
	UT_EQ_U64(w.len, 4);
	UT_ASSERT(!memcmp(w.p, "\x0a\x02ok", 4));
	w.len = 0;
	wire_put_str_field(&w, 1, "x\x80\xff", 3);
	UT_EQ_U64(w.len, sizeof(want_bad));
	UT_ASSERT(!memcmp(w.p, want_bad, sizeof(want_bad)));
	UT_ASSERT(!w.oom);
	wire_buf_free(&w);
}
