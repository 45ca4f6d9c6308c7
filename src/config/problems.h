/* problems.h — the list of problems validation and the guardrail find in a
 * config: each a location, a kind, a severity and one line of text. */
#ifndef UPROBESTATS_CONFIG_PROBLEMS_H
#define UPROBESTATS_CONFIG_PROBLEMS_H

#include <stddef.h>
#include <stdio.h>

#include "config/config.h"

enum config_problem_kind {
	CP_NO_TASKS = 1,        /* the config holds no task / a task holds no probe */
	CP_METHOD,              /* a probe without a usable method identity */
	CP_PROGRAM,             /* missing or unknown bpf_name */
	CP_MAP,                 /* unknown or empty map name */
	CP_ARG_POSITION,        /* an argument position the method does not have */
	CP_DURATION,            /* duration_seconds <= 0 */
	CP_ATOM,                /* statsd config / atom config without a valid atom id */
	CP_TARGET,              /* missing or contradictory target process selection */
	CP_BINDER,              /* binder transaction filters */
	CP_ENUM,                /* an enum value this version does not know (binary input) */
	CP_GUARDRAIL,           /* refused by the user-build allowlist */
};

enum config_severity {
	CS_ERROR = 0,           /* check fails */
	CS_WARNING,             /* printed; check still passes */
};

struct config_problem {
	struct src_loc loc;
	enum config_problem_kind kind;
	enum config_severity severity;
	char *msg;              /* one line, no location, no newline */
	size_t task;            /* index, or SIZE_MAX for the whole config */
	size_t probe;           /* index within the task, or SIZE_MAX */
};

/* Lives in the config's arena (freed by config_free). */
struct config_problems {
	struct config_problem *v;
	size_t n;
	size_t n_errors;
	size_t n_warnings;
};

/* Append one problem (printf-style message); used by validate and guardrail.
 * Returns 0 or -ENOMEM. */
int config_problem_add(const struct uprobestats_config *cfg, struct config_problems *out,
		       const struct src_loc *loc, enum config_problem_kind kind,
		       enum config_severity sev, size_t task, size_t probe, const char *fmt, ...)
	__attribute__((format(printf, 8, 9)));

/* "no-tasks", "method", "program", ... */
const char *config_problem_kind_name(enum config_problem_kind k);

/* One line per problem, compiler style, then a summary line:
 *   t.textproto:12:23: error: duration_seconds must be > 0, found 0 [duration]
 *   2 errors, 1 warning */
void config_print_problems(FILE *out, const struct uprobestats_config *cfg,
			   const struct config_problems *p);

#endif
