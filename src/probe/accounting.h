/* accounting.h — what a run counts per probe beyond the kernel's counters,
 * and what it reports at the end from all of them.
 *
 * While the loop runs: events a sink could not take (an output's write
 * error, a statsd datagram dropped) and events written since the last flush
 * (lost with the batch when that flush fails).  At the end: the summary rows
 * (kernel hits and drops, delivered, dropped at the sinks, polling time) and
 * upstream's uprobe_stats_bpf_map_polled atoms, once per task and map. */
#ifndef UPROBESTATS_PROBE_ACCOUNTING_H
#define UPROBESTATS_PROBE_ACCOUNTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan/plan.h"
#include "probe/loop.h"
#include "probe/session.h"
#include "sink/event.h"
#include "sink/summary.h"

struct accounting {
	size_t n_probes;
	uint64_t *dropped_sink;      /* per probe id */
	uint64_t *pending;           /* per probe id: events written since the last flush */
};

/* 0 or -ENOMEM. */
int accounting_init(struct accounting *a, size_t n_probes);
void accounting_free(struct accounting *a);

/* An event of probe went to the sinks, which returned rc (< 0: lost there). */
void accounting_event(struct accounting *a, const struct probe_desc *probe, int rc);
/* The sinks were flushed; when that failed, the batch's events are lost. */
void accounting_flushed(struct accounting *a, bool failed);
/* statsd dropped an atom of probe (NULL: an atom of no probe). */
void accounting_sink_drop(struct accounting *a, const struct probe_desc *probe);

/* The summary rows, one per probe id (free() them), and the longest polling
 * time in *run_ns; NULL when out of memory. */
struct probe_stats *accounting_rows(const struct accounting *a, const struct plan *plan,
				    const struct session *s, const struct loop_stats *st,
				    uint64_t *run_ns);

/* Upstream's uprobe_stats_bpf_map_polled (atom_id): per task and map, the
 * map, polling duration, events delivered from it and the task id; each
 * handed to emit. */
void accounting_polled_atoms(const struct plan *plan, const struct loop_stats *st,
			     int32_t atom_id, void (*emit)(void *ctx, const struct atom *a),
			     void *ctx);

#endif
