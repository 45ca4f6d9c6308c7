/* demangle.c — see demangle.h.  A recursive-descent parser builds a small node
 * tree (fixed pools, no malloc), keeping the substitution and template
 * argument tables the ABI defines; a printer writes names, and types in two
 * halves (left/right of the declarator) as c++filt does for pointers to
 * functions and arrays.  This file: <encoding>, thunks and clone suffixes,
 * the entry points; <name> in demangle_names.c, <type> in demangle_types.c,
 * the printer in demangle_print.c, what they share in demangle_priv.h. */
#include "resolve/demangle.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "resolve/demangle_priv.h"

int dm_encoding(struct dm *d)
{
	bool tpl, cdtor;
	int nm, ret = -1, e, l0;

	if (++d->depth > MAX_DEPTH)
		return fail(d, -ENAMETOOLONG);
	d->has_tparams = 0;
	if ((nm = dm_name(d, &tpl, &cdtor)) < 0)
		return -1;
	if (d->p >= d->end || peek(d, 0) == 'E' || peek(d, 0) == '.') {
		d->depth--;
		return nm;   /* a data name */
	}
	if (tpl && !cdtor && (ret = dm_type(d)) < 0)
		return -1;
	l0 = list_begin(d);
	int tmp[256], n = 0;
	while (d->p < d->end && peek(d, 0) != 'E' && peek(d, 0) != '.') {
		int t = dm_type(d);
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

/* ---- what follows the encoding, and the entry points ------------------------------- */

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

/* What c++filt writes before the type or name of a special (data) name. */
static const char *const SPECIAL[][2] = {
	{ "TV", "vtable for " }, { "TT", "VTT for " }, { "TI", "typeinfo for " },
	{ "TS", "typeinfo name for " }, { "TC", "construction vtable for " },
	{ "GV", "guard variable for " }, { "TH", "TLS init function for " },
	{ "TW", "TLS wrapper function for " },
};

/* A vtable, VTT, typeinfo, guard variable or TLS function: "vtable for A";
 * "TC" A N "_" B: "construction vtable for B-in-A".  The whole text is the
 * name range. */
static int special_name(struct dm *d)
{
	size_t i = 0;
	int a, b = -1;
	long offset;
	bool tpl, cd;

	while (i < sizeof(SPECIAL) / sizeof(SPECIAL[0]) && !eat(d, SPECIAL[i][0]))
		i++;
	if (i == sizeof(SPECIAL) / sizeof(SPECIAL[0]))
		return -ENOTSUP;   /* other thunks, transaction clones, … */
	a = SPECIAL[i][0][0] == 'G' || SPECIAL[i][0][1] == 'H' || SPECIAL[i][0][1] == 'W'
	    ? dm_name(d, &tpl, &cd) : dm_type(d);
	if (a >= 0 && SPECIAL[i][0][1] == 'C' &&
	    (!num(d, &offset) || !eat(d, "_") || (b = dm_type(d)) < 0))
		return d->err ? d->err : -EINVAL;
	if (d->err || a < 0)
		return d->err ? d->err : -EINVAL;
	dm_puts_(d, SPECIAL[i][1]);
	dm_print(d, b >= 0 ? b : a);
	if (b >= 0) {
		dm_puts_(d, "-in-");
		dm_print(d, a);
	}
	return !d->err && !clones(d) ? -EINVAL : d->err;
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
	d->pack_index = -1;
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
		int rc = special_name(d);
		if (!rc && name_start)
			*name_start = 0;
		if (!rc && name_end)
			*name_end = d->len;
		return rc;
	}
	e = dm_encoding(d);
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
