/* textproto_lex.h — tokens of the protobuf text format, as configs use it.
 *
 * The lexer works on a caller's buffer (no copies): identifiers, numbers
 * (any run starting with a digit or '.', validated by the parser), quoted
 * strings (raw, quotes included; tp_unescape decodes them), and the
 * punctuation { } < > [ ] : , ; - +.  '#' starts a comment to end of line.
 * Lines and columns are 1-based; a column counts bytes. */
#ifndef UPROBESTATS_CONFIG_TEXTPROTO_LEX_H
#define UPROBESTATS_CONFIG_TEXTPROTO_LEX_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct arena;

enum tok_kind {
	TOK_EOF = 0,
	TOK_IDENT,
	TOK_NUMBER,
	TOK_STRING,
	TOK_PUNCT,
};

struct token {
	enum tok_kind kind;
	const char *p;          /* into the buffer */
	size_t len;
	uint32_t line, col;
	char punct;             /* TOK_PUNCT: the character */
};

struct lexer {
	const char *buf;
	size_t len, pos;
	uint32_t line, col;
	const char *name;       /* for messages */
	struct token peeked;
	int has_peeked;
};

void lex_init(struct lexer *lx, const char *name, const char *buf, size_t len);
/* Next token (consumed) / the next token without consuming it.  On a lexing
 * error (a stray byte, an unterminated string) returns CONFIG_ESYNTAX with
 * "name:line:col: ..." in err. */
int lex_next(struct lexer *lx, struct token *t, struct err *err);
int lex_peek(struct lexer *lx, struct token *t, struct err *err);

/* Decode one quoted string token into out (NUL-terminated, in arena); C
 * escapes \a \b \f \n \r \t \v \\ \' \" \?, octal \ooo, hex \xHH, \uHHHH and
 * \UHHHHHHHH (as UTF-8).  A decoded NUL byte is refused: no name or path in
 * a config can hold one. */
int tp_unescape(const struct lexer *lx, const struct token *t, struct arena *a, char **out,
		size_t *out_len, struct err *err);

/* The value of a hex digit (0-15), or -1. */
int tp_digit_value(char c);

/* A short printable rendering of a token for messages: "'{'", "identifier 'foo'",
 * "string \"abc\"", "end of file". */
const char *tok_describe(const struct token *t, char *buf, size_t size);

#endif
