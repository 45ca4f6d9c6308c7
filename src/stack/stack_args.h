/* stack_args.h — the call-stack options of `run` (and of any command that
 * attaches probes), as rows (common/optrows.h): --stack[=FRAMES],
 * --stack-mode=copy|kernel, --stack-bytes=N, --stacks FILE, --stacks-merge
 * and --show-art-frames, filling a
 * struct stack_args.  A command parses them with its other rows and copies
 * the result into its plan options (cli: run_opts_plan_stacks) and sink
 * options (the folded-stacks file). */
#ifndef UPROBESTATS_STACK_STACK_ARGS_H
#define UPROBESTATS_STACK_STACK_ARGS_H

#include <stdint.h>

#include "common/optrows.h"

struct stack_args {
	uint32_t frames;             /* --stack[=FRAMES]; 0: off */
	uint32_t mode;               /* enum ups_stack_mode; 0: the default (copy) */
	uint32_t bytes;              /* --stack-bytes; 0: UPS_STACK_DEFAULT_BYTES */
	const char *folded;          /* --stacks FILE */
	bool folded_merge;           /* --stacks-merge: one graph, no process root frame */
	bool art_frames;             /* --show-art-frames */
};

/* The rows; their context is a struct stack_args. */
extern const struct opt_rows stack_args_rows;

#endif
