#include "sink/statsd_encode.h"

#include <string.h>

#include "common/utf8.h"

#define POS_COUNT 1u
#define POS_ATOM_ID 11u  /* type byte of the atom-id field */
#define HEADER_END 16u   /* OBJECT, count, INT64 timestamp, INT32 atom id */

static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Append n raw bytes; past the push limit the event can only become the error
 * event, so record OVERFLOW and drop the bytes (libstatssocket keeps growing
 * its buffer and fails the same way at build time). */
static void append(struct statsd_event *ev, const void *p, size_t n)
{
	if (ev->len > STATSD_MAX_EVENT || n > STATSD_MAX_EVENT - ev->len) {
		ev->errors |= STATSD_ERR_OVERFLOW;
		ev->len = STATSD_MAX_EVENT + 1; /* sticky: nothing fits any more */
		return;
	}
	if (n)
		memcpy(ev->buf + ev->len, p, n);
	ev->len += n;
}

static void append_byte(struct statsd_event *ev, uint8_t b)
{
	append(ev, &b, 1);
}

static void append_le(struct statsd_event *ev, uint64_t v, unsigned n)
{
	uint8_t tmp[8];

	put_le(tmp, v, n);
	append(ev, tmp, n);
}

static void append_float(struct statsd_event *ev, float f)
{
	uint32_t bits;

	memcpy(&bits, &f, sizeof(bits));
	append_le(ev, bits, 4);
}

/* strnlen() semantics on a counted string, capped at 50 KiB. */
static size_t string_len(struct statsd_event *ev, const char *s, size_t len)
{
	if (!s)
		return 0;
	const char *nul = memchr(s, '\0', len < STATSD_MAX_STRING ? len : STATSD_MAX_STRING);
	if (nul)
		return (size_t)(nul - s);
	if (len >= STATSD_MAX_STRING) {
		ev->errors |= STATSD_ERR_STRING_NOT_NULL_TERMINATED;
		return STATSD_MAX_STRING;
	}
	return len;
}

static void append_string(struct statsd_event *ev, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = string_len(ev, s, len), m = n ? utf8_repaired_len(u, n) : 0;

	append_le(ev, (uint32_t)m, 4);
	if (m == n) {
		append(ev, s, n);
		return;
	}
	for (size_t i = 0; i < n;) {
		size_t l = utf8_seq_len(u + i, n - i);
		append(ev, l ? s + i : "\xef\xbf\xbd", l ? l : 3);
		i += l ? l : 1;
	}
}

/* A NUL-terminated string (list elements, attribution tags). */
static void append_cstring(struct statsd_event *ev, const char *s)
{
	append_string(ev, s, s ? strnlen(s, STATSD_MAX_STRING) : 0);
}

static void start_field(struct statsd_event *ev, uint8_t type)
{
	ev->last_field_pos = ev->len;
	append_byte(ev, type);
	ev->n_elements++;
}

void statsd_event_init(struct statsd_event *ev, uint64_t boot_ns)
{
	ev->len = 0;
	ev->n_elements = 0;
	ev->errors = 0;
	ev->atom_id = 0;
	ev->last_field_pos = 0;
	append_byte(ev, STATSD_OBJECT);
	append_byte(ev, 0); /* element count, written by build */
	start_field(ev, STATSD_INT64);
	append_le(ev, boot_ns, 8);
}

void statsd_event_set_atom_id(struct statsd_event *ev, uint32_t atom_id)
{
	if (ev->atom_id != 0)
		return;
	if (ev->n_elements != 1) {
		ev->errors |= STATSD_ERR_ATOM_ID_INVALID_POSITION;
		return;
	}
	start_field(ev, STATSD_INT32);
	append_le(ev, atom_id, 4);
	ev->atom_id = atom_id;
}

void statsd_event_write_int32(struct statsd_event *ev, int32_t v)
{
	start_field(ev, STATSD_INT32);
	append_le(ev, (uint32_t)v, 4);
}

void statsd_event_write_int64(struct statsd_event *ev, int64_t v)
{
	start_field(ev, STATSD_INT64);
	append_le(ev, (uint64_t)v, 8);
}

