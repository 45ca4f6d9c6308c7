/* fields.h — building the named, typed fields that decoders and atom
 * mappings hand to the sinks, with record strings read defensively: a
 * fixed-size char field of a record is bounded by its size, ends at its first
 * NUL, and is cut before the first byte that is not valid UTF-8. */
#ifndef UPROBESTATS_CATALOG_FIELDS_H
#define UPROBESTATS_CATALOG_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vocab/event.h"

struct fields_out {
	struct field *f;
	bool *is_uid;             /* optional: per-field IS_UID annotation */
	size_t n, max;
};

/* Length of the string in buf[size]: up to the first NUL (or size).  Bytes
 * that are not valid UTF-8 are kept (never cut: names that differ there stay
 * distinct); every output shows each as one unit (U+FFFD in JSON, the JSON
 * and Perfetto traces and statsd, \xNN in text and systrace):
 * docs/json-schema.md, "string". */
size_t fields_str_len(const char *buf, size_t size);

/* Each appends one field when there is room (silently nothing otherwise:
 * max is sized for the largest record). */
void fields_i32(struct fields_out *o, const char *name, int32_t v);
void fields_i64(struct fields_out *o, const char *name, int64_t v);
void fields_u64(struct fields_out *o, const char *name, uint64_t v);
void fields_bool(struct fields_out *o, const char *name, bool v);
void fields_str(struct fields_out *o, const char *name, const char *buf, size_t size);
/* The char-array member `member` of payload type T, read in place: the
 * payload outlives the fields, a local copy of it would not. */
#define FIELDS_STR_MEMBER(o, name, payload, T, member) \
	fields_str((o), (name), (const char *)(payload) + offsetof(T, member), \
		   sizeof(((T *)0)->member))

/* An Int32 field carrying the IS_UID annotation. */
void fields_uid(struct fields_out *o, const char *name, int32_t v);

#endif
