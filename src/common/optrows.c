/* optrows.c — see optrows.h. */
#include "common/optrows.h"

#include <errno.h>
#include <string.h>

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

int opt_rows_parse(int argc, char **argv, const struct opt_use *uses, size_t n,
		   const char *shorts, struct err *e)
{
	struct option opts[MAX_OPTS + 1];
	char optstring[64];
	size_t n_opts = 0;
	int c, rc;

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
	while ((c = getopt_long(argc, argv, optstring, opts, NULL)) != -1) {
		if (c == '?' || c == ':')
			return -EINVAL;      /* getopt said what */
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