void statsd_event_write_float(struct statsd_event *ev, float v)
{
	start_field(ev, STATSD_FLOAT);
	append_float(ev, v);
}

void statsd_event_write_bool(struct statsd_event *ev, bool v)
{
	start_field(ev, STATSD_BOOL);
	append_byte(ev, v ? 1 : 0);
}

void statsd_event_write_string(struct statsd_event *ev, const char *s, size_t len)
{
	start_field(ev, STATSD_STRING);
	append_string(ev, s, len);
}

void statsd_event_write_bytes(struct statsd_event *ev, const void *p, size_t len)
{
	start_field(ev, STATSD_BYTE_ARRAY);
	if (!p)
		len = 0;
	append_le(ev, (uint32_t)len, 4);
	append(ev, p, len);
}

/* A LIST field header: count and element type, no per-element type bytes. */
static bool start_list(struct statsd_event *ev, size_t n, uint8_t elem_type)
{
	if (n > STATSD_MAX_LIST) {
		ev->errors |= STATSD_ERR_LIST_TOO_LONG;
		return false;
	}
	start_field(ev, STATSD_LIST);
	append_byte(ev, (uint8_t)n);
	append_byte(ev, elem_type);
	return true;
}

void statsd_event_write_int32_list(struct statsd_event *ev, const int32_t *v, size_t n)
{
	if (start_list(ev, n, STATSD_INT32))
		for (size_t i = 0; i < n; i++)
			append_le(ev, (uint32_t)v[i], 4);
}

void statsd_event_write_int64_list(struct statsd_event *ev, const int64_t *v, size_t n)
{
	if (start_list(ev, n, STATSD_INT64))
		for (size_t i = 0; i < n; i++)
			append_le(ev, (uint64_t)v[i], 8);
}

void statsd_event_write_float_list(struct statsd_event *ev, const float *v, size_t n)
{
	if (start_list(ev, n, STATSD_FLOAT))
		for (size_t i = 0; i < n; i++)
			append_float(ev, v[i]);
}

void statsd_event_write_bool_list(struct statsd_event *ev, const bool *v, size_t n)
{
	if (start_list(ev, n, STATSD_BOOL))
		for (size_t i = 0; i < n; i++)
			append_byte(ev, v[i] ? 1 : 0);
}

void statsd_event_write_string_list(struct statsd_event *ev, const char *const *v, size_t n)
{
	if (start_list(ev, n, STATSD_STRING))
		for (size_t i = 0; i < n; i++)
			append_cstring(ev, v[i]);
}

void statsd_event_write_attribution_chain(struct statsd_event *ev, const uint32_t *uids,
					  const char *const *tags, size_t n)
{
	if (n > STATSD_MAX_LIST) {
		ev->errors |= STATSD_ERR_ATTRIBUTION_CHAIN_TOO_LONG;
		return;
	}
	start_field(ev, STATSD_ATTRIBUTION_CHAIN);
	append_byte(ev, (uint8_t)n);
	for (size_t i = 0; i < n; i++) {
		append_le(ev, uids[i], 4);
		append_cstring(ev, tags[i]);
	}
}

/* Bumps the annotated field's type-byte nibble, then appends id + value type. */
static bool start_annotation(struct statsd_event *ev, uint8_t id, uint8_t type)
{
	if (ev->n_elements < 2) {
		ev->errors |= STATSD_ERR_ANNOTATION_DOES_NOT_FOLLOW_FIELD;
		return false;
	}
	if (id > 127) {
		ev->errors |= STATSD_ERR_ANNOTATION_ID_TOO_LARGE;
		return false;
	}
	if (ev->last_field_pos >= STATSD_MAX_EVENT)
		return false; /* the field itself did not fit: already OVERFLOW */
	if ((ev->buf[ev->last_field_pos] >> 4) >= STATSD_MAX_ANNOTATIONS) {
		ev->errors |= STATSD_ERR_TOO_MANY_ANNOTATIONS;
		return false;
	}
	ev->buf[ev->last_field_pos] += 0x10;
	append_byte(ev, id);
	append_byte(ev, type);
	return true;
}

void statsd_event_add_bool_annotation(struct statsd_event *ev, uint8_t id, bool v)
{
	if (start_annotation(ev, id, STATSD_BOOL))
		append_byte(ev, v ? 1 : 0);
}

