/* Test-only JSON parser and schema-subset validator; see json_check.h. */
#include "json_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

struct p {
	struct jc_doc *d;
	const char *s;
	size_t n, i;
};

static int bad(struct p *p, const char *what)
{
	snprintf(p->d->why, sizeof(p->d->why), "offset %zu: %s", p->i, what);
	return -1;
}

static int new_node(struct p *p, enum jc_type t, int parent)
{
	struct jc_doc *d = p->d;

	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 256;
		d->nodes = realloc(d->nodes, (size_t)d->cap * sizeof(*d->nodes));
		if (!d->nodes)
			abort();
	}
	d->nodes[d->n] = (struct jc_node){ .type = t, .parent = parent, .next = -1, .child = -1 };
	return d->n++;
}

static void ws(struct p *p)
{
	while (p->i < p->n && strchr(" \t\r\n", p->s[p->i]) && p->s[p->i])
		p->i++;
}

static int utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0], cp, len;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, cp = c & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (unsigned i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return (int)len;
}

static int string(struct p *p, const char **out, size_t *len)
{
	size_t start = ++p->i;

	while (p->i < p->n && p->s[p->i] != '"') {
		unsigned char c = (unsigned char)p->s[p->i];
		if (c < 0x20)
			return bad(p, "control character in string");
		if (c == '\\') {
			if (++p->i >= p->n)
				return bad(p, "truncated escape");
			char e = p->s[p->i];
			if (e == 'u') {
				for (int k = 1; k <= 4; k++)
					if (p->i + k >= p->n || !strchr("0123456789abcdefABCDEF",
									 p->s[p->i + k]))
						return bad(p, "bad \\u escape");
				p->i += 4;
			} else if (!strchr("\"\\/bfnrt", e)) {
				return bad(p, "bad escape");
			}
			p->i++;
			continue;
		}
		int l = utf8_len((const unsigned char *)p->s + p->i, p->n - p->i);
		if (!l)
			return bad(p, "invalid UTF-8 in string");
		p->i += (size_t)l;
	}
	if (p->i >= p->n)
		return bad(p, "unterminated string");
	*out = p->s + start;
	*len = p->i - start;
	p->i++;
	return 0;
}

static int number(struct p *p, int node)
{
	size_t start = p->i;
	bool is_int = true;

	if (p->s[p->i] == '-')
		p->i++;
	if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9')
		return bad(p, "bad number");
	if (p->s[p->i] == '0' && p->i + 1 < p->n && p->s[p->i + 1] >= '0' && p->s[p->i + 1] <= '9')
		return bad(p, "leading zero");
	while (p->i < p->n && strchr("0123456789.eE+-", p->s[p->i]) && p->s[p->i]) {
		if (strchr(".eE", p->s[p->i]))
			is_int = false;
		p->i++;
	}
	char tmp[64];
	size_t len = p->i - start;
	if (len >= sizeof(tmp))
		return bad(p, "number too long");
	memcpy(tmp, p->s + start, len);
	tmp[len] = 0;
	char *end;
	p->d->nodes[node].num = strtod(tmp, &end);
	if (*end)
		return bad(p, "bad number");
	p->d->nodes[node].is_int = is_int;
	p->d->nodes[node].str = p->s + start;
	p->d->nodes[node].str_len = len;
	return 0;
}

static int value(struct p *p, int parent, int depth);

static int members(struct p *p, int node, int depth, bool object)
{
	int last = -1;

	p->i++;
	ws(p);
	if (p->i < p->n && p->s[p->i] == (object ? '}' : ']')) {
		p->i++;
		return 0;
	}
	for (;;) {
		const char *key = NULL;
		size_t key_len = 0;
		ws(p);
		if (object) {
			if (p->i >= p->n || p->s[p->i] != '"')
				return bad(p, "expected a key");
			if (string(p, &key, &key_len) < 0)
				return -1;
			ws(p);
			if (p->i >= p->n || p->s[p->i] != ':')
				return bad(p, "expected ':'");
			p->i++;
		}
		int child = value(p, node, depth + 1);
		if (child < 0)
			return -1;
		p->d->nodes[child].key = key;
		p->d->nodes[child].key_len = key_len;
		if (last < 0)
			p->d->nodes[node].child = child;
		else
			p->d->nodes[last].next = child;
		last = child;
		ws(p);
		if (p->i < p->n && p->s[p->i] == ',') {
			p->i++;
			continue;
		}
		if (p->i < p->n && p->s[p->i] == (object ? '}' : ']')) {
			p->i++;
			return 0;
		}
		return bad(p, "expected ',' or a closing bracket");
	}
}

static int literal(struct p *p, const char *lit)
{
	size_t l = strlen(lit);

	if (p->n - p->i < l || memcmp(p->s + p->i, lit, l) != 0)
		return bad(p, "unexpected token");
	p->i += l;
	return 0;
}

