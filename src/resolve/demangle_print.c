/* demangle_print.c — the demangler's printer: names, and types in two halves
 * (left and right of the declarator) as c++filt writes pointers to functions
 * and arrays. */
#include <errno.h>
#include <string.h>

#include "resolve/demangle_priv.h"

void dm_put(struct dm *d, const char *s, size_t n)
{
	if (d->len + n + 1 > d->size) {
		fail(d, -ENAMETOOLONG);
		return;
	}
	memcpy(d->out + d->len, s, n);
	d->len += n;
	d->out[d->len] = 0;
}

void dm_puts_(struct dm *d, const char *s)
{
	dm_put(d, s, strlen(s));
}

static char last(const struct dm *d)
{
	if (d->taken_back == d->len + 1)
		return ' ';
	return d->len ? d->out[d->len - 1] : 0;
}

void dm_print_left(struct dm *d, int n);
void dm_print_right(struct dm *d, int n);

static void print_cv(struct dm *d, unsigned cv)
{
	if (cv & 1)
		dm_puts_(d, " const");
	if (cv & 2)
		dm_puts_(d, " volatile");
	if (cv & 4)
		dm_puts_(d, " restrict");
}

void dm_print(struct dm *d, int n)
{
	dm_print_left(d, n);
	dm_print_right(d, n);
}

/* Items with ", " between them; as c++filt, the ", " before an item that
 * prints nothing (an empty pack) is taken back. */
static void print_list(struct dm *d, int l0, int ln)
{
	for (int i = 0; i < ln && !d->err; i++) {
		size_t before = d->len;
		if (i)
			dm_puts_(d, ", ");
		size_t mark = d->len;
		dm_print(d, d->list[l0 + i]);
		if (i && d->len == mark) {
			d->len = before;
			d->out[d->len] = 0;
			d->taken_back = d->len + 1;
		}
	}
}

/* A K_PACKREF as the element being printed (an expansion's pack_index). */
static int resolve(const struct dm *d, int n)
{
	if (n < 0 || d->n[n].k != K_PACKREF)
		return n;
	const struct node *pack = &d->n[d->n[n].a];
	return d->pack_index >= 0 && d->pack_index < pack->ln
	       ? d->list[pack->l0 + d->pack_index] : n;
}

bool dm_needs_paren(const struct dm *d, int n)
{
	n = resolve(d, n);
	if (n >= 0 && d->n[n].k == K_QUAL && d->n[n].b != 1)   /* const of a pack's array */
		n = resolve(d, d->n[n].a);
	return n >= 0 && (d->n[n].k == K_FUNC || d->n[n].k == K_ARRAY);
}

/* What a pointer or reference x points at, and (a reference) whether it is
 * an lvalue one: a reference to a pack element that is a reference collapses
 * (& + & / & + && / && + & -> &; && + && -> &&). */
static int ref_target(const struct dm *d, const struct node *x, bool *lvalue)
{
	int a = resolve(d, x->a);

	*lvalue = x->k == K_REF;
	if (x->k == K_PTR || a < 0 || (d->n[a].k != K_REF && d->n[a].k != K_RREF))
		return x->a;
	*lvalue |= d->n[a].k == K_REF;
	return d->n[a].a;
}

/* The first pack a template parameter of n names (not inside another
 * expansion), or -1: what an expansion repeats over.  *budget bounds the
 * nodes visited (substitutions share subtrees: the tree is a DAG). */
static int find_pack(const struct dm *d, int n, int depth, int *budget)
{
	const struct node *x;
	int p = -1;

	if (n < 0 || depth > MAX_DEPTH || --*budget < 0)
		return -1;
	x = &d->n[n];
	if (x->k == K_PACKREF)
		return x->a;
	if (x->k == K_EXPANSION)
		return -1;
	p = find_pack(d, x->a, depth + 1, budget);
	if (p < 0 && x->k != K_QUAL)
		p = find_pack(d, x->b, depth + 1, budget);
	for (int i = 0; i < x->ln && p < 0; i++)
		p = find_pack(d, d->list[x->l0 + i], depth + 1, budget);
	return p;
}

static void print_expansion(struct dm *d, int pattern)
{
	int budget = MAX_NODES, pack = find_pack(d, pattern, 0, &budget), saved = d->pack_index;

	if (budget < 0) {
		fail(d, -ENAMETOOLONG);
		return;
	}

	if (pack < 0) {   /* a function parameter pack: the pattern and "..." */
		dm_print_operand(d, pattern);
		dm_puts_(d, "...");
		return;
	}
	for (int i = 0; i < d->n[pack].ln && !d->err; i++) {
		d->pack_index = i;
		if (i)
			dm_puts_(d, ", ");
		dm_print(d, pattern);
	}
	d->pack_index = saved;
}