void statsd_event_add_int32_annotation(struct statsd_event *ev, uint8_t id, int32_t v)
{
	if (start_annotation(ev, id, STATSD_INT32))
		append_le(ev, (uint32_t)v, 4);
}

size_t statsd_event_build(struct statsd_event *ev)
{
	if (ev->n_elements > STATSD_MAX_ELEMENTS)
		ev->errors |= STATSD_ERR_TOO_MANY_FIELDS;
	if (ev->atom_id == 0)
		ev->errors |= STATSD_ERR_NO_ATOM_ID;
	if (ev->len > STATSD_MAX_EVENT)
		ev->errors |= STATSD_ERR_OVERFLOW;
	if (ev->errors) {
		/* Keep timestamp and whatever sits in the atom-id slot, drop its
		 * annotations and every field, append the ERROR field. */
		ev->n_elements = 2;
		ev->buf[POS_ATOM_ID] = STATSD_INT32;
		ev->len = HEADER_END;
		start_field(ev, STATSD_ERROR);
		append_le(ev, ev->errors, 4);
	}
	ev->buf[POS_COUNT] = (uint8_t)ev->n_elements;
	return ev->len;
}

static void encode_field(struct statsd_event *ev, const struct field *f)
{
	switch (f->type) {
	case FIELD_INT32:
		statsd_event_write_int32(ev, f->v.i32);
		break;
	case FIELD_INT64:
		statsd_event_write_int64(ev, f->v.i64);
		break;
	case FIELD_UINT64:
		statsd_event_write_int64(ev, (int64_t)f->v.u64);
		break;
	case FIELD_BOOL:
		statsd_event_write_bool(ev, f->v.b);
		break;
	case FIELD_STRING:
		statsd_event_write_string(ev, f->v.str.ptr, f->v.str.ptr ? f->v.str.len : 0);
		break;
	case FIELD_BYTES:
		statsd_event_write_bytes(ev, f->v.str.ptr, f->v.str.len);
		break;
	case FIELD_FLOAT:
		statsd_event_write_float(ev, f->v.f);
		break;
	case FIELD_INT32_LIST:
		statsd_event_write_int32_list(ev, f->v.i32s.ptr, f->v.i32s.n);
		break;
	case FIELD_INT64_LIST:
		statsd_event_write_int64_list(ev, f->v.i64s.ptr, f->v.i64s.n);
		break;
	default:
		ev->errors |= STATSD_ERR_INVALID_VALUE_TYPE;
		break;
	}
}

uint32_t statsd_encode_atom(struct statsd_event *ev, const struct atom *a)
{
	statsd_event_init(ev, a->boot_ns);
	statsd_event_set_atom_id(ev, (uint32_t)a->atom_id);
	for (size_t i = 0; i < a->n_fields; i++) {
		encode_field(ev, &a->fields[i]);
		if (a->is_uid && a->is_uid[i])
			statsd_event_add_bool_annotation(ev, STATSD_ANN_IS_UID, true);
	}
	statsd_event_build(ev);
	return ev->errors;
}

static void put_header(uint8_t *out, uint32_t tid, struct timespec rt)
{
	out[0] = STATSD_LOG_ID_STATS;
	put_le(out + 1, (uint16_t)tid, 2);
	put_le(out + 3, (uint32_t)rt.tv_sec, 4);
	put_le(out + 7, (uint32_t)rt.tv_nsec, 4);
}

void statsd_frame(uint8_t out[STATSD_FRAME_LEN], uint32_t tid, struct timespec realtime)
{
	put_header(out, tid, realtime);
	put_le(out + STATSD_HEADER_LEN, STATSD_MAGIC, 4);
}

void statsd_drop_datagram(uint8_t out[STATSD_DROP_LEN], uint32_t tid, struct timespec realtime,
			  int32_t last_error, int32_t last_atom_id, int32_t dropped)
{
	put_header(out, tid, realtime);
	put_le(out + 11, (uint32_t)last_error, 4);
	out[15] = 1; /* EVENT_TYPE_LONG */
	put_le(out + 16, ((uint64_t)(uint32_t)last_atom_id << 32) | (uint32_t)dropped, 8);
}
