/* optrows.c — see optrows.h. */
#include "common/optrows.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "common/edit_distance.h"

#define FIRST_VAL 0x1000       /* clear of every character getopt returns */
#define TABLE_SPAN 0x100       /* values of table k: FIRST_VAL + k * TABLE_SPAN + row */
#define MAX_OPTS 128

int opt_set_true(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	*(bool *)((char *)ctx + row->off) = true;
	return 0;
}

int opt_set_str(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	*(const char **)((char *)ctx + row->off) = arg;
	return 0;
}

int opt_rows_getopt(const struct opt_rows *r, int first, struct option *opts, size_t *n,
		    size_t max)
{
	if (*n > max || max - *n < r->n)
		return -ENOSPC;
	for (size_t i = 0; i < r->n; i++)
		opts[(*n)++] = (struct option){ r->v[i].name, r->v[i].has_arg, NULL,
						first + (int)i };
	return 0;
}

int opt_rows_take(const struct opt_rows *r, int first, void *ctx, int opt, const char *arg,
		  struct err *e)
{
	int rc;

	if (opt < first || opt >= first + (int)r->n)
		return 0;
	rc = r->v[opt - first].take(ctx, &r->v[opt - first], arg, e);
	return rc < 0 || rc == OPT_ROW_STOP ? rc : 1;
}

/* The short letters in shorts that rows have, with getopt's colons. */
static int short_string(const struct opt_use *uses, size_t n, const char *shorts,
			char *out, size_t size)
{
	size_t len = 0;

	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < uses[k].rows->n; i++) {
			const struct opt_row *row = &uses[k].rows->v[i];
			if (!row->short_name || !strchr(shorts, row->short_name))
				continue;
			if (len + 4 > size)
				return -ENOSPC;
			out[len++] = row->short_name;
			if (row->has_arg != no_argument)
				out[len++] = ':';
			if (row->has_arg == optional_argument)
				out[len++] = ':';
		}
	out[len] = 0;
	return 0;
}

/* getopt's value for a short letter: its row's long value. */
static int short_to_val(const struct opt_use *uses, size_t n, int c)
{
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < uses[k].rows->n; i++)
			if (uses[k].rows->v[i].short_name == c)
				return FIRST_VAL + (int)(k * TABLE_SPAN + i);
	return c;
}

/* The row getopt's value val stands for, or NULL. */
static const struct opt_row *row_of_val(const struct opt_use *uses, size_t n, int val)
{
	for (size_t k = 0; k < n; k++) {
		int first = FIRST_VAL + (int)(k * TABLE_SPAN);
		if (val >= first && val < first + (int)uses[k].rows->n)
			return &uses[k].rows->v[val - first];
	}
	return NULL;
}

/* The long option nearest to name[0..len): a row name it starts (the first
 * of those: an abbreviation, which is refused), else the one at the least edit distance when that
 * is small for the name's length (a typo, not another word).  NULL: none.
 * *prefixes: how many row names start with the name. */
static const char *nearest_long(const struct opt_use *uses, size_t n, const char *name,
				size_t len, size_t *prefixes)
{
	const char *best = NULL, *first_prefix = NULL;
	size_t best_d = SIZE_MAX, limit = len < 3 ? 1 : len < 9 ? 2 : 3;

	*prefixes = 0;
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < uses[k].rows->n; i++) {
			const char *cand = uses[k].rows->v[i].name;
			size_t d = edit_distance(name, len, cand, strlen(cand));
			if (len && !strncmp(cand, name, len) && !(*prefixes)++)
				first_prefix = cand;
			if (d < best_d) {
				best_d = d;
				best = cand;
			}
		}
	if (first_prefix)
		return first_prefix;
	return best_d <= limit ? best : NULL;
}

/* The error for what getopt refused (it prints nothing: opterr is 0):
 * an unknown option gets the command's nearest one. */
