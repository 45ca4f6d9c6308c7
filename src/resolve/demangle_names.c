/* demangle_names.c — the demangler's <name> grammar: nested, local,
 * unqualified, operator, constructor/destructor, lambda and unnamed-type
 * names, ABI tags, substitutions and template parameters (demangle_priv.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "resolve/demangle_priv.h"

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

const char *dm_operator_text(const char *code)
{
	for (size_t i = 4; i < sizeof(OPS) / sizeof(OPS[0]); i++)
		if (!memcmp(OPS[i][0], code, 2))
			return OPS[i][1];
	return NULL;
}

static int operator_name(struct dm *d)
{
	if (eat(d, "cv")) {
		int t = dm_type(d);
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
		if ((t = dm_type(d)) < 0)
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

int dm_unqualified_name(struct dm *d)
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


/* Standard abbreviations and substitutions, after "S". */
int dm_substitution(struct dm *d)
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
	if (d->sub_tparam[id] != -1 && !d->local_depth)
		return d->sub_tparam[id] < 0 ? fail(d, -ENOTSUP)
		       : dm_template_arg_at(d, d->sub_tparam[id]);
	return d->subs[id];
}

int dm_template_arg_at(struct dm *d, long id)
{
	if (!d->has_tparams || id >= d->n[d->tparams].ln)
		return fail(d, -ENOTSUP);   /* forward reference (conversion operators) */
	int arg = d->list[d->n[d->tparams].l0 + id];
	return d->n[arg].k == K_PACK ? mk(d, K_PACKREF, NULL, 0, arg, -1) : arg;
}

int dm_template_param(struct dm *d)
{
	long id = seq_id(d);
	if (id < 0)
		return -1;
	d->last_tparam = id;
	return dm_template_arg_at(d, id);
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
			n = dm_substitution(d);
			if (so_far >= 0 || n < 0)
				return fail(d, -EINVAL);
			so_far = n;
			continue;
		} else if (peek(d, 0) == 'I') {
			if (so_far < 0)
				return fail(d, -EINVAL);
			n = dm_template_args(d);
			if (n < 0)
				return -1;
			d->n[n].a = so_far;
			so_far = n;
			d->tparams = n;
			d->has_tparams = 1;
			*is_template = true;
		} else if (eat(d, "T")) {
			n = dm_template_param(d);
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
			n = dm_unqualified_name(d);
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
	int enc = dm_encoding(d), ent;

	if (enc < 0 || !eat(d, "E"))
		return fail(d, -EINVAL);
	if (eat(d, "s")) {
		ent = mks(d, "string literal");
	} else {
		bool t, c;
		if (peek(d, 0) == 'd')
			return fail(d, -ENOTSUP);
		ent = dm_name(d, &t, &c);
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
int dm_name(struct dm *d, bool *is_template, bool *is_cdtor)
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
			int u = dm_unqualified_name(d), s = mks(d, "std");
			n = mk(d, K_NESTED, NULL, 0, s, u);
		} else if (eat(d, "S")) {
			n = dm_substitution(d);
			from_sub = true;
			if (peek(d, 0) != 'I')
				return fail(d, -EINVAL);
		} else {
			n = dm_unqualified_name(d);
		}
		if (n >= 0 && peek(d, 0) == 'I') {
			if (!from_sub)
				push_sub(d, n);
			int t = dm_template_args(d);
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

