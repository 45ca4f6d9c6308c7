/* accounting.h — what a run counts per probe beyond the kernel's counters,
 * and what it reports at the end from all of them.
 *
 * While the loop runs: events an output lost, told one by one by the sinks
 * (the text/JSON output: a full queue or a failed write, counted exactly by
 * its buffer; statsd: a datagram dropped).  Loss is per output: a probe's
 * dropped_sink is the most one output lost, never the sum.  At the end: the
 * summary rows (kernel hits and drops, delivered, dropped at the sinks,
 * polling time, the return programs' own counts) and upstream's
 * uprobe_stats_bpf_map_polled atoms, once per task and map. */
#ifndef UPROBESTATS_PROBE_ACCOUNTING_H
#define UPROBESTATS_PROBE_ACCOUNTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan/plan.h"
#include "probe/loop.h"
#include "probe/session.h"
#include "sink/summary.h"
#include "vocab/event.h"

struct accounting {
	size_t n_probes;
	uint64_t *dropped_sink;      /* per probe id: at statsd */
	uint64_t *dropped_stream;    /* per probe id: at the text/JSON output */
};

/* 0 or -ENOMEM. */
int accounting_init(struct accounting *a, size_t n_probes);
void accounting_free(struct accounting *a);

/* statsd dropped an atom of probe (NULL: an atom of no probe). */
void accounting_sink_drop(struct accounting *a, const struct probe_desc *probe);
/* The text/JSON output lost an event of probe (NULL: of no probe). */
void accounting_stream_drop(struct accounting *a, const struct probe_desc *probe);

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
