#include "resolve/java_sig.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
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

/* Drops generic arguments ("Map<K, V>" -> "Map") from in, into tmp; -EINVAL when the
 * angle brackets do not pair up. */
static int drop_generics(const char *in, char *tmp, size_t size)
{
	size_t n = 0;
	int depth = 0;

	for (const char *p = in; *p; p++) {
		if (*p == '<')
			depth++;
		else if (*p == '>')
			depth--;
		else if (!depth && n + 1 < size)
			tmp[n++] = *p;
		if (depth < 0)
			return -EINVAL;
	}
	tmp[n] = 0;
	return depth ? -EINVAL : 0;
}

static char *trim(char *s)
{
	size_t n;

	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n'))
		s[--n] = 0;
	return s;
}

/* A type written as a descriptor ("[I", "La/b/C;", "La/My Class;"): its own text. */
static bool looks_like_descriptor(const char *t)
{
	const char *p = t;
	size_t n = strlen(t);

	while (*p == '[')
		p++;
	if (*p == 'L')
		return n > 2 && t[n - 1] == ';' && !strchr(p, '.') && p[1] != ';' &&
		       strchr(p, ';') == t + n - 1;
	return p != t && *p && strchr("ZBSCIJFD", *p) && !p[1];
}

/* Copies type without generic arguments, annotations, "final" and outer blanks into out.
 * exact: the whole remaining text is the type (a class name given on its own, which may
 * hold spaces since dex 040); otherwise a trailing parameter name ("int[] values") is
 * dropped, so such a type must be written as a descriptor. */
static int clean_type(const char *in, bool exact, char *out, size_t size)
{
	char tmp[MAX_TYPE], *t;
	int rc;

	if ((rc = drop_generics(in, tmp, sizeof(tmp))))
		return rc;
	t = trim(tmp);
	if (exact || looks_like_descriptor(t))
		return (size_t)snprintf(out, size, "%s", t) >= size ? -ENAMETOOLONG : 0;
	/* tokens separated by spaces; "[]" and "..." glue to the type before them */
	char *tok[8];
	size_t nt = 0;
	char *save = NULL;
	for (char *s = strtok_r(t, " \t\n", &save); s; s = strtok_r(NULL, " \t\n", &save)) {
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

/* One UTF-8 character at p: its length (1..4) and code point, 0 when malformed. */
static size_t utf8_char(const unsigned char *p, uint32_t *cp)
{
	size_t n;
	uint32_t c, min;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if ((p[0] & 0xe0) == 0xc0)
		n = 2, c = p[0] & 0x1fu, min = 0x80;
	else if ((p[0] & 0xf0) == 0xe0)
		n = 3, c = p[0] & 0x0fu, min = 0x800;
	else if ((p[0] & 0xf8) == 0xf0)
		n = 4, c = p[0] & 0x07u, min = 0x10000;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)      /* also stops at the NUL */
			return 0;
		c = c << 6 | (p[i] & 0x3fu);
	}
	if (c < min || c > 0x10ffff)
		return 0;
	*cp = c;
	return n;
}

/* The dex format's SimpleNameChar (dex 040 added ' ', U+00A0, U+2000..U+200A, U+202F). */
static bool simple_name_cp(uint32_t c)
{
	if (c < 0x80)
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		       c == ' ' || c == '$' || c == '-' || c == '_';
	if (c < 0xa0 || (c >= 0xd800 && c <= 0xdfff) || (c >= 0xfff0 && c <= 0xffff))
		return false;
	if (c >= 0x2000 && c <= 0x202f)
		return c <= 0x200a || (c >= 0x2010 && c <= 0x2027) || c == 0x202f;
	return c <= 0x10ffff;
}

/* Length of the SimpleNameChar at p, 0 when there is none.  A supplementary character
 * may come as 4-byte UTF-8 or, as dex stores it (and `methods` prints it), as a MUTF-8
 * surrogate pair; *mutf8 gets its length in dex's encoding. */
