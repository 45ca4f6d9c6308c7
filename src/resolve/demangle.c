/* demangle.c — see demangle.h.  A recursive-descent parser builds a small node
 * tree (fixed pools, no malloc), keeping the substitution and template
 * argument tables the ABI defines; a printer writes names, and types in two
 * halves (left/right of the declarator) as c++filt does for pointers to
 * functions and arrays. */
#include "resolve/demangle.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resolve/demangle_priv.h"

static int mk(struct dm *d, enum nk k, const char *s, size_t sl, int a, int b)
{
	if (d->err)
		return -1;
	if (d->nn >= MAX_NODES)
		return fail(d, -ENAMETOOLONG);
	d->n[d->nn] = (struct node){ .k = k, .s = s, .sl = sl, .a = a, .b = b };
	return d->nn++;
}

/* Text kept in the pool (numbers turned into text). */
static int mkpool(struct dm *d, const char *text)
{
	size_t l = strlen(text);
	if (d->pl + l + 1 > sizeof(d->pool))
		return fail(d, -ENAMETOOLONG);
	memcpy(d->pool + d->pl, text, l + 1);
	d->pl += l + 1;
	return mk(d, K_NAME, d->pool + d->pl - l - 1, l, -1, -1);
}

static int mks(struct dm *d, const char *s)
{
	return mk(d, K_NAME, s, strlen(s), -1, -1);
}

static void push_sub(struct dm *d, int n)
{
	if (n < 0 || d->err)
		return;
	if (d->ns >= MAX_SUBS) {
		fail(d, -ENAMETOOLONG);
		return;
	}
	d->subs[d->ns++] = n;
}

static bool eat(struct dm *d, const char *s)
{
	size_t k = strlen(s);
	if (d->p < d->end && (size_t)(d->end - d->p) >= k && !memcmp(d->p, s, k)) {
		d->p += k;
		return true;
	}
	return false;
}

static char peek(const struct dm *d, int i)
{
	return d->p < d->end && d->end - d->p > i ? d->p[i] : 0;
}

static bool num(struct dm *d, long *v)
{
	long x = 0;
	if (!(peek(d, 0) >= '0' && peek(d, 0) <= '9'))
		return false;
	while (peek(d, 0) >= '0' && peek(d, 0) <= '9') {
		x = x * 10 + (*d->p++ - '0');
		if (x > 100000)
			return fail(d, -EINVAL), false;
	}
	*v = x;
	return true;
}

/* seq-id "_" (0) or base-36 + "_" (n + 1); after "S" / "T". */
static long seq_id(struct dm *d)
{
	long v = 0;
	if (eat(d, "_"))
		return 0;
	while (1) {
		char c = peek(d, 0);
		if (c >= '0' && c <= '9')
			v = v * 36 + (c - '0');
		else if (c >= 'A' && c <= 'Z')
			v = v * 36 + (c - 'A' + 10);
		else
			break;
		d->p++;
		if (v > 100000)
			return fail(d, -EINVAL);
	}
	if (!eat(d, "_"))
		return fail(d, -EINVAL);
	return v + 1;
}

static int list_begin(struct dm *d)
{
	return d->nl;
}

static int list_add(struct dm *d, int item)
{
	if (d->nl >= MAX_LIST)
		return fail(d, -ENAMETOOLONG);
	d->list[d->nl++] = item;
	return 0;
}

static int type(struct dm *d);
static int name(struct dm *d, bool *is_template, bool *is_cdtor);
static int encoding(struct dm *d);

/* ---- names -------------------------------------------------------------------------- */

static int source_name(struct dm *d)
{
	long len;

	if (!num(d, &len) || len <= 0 || len > d->end - d->p)
		return fail(d, -EINVAL);
	const char *s = d->p;
	d->p += len;
	d->last_src = s;
	d->last_src_len = (size_t)len;
	if (len >= 10 && !memcmp(s, "_GLOBAL_", 8) && (s[8] == '_' || s[8] == '.' || s[8] == '$')
	    && s[9] == 'N')
		return mks(d, "(anonymous namespace)");
	return mk(d, K_NAME, s, (size_t)len, -1, -1);
}

