/* sink_testutil.h — capturing sink output and checking it against the docs. */
#ifndef UPROBESTATS_TEST_SINK_TESTUTIL_H
#define UPROBESTATS_TEST_SINK_TESTUTIL_H

#include <stdio.h>

#include "json_check.h"

/* An in-memory FILE*; after fclose(cap.f) cap.buf holds the text. */
struct capture {
	FILE *f;
	char *buf;
	size_t len;
};
void cap_open(struct capture *c);
/* Closes the stream (if open) and returns the NUL-terminated text. */
const char *cap_text(struct capture *c);
void cap_free(struct capture *c);

/* docs/event.schema.json, parsed (path derived from this file's location). */
int load_schema(struct jc_doc *schema);
/* Validate every line of text; returns the number of lines, or -1 with why. */
int validate_lines(const struct jc_doc *schema, const char *text, char *why, size_t why_len);

#endif
