/* self_atoms.h — upstream's self-metric atoms about the run itself, besides the
 * per-map "polled" atom (cmd_run.c): one "probe attached" atom per probe once every
 * probe is attached, and an "internal error" atom when attaching or polling fails.
 * Shapes as upstream's newest daemon writes them (sink/statsd_atoms.h); the atom ids
 * and the numbers of upstream's program/map/error enums are not published, so the
 * ids come from the command line (--attached-atom, --error-atom) and the numbers
 * are ours (docs/programs.md, "Atoms about the run"). */
#ifndef UPROBESTATS_CLI_SELF_ATOMS_H
#define UPROBESTATS_CLI_SELF_ATOMS_H

#include <stdint.h>

#include "plan/plan.h"
#include "sink/sinks.h"

/* Our numbering of upstream's ErrorType, in upstream's order of declaration. */
enum self_error_type {
	SELF_ERROR_UNSPECIFIED = 0,
	SELF_ERROR_CONFIG_PARSE_FAILED = 1,
	SELF_ERROR_TASK_CONFLICT = 2,
	SELF_ERROR_TASK_EXECUTION_FAILED = 3,
	SELF_ERROR_BINDER_FILTER_SETUP_FAILED = 4,
	SELF_ERROR_BINDER_FILTER_CLEANUP_FAILED = 5,
};

/* Where a task failed (the failure_point field). */
enum self_failure_point {
	SELF_FAILED_ATTACHING = 1,
	SELF_FAILED_POLLING = 2,
};

/* A program's number in these atoms: catalog object index * 64 + program index + 1
 * (0: unknown). */
int32_t self_program_code(const struct plan_probe *p);

/* One attached atom per probe of the plan (program, class, method, process, task id). */
void self_atoms_attached(struct sinks *s, const struct plan *plan, int32_t atom_id);

/* One internal-error atom per task of the plan, then a flush (the run is ending). */
void self_atoms_error(struct sinks *s, const struct plan *plan, int32_t atom_id,
		      enum self_error_type type, enum self_failure_point where);

#endif
