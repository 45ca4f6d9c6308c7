#include "resolve/java_sig.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "formats/dex.h"

#define MAX_TYPE 1024
#define MAX_PARAMS 255          /* the dex/JVM limit on parameter slots */

static const struct {
	const char *name;
	char d;
} PRIMS[] = {
	{ "void", 'V' }, { "boolean", 'Z' }, { "byte", 'B' }, { "short", 'S' }, { "char", 'C' },
	{ "int", 'I' }, { "long", 'J' }, { "float", 'F' }, { "double", 'D' },
};

/* Copies type without generic arguments, annotations, "final" and spaces;
 * a trailing parameter name ("int[] values") is dropped. */
static int clean_type(const char *in, char *out, size_t size)
{
	char tmp[MAX_TYPE];
	size_t n = 0;
	int depth = 0;

	for (const char *p = in; *p; p++) {
		if (*p == '<')
			depth++;
		else if (*p == '>')
			depth--;
		else if (!depth && n + 1 < sizeof(tmp))
			tmp[n++] = *p;
		if (depth < 0)
			return -EINVAL;
	}
	if (depth)
		return -EINVAL;
	tmp[n] = 0;
	/* tokens separated by spaces; "[]" and "..." glue to the type before them */
	char *tok[8];
	size_t nt = 0;
	char *save = NULL;
	for (char *s = strtok_r(tmp, " \t\n", &save); s; s = strtok_r(NULL, " \t\n", &save)) {
		if (s[0] == '@' || strcmp(s, "final") == 0)
			continue;
		if (nt && (s[0] == '[' || s[0] == ']' || strncmp(s, "...", 3) == 0)) {
			/* "int []" or "int [ ]": append to the previous token */
			size_t l = strlen(tok[nt - 1]);
			memmove(tok[nt - 1] + l, s, strlen(s) + 1);
			continue;
		}
		if (nt == 8)
			return -EINVAL;
		tok[nt++] = s;
	}
	if (nt < 1 || nt > 2)
		return -EINVAL;
	if ((size_t)snprintf(out, size, "%s", tok[0]) >= size)
		return -ENAMETOOLONG;
	return 0;
}

static bool is_descriptor(const char *t)
{
	const char *p = t;

	while (*p == '[')
		p++;
	if (*p == 'L')
		return strchr(p, ';') == p + strlen(p) - 1 && !strchr(p, '.') && p[1] != ';';
	return p != t && strchr("ZBSCIJFD", *p) && *p && !p[1];
}

int java_type_to_descriptor(const char *type, char *buf, size_t size)
{
	char t[MAX_TYPE];
	size_t len, dims = 0, n = 0;
	int rc;

	if ((rc = clean_type(type, t, sizeof(t))))
		return rc;
	if (is_descriptor(t))
		return (size_t)snprintf(buf, size, "%s", t) >= size ? -ENAMETOOLONG : 0;
	len = strlen(t);
	if (len > 3 && strcmp(t + len - 3, "...") == 0)
		len -= 3, dims++;
	while (len > 2 && t[len - 2] == '[' && t[len - 1] == ']')
		len -= 2, dims++;
	t[len] = 0;
	if (!len || strchr(t, '[') || strchr(t, ']') || strchr(t, '/') || strchr(t, ';') ||
	    t[0] == '.' || t[len - 1] == '.' || strstr(t, ".."))
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (!(isalnum((unsigned char)t[i]) || t[i] == '.' || t[i] == '$' || t[i] == '_' ||
		      (unsigned char)t[i] >= 0x80))
			return -EINVAL;
	if (dims + len + 3 > size)
		return -ENAMETOOLONG;
	for (size_t i = 0; i < dims; i++)
		buf[n++] = '[';
	for (size_t i = 0; i < sizeof(PRIMS) / sizeof(PRIMS[0]); i++) {
		if (strcmp(t, PRIMS[i].name) == 0) {
			if (PRIMS[i].d == 'V' && dims)
				return -EINVAL;
			buf[n++] = PRIMS[i].d;
			buf[n] = 0;
			return 0;
		}
	}
	buf[n++] = 'L';
	for (size_t i = 0; i < len; i++)
		buf[n++] = t[i] == '.' ? '/' : t[i];
	buf[n++] = ';';
	buf[n] = 0;
	return 0;
}

static int type_err(struct err *err, const char *what, const char *type, int rc)
{
	if (rc == -ENAMETOOLONG)
		return err_set(err, rc, "%s type \"%s\" is too long", what, type);
	return err_set(err, -EINVAL, "%s \"%s\" is not a Java type name", what, type);
}

static char *desc_dup(struct arena *a, const char *type, int *rc)
{
	char d[MAX_TYPE];

	*rc = java_type_to_descriptor(type, d, sizeof(d));
	return *rc ? NULL : arena_strdup(a, d);
}

static int set_class(struct java_sig *s, const char *cls, struct arena *a, struct err *err)
{
	int rc;

	s->class_name = arena_strdup(a, cls);
	s->class_desc = desc_dup(a, cls, &rc);
	if (rc || s->class_desc[0] != 'L')
		return type_err(err, "class", cls, rc ? rc : -EINVAL);
	return 0;
}

static int add_params(struct java_sig *s, const char *const *params, size_t n, struct arena *a,
		      struct err *err)
{
	if (n > MAX_PARAMS)
		return err_set(err, -EINVAL, "%zu parameters: more than a Java method can take", n);
	s->params = arena_alloc(a, (n ? n : 1) * sizeof(char *));
	if (!s->params)
		return err_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		int rc;
		s->params[i] = desc_dup(a, params[i], &rc);
		if (rc || s->params[i][0] == 'V')
			return type_err(err, "parameter", params[i], rc ? rc : -EINVAL);
	}
	s->n_params = n;
	return 0;
}

