/* aggregation.h — a probe's Aggregation (config field 1005) turned into what
 * its aggregate program counts: the key (pid, tid, uid, an argument, the
 * return value), the summed value and the histogram's value (an argument,
 * the return value, the latency), with argument positions mapped to the
 * registers of the probe's ABI.  The return value and the latency exist
 * only at the return (prog_Uprobestats_uretprobe_aggregate_return). */
#ifndef UPROBESTATS_PLAN_AGGREGATION_H
#define UPROBESTATS_PLAN_AGGREGATION_H

#include <stdbool.h>
#include <errno.h>
#include <stdint.h>

#include "common/err.h"
#include "plan/plan.h"

#define AGG_DEFAULT_MAX_KEYS 10240
#define AGG_MAX_KEYS_LIMIT (1u << 20)

/* The run's flush interval in seconds (the smallest a probe asks for; 0:
 * at the end only) and its key limit (the largest asked; the default when
 * none asks). */
uint32_t plan_agg_interval(const struct plan *plan);
uint32_t plan_agg_max_keys(const struct plan *plan);
/* Whether any probe aggregates / any uses aggregate_return. */
bool plan_aggregates(const struct plan *plan);
bool plan_agg_returns(const struct plan *plan);
/* Whether any probe runs the traffic program (uprobestats traffic). */
bool plan_traffic_probes(const struct plan *plan);
/* Whether every probe counts in the kernel (no probe writes records). */
bool plan_only_aggregates(const struct plan *plan);

/* "pid", "arg 2", "ret", "latency": how a key part / value is named in
 * output and messages (what: enum ups_agg_val). */
const char *agg_value_name(uint32_t what, int32_t arg, char *buf, size_t size);

#endif
