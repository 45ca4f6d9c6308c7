/* wire.c — see wire.h. */
#include "common/wire.h"

#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/utf8.h"

int wire_read_varint(const uint8_t *b, size_t end, size_t *pos, uint64_t *v)
{
	uint64_t r = 0;

	for (unsigned i = 0; i < 10; i++) {
		uint8_t c;
		if (*pos >= end)
			return WIRE_TRUNCATED;
		c = b[(*pos)++];
		/* The 10th byte may only hold bit 63. */
		if (i == 9 && c > 1)
			return WIRE_OVERLONG;
		r |= (uint64_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80)) {
			*v = r;
			return WIRE_OK;
		}
	}
	return WIRE_OVERLONG;
}

int wire_read_fixed32(const uint8_t *b, size_t end, size_t *pos, uint32_t *v)
{
	uint32_t r = 0;

	if (*pos > end || end - *pos < 4)
		return WIRE_TRUNCATED;
	for (unsigned i = 0; i < 4; i++)
		r |= (uint32_t)b[*pos + i] << (8 * i);
	*pos += 4;
	*v = r;
	return WIRE_OK;
}

int wire_read_fixed64(const uint8_t *b, size_t end, size_t *pos, uint64_t *v)
{
	uint64_t r = 0;

	if (*pos > end || end - *pos < 8)
		return WIRE_TRUNCATED;
	for (unsigned i = 0; i < 8; i++)
		r |= (uint64_t)b[*pos + i] << (8 * i);
	*pos += 8;
	*v = r;
	return WIRE_OK;
}

int wire_read_len(const uint8_t *b, size_t end, size_t *pos, size_t *start, size_t *len)
{
	uint64_t n;
	int rc = wire_read_varint(b, end, pos, &n);

	if (rc)
		return rc;
	if (n > end - *pos)
		return WIRE_TRUNCATED;
	*start = *pos;
	*len = (size_t)n;
	*pos += (size_t)n;
	return WIRE_OK;
}

int wire_skip_value(const uint8_t *b, size_t end, size_t *pos, unsigned wt, size_t *start,
		    size_t *len)
{
	uint64_t v;
	uint32_t v32;
	size_t s, n;
	int rc;

	switch (wt) {
	case WT_VARINT:
		return wire_read_varint(b, end, pos, &v);
	case WT_I64:
		return wire_read_fixed64(b, end, pos, &v);
	case WT_I32:
		return wire_read_fixed32(b, end, pos, &v32);
	case WT_LEN:
		rc = wire_read_len(b, end, pos, &s, &n);
		if (rc == WIRE_OK && start)
			*start = s;
		if (rc == WIRE_OK && len)
			*len = n;
		return rc;
	default:
		return WIRE_BAD_TYPE;
	}
}

const char *wire_type_name(unsigned wt)
{
	static const char *const names[] = {
		"varint", "fixed64", "length-delimited", "start-group", "end-group", "fixed32",
	};
	return wt < 6 ? names[wt] : "invalid";
}

static bool reserve(struct wire_buf *w, size_t n)
{
	if (w->oom)
		return false;
	if (n <= w->cap - w->len)
		return true;
	if (n > SIZE_MAX - w->len || grow_array(&w->p, &w->cap, w->len + n, 256) < 0) {
		w->oom = true;
		return false;
	}
	return true;
}

void wire_buf_free(struct wire_buf *w)
{
	free(w->p);
	memset(w, 0, sizeof(*w));
}

void wire_put_bytes(struct wire_buf *w, const void *p, size_t n)
{
	if (n && reserve(w, n)) {
		memcpy(w->p + w->len, p, n);
		w->len += n;
	}
}

void wire_put_varint(struct wire_buf *w, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	do {
		b[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			b[n] |= 0x80;
		n++;
	} while (v);
	wire_put_bytes(w, b, n);
}

void wire_put_fixed32(struct wire_buf *w, uint32_t v)
{
	uint8_t b[4];

	for (unsigned i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	wire_put_bytes(w, b, 4);
}

void wire_put_fixed64(struct wire_buf *w, uint64_t v)
{
	uint8_t b[8];

	for (unsigned i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	wire_put_bytes(w, b, 8);
}

void wire_put_tag(struct wire_buf *w, uint32_t num, enum wire_type wt)
{
	wire_put_varint(w, ((uint64_t)num << 3) | (uint64_t)wt);
}

void wire_put_uint_field(struct wire_buf *w, uint32_t num, uint64_t v)
{
	wire_put_tag(w, num, WT_VARINT);
	wire_put_varint(w, v);
}

void wire_put_len_field(struct wire_buf *w, uint32_t num, const void *p, size_t n)
{
	wire_put_tag(w, num, WT_LEN);
	wire_put_varint(w, n);
	wire_put_bytes(w, p, n);
}

void wire_put_str_field(struct wire_buf *w, uint32_t num, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t m = utf8_repaired_len(u, n);

	if (m == n) {
		wire_put_len_field(w, num, s, n);
		return;
	}
	wire_put_tag(w, num, WT_LEN);
	wire_put_varint(w, m);
	if (reserve(w, m))
		w->len = (size_t)(utf8_repair(w->p + w->len, u, n) - w->p);
}

size_t wire_open(struct wire_buf *w, uint32_t num)
{
	wire_put_tag(w, num, WT_LEN);
	wire_put_bytes(w, "", 1);
	return w->len - 1;
}

void wire_close(struct wire_buf *w, size_t at)
{
	size_t n, k = 1;

	if (w->oom || at >= w->len)
		return;
	n = w->len - at - 1;
	for (uint64_t v = n >> 7; v; v >>= 7)
		k++;
	if (k > 1) {
		if (!reserve(w, k - 1))
			return;
		memmove(w->p + at + k, w->p + at + 1, n);
		w->len += k - 1;
	}
	for (size_t i = 0; i < k; i++)
		w->p[at + i] = (uint8_t)(((n >> (7 * i)) & 0x7f) | (i + 1 < k ? 0x80 : 0));
}