/* An operand: a name or function parameter as it is, anything else in
 * parentheses (c++filt's d_print_subexpr). */
void dm_print_operand(struct dm *d, int n)
{
	bool simple = n >= 0 && (d->n[n].k == K_NAME ||
				 (d->n[n].k == K_NESTED && d->n[n].cv != 0x100));

	if (!simple)
		dm_puts_(d, "(");
	dm_print(d, n);
	if (!simple)
		dm_puts_(d, ")");
}

static void print_expr(struct dm *d, const struct node *x)
{
	bool gt;

	switch (x->k) {
	case K_UNARY:
		if (x->ref == 2) {
			dm_print_operand(d, x->a);
			dm_put(d, x->s, x->sl);
			break;
		}
		dm_put(d, x->s, x->sl);
		if (x->ref == 1) {
			dm_puts_(d, "(");
			dm_print(d, x->a);
			dm_puts_(d, ")");
		} else {
			dm_print_operand(d, x->a);
		}
		break;
	case K_BINARY:
		if (x->ref == 1) {
			dm_put(d, x->s, x->sl);
			dm_puts_(d, "<");
			dm_print(d, x->a);
			dm_puts_(d, ">(");
			dm_print(d, x->b);
			dm_puts_(d, ")");
			break;
		}
		gt = x->sl == 1 && x->s[0] == '>';   /* not the end of a template's list */
		if (gt)
			dm_puts_(d, "(");
		dm_print_operand(d, x->a);
		if (x->ref == 2) {
			dm_puts_(d, "[");
			dm_print(d, x->b);
			dm_puts_(d, "]");
		} else {
			dm_put(d, x->s, x->sl);
			dm_print_operand(d, x->b);
		}
		if (gt)
			dm_puts_(d, ")");
		break;
	case K_CALL:
		dm_print_operand(d, x->a);
		dm_puts_(d, "(");
		print_list(d, x->l0, x->ln);
		dm_puts_(d, ")");
		break;
	case K_CAST:
		dm_puts_(d, "(");
		dm_print(d, x->a);
		dm_puts_(d, ")");
		if (x->b >= 0) {
			dm_print_operand(d, x->b);
			break;
		}
		dm_puts_(d, "(");
		print_list(d, x->l0, x->ln);
		dm_puts_(d, ")");
		break;
	default:
		break;
	}
}

/* "(" of a declarator: after a type a space ("void* (*)"), none right after the
 * "(*" of an enclosing declarator ("int (*(*)())()"). */
static void open_paren(struct dm *d)
{
	if (!(d->len && d->len == d->decl_end) && last(d) != ' ')
		dm_puts_(d, " ");
	dm_puts_(d, "(");
}

/* Pointers, references and pointers to members: "int*", "void (*", "int (&",
 * "void (A::*". */
static void print_left_declarator(struct dm *d, const struct node *x)
{
	if (x->k == K_PTRMEM) {
		dm_print_left(d, x->b);
		if (d->n[x->b].k == K_FUNC)
			open_paren(d);
		else
			dm_puts_(d, " ");
		dm_print_left(d, x->a);
		dm_puts_(d, "::*");
		if (d->n[x->b].k == K_FUNC)
			d->decl_end = d->len;
		return;
	}
	bool lvalue;
	int a = ref_target(d, x, &lvalue);

	dm_print_left(d, a);
	if (dm_needs_paren(d, a))
		open_paren(d);
	dm_puts_(d, x->k == K_PTR ? "*" : lvalue ? "&" : "&&");
	if (dm_needs_paren(d, a))
		d->decl_end = d->len;
}

