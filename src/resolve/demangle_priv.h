/* demangle_priv.h — the demangler's node tree and parser state, shared by
 * the parser (demangle.c) and the printer (demangle_print.c). */
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
	/* the pools (not cleared between calls) */
	struct node n[MAX_NODES];
	int list[MAX_LIST];
	int subs[MAX_SUBS];
	char pool[4096];
};

/* Records the first error (-EINVAL, -ENOTSUP, -ENAMETOOLONG); -1 for the caller. */
static inline int fail(struct dm *d, int e)
{
	if (!d->err)
		d->err = e;
	return -1;
}

/* demangle_print.c: appending to d->out (bounded; -ENAMETOOLONG past size),
 * and a type in two halves, left and right of its declarator. */
void dm_put(struct dm *d, const char *s, size_t n);
void dm_puts_(struct dm *d, const char *s);
void dm_print_left(struct dm *d, int n);
void dm_print_right(struct dm *d, int n);
/* A type whose declarator needs parentheses ("(*)" of a pointer to a function
 * or array). */
bool dm_needs_paren(const struct dm *d, int n);

#endif
