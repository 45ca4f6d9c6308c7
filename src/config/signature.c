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
	space = NULL;
	for (const char *q = whole.p; q < open; q++)
		if (is_space(*q))
			space = q;
	if (!space)
		return fail(why, "no return type before the method name");
	out->ret = trim(whole.p, (size_t)(space - whole.p));
	out->name = trim(space + 1, (size_t)(open - space - 1));
	if (!out->ret.len || !out->name.len || !memchr(out->name.p, '.', out->name.len))
		return fail(why, "the method name is not qualified by its class (a.b.C.m)");
	for (size_t i = 0; i < out->ret.len; i++)
		if (is_space(out->ret.p[i]))
			return fail(why, "spaces inside the return type or method name");
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
