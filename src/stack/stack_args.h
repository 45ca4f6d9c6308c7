/* stack_args.h — the call-stack options of `run` (and of any command that
 * attaches probes), as rows like sink/sink_args.h: --stack[=FRAMES],
 * --stack-mode=copy|kernel, --stack-bytes=N and --stacks FILE.  A command
 * adds the rows to its getopt table, hands each value to stack_args_parse,
 * and copies the result into its plan options (cli: run_opts_plan_stacks) and sink
 * options (the folded-stacks file). */
#ifndef UPROBESTATS_STACK_STACK_ARGS_H
#define UPROBESTATS_STACK_STACK_ARGS_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct stack_args {
	uint32_t frames;             /* --stack[=FRAMES]; 0: off */
	uint32_t mode;               /* enum ups_stack_mode; 0: the default (copy) */
	uint32_t bytes;              /* --stack-bytes; 0: UPS_STACK_DEFAULT_BYTES */
	const char *folded;          /* --stacks FILE */
};

/* getopt values of the rows (clear of sink_args' 0x1000 block). */
#define STACK_ARGS_FIRST_OPT 0x1100

int stack_args_getopt(struct option *opts, size_t *n, size_t max);

/* 0 when opt is no stack option, 1 when taken, negative with e set. */
int stack_args_parse(struct stack_args *a, int opt, const char *arg, struct err *e);

#endif
