/* Decoder written from statsd-wire.md §1.1 (listener), §2 (types), §3 (parser
 * rules) and §4.1 (drop report); see statsd_decoder.h. */
#include "statsd_decoder.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

enum {
	T_INT32 = 0, T_INT64 = 1, T_STRING = 2, T_LIST = 3, T_FLOAT = 4, T_BOOL = 5,
	T_BYTES = 6, T_OBJECT = 7, T_KV = 8, T_CHAIN = 9,
};

struct cur {
	const uint8_t *p;
	size_t left;
	char *why;
	size_t why_len;
	bool bad;
};

static int fail(struct cur *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct cur *c, const char *fmt, ...)
{
	if (!c->bad && c->why && c->why_len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(c->why, c->why_len, fmt, ap);
		va_end(ap);
	}
	c->bad = true;
	return -1;
}

static bool take(struct cur *c, size_t n, const uint8_t **out)
{
	if (c->bad || n > c->left) {
		fail(c, "short buffer: need %zu bytes, %zu left", n, c->left);
		return false;
	}
	*out = c->p;
	c->p += n;
	c->left -= n;
	return true;
}

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static bool rd_u8(struct cur *c, uint8_t *v)
{
	const uint8_t *p;
	if (!take(c, 1, &p))
		return false;
	*v = p[0];
	return true;
}

static bool rd_i32(struct cur *c, int32_t *v)
{
	const uint8_t *p;
	if (!take(c, 4, &p))
		return false;
	*v = (int32_t)(uint32_t)le(p, 4);
	return true;
}

static bool rd_i64(struct cur *c, int64_t *v)
{
	const uint8_t *p;
	if (!take(c, 8, &p))
		return false;
	*v = (int64_t)le(p, 8);
	return true;
}

/* i32 length compared unsigned to what is left: a negative length fails. */
static bool rd_blob(struct cur *c, const uint8_t **data, size_t *len)
{
	int32_t n;
	if (!rd_i32(c, &n))
		return false;
	if ((uint32_t)n > c->left)
		return fail(c, "string/byte length %d exceeds the %zu bytes left", n, c->left),
		       false;
	*len = (uint32_t)n;
	return take(c, *len, data);
}

/* One raw value of a scalar type (list elements have no type byte). */
static bool rd_scalar(struct cur *c, uint8_t type, struct sd_field *f)
{
	int32_t i32;
	uint8_t b;

	switch (type) {
	case T_INT32:
		if (!rd_i32(c, &i32))
			return false;
		f->i64 = i32;
		return true;
	case T_INT64:
		return rd_i64(c, &f->i64);
	case T_FLOAT:
		if (!rd_i32(c, &i32))
			return false;
		memcpy(&f->f32, &i32, 4);
		return true;
	case T_BOOL:
		if (!rd_u8(c, &b))
			return false;
		f->i64 = b;
		return true;
	case T_STRING:
		return rd_blob(c, &f->data, &f->len);
	default:
		return fail(c, "type 0x%x is not a scalar", type), false;
	}
}

static bool rd_list(struct cur *c, struct sd_field *f)
{
	uint8_t n, et;
	const uint8_t *start;
	struct sd_field tmp;

	if (!rd_u8(c, &n) || !rd_u8(c, &et))
		return false;
	if (n > 127)
		return fail(c, "list of %u elements (max 127)", n), false;
	if (et != T_INT32 && et != T_INT64 && et != T_FLOAT && et != T_BOOL && et != T_STRING)
		return fail(c, "list element type 0x%x not allowed", et), false;
	f->count = n;
	f->elem_type = et;
	start = c->p;
	for (unsigned i = 0; i < n; i++)
		if (!rd_scalar(c, et, &tmp))
			return false;
	f->data = start;
	f->len = (size_t)(c->p - start);
	return true;
}

static bool rd_chain(struct cur *c, struct sd_field *f)
{
	uint8_t n;
	int32_t uid;
	const uint8_t *start, *d;
	size_t l;

	if (!rd_u8(c, &n))
		return false;
	if (n == 0 || n > 127)
		return fail(c, "attribution chain of %u nodes (1..127)", n), false;
	f->count = n;
	start = c->p;
	for (unsigned i = 0; i < n; i++)
		if (!rd_i32(c, &uid) || !rd_blob(c, &d, &l))
			return false;
	f->data = start;
	f->len = (size_t)(c->p - start);
	return true;
}

