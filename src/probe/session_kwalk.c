/* session_kwalk.c — --stack-mode kernel: the table of compiled Java methods
 * the BPF program walks by (stack/kwalk.h), built from the traced processes
 * before loading and written into each object's map after. */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "probe/session_priv.h"

/* The run's code cache (code/codecache.h; the caller's, required when a
 * probe records stacks); --stack-mode kernel: the
 * compiled Java methods of the processes known now (stack/kwalk.h) from it,
 * built once before any object is loaded. */
int session_build_kwalk(struct session *s, const struct plan *plan,
			const struct session_opts *opts, struct err *err)
{
	bool stacks = false, kernel = false;
	size_t n = 0;
	pid_t *pids;
	int rc;

	for (size_t i = 0; i < plan->n_probes; i++) {
		stacks |= plan->probe_by_id[i]->stack_mode != 0;
		kernel |= plan->probe_by_id[i]->stack_mode == UPS_STACK_KERNEL;
	}
	if (stacks && !(s->code = opts->code))
		return err_set(err, -EINVAL, "stacks: the run has no code cache");
	if (!kernel)
		return 0;
	for (size_t t = 0; t < plan->n_tasks; t++)
		n += plan->tasks[t].n_pids;
	pids = calloc(n ? n : 1, sizeof(*pids));
	if (!pids)
		return err_set(err, -ENOMEM, "out of memory");
	n = 0;
	for (size_t t = 0; t < plan->n_tasks; t++)
		for (size_t i = 0; i < plan->tasks[t].n_pids; i++)
			pids[n++] = plan->tasks[t].pids[i];
	rc = kwalk_table_build(&s->kwalk, s->code, pids, n, err);
	free(pids);
	return rc;
}

int session_fill_kwalk(const struct session *s, const struct object_state *os,
		       struct err *err)
{
	struct bpf_map *map = bpf_object__find_map_by_name(os->primary, UPS_KWALK_MAP);

	if (!map || !s->kwalk.v)
		return 0;
	for (uint32_t i = 0; i < kwalk_table_size(&s->kwalk); i++)
		if (bpf_map_update_elem(bpf_map__fd(map), &i, &s->kwalk.v[i], BPF_ANY) < 0)
			return err_set(err, -errno, "filling %s: %s", UPS_KWALK_MAP,
				       strerror(errno));
	return 0;
}
