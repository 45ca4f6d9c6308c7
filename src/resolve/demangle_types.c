/* demangle_types.c — the demangler's <type> grammar: builtin, qualified,
 * pointer and reference, function, array and vendor types, literals and
 * template arguments (demangle_priv.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "resolve/demangle_priv.h"

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
	if ((ret = dm_type(d)) < 0)
		return -1;
	while (!eat(d, "E")) {
		if (d->p >= d->end || d->err || n >= 128)
			return fail(d, n >= 128 ? -ENOTSUP : -EINVAL);
		if (peek(d, 1) == 'E' && (peek(d, 0) == 'R' || peek(d, 0) == 'O')) {
			ref = *d->p++ == 'R' ? 1 : 2;
			continue;
		}
		int t = dm_type(d);
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
	if (!eat(d, "_") || (t = dm_type(d)) < 0)
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
	int t;
	if (peek(d, 0) == 'F') {
		/* a const member function's type (in a pointer to member, "M1AKFivE"): the
		 * cv applies to `this`, printed after the parameters; as c++filt, only the
		 * qualified type is a substitution candidate (type_inner adds it) */
		d->p++;
		if ((t = function_type(d)) < 0)
			return -1;
		d->n[t].cv |= cv;
		return t;
	}
	if ((t = dm_type(d)) < 0)
		return -1;
	if (d->n[t].k == K_FUNC)
		return fail(d, -ENOTSUP);   /* a cv function type by substitution */
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
	int in = dm_type(d);
	return in < 0 ? -1 : mk(d, K_VENDOR, s, (size_t)len, in, -1);
}

static int pointer_or_ref(struct dm *d)
{
	char c = *d->p++;
	int t = dm_type(d);
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
		int cls = dm_type(d), mem = cls < 0 ? -1 : dm_type(d);
		t = mem < 0 ? -1 : mk(d, K_PTRMEM, NULL, 0, cls, mem);
		break;
	}
	case 'T':
		d->p++;
		t = dm_template_param(d);
		if (t >= 0 && peek(d, 0) == 'I') {
			push_sub(d, t);
			if (d->local_depth)
				d->sub_tparam[d->ns - 1] = -2;
			int a = dm_template_args(d);
			if (a < 0)
				return -1;
			d->n[a].a = t;
			push_sub(d, a);
			if (d->local_depth)
				d->sub_tparam[d->ns - 1] = -2;
			return a;
		}
		push_sub(d, t);
		if (d->local_depth && t >= 0)
			d->sub_tparam[d->ns - 1] = (short)d->last_tparam;
		return t;
	case 'U':
		t = vendor_qualified(d);
		break;
	case 'D':   /* a pack expansion, decltype (the builtins are above) */
		c = peek(d, 1);
		d->p += 2;
		if (c == 'p') {
			t = dm_type(d);
			t = t < 0 ? -1 : mk(d, K_EXPANSION, NULL, 0, t, -1);
		} else if (c == 't' || c == 'T') {
			t = dm_expression(d);
			if (t >= 0 && !eat(d, "E"))
				return fail(d, -EINVAL);
			t = t < 0 ? -1 : mk(d, K_DECLTYPE, NULL, 0, t, -1);
		} else {
			return fail(d, -ENOTSUP);   /* vector types, … */
		}
		break;
	case 'S':
		if (peek(d, 1) != 't') {
			d->p++;
			t = dm_substitution(d);
			if (t >= 0 && peek(d, 0) == 'I') {
				/* only an abbreviation (not S_) is new here */
				int a;
				if ((a = dm_template_args(d)) < 0)
					return -1;
				d->n[a].a = t;
				t = a;
				break;
			}
			return t;   /* a substitution is not added again */
		}
		/* fallthrough: "St" is a class name */
	case 'N': case 'Z': case '0': case '1': case '2': case '3': case '4': case '5':
	case '6': case '7': case '8': case '9': {   /* Z: a local type (a lambda) */
		int saved = d->tparams, had = d->has_tparams, local = c == 'Z';
		d->local_depth += local;
		t = dm_name(d, &tpl, &cd);
		d->local_depth -= local;
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

int dm_type(struct dm *d)
{
	int t;

	if (++d->depth > MAX_DEPTH)
		return fail(d, -ENAMETOOLONG);
	t = type_inner(d);
	d->depth--;
	return t;
}

int dm_literal(struct dm *d)
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
	int t;

	if (eat(d, "L")) {
		if (peek(d, 0) == '_')
			return fail(d, -ENOTSUP);
		return dm_literal(d);
	}
	if (eat(d, "X")) {   /* an expression, printed without parentheses */
		t = dm_expression(d);
		return t >= 0 && !eat(d, "E") ? fail(d, -EINVAL) : t;
	}
	if (peek(d, 0) == 'J') {   /* an argument pack: "I" ... "E" read the same way */
		t = dm_template_args(d);
		if (t >= 0)
			d->n[t].k = K_PACK;
		return t;
	}
	return dm_type(d);
}

/* "I" args "E" -> a K_TEMPLATE node (its .a, the template, set by the caller).
 * Arguments parsed into a scratch list first: nested lists would interleave. */
int dm_template_args(struct dm *d)
{
	int tmp[64], n = 0, t;

	if (!eat(d, "I") && !eat(d, "J"))
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