static bool rd_kv(struct cur *c, struct sd_field *f)
{
	uint8_t n, t;
	int32_t key;
	const uint8_t *start;
	struct sd_field tmp;

	if (!rd_u8(c, &n))
		return false;
	f->count = n;
	start = c->p;
	for (unsigned i = 0; i < n; i++) {
		if (!rd_i32(c, &key) || !rd_u8(c, &t))
			return false;
		t &= 0x0f;
		if (t != T_INT32 && t != T_INT64 && t != T_STRING && t != T_FLOAT)
			return fail(c, "key-value pair %u: value type 0x%x", i, t), false;
		if (!rd_scalar(c, t, &tmp))
			return false;
	}
	f->data = start;
	f->len = (size_t)(c->p - start);
	return true;
}

/* §3 rule 8.  `f` is NULL for atom-level annotations. */
static bool check_annotation(struct cur *c, const struct sd_annotation *a,
			     const struct sd_field *f)
{
	bool is_list = f && f->type == T_LIST;
	bool int32_field = f && f->type == T_INT32;
	uint8_t want = T_BOOL;

	if (a->id == 7 || a->id == 9)
		want = T_INT32;
	if (a->type != want)
		return fail(c, "annotation %u: value type 0x%x, expected 0x%x", a->id, a->type,
			    want), false;
	switch (a->id) {
	case 1: /* IS_UID */
		if (!f || !(int32_field || (is_list && f->elem_type == T_INT32)))
			return fail(c, "IS_UID not after an int32 field or int32 list"), false;
		return true;
	case 2: /* TRUNCATE_TIMESTAMP */
	case 9: /* RESTRICTION_CATEGORY */
		if (f)
			return fail(c, "annotation %u is atom-level only", a->id), false;
		if (a->id == 9 && (a->value < 1 || a->value > 4))
			return fail(c, "RESTRICTION_CATEGORY %d not in 1..4", a->value), false;
		return true;
	case 3: /* PRIMARY_FIELD */
		if (!f || is_list || f->type == T_CHAIN)
			return fail(c, "PRIMARY_FIELD not after a plain field"), false;
		return true;
	case 4: /* EXCLUSIVE_STATE */
	case 7: /* TRIGGER_STATE_RESET */
	case 8: /* STATE_NESTED */
		if (!int32_field)
			return fail(c, "annotation %u not after an int32 field", a->id), false;
		return true;
	case 5: /* PRIMARY_FIELD_FIRST_UID */
		if (!f || f->type != T_CHAIN)
			return fail(c, "PRIMARY_FIELD_FIRST_UID not on an attribution chain"),
			       false;
		return true;
	default:
		if (a->id >= 10 && a->id <= 18) { /* FIELD_RESTRICTION_* */
			if (!f)
				return fail(c, "annotation %u is field-level", a->id), false;
			return true;
		}
		return fail(c, "unknown annotation id %u", a->id), false;
	}
}

static bool rd_annotations(struct cur *c, size_t n, struct sd_annotation *out,
			   const struct sd_field *f)
{
	for (size_t i = 0; i < n; i++) {
		struct sd_annotation *a = &out[i];
		uint8_t v8;

		if (!rd_u8(c, &a->id) || !rd_u8(c, &a->type))
			return false;
		if (a->type == T_BOOL) {
			if (!rd_u8(c, &v8))
				return false;
			a->value = v8;
		} else if (a->type == T_INT32) {
			if (!rd_i32(c, &a->value))
				return false;
		} else {
			return fail(c, "annotation %u: bad value type 0x%x", a->id, a->type), false;
		}
		if (!check_annotation(c, a, f))
			return false;
	}
	return true;
}

