/* json_check.h — test-only: a strict JSON parser (RFC 8259: UTF-8 checked,
 * no trailing commas, depth-limited) into a flat node array, and a validator
 * for the JSON Schema subset docs/event.schema.json uses: type, const, enum,
 * required, properties, additionalProperties, items, oneOf, $ref (#/$defs/..),
 * minimum. */
#ifndef UPROBESTATS_TEST_JSON_CHECK_H
#define UPROBESTATS_TEST_JSON_CHECK_H

#include <stdbool.h>
#include <stddef.h>

enum jc_type { JC_NULL, JC_BOOL, JC_NUMBER, JC_STRING, JC_ARRAY, JC_OBJECT };

struct jc_node {
	enum jc_type type;
	int parent;
	int next;          /* next sibling, -1 at the end */
	int child;         /* first child (arrays, objects), -1 if none */
	const char *key;   /* raw key of an object member (points into the text) */
	size_t key_len;
	const char *str;   /* raw string body / number text */
	size_t str_len;
	bool b;
	double num;
	bool is_int;
};

struct jc_doc {
	struct jc_node *nodes;
	int n, cap;
	char why[256];
};

/* Parse text[0..n) as exactly one JSON value.  0 or -1 (why[] says where). */
int jc_parse(struct jc_doc *d, const char *text, size_t n);
void jc_free(struct jc_doc *d);
/* Member of object node `obj` named key, or -1. */
int jc_get(const struct jc_doc *d, int obj, const char *key);
/* Number of children of an array/object node. */
int jc_count(const struct jc_doc *d, int node);
/* Raw string equals s (no escapes in s). */
bool jc_str_eq(const struct jc_doc *d, int node, const char *s);

/* Validate node `at` of doc against the schema document's root.
 * 0 or -1 with why[] naming the failing path. */
int jc_validate(const struct jc_doc *schema, const struct jc_doc *doc, int at, char *why,
		size_t why_len);

#endif
