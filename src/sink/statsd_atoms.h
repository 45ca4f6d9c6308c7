/* statsd_atoms.h — atoms the tool writes about itself (upstream's self-metrics:
 * map polled, probe attached, internal error).
 *
 * The per-map "polled" summary, shaped like upstream's
 * uprobe_stats_bpf_map_polled(map, duration_ms, total_events, task_id),
 * written once per map when its polling ends.  Upstream's atom id and the
 * values of its map enum are not published (statsd-wire.md §5, §8), so the
 * caller chooses both: the id from the config or the command line, the map
 * code from its program registry.  Field types: int32, int64, int64, int64. */
#ifndef UPROBESTATS_SINK_STATSD_ATOMS_H
#define UPROBESTATS_SINK_STATSD_ATOMS_H

#include <stdint.h>

#include "vocab/event.h"

struct polled_atom {
	struct field fields[4];
	struct atom atom;
};

/* Fill pa and return &pa->atom (valid as long as pa is). */
const struct atom *statsd_polled_atom(struct polled_atom *pa, int32_t atom_id, int32_t map_code,
				      int64_t duration_ms, int64_t total_events, int64_t task_id,
				      uint64_t boot_ns);

/* Upstream's uprobe_stats_bpf_attached(program, fully_qualified_class_name,
 * method_name, process_name, task_id), written after each probe is attached:
 * int32, string, string, string, int64.  The strings are not copied. */
struct attached_atom {
	struct field fields[5];
	struct atom atom;
};

const struct atom *statsd_attached_atom(struct attached_atom *aa, int32_t atom_id,
					int32_t program_code, const char *class_name,
					const char *method_name, const char *process_name,
					int64_t task_id, uint64_t boot_ns);

/* Upstream's newest uprobe_stats_internal_error(error_type, task_id, program,
 * map, failure_point): int32, int64, int32, int32, int64. */
struct error_atom {
	struct field fields[5];
	struct atom atom;
};

const struct atom *statsd_error_atom(struct error_atom *ea, int32_t atom_id, int32_t error_type,
				     int64_t task_id, int32_t program_code, int32_t map_code,
				     int64_t failure_point, uint64_t boot_ns);

#endif