static int bad_option(char **argv, const struct opt_use *uses, size_t n, const char *optstring,
		      int c, struct err *e)
{
	const struct opt_row *row = row_of_val(uses, n, optopt);
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	const char *name, *near;
	size_t len, prefixes;

	if (row)
		return err_set(e, -EINVAL, "option '--%s' %s", row->name,
			       row->has_arg == no_argument ? "takes no value" : "needs a value");
	if (optopt) {
		const struct opt_row *r = row_of_val(uses, n, short_to_val(uses, n, optopt));
		if (c == ':' || (r && strchr(optstring, optopt)))
			return err_set(e, -EINVAL, "option '-%c' needs a value", optopt);
		return err_set(e, -EINVAL, "unknown option '-%c'", optopt);
	}
	name = arg + strspn(arg, "-");
	len = strcspn(name, "=");
	near = nearest_long(uses, n, name, len, &prefixes);
	if (prefixes > 1)
		return err_set(e, -EINVAL, "unknown option '--%.*s' (--%s and %zu more start so: "
			       "give the whole name)", (int)len, name, near, prefixes - 1);
	if (near)
		return err_set(e, -EINVAL, "unknown option '--%.*s' (did you mean --%s?)",
			       (int)len, name, near);
	return err_set(e, -EINVAL, "unknown option '%s' (see --help)", arg);
}

/* getopt_long takes a unique abbreviation (--exit-probe for --exit-probes)
 * as the option; we take only whole names, so that an option added later
 * never changes what a command line meant.  li: the long option getopt
 * matched; its word is argv[optind - 1], or argv[optind - 2] when its value
 * was the next word (getopt has permuted both before the operands). */
static int abbreviated(char **argv, const struct option *opt, struct err *e)
{
	const char *word, *name;
	size_t len;

	word = optind > 1 && optarg && optarg == argv[optind - 1] ? argv[optind - 2]
								  : argv[optind - 1];
	name = word + strspn(word, "-");
	len = strcspn(name, "=");
	if (len == strlen(opt->name) && !strncmp(name, opt->name, len))
		return 0;
	return err_set(e, -EINVAL, "unknown option '--%.*s' (did you mean --%s?)", (int)len,
		       name, opt->name);
}

int opt_rows_parse(int argc, char **argv, const struct opt_use *uses, size_t n,
		   const char *shorts, struct err *e)
{
	struct option opts[MAX_OPTS + 1];
	char optstring[64];
	size_t n_opts = 0;
	int c, rc, li;

	e->code = 0;
	e->msg[0] = 0;
	for (size_t k = 0; k < n; k++)
		if (uses[k].rows->n > TABLE_SPAN ||
		    opt_rows_getopt(uses[k].rows, FIRST_VAL + (int)(k * TABLE_SPAN), opts, &n_opts,
				    MAX_OPTS) < 0)
			return err_set(e, -ENOSPC, "too many options for one command");
	opts[n_opts] = (struct option){ 0 };
	if (short_string(uses, n, shorts, optstring, sizeof(optstring)) < 0)
		return err_set(e, -ENOSPC, "too many short options for one command");
	optind = 1;
	opterr = 0;
	while ((li = -1, c = getopt_long(argc, argv, optstring, opts, &li)) != -1) {
		if (c == '?' || c == ':')
			return bad_option(argv, uses, n, optstring, c, e);
		if (li >= 0 && (size_t)li < n_opts && (rc = abbreviated(argv, &opts[li], e)) < 0)
			return rc;
		if (c < FIRST_VAL)
			c = short_to_val(uses, n, c);
		rc = 0;
		for (size_t k = 0; k < n && !rc; k++)
			rc = opt_rows_take(uses[k].rows, FIRST_VAL + (int)(k * TABLE_SPAN),
					   uses[k].ctx, c, optarg, e);
		if (rc < 0 || rc == OPT_ROW_STOP)
			return rc;
		if (!rc)
			return err_set(e, -EINVAL, "unknown option value %d", c);
	}
	return 0;
}
