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

static int parse_merge(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	(void)row;
	(void)arg;
	(void)e;
	((struct stack_args *)ctx)->folded_merge = true;
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
	{ "stack", 0, optional_argument, parse_stack, 0,
	  OPT_DOC(OUTPUT, "FRAMES", "the call stack of every hit, up to FRAMES (32; max 64), unwound from a copy of the user stack (Java, CFI, frame pointers)") },
	{ "stack-mode", 0, required_argument, parse_mode, 0,
	  OPT_DOC(ADVANCED, "copy|kernel", "copy: as --stack says; kernel: compiled Java frames walked in BPF, the native callers above them unwound from a copy") },
	{ "stack-bytes", 0, required_argument, parse_bytes, 0,
	  OPT_DOC(ADVANCED, "N", "user stack bytes copied per hit (2048; 8..16384)") },
	{ "stacks", 0, required_argument, parse_folded, 0,
	  OPT_DOC(OUTPUT, "FILE", "at exit, the stacks counted in folded form (speedscope, flamegraph.pl), each under its process's name as the root frame; implies --stack") },
	{ "stacks-merge", 0, no_argument, parse_merge, 0,
	  OPT_DOC(OUTPUT, "", "--stacks without the process root frame: one graph for every process") },
	{ "show-art-frames", 0, no_argument, parse_art, 0,
	  OPT_DOC(OUTPUT, "", "keep libart's own frames (interpreter, stubs) in stacks that hold Java frames") },
};

const struct opt_rows stack_args_rows = OPT_ROWS(rows);
