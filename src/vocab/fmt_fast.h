/* fmt_fast.h — formatting straight into memory the caller has reserved
 * (outbuf_reserve), for the per-event paths of the text-like sinks.
 *
 * Each function writes at p and returns the new end; none checks room: the
 * caller reserves the worst case first (FMT_U64_MAX and friends below).  Small
 * copies are done with fixed-size moves the compiler inlines, because musl's
 * memcpy costs about as much for 10 bytes as for 200 and a JSON line is
 * dozens of short pieces. */
#ifndef UPROBESTATS_VOCAB_FMT_FAST_H
#define UPROBESTATS_VOCAB_FMT_FAST_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FMT_U64_MAX 20          /* 18446744073709551615 */
#define FMT_I64_MAX 20          /* -9223372036854775808 */
#define FMT_HEX_MAX 18          /* 0xffffffffffffffff */

static inline char *fmt_copy(char *p, const void *src, size_t n)
{
	const char *s = src;

	if (n > 128) {
		memcpy(p, s, n);
		return p + n;
	}
	for (; n >= 16; n -= 16, p += 16, s += 16)
		__builtin_memcpy(p, s, 16);
	if (n >= 8) {
		__builtin_memcpy(p, s, 8);
		p += 8, s += 8, n -= 8;
	}
	if (n >= 4) {
		__builtin_memcpy(p, s, 4);
		p += 4, s += 4, n -= 4;
	}
	if (n >= 2) {
		__builtin_memcpy(p, s, 2);
		p += 2, s += 2, n -= 2;
	}
	if (n)
		*p++ = *s;
	return p;
}

/* A string literal: its length is known at compile time. */
#define FMT_LIT(p, lit) fmt_copy((p), (lit), sizeof(lit) - 1)

static inline unsigned fmt_u64_digits(uint64_t v)
{
	unsigned n = 1;

	while (v >= 10000) {
		v /= 10000;
		n += 4;
	}
	return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

static inline char *fmt_u64(char *p, uint64_t v)
{
	static const char pairs[201] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	unsigned n = fmt_u64_digits(v);
	char *e = p + n;

	while (v >= 100) {
		e -= 2;
		__builtin_memcpy(e, pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		e -= 2;
		__builtin_memcpy(e, pairs + 2 * v, 2);
	} else {
		*--e = (char)('0' + v);
	}
	return p + n;
}

static inline char *fmt_i64(char *p, int64_t v)
{
	if (v >= 0)
		return fmt_u64(p, (uint64_t)v);
	*p++ = '-';
	return fmt_u64(p, (uint64_t)0 - (uint64_t)v);
}

/* v as 0x-prefixed lowercase hex, no leading zeros ("0x0" for 0). */
static inline char *fmt_hex(char *p, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	unsigned n = v ? (unsigned)(64 - __builtin_clzll(v) + 3) / 4 : 1;

	p[0] = '0';
	p[1] = 'x';
	for (unsigned i = n; i > 0; i--, v >>= 4)
		p[1 + i] = digits[v & 0xf];
	return p + 2 + n;
}

/* Exactly `width` decimal digits of v (v < 10^width), zero-padded. */
static inline char *fmt_fixed(char *p, uint64_t v, unsigned width)
{
	for (unsigned i = width; i > 0; i--, v /= 10)
		p[i - 1] = (char)('0' + v % 10);
	return p + width;
}

#endif
