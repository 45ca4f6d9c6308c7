/* session_share.c — which probes share one loaded copy of their object:
 * with uprobe_multi links or perf links (normal objects), the probes of one
 * task that run the same program with the same config on the same file, at
 * most MAX_SHARED_MEMBERS a copy: one uprobe_multi link per program over all
 * their offsets, or a perf event and link per offset, each offset's cookie
 * its probe's id; otherwise one copy per probe. */
#include <stdlib.h>
#include <string.h>

#include "probe/session_priv.h"

/* Members of one shared copy at most: one link's offset and cookie arrays
 * stay small, and 10,000 probes still take two links per program. */
#define MAX_SHARED_MEMBERS 8192

static int cmp_u32(uint32_t a, uint32_t b)
{
	return a < b ? -1 : a > b;
}

/* Equal when probes a and b may share one copy: the same task, program,
 * probe form and file, and the same config but for the probe id. */
static int share_key_cmp(const struct plan_probe *a, const struct plan_probe *b)
{
	int c;

	if (a->desc.task_index != b->desc.task_index)
		return a->desc.task_index < b->desc.task_index ? -1 : 1;
	if (a->prog != b->prog)
		return (uintptr_t)a->prog < (uintptr_t)b->prog ? -1 : 1;
	if (a->exit_probes != b->exit_probes)
		return a->exit_probes ? 1 : -1;
	if (a->lone_ret != b->lone_ret)    /* a config value, and no entry program */
		return a->lone_ret ? 1 : -1;
	if ((c = strcmp(a->path, b->path)) != 0 ||
	    (c = memcmp(a->string_reg, b->string_reg, sizeof(a->string_reg))) != 0 ||
	    (c = memcmp(a->string_pos, b->string_pos, sizeof(a->string_pos))) != 0)
		return c;
	if ((c = cmp_u32(a->string_native, b->string_native)) != 0 ||
	    (c = cmp_u32(a->stack_mode, b->stack_mode)) != 0 ||
	    (c = cmp_u32(a->stack_frames, b->stack_frames)) != 0 ||
	    (c = cmp_u32(a->agg_by, b->agg_by)) != 0 || (c = cmp_u32(a->agg_sum, b->agg_sum)) != 0 ||
	    (c = cmp_u32(a->agg_hist, b->agg_hist)) != 0 ||
	    (c = cmp_u32(a->agg_regs, b->agg_regs)) != 0 ||
	    (c = cmp_u32(a->traffic_op, b->traffic_op)) != 0)
		return c;
	return cmp_u32(a->stack_bytes, b->stack_bytes);
}

static int share_order(const void *x, const void *y)
{
	const struct plan_probe *a = *(const struct plan_probe *const *)x;
	const struct plan_probe *b = *(const struct plan_probe *const *)y;
	int c = share_key_cmp(a, b);

	return c ? c : cmp_u32(a->id, b->id);
}

/* Whether probes share copies: where each place can carry its probe's id as
 * a cookie (uprobe_multi links, or perf events through perf links) and the
 * objects read it (the normal ones). */
bool session_shares_copies(const struct session *s)
{
	return (s->use_multi || s->perf_cookies) && !s->legacy;
}

/* One instance per probe, or, where places carry cookies
 * (session_shares_copies), one per group of probes that may share a copy. */
int session_group_probes(struct session *s, const struct plan *plan, struct err *err)
{
	bool share = session_shares_copies(s);
	size_t n = 0;

	s->members = calloc(plan->n_probes ? plan->n_probes : 1, sizeof(*s->members));
	if (!s->members)
		return err_set(err, -ENOMEM, "out of memory");
	for (size_t t = 0; t < plan->n_tasks; t++)
		for (size_t i = 0; i < plan->tasks[t].n_probes; i++)
			s->members[n++] = &plan->tasks[t].probes[i];
	if (share)
		qsort(s->members, n, sizeof(*s->members), share_order);
	for (size_t i = 0; i < n;) {
		struct instance *in = &s->instances[s->n_instances++];
		size_t k = 1;

		while (share && i + k < n && k < MAX_SHARED_MEMBERS &&
		       share_key_cmp(s->members[i], s->members[i + k]) == 0)
			k++;
		in->probe = s->members[i];
		in->members = &s->members[i];
		in->n_members = k;
		i += k;
	}
	return 0;
}
