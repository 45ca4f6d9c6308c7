/* wire.h — protobuf wire primitives: bounds-checked readers over a byte
 * range, and a growable output buffer with the matching writers. */
#ifndef UPROBESTATS_COMMON_WIRE_H
#define UPROBESTATS_COMMON_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum wire_type {
	WT_VARINT = 0,
	WT_I64 = 1,
	WT_LEN = 2,
	WT_SGROUP = 3,
	WT_EGROUP = 4,
	WT_I32 = 5,
};

/* Reader results. */
#define WIRE_OK 0
#define WIRE_TRUNCATED 1     /* the value runs past end */
#define WIRE_OVERLONG 2      /* a varint of more than 10 bytes / 64 bits */

/* Each reads at b[*pos], never at or past b[end], and advances *pos. */
int wire_read_varint(const uint8_t *b, size_t end, size_t *pos, uint64_t *v);
int wire_read_fixed32(const uint8_t *b, size_t end, size_t *pos, uint32_t *v);
int wire_read_fixed64(const uint8_t *b, size_t end, size_t *pos, uint64_t *v);
/* A length prefix and the range it covers: *start = *pos after the prefix,
 * *pos = the end of the bytes. */
int wire_read_len(const uint8_t *b, size_t end, size_t *pos, size_t *start, size_t *len);

/* Step over one value of wire type wt (varint, fixed64, length-delimited or
 * fixed32); for length-delimited values *start and *len give the payload (when
 * non-NULL).  Returns WIRE_OK, WIRE_TRUNCATED, WIRE_OVERLONG, or
 * WIRE_BAD_TYPE for groups and invalid types. */
#define WIRE_BAD_TYPE 3
int wire_skip_value(const uint8_t *b, size_t end, size_t *pos, unsigned wt, size_t *start,
		    size_t *len);

const char *wire_type_name(unsigned wt);

static inline int64_t wire_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline uint64_t wire_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* An output buffer; on allocation failure 'oom' is set and writes stop. */
struct wire_buf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

void wire_buf_free(struct wire_buf *w);
void wire_put_bytes(struct wire_buf *w, const void *p, size_t n);
void wire_put_varint(struct wire_buf *w, uint64_t v);
void wire_put_fixed32(struct wire_buf *w, uint32_t v);
void wire_put_fixed64(struct wire_buf *w, uint64_t v);
void wire_put_tag(struct wire_buf *w, uint32_t num, enum wire_type wt);

/* Fields whole: a varint, a length-delimited string or bytes. */
void wire_put_uint_field(struct wire_buf *w, uint32_t num, uint64_t v);
void wire_put_len_field(struct wire_buf *w, uint32_t num, const void *p, size_t n);
/* A string field: s[0..n) with each invalid UTF-8 byte as U+FFFD (protobuf's
 * string is UTF-8; the one rule of every output). */
void wire_put_str_field(struct wire_buf *w, uint32_t num, const char *s, size_t n);
/* A nested message: wire_open writes the tag and a one-byte length in its
 * place and returns where it is; wire_close, after the message's fields,
 * makes that the real length (moving the fields when it takes more bytes).
 * Nesting is the caller's stack of positions. */
size_t wire_open(struct wire_buf *w, uint32_t num);
void wire_close(struct wire_buf *w, size_t at);

#endif