static int value(struct p *p, int parent, int depth)
{
	int node;

	if (depth > MAX_DEPTH)
		return bad(p, "too deep");
	ws(p);
	if (p->i >= p->n)
		return bad(p, "unexpected end");
	char c = p->s[p->i];
	if (c == '{' || c == '[') {
		node = new_node(p, c == '{' ? JC_OBJECT : JC_ARRAY, parent);
		return members(p, node, depth, c == '{') < 0 ? -1 : node;
	}
	if (c == '"') {
		node = new_node(p, JC_STRING, parent);
		const char *s;
		size_t l;
		if (string(p, &s, &l) < 0)
			return -1;
		p->d->nodes[node].str = s;
		p->d->nodes[node].str_len = l;
		return node;
	}
	if (c == 't' || c == 'f') {
		node = new_node(p, JC_BOOL, parent);
		p->d->nodes[node].b = c == 't';
		return literal(p, c == 't' ? "true" : "false") < 0 ? -1 : node;
	}
	if (c == 'n') {
		node = new_node(p, JC_NULL, parent);
		return literal(p, "null") < 0 ? -1 : node;
	}
	node = new_node(p, JC_NUMBER, parent);
	return number(p, node) < 0 ? -1 : node;
}

int jc_parse(struct jc_doc *d, const char *text, size_t n)
{
	struct p p = { .d = d, .s = text, .n = n };

	memset(d, 0, sizeof(*d));
	if (value(&p, -1, 0) < 0)
		return -1;
	ws(&p);
	if (p.i != n)
		return bad(&p, "trailing characters");
	return 0;
}

void jc_free(struct jc_doc *d)
{
	free(d->nodes);
	d->nodes = NULL;
}

static bool key_eq(const struct jc_node *nd, const char *key)
{
	return nd->key && strlen(key) == nd->key_len && !memcmp(nd->key, key, nd->key_len);
}

int jc_get(const struct jc_doc *d, int obj, const char *key)
{
	if (obj < 0 || d->nodes[obj].type != JC_OBJECT)
		return -1;
	for (int c = d->nodes[obj].child; c >= 0; c = d->nodes[c].next)
		if (key_eq(&d->nodes[c], key))
			return c;
	return -1;
}

int jc_count(const struct jc_doc *d, int node)
{
	int n = 0;

	for (int c = node >= 0 ? d->nodes[node].child : -1; c >= 0; c = d->nodes[c].next)
		n++;
	return n;
}

bool jc_str_eq(const struct jc_doc *d, int node, const char *s)
{
	return node >= 0 && d->nodes[node].type == JC_STRING &&
	       d->nodes[node].str_len == strlen(s) && !memcmp(d->nodes[node].str, s, strlen(s));
}

/* ---- schema subset ---- */

struct v {
	const struct jc_doc *sc, *doc;
	char *why;
	size_t why_len;
	char path[256];
};

static int vfail(struct v *v, const char *what)
{
	snprintf(v->why, v->why_len, "%s: %s", v->path[0] ? v->path : "(root)", what);
	return -1;
}

static const char *type_name(enum jc_type t)
{
	static const char *const names[] = { "null", "boolean", "number", "string", "array",
					     "object" };
	return names[t];
}

static bool type_ok(struct v *v, int s_type, int at)
{
	const struct jc_node *n = &v->doc->nodes[at];
	const struct jc_node *t = &v->sc->nodes[s_type];

	if (t->type == JC_ARRAY) {
		for (int c = t->child; c >= 0; c = v->sc->nodes[c].next)
			if (type_ok(v, c, at))
				return true;
		return false;
	}
	if (jc_str_eq(v->sc, s_type, "integer"))
		return n->type == JC_NUMBER && n->is_int;
	return jc_str_eq(v->sc, s_type, type_name(n->type));
}

static bool same_value(const struct jc_doc *a, int x, const struct jc_doc *b, int y)
{
	const struct jc_node *p = &a->nodes[x], *q = &b->nodes[y];

	if (p->type != q->type)
		return false;
	if (p->type == JC_STRING || p->type == JC_NUMBER)
		return p->str_len == q->str_len && !memcmp(p->str, q->str, p->str_len);
	if (p->type == JC_BOOL)
		return p->b == q->b;
	return p->type == JC_NULL;
}

static int check(struct v *v, int s, int at);

static int resolve_ref(struct v *v, int s)
{
	int ref = jc_get(v->sc, s, "$ref");
	const struct jc_node *r;
	char name[128];

	if (ref < 0)
		return s;
	r = &v->sc->nodes[ref];
	if (r->str_len < 8 || memcmp(r->str, "#/$defs/", 8) || r->str_len - 8 >= sizeof(name))
		return -1;
	memcpy(name, r->str + 8, r->str_len - 8);
	name[r->str_len - 8] = 0;
	return jc_get(v->sc, jc_get(v->sc, 0, "$defs"), name);
}

