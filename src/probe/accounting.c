#include "probe/accounting.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog/catalog.h"
#include "sink/statsd_atoms.h"

int accounting_init(struct accounting *a, size_t n_probes)
{
	a->n_probes = n_probes;
	a->dropped_sink = calloc(n_probes ? n_probes : 1, sizeof(uint64_t));
	a->dropped_stream = calloc(n_probes ? n_probes : 1, sizeof(uint64_t));
	if (!a->dropped_sink || !a->dropped_stream) {
		accounting_free(a);
		return -ENOMEM;
	}
	return 0;
}

void accounting_free(struct accounting *a)
{
	free(a->dropped_sink);
	free(a->dropped_stream);
	a->dropped_sink = a->dropped_stream = NULL;
}

void accounting_stream_drop(struct accounting *a, const struct probe_desc *probe)
{
	if (probe)
		a->dropped_stream[plan_probe_id(probe)]++;
}

void accounting_sink_drop(struct accounting *a, const struct probe_desc *probe)
{
	if (probe)
		a->dropped_sink[plan_probe_id(probe)]++;
}

static uint64_t polled_ns(const struct loop_task_stats *ts)
{
	return ts->end_boot_ns > ts->start_boot_ns ? ts->end_boot_ns - ts->start_boot_ns : 0;
}

struct probe_stats *accounting_rows(const struct accounting *a, const struct plan *plan,
				    const struct session *s, const struct loop_stats *st,
				    uint64_t *run_ns)
{
	size_t n = plan->n_probes ? plan->n_probes : 1;
	struct probe_stats *rows = calloc(n, sizeof(*rows));
	uint64_t *running = calloc(n, sizeof(*running)), *oldest = calloc(n, sizeof(*oldest));
	struct ups_probe_counters *all = calloc(n, sizeof(*all));
	struct timespec now;

	*run_ns = 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (running && oldest)
		(void)session_pending_calls(s, running, oldest);   /* none: all 0 */
	if (!rows || !all) {
		free(rows);
		free(all);
		free(running);
		free(oldest);
		return NULL;
	}
	session_all_counters(s, all);
	for (size_t i = 0; i < plan->n_probes; i++) {
		const struct plan_probe *p = plan->probe_by_id[i];
		struct ups_probe_counters c = all[i];

		rows[i] = (struct probe_stats){
			.probe = &p->desc,
			.hits = c.hits,
			.delivered = st->delivered[i],
			.dropped_kernel = c.drops,
			.dropped_sink = a->dropped_sink[i] > a->dropped_stream[i]
					? a->dropped_sink[i] : a->dropped_stream[i],
			.duration_ns = polled_ns(&st->tasks[p->desc.task_index]),
			.exit_probes = p->exit_probes,
			.unwound = c.unwound,
			.untracked = c.untracked,
			.uretprobe = p->prog->entry && !p->exit_probes,
			.unpaired = c.unpaired,
			.in_kernel = p->prog->aggregate || p->prog->traffic,
		};
		if (running && oldest && running[i]) {
			uint64_t t = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
			rows[i].running = running[i];
			rows[i].running_ns = t > oldest[i] ? t - oldest[i] : 0;
		}
		if (rows[i].duration_ns > *run_ns)
			*run_ns = rows[i].duration_ns;
	}
	free(running);
	free(oldest);
	free(all);
	return rows;
}

/* A stable number for a map in the polled atom: object index * 16 + ring
 * index + 1 (upstream's own enum is not published). */
static int32_t map_code(const struct plan_probe *p)
{
	for (size_t o = 0; o < catalog_object_count(); o++) {
		const struct catalog_object *obj = catalog_object_at(o);
		if (obj != p->obj)
			continue;
		for (size_t r = 0; obj->ring_maps[r]; r++)
			if (p->prog->map && !strcmp(obj->ring_maps[r], p->prog->map))
				return (int32_t)(o * 16 + r + 1);
	}
	return 0;
}

/* Events delivered from map `code` by the task's probes; false when an
 * earlier probe (before index i) shares the map: one atom per map, sent at
 * its first probe. */
static bool map_events(const struct plan_task *task, const struct loop_stats *st, size_t i,
		       int32_t code, int64_t *events)
{
	*events = 0;
	for (size_t j = 0; j < task->n_probes; j++) {
		if (map_code(&task->probes[j]) != code)
			continue;
		if (j < i)
			return false;
		*events += (int64_t)st->delivered[task->probes[j].id];
	}
	return true;
}

void accounting_polled_atoms(const struct plan *plan, const struct loop_stats *st,
			     int32_t atom_id, void (*emit)(void *ctx, const struct atom *a),
			     void *ctx)
{
	for (size_t t = 0; t < plan->n_tasks; t++) {
		const struct plan_task *task = &plan->tasks[t];
		const struct loop_task_stats *ts = &st->tasks[t];

		for (size_t i = 0; i < task->n_probes; i++) {
			int32_t code = map_code(&task->probes[i]);
			int64_t events;
			int64_t ms = (int64_t)(polled_ns(ts) / 1000000);
			struct polled_atom pa;

			if (!code || !map_events(task, st, i, code, &events))
				continue;
			emit(ctx, statsd_polled_atom(&pa, atom_id, code, ms, events,
						     task->probes[i].desc.task_id, ts->end_boot_ns));
		}
	}
}