static bool rd_field(struct cur *c, size_t idx, struct sd_field *f)
{
	uint8_t tb;

	memset(f, 0, sizeof(*f));
	if (!rd_u8(c, &tb))
		return false;
	f->type = tb & 0x0f;
	f->n_ann = tb >> 4;
	switch (f->type) {
	case T_INT32: case T_INT64: case T_FLOAT: case T_BOOL: case T_STRING:
		if (!rd_scalar(c, f->type, f))
			return false;
		break;
	case T_BYTES:
		if (!rd_blob(c, &f->data, &f->len))
			return false;
		break;
	case T_LIST:
		if (!rd_list(c, f))
			return false;
		break;
	case T_CHAIN:
		if (!rd_chain(c, f))
			return false;
		break;
	case T_KV:
		if (!rd_kv(c, f))
			return false;
		break;
	default:
		return fail(c, "field %zu: type 0x%x not allowed at top level", idx + 1, f->type),
		       false;
	}
	return rd_annotations(c, f->n_ann, f->ann, f);
}

int sd_decode_event(const uint8_t *p, size_t n, struct sd_datagram *out, char *why,
		    size_t why_len)
{
	struct cur c = { .p = p, .left = n, .why = why, .why_len = why_len };
	uint8_t b0, count, tb;
	int64_t ts;
	int32_t id;

	out->kind = SD_ATOM;
	if (!rd_u8(&c, &b0) || !rd_u8(&c, &count))
		return -1;
	if ((b0 & 0x0f) != T_OBJECT)
		return fail(&c, "byte 0 is 0x%02x, not OBJECT", b0);
	if (count < 2 || count > 127)
		return fail(&c, "element count %u not in 2..127", count);
	if (!rd_u8(&c, &tb))
		return -1;
	if ((tb & 0x0f) != T_INT64)
		return fail(&c, "timestamp type byte 0x%02x is not INT64", tb);
	if (!rd_i64(&c, &ts))
		return -1;
	out->timestamp_ns = (uint64_t)ts;
	if (!rd_u8(&c, &tb))
		return -1;
	if ((tb & 0x0f) != T_INT32)
		return fail(&c, "atom id type byte 0x%02x is not INT32", tb);
	if (!rd_i32(&c, &id))
		return -1;
	out->atom_id = id;
	out->n_atom_ann = tb >> 4;
	if (!rd_annotations(&c, out->n_atom_ann, out->atom_ann, NULL))
		return -1;
	out->n_fields = (size_t)count - 2;
	for (size_t i = 0; i < out->n_fields; i++)
		if (!rd_field(&c, i, &out->fields[i]))
			return -1;
	if (c.left != 0)
		return fail(&c, "%zu trailing bytes after the last field", c.left);
	return 0;
}

int sd_decode_datagram(const uint8_t *p, size_t n, struct sd_datagram *out, char *why,
		       size_t why_len)
{
	struct cur c = { .p = p, .left = n, .why = why, .why_len = why_len };

	memset(out, 0, offsetof(struct sd_datagram, fields));
	if (n <= 11 + 4)
		return fail(&c, "datagram of %zu bytes is ignored (need > 15)", n);
	out->log_id = p[0];
	out->tid = (uint16_t)le(p + 1, 2);
	out->rt_sec = (uint32_t)le(p + 3, 4);
	out->rt_nsec = (uint32_t)le(p + 7, 4);
	if (n - 11 == 13 && p[11 + 4] == 1) {
		out->kind = SD_DROP_REPORT;
		out->drop_error = (int32_t)(uint32_t)le(p + 11, 4);
		uint64_t data = le(p + 16, 8);
		out->drop_atom_id = (int32_t)(uint32_t)(data >> 32);
		out->drop_count = (int32_t)(uint32_t)data;
		return 0;
	}
	out->magic = (uint32_t)le(p + 11, 4);
	if (out->magic != 1937006964u)
		return fail(&c, "magic 0x%08x is not 1937006964", out->magic);
	return sd_decode_event(p + 15, n - 15, out, why, why_len);
}

int64_t sd_list_int(const struct sd_field *f, size_t i)
{
	if (f->elem_type == T_INT32)
		return (int32_t)(uint32_t)le(f->data + 4 * i, 4);
	return (int64_t)le(f->data + 8 * i, 8);
}
