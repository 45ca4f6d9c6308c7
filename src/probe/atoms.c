#include "probe/atoms.h"

#include <string.h>

#include "records.h"

int atoms_arg_register(enum arg_abi abi, int32_t pos)
{
	int reg;

	if (pos < 0)
		return -1;
	switch (abi) {
	case ARG_ABI_ART_INSTANCE: reg = pos + 2; break; /* ArtMethod*, this */
	case ARG_ABI_ART_STATIC: reg = pos + 1; break;   /* ArtMethod* */
	default: reg = pos; break;
	}
	return reg < 10 ? reg : -1;
}

/* call_detail: one Int64 per configured position, in the configured order
 * (the newest upstream handler writes the raw 64-bit register). */
static size_t call_detail_atom(const struct plan_probe *p, const void *payload,
			       struct field *out, size_t max)
{
	const struct i32_list *pos = &p->task_cfg->statsd.primitive_argument_positions;
	struct call_result r;
	size_t n = 0;

	memcpy(&r, payload, sizeof(r));
	for (size_t i = 0; i < pos->n && n < max; i++) {
		int reg = atoms_arg_register(p->abi, pos->v[i]);
		out[n++] = (struct field){ .name = "arg", .type = FIELD_INT64,
					   .v.i64 = reg >= 0 ? (int64_t)r.regs[reg] : 0 };
	}
	return n;
}

/* call_timestamp: Int32 event, Int64 timestamp. */
static size_t call_timestamp_atom(const void *payload, struct field *out, size_t max)
{
	struct call_timestamp t;

	if (max < 2)
		return 0;
	memcpy(&t, payload, sizeof(t));
	out[0] = (struct field){ .name = "event", .type = FIELD_INT32, .v.i32 = (int32_t)t.event };
	out[1] = (struct field){ .name = "timestamp_ns", .type = FIELD_INT64,
				 .v.i64 = (int64_t)t.timestamp_ns };
	return 2;
}

/* call_return (ours): Int64 return value, Int64 duration in ns. */
static size_t call_return_atom(const void *payload, struct field *out, size_t max)
{
	struct call_return r;

	if (max < 2)
		return 0;
	memcpy(&r, payload, sizeof(r));
	out[0] = (struct field){ .name = "return_value", .type = FIELD_INT64,
				 .v.i64 = (int64_t)r.return_value };
	out[1] = (struct field){ .name = "duration_ns", .type = FIELD_INT64,
				 .v.i64 = (int64_t)r.duration_ns };
	return 2;
}

int atoms_from_record(const struct plan_probe *p, uint32_t kind, const void *payload,
		      struct field *out, size_t max)
{
	if (!p->task_cfg->has_statsd_logging_config || !p->task_cfg->statsd.has_atom_id)
		return -1;
	switch (kind) {
	case UPS_REC_CALL_DETAIL:
		return (int)call_detail_atom(p, payload, out, max);
	case UPS_REC_CALL_TIMESTAMP:
		return (int)call_timestamp_atom(payload, out, max);
	case UPS_REC_CALL_RETURN:
		return (int)call_return_atom(payload, out, max);
	default:
		return -1;
	}
}
