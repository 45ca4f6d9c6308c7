#include "plan/aggregation.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "records.h"

uint32_t plan_agg_interval(const struct plan *plan)
{
	uint32_t best = 0;

	for (size_t i = 0; i < plan->n_probes; i++) {
		const struct probe_config *pc = plan->probe_by_id[i]->cfg;
		if ((plan->probe_by_id[i]->prog->aggregate || plan->probe_by_id[i]->prog->traffic) &&
		    pc->has_agg_interval &&
		    pc->agg_interval_seconds > 0 &&
		    (!best || (uint32_t)pc->agg_interval_seconds < best))
			best = (uint32_t)pc->agg_interval_seconds;
	}
	return best;
}

uint32_t plan_agg_max_keys(const struct plan *plan)
{
	uint32_t best = 0;

	for (size_t i = 0; i < plan->n_probes; i++) {
		const struct probe_config *pc = plan->probe_by_id[i]->cfg;
		if ((plan->probe_by_id[i]->prog->aggregate || plan->probe_by_id[i]->prog->traffic) &&
		    pc->has_agg_max_keys &&
		    (uint32_t)pc->agg_max_keys > best)
			best = (uint32_t)pc->agg_max_keys;
	}
	return best ? best : AGG_DEFAULT_MAX_KEYS;
}

bool plan_aggregates(const struct plan *plan)
{
	for (size_t i = 0; i < plan->n_probes; i++)
		if (plan->probe_by_id[i]->prog->aggregate)
			return true;
	return false;
}

bool plan_agg_returns(const struct plan *plan)
{
	for (size_t i = 0; i < plan->n_probes; i++)
		if ((plan->probe_by_id[i]->prog->aggregate || plan->probe_by_id[i]->prog->traffic) &&
		    plan->probe_by_id[i]->prog->is_return)
			return true;
	return false;
}

bool plan_traffic_probes(const struct plan *plan)
{
	for (size_t i = 0; i < plan->n_probes; i++)
		if (plan->probe_by_id[i]->prog->traffic)
			return true;
	return false;
}

const char *agg_value_name(uint32_t what, int32_t arg, char *buf, size_t size)
{
	switch (what) {
	case UPS_AGG_VAL_ARG: snprintf(buf, size, "arg%d", arg); break;
	case UPS_AGG_VAL_RET: snprintf(buf, size, "ret"); break;
	case UPS_AGG_VAL_LATENCY: snprintf(buf, size, "latency_ns"); break;
	default: snprintf(buf, size, "-"); break;
	}
	return buf;
}
