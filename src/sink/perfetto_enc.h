/* perfetto_enc.h — protobuf fields written straight into memory the caller
 * has made room for (the worst case of the message first), inline and
 * unchecked: the per-event path of the Perfetto writer, where a call per
 * field and a memcpy per few bytes cost more than the event's bytes.
 * Nested messages take a one-byte length (pe_open) that pe_close widens,
 * moving the message, when it turned out 128 bytes or more: the caller's
 * room counts PE_NEST_MAX per nested message for that. */
#ifndef UPROBESTATS_SINK_PERFETTO_ENC_H
#define UPROBESTATS_SINK_PERFETTO_ENC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/utf8.h"
#include "common/wire.h"
#include "vocab/fmt_fast.h"

#define PE_VARINT_MAX 10
#define PE_FIELD_MAX (5 + PE_VARINT_MAX)  /* a tag and a varint */
#define PE_NEST_MAX (5 + 5)               /* a tag and a length of up to 4 GiB */

static inline size_t pe_varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline uint8_t *pe_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* Field numbers below 16 take one byte of tag. */
static inline uint8_t *pe_tag(uint8_t *p, uint32_t num, enum wire_type wt)
{
	return pe_varint(p, ((uint64_t)num << 3) | (uint64_t)wt);
}

static inline uint8_t *pe_uint(uint8_t *p, uint32_t num, uint64_t v)
{
	return pe_varint(pe_tag(p, num, WT_VARINT), v);
}

static inline uint8_t *pe_bytes(uint8_t *p, uint32_t num, const void *s, size_t n)
{
	p = pe_varint(pe_tag(p, num, WT_LEN), n);
	return (uint8_t *)fmt_copy((char *)p, s, n);
}

/* A string field: each invalid UTF-8 byte as U+FFFD, so its room is
 * PE_STR_ROOM(n), not n. */
#define PE_STR_ROOM(n) (3 * (size_t)(n))

static inline uint8_t *pe_str(uint8_t *p, uint32_t num, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t m = utf8_repaired_len(u, n);

	if (m == n)
		return pe_bytes(p, num, s, n);
	p = pe_varint(pe_tag(p, num, WT_LEN), m);
	return utf8_repair(p, u, n);
}

static inline uint8_t *pe_fixed64(uint8_t *p, uint32_t num, uint64_t v)
{
	p = pe_tag(p, num, WT_I64);
	for (unsigned i = 0; i < 8; i++)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

/* A nested message's tag and its length's one byte (at *at). */
static inline uint8_t *pe_open(uint8_t *p, uint32_t num, uint8_t **at)
{
	p = pe_tag(p, num, WT_LEN);
	*at = p;
	return p + 1;
}

/* The message from at to end closed: its length at at; the new end. */
static inline uint8_t *pe_close(uint8_t *at, uint8_t *end)
{
	size_t n = (size_t)(end - at - 1);

	if (n < 0x80) {
		*at = (uint8_t)n;
		return end;
	}
	size_t k = pe_varint_len(n);
	memmove(at + k, at + 1, n);
	pe_varint(at, n);
	return end + k - 1;
}

#endif
