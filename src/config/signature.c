/* signature.c — see signature.h. */
#include "config/signature.h"

#include <string.h>

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

static struct span trim(const char *p, size_t len)
{
	while (len && is_space(*p)) {
		p++;
		len--;
	}
	while (len && is_space(p[len - 1]))
		len--;
	return (struct span){ p, len };
}

static int fail(const char **why, const char *msg)
{
	if (why)
		*why = msg;
	return -1;
}

/* Split "a, b, c" (between the parentheses) into trimmed parameters. */
static int split_params(const char *p, size_t len, struct method_sig *out, const char **why)
{
	struct span all = trim(p, len);
	size_t start = 0;

	out->n_params = 0;
	if (!all.len)
		return 0;
	for (size_t i = 0; i <= all.len; i++) {
		if (i < all.len && all.p[i] != ',')
			continue;
		struct span one = trim(all.p + start, i - start);
		if (!one.len)
			return fail(why, "an empty parameter in the list");
		if (out->n_params == SIG_MAX_PARAMS)
			return fail(why, "more than 255 parameters");
		out->params[out->n_params++] = one;
		start = i + 1;
	}
	return 0;
}

/* The blank that ends the return type starting at p (before end), or NULL. */
static const char *ret_end(const char *p, const char *end)
{
	int depth = 0;

	for (const char *q = p; q < end; q++) {
		if (*q == '<')
			depth++;
		else if (*q == '>')
			depth--;
		else if (is_space(*q) && depth <= 0)
			return q;
	}
	return NULL;
}

static bool is_modifier(struct span w)
{
	static const char *const mods[] = { "public", "protected", "private", "static", "final",
					     "synchronized", "native", "abstract", "strictfp" };

	for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); i++)
		if (strlen(mods[i]) == w.len && !memcmp(mods[i], w.p, w.len))
			return true;
	return w.len && w.p[0] == '@';
}

int sig_parse(const char *s, struct method_sig *out, const char **why)
{
	size_t len = strlen(s);
	const char *open = memchr(s, '(', len), *space;
	struct span whole = trim(s, len);

	memset(out, 0, sizeof(*out));
	if (!whole.len)
		return fail(why, "it is empty");
	if (!open) {
		/* An ELF symbol: one word. */
		for (size_t i = 0; i < whole.len; i++)
			if (is_space(whole.p[i]))
				return fail(why, "it has spaces but no parameter list");
		out->native = true;
		out->name = whole;
		return 0;
	}
	if (whole.p[whole.len - 1] != ')' ||
	    memchr(open + 1, '(', (size_t)(whole.p + whole.len - open - 1)))
		return fail(why, "the parameter list does not end the signature");
	/* The return type is the first word (blanks inside "<...>" do not end it); the rest
	 * is the qualified method, whose names may hold spaces (dex 040). */
	space = ret_end(whole.p, open);
	if (!space)
		return fail(why, "no return type before the method name");
	out->ret = trim(whole.p, (size_t)(space - whole.p));
	out->name = trim(space + 1, (size_t)(open - space - 1));
	if (is_modifier(out->ret))
		return fail(why, "a modifier before the return type (drop it: \"void a.b.C.m()\")");
	if (!out->ret.len || !out->name.len || !memchr(out->name.p, '.', out->name.len))
		return fail(why, "the method name is not qualified by its class (a.b.C.m)");
	return split_params(open + 1, (size_t)(whole.p + whole.len - 1 - open - 1), out, why);
}

struct span sig_class(const struct method_sig *s)
{
	struct span c = s->name;

	while (c.len && c.p[c.len - 1] != '.')
		c.len--;
	if (c.len)
		c.len--;
	return c;
}

static bool span_is(const char *p, size_t len, const char *word)
{
	return strlen(word) == len && memcmp(p, word, len) == 0;
}

bool sig_is_floating(const char *type, size_t len)
{
	return span_is(type, len, "float") || span_is(type, len, "double");
}

bool sig_is_primitive(const char *type, size_t len)
{
	static const char *const prims[] = { "int", "long", "boolean", "byte", "char", "short" };

	for (size_t i = 0; i < sizeof(prims) / sizeof(prims[0]); i++)
		if (span_is(type, len, prims[i]))
			return true;
	return sig_is_floating(type, len);
}