static const char *const OPS[][2] = {
	{ "nw", "new" }, { "na", "new[]" }, { "dl", "delete" }, { "da", "delete[]" },
	{ "ps", "+" }, { "ng", "-" }, { "ad", "&" }, { "de", "*" }, { "co", "~" },
	{ "pl", "+" }, { "mi", "-" }, { "ml", "*" }, { "dv", "/" }, { "rm", "%" },
	{ "an", "&" }, { "or", "|" }, { "eo", "^" }, { "aS", "=" }, { "pL", "+=" },
	{ "mI", "-=" }, { "mL", "*=" }, { "dV", "/=" }, { "rM", "%=" }, { "aN", "&=" },
	{ "oR", "|=" }, { "eO", "^=" }, { "ls", "<<" }, { "rs", ">>" }, { "lS", "<<=" },
	{ "rS", ">>=" }, { "eq", "==" }, { "ne", "!=" }, { "lt", "<" }, { "gt", ">" },
	{ "le", "<=" }, { "ge", ">=" }, { "ss", "<=>" }, { "nt", "!" }, { "aa", "&&" },
	{ "oo", "||" }, { "pp", "++" }, { "mm", "--" }, { "cm", "," }, { "pm", "->*" },
	{ "pt", "->" }, { "cl", "()" }, { "ix", "[]" }, { "qu", "?" },
};

static int operator_name(struct dm *d)
{
	if (eat(d, "cv")) {
		int t = type(d);
		int n = mks(d, "operator ");
		if (t < 0 || n < 0)
			return -1;
		enum nk k = d->n[t].k;
		if (k == K_PTRMEM || k == K_FUNC || k == K_ARRAY ||
		    ((k == K_PTR || k == K_REF || k == K_RREF) &&
		     (d->n[d->n[t].a].k == K_FUNC || d->n[d->n[t].a].k == K_ARRAY)))
			return fail(d, -ENOTSUP);   /* declarator syntax after "operator" */
		int r = mk(d, K_NESTED, NULL, 0, n, t);
		if (r >= 0)
			d->n[r].cv = 0x100;
		return r;
	}
	for (size_t i = 0; i < sizeof(OPS) / sizeof(OPS[0]); i++) {
		if (eat(d, OPS[i][0])) {
			/* "operator" + op: a word operator gets a space */
			const char *op = OPS[i][1];
			static const char *const spelled[] = {
				"operator new", "operator new[]", "operator delete",
				"operator delete[]",
			};
			if (i < 4)
				return mks(d, spelled[i]);
			int a = mks(d, "operator"), b = mk(d, K_NAME, op, strlen(op), -1, -1);
			if (a < 0 || b < 0)
				return -1;
			int n = mk(d, K_NESTED, NULL, 0, a, b);
			if (n >= 0)
				d->n[n].cv = 0x100;   /* join without "::" */
			return n;
		}
	}
	return fail(d, -ENOTSUP);
}

static int lambda_or_unnamed(struct dm *d)
{
	char buf[64];
	long n = -1;
	int l0, cnt = 0, tmp[64], r;

	if (eat(d, "Ut")) {
		if (peek(d, 0) != '_' && !num(d, &n))
			return fail(d, -EINVAL);
		if (!eat(d, "_"))
			return fail(d, -EINVAL);
		snprintf(buf, sizeof(buf), "{unnamed type#%ld}", n + 2);
		return mkpool(d, buf);
	}
	if (!eat(d, "Ul"))
		return fail(d, -ENOTSUP);
	while (!eat(d, "E")) {
		int t;
		if (d->p >= d->end || d->err || cnt >= 64)
			return fail(d, cnt >= 64 ? -ENOTSUP : -EINVAL);
		if ((t = type(d)) < 0)
			return -1;
		tmp[cnt++] = t;
	}
	if (peek(d, 0) != '_' && !num(d, &n))
		return fail(d, -EINVAL);
	if (!eat(d, "_"))
		return fail(d, -EINVAL);
	snprintf(buf, sizeof(buf), "%ld", n + 2);
	if ((r = mkpool(d, buf)) < 0)
		return -1;
	l0 = d->nl;
	for (int i = 0; i < cnt; i++)
		if (list_add(d, tmp[i]))
			return -1;
	int lam = mk(d, K_LAMBDA, d->n[r].s, d->n[r].sl, -1, -1);
	if (lam < 0)
		return -1;
	d->n[lam].l0 = l0;
	d->n[lam].ln = cnt;
	if (cnt == 1 && d->n[tmp[0]].k == K_NAME && d->n[tmp[0]].sl == 4 &&
	    !memcmp(d->n[tmp[0]].s, "void", 4))
		d->n[lam].ln = 0;
	return lam;
}

