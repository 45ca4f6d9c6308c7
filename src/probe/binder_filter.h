/* binder_filter.h — the Binder object's `interfaces` map, filled from the
 * config's binder_transaction_filters (interface_name -> up to ten
 * transaction codes, from method_configs[].method_id and the deprecated
 * method_ids), and the lookup that maps a transaction record back to the
 * method_config it matched (for its atom). */
#ifndef UPROBESTATS_PROBE_BINDER_FILTER_H
#define UPROBESTATS_PROBE_BINDER_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "config/config.h"

struct bpf_object;
struct plan;

/* The session's CATALOG_PREPARE_BINDER_FILTER step: fills `interfaces` in the primary instance with
 * the filters of every Binder probe of the plan (one map per run, as upstream
 * pins one).  Fails, naming the probe, on a filter the map cannot express. */
int binder_filter_prepare(struct bpf_object *primary, const struct plan *plan, struct err *err);

/* The method_config of probe config pc for (interface, code), or NULL (code
 * only listed in method_ids, or a filter of another probe). */
const struct binder_method_config *binder_filter_method(const struct probe_config *pc,
							 const char *iface, size_t iface_len,
							 uint64_t code);

#endif
