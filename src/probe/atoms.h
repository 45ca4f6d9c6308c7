/* atoms.h — which statsd atom a record becomes, field by field, as upstream's
 * handlers write it (uprobestats-upstream.md §4). */
#ifndef UPROBESTATS_PROBE_ATOMS_H
#define UPROBESTATS_PROBE_ATOMS_H

#include <stddef.h>
#include <stdint.h>

#include "resolve/plan.h"
#include "sink/event.h"

/* Register index of argument position pos under the probe's ABI, or -1 when
 * it is not in the recorded registers. */
int atoms_arg_register(enum arg_abi abi, int32_t pos);

/* Fills out[] with the atom fields for one record payload of the given kind;
 * returns how many (possibly 0), or -1 when the probe's task logs no atom. */
int atoms_from_record(const struct plan_probe *p, uint32_t kind, const void *payload,
			 struct field *out, size_t max);

#endif
