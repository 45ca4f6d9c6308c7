/* pattern.c — parsing trace patterns and matching their globs (see pattern.h);
 * the matching against files is pattern_match.c.
 *
 * A glob is compiled into tokens over code points (UTF-8 decoded leniently: a
 * stray byte is its own code point) and run as an NFA whose state set is a
 * byte per token, so a hostile glob costs O(tokens x name length), never
 * exponential backtracking. */
#include "plan/pattern.h"
#include "plan/pattern_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PATTERN_LEN 4096

static const char *const REASONS[MATCH_N_REASONS] = {
	[MATCH_OK] = "matched",
	[MATCH_NOT_COMPILED] = "not compiled (JIT or interpreted)",
	[MATCH_SHARED_CODE] = "code shared with a method outside the pattern",
	[MATCH_SAME_CODE] = "same code as another match (one probe serves both)",
	[MATCH_ABSTRACT_OR_NATIVE] = "abstract or native",
	[MATCH_UNPROBEABLE] = "code a uprobe cannot take",
	[MATCH_GUARDRAIL] = "refused by the guardrail",
	[MATCH_NO_EXITS] = "exits not provable",
	[MATCH_OVER_MAX] = "over --max-probes",
};

const char *match_left_out_name(enum match_left_out r)
{
	return (unsigned)r < MATCH_N_REASONS ? REASONS[r] : "?";
}

/* Lenient UTF-8 decoding: one code point from s (n > 0 bytes), its length in *len. */
uint32_t pat_cp(const char *s, size_t n, size_t *len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t need = u[0] < 0x80 ? 1 : (u[0] & 0xe0) == 0xc0 ? 2 : (u[0] & 0xf0) == 0xe0 ? 3
		      : (u[0] & 0xf8) == 0xf0 ? 4 : 0;
	uint32_t cp;

	if (!need || need > n) {
		*len = 1;
		return 0x110000u + u[0];   /* a stray byte: outside Unicode, matches itself */
	}
	cp = need == 1 ? u[0] : u[0] & (0x7f >> need);
	for (size_t i = 1; i < need; i++) {
		if ((u[i] & 0xc0) != 0x80) {
			*len = 1;
			return 0x110000u + u[0];
		}
		cp = cp << 6 | (u[i] & 0x3f);
	}
	*len = need;
	return cp;
}

/* Compiles glob text [s, s+n) into g; -EINVAL with err naming the column. */
int glob_compile(const char *what, const char *s, size_t n, size_t col0, bool java,
		 struct glob *g, struct err *err)
{
	size_t i = 0;

	memset(g, 0, sizeof(*g));
	g->java = java;
	g->tok = calloc(n + 1, sizeof(*g->tok));
	if (!g->tok)
		return err_set(err, -ENOMEM, "out of memory");
	while (i < n) {
		struct glob_tok *t = &g->tok[g->n];
		size_t l;
		if (s[i] == '*') {
			bool dbl = java && i + 1 < n && s[i + 1] == '*';
			t->kind = dbl ? GT_DSTAR : GT_STAR;
			i += dbl ? 2 : 1;
			while (i < n && s[i] == '*')   /* "***" is "**" */
				i++;
			g->has_wild = true;
		} else if (s[i] == '?') {
			t->kind = GT_ANY;
			i++;
			g->has_wild = true;
		} else if (s[i] == '[' && !(i + 1 < n && s[i + 1] == ']')) {
			size_t j = i + 1;
			t->kind = GT_SET;
			if (j < n && (s[j] == '!' || s[j] == '^')) {
				t->negate = true;
				j++;
			}
			size_t start = j;
			while (j < n && s[j] != ']')
				j += s[j] == '\\' && j + 1 < n ? 2 : 1;
			if (j >= n) {
				glob_free(g);
				return err_set(err, -EINVAL,
					       "%s: '[' at column %zu has no closing ']'", what,
					       col0 + i + 1);
			}
			t->set = s + start;
			t->set_len = j - start;
			i = j + 1;
			g->has_wild = true;
		} else {
			if (s[i] == '\\') {
				if (++i >= n) {
					glob_free(g);
					return err_set(err, -EINVAL, "%s: '\\' at the end escapes "
						       "nothing", what);
				}
			}
			t->kind = GT_LIT;
			t->cp = pat_cp(s + i, n - i, &l);
			i += l;
		}
		g->n++;
	}
	return 0;
}

