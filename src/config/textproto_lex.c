/* textproto_lex.c — see textproto_lex.h. */
#include "config/textproto_lex.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/arena.h"
#include "config/config.h"

void lex_init(struct lexer *lx, const char *name, const char *buf, size_t len)
{
	memset(lx, 0, sizeof(*lx));
	lx->buf = buf;
	lx->len = len;
	lx->line = 1;
	lx->col = 1;
	lx->name = name;
}

static void advance(struct lexer *lx)
{
	if (lx->buf[lx->pos] == '\n') {
		lx->line++;
		lx->col = 1;
	} else {
		lx->col++;
	}
	lx->pos++;
}

static bool is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_ident_char(char c)
{
	return is_ident_start(c) || is_digit(c);
}

static void skip_space_and_comments(struct lexer *lx)
{
	while (lx->pos < lx->len) {
		char c = lx->buf[lx->pos];
		if (c == '#') {
			while (lx->pos < lx->len && lx->buf[lx->pos] != '\n')
				advance(lx);
		} else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
			   c == '\v') {
			advance(lx);
		} else {
			break;
		}
	}
}

/* A quoted string runs to the matching quote on the same line; a backslash
 * escapes the next byte (which the decoder interprets later). */
static int lex_string(struct lexer *lx, struct token *t, struct err *err)
{
	char quote = lx->buf[lx->pos];

	advance(lx);
	while (lx->pos < lx->len) {
		char c = lx->buf[lx->pos];
		if (c == quote) {
			advance(lx);
			t->len = (size_t)(lx->buf + lx->pos - t->p);
			return 0;
		}
		if (c == '\n')
			break;
		if (c == '\\' && lx->pos + 1 < lx->len && lx->buf[lx->pos + 1] != '\n')
			advance(lx);
		advance(lx);
	}
	/* Upstream's PixelOS test_bss_noteEvent.textproto has `"...buf""`: a
	 * stray quote right after a string opens one that never closes. */
	if (t->p > lx->buf && t->p[-1] == quote)
		return err_set(err, CONFIG_ESYNTAX, "%s:%u:%u: unterminated string (missing "
			       "closing %c); a stray %c right after the previous string?",
			       lx->name, t->line, t->col, quote, quote);
	return err_set(err, CONFIG_ESYNTAX, "%s:%u:%u: unterminated string (missing closing %c)",
		       lx->name, t->line, t->col, quote);
}

static int lex_token(struct lexer *lx, struct token *t, struct err *err)
{
	char c;

	skip_space_and_comments(lx);
	memset(t, 0, sizeof(*t));
	t->line = lx->line;
	t->col = lx->col;
	t->p = lx->buf + lx->pos;
	if (lx->pos >= lx->len) {
		t->kind = TOK_EOF;
		return 0;
	}
	c = lx->buf[lx->pos];
	if (c == '"' || c == '\'') {
		t->kind = TOK_STRING;
		return lex_string(lx, t, err);
	}
	if (is_ident_start(c) || is_digit(c) ||
	    (c == '.' && lx->pos + 1 < lx->len && is_digit(lx->buf[lx->pos + 1]))) {
		t->kind = is_ident_start(c) ? TOK_IDENT : TOK_NUMBER;
		while (lx->pos < lx->len &&
		       (is_ident_char(lx->buf[lx->pos]) ||
			(t->kind == TOK_NUMBER && lx->buf[lx->pos] == '.')))
			advance(lx);
		t->len = (size_t)(lx->buf + lx->pos - t->p);
		return 0;
	}
	if (strchr("{}<>[]:,;-+", c) && c != '\0') {
		t->kind = TOK_PUNCT;
		t->punct = c;
		t->len = 1;
		advance(lx);
		return 0;
	}
	if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7f)
		return err_set(err, CONFIG_ESYNTAX, "%s:%u:%u: unexpected character '%c'",
			       lx->name, t->line, t->col, c);
	return err_set(err, CONFIG_ESYNTAX, "%s:%u:%u: unexpected byte 0x%02x", lx->name,
		       t->line, t->col, (unsigned char)c);
}

int lex_next(struct lexer *lx, struct token *t, struct err *err)
{
	if (lx->has_peeked) {
		*t = lx->peeked;
		lx->has_peeked = 0;
		return 0;
	}
	return lex_token(lx, t, err);
}

int lex_peek(struct lexer *lx, struct token *t, struct err *err)
{
	if (!lx->has_peeked) {
		int rc = lex_token(lx, &lx->peeked, err);
		if (rc)
			return rc;
		lx->has_peeked = 1;
	}
	*t = lx->peeked;
	return 0;
}

int tp_digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Append code point cp as UTF-8; returns bytes written (0 for an invalid cp). */
static size_t put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp >= 0xd800 && cp <= 0xdfff)
		return 0;
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	if (cp > 0x10ffff)
		return 0;
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

struct esc_ctx {
	const struct lexer *lx;
	const struct token *t;
	const char *s;          /* token body (between the quotes) */
	size_t n, i;
	struct err *err;
};