static int abi_tags(struct dm *d, int n)
{
	while (n >= 0 && eat(d, "B")) {
		long len;
		if (!num(d, &len) || len <= 0 || len > d->end - d->p)
			return fail(d, -EINVAL);
		n = mk(d, K_ABI, d->p, (size_t)len, n, -1);
		d->p += len;
	}
	return n;
}

static int unqualified_name(struct dm *d)
{
	char c = peek(d, 0);
	int n;

	if (c == 'L')   /* internal linkage */
		d->p++, c = peek(d, 0);
	if (c >= '0' && c <= '9')
		n = source_name(d);
	else if (c >= 'a' && c <= 'z')
		n = operator_name(d);
	else if (c == 'U')
		n = lambda_or_unnamed(d);
	else
		return fail(d, c ? -ENOTSUP : -EINVAL);
	return abi_tags(d, n);
}

/* The unqualified, untemplated name a constructor of `so_far` takes. */
static int ctor_name(struct dm *d, int so_far, const char **s, size_t *l)
{
	for (int guard = 0; so_far >= 0 && guard < 64; guard++) {
		const struct node *x = &d->n[so_far];
		if (x->k == K_TEMPLATE || x->k == K_ABI || x->k == K_QUAL) {
			so_far = x->a;
		} else if (x->k == K_NESTED && x->cv != 0x100) {
			so_far = x->b;
		} else if (x->k == K_NAME) {
			const char *lt = memchr(x->s, '<', x->sl), *e = lt ? lt : x->s + x->sl;
			const char *b = x->s;
			for (const char *q = x->s; q + 1 < e; q++)
				if (q[0] == ':' && q[1] == ':')
					b = q + 2;
			*s = b;
			*l = (size_t)(e - b);
			return 0;
		} else {
			break;
		}
	}
	return fail(d, -ENOTSUP);
}

static int ctor_dtor(struct dm *d, int so_far)
{
	const char *s;
	size_t l;

	if (ctor_name(d, so_far, &s, &l))
		return -1;
	if (eat(d, "C1") || eat(d, "C2") || eat(d, "C3") || eat(d, "C4") || eat(d, "C5"))
		return abi_tags(d, mk(d, K_NAME, s, l, -1, -1));
	if (eat(d, "D0") || eat(d, "D1") || eat(d, "D2") || eat(d, "D4") || eat(d, "D5")) {
		int t = mks(d, "~"), n2 = mk(d, K_NAME, s, l, -1, -1);
		int n = mk(d, K_NESTED, NULL, 0, t, n2);
		if (n >= 0)
			d->n[n].cv = 0x100;
		return abi_tags(d, n);
	}
	return fail(d, -ENOTSUP);
}

static int template_args(struct dm *d);

/* Standard abbreviations and substitutions, after "S". */
static int substitution(struct dm *d)
{
	static const struct { char c; const char *text; } ABBR[] = {
		{ 'a', "std::allocator" },
		{ 'b', "std::basic_string" },
		{ 's', "std::basic_string<char, std::char_traits<char>, std::allocator<char> >" },
		{ 'i', "std::basic_istream<char, std::char_traits<char> >" },
		{ 'o', "std::basic_ostream<char, std::char_traits<char> >" },
		{ 'd', "std::basic_iostream<char, std::char_traits<char> >" },
	};
	for (size_t i = 0; i < sizeof(ABBR) / sizeof(ABBR[0]); i++) {
		if (peek(d, 0) == ABBR[i].c) {
			d->p++;
			return mks(d, ABBR[i].text);
		}
	}
	long id = seq_id(d);
	if (id < 0)
		return -1;
	if (id >= d->ns)
		return fail(d, -EINVAL);
	return d->subs[id];
}

static int template_param(struct dm *d)
{
	long id = seq_id(d);
	if (id < 0)
		return -1;
	if (!d->has_tparams || id >= d->n[d->tparams].ln)
		return fail(d, -ENOTSUP);   /* forward reference (conversion operators) */
	return d->list[d->n[d->tparams].l0 + id];
}

