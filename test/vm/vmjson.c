#include "vmjson.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_DEPTH 32

struct parser {
	struct jdoc *doc;
	const char *p, *end;
};

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end &&
	       (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static int new_node(struct parser *ps, enum jtype type)
{
	struct jdoc *d = ps->doc;

	if (d->count == d->cap) {
		int cap = d->cap ? d->cap * 2 : 64;
		struct jnode *n = realloc(d->n, (size_t)cap * sizeof(*n));
		if (!n)
			return -1;
		d->n = n;
		d->cap = cap;
	}
	struct jnode *n = &d->n[d->count];
	memset(n, 0, sizeof(*n));
	n->type = type;
	n->child = -1;
	n->next = -1;
	return d->count++;
}

/* A string's body: P at the opening quote; S and LEN get the text between the quotes. */
static int scan_string(struct parser *ps, const char **s, size_t *len)
{
	const char *q = ps->p + 1;

	while (q < ps->end && *q != '"') {
		if (*q == '\\') {
			if (q + 1 >= ps->end)
				return -1;
			q++;
		} else if ((unsigned char)*q < 0x20) {
			return -1;
		}
		q++;
	}
	if (q >= ps->end)
		return -1;
	*s = ps->p + 1;
	*len = (size_t)(q - (ps->p + 1));
	ps->p = q + 1;
	return 0;
}

static int scan_literal(struct parser *ps, const char *word, enum jtype type)
{
	size_t n = strlen(word);

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
		return -1;
	int i = new_node(ps, type);
	if (i < 0)
		return -1;
	ps->doc->n[i].s = ps->p;
	ps->doc->n[i].len = n;
	ps->p += n;
	return i;
}

static int scan_number(struct parser *ps)
{
	const char *q = ps->p;

	if (q < ps->end && *q == '-')
		q++;
	const char *digits = q;
	while (q < ps->end && (strchr("0123456789.eE+-", *q) != NULL))
		q++;
	if (q == digits)
		return -1;
	int i = new_node(ps, J_NUM);
	if (i < 0)
		return -1;
	ps->doc->n[i].s = ps->p;
	ps->doc->n[i].len = (size_t)(q - ps->p);
	ps->p = q;
	return i;
}

static int parse_value(struct parser *ps, int depth);

/* Links child C after the last child of container PARENT (LAST tracks it). */
static void append_child(struct jdoc *d, int parent, int *last, int c)
{
	if (*last < 0)
		d->n[parent].child = c;
	else
		d->n[*last].next = c;
	*last = c;
}

static int parse_container(struct parser *ps, int depth, bool object)
{
	const char close = object ? '}' : ']';
	const char *start = ps->p;
	int self = new_node(ps, object ? J_OBJ : J_ARR), last = -1;

	if (self < 0)
		return -1;
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		goto done;
	}
	for (;;) {
		const char *key = NULL;
		size_t keylen = 0;
		skip_ws(ps);
		if (object) {
			if (ps->p >= ps->end || *ps->p != '"' || scan_string(ps, &key, &keylen) < 0)
				return -1;
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':')
				return -1;
			ps->p++;
		}
		int c = parse_value(ps, depth + 1);
		if (c < 0)
			return -1;
		ps->doc->n[c].key = key;
		ps->doc->n[c].keylen = keylen;
		append_child(ps->doc, self, &last, c);
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			break;
		}
		return -1;
	}
done:
	ps->doc->n[self].s = start;
	ps->doc->n[self].len = (size_t)(ps->p - start);
	return self;
}

static int parse_value(struct parser *ps, int depth)
{
	if (depth > JSON_MAX_DEPTH)
		return -1;
	skip_ws(ps);
	if (ps->p >= ps->end)
		return -1;
	switch (*ps->p) {
	case '{':
		return parse_container(ps, depth, true);
	case '[':
		return parse_container(ps, depth, false);
	case '"': {
		int i = new_node(ps, J_STR);
		if (i < 0)
			return -1;
		const char *s;
		size_t len;
		if (scan_string(ps, &s, &len) < 0)
			return -1;
		ps->doc->n[i].s = s;
		ps->doc->n[i].len = len;
		return i;
	}
	case 't':
		return scan_literal(ps, "true", J_BOOL);
	case 'f':
		return scan_literal(ps, "false", J_BOOL);
	case 'n':
		return scan_literal(ps, "null", J_NULL);
	default:
		return scan_number(ps);
	}
}

int json_parse(struct jdoc *doc, const char *text, size_t len)
{
	struct parser ps = { doc, text, text + len };

	doc->count = 0;
	if (parse_value(&ps, 0) != 0)
		return -1;
	skip_ws(&ps);
	return ps.p == ps.end ? 0 : -1;
}

void json_free(struct jdoc *doc)
{
	free(doc->n);
	doc->n = NULL;
	doc->count = doc->cap = 0;
}