void glob_free(struct glob *g)
{
	free(g->tok);
	memset(g, 0, sizeof(*g));
}

static bool set_has(const struct glob_tok *t, uint32_t c)
{
	size_t i = 0, l, l2;
	bool in = false;

	while (i < t->set_len && !in) {
		uint32_t lo = pat_cp(t->set + i, t->set_len - i, &l), hi = lo;
		if (t->set[i] == '\\' && i + 1 < t->set_len)
			lo = hi = pat_cp(t->set + i + 1, t->set_len - i - 1, &l), l++;
		i += l;
		if (i + 1 < t->set_len && t->set[i] == '-') {
			hi = pat_cp(t->set + i + 1, t->set_len - i - 1, &l2);
			i += 1 + l2;
		}
		in = c >= lo && c <= hi;
	}
	return in != t->negate;
}

/* Adds state k and the states reachable from it over stars (which match empty). */
static void add_state(const struct glob *g, unsigned char *st, size_t k)
{
	while (k <= g->n && !st[k]) {
		st[k] = 1;
		if (k < g->n && (g->tok[k].kind == GT_STAR || g->tok[k].kind == GT_DSTAR))
			k++;
		else
			break;
	}
}

bool glob_match(const struct glob *g, const char *name, size_t len)
{
	unsigned char small[2][128], *cur, *nxt;
	bool any, ok;

	if (g->n + 1 <= sizeof(small[0])) {
		cur = small[0];
		nxt = small[1];
	} else if (!(cur = calloc(2, g->n + 1))) {
		return false;
	} else {
		nxt = cur + g->n + 1;
	}
	memset(cur, 0, g->n + 1);
	add_state(g, cur, 0);
	for (size_t i = 0, l; i < len; i += l) {
		uint32_t c = pat_cp(name + i, len - i, &l);
		bool dot = g->java && c == '.';
		memset(nxt, 0, g->n + 1);
		any = false;
		for (size_t k = 0; k < g->n; k++) {
			const struct glob_tok *t = &g->tok[k];
			if (!cur[k])
				continue;
			if ((t->kind == GT_STAR && !dot) || t->kind == GT_DSTAR) {
				add_state(g, nxt, k);
				any = true;
			} else if ((t->kind == GT_LIT && t->cp == c) ||
				   (t->kind == GT_ANY && !dot) ||
				   (t->kind == GT_SET && !dot && set_has(t, c))) {
				add_state(g, nxt, k + 1);
				any = true;
			}
		}
		unsigned char *sw = cur;
		cur = nxt;
		nxt = sw;
		if (!any)
			break;
	}
	ok = cur[g->n];
	if (cur != small[0] && cur != small[1])
		free(cur < nxt ? cur : nxt);
	return ok;
}

bool pattern_glob_match(const char *glob, const char *name, bool java)
{
	struct glob g;
	struct err e;
	bool ok;

	if (glob_compile("glob", glob, strlen(glob), 0, java, &g, &e))
		return false;
	ok = glob_match(&g, name, strlen(name));
	glob_free(&g);
	return ok;
}

/* ---- parsing ------------------------------------------------------------------------ */

static bool ends_with(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);
	return n >= k && !memcmp(s + n - k, suf, k);
}

static bool java_file_name(const char *s, size_t n)
{
	return ends_with(s, n, ".oat") || ends_with(s, n, ".odex") || ends_with(s, n, ".vdex") ||
	       ends_with(s, n, ".jar") || ends_with(s, n, ".apk");
}

/* The first ':' that is neither escaped nor part of "::"; n when there is none. */
static size_t file_colon(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\') {
			i++;
			continue;
		}
		if (s[i] == ':') {
			if (i + 1 < n && s[i + 1] == ':') {
				i++;
				continue;
			}
			return i;
		}
	}
	return n;
}