static int nested_name(struct dm *d, unsigned *cv, int *ref, bool *is_template,
		       bool *is_cdtor)
{
	int so_far = -1, n;

	while (peek(d, 0) == 'r' || peek(d, 0) == 'V' || peek(d, 0) == 'K') {
		char c = *d->p++;
		*cv |= c == 'K' ? 1 : c == 'V' ? 2 : 4;
	}
	if (eat(d, "R"))
		*ref = 1;
	else if (eat(d, "O"))
		*ref = 2;
	while (!eat(d, "E")) {
		*is_template = false;
		if (peek(d, 0) != 'I')
			*is_cdtor = false;
		if (d->err || d->p >= d->end)
			return fail(d, -EINVAL);
		if (eat(d, "St")) {
			n = mks(d, "std");
			so_far = so_far < 0 ? n : mk(d, K_NESTED, NULL, 0, so_far, n);
			continue;   /* "std" alone is not a substitution candidate */
		} else if (eat(d, "S")) {
			n = substitution(d);
			if (so_far >= 0 || n < 0)
				return fail(d, -EINVAL);
			so_far = n;
			continue;
		} else if (peek(d, 0) == 'I') {
			if (so_far < 0)
				return fail(d, -EINVAL);
			n = template_args(d);
			if (n < 0)
				return -1;
			d->n[n].a = so_far;
			so_far = n;
			d->tparams = n;
			d->has_tparams = 1;
			*is_template = true;
		} else if (eat(d, "T")) {
			n = template_param(d);
			if (so_far >= 0 || n < 0)
				return fail(d, -EINVAL);
			so_far = n;
		} else if (peek(d, 0) == 'D' || peek(d, 0) == 'M') {
			if (peek(d, 0) == 'M' || (peek(d, 1) != '0' && peek(d, 1) != '1' &&
						  peek(d, 1) != '2'))
				return fail(d, -ENOTSUP);
			n = ctor_dtor(d, so_far);
			so_far = mk(d, K_NESTED, NULL, 0, so_far, n);
			*is_cdtor = true;
		} else if (peek(d, 0) == 'C') {
			n = ctor_dtor(d, so_far);
			so_far = mk(d, K_NESTED, NULL, 0, so_far, n);
			*is_cdtor = true;
		} else {
			n = unqualified_name(d);
			so_far = so_far < 0 ? n : mk(d, K_NESTED, NULL, 0, so_far, n);
		}
		if (so_far < 0)
			return -1;
		push_sub(d, so_far);
	}
	if (so_far < 0 || !d->ns)
		return fail(d, -EINVAL);
	d->ns--;   /* the whole name is not a prefix */
	return so_far;
}

static int local_name(struct dm *d)
{
	int enc = encoding(d), ent;

	if (enc < 0 || !eat(d, "E"))
		return fail(d, -EINVAL);
	if (eat(d, "s")) {
		ent = mks(d, "string literal");
	} else {
		bool t, c;
		if (peek(d, 0) == 'd')
			return fail(d, -ENOTSUP);
		ent = name(d, &t, &c);
	}
	if (ent < 0)
		return -1;
	if (eat(d, "_")) {   /* discriminator */
		long v;
		if (eat(d, "_")) {
			if (!num(d, &v) || !eat(d, "_"))
				return fail(d, -EINVAL);
		} else if (!num(d, &v)) {
			return fail(d, -EINVAL);
		}
	}
	return mk(d, K_LOCAL, NULL, 0, enc, ent);
}

/* The name of an encoding; *is_template when it ends in template arguments. */
static int name(struct dm *d, bool *is_template, bool *is_cdtor)
{
	int n;

	*is_template = *is_cdtor = false;
	if (++d->depth > MAX_DEPTH)
		return fail(d, -ENAMETOOLONG);
	if (eat(d, "N")) {
		unsigned cv = 0;
		int ref = 0;
		n = nested_name(d, &cv, &ref, is_template, is_cdtor);
		if (n >= 0 && (cv || ref)) {
			n = mk(d, K_QUAL, NULL, 0, n, 1);   /* b = 1: a method's qualifiers */
			if (n >= 0) {
				d->n[n].cv = cv;
				d->n[n].ref = ref;
			}
		}
	} else if (eat(d, "Z")) {
		n = local_name(d);
	} else {
		bool from_sub = false;
		if (eat(d, "St")) {
			int u = unqualified_name(d), s = mks(d, "std");
			n = mk(d, K_NESTED, NULL, 0, s, u);
		} else if (eat(d, "S")) {
			n = substitution(d);
			from_sub = true;
			if (peek(d, 0) != 'I')
				return fail(d, -EINVAL);
		} else {
			n = unqualified_name(d);
		}
		if (n >= 0 && peek(d, 0) == 'I') {
			if (!from_sub)
				push_sub(d, n);
			int t = template_args(d);
			if (t < 0)
				return -1;
			d->n[t].a = n;
			n = t;
			d->tparams = t;
			d->has_tparams = 1;
			*is_template = true;
		}
	}
	d->depth--;
	return n;
}