const struct jnode *json_get(const struct jdoc *doc, const struct jnode *obj, const char *key)
{
	size_t klen = strlen(key);

	if (!obj || obj->type != J_OBJ)
		return NULL;
	for (int c = obj->child; c >= 0; c = doc->n[c].next) {
		const struct jnode *m = &doc->n[c];
		if (m->keylen == klen && memcmp(m->key, key, klen) == 0)
			return m;
	}
	return NULL;
}

const struct jnode *json_at(const struct jdoc *doc, const struct jnode *arr, int i)
{
	if (!arr || arr->type != J_ARR)
		return NULL;
	for (int c = arr->child; c >= 0; c = doc->n[c].next)
		if (i-- == 0)
			return &doc->n[c];
	return NULL;
}

int json_count(const struct jdoc *doc, const struct jnode *arr)
{
	int n = 0;

	if (!arr || (arr->type != J_ARR && arr->type != J_OBJ))
		return 0;
	for (int c = arr->child; c >= 0; c = doc->n[c].next)
		n++;
	return n;
}

bool json_str_is(const struct jnode *n, const char *s)
{
	return n && n->type == J_STR && n->len == strlen(s) && memcmp(n->s, s, n->len) == 0;
}

int json_u64(const struct jnode *n, unsigned long long *out)
{
	char buf[32];
	char *end;

	if (!n || (n->type != J_NUM && n->type != J_STR) || n->len == 0 || n->len >= sizeof(buf))
		return -1;
	memcpy(buf, n->s, n->len);
	buf[n->len] = '\0';
	errno = 0;
	if (n->type == J_STR) {
		if (n->len < 3 || buf[0] != '0' || (buf[1] != 'x' && buf[1] != 'X'))
			return -1;
		*out = strtoull(buf + 2, &end, 16);
	} else if (buf[0] == '-') {
		*out = (unsigned long long)strtoll(buf, &end, 10);
	} else {
		*out = strtoull(buf, &end, 10);
	}
	return errno == 0 && *end == '\0' ? 0 : -1;
}

static int hex4(const char *p, const char *end, unsigned *out)
{
	*out = 0;
	if (end - p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0') :
			     c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) :
			     c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16;
		if (d == 16)
			return -1;
		*out = *out << 4 | d;
	}
	return 0;
}

/* Appends code point CP as UTF-8; the new length, or -1 when it does not fit. */
static long put_utf8(char *buf, size_t size, size_t n, unsigned cp)
{
	unsigned char u[4];
	size_t k;

	if (cp < 0x80) {
		u[0] = (unsigned char)cp;
		k = 1;
	} else if (cp < 0x800) {
		u[0] = (unsigned char)(0xC0 | cp >> 6);
		u[1] = (unsigned char)(0x80 | (cp & 0x3F));
		k = 2;
	} else if (cp < 0x10000) {
		u[0] = (unsigned char)(0xE0 | cp >> 12);
		u[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		u[2] = (unsigned char)(0x80 | (cp & 0x3F));
		k = 3;
	} else {
		u[0] = (unsigned char)(0xF0 | cp >> 18);
		u[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
		u[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		u[3] = (unsigned char)(0x80 | (cp & 0x3F));
		k = 4;
	}
	if (n + k >= size)
		return -1;
	memcpy(buf + n, u, k);
	return (long)(n + k);
}

/* One escape at P (just after the backslash); moves P past it. */
static long decode_escape(const char **pp, const char *end, char *buf, size_t size, size_t n)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *p = *pp;
	unsigned cp, lo;

	if (p >= end)
		return -1;
	const char *k = strchr(from, *p);
	if (*p != 'u') {
		if (!k || !*p)
			return -1;
		*pp = p + 1;
		return put_utf8(buf, size, n, (unsigned char)to[k - from]);
	}
	if (hex4(p + 1, end, &cp) < 0)
		return -1;
	p += 5;
	if (cp >= 0xD800 && cp < 0xDC00) {
		if (end - p < 6 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, end, &lo) < 0 ||
		    lo < 0xDC00 || lo > 0xDFFF)
			return -1;
		cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
		p += 6;
	}
	*pp = p;
	return put_utf8(buf, size, n, cp);
}

long json_str_decode(const struct jnode *n, char *buf, size_t size)
{
	size_t len = 0;

	if (!n || n->type != J_STR || size == 0)
		return -1;
	for (const char *p = n->s, *end = n->s + n->len; p < end;) {
		if (*p != '\\') {
			if (len + 1 >= size)
				return -1;
			buf[len++] = *p++;
			continue;
		}
		p++;
		long r = decode_escape(&p, end, buf, size, len);
		if (r < 0)
			return -1;
		len = (size_t)r;
	}
	buf[len] = '\0';
	return (long)len;
}
