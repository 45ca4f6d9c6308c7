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

static void print_list(struct dm *d, int l0, int ln)
{
	for (int i = 0; i < ln && !d->err; i++) {
		if (i)
			dm_puts_(d, ", ");
		dm_print_left(d, d->list[l0 + i]);
		dm_print_right(d, d->list[l0 + i]);
	}
}

bool dm_needs_paren(const struct dm *d, int n)
{
	return n >= 0 && (d->n[n].k == K_FUNC || d->n[n].k == K_ARRAY);
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
	dm_print_left(d, x->a);
	if (dm_needs_paren(d, x->a))
		open_paren(d);
	dm_puts_(d, x->k == K_PTR ? "*" : x->k == K_REF ? "&" : "&&");
	if (dm_needs_paren(d, x->a))
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
	case K_PTR: case K_REF: case K_RREF:
		if (dm_needs_paren(d, x->a))
			dm_puts_(d, ")");
		dm_print_right(d, x->a);
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
