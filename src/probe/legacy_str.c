#include "probe/legacy_str.h"

#include <stdint.h>
#include <string.h>

#include "common/utf8.h"
#include "records.h"

struct utf8_out {
	char *dst;
	size_t o, limit;          /* limit: bytes available before the final NUL */
};

/* Appends cp if it fits whole; false when it does not (the string ends). */
static bool put_cp(struct utf8_out *u, uint32_t cp)
{
	size_t len = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
	static const uint8_t lead[5] = { 0, 0x00, 0xC0, 0xE0, 0xF0 };

	if (u->o + len > u->limit)
		return false;
	for (size_t k = len; k-- > 1;) {
		u->dst[u->o + k] = (char)(0x80 | (cp & 0x3F));
		cp >>= 6;
	}
	u->dst[u->o] = (char)(lead[len] | cp);
	u->o += len;
	return true;
}

/* The same pairing as the BPF converter (bpf/ups_art.h, ups_put_unit). */
static bool put_unit(struct utf8_out *u, uint32_t *high, uint32_t c)
{
	if (*high) {
		uint32_t h = *high;
		*high = 0;
		if (c >= 0xDC00 && c <= 0xDFFF)
			return put_cp(u, 0x10000 + ((h - 0xD800) << 10) + (c - 0xDC00));
		if (!put_cp(u, 0xFFFD))
			return false;
	}
	if (c >= 0xD800 && c <= 0xDBFF) {
		*high = c;
		return true;
	}
	if (c >= 0xDC00 && c <= 0xDFFF)
		c = 0xFFFD;
	return put_cp(u, c);
}

bool legacy_str_fix(char *buf, size_t avail)
{
	const uint8_t *b = (const uint8_t *)buf;
	uint16_t units[256];
	size_t n, size;
	uint32_t high = 0;
	struct utf8_out u = { .dst = buf };

	if (avail < UPS_RAW_UTF16_HDR || b[0] != UPS_RAW_UTF16_TAG)
		return false;
	n = b[1];
	size = (size_t)b[2] | (size_t)b[3] << 8;
	if (size > avail || size < UPS_RAW_UTF16_HDR + 2 * n || n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		units[i] = (uint16_t)(b[UPS_RAW_UTF16_HDR + 2 * i] |
				      b[UPS_RAW_UTF16_HDR + 2 * i + 1] << 8);
	u.limit = size - 1;
	for (size_t i = 0; i < n; i++)
		if (!put_unit(&u, &high, units[i]))
			break;
	if (high)
		put_cp(&u, 0xFFFD);
	memset(buf + u.o, 0, size - u.o);
	return true;
}

size_t legacy_str_fix_record(char *rec, size_t size, const struct field *f, size_t n)
{
	size_t fixed = 0;

	for (size_t i = 0; i < n; i++) {
		uintptr_t p = (uintptr_t)f[i].v.str.ptr, r = (uintptr_t)rec;
		if (f[i].type != FIELD_STRING || p < r || p >= r + size)
			continue;
		fixed += legacy_str_fix(rec + (p - r), size - (p - r));
	}
	return fixed;
}

/* The code point of the valid UTF-8 sequence s[0..len). */
static uint32_t utf8_cp(const unsigned char *s, size_t len)
{
	static const uint8_t mask[5] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	uint32_t cp = s[0] & mask[len];

	for (size_t i = 1; i < len; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

bool legacy_str_raw_form(const char *utf8, char *out, size_t size)
{
	const unsigned char *s = (const unsigned char *)utf8;
	size_t len = strlen(utf8), max = size >= UPS_RAW_UTF16_HDR ? (size - UPS_RAW_UTF16_HDR) / 2
								     : 0, n = 0;
	bool compressible = true;

	if (max > 255)
		max = 255;
	memset(out, 0, size);
	for (size_t i = 0; i < len;) {
		size_t l = utf8_seq_len(s + i, len - i);
		uint32_t cp;
		uint16_t u[2];
		size_t nu = 1;

		if (!l)
			return false;
		cp = utf8_cp(s + i, l);
		i += l;
		compressible &= cp >= 1 && cp <= 0x7f;
		if (cp >= 0x10000) {
			u[0] = (uint16_t)(0xD800 + ((cp - 0x10000) >> 10));
			u[1] = (uint16_t)(0xDC00 + ((cp - 0x10000) & 0x3FF));
			nu = 2;
		} else {
			u[0] = (uint16_t)cp;
		}
		for (size_t k = 0; k < nu && n < max; k++, n++) {
			out[UPS_RAW_UTF16_HDR + 2 * n] = (char)(u[k] & 0xff);
			out[UPS_RAW_UTF16_HDR + 2 * n + 1] = (char)(u[k] >> 8);
		}
	}
	if (compressible || n == 0) {
		memset(out, 0, size);
		return false;
	}
	out[0] = (char)UPS_RAW_UTF16_TAG;
	out[1] = (char)n;
	out[2] = (char)(size & 0xff);
	out[3] = (char)(size >> 8);
	return true;
}
