/* json_out.h — a small streaming JSON writer over an outbuf.
 *
 * Owns: commas and nesting (objects/arrays up to JSON_MAX_DEPTH deep), string
 * escaping (", \, control characters as \n \t ... or \u00XX, U+2028/U+2029
 * escaped, invalid UTF-8 replaced byte by byte with \ufffd so the output is
 * always valid UTF-8 JSON), numbers (integers exact; floats with 9 significant
 * digits, non-finite floats as null).  No allocation. */
#ifndef UPROBESTATS_VOCAB_JSON_OUT_H
#define UPROBESTATS_VOCAB_JSON_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vocab/outbuf.h"

#define JSON_MAX_DEPTH 16

struct json_out {
	struct outbuf *o;
	unsigned depth;
	bool need_comma[JSON_MAX_DEPTH + 1];
	bool after_key;
};

void json_init(struct json_out *j, struct outbuf *o);

void json_object_begin(struct json_out *j);
void json_object_end(struct json_out *j);
void json_array_begin(struct json_out *j);
void json_array_end(struct json_out *j);
/* Inside an object: the next value's name. */
void json_key(struct json_out *j, const char *key);

void json_string(struct json_out *j, const char *s, size_t n);
void json_cstring(struct json_out *j, const char *s); /* NULL -> null */
void json_i64(struct json_out *j, int64_t v);
void json_u64(struct json_out *j, uint64_t v);
void json_hex(struct json_out *j, uint64_t v);        /* "0x1a2" string */
void json_bool(struct json_out *j, bool v);
void json_null(struct json_out *j);
void json_double(struct json_out *j, double v);
/* A pre-formatted number or literal, written as is (caller guarantees JSON). */
void json_raw(struct json_out *j, const char *s, size_t n);
/* Bytes as a lowercase hex string. */
void json_hexbytes(struct json_out *j, const uint8_t *p, size_t n);

/* A quoted, escaped string straight to a stdio stream (NULL as ""), for the
 * commands that print JSON with stdio: the same bytes json_string writes. */
void json_fput_string(FILE *f, const char *s);

/* End a top-level value with '\n' (JSON Lines) and start the next fresh. */
void json_newline(struct json_out *j);

/* Escaped string body only (no quotes): for callers composing a string. */
void json_escape(struct outbuf *o, const char *s, size_t n);
/* The same into memory with room for JSON_ESCAPE_MAX(n) bytes; returns the
 * end of what it wrote. */
#define JSON_ESCAPE_MAX(n) (6 * (size_t)(n))
char *json_escape_into(char *out, const char *s, size_t n);

#endif
