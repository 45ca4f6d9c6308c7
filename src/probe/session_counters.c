/* session_counters.c — reading back what the programs counted: per-probe
 * hits, drops and friends, and call_latency's histogram, summed over CPUs. */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "probe/session_priv.h"

static void add_counters(struct ups_probe_counters *to, const struct ups_probe_counters *percpu,
			 int ncpus)
{
	for (int c = 0; c < ncpus; c++) {
		to->hits += percpu[c].hits;
		to->drops += percpu[c].drops;
		to->unwound += percpu[c].unwound;
		to->untracked += percpu[c].untracked;
		to->unpaired += percpu[c].unpaired;
		to->agg_full += percpu[c].agg_full;
	}
}

/* One object's counters map whole, with batch lookups (5.6+): one system
 * call for 10,000 probes where one each took most of a second at exit.
 * Returns -errno without them (the caller reads probe by probe). */
static int object_counters(const struct session *s, const struct object_state *os,
			   struct ups_probe_counters *out)
{
	struct bpf_map *map = os->primary
		? bpf_object__find_map_by_name(os->primary, CATALOG_MAP_COUNTERS) : NULL;
	uint32_t n = (uint32_t)s->plan->n_probes, count = n, out_batch = 0;
	uint32_t *keys = calloc(n ? n : 1, sizeof(*keys));
	struct ups_probe_counters *vals = calloc((size_t)(n ? n : 1) * (size_t)s->ncpus,
						 sizeof(*vals));
	int rc = -ENOMEM;

	if (!map)
		rc = -ENOENT;
	else if (keys && vals)
		rc = bpf_map_lookup_batch(bpf_map__fd(map), NULL, &out_batch, keys, vals, &count,
					  NULL);
	/* -ENOENT: the map's end came within this batch, as it should */
	if (rc == 0 || (rc == -ENOENT && count > 0 && map)) {
		rc = 0;
		for (uint32_t i = 0; i < count; i++)
			if (keys[i] < n && s->plan->probe_by_id[keys[i]]->obj == os->cat)
				add_counters(&out[keys[i]], &vals[(size_t)i * (size_t)s->ncpus],
					     s->ncpus);
	}
	free(keys);
	free(vals);
	return rc;
}

int session_all_counters(const struct session *s, struct ups_probe_counters *out)
{
	size_t n = s ? s->plan->n_probes : 0;
	bool batched = n > 0;

	memset(out, 0, n * sizeof(*out));
	for (size_t i = 0; batched && i < s->n_objects; i++)
		batched = object_counters(s, &s->objects[i], out) == 0;
	if (batched)
		return 0;
	for (size_t i = 0; i < n; i++)
		session_probe_counters(s, (uint32_t)i, &out[i]);
	return 0;
}

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
	if (rc == 0)
		add_counters(out, percpu, s->ncpus);
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

/* The pending-call stacks are shared by every copy of the object (the
 * primary's map): one walk over (thread, probe) keys.  A legacy object
 * keeps fewer calls per stack: the value size says how many. */
int session_pending_each(const struct session *s, session_pending_fn fn, void *ctx)
{
	struct ups_entry_key key, next;
	struct bpf_map *map = NULL;
	uint8_t *val;
	size_t vsize, depth_max;
	int fd, found = -ENOENT;

	if (!s)
		return -ENOENT;
	for (size_t i = 0; i < s->n_objects && !map; i++)
		if (s->objects[i].primary)
			map = bpf_object__find_map_by_name(s->objects[i].primary,
							   CATALOG_MAP_PENDING);
	if (!map || (vsize = bpf_map__value_size(map)) < 8 ||
	    bpf_map__key_size(map) != sizeof(key))
		return -ENOENT;
	depth_max = (vsize - 8) / sizeof(struct ups_pending_call);
	if (!(val = malloc(vsize)))
		return -ENOMEM;
	fd = bpf_map__fd(map);
	for (int rc = bpf_map_get_next_key(fd, NULL, &next); rc == 0;
	     rc = bpf_map_get_next_key(fd, &key, &next)) {
		struct ups_pending_stack *st = (struct ups_pending_stack *)val;
		key = next;
		found = 0;
		if (bpf_map_lookup_elem(fd, &key, val) < 0 || key.probe_id >= s->plan->n_probes)
			continue;
		for (uint32_t d = 0; d < st->depth && d < depth_max; d++) {
			struct ups_pending_call c;
			memcpy(&c, val + 8 + d * sizeof(c), sizeof(c));
			fn(ctx, key.tid, key.probe_id, c.entry_ns, c.sp);
		}
	}
	free(val);
	return found;
}

struct pending_totals {
	uint64_t *running, *oldest_ns;
};

static void add_pending(void *ctx, uint32_t tid, uint32_t probe_id, uint64_t entry_ns,
			uint64_t entry_sp)
{
	struct pending_totals *p = ctx;

	(void)tid;
	(void)entry_sp;
	p->running[probe_id]++;
	if (!p->oldest_ns[probe_id] || entry_ns < p->oldest_ns[probe_id])
		p->oldest_ns[probe_id] = entry_ns;
}

int session_pending_calls(const struct session *s, uint64_t *running, uint64_t *oldest_ns)
{
	struct pending_totals p = { running, oldest_ns };

	if (!s)
		return -ENOENT;
	memset(running, 0, s->plan->n_probes * sizeof(*running));
	memset(oldest_ns, 0, s->plan->n_probes * sizeof(*oldest_ns));
	return session_pending_each(s, add_pending, &p);
}