/* Index of the first unescaped c in [s, s+n) outside [...] sets, or n. */
static size_t find_meta(const char *s, size_t n, char c, bool last)
{
	size_t r = n;
	bool in_set = false;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\') {
			i++;
		} else if (in_set) {
			in_set = s[i] != ']';
		} else if (s[i] == '[') {
			if (i + 1 < n && s[i + 1] == ']') {   /* "[]": array brackets */
				i++;
				continue;
			}
			in_set = true;
		} else if (s[i] == c) {
			r = i;
			if (!last)
				return r;
		}
	}
	return r;
}

static int bad(struct err *err, const char *text, const char *fmt, const char *detail)
{
	char m[512];
	snprintf(m, sizeof(m), fmt, detail);
	return err_set(err, -EINVAL, "pattern '%.200s': %s", text, m);
}

static int add_param(struct trace_pattern *p, const char *s, size_t n, struct err *err)
{
	char what[64];

	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (!n)
		return bad(err, p->text, "empty parameter %s (write '()' for no parameters)",
			   "in the list");
	struct glob *g = &p->params[p->n_params];
	snprintf(what, sizeof(what), "pattern '%.30s' parameter %zu", p->text, p->n_params + 1);
	if (glob_compile(what, s, n, (size_t)(s - p->text), true, g, err))
		return -EINVAL;
	g->any_params = n == 2 && s[0] == '*' && s[1] == '*';
	g->simple = !memchr(s, '.', n);
	p->n_params++;
	return 0;
}

static int parse_params(struct trace_pattern *p, const char *s, size_t n, struct err *err)
{
	size_t start = 0, cap = 1;

	for (size_t i = 0; i < n; i++)
		cap += s[i] == ',';
	if (cap > 255)
		return bad(err, p->text, "%s", "more than 255 parameters");
	if (!(p->params = calloc(cap, sizeof(*p->params))))
		return err_set(err, -ENOMEM, "out of memory");
	size_t k = 0;
	while (k < n && (s[k] == ' ' || s[k] == '\t'))
		k++;
	if (k == n)
		return 0;   /* "()" */
	for (size_t i = 0; i <= n; i++) {
		if (i < n && (s[i] != ',' || (i && s[i - 1] == '\\')))
			continue;
		if (add_param(p, s + start, i - start, err))
			return -EINVAL;
		start = i + 1;
	}
	return 0;
}

static int parse_java(struct trace_pattern *p, const char *s, size_t n, struct err *err)
{
	size_t open = find_meta(s, n, '(', false), dot;
	char what[64];

	if (open < n) {
		if (s[n - 1] != ')')
			return bad(err, p->text, "%s", "the parameter list must end with ')'");
		if (find_meta(s + open + 1, n - open - 2, '(', false) < n - open - 2 ||
		    find_meta(s + open + 1, n - open - 2, ')', false) < n - open - 2)
			return bad(err, p->text, "%s", "unbalanced parentheses");
		p->params_given = true;
		if (parse_params(p, s + open + 1, n - open - 2, err))
			return -EINVAL;
	} else if (find_meta(s, n, ')', false) < n) {
		return bad(err, p->text, "%s", "')' without '('");
	}
	dot = find_meta(s, open, '.', true);
	if (dot == open)
		return bad(err, p->text, "%s", "expected CLASS.METHOD (a Java pattern needs a '.' "
			   "between class and method; a native one LIBRARY:SYMBOL)");
	if (dot == 0 || s[dot - 1] == '.')
		return bad(err, p->text, "%s", "empty class name (or package segment) before '.'");
	if (dot + 1 == open)
		return bad(err, p->text, "%s", "empty method name after the last '.'");
	if (s[0] == '.')
		return bad(err, p->text, "%s", "the class name starts with '.'");
	for (size_t i = 1; i < dot; i++)
		if (s[i] == '.' && s[i - 1] == '.' && !(i > 1 && s[i - 2] == '\\'))
			return bad(err, p->text, "%s", "empty package segment ('..')");
	snprintf(what, sizeof(what), "pattern '%.40s' class", p->text);
	if (glob_compile(what, s, dot, (size_t)(s - p->text), true, &p->cls, err))
		return -EINVAL;
	p->cls.simple = find_meta(s, dot, '.', false) == dot;
	snprintf(what, sizeof(what), "pattern '%.40s' method", p->text);
	if (glob_compile(what, s + dot + 1, open - dot - 1, (size_t)(s + dot + 1 - p->text), true,
			 &p->method, err))
		return -EINVAL;
	p->cls_text = strndup(s, dot);
	p->method_text = strndup(s + dot + 1, open - dot - 1);
	if (!p->cls_text || !p->method_text)
		return err_set(err, -ENOMEM, "out of memory");
	return 0;
}

