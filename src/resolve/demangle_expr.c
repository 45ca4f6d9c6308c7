/* demangle_expr.c — the demangler's <expression> grammar, as template
 * arguments ("X...E") and decltype ("Dt"/"DT") use it: literals, template and
 * function parameters ("{parm#1}"), names, pack expansions ("sp"), unary and
 * binary operators, calls, member access, subscripts, sizeof, alignof and
 * casts, "sr" names of one type.  Anything else (other unresolved names,
 * new, throw, fold expressions, braced lists, ...) is -ENOTSUP
 * (demangle_priv.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "resolve/demangle_priv.h"

/* Codes that take one operand, and what only expressions spell. */
static const char UNARY[] = "psngaddecontppmmszaz";
static const char *const EXTRA[][2] = {
	{ "sz", "sizeof " }, { "az", "alignof " }, { "st", "sizeof " }, { "at", "alignof " },
	{ "dt", "." }, { "ds", ".*" }, { "sc", "static_cast" }, { "dc", "dynamic_cast" },
	{ "cc", "const_cast" }, { "rc", "reinterpret_cast" },
};

static const char *op_text(const char *code)
{
	for (size_t i = 0; i < sizeof(EXTRA) / sizeof(EXTRA[0]); i++)
		if (!memcmp(EXTRA[i][0], code, 2))
			return EXTRA[i][1];
	return dm_operator_text(code);
}

static bool is_unary(const char *code)
{
	for (size_t i = 0; UNARY[i]; i += 2)
		if (!memcmp(UNARY + i, code, 2))
			return true;
	return false;
}

static int op_node(struct dm *d, enum nk k, const char *text, int a, int b, int ref)
{
	int n = a < 0 || (k == K_BINARY && b < 0) ? -1 : mk(d, k, text, strlen(text), a, b);

	if (n >= 0)
		d->n[n].ref = ref;
	return n;
}

/* Expressions up to "E", as a K_EXPRLIST. */
static int expr_list(struct dm *d, enum nk k, int a)
{
	int tmp[64], n = 0, l;

	while (!eat(d, "E")) {
		if (d->p >= d->end || d->err || n >= 64)
			return fail(d, n >= 64 ? -ENOTSUP : -EINVAL);
		if ((tmp[n++] = dm_expression(d)) < 0)
			return -1;
	}
	if ((l = mk(d, k, NULL, 0, a, -1)) < 0)
		return -1;
	d->n[l].l0 = d->nl;
	d->n[l].ln = n;
	for (int i = 0; i < n; i++)
		if (list_add(d, tmp[i]))
			return -1;
	return l;
}

/* "fp" [cv] N "_": the parameter "{parm#N+1}" (a late-specified return
 * type's), or "fpT": this. */
static int function_param(struct dm *d)
{
	char buf[32];
	long v = -1;

	if (eat(d, "T"))
		return mks(d, "this");
	if (peek(d, 0) != '_' && !num(d, &v))
		return fail(d, -ENOTSUP);   /* cv-qualified or misplaced */
	if (!eat(d, "_"))
		return fail(d, -EINVAL);
	snprintf(buf, sizeof(buf), "{parm#%ld}", v + 2);
	return mkpool(d, buf);
}

/* n with the template arguments that follow, if any. */
static int with_args(struct dm *d, int n)
{
	int t;

	if (n < 0 || peek(d, 0) != 'I')
		return n;
	if ((t = dm_template_args(d)) >= 0)
		d->n[t].a = n;
	return t;
}

/* A name as an operand ("fn" of a dependent call), with template arguments. */
static int operand_name(struct dm *d)
{
	return with_args(d, dm_unqualified_name(d));
}

/* "sr" <simple-id>+ "E" (before a name): "A<T>::B"; as c++filt has it, no
 * level is a substitution candidate. */