static size_t name_char(const unsigned char *p, uint32_t *cp, size_t *mutf8)
{
	size_t n = utf8_char(p, cp), m;
	uint32_t lo;

	if (!n)
		return 0;
	if (*cp >= 0xd800 && *cp <= 0xdbff) {
		if (!(m = utf8_char(p + n, &lo)) || lo < 0xdc00 || lo > 0xdfff)
			return 0;
		*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
		n += m;
	}
	*mutf8 = *cp >= 0x10000 ? 6 : n;
	return simple_name_cp(*cp) ? n : 0;
}

/* Appends code point c in MUTF-8 (supplementary characters as a surrogate pair). */
static size_t put_mutf8(uint32_t c, char *out)
{
	if (c >= 0x10000) {
		uint32_t hi = 0xd800 + ((c - 0x10000) >> 10), lo = 0xdc00 + ((c - 0x10000) & 0x3ff);
		return put_mutf8(hi, out) + put_mutf8(lo, out + 3);
	}
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	out[0] = (char)(0xe0 | c >> 12);
	out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
	out[2] = (char)(0x80 | (c & 0x3f));
	return 3;
}

/* Writes "L" + the SimpleNames of t (separated by sep) joined by '/' + ";" at buf + *n.
 * -EINVAL when a name is empty or holds a character dex does not allow. */
static int put_class(const char *t, size_t len, char sep, char *buf, size_t *n, size_t size)
{
	const unsigned char *p = (const unsigned char *)t, *end = p + len;
	bool empty = true;

	if (*n + 2 > size)
		return -ENAMETOOLONG;
	buf[(*n)++] = 'L';
	for (; p < end; ) {
		uint32_t c;
		size_t k, m;
		if (*p == (unsigned char)sep) {
			if (empty)
				return -EINVAL;
			empty = true;
			k = 1, m = 1, c = '/';
		} else if (!(k = name_char(p, &c, &m)) || p + k > end) {
			return -EINVAL;
		} else {
			empty = false;
		}
		if (*n + m + 2 > size)
			return -ENAMETOOLONG;
		*n += put_mutf8(c, buf + *n);
		p += k;
	}
	if (empty)
		return -EINVAL;
	buf[(*n)++] = ';';
	buf[*n] = 0;
	return 0;
}

/* A descriptor as written ("[I", "[La/b/C;"): checked and copied (in MUTF-8). */
static int copy_descriptor(const char *t, char *buf, size_t size)
{
	size_t n = 0, len = strlen(t);

	while (*t == '[' && n + 1 < size)
		buf[n++] = *t++, len--;
	if (*t != 'L') {
		if (n + 2 > size)
			return -ENAMETOOLONG;
		buf[n++] = *t;
		buf[n] = 0;
		return 0;
	}
	return put_class(t + 1, len - 2, '/', buf, &n, size);
}

static int type_to_descriptor(const char *type, bool exact, char *buf, size_t size)
{
	char t[MAX_TYPE];
	size_t len, dims = 0, n = 0;
	int rc;

	if ((rc = clean_type(type, exact, t, sizeof(t))))
		return rc;
	if (looks_like_descriptor(t))
		return copy_descriptor(t, buf, size);
	len = strlen(t);
	if (len > 3 && strcmp(t + len - 3, "...") == 0)
		len -= 3, dims++;
	for (;;) {      /* "[]" pairs, blanks around them allowed ("int [ ]") */
		size_t k = len;
		while (k && t[k - 1] == ' ')
			k--;
		if (!k || t[k - 1] != ']')
			break;
		k--;
		while (k && t[k - 1] == ' ')
			k--;
		if (!k || t[k - 1] != '[')
			return -EINVAL;
		len = k - 1, dims++;
	}
	while (len && t[len - 1] == ' ')
		len--;
	t[len] = 0;
	if (!len)
		return -EINVAL;
	if (dims + 1 > size)
		return -ENAMETOOLONG;
	for (size_t i = 0; i < dims; i++)
		buf[n++] = '[';
	for (size_t i = 0; i < sizeof(PRIMS) / sizeof(PRIMS[0]); i++) {
		if (strcmp(t, PRIMS[i].name) == 0) {
			if (PRIMS[i].d == 'V' && dims)
				return -EINVAL;
			if (n + 2 > size)
				return -ENAMETOOLONG;
			buf[n++] = PRIMS[i].d;
			buf[n] = 0;
			return 0;
		}
	}
	return put_class(t, len, '.', buf, &n, size);
}