/* bpftrace's `uprobe:FILE:FUNC` (`uretprobe:`, `u:`, `ur:`): the probe kind
 * is no file name here; say how this tool writes it. */
static int bpftrace_style(const struct trace_pattern *p, const char *s, size_t c, size_t n,
			  struct err *err)
{
	static const char *const kinds[] = { "uprobe", "uretprobe", "u", "ur" };
	const char *rest = s + c + 1;
	size_t rest_n = n - c - 1;
	bool ret = c == 9 || c == 2;                     /* uretprobe, ur */
	bool named = c > 2;                              /* uprobe, uretprobe */

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (strlen(kinds[i]) != c || memcmp(s, kinds[i], c))
			continue;
		if (!named && file_colon(rest, rest_n) == rest_n)
			return 0;  /* `u:sym` may be a library named u */
		return err_set(err, -EINVAL, "pattern '%.200s' is bpftrace's probe syntax; "
			       "uprobestats takes FILE:FUNCTION (here '%.200s')%s, or a Java "
			       "CLASS.METHOD, with globs (docs/patterns.md)", p->text, rest,
			       ret ? " with --ret for the return" : "");
	}
	return 0;
}

static int parse_body(struct trace_pattern *p, struct err *err)
{
	const char *s = p->text;
	size_t n = strlen(s), c = file_colon(s, n);

	if (!n)
		return err_set(err, -EINVAL, "empty pattern");
	if (n > MAX_PATTERN_LEN)
		return err_set(err, -EINVAL, "pattern of %zu bytes (at most %d)", n,
			       MAX_PATTERN_LEN);
	if (memchr(s, '\n', n))
		return bad(err, p->text, "%s", "contains a newline");
	if (c < n) {
		if (c == 0)
			return bad(err, p->text, "%s", "empty file or library name before ':'");
		if (bpftrace_style(p, s, c, n, err))
			return -EINVAL;
		if (!(p->file = strndup(s, c)))
			return err_set(err, -ENOMEM, "out of memory");
		p->java = java_file_name(s, c);
		s += c + 1;
		n -= c + 1;
		if (!n)
			return bad(err, p->text, "%s", p->java ? "nothing after ':' (expected "
				   "CLASS.METHOD)" : "nothing after ':' (expected a symbol glob)");
	} else {
		p->java = true;
	}
	if (p->java)
		return parse_java(p, s, n, err);
	char what[64];
	snprintf(what, sizeof(what), "pattern '%.40s' symbol", p->text);
	return glob_compile(what, s, n, (size_t)(s - p->text), false, &p->sym, err);
}

int pattern_parse(const char *text, struct trace_pattern **out, struct err *err)
{
	struct trace_pattern *p = calloc(1, sizeof(*p));
	int rc;

	*out = NULL;
	if (!p || !(p->text = strdup(text))) {
		free(p);
		return err_set(err, -ENOMEM, "out of memory");
	}
	if ((rc = parse_body(p, err))) {
		pattern_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

void pattern_free(struct trace_pattern *p)
{
	if (!p)
		return;
	glob_free(&p->cls);
	glob_free(&p->method);
	glob_free(&p->sym);
	for (size_t i = 0; i < p->n_params; i++)
		glob_free(&p->params[i]);
	free(p->params);
	free(p->cls_text);
	free(p->method_text);
	free(p->file);
	free(p->text);
	free(p);
}

bool pattern_is_java(const struct trace_pattern *p)
{
	return p->java;
}

const char *pattern_text(const struct trace_pattern *p)
{
	return p->text;
}

const char *pattern_file(const struct trace_pattern *p)
{
	return p->file;
}
