/* cmd_match.h — `methods --match` and `resolve` with a pattern (cmd_oat.c parses
 * argv and calls these; they print to out and return errors for it to print:
 * -EINVAL from pattern_parse means a bad pattern, exit 2). */
#ifndef UPROBESTATS_CLI_CMD_MATCH_H
#define UPROBESTATS_CLI_CMD_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/err.h"

struct code_cache;

struct match_cmd_opts {
	const char *pattern;
	const char *file;       /* NULL: the pattern's FILE part, or search (pid, roots) */
	int pid;
	bool json;
	size_t max;             /* 0: PATTERN_DEFAULT_MAX */
	const char *cache_dir;
	bool no_cache;
	/* The command's code cache (code/codecache.h): the files matched and
	 * the exit sites printed read through it; NULL: the matching's own. */
	struct code_cache *code;
};

int methods_match_cmd(const struct match_cmd_opts *o, FILE *out, struct err *err);
int resolve_pattern_cmd(const struct match_cmd_opts *o, FILE *out, struct err *err);
/* Is this `resolve` argument a pattern rather than a config method_signature
 * (globs, LIB:SYMBOL, or no return type before the name)? */
bool resolve_arg_is_pattern(const char *s);

#endif
