/* bytes.h — bounds-checked little-endian reads shared by every parser
 * (formats/, resolve/, sys/propfile).
 *
 * Every reader takes the buffer and its length and fails (returns false) rather
 * than read past the end, so hostile input can never move a pointer outside the
 * mapping.  Offsets are 64-bit so that "offset + size" cannot wrap. */
#ifndef UPROBESTATS_COMMON_BYTES_H
#define UPROBESTATS_COMMON_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True when [off, off+n) lies inside a buffer of len bytes (no overflow). */
static inline bool rng_ok(size_t len, uint64_t off, uint64_t n)
{
	return off <= len && n <= len - off;
}

static inline uint16_t ld16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t ld32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

static inline uint64_t ld64(const uint8_t *p)
{
	return (uint64_t)ld32(p) | ((uint64_t)ld32(p + 4) << 32);
}

static inline bool rd16(const uint8_t *b, size_t len, uint64_t off, uint16_t *v)
{
	if (!rng_ok(len, off, 2))
		return false;
	*v = ld16(b + off);
	return true;
}

static inline bool rd32(const uint8_t *b, size_t len, uint64_t off, uint32_t *v)
{
	if (!rng_ok(len, off, 4))
		return false;
	*v = ld32(b + off);
	return true;
}

static inline bool rd64(const uint8_t *b, size_t len, uint64_t off, uint64_t *v)
{
	if (!rng_ok(len, off, 8))
		return false;
	*v = ld64(b + off);
	return true;
}

/* Unsigned LEB128 (at most 5 bytes, as dex uses); advances *off. */
static inline bool rd_uleb(const uint8_t *b, size_t len, uint64_t *off, uint32_t *v)
{
	uint32_t r = 0;
	for (unsigned i = 0; i < 5; i++) {
		if (*off >= len)
			return false;
		uint8_t c = b[(*off)++];
		r |= (uint32_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80)) {
			*v = r;
			return true;
		}
	}
	return false;
}

/* Length of the NUL-terminated string at off, or -1 when it runs off the end. */
static inline long str_at(const uint8_t *b, size_t len, uint64_t off)
{
	if (off >= len)
		return -1;
	for (uint64_t i = off; i < len; i++)
		if (!b[i])
			return (long)(i - off);
	return -1;
}

#endif
