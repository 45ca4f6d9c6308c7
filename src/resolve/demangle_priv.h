/* demangle_priv.h — the demangler's node tree, parser state and primitives,
 * shared by the parser (demangle.c: encodings and the entry points;
 * demangle_names.c; demangle_types.c) and the printer (demangle_print.c). */
#ifndef UPROBESTATS_RESOLVE_DEMANGLE_PRIV_H
#define UPROBESTATS_RESOLVE_DEMANGLE_PRIV_H

#include <stdbool.h>
#include <stddef.h>

#define MAX_NODES 4096
#define MAX_LIST 4096
#define MAX_SUBS 512
#define MAX_DEPTH 128

enum nk {
	K_NAME,      /* s/sl: text */
	K_NESTED,    /* a::b */
	K_TEMPLATE,  /* a<list> */
	K_QUAL,      /* a + cv */
	K_PTR, K_REF, K_RREF,
	K_FUNC,      /* ret a, params list, cv, ref */
	K_ARRAY,     /* a [s] */
	K_PTRMEM,    /* class a, member b */
	K_VENDOR,    /* a + " " + b(name) */
	K_ABI,       /* a[abi:s] */
	K_LOCAL,     /* a::b (a an encoding) */
	K_ENC,       /* name a, ret b (or -1), params list, cv, ref */
	K_LAMBDA,    /* "{lambda(" list ")#" s "}" */
	K_PACK,      /* a template argument pack "J...E": list, printed comma-separated */
	K_PACKREF,   /* a template parameter naming pack a: its element d->pack_index */
	K_EXPANSION, /* "Dp" type or "sp" expression a, once per element of its pack */
	K_DECLTYPE,  /* "decltype (" expression a ")" */
	/* expressions (demangle_expr.c) */
	K_EXPR_ARG,  /* a template argument or literal a: parenthesized as an operand */
	K_UNARY,     /* s a; ref 1: "sizeof (" a ")", ref 2: a s (suffix ++/--) */
	K_BINARY,    /* a s b; ref 1: s "<" a ">(" b ")" (casts), ref 2: a "[" b "]" */
	K_CALL,      /* a "(" list ")" */
	K_EXPRLIST,  /* list, comma-separated */
	K_CAST,      /* "(" type a ")" b */
};

struct node {
	enum nk k;
	const char *s;
	size_t sl;
	int a, b;
	int l0, ln;         /* list items in dm.list[l0 .. l0+ln) */
	unsigned cv;        /* 1 const, 2 volatile, 4 restrict */
	int ref;            /* 0, 1 (&), 2 (&&) */
};

struct dm {
	const char *p, *end;
	int nn, nl, ns;
	size_t pl;
	int tparams, has_tparams;  /* a K_TEMPLATE node whose list is in scope */
	const char *last_src;      /* last source name (for ctor/dtor names) */
	size_t last_src_len;
	int depth;
	int err;                   /* -EINVAL / -ENOTSUP / -ENAMETOOLONG */
	char *out;
	size_t size, len;
	size_t decl_end;           /* output length right after a declarator's "(*" */
	int pack_index;            /* the element a K_PACKREF prints (-1: none) */
	size_t taken_back;         /* len + 1 after a ", " was taken back: c++filt's
				    * last character is still its ' ' there */
	int local_depth;           /* inside a local name in a type ("Z...E" of a lambda) */
	long last_tparam;          /* the index the last "T" named */
	/* the pools (not cleared between calls) */
	struct node n[MAX_NODES];
	int list[MAX_LIST];
	int subs[MAX_SUBS];
	/* per substitution: -1, or the template parameter index of a "T" inside
	 * a local name in a type, which c++filt reads outside that name against
	 * the template printed there (-2: not supported) */
	short sub_tparam[MAX_SUBS];
	char pool[4096];
};

/* Records the first error (-EINVAL, -ENOTSUP, -ENAMETOOLONG); -1 for the caller. */
static inline int fail(struct dm *d, int e)
{
	if (!d->err)
		d->err = e;
	return -1;
}

