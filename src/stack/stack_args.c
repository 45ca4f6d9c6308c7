#include "stack/stack_args.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse_u32.h"
#include "records.h"

static int parse_stack(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	struct stack_args *a = ctx;

	if (!arg) {
		a->frames = UPS_STACK_DEFAULT_FRAMES;
		return 0;
	}
	return parse_u32_arg(arg, 1, UPS_STACK_MAX_FRAMES, "--stack", "a number of frames",
			     &a->frames, e);
}

static int parse_mode(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	struct stack_args *a = ctx;

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

static int parse_bytes(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	struct stack_args *a = ctx;

	if (parse_u32(arg, 8, UPS_STACK_MAX_BYTES, &a->bytes) < 0 || a->bytes % 8)
		return err_set(e, -EINVAL, "--stack-bytes takes a multiple of 8 from 8 to %u, "
			       "not '%s'", UPS_STACK_MAX_BYTES, arg);
	return 0;
}

static int parse_folded(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	struct stack_args *a = ctx;

	(void)e;
	a->folded = arg;
	if (!a->frames)
		a->frames = UPS_STACK_DEFAULT_FRAMES;
	return 0;
}

static int parse_art(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	(void)row;
	(void)arg;
	(void)e;
	((struct stack_args *)ctx)->art_frames = true;
	return 0;
}

static const struct opt_row rows[] = {
	{ "stack", 0, optional_argument, parse_stack, 0 },
	{ "stack-mode", 0, required_argument, parse_mode, 0 },
	{ "stack-bytes", 0, required_argument, parse_bytes, 0 },
	{ "stacks", 0, required_argument, parse_folded, 0 },
	{ "show-art-frames", 0, no_argument, parse_art, 0 },
};

const struct opt_rows stack_args_rows = OPT_ROWS(rows);
