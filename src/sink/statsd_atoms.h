/* statsd_atoms.h — atoms the tool writes about itself.
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

#include "sink/event.h"

struct polled_atom {
	struct field fields[4];
	struct atom atom;
};

/* Fill pa and return &pa->atom (valid as long as pa is). */
const struct atom *statsd_polled_atom(struct polled_atom *pa, int32_t atom_id, int32_t map_code,
				      int64_t duration_ms, int64_t total_events, int64_t task_id,
				      uint64_t boot_ns);

#endif