/* ---- types -------------------------------------------------------------------------- */

static const char *builtin(char c)
{
	switch (c) {
	case 'v': return "void";
	case 'w': return "wchar_t";
	case 'b': return "bool";
	case 'c': return "char";
	case 'a': return "signed char";
	case 'h': return "unsigned char";
	case 's': return "short";
	case 't': return "unsigned short";
	case 'i': return "int";
	case 'j': return "unsigned int";
	case 'l': return "long";
	case 'm': return "unsigned long";
	case 'x': return "long long";
	case 'y': return "unsigned long long";
	case 'n': return "__int128";
	case 'o': return "unsigned __int128";
	case 'f': return "float";
	case 'd': return "double";
	case 'e': return "long double";
	case 'g': return "__float128";
	case 'z': return "...";
	default: return NULL;
	}
}

static const char *builtin_d(char c)
{
	switch (c) {
	case 'n': return "decltype(nullptr)";
	case 'i': return "char32_t";
	case 's': return "char16_t";
	case 'u': return "char8_t";
	case 'a': return "auto";
	case 'c': return "decltype(auto)";
	default: return NULL;
	}
}

static int function_type(struct dm *d)
{
	int ret, f, ref = 0, tmp[128], n = 0;

	eat(d, "Y");
	if ((ret = type(d)) < 0)
		return -1;
	while (!eat(d, "E")) {
		if (d->p >= d->end || d->err || n >= 128)
			return fail(d, n >= 128 ? -ENOTSUP : -EINVAL);
		if (peek(d, 1) == 'E' && (peek(d, 0) == 'R' || peek(d, 0) == 'O')) {
			ref = *d->p++ == 'R' ? 1 : 2;
			continue;
		}
		int t = type(d);
		if (t < 0)
			return -1;
		tmp[n++] = t;
	}
	f = mk(d, K_FUNC, NULL, 0, ret, -1);
	if (f < 0)
		return -1;
	d->n[f].l0 = d->nl;
	for (int i = 0; i < n; i++)
		if (list_add(d, tmp[i]))
			return -1;
	d->n[f].ln = n;
	d->n[f].ref = ref;
	if (n == 1 && d->n[tmp[0]].k == K_NAME && d->n[tmp[0]].sl == 4 &&
	    !memcmp(d->n[tmp[0]].s, "void", 4))
		d->n[f].ln = 0;
	return f;
}

static int array_type(struct dm *d)
{
	const char *s = d->p;
	long v = 0;
	int t;

	if (peek(d, 0) != '_' && !num(d, &v))
		return fail(d, -ENOTSUP);   /* an expression dimension */
	size_t sl = (size_t)(d->p - s);
	if (!eat(d, "_") || (t = type(d)) < 0)
		return fail(d, -EINVAL);
	return mk(d, K_ARRAY, s, sl, t, -1);
}

static int qualified(struct dm *d)
{
	unsigned cv = 0;
	while (peek(d, 0) == 'r' || peek(d, 0) == 'V' || peek(d, 0) == 'K') {
		char c = *d->p++;
		cv |= c == 'K' ? 1 : c == 'V' ? 2 : 4;
	}
	int t = type(d);
	if (t < 0)
		return -1;
	if (d->n[t].k == K_FUNC)
		return fail(d, -ENOTSUP);   /* a member function type with cv (in PTRMEM) */
	if (d->n[t].k == K_QUAL && d->n[t].b != 1) {   /* "K" on a const T_: one const */
		cv |= d->n[t].cv;
		t = d->n[t].a;
	}
	bool arr = d->n[t].k == K_ARRAY;   /* a const array is an array of const */
	int q = mk(d, K_QUAL, NULL, 0, arr ? d->n[t].a : t, -1);
	if (q < 0)
		return -1;
	d->n[q].cv = cv;
	if (!arr)
		return q;
	push_sub(d, q);
	return mk(d, K_ARRAY, d->n[t].s, d->n[t].sl, q, -1);
}

