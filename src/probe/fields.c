#include "probe/fields.h"

#include <string.h>

/* Bytes in the UTF-8 sequence starting at s[0..n), or 0 when it is not a
 * valid, shortest-form, non-surrogate sequence. */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF) {
		len = 2;
		cp = c & 0x1F;
	} else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		cp = c & 0x0F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3F);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
		return 0;
	return len;
}

size_t fields_str_len(const char *buf, size_t size)
{
	const unsigned char *s = (const unsigned char *)buf;
	size_t end = 0, i = 0;

	while (end < size && s[end])
		end++;
	while (i < end) {
		size_t l = utf8_seq_len(s + i, end - i);
		if (!l)
			break;
		i += l;
	}
	return i;
}

static struct field *next(struct fields_out *o)
{
	if (o->n >= o->max)
		return NULL;
	if (o->is_uid)
		o->is_uid[o->n] = false;
	return &o->f[o->n++];
}

void fields_i32(struct fields_out *o, const char *name, int32_t v)
{
	struct field *f = next(o);
	if (f)
		*f = (struct field){ .name = name, .type = FIELD_INT32, .v.i32 = v };
}

void fields_i64(struct fields_out *o, const char *name, int64_t v)
{
	struct field *f = next(o);
	if (f)
		*f = (struct field){ .name = name, .type = FIELD_INT64, .v.i64 = v };
}

void fields_u64(struct fields_out *o, const char *name, uint64_t v)
{
	struct field *f = next(o);
	if (f)
		*f = (struct field){ .name = name, .type = FIELD_UINT64, .v.u64 = v };
}

void fields_bool(struct fields_out *o, const char *name, bool v)
{
	struct field *f = next(o);
	if (f)
		*f = (struct field){ .name = name, .type = FIELD_BOOL, .v.b = v };
}

void fields_str(struct fields_out *o, const char *name, const char *buf, size_t size)
{
	struct field *f = next(o);
	if (f)
		*f = (struct field){ .name = name, .type = FIELD_STRING,
				     .v.str = { buf, (uint32_t)fields_str_len(buf, size) } };
}

void fields_uid(struct fields_out *o, const char *name, int32_t v)
{
	size_t before = o->n;

	fields_i32(o, name, v);
	if (o->is_uid && o->n > before)
		o->is_uid[o->n - 1] = true;
}