static int esc_error(struct esc_ctx *e, const char *what)
{
	/* Column of the backslash: the token column + 1 (quote) + offset. */
	return err_set(e->err, CONFIG_ESYNTAX, "%s:%u:%zu: %s in string", e->lx->name,
		       e->t->line, (size_t)e->t->col + 1 + e->i, what);
}

/* Decode the escape starting at s[i] == '\\' into o; sets *w to bytes written
 * and advances e->i past the escape. */
static int decode_escape(struct esc_ctx *e, char *o, size_t *w)
{
	static const char simple_in[] = "abfnrtv\\'\"?";
	static const char simple_out[] = "\a\b\f\n\r\t\v\\'\"?";
	size_t j = e->i + 1;
	const char *hit;
	uint32_t v = 0;

	if (j >= e->n)
		return esc_error(e, "backslash at end");
	hit = strchr(simple_in, e->s[j]);
	if (hit && e->s[j] != '\0') {
		o[0] = simple_out[hit - simple_in];
		*w = 1;
		e->i = j + 1;
		return 0;
	}
	if (e->s[j] >= '0' && e->s[j] <= '7') {
		size_t k = 0;
		for (; k < 3 && j + k < e->n && e->s[j + k] >= '0' && e->s[j + k] <= '7'; k++)
			v = v * 8 + (uint32_t)(e->s[j + k] - '0');
		if (v > 0xff)
			return esc_error(e, "octal escape above \\377");
		o[0] = (char)v;
		*w = 1;
		e->i = j + k;
		return 0;
	}
	if (e->s[j] == 'x' || e->s[j] == 'X') {
		size_t k = 0;
		for (; k < 2 && j + 1 + k < e->n && tp_digit_value(e->s[j + 1 + k]) >= 0; k++)
			v = v * 16 + (uint32_t)tp_digit_value(e->s[j + 1 + k]);
		if (k == 0)
			return esc_error(e, "\\x without hex digits");
		o[0] = (char)v;
		*w = 1;
		e->i = j + 1 + k;
		return 0;
	}
	if (e->s[j] == 'u' || e->s[j] == 'U') {
		size_t want = e->s[j] == 'u' ? 4 : 8;
		for (size_t k = 0; k < want; k++) {
			if (j + 1 + k >= e->n || tp_digit_value(e->s[j + 1 + k]) < 0)
				return esc_error(e, "\\u/\\U escape with too few hex digits");
			v = v * 16 + (uint32_t)tp_digit_value(e->s[j + 1 + k]);
		}
		*w = put_utf8(o, v);
		if (*w == 0)
			return esc_error(e, "\\u/\\U escape that is not a Unicode scalar value");
		e->i = j + 1 + want;
		return 0;
	}
	return esc_error(e, "unknown escape");
}

int tp_unescape(const struct lexer *lx, const struct token *t, struct arena *a, char **out,
		size_t *out_len, struct err *err)
{
	struct esc_ctx e = { lx, t, t->p + 1, t->len - 2, 0, err };
	/* Every escape yields at most as many bytes as it spans (\uHHHH: 3 <= 6),
	 * so the body length bounds the output. */
	char *o = arena_alloc(a, e.n + 1);
	size_t w = 0;

	if (!o)
		return err_set(err, -ENOMEM, "%s: out of memory", lx->name);
	while (e.i < e.n) {
		size_t k = 1;
		if (e.s[e.i] == '\\') {
			int rc = decode_escape(&e, o + w, &k);
			if (rc)
				return rc;
			if (memchr(o + w, '\0', k))
				return err_set(err, CONFIG_EVALUE, "%s:%u:%u: string contains "
					       "a NUL byte, which no name or path can hold",
					       lx->name, t->line, t->col);
		} else if (e.s[e.i] == '\0') {
			return err_set(err, CONFIG_EVALUE, "%s:%u:%u: string contains a raw NUL "
				       "byte, which no name or path can hold", lx->name, t->line,
				       t->col + 1 + (unsigned)e.i);
		} else {
			o[w] = e.s[e.i++];
		}
		w += k;
	}
	o[w] = '\0';
	*out = o;
	*out_len = w;
	return 0;
}

const char *tok_describe(const struct token *t, char *buf, size_t size)
{
	int n = t->len > 40 ? 40 : (int)t->len;

	switch (t->kind) {
	case TOK_EOF:
		snprintf(buf, size, "end of file");
		break;
	case TOK_IDENT:
		snprintf(buf, size, "identifier '%.*s'", n, t->p);
		break;
	case TOK_NUMBER:
		snprintf(buf, size, "number '%.*s'", n, t->p);
		break;
	case TOK_STRING:
		snprintf(buf, size, "string %.*s%s", n, t->p, t->len > 40 ? "..." : "");
		break;
	case TOK_PUNCT:
		snprintf(buf, size, "'%c'", t->punct);
		break;
	}
	return buf;
}
