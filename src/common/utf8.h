/* utf8.h — UTF-8 validation shared by the record decoders (catalog/fields) and
 * the text and JSON writers (sink/): one definition of a valid sequence.
 * Inline: both callers run per byte on the per-event path. */
#ifndef UPROBESTATS_COMMON_UTF8_H
#define UPROBESTATS_COMMON_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Bytes in the UTF-8 sequence starting at s[0..n), or 0 when it is not a
 * valid, shortest-form, non-surrogate sequence at or below U+10FFFF
 * (overlong, surrogate, too large, truncated).  n must be at least 1. */
static inline size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0; /* continuation byte, C0/C1 overlong lead, F5..FF */
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* The bytes s[0..n) take once each invalid byte is U+FFFD (3 bytes): the one
 * rule of every output (docs/json-schema.md, "string").  At most 3 * n. */
static inline size_t utf8_repaired_len(const unsigned char *s, size_t n)
{
	size_t out = 0;

	for (size_t i = 0; i < n;) {
		size_t l = utf8_seq_len(s + i, n - i);
		out += l ? l : 3;
		i += l ? l : 1;
	}
	return out;
}

/* Writes s[0..n) with each invalid byte as U+FFFD to d (room for
 * utf8_repaired_len(s, n) bytes); returns the end. */
static inline unsigned char *utf8_repair(unsigned char *d, const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t l = utf8_seq_len(s + i, n - i);
		if (l) {
			for (size_t k = 0; k < l; k++)
				*d++ = s[i + k];
			i += l;
		} else {
			*d++ = 0xef;
			*d++ = 0xbf;
			*d++ = 0xbd;
			i++;
		}
	}
	return d;
}

#endif