/* "U" <name> <type>: "int foo". */
static int vendor_qualified(struct dm *d)
{
	long len;

	d->p++;
	if (!num(d, &len) || len <= 0 || len > d->end - d->p)
		return fail(d, -EINVAL);
	const char *s = d->p;
	d->p += len;
	if (peek(d, 0) == 'I')
		return fail(d, -ENOTSUP);
	int in = type(d);
	return in < 0 ? -1 : mk(d, K_VENDOR, s, (size_t)len, in, -1);
}

static int pointer_or_ref(struct dm *d)
{
	char c = *d->p++;
	int t = type(d);
	enum nk k = c == 'P' ? K_PTR : c == 'R' ? K_REF : K_RREF;

	if (t >= 0 && c != 'P' && (d->n[t].k == K_REF || d->n[t].k == K_RREF)) {
		/* reference collapsing: & + & / && + & / & + && -> &; && + && -> && */
		k = c == 'R' || d->n[t].k == K_REF ? K_REF : K_RREF;
		t = d->n[t].a;
	}
	return mk(d, k, NULL, 0, t, -1);
}

static int type_inner(struct dm *d)
{
	char c = peek(d, 0);
	const char *b;
	int t;
	bool tpl, cd;

	if ((b = builtin(c))) {
		d->p++;
		return mks(d, b);   /* builtins are not substitution candidates */
	}
	if (c == 'D' && (b = builtin_d(peek(d, 1)))) {
		d->p += 2;
		return mks(d, b);
	}
	switch (c) {
	case 'r': case 'V': case 'K':
		t = qualified(d);
		break;
	case 'P': case 'R': case 'O':
		t = pointer_or_ref(d);
		break;
	case 'F':
		d->p++;
		t = function_type(d);
		break;
	case 'A':
		d->p++;
		t = array_type(d);
		break;
	case 'M': {
		d->p++;
		int cls = type(d), mem = cls < 0 ? -1 : type(d);
		t = mem < 0 ? -1 : mk(d, K_PTRMEM, NULL, 0, cls, mem);
		break;
	}
	case 'T':
		d->p++;
		t = template_param(d);
		if (t >= 0 && peek(d, 0) == 'I') {
			push_sub(d, t);
			int a = template_args(d);
			if (a < 0)
				return -1;
			d->n[a].a = t;
			t = a;
		}
		break;
	case 'U':
		t = vendor_qualified(d);
		break;
	case 'Z':   /* a local type (lambdas in template arguments): numbering not verified */
		return fail(d, -ENOTSUP);
	case 'S':
		if (peek(d, 1) != 't') {
			d->p++;
			t = substitution(d);
			if (t >= 0 && peek(d, 0) == 'I') {
				/* only an abbreviation (not S_) is new here */
				int a;
				if ((a = template_args(d)) < 0)
					return -1;
				d->n[a].a = t;
				t = a;
				break;
			}
			return t;   /* a substitution is not added again */
		}
		/* fallthrough: "St" is a class name */
	case 'N': case '0': case '1': case '2': case '3': case '4': case '5':
	case '6': case '7': case '8': case '9': {
		int saved = d->tparams, had = d->has_tparams;
		t = name(d, &tpl, &cd);
		d->tparams = saved;
		d->has_tparams = had;
		break;
	}
	default:
		return fail(d, c ? -ENOTSUP : -EINVAL);
	}
	if (t < 0)
		return -1;
	push_sub(d, t);
	return t;
}

static int type(struct dm *d)
{
	int t;

	if (++d->depth > MAX_DEPTH)
		return fail(d, -ENAMETOOLONG);
	t = type_inner(d);
	d->depth--;
	return t;
}

