/* validate.h — checking a loaded config for everything that would make it
 * fail on a device, and the list of problems found.
 *
 * Validation never stops at the first problem: every one is appended to a
 * struct config_problems (problems.h), so `check` can print them all.  The
 * guardrail (guardrail.h) appends to the same list.  The
 * names of the embedded BPF programs and maps belong to the probe stage and
 * come in through struct config_catalog. */
#ifndef UPROBESTATS_CONFIG_VALIDATE_H
#define UPROBESTATS_CONFIG_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>

#include "config/config.h"
#include "config/problems.h"

/* The probe stage's embedded programs and maps.  Any callback may be NULL,
 * which skips that check. */
struct config_catalog {
	bool (*has_program)(const char *name, void *ctx);
	bool (*has_map)(const char *name, void *ctx);
	/* "prog_A, prog_B, ..." for messages; may return NULL. */
	const char *(*known_programs_hint)(void *ctx);
	void *ctx;
};

struct config_validate_opts {
	const struct config_catalog *catalog;  /* NULL: skip program/map name checks */
	bool pid_given;                        /* the CLI names the pid: no target needed */
};

/* Append every problem of cfg to out (which starts zeroed or holds earlier
 * problems).  Returns the number of errors appended (not warnings), or
 * -ENOMEM. */
int config_validate(const struct uprobestats_config *cfg,
		    const struct config_validate_opts *opts, struct config_problems *out);

/* The number of Java parameters of a probe (from fully_qualified_parameters
 * or the method_signature), or -1 for a native (ELF symbol) probe, or -2
 * when it cannot be told (no identity, malformed signature). */
int config_probe_param_count(const struct probe_config *p);

#endif