/* ---- parser primitives (the parser files share them) ---- */

#include <errno.h>
#include <string.h>

static inline int mk(struct dm *d, enum nk k, const char *s, size_t sl, int a, int b)
{
	if (d->err)
		return -1;
	if (d->nn >= MAX_NODES)
		return fail(d, -ENAMETOOLONG);
	d->n[d->nn] = (struct node){ .k = k, .s = s, .sl = sl, .a = a, .b = b };
	return d->nn++;
}

/* Text kept in the pool (numbers turned into text). */
static inline int mkpool(struct dm *d, const char *text)
{
	size_t l = strlen(text);
	if (d->pl + l + 1 > sizeof(d->pool))
		return fail(d, -ENAMETOOLONG);
	memcpy(d->pool + d->pl, text, l + 1);
	d->pl += l + 1;
	return mk(d, K_NAME, d->pool + d->pl - l - 1, l, -1, -1);
}

static inline int mks(struct dm *d, const char *s)
{
	return mk(d, K_NAME, s, strlen(s), -1, -1);
}

static inline void push_sub(struct dm *d, int n)
{
	if (n < 0 || d->err)
		return;
	if (d->ns >= MAX_SUBS) {
		fail(d, -ENAMETOOLONG);
		return;
	}
	d->sub_tparam[d->ns] = -1;
	d->subs[d->ns++] = n;
}

static inline bool eat(struct dm *d, const char *s)
{
	size_t k = strlen(s);
	if (d->p < d->end && (size_t)(d->end - d->p) >= k && !memcmp(d->p, s, k)) {
		d->p += k;
		return true;
	}
	return false;
}

static inline char peek(const struct dm *d, int i)
{
	return d->p < d->end && d->end - d->p > i ? d->p[i] : 0;
}

static inline bool num(struct dm *d, long *v)
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
static inline long seq_id(struct dm *d)
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

static inline int list_begin(struct dm *d)
{
	return d->nl;
}

static inline int list_add(struct dm *d, int item)
{
	if (d->nl >= MAX_LIST)
		return fail(d, -ENAMETOOLONG);
	d->list[d->nl++] = item;
	return 0;
}

/* ---- the parser, one grammar part per file; each returns a node, or -1
 * with d->err set ---- */

/* demangle_names.c: <name> and its parts (nested, local, unqualified,
 * operator, ctor/dtor, lambda and unnamed, ABI tags), substitutions and
 * template parameters. */
int dm_name(struct dm *d, bool *is_template, bool *is_cdtor);
int dm_substitution(struct dm *d);     /* S... */
int dm_template_param(struct dm *d);   /* T... (a pack: a K_PACKREF to it) */
int dm_template_arg_at(struct dm *d, long id);   /* the argument T<id> names now */
int dm_unqualified_name(struct dm *d);
/* The operator a two-letter code spells ("pl" -> "+"), NULL for none. */
const char *dm_operator_text(const char *code);
/* demangle_types.c: <type>, literals and <template-args>. */
int dm_type(struct dm *d);
int dm_template_args(struct dm *d);
int dm_literal(struct dm *d);          /* after "L" */
/* demangle_expr.c: <expression>. */
int dm_expression(struct dm *d);
/* demangle.c: <encoding> (a function's name and parameter types, or data). */
int dm_encoding(struct dm *d);

/* demangle_print.c: appending to d->out (bounded; -ENAMETOOLONG past size),
 * and a type in two halves, left and right of its declarator. */
void dm_put(struct dm *d, const char *s, size_t n);
void dm_puts_(struct dm *d, const char *s);
void dm_print_left(struct dm *d, int n);
void dm_print_right(struct dm *d, int n);
/* n whole; an expression's operand in parentheses unless a name. */
void dm_print(struct dm *d, int n);
void dm_print_operand(struct dm *d, int n);
/* A type whose declarator needs parentheses ("(*)" of a pointer to a function
 * or array). */
bool dm_needs_paren(const struct dm *d, int n);

#endif