static int literal(struct dm *d)
{
	static const struct { char c; const char *suffix; } INT[] = {
		{ 'i', "" }, { 'j', "u" }, { 'l', "l" }, { 'm', "ul" }, { 'x', "ll" },
		{ 'y', "ull" },
	};
	char c = peek(d, 0);
	const char *s;

	if (!c)
		return fail(d, -EINVAL);
	if (c == '_' || c == 'D' || c == 'f' || c == 'd' || c == 'e')
		return fail(d, -ENOTSUP);
	d->p++;
	bool neg = eat(d, "n");
	s = d->p;
	while (peek(d, 0) >= '0' && peek(d, 0) <= '9')
		d->p++;
	size_t sl = (size_t)(d->p - s);
	if (!sl || !eat(d, "E"))
		return fail(d, -ENOTSUP);
	if (c == 'b' && sl == 1 && !neg)
		return mks(d, *s == '1' ? "true" : "false");
	for (size_t i = 0; i < sizeof(INT) / sizeof(INT[0]); i++)
		if (INT[i].c == c) {
			int n = mk(d, K_NAME, s, sl, -1, -1), sfx = mks(d, INT[i].suffix);
			int r = mk(d, K_NESTED, NULL, 0, n, sfx);
			if (r >= 0)
				d->n[r].cv = 0x100;
			if (neg && r >= 0) {
				int m = mks(d, "-");
				r = mk(d, K_NESTED, NULL, 0, m, r);
				if (r >= 0)
					d->n[r].cv = 0x100;
			}
			return r;
		}
	const char *b = builtin(c);
	if (!b || c == 'v' || c == 'z')
		return fail(d, -ENOTSUP);
	char *txt = NULL;
	(void)txt;
	/* "(type)N" */
	int open = mks(d, "("), ty = mks(d, b), close = mks(d, ")");
	int v = mk(d, K_NAME, s, sl, -1, -1);
	int x = mk(d, K_NESTED, NULL, 0, open, ty), y, z;
	if (x >= 0)
		d->n[x].cv = 0x100;
	y = mk(d, K_NESTED, NULL, 0, x, close);
	if (y >= 0)
		d->n[y].cv = 0x100;
	if (neg) {
		int m = mks(d, "-");
		v = mk(d, K_NESTED, NULL, 0, m, v);
		if (v >= 0)
			d->n[v].cv = 0x100;
	}
	z = mk(d, K_NESTED, NULL, 0, y, v);
	if (z >= 0)
		d->n[z].cv = 0x100;
	return z;
}

static int template_arg(struct dm *d)
{
	if (eat(d, "L")) {
		if (peek(d, 0) == '_')
			return fail(d, -ENOTSUP);
		return literal(d);
	}
	if (peek(d, 0) == 'X' || peek(d, 0) == 'J')
		return fail(d, -ENOTSUP);
	return type(d);
}

/* "I" args "E" -> a K_TEMPLATE node (its .a, the template, set by the caller).
 * Arguments parsed into a scratch list first: nested lists would interleave. */
static int template_args(struct dm *d)
{
	int tmp[64], n = 0, t;

	if (!eat(d, "I"))
		return fail(d, -EINVAL);
	if (++d->depth > MAX_DEPTH)
		return fail(d, -ENAMETOOLONG);
	while (!eat(d, "E")) {
		if (d->p >= d->end || d->err || n >= 64)
			return fail(d, d->err ? d->err : n >= 64 ? -ENOTSUP : -EINVAL);
		if ((t = template_arg(d)) < 0)
			return -1;
		tmp[n++] = t;
	}
	d->depth--;
	t = mk(d, K_TEMPLATE, NULL, 0, -1, -1);
	if (t < 0)
		return -1;
	d->n[t].l0 = d->nl;
	for (int i = 0; i < n; i++)
		if (list_add(d, tmp[i]))
			return -1;
	d->n[t].ln = n;
	return t;
}

static int encoding(struct dm *d)
{
	bool tpl, cdtor;
	int nm, ret = -1, e, l0;

	if (++d->depth > MAX_DEPTH)
		return fail(d, -ENAMETOOLONG);
	d->has_tparams = 0;
	if ((nm = name(d, &tpl, &cdtor)) < 0)
		return -1;
	if (d->p >= d->end || peek(d, 0) == 'E' || peek(d, 0) == '.') {
		d->depth--;
		return nm;   /* a data name */
	}
	if (tpl && !cdtor && (ret = type(d)) < 0)
		return -1;
	l0 = list_begin(d);
	int tmp[256], n = 0;
	while (d->p < d->end && peek(d, 0) != 'E' && peek(d, 0) != '.') {
		int t = type(d);
		if (t < 0 || n >= 256)
			return fail(d, t < 0 ? d->err : -ENOTSUP);
		tmp[n++] = t;
	}
	l0 = d->nl;
	for (int i = 0; i < n; i++)
		if (list_add(d, tmp[i]))
			return -1;
	e = mk(d, K_ENC, NULL, 0, nm, ret);
	if (e < 0)
		return -1;
	d->n[e].l0 = l0;
	d->n[e].ln = n;
	if (n == 1 && d->n[tmp[0]].k == K_NAME && d->n[tmp[0]].sl == 4 &&
	    !memcmp(d->n[tmp[0]].s, "void", 4))
		d->n[e].ln = 0;
	d->depth--;
	return e;
}

