/* vmjson.h — a small JSON reader for the VM runner: one JSON Lines record at a time,
 * parsed into a flat node array that points into the caller's text (nothing is
 * copied or unescaped; keys and the values the runner reads hold no escapes).
 * Written for the records uprobestats prints with --format json, independently of
 * its JSON writer. */
#ifndef UPS_VMJSON_H
#define UPS_VMJSON_H

#include <stdbool.h>
#include <stddef.h>

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jnode {
	enum jtype type;
	const char *s;    /* the value's text; strings without their quotes */
	size_t len;
	const char *key;  /* the member name inside an object, else NULL */
	size_t keylen;
	int child;        /* first element or member, -1 if none */
	int next;         /* next sibling, -1 if none */
};

struct jdoc {
	struct jnode *n;  /* n[0] is the root value */
	int count, cap;
};

/* Parses TEXT[0..LEN) (one value, whitespace around it allowed).  0 or -1; DOC may be
 * reused for the next line and is released with json_free(). */
int json_parse(struct jdoc *doc, const char *text, size_t len);
void json_free(struct jdoc *doc);

/* The member KEY of object OBJ, or NULL (also when OBJ is NULL or not an object). */
const struct jnode *json_get(const struct jdoc *doc, const struct jnode *obj, const char *key);
/* Element I of array ARR, or NULL. */
const struct jnode *json_at(const struct jdoc *doc, const struct jnode *arr, int i);
int json_count(const struct jdoc *doc, const struct jnode *arr);
/* A string value equal to S. */
bool json_str_is(const struct jnode *n, const char *s);
/* A string value with its escapes decoded (\u escapes, surrogate pairs included, as
 * UTF-8) into BUF, NUL-terminated; its length, or -1 (not a string, bad escape, or
 * longer than SIZE - 1). */
long json_str_decode(const struct jnode *n, char *buf, size_t size);
/* An integer: a JSON number, or a string "0x..." (how uprobestats prints registers);
 * negative numbers as their 64-bit two's complement.  0 or -1. */
int json_u64(const struct jnode *n, unsigned long long *out);

#endif
