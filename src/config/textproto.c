/* textproto.c — the text-format parser, driven by the schema tables.
 *
 * One function per grammar level: a message body (fields until its closing
 * delimiter), a field (name, ':' and value or list), and a scalar value.
 * Recursion only follows the schema's message nesting and is capped at
 * SCHEMA_MAX_DEPTH. */
#include "config/textproto.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/arena.h"
#include "config/model.h"
#include "config/schema.h"
#include "config/textproto_lex.h"

struct tp {
	struct lexer lx;
	struct uprobestats_config *cfg;
	struct arena *a;
	struct err *err;
};

static struct src_loc tok_loc(const struct token *t)
{
	return (struct src_loc){ .line = t->line, .col = t->col, .kind = SRC_LOC_TEXT };
}

static int tp_error(struct tp *p, int code, const struct token *t, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int tp_error(struct tp *p, int code, const struct token *t, const char *fmt, ...)
{
	char msg[ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(p->err, code, "%s:%u:%u: %s", p->cfg->source_name, t->line, t->col, msg);
}

static bool is_punct(const struct token *t, char c)
{
	return t->kind == TOK_PUNCT && t->punct == c;
}

static bool tok_is(const struct token *t, const char *word)
{
	return t->kind == TOK_IDENT && strlen(word) == t->len && memcmp(t->p, word, t->len) == 0;
}

/* Consume the next token when it is the punctuation c; *found says whether it was. */
static int accept(struct tp *p, char c, bool *found)
{
	struct token t;
	int rc = lex_peek(&p->lx, &t, p->err);

	if (rc)
		return rc;
	*found = is_punct(&t, c);
	if (*found)
		lex_next(&p->lx, &t, p->err);
	return 0;
}

static const char *type_name(const struct field_desc *f)
{
	switch (f->type) {
	case FT_STRING:
		return "a string";
	case FT_BOOL:
		return "a bool (true/false)";
	case FT_INT32:
		return "an int32";
	case FT_INT64:
		return "an int64";
	case FT_ENUM:
		return "an enum value";
	default:
		return "a message";
	}
}

static int expected(struct tp *p, const struct token *t, const char *what, int code)
{
	char d[96];

	return tp_error(p, code, t, "expected %s, found %s", what, tok_describe(t, d, sizeof(d)));
}

/* One or more adjacent string tokens, decoded and concatenated. */
static int parse_string(struct tp *p, const struct token *first, char **out)
{
	struct token t = *first;
	size_t len;
	int rc = tp_unescape(&p->lx, &t, p->a, out, &len, p->err);

	for (;;) {
		char *more, *joined;
		size_t mlen;
		if (rc || (rc = lex_peek(&p->lx, &t, p->err)) || t.kind != TOK_STRING)
			return rc;
		lex_next(&p->lx, &t, p->err);
		rc = tp_unescape(&p->lx, &t, p->a, &more, &mlen, p->err);
		if (rc)
			return rc;
		joined = arena_alloc(p->a, len + mlen + 1);
		if (!joined)
			return err_set(p->err, -ENOMEM, "%s: out of memory", p->cfg->source_name);
		memcpy(joined, *out, len);
		memcpy(joined + len, more, mlen + 1);
		*out = joined;
		len += mlen;
	}
}

/* Magnitude of a decimal, 0x-hex or 0-octal integer token.  Returns 0, 1 on
 * bad syntax, 2 on overflow of 64 bits. */
static int parse_magnitude(const struct token *t, uint64_t *out)
{
	const char *s = t->p;
	size_t n = t->len, i = 0;
	unsigned base = 10;
	uint64_t v = 0;

	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	} else if (n > 1 && s[0] == '0') {
		base = 8;
		i = 1;
	}
	for (; i < n; i++) {
		int dv = tp_digit_value(s[i]);
		unsigned d = (unsigned)dv;
		if (dv < 0 || d >= base)
			return 1;
		if (v > (UINT64_MAX - d) / base)
			return 2;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

/* An optionally signed integer in [min, max]. */
static int parse_int(struct tp *p, const struct field_desc *f, const struct msg_desc *m,
		     int64_t min, int64_t max, int64_t *out)
{
	struct token t, sign = { 0 };
	bool neg = false;
	uint64_t mag;
	int rc = lex_next(&p->lx, &t, p->err), bad;

	if (rc)
		return rc;
	if (is_punct(&t, '-') || is_punct(&t, '+')) {
		sign = t;
		neg = t.punct == '-';
		if ((rc = lex_next(&p->lx, &t, p->err)))
			return rc;
	}
	if (t.kind != TOK_NUMBER) {
		char what[96];
		snprintf(what, sizeof(what), "%s for %s.%s", type_name(f), m->name, f->name);
		return expected(p, &t, what, CONFIG_EVALUE);
	}
	bad = parse_magnitude(&t, &mag);
	if (bad == 1)
		return tp_error(p, CONFIG_EVALUE, &t, "%s.%s expects %s, found '%.*s'", m->name,
				f->name, type_name(f), (int)(t.len > 40 ? 40 : t.len), t.p);
	if (bad == 2 || (neg && mag > (uint64_t)INT64_MAX + 1) || (!neg && mag > (uint64_t)max) ||
	    (neg && mag > 0 && -(int64_t)(mag - 1) - 1 < min))
		return tp_error(p, CONFIG_ERANGE, sign.kind ? &sign : &t,
				"%s%.*s is out of range for %s.%s (%s)", neg ? "-" : "",
				(int)(t.len > 40 ? 40 : t.len), t.p, m->name, f->name,
				type_name(f));
	*out = neg ? (mag == 0 ? 0 : -(int64_t)(mag - 1) - 1) : (int64_t)mag;
	return 0;
}

static int parse_bool(struct tp *p, const struct field_desc *f, const struct msg_desc *m,
		      int64_t *out)
{
	struct token t;
	int rc = lex_next(&p->lx, &t, p->err);

	if (rc)
		return rc;
	if (tok_is(&t, "true") || tok_is(&t, "True") || tok_is(&t, "t") ||
	    (t.kind == TOK_NUMBER && t.len == 1 && t.p[0] == '1')) {
		*out = 1;
		return 0;
	}
	if (tok_is(&t, "false") || tok_is(&t, "False") || tok_is(&t, "f") ||
	    (t.kind == TOK_NUMBER && t.len == 1 && t.p[0] == '0')) {
		*out = 0;
		return 0;
	}
	char what[96];
	snprintf(what, sizeof(what), "true or false for %s.%s", m->name, f->name);
	return expected(p, &t, what, CONFIG_EVALUE);
}

static void enum_names(const struct enum_desc *e, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < e->n_values && used < size; i++) {
		int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", e->values[i].name);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

static int parse_enum(struct tp *p, const struct field_desc *f, const struct msg_desc *m,
		      int64_t *out)
{
	struct token t;
	char names[256];
	int rc = lex_peek(&p->lx, &t, p->err);

	if (rc)
		return rc;
	if (t.kind != TOK_IDENT) {
		rc = parse_int(p, f, m, INT32_MIN, INT32_MAX, out);
		if (rc == 0 && !schema_enum_name(f->enm, (int32_t)*out)) {
			enum_names(f->enm, names, sizeof(names));
			return tp_error(p, CONFIG_EVALUE, &t, "%" PRId64 " is not a %s value (%s)",
					*out, f->enm->name, names);
		}
		return rc;
	}
	lex_next(&p->lx, &t, p->err);
	const struct enum_value *v = schema_enum_by_name(f->enm, t.p, t.len);
	if (v) {
		*out = v->value;
		return 0;
	}
	const char *near = schema_closest_enum(f->enm, t.p, t.len);
	enum_names(f->enm, names, sizeof(names));
	if (near)
		return tp_error(p, CONFIG_EVALUE, &t, "unknown %s value '%.*s'; did you mean '%s'?",
				f->enm->name, (int)(t.len > 40 ? 40 : t.len), t.p, near);
	return tp_error(p, CONFIG_EVALUE, &t, "unknown %s value '%.*s' (expected one of %s)",
			f->enm->name, (int)(t.len > 40 ? 40 : t.len), t.p, names);
}

/* One scalar value of field f, stored into obj (singular) or appended (repeated). */
static int parse_scalar(struct tp *p, const struct msg_desc *m, void *obj,
			const struct field_desc *f)
{
	struct token t;
	struct src_loc loc;
	int64_t v = 0;
	int rc = lex_peek(&p->lx, &t, p->err);

	if (rc)
		return rc;
	loc = tok_loc(&t);
	if (f->type == FT_STRING) {
		char *s, what[96];
		if (t.kind != TOK_STRING) {
			snprintf(what, sizeof(what), "a quoted string for %s.%s", m->name, f->name);
			return expected(p, &t, what, CONFIG_EVALUE);
		}
		lex_next(&p->lx, &t, p->err);
		if ((rc = parse_string(p, &t, &s)))
			return rc;
		if (!f->repeated) {
			model_set_string(obj, f, s, &loc);
			return 0;
		}
		rc = model_push_string(p->a, schema_member(obj, f->off), s, &loc);
	} else {
		if (f->type == FT_BOOL)
			rc = parse_bool(p, f, m, &v);
		else if (f->type == FT_ENUM)
			rc = parse_enum(p, f, m, &v);
		else if (f->type == FT_INT32)
			rc = parse_int(p, f, m, INT32_MIN, INT32_MAX, &v);
		else
			rc = parse_int(p, f, m, INT64_MIN, INT64_MAX, &v);
		if (rc)
			return rc;
		if (!f->repeated) {
			model_set_int(obj, f, v, &loc);
			return 0;
		}
		if (f->type == FT_INT64)
			rc = model_push_i64(p->a, schema_member(obj, f->off), v, &loc);
		else
			rc = model_push_i32(p->a, schema_member(obj, f->off), (int32_t)v, &loc);
	}
	if (rc)
		return err_set(p->err, rc, "%s: out of memory", p->cfg->source_name);
	return 0;
}

static int parse_body(struct tp *p, const struct msg_desc *m, void *obj,
		      const struct token *open, int depth);

/* One message value: '{' body '}' or '<' body '>'. */
static int parse_message(struct tp *p, const struct msg_desc *m, void *obj,
			 const struct field_desc *f, const struct token *name, int depth)
{
	struct token t;
	struct src_loc loc;
	void *sub;
	int rc = lex_next(&p->lx, &t, p->err);

	if (rc)
		return rc;
	if (!is_punct(&t, '{') && !is_punct(&t, '<')) {
		char what[96];
		snprintf(what, sizeof(what), "'{' to open %s.%s", m->name, f->name);
		return expected(p, &t, what, CONFIG_ESYNTAX);
	}
	if (depth + 1 > SCHEMA_MAX_DEPTH)
		return tp_error(p, CONFIG_ELIMIT, &t, "messages nested deeper than %d levels",
				SCHEMA_MAX_DEPTH);
	loc = tok_loc(name->kind == TOK_IDENT ? name : &t);
	if (f->repeated) {
		sub = model_push_message(p->a, obj, f);
		if (!sub)
			return err_set(p->err, -ENOMEM, "%s: out of memory", p->cfg->source_name);
		if (f->msg->loc_off != FD_NONE)
			*(struct src_loc *)schema_member(sub, f->msg->loc_off) = loc;
	} else {
		sub = model_open_message(obj, f, &loc);
	}
	return parse_body(p, f->msg, sub, &t, depth + 1);
}

/* "[" value ("," value)* "]", or "[]". */
static int parse_list(struct tp *p, const struct msg_desc *m, void *obj,
		      const struct field_desc *f, int depth)
{
	struct token t;
	bool done;
	int rc = accept(p, ']', &done);

	if (f->has_off != FD_NONE)
		*(bool *)schema_member(obj, f->has_off) = true;
	while (!rc && !done) {
		/* A list element's location is its own opening brace. */
		static const struct token no_name = { .kind = TOK_EOF };
		if (f->type == FT_MESSAGE)
			rc = parse_message(p, m, obj, f, &no_name, depth);
		else
			rc = parse_scalar(p, m, obj, f);
		if (rc || (rc = lex_next(&p->lx, &t, p->err)))
			return rc;
		if (is_punct(&t, ']'))
			return 0;
		if (!is_punct(&t, ','))
			return expected(p, &t, "',' or ']' in the list", CONFIG_ESYNTAX);
		/* Allow a trailing comma before ']'. */
		rc = accept(p, ']', &done);
	}
	return rc;
}

static int unknown_field(struct tp *p, const struct msg_desc *m, const struct token *t)
{
	const char *near = schema_closest_field(m, t->p, t->len);
	char list[512];
	size_t used = 0;
	int n = (int)(t->len > 60 ? 60 : t->len);

	if (near)
		return tp_error(p, CONFIG_EFIELD, t,
				"unknown field '%.*s' in %s; did you mean '%s'?", n, t->p, m->name,
				near);
	list[0] = '\0';
	for (size_t i = 0; i < m->n_fields && used < sizeof(list); i++) {
		int w = snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "",
				 m->fields[i].name);
		if (w < 0)
			break;
		used += (size_t)w;
	}
	return tp_error(p, CONFIG_EFIELD, t, "unknown field '%.*s' in %s (fields: %s)", n, t->p,
			m->name, list);
}

/* A field: name, then ':' value | ':'? message | ':' '[' list ']'. */
static int parse_field(struct tp *p, const struct msg_desc *m, void *obj,
		       const struct field_desc *f, const struct token *name, int depth)
{
	struct token t;
	bool colon, list;
	int rc = accept(p, ':', &colon);

	if (rc || (rc = lex_peek(&p->lx, &t, p->err)))
		return rc;
	list = is_punct(&t, '[');
	if (list && !f->repeated)
		return tp_error(p, CONFIG_EVALUE, &t, "%s.%s is not repeated; a [list] is not "
				"allowed", m->name, f->name);
	if (!colon && (f->type != FT_MESSAGE || list)) {
		char what[96];
		snprintf(what, sizeof(what), "':' after field name '%s'", f->name);
		return expected(p, &t, what, CONFIG_ESYNTAX);
	}
	if (list) {
		lex_next(&p->lx, &t, p->err);
		return parse_list(p, m, obj, f, depth);
	}
	if (f->type == FT_MESSAGE)
		return parse_message(p, m, obj, f, name, depth);
	return parse_scalar(p, m, obj, f);
}

/* Fields until the delimiter matching open ('}' for '{', '>' for '<'), or
 * until end of file at the top level (open == NULL). */
static int parse_body(struct tp *p, const struct msg_desc *m, void *obj,
		      const struct token *open, int depth)
{
	char close = open ? (open->punct == '<' ? '>' : '}') : '\0';
	uint64_t seen = 0;   /* singular fields already set in this message */
	struct token t;
	bool sep;
	int rc;

	for (;;) {
		if ((rc = lex_next(&p->lx, &t, p->err)))
			return rc;
		if (close && is_punct(&t, close))
			return 0;
		if (t.kind == TOK_EOF) {
			if (!close)
				return 0;
			return tp_error(p, CONFIG_ESYNTAX, &t,
					"expected '%c' to close the %s opened at %u:%u, found end "
					"of file", close, m->name, open->line, open->col);
		}
		if (t.kind != TOK_IDENT) {
			char what[96];
			if (close)
				snprintf(what, sizeof(what), "a field name of %s or '%c'", m->name,
					 close);
			else
				snprintf(what, sizeof(what), "a field name of %s", m->name);
			return expected(p, &t, what, CONFIG_ESYNTAX);
		}
		const struct field_desc *f = schema_field_by_name(m, t.p, t.len);
		if (!f)
			return unknown_field(p, m, &t);
		uint64_t bit = 1ull << ((size_t)(f - m->fields) & 63);
		if (!f->repeated && (seen & bit))
			return tp_error(p, CONFIG_EFIELD, &t, "%s.%s is set twice (it is not "
					"repeated)", m->name, f->name);
		seen |= bit;
		if ((rc = parse_field(p, m, obj, f, &t, depth)))
			return rc;
		if ((rc = accept(p, ',', &sep)) || (!sep && (rc = accept(p, ';', &sep))))
			return rc;
	}
}

/* An era-B-only field (bpf_map) without any current-only field means the
 * text was written for era B. */
static enum config_era text_era(const struct uprobestats_config *cfg)
{
	struct era_use u;

	model_era_use(cfg, &u);
	return u.b_only && !u.current_only ? CONFIG_ERA_B : CONFIG_ERA_CURRENT;
}

int textproto_parse(struct uprobestats_config *cfg, const char *buf, size_t len,
		    struct err *err)
{
	struct tp p = { .cfg = cfg, .a = cfg->arena, .err = err };
	int rc;

	lex_init(&p.lx, cfg->source_name, buf, len);
	rc = parse_body(&p, &schema_config, cfg, NULL, 0);
	if (rc)
		return rc;
	cfg->format = CONFIG_FORMAT_TEXT;
	cfg->era = text_era(cfg);
	cfg->era_reason = cfg->era == CONFIG_ERA_B ? "text uses the probe-level bpf_map field"
						   : "text (field names are era-independent)";
	return 0;
}
