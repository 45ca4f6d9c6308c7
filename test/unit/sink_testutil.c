#include "sink_testutil.h"

#include <stdlib.h>
#include <string.h>

void cap_open(struct capture *c)
{
	memset(c, 0, sizeof(*c));
	c->f = open_memstream(&c->buf, &c->len);
}

const char *cap_text(struct capture *c)
{
	if (c->f) {
		fclose(c->f);
		c->f = NULL;
	}
	return c->buf ? c->buf : "";
}

void cap_free(struct capture *c)
{
	cap_text(c);
	free(c->buf);
	c->buf = NULL;
}

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)len + 1);
	if (buf && fread(buf, 1, (size_t)len, f) == (size_t)len) {
		buf[len] = 0;
		*n = (size_t)len;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

int load_schema(struct jc_doc *schema)
{
	/* __FILE__ is <top>/test/unit/sink_testutil.c (the Makefile passes absolute paths) */
	static char text_path[4096];
	static char *text;
	static size_t n;
	const char *me = __FILE__, *cut = strstr(me, "test/unit/");

	if (!text) {
		snprintf(text_path, sizeof(text_path), "%.*sdocs/event.schema.json",
			 cut ? (int)(cut - me) : 0, me);
		text = slurp(text_path, &n);
		if (!text)
			return -1;
	}
	return jc_parse(schema, text, n);
}

int validate_lines(const struct jc_doc *schema, const char *text, char *why, size_t why_len)
{
	int lines = 0;

	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text);
		struct jc_doc d;
		if (jc_parse(&d, text, len) < 0) {
			snprintf(why, why_len, "line %d: %s", lines + 1, d.why);
			jc_free(&d);
			return -1;
		}
		char sub[256];
		if (jc_validate(schema, &d, 0, sub, sizeof(sub)) < 0) {
			snprintf(why, why_len, "line %d: %s", lines + 1, sub);
			jc_free(&d);
			return -1;
		}
		jc_free(&d);
		lines++;
		text += len + (nl ? 1 : 0);
	}
	return lines;
}
