#include "vocab/json_out.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/utf8.h"
#include "vocab/fmt_fast.h"

void json_init(struct json_out *j, struct outbuf *o)
{
	memset(j, 0, sizeof(*j));
	j->o = o;
}

/* Separator before a value: a comma between siblings, nothing after a key. */
static void before_value(struct json_out *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->need_comma[j->depth])
		outbuf_putc(j->o, ',');
	j->need_comma[j->depth] = true;
}

static void open_scope(struct json_out *j, char c)
{
	before_value(j);
	outbuf_putc(j->o, c);
	if (j->depth < JSON_MAX_DEPTH)
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void close_scope(struct json_out *j, char c)
{
	outbuf_putc(j->o, c);
	if (j->depth > 0)
		j->depth--;
}

void json_object_begin(struct json_out *j)
{
	open_scope(j, '{');
}

void json_object_end(struct json_out *j)
{
	close_scope(j, '}');
}

void json_array_begin(struct json_out *j)
{
	open_scope(j, '[');
}

void json_array_end(struct json_out *j)
{
	close_scope(j, ']');
}

static bool needs_escape(unsigned char c);

void json_key(struct json_out *j, const char *key)
{
	size_t n = strlen(key);
	size_t i = 0;

	before_value(j);
	outbuf_putc(j->o, '"');
	/* Keys are the program's own identifiers: copied as they are unless one
	 * ever needs escaping (checked, not assumed). */
	while (i < n && !needs_escape((unsigned char)key[i]))
		i++;
	if (i == n)
		outbuf_put(j->o, key, n);
	else
		json_escape(j->o, key, n);
	outbuf_put(j->o, "\":", 2);
	j->after_key = true;
}

static bool needs_escape(unsigned char c)
{
	return c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
}

/* One escaped ASCII byte (a quote, a backslash or a control character). */
static char *escape_ascii(char *o, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";

	switch (c) {
	case '"': return FMT_LIT(o, "\\\"");
	case '\\': return FMT_LIT(o, "\\\\");
	case '\n': return FMT_LIT(o, "\\n");
	case '\r': return FMT_LIT(o, "\\r");
	case '\t': return FMT_LIT(o, "\\t");
	case '\b': return FMT_LIT(o, "\\b");
	case '\f': return FMT_LIT(o, "\\f");
	default:
		o = FMT_LIT(o, "\\u00");
		*o++ = hex[c >> 4];
		*o++ = hex[c & 0xf];
		return o;
	}
}

char *json_escape_into(char *o, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run;

	while (i < n) {
		/* copy runs of plain ASCII in one go */
		for (run = i; i < n && !needs_escape(p[i]); i++)
			;
		o = fmt_copy(o, p + run, i - run);
		if (i >= n)
			break;
		if (p[i] < 0x80) {
			o = escape_ascii(o, p[i++]);
			continue;
		}
		size_t len = utf8_seq_len(p + i, n - i);
		if (len == 0) {
			o = FMT_LIT(o, "\\ufffd");
			i++;
		} else if (len == 3 && p[i] == 0xe2 && p[i + 1] == 0x80 &&
			   (p[i + 2] == 0xa8 || p[i + 2] == 0xa9)) {
			/* U+2028/2029 are valid JSON but break JavaScript eval */
			o = p[i + 2] == 0xa8 ? FMT_LIT(o, "\\u2028") : FMT_LIT(o, "\\u2029");
			i += 3;
		} else {
			o = fmt_copy(o, p + i, len);
			i += len;
		}
	}
	return o;
}

#define ESCAPE_CHUNK 512

/* Length a UTF-8 lead byte announces (1 for anything that cannot lead). */
static size_t utf8_lead_len(unsigned char c)
{
	if (c >= 0xc2 && c <= 0xdf)
		return 2;
	if (c >= 0xe0 && c <= 0xef)
		return 3;
	return c >= 0xf0 && c <= 0xf4 ? 4 : 1;
}

/* A prefix of s[0..n) of at most ESCAPE_CHUNK bytes that does not cut a
 * sequence its lead byte announces, so escaping chunk by chunk gives the
 * bytes one pass would. */
static size_t escape_chunk(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t k = n < ESCAPE_CHUNK ? n : ESCAPE_CHUNK;

	if (k == n || (p[k] & 0xc0) != 0x80)
		return k;
	for (size_t j = k - 1; j + 3 >= k && j > 0; j--) {
		if ((p[j] & 0xc0) != 0x80)
			return j + utf8_lead_len(p[j]) > k ? j : k;
	}
	return k;
}

void json_escape(struct outbuf *o, const char *s, size_t n)
{
	char tmp[JSON_ESCAPE_MAX(ESCAPE_CHUNK)];

	while (n) {
		size_t k = escape_chunk(s, n);
		char *p = outbuf_reserve(o, JSON_ESCAPE_MAX(k));
		if (p)
			outbuf_commit(o, json_escape_into(p, s, k));
		else /* a buffer smaller than one chunk (tests) */
			outbuf_put(o, tmp, (size_t)(json_escape_into(tmp, s, k) - tmp));
		s += k;
		n -= k;
	}
}

void json_fput_string(FILE *f, const char *s)
{
	char tmp[JSON_ESCAPE_MAX(ESCAPE_CHUNK)];
	size_t n = s ? strlen(s) : 0;

	fputc('"', f);
	while (n) {
		size_t k = escape_chunk(s, n);
		fwrite(tmp, 1, (size_t)(json_escape_into(tmp, s, k) - tmp), f);
		s += k;
		n -= k;
	}
	fputc('"', f);
}

void json_string(struct json_out *j, const char *s, size_t n)
{
	before_value(j);
	outbuf_putc(j->o, '"');
	json_escape(j->o, s, n);
	outbuf_putc(j->o, '"');
}

void json_cstring(struct json_out *j, const char *s)
{
	if (!s)
		json_null(j);
	else
		json_string(j, s, strlen(s));
}

void json_i64(struct json_out *j, int64_t v)
{
	before_value(j);
	outbuf_i64(j->o, v);
}

void json_u64(struct json_out *j, uint64_t v)
{
	before_value(j);
	outbuf_u64(j->o, v);
}

void json_hex(struct json_out *j, uint64_t v)
{
	before_value(j);
	outbuf_putc(j->o, '"');
	outbuf_hex(j->o, v);
	outbuf_putc(j->o, '"');
}

void json_bool(struct json_out *j, bool v)
{
	before_value(j);
	if (v)
		outbuf_put(j->o, "true", 4);
	else
		outbuf_put(j->o, "false", 5);
}

void json_null(struct json_out *j)
{
	before_value(j);
	outbuf_put(j->o, "null", 4);
}

void json_double(struct json_out *j, double v)
{
	char tmp[32];

	if (!isfinite(v)) {
		json_null(j);
		return;
	}
	int n = snprintf(tmp, sizeof(tmp), "%.9g", v);
	json_raw(j, tmp, (size_t)n);
}

void json_raw(struct json_out *j, const char *s, size_t n)
{
	before_value(j);
	outbuf_put(j->o, s, n);
}

void json_hexbytes(struct json_out *j, const uint8_t *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	before_value(j);
	outbuf_putc(j->o, '"');
	for (size_t i = 0; i < n; i++) {
		char b[2] = { hex[p[i] >> 4], hex[p[i] & 0xf] };
		outbuf_put(j->o, b, 2);
	}
	outbuf_putc(j->o, '"');
}

void json_newline(struct json_out *j)
{
	outbuf_putc(j->o, '\n');
	j->depth = 0;
	j->need_comma[0] = false;
	j->after_key = false;
}