int java_sig_from_parts(const char *class_name, const char *method, const char *const *params,
			size_t n_params, bool params_given, struct arena *a, struct java_sig *out,
			struct err *err)
{
	int rc;

	memset(out, 0, sizeof(*out));
	if (!class_name || !*class_name || !method || !*method)
		return err_set(err, -EINVAL,
			       "a Java method needs both a class name and a method name");
	if ((rc = set_class(out, class_name, a, err)))
		return rc;
	out->name = arena_strdup(a, method);
	for (const char *p = method; *p; p++)
		if (strchr(" ()[];/.", *p))
			return err_set(err, -EINVAL, "method name \"%s\" contains '%c'", method,
				       *p);
	out->params_given = params_given;
	return add_params(out, params, params_given ? n_params : 0, a, err);
}

/* Splits "a, Map<K, V>, c" at top-level commas into arena strings. */
static int split_params(const char *s, size_t len, struct arena *a, char ***out, size_t *n)
{
	char **v = arena_alloc(a, (MAX_PARAMS + 1) * sizeof(char *));
	size_t start = 0, k = 0;
	int depth = 0;
	bool blank = true;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++)
		if (!isspace((unsigned char)s[i]))
			blank = false;
	if (!blank) {
		for (size_t i = 0; i <= len; i++) {
			if (i < len && s[i] == '<')
				depth++;
			else if (i < len && s[i] == '>')
				depth--;
			else if (i == len || (s[i] == ',' && !depth)) {
				if (k == MAX_PARAMS)
					return -E2BIG;
				v[k++] = arena_strndup(a, s + start, i - start);
				start = i + 1;
			}
		}
	}
	*out = v;
	*n = k;
	return 0;
}

/* Trims trailing blanks and returns the last blank-separated token, where
 * blanks inside generic arguments ("Map<K, V>") do not separate. */
static char *last_type_token(char *s)
{
	size_t n = strlen(s);
	int depth = 0;

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	while (n) {
		char c = s[n - 1];
		if (c == '>')
			depth++;
		else if (c == '<')
			depth--;
		else if (isspace((unsigned char)c) && depth <= 0)
			break;
		n--;
	}
	return s + n;
}

int java_sig_parse(const char *text, struct arena *a, struct java_sig *out, struct err *err)
{
	const char *open = strchr(text, '('), *close = strrchr(text, ')');
	char prefix[2 * MAX_TYPE], *qual, *ret, *dot, **params;
	size_t n;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!open || !close || close < open)
		return err_set(err, -EINVAL,
			       "method signature \"%s\": expected \"<return type> "
			       "<class>.<method>(<params>)\"",
			       text);
	for (const char *p = close + 1; *p; p++)
		if (!isspace((unsigned char)*p))
			return err_set(err, -EINVAL, "method signature \"%s\": text after ')'",
				       text);
	if ((size_t)(open - text) >= sizeof(prefix))
		return err_set(err, -ENAMETOOLONG, "method signature \"%s\" is too long", text);
	snprintf(prefix, sizeof(prefix), "%.*s", (int)(open - text), text);
	for (n = strlen(prefix); n && isspace((unsigned char)prefix[n - 1]);)
		prefix[--n] = 0;
	/* the qualified method is the last token; the return type precedes it */
	qual = strrchr(prefix, ' ');
	if (!qual)
		return err_set(err, -EINVAL,
			       "method signature \"%s\": missing the return type before the method",
			       text);
	*qual++ = 0;
	ret = last_type_token(prefix);  /* drops modifiers such as "public static" */
	dot = strrchr(qual, '.');
	if (!dot || dot == qual || !dot[1])
		return err_set(err, -EINVAL,
			       "method signature \"%s\": \"%s\" is not <class>.<method>", text,
			       qual);
	*dot = 0;
	if ((rc = split_params(open + 1, (size_t)(close - open - 1), a, &params, &n)))
		return err_set(err, rc, "method signature \"%s\": bad parameter list", text);
	if ((rc = java_sig_from_parts(qual, dot + 1, (const char *const *)params, n, true, a, out,
				      err)))
		return err_prefix(err, "method signature \"%s\"", text);
	out->ret_desc = desc_dup(a, ret, &rc);
	if (rc) {
		type_err(err, "return", ret, rc);
		return err_prefix(err, "method signature \"%s\"", text);
	}
	return 0;
}

char *java_sig_class_variant(const struct java_sig *s, unsigned k, struct arena *a)
{
	char *d = arena_strdup(a, s->class_desc);
	size_t len = strlen(d);

	for (size_t i = len; i-- > 1 && k;) {
		if (d[i] == '/') {
			d[i] = '$';
			if (!--k)
				return d;
		}
	}
	return NULL;
}

char *java_sig_pretty(const struct java_sig *s, struct arena *a)
{
	char buf[4096], t[MAX_TYPE];
	size_t n = 0;

	if (s->ret_desc) {
		dex_pretty_descriptor(s->ret_desc, t, sizeof(t));
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s ", t);
	}
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s.%s", s->class_name, s->name);
	if (n < sizeof(buf) && s->params_given) {
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "(");
		for (size_t i = 0; i < s->n_params && n < sizeof(buf); i++) {
			dex_pretty_descriptor(s->params[i], t, sizeof(t));
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? ", " : "", t);
		}
		if (n < sizeof(buf))
			snprintf(buf + n, sizeof(buf) - n, ")");
	}
	return arena_strdup(a, buf);
}