int java_type_to_descriptor(const char *type, char *buf, size_t size)
{
	return type_to_descriptor(type, false, buf, size);
}

static int type_err(struct err *err, const char *what, const char *type, int rc)
{
	if (rc == -ENAMETOOLONG)
		return err_set(err, rc, "%s type \"%s\" is too long", what, type);
	return err_set(err, -EINVAL, "%s \"%s\" is not a Java type name", what, type);
}

static char *desc_dup(struct arena *a, const char *type, bool exact, int *rc)
{
	char d[MAX_TYPE];

	*rc = type_to_descriptor(type, exact, d, sizeof(d));
	return *rc ? NULL : arena_strdup(a, d);
}

static int set_class(struct java_sig *s, const char *cls, struct arena *a, struct err *err)
{
	int rc;

	s->class_name = arena_strdup(a, cls);
	s->class_desc = desc_dup(a, cls, true, &rc);
	if (rc || s->class_desc[0] != 'L')
		return type_err(err, "class", cls, rc ? rc : -EINVAL);
	return 0;
}

static int add_params(struct java_sig *s, const char *const *params, size_t n, bool exact,
		      struct arena *a, struct err *err)
{
	if (n > MAX_PARAMS)
		return err_set(err, -EINVAL, "%zu parameters: more than a Java method can take", n);
	s->params = arena_alloc(a, (n ? n : 1) * sizeof(char *));
	if (!s->params)
		return err_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		int rc;
		s->params[i] = desc_dup(a, params[i], exact, &rc);
		if (rc || s->params[i][0] == 'V')
			return type_err(err, "parameter", params[i], rc ? rc : -EINVAL);
	}
	s->n_params = n;
	return 0;
}

/* A method name: "<init>", "<clinit>" or a dex SimpleName. */
static int check_method_name(const char *method, struct err *err)
{
	const unsigned char *p = (const unsigned char *)method;

	if (!strcmp(method, "<init>") || !strcmp(method, "<clinit>"))
		return 0;
	while (*p) {
		uint32_t c;
		size_t m, k = name_char(p, &c, &m);
		size_t at = (size_t)(p - (const unsigned char *)method);
		if (!k && *p < 0x80)
			return err_set(err, -EINVAL, "method name \"%s\" contains '%c'", method,
				       *p);
		if (!k)
			return err_set(err, -EINVAL, "method name \"%s\" contains a character "
				       "dex does not allow in names (byte 0x%02x at %zu)", method,
				       *p, at);
		p += k;
	}
	return 0;
}

/* exact_params: each parameter is a type and nothing else (the parts form); otherwise a
 * parameter may carry modifiers and a name ("final int[] values", the text form). */
static int from_parts(const char *class_name, const char *method, const char *const *params,
		      size_t n_params, bool params_given, bool exact_params, struct arena *a,
		      struct java_sig *out, struct err *err)
{
	int rc;

	memset(out, 0, sizeof(*out));
	if (!class_name || !*class_name || !method || !*method)
		return err_set(err, -EINVAL,
			       "a Java method needs both a class name and a method name");
	if ((rc = set_class(out, class_name, a, err)))
		return rc;
	out->name = arena_strdup(a, method);
	if ((rc = check_method_name(method, err)))
		return rc;
	out->params_given = params_given;
	return add_params(out, params, params_given ? n_params : 0, exact_params, a, err);
}