static int qualifier_levels(struct dm *d)
{
	int so_far = -1, n;

	while (!eat(d, "E")) {
		if (d->err || !(peek(d, 0) >= '0' && peek(d, 0) <= '9'))
			return fail(d, d->err ? d->err : -ENOTSUP);   /* the old "sr1A1x" */
		n = operand_name(d);
		if (n >= 0 && so_far >= 0)
			n = mk(d, K_NESTED, NULL, 0, so_far, n);
		if ((so_far = n) < 0)
			return -1;
	}
	return so_far < 0 ? fail(d, -EINVAL) : so_far;
}

static int operator_expr(struct dm *d)
{
	char code[3] = { peek(d, 0), peek(d, 1), 0 };
	const char *text = op_text(code);
	int a, b;

	if (!text || !strcmp(code, "qu"))   /* (new and delete have no text here) */
		return fail(d, code[0] ? -ENOTSUP : -EINVAL);
	d->p += 2;
	if (!strcmp(code, "st") || !strcmp(code, "at"))
		return op_node(d, K_UNARY, text, dm_type(d), -1, 1);
	if (is_unary(code)) {
		bool suffix = code[0] == code[1] && !eat(d, "_");   /* pp_/mm_: prefix */
		return op_node(d, K_UNARY, text, dm_expression(d), -1, suffix ? 2 : 0);
	}
	if (code[1] == 'c' && strchr("sdcr", code[0]))    /* static_cast<T>(e), … */
		return (a = dm_type(d)) < 0 ? -1 : op_node(d, K_BINARY, text, a,
							   dm_expression(d), 1);
	if ((a = dm_expression(d)) < 0)
		return -1;
	if (!strcmp(code, "cl"))
		return expr_list(d, K_CALL, a);
	if (!strcmp(code, "dt") || !strcmp(code, "pt")) {
		if ((peek(d, 0) == 's' && peek(d, 1) == 'r') ||
		    (peek(d, 0) == 'g' && peek(d, 1) == 's'))
			return fail(d, -ENOTSUP);
		b = operand_name(d);
	} else {
		b = dm_expression(d);
	}
	return op_node(d, K_BINARY, text, a, b, !strcmp(code, "ix") ? 2 : 0);
}

static int expression(struct dm *d)
{
	char c = peek(d, 0), c1 = peek(d, 1);
	int t;

	if (c == 'L') {
		d->p++;
		if (c1 == '_' || c1 == 'Z')
			return fail(d, -ENOTSUP);   /* an external name */
		t = dm_literal(d);
		return t < 0 ? -1 : mk(d, K_EXPR_ARG, NULL, 0, t, -1);
	}
	if (c == 'T') {
		d->p++;
		t = dm_template_param(d);
		return t < 0 ? -1 : mk(d, K_EXPR_ARG, NULL, 0, t, -1);
	}
	if (c == 'f' && c1 == 'p') {
		d->p += 2;
		return function_param(d);
	}
	if (c == 's' && c1 == 'p') {
		d->p += 2;
		t = dm_expression(d);
		return t < 0 ? -1 : mk(d, K_EXPANSION, NULL, 0, t, -1);
	}
	if (c >= '0' && c <= '9')
		return operand_name(d);
	if (c == 's' && c1 == 'r' && peek(d, 2) != 'N') {
		d->p += 2;
		t = peek(d, 0) >= '0' && peek(d, 0) <= '9' ? qualifier_levels(d) : dm_type(d);
		int name = t < 0 ? -1 : dm_unqualified_name(d);
		/* "(T::f<A>)": template arguments go around the qualified name */
		return name < 0 ? -1 : with_args(d, mk(d, K_NESTED, NULL, 0, t, name));
	}
	if (c == 'c' && c1 == 'v') {   /* "(T)e", or "(T)(e, …)" */
		d->p += 2;
		if ((t = dm_type(d)) < 0)
			return -1;
		if (eat(d, "_"))
			return expr_list(d, K_CAST, t);
		int e = dm_expression(d);
		return e < 0 ? -1 : mk(d, K_CAST, NULL, 0, t, e);
	}
	return operator_expr(d);
}

int dm_expression(struct dm *d)
{
	int t;

	if (++d->depth > MAX_DEPTH)
		return fail(d, -ENAMETOOLONG);
	t = expression(d);
	d->depth--;
	return t;
}