void dm_print_left(struct dm *d, int n)
{
	const struct node *x;

	if (n < 0 || d->err)
		return;
	if (++d->depth > MAX_DEPTH * 4) {
		fail(d, -ENAMETOOLONG);
		return;
	}
	x = &d->n[n];
	switch (x->k) {
	case K_NAME:
		dm_put(d, x->s, x->sl);
		break;
	case K_NESTED:
		dm_print_left(d, x->a);
		if (x->cv != 0x100)
			dm_puts_(d, "::");
		dm_print_left(d, x->b);
		break;
	case K_TEMPLATE:
		dm_print_left(d, x->a);
		if (last(d) == '<')
			dm_puts_(d, " ");   /* "operator<< <char>" */
		dm_puts_(d, "<");
		print_list(d, x->l0, x->ln);
		if (last(d) == '>')
			dm_puts_(d, " ");
		dm_puts_(d, ">");
		break;
	case K_QUAL:
		dm_print_left(d, x->a);
		if (x->b != 1)
			print_cv(d, x->cv);
		break;
	case K_LAMBDA:
		dm_puts_(d, "{lambda(");
		print_list(d, x->l0, x->ln);
		dm_puts_(d, ")#");
		dm_put(d, x->s, x->sl);
		dm_puts_(d, "}");
		break;
	case K_PTR: case K_REF: case K_RREF:
	case K_PTRMEM:
		print_left_declarator(d, x);
		break;
	case K_FUNC:
		dm_print_left(d, x->a);
		if (!(d->len && d->len == d->decl_end) && last(d) != ' ')
			dm_puts_(d, " ");   /* "bool (int)", "void* (*)()" */
		break;
	case K_ARRAY:
		dm_print_left(d, x->a);
		break;

	case K_VENDOR:
		dm_print_left(d, x->a);
		dm_puts_(d, " ");
		dm_put(d, x->s, x->sl);
		break;
	case K_ABI:
		dm_print_left(d, x->a);
		dm_puts_(d, "[abi:");
		dm_put(d, x->s, x->sl);
		dm_puts_(d, "]");
		break;
	case K_LOCAL:
		/* the enclosing function without its return type, as c++filt */
		if (d->n[x->a].k == K_ENC) {
			dm_print_left(d, d->n[x->a].a);
			dm_print_right(d, x->a);
		} else {
			dm_print_left(d, x->a);
			dm_print_right(d, x->a);
		}
		dm_puts_(d, "::");
		dm_print_left(d, x->b);
		dm_print_right(d, x->b);
		break;
	case K_ENC:
		if (x->b >= 0) {
			dm_print_left(d, x->b);
			if (!dm_needs_paren(d, x->b))
				dm_puts_(d, " ");
		}
		dm_print_left(d, x->a);
		break;
	case K_PACK: case K_EXPRLIST:
		print_list(d, x->l0, x->ln);
		break;
	case K_PACKREF:
		if (resolve(d, n) == n)
			fail(d, -ENOTSUP);   /* a pack outside an expansion */
		dm_print_left(d, resolve(d, n));
		break;
	case K_EXPANSION:
		print_expansion(d, x->a);
		break;
	case K_DECLTYPE:
		dm_puts_(d, "decltype (");
		dm_print(d, x->a);
		dm_puts_(d, ")");
		break;
	case K_EXPR_ARG:
		dm_print(d, x->a);
		break;
	default:
		print_expr(d, x);
		break;
	}
	d->depth--;
}

void dm_print_right(struct dm *d, int n)
{
	const struct node *x;

	if (n < 0 || d->err)
		return;
	x = &d->n[n];
	switch (x->k) {
	case K_PTR: case K_REF: case K_RREF: {
		bool lvalue;
		int a = ref_target(d, x, &lvalue);
		if (dm_needs_paren(d, a))
			dm_puts_(d, ")");
		dm_print_right(d, a);
		break;
	}
	case K_PACKREF:
		if (resolve(d, n) != n)
			dm_print_right(d, resolve(d, n));
		break;
	case K_PTRMEM:
		if (d->n[x->b].k == K_FUNC)
			dm_puts_(d, ")");
		dm_print_right(d, x->b);
		break;
	case K_FUNC:
		dm_puts_(d, "(");
		print_list(d, x->l0, x->ln);
		dm_puts_(d, ")");
		print_cv(d, x->cv);
		if (x->ref)
			dm_puts_(d, x->ref == 1 ? " &" : " &&");
		dm_print_right(d, x->a);
		break;
	case K_ARRAY:
		dm_puts_(d, " [");
		dm_put(d, x->s, x->sl);
		dm_puts_(d, "]");
		dm_print_right(d, x->a);
		break;
	case K_QUAL:
		dm_print_right(d, x->a);
		break;
	case K_VENDOR:
		dm_print_right(d, x->a);
		break;
	case K_ENC: {
		const struct node *nm = &d->n[x->a];
		if (nm->k == K_LOCAL)
			nm = &d->n[nm->b];
		dm_puts_(d, "(");
		print_list(d, x->l0, x->ln);
		dm_puts_(d, ")");
		if (nm->k == K_QUAL) {
			print_cv(d, nm->cv);
			if (nm->ref)
				dm_puts_(d, nm->ref == 1 ? " &" : " &&");
		}
		if (x->b >= 0)
			dm_print_right(d, x->b);
		break;
	}
	default:
		break;
	}
}

/* " [clone .isra.0]" for each ".word[.digits]*" suffix; false on anything else. */
