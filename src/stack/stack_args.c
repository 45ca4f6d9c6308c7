#include "stack/stack_args.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse_u32.h"
#include "records.h"

static int parse_stack(struct stack_args *a, const char *arg, struct err *e)
{
	if (!arg) {
		a->frames = UPS_STACK_DEFAULT_FRAMES;
		return 0;
	}
	return parse_u32_arg(arg, 1, UPS_STACK_MAX_FRAMES, "--stack", "a number of frames",
			     &a->frames, e);
}

static int parse_mode(struct stack_args *a, const char *arg, struct err *e)
{
	if (!strcmp(arg, "copy")) {
		a->mode = UPS_STACK_COPY;
		return 0;
	}
	if (!strcmp(arg, "kernel")) {
		a->mode = UPS_STACK_KERNEL;
		return 0;
	}
	return err_set(e, -EINVAL, "--stack-mode takes copy or kernel, not '%s'", arg);
}

static int parse_bytes(struct stack_args *a, const char *arg, struct err *e)
{
	if (parse_u32(arg, 8, UPS_STACK_MAX_BYTES, &a->bytes) < 0 || a->bytes % 8)
		return err_set(e, -EINVAL, "--stack-bytes takes a multiple of 8 from 8 to %u, "
			       "not '%s'", UPS_STACK_MAX_BYTES, arg);
	return 0;
}

static int parse_folded(struct stack_args *a, const char *arg, struct err *e)
{
	(void)e;
	a->folded = arg;
	if (!a->frames)
		a->frames = UPS_STACK_DEFAULT_FRAMES;
	return 0;
}

static const struct {
	const char *name;
	int has_arg;
	int (*parse)(struct stack_args *a, const char *arg, struct err *e);
} rows[] = {
	{ "stack", optional_argument, parse_stack },
	{ "stack-mode", required_argument, parse_mode },
	{ "stack-bytes", required_argument, parse_bytes },
	{ "stacks", required_argument, parse_folded },
};

#define N_ROWS (sizeof(rows) / sizeof(rows[0]))

int stack_args_getopt(struct option *opts, size_t *n, size_t max)
{
	if (*n > max || max - *n < N_ROWS)
		return -ENOSPC;
	for (size_t i = 0; i < N_ROWS; i++)
		opts[(*n)++] = (struct option){ rows[i].name, rows[i].has_arg, NULL,
						STACK_ARGS_FIRST_OPT + (int)i };
	return 0;
}

int stack_args_parse(struct stack_args *a, int opt, const char *arg, struct err *e)
{
	int rc;

	if (opt < STACK_ARGS_FIRST_OPT || opt >= STACK_ARGS_FIRST_OPT + (int)N_ROWS)
		return 0;
	rc = rows[opt - STACK_ARGS_FIRST_OPT].parse(a, arg, e);
	return rc < 0 ? rc : 1;
}