/* ---- printing ----------------------------------------------------------------------- */

static bool clones(struct dm *d)
{
	while (d->p < d->end) {
		const char *s = d->p;
		if (*d->p++ != '.')
			return false;
		if (!((peek(d, 0) >= 'a' && peek(d, 0) <= 'z') || peek(d, 0) == '_'))
			return false;
		while ((peek(d, 0) >= 'a' && peek(d, 0) <= 'z') || peek(d, 0) == '_')
			d->p++;
		while (peek(d, 0) == '.' && peek(d, 1) >= '0' && peek(d, 1) <= '9') {
			d->p++;
			while (peek(d, 0) >= '0' && peek(d, 0) <= '9')
				d->p++;
		}
		dm_puts_(d, " [clone ");
		dm_put(d, s, (size_t)(d->p - s));
		dm_puts_(d, "]");
	}
	return true;
}

static bool call_offset(struct dm *d, char kind)
{
	long v;
	eat(d, "n");
	if (!num(d, &v) || !eat(d, "_"))
		return false;
	if (kind == 'v') {
		eat(d, "n");
		if (!num(d, &v) || !eat(d, "_"))
			return false;
	}
	return true;
}

struct demangler *demangler_new(void)
{
	return calloc(1, sizeof(struct dm));
}

void demangler_free(struct demangler *w)
{
	free(w);
}

int demangle(const char *mangled, char *out, size_t size, size_t *name_start,
	     size_t *name_end)
{
	struct demangler *w = demangler_new();
	int rc;

	if (!w)
		return -ENOMEM;
	rc = demangle_with(w, mangled, out, size, name_start, name_end);
	demangler_free(w);
	return rc;
}

int demangle_with(struct demangler *w, const char *mangled, char *out, size_t size,
		  size_t *name_start, size_t *name_end)
{
	struct dm *d = (struct dm *)w;
	size_t n = strlen(mangled);
	const char *prefix = "";
	int e;

	if (n > DEMANGLE_MAX_IN)
		return -ENAMETOOLONG;
	if (n < 3 || memcmp(mangled, "_Z", 2))
		return -EINVAL;
	memset(d, 0, offsetof(struct dm, n));
	d->p = mangled + 2;
	d->end = mangled + n;
	d->out = out;
	d->size = size;
	if (!size)
		return -ENAMETOOLONG;
	out[0] = 0;
	if (peek(d, 0) == 'T' && (peek(d, 1) == 'h' || peek(d, 1) == 'v')) {
		char k = peek(d, 1);
		d->p += 2;
		if (!call_offset(d, k))
			return -EINVAL;
		prefix = k == 'h' ? "non-virtual thunk to " : "virtual thunk to ";
	} else if (peek(d, 0) == 'T' || peek(d, 0) == 'G') {
		return -ENOTSUP;
	}
	e = encoding(d);
	if (d->err)
		return d->err;
	if (e < 0)
		return -EINVAL;
	dm_puts_(d, prefix);
	size_t ns = d->len, ne;
	if (d->n[e].k == K_ENC) {
		if (d->n[e].b >= 0) {
			dm_print_left(d, d->n[e].b);
			if (!dm_needs_paren(d, d->n[e].b))
				dm_puts_(d, " ");
			ns = d->len;
		}
		dm_print_left(d, d->n[e].a);
		ne = d->len;
		dm_print_right(d, e);
	} else {
		dm_print_left(d, e);
		dm_print_right(d, e);
		ne = d->len;
	}
	if (!d->err && !clones(d))
		return -EINVAL;
	if (d->err)
		return d->err;
	if (name_start)
		*name_start = ns;
	if (name_end)
		*name_end = ne;
	return 0;
}
