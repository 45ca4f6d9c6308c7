/* session_counters.c — reading back what the programs counted: per-probe
 * hits, drops and friends, and call_latency's histogram, summed over CPUs. */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "probe/session_priv.h"

int session_probe_counters(const struct session *s, uint32_t probe_id,
			   struct ups_probe_counters *out)
{
	const struct plan_probe *p;
	struct object_state *os = NULL;
	struct ups_probe_counters *percpu;
	struct bpf_map *map;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!s || probe_id >= s->plan->n_probes)
		return -ENOENT;
	p = s->plan->probe_by_id[probe_id];
	for (size_t i = 0; i < s->n_objects; i++)
		if (s->objects[i].cat == p->obj)
			os = &s->objects[i];
	if (!os || !os->primary)
		return -ENOENT;
	map = bpf_object__find_map_by_name(os->primary, CATALOG_MAP_COUNTERS);
	if (!map)
		return -ENOENT;
	percpu = calloc((size_t)s->ncpus, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	rc = bpf_map_lookup_elem(bpf_map__fd(map), &probe_id, percpu);
	if (rc == 0) {
		for (int c = 0; c < s->ncpus; c++) {
			out->hits += percpu[c].hits;
			out->drops += percpu[c].drops;
			out->unwound += percpu[c].unwound;
			out->untracked += percpu[c].untracked;
			out->unpaired += percpu[c].unpaired;
			out->agg_full += percpu[c].agg_full;
		}
	}
	free(percpu);
	return rc < 0 ? -errno : 0;
}

int session_map_fd(const struct session *s, const struct catalog_object *obj, const char *name)
{
	for (size_t i = 0; i < s->n_objects; i++) {
		struct bpf_map *map;

		if (s->objects[i].cat != obj || !s->objects[i].primary)
			continue;
		map = bpf_object__find_map_by_name(s->objects[i].primary, name);
		return map ? bpf_map__fd(map) : -ENOENT;
	}
	return -ENOENT;
}

int session_probe_histogram(const struct session *s, uint32_t probe_id,
			    uint64_t slots[UPS_HIST_SLOTS])
{
	const struct plan_probe *p;
	struct bpf_object *primary = NULL;
	struct bpf_map *map;
	uint64_t *percpu;
	int rc = 0;

	memset(slots, 0, UPS_HIST_SLOTS * sizeof(uint64_t));
	if (probe_id >= s->plan->n_probes)
		return -ENOENT;
	p = s->plan->probe_by_id[probe_id];
	for (size_t i = 0; i < s->n_objects; i++)
		if (s->objects[i].cat == p->obj)
			primary = s->objects[i].primary;
	map = primary ? bpf_object__find_map_by_name(primary, CATALOG_MAP_HISTOGRAM) : NULL;
	if (!map)
		return -ENOENT;
	percpu = calloc((size_t)s->ncpus, sizeof(uint64_t));
	if (!percpu)
		return -ENOMEM;
	for (uint32_t slot = 0; slot < UPS_HIST_SLOTS && rc == 0; slot++) {
		uint32_t key = probe_id * UPS_HIST_SLOTS + slot;
		rc = bpf_map_lookup_elem(bpf_map__fd(map), &key, percpu) < 0 ? -errno : 0;
		for (int c = 0; rc == 0 && c < s->ncpus; c++)
			slots[slot] += percpu[c];
	}
	free(percpu);
	return rc;
}