static int check_object(struct v *v, int s, int at)
{
	int props = jc_get(v->sc, s, "properties"), req = jc_get(v->sc, s, "required");
	int addl = jc_get(v->sc, s, "additionalProperties");
	size_t plen = strlen(v->path);

	for (int r = req >= 0 ? v->sc->nodes[req].child : -1; r >= 0; r = v->sc->nodes[r].next) {
		char key[128];
		snprintf(key, sizeof(key), "%.*s", (int)v->sc->nodes[r].str_len,
			 v->sc->nodes[r].str);
		if (jc_get(v->doc, at, key) < 0) {
			snprintf(v->path + plen, sizeof(v->path) - plen, ".%s", key);
			return vfail(v, "required member missing");
		}
	}
	for (int c = v->doc->nodes[at].child; c >= 0; c = v->doc->nodes[c].next) {
		char key[128];
		snprintf(key, sizeof(key), "%.*s", (int)v->doc->nodes[c].key_len,
			 v->doc->nodes[c].key);
		snprintf(v->path + plen, sizeof(v->path) - plen, ".%s", key);
		int sub = jc_get(v->sc, props, key);
		if (sub < 0 && addl >= 0 && v->sc->nodes[addl].type == JC_BOOL &&
		    !v->sc->nodes[addl].b)
			return vfail(v, "member not allowed by the schema");
		if (sub < 0 && addl >= 0 && v->sc->nodes[addl].type == JC_OBJECT)
			sub = addl;
		if (sub >= 0 && check(v, sub, c) < 0)
			return -1;
		v->path[plen] = 0;
	}
	return 0;
}

static int check_array(struct v *v, int s, int at)
{
	int items = jc_get(v->sc, s, "items");
	size_t plen = strlen(v->path);
	int i = 0;

	if (items < 0)
		return 0;
	for (int c = v->doc->nodes[at].child; c >= 0; c = v->doc->nodes[c].next, i++) {
		snprintf(v->path + plen, sizeof(v->path) - plen, "[%d]", i);
		if (check(v, items, c) < 0)
			return -1;
		v->path[plen] = 0;
	}
	return 0;
}

static int check_one_of(struct v *v, int one_of, int at)
{
	char saved[256], why[256] = "no alternative matched";
	int matched = 0;

	memcpy(saved, v->path, sizeof(saved));
	for (int alt = v->sc->nodes[one_of].child; alt >= 0; alt = v->sc->nodes[alt].next) {
		struct v sub = { .sc = v->sc, .doc = v->doc, .why = why, .why_len = sizeof(why) };
		memcpy(sub.path, saved, sizeof(saved));
		if (check(&sub, alt, at) == 0)
			matched++;
	}
	if (matched != 1)
		return vfail(v, matched ? "more than one oneOf alternative matched" : why);
	return 0;
}

static int check(struct v *v, int s, int at)
{
	int k;

	s = resolve_ref(v, s);
	if (s < 0)
		return vfail(v, "unresolvable $ref");
	if ((k = jc_get(v->sc, s, "type")) >= 0 && !type_ok(v, k, at))
		return vfail(v, "wrong type");
	if ((k = jc_get(v->sc, s, "const")) >= 0 && !same_value(v->sc, k, v->doc, at))
		return vfail(v, "not the const value");
	if ((k = jc_get(v->sc, s, "enum")) >= 0) {
		bool any = false;
		for (int c = v->sc->nodes[k].child; c >= 0 && !any; c = v->sc->nodes[c].next)
			any = same_value(v->sc, c, v->doc, at);
		if (!any)
			return vfail(v, "not one of the enum values");
	}
	if ((k = jc_get(v->sc, s, "minimum")) >= 0 && v->doc->nodes[at].type == JC_NUMBER &&
	    v->doc->nodes[at].num < v->sc->nodes[k].num)
		return vfail(v, "below minimum");
	if ((k = jc_get(v->sc, s, "oneOf")) >= 0 && check_one_of(v, k, at) < 0)
		return -1;
	if (v->doc->nodes[at].type == JC_OBJECT && check_object(v, s, at) < 0)
		return -1;
	if (v->doc->nodes[at].type == JC_ARRAY && check_array(v, s, at) < 0)
		return -1;
	return 0;
}

int jc_validate(const struct jc_doc *schema, const struct jc_doc *doc, int at, char *why,
		size_t why_len)
{
	struct v v = { .sc = schema, .doc = doc, .why = why, .why_len = why_len };

	return check(&v, 0, at);
}