int java_sig_from_parts(const char *class_name, const char *method, const char *const *params,
			size_t n_params, bool params_given, struct arena *a, struct java_sig *out,
			struct err *err)
{
	return from_parts(class_name, method, params, n_params, params_given, true, a, out, err);
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

static bool is_modifier(const char *w, size_t n)
{
	static const char *const MODS[] = {
		"public", "protected", "private", "static", "final", "synchronized", "native",
		"abstract", "strictfp", "transient", "volatile", "default",
	};

	if (n && w[0] == '@')
		return true;
	for (size_t i = 0; i < sizeof(MODS) / sizeof(MODS[0]); i++)
		if (strlen(MODS[i]) == n && !memcmp(MODS[i], w, n))
			return true;
	return false;
}

/* Length of the type token at p: up to a blank outside "<...>", or up to the ';' of a
 * descriptor ("La/My Class;", whose names may hold spaces). */
static size_t type_token(const char *p)
{
	const char *q = p, *semi;
	int depth = 0;

	while (*q == '[')
		q++;
	if (*q == 'L' && (semi = strchr(q, ';')) && !memchr(q, '.', (size_t)(semi - q)))
		return (size_t)(semi + 1 - p);
	for (q = p; *q; q++) {
		if (*q == '<')
			depth++;
		else if (*q == '>')
			depth--;
		else if (isspace((unsigned char)*q) && depth <= 0)
			break;
	}
	return (size_t)(q - p);
}

/* Splits what precedes '(' into the return type and the qualified method: modifiers and
 * annotations ("public static", "@Foo") are skipped, the next type is the return type
 * ("int []" glued), and all the rest is <class>.<method>, spaces included (dex 040 names
 * may hold them).  Both point into prefix, which is cut in place. */
static void split_prefix(char *prefix, char **ret, char **qual)
{
	char *p = prefix;
	size_t n;

	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		n = type_token(p);
		if (!n || !is_modifier(p, n))
			break;
		p += n;
	}
	*ret = p;
	p += n;
	for (;;) {       /* "int []", "int [ ]": the brackets join the return type */
		char *q = p;
		while (isspace((unsigned char)*q))
			q++;
		if (*q != '[' && *q != ']')
			break;
		*p++ = *q++;
		memmove(p, q, strlen(q) + 1);
	}
	if (*p)
		*p++ = 0;
	while (isspace((unsigned char)*p))
		p++;
	*qual = p;
}

static int parse_text(const char *text, bool whole_params, struct arena *a,
		      struct java_sig *out, struct err *err)
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
	split_prefix(prefix, &ret, &qual);
	if (!*qual)
		return err_set(err, -EINVAL,
			       "method signature \"%s\": missing the return type before the method",
			       text);
	dot = strrchr(qual, '.');
	if (!dot || dot == qual || !dot[1])
		return err_set(err, -EINVAL,
			       "method signature \"%s\": \"%s\" is not <class>.<method>", text,
			       qual);
	*dot = 0;
	if ((rc = split_params(open + 1, (size_t)(close - open - 1), a, &params, &n)))
		return err_set(err, rc, "method signature \"%s\": bad parameter list", text);
	if ((rc = from_parts(qual, dot + 1, (const char *const *)params, n, true, whole_params, a,
			     out, err)))
		return err_prefix(err, "method signature \"%s\"", text);
	out->ret_desc = desc_dup(a, ret, false, &rc);
	if (rc) {
		type_err(err, "return", ret, rc);
		return err_prefix(err, "method signature \"%s\"", text);
	}
	return 0;
}

int java_sig_parse(const char *text, struct arena *a, struct java_sig *out, struct err *err)
{
	return parse_text(text, false, a, out, err);
}

int java_sig_parse_whole_params(const char *text, struct arena *a, struct java_sig *out,
				struct err *err)
{
	return parse_text(text, true, a, out, err);
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
