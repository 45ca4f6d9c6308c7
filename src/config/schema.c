/* schema.c — the field tables (see schema.h) and lookups over them.
 *
 * Field numbers per era come from the reference §1: era B (probe-level
 * bpf_map = 4, target_process_name = 2, duration_seconds = 3) and the
 * current numbering (Task.bpf_maps = 2 and everything added since). */
#include "config/schema.h"

#include <string.h>

#include "common/edit_distance.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Row helpers: S = singular, R = repeated.  Each names the struct member(s). */
#define ROW(nm, b, c, ty, rep, pk, o, h, cnt, lo, en, ms)                      \
	{ .name = nm, .num_b = b, .num_c = c, .type = ty, .enc = ENC_VARINT,   \
	  .repeated = rep, .packed = pk, .off = (uint32_t)(o),                \
	  .has_off = (uint32_t)(h), .count_off = (uint32_t)(cnt),             \
	  .loc_off = (uint32_t)(lo), .enm = en, .msg = ms }

#define OFF(T, m) offsetof(T, m)

static const struct enum_value tps_values[] = {
	{ "UNKNOWN", TPS_UNKNOWN },
	{ "SPECIFIC_PROCESS_NAME", TPS_SPECIFIC_PROCESS_NAME },
	{ "ANY_APP_PROCESS_ON_START", TPS_ANY_APP_PROCESS_ON_START },
	{ "SPECIFIC_APP_PROCESS_ON_START", TPS_SPECIFIC_APP_PROCESS_ON_START },
};

const struct enum_desc schema_enum_tps = {
	"TargetProcessSelection", tps_values, ARRAY_LEN(tps_values),
};

static const struct enum_value trace_role_values[] = {
	{ "PLAIN", TRACE_ROLE_PLAIN },
	{ "ENTER", TRACE_ROLE_ENTER },
	{ "EXIT", TRACE_ROLE_EXIT },
};

const struct enum_desc schema_enum_trace_role = {
	"TraceRole", trace_role_values, ARRAY_LEN(trace_role_values),
};

static const struct enum_value trace_section_values[] = {
	{ "NONE", TRACE_SECTION_NONE },
	{ "BEGIN", TRACE_SECTION_BEGIN },
	{ "END", TRACE_SECTION_END },
	{ "ASYNC_BEGIN", TRACE_SECTION_ASYNC_BEGIN },
	{ "ASYNC_END", TRACE_SECTION_ASYNC_END },
	{ "COUNTER", TRACE_SECTION_COUNTER },
	{ "COUNTER64", TRACE_SECTION_COUNTER64 },
};

const struct enum_desc schema_enum_trace_section = {
	"TraceSection", trace_section_values, ARRAY_LEN(trace_section_values),
};

static const struct enum_value atom_field_values[] = {
	{ "UNKNOWN", ATOM_FIELD_UNKNOWN },
	{ "CALLING_UID", ATOM_FIELD_CALLING_UID },
	{ "INTERFACE_NAME", ATOM_FIELD_INTERFACE_NAME },
	{ "CODE", ATOM_FIELD_CODE },
	{ "KTIME_NS", ATOM_FIELD_KTIME_NS },
};

const struct enum_desc schema_enum_atom_field = {
	"AtomFieldPosition", atom_field_values, ARRAY_LEN(atom_field_values),
};

/* BinderTransactionFilter.MethodConfig.EventServiceConfig, flattened into
 * struct binder_method_config. */
#define BM struct binder_method_config
static const struct field_desc event_service_fields[] = {
	ROW("flush", 1, 1, FT_BOOL, false, false, OFF(BM, flush), FD_NONE, FD_NONE, FD_NONE,
	    NULL, NULL),
};

static const struct msg_desc schema_event_service = {
	"EventServiceConfig", sizeof(BM), FD_NONE, event_service_fields,
	ARRAY_LEN(event_service_fields),
};

/* BinderTransactionFilter.MethodConfig.AtomConfig, flattened likewise. */
static const struct field_desc atom_config_fields[] = {
	ROW("atom_id", 1, 1, FT_INT32, false, false, OFF(BM, atom_id), OFF(BM, has_atom_id),
	    FD_NONE, OFF(BM, atom_id_loc), NULL, NULL),
	ROW("atom_field_positions", 2, 2, FT_ENUM, true, false, OFF(BM, atom_field_positions),
	    FD_NONE, FD_NONE, FD_NONE, &schema_enum_atom_field, NULL),
};

static const struct msg_desc schema_atom_config = {
	"AtomConfig", sizeof(BM), FD_NONE, atom_config_fields, ARRAY_LEN(atom_config_fields),
};

static const struct field_desc binder_method_fields[] = {
	ROW("method_id", 1, 1, FT_INT64, false, false, OFF(BM, method_id), OFF(BM, has_method_id),
	    FD_NONE, OFF(BM, method_id_loc), NULL, NULL),
	ROW("event_service_config", 2, 2, FT_MESSAGE, false, false, 0,
	    OFF(BM, has_event_service_config), FD_NONE, FD_NONE, NULL, &schema_event_service),
	ROW("atom_config", 3, 3, FT_MESSAGE, false, false, 0, OFF(BM, has_atom_config), FD_NONE,
	    FD_NONE, NULL, &schema_atom_config),
};
#undef BM

const struct msg_desc schema_binder_method = {
	"MethodConfig", sizeof(struct binder_method_config),
	OFF(struct binder_method_config, loc), binder_method_fields,
	ARRAY_LEN(binder_method_fields),
};

#define BF struct binder_filter
static const struct field_desc binder_filter_fields[] = {
	ROW("interface_name", 1, 1, FT_STRING, false, false, OFF(BF, interface_name), FD_NONE,
	    FD_NONE, OFF(BF, interface_name_loc), NULL, NULL),
	ROW("method_ids", 2, 2, FT_INT64, true, false, OFF(BF, method_ids), FD_NONE, FD_NONE,
	    FD_NONE, NULL, NULL),
	ROW("method_configs", 3, 3, FT_MESSAGE, true, false, OFF(BF, methods), FD_NONE,
	    OFF(BF, n_methods), FD_NONE, NULL, &schema_binder_method),
};
#undef BF

const struct msg_desc schema_binder_filter = {
	"BinderTransactionFilter", sizeof(struct binder_filter),
	OFF(struct binder_filter, loc), binder_filter_fields, ARRAY_LEN(binder_filter_fields),
};

static const struct enum_value agg_key_values[] = {
	{ "UNKNOWN", AGG_KEY_UNKNOWN }, { "PID", AGG_KEY_PID }, { "TID", AGG_KEY_TID },
	{ "UID", AGG_KEY_UID },         { "ARG", AGG_KEY_ARG }, { "RET", AGG_KEY_RET },
	{ "COMM", AGG_KEY_COMM },       { "PROCESS", AGG_KEY_PROCESS },
};

const struct enum_desc schema_enum_agg_key = {
	"AggregationKey", agg_key_values, ARRAY_LEN(agg_key_values),
};

static const struct enum_value agg_value_values[] = {
	{ "NONE", AGG_VALUE_NONE }, { "ARG", AGG_VALUE_ARG },
	{ "RET", AGG_VALUE_RET },   { "LATENCY", AGG_VALUE_LATENCY },
};

const struct enum_desc schema_enum_agg_value = {
	"AggregationValue", agg_value_values, ARRAY_LEN(agg_value_values),
};

/* ProbeConfig.aggregation (ours), flattened into struct probe_config. */
#define PC struct probe_config
#define AGG_INT(nm, num, field)                                                        \
	ROW(nm, num, num, FT_INT32, false, false, OFF(PC, field), OFF(PC, has_##field),  \
	    FD_NONE, FD_NONE, NULL, NULL)
#define AGG_ENUM(nm, num, field)                                                       \
	ROW(nm, num, num, FT_ENUM, false, false, OFF(PC, field), OFF(PC, has_##field),   \
	    FD_NONE, FD_NONE, &schema_enum_agg_value, NULL)
static const struct field_desc aggregation_fields[] = {
	ROW("by", 1, 1, FT_ENUM, true, false, OFF(PC, agg_by), FD_NONE, FD_NONE, FD_NONE,
	    &schema_enum_agg_key, NULL),
	AGG_INT("by_arg", 2, agg_by_arg),
	AGG_ENUM("sum", 3, agg_sum),
	AGG_INT("sum_arg", 4, agg_sum_arg),
	AGG_ENUM("hist", 5, agg_hist),
	AGG_INT("hist_arg", 6, agg_hist_arg),
	ROW("interval_seconds", 7, 7, FT_INT32, false, false, OFF(PC, agg_interval_seconds),
	    OFF(PC, has_agg_interval), FD_NONE, FD_NONE, NULL, NULL),
	AGG_INT("max_keys", 8, agg_max_keys),
};
#undef AGG_INT
#undef AGG_ENUM

static const struct msg_desc schema_aggregation = {
	"Aggregation", sizeof(PC), FD_NONE, aggregation_fields, ARRAY_LEN(aggregation_fields),
};
#undef PC

/* ProbeConfig: field 4 is bpf_map in era B and fully_qualified_class_name now. */
#define PC struct probe_config
static const struct field_desc probe_fields[] = {
	ROW("bpf_name", 1, 1, FT_STRING, false, false, OFF(PC, bpf_name), FD_NONE, FD_NONE,
	    OFF(PC, bpf_name_loc), NULL, NULL),
	ROW("file_paths", 2, 2, FT_STRING, true, false, OFF(PC, file_paths), FD_NONE, FD_NONE,
	    FD_NONE, NULL, NULL),
	ROW("method_signature", 3, 3, FT_STRING, false, false, OFF(PC, method_signature),
	    FD_NONE, FD_NONE, OFF(PC, method_signature_loc), NULL, NULL),
	ROW("bpf_map", 4, 0, FT_STRING, false, false, OFF(PC, bpf_map), FD_NONE, FD_NONE,
	    OFF(PC, bpf_map_loc), NULL, NULL),
	ROW("fully_qualified_class_name", 0, 4, FT_STRING, false, false,
	    OFF(PC, fully_qualified_class_name), FD_NONE, FD_NONE,
	    OFF(PC, fully_qualified_class_name_loc), NULL, NULL),
	ROW("method_name", 0, 5, FT_STRING, false, false, OFF(PC, method_name), FD_NONE, FD_NONE,
	    OFF(PC, method_name_loc), NULL, NULL),
	ROW("fully_qualified_parameters", 0, 6, FT_STRING, true, false,
	    OFF(PC, fully_qualified_parameters), OFF(PC, has_fully_qualified_parameters),
	    FD_NONE, FD_NONE, NULL, NULL),
	ROW("binder_transaction_filters", 0, 7, FT_MESSAGE, true, false, OFF(PC, binder_filters),
	    FD_NONE, OFF(PC, n_binder_filters), FD_NONE, NULL, &schema_binder_filter),
	/* Ours, beyond upstream: numbers from 1000 so no upstream field collides. */
	ROW("trace_slice", 0, 1001, FT_STRING, false, false, OFF(PC, trace_slice), FD_NONE,
	    FD_NONE, OFF(PC, trace_slice_loc), NULL, NULL),
	ROW("trace_role", 0, 1002, FT_ENUM, false, false, OFF(PC, trace_role),
	    OFF(PC, has_trace_role), FD_NONE, OFF(PC, trace_role_loc), &schema_enum_trace_role,
	    NULL),
	ROW("exit_probes", 0, 1003, FT_BOOL, false, false, OFF(PC, exit_probes),
	    OFF(PC, has_exit_probes), FD_NONE, OFF(PC, exit_probes_loc), NULL, NULL),
	ROW("stack_frames", 0, 1004, FT_INT32, false, false, OFF(PC, stack_frames),
	    OFF(PC, has_stack_frames), FD_NONE, OFF(PC, stack_frames_loc), NULL, NULL),
	ROW("aggregation", 0, 1005, FT_MESSAGE, false, false, 0, OFF(PC, has_aggregation),
	    FD_NONE, FD_NONE, NULL, &schema_aggregation),
	/* sections: 1010 on, apart from the numbers other features take */
	ROW("section", 0, 1010, FT_ENUM, false, false, OFF(PC, section), OFF(PC, has_section),
	    FD_NONE, OFF(PC, section_loc), &schema_enum_trace_section, NULL),
	ROW("section_name_arg", 0, 1011, FT_INT32, false, false, OFF(PC, section_name_arg),
	    OFF(PC, has_section_name_arg), FD_NONE, OFF(PC, section_name_arg_loc), NULL, NULL),
	ROW("section_value_arg", 0, 1012, FT_INT32, false, false, OFF(PC, section_value_arg),
	    OFF(PC, has_section_value_arg), FD_NONE, OFF(PC, section_value_arg_loc), NULL,
	    NULL),
};
#undef PC

const struct msg_desc schema_probe = {
	"ProbeConfig", sizeof(struct probe_config), OFF(struct probe_config, loc), probe_fields,
	ARRAY_LEN(probe_fields),
};

#define SL struct statsd_logging_config
static const struct field_desc statsd_fields[] = {
	ROW("atom_id", 1, 1, FT_INT64, false, false, OFF(SL, atom_id), OFF(SL, has_atom_id),
	    FD_NONE, OFF(SL, atom_id_loc), NULL, NULL),
	ROW("primitive_argument_positions", 2, 2, FT_INT32, true, false,
	    OFF(SL, primitive_argument_positions), FD_NONE, FD_NONE, FD_NONE, NULL, NULL),
};
#undef SL

const struct msg_desc schema_statsd = {
	"StatsdLoggingConfig", sizeof(struct statsd_logging_config),
	OFF(struct statsd_logging_config, loc), statsd_fields, ARRAY_LEN(statsd_fields),
};

#define TC struct task_config
static const struct field_desc task_fields[] = {
	ROW("probe_configs", 1, 1, FT_MESSAGE, true, false, OFF(TC, probes), FD_NONE,
	    OFF(TC, n_probes), FD_NONE, NULL, &schema_probe),
	ROW("bpf_maps", 0, 2, FT_STRING, true, false, OFF(TC, bpf_maps), FD_NONE, FD_NONE,
	    FD_NONE, NULL, NULL),
	ROW("target_process_name", 2, 3, FT_STRING, false, false, OFF(TC, target_process_name),
	    FD_NONE, FD_NONE, OFF(TC, target_process_name_loc), NULL, NULL),
	ROW("duration_seconds", 3, 4, FT_INT32, false, false, OFF(TC, duration_seconds),
	    OFF(TC, has_duration_seconds), FD_NONE, OFF(TC, duration_seconds_loc), NULL, NULL),
	ROW("statsd_logging_config", 5, 5, FT_MESSAGE, false, false, OFF(TC, statsd),
	    OFF(TC, has_statsd_logging_config), FD_NONE, FD_NONE, NULL, &schema_statsd),
	ROW("target_process_selection", 0, 6, FT_ENUM, false, false,
	    OFF(TC, target_process_selection), OFF(TC, has_target_process_selection), FD_NONE,
	    OFF(TC, target_process_selection_loc), &schema_enum_tps, NULL),
	ROW("task_id", 0, 7, FT_INT64, false, false, OFF(TC, task_id), OFF(TC, has_task_id),
	    FD_NONE, OFF(TC, task_id_loc), NULL, NULL),
};
#undef TC

const struct msg_desc schema_task = {
	"Task", sizeof(struct task_config), OFF(struct task_config, loc), task_fields,
	ARRAY_LEN(task_fields),
};

#define UC struct uprobestats_config
static const struct field_desc config_fields[] = {
	ROW("tasks", 1, 1, FT_MESSAGE, true, false, OFF(UC, tasks), FD_NONE, OFF(UC, n_tasks),
	    FD_NONE, NULL, &schema_task),
};
#undef UC

const struct msg_desc schema_config = {
	"UprobestatsConfig", sizeof(struct uprobestats_config), FD_NONE, config_fields,
	ARRAY_LEN(config_fields),
};

const struct field_desc *schema_field_by_name(const struct msg_desc *m, const char *name,
					      size_t len)
{
	for (size_t i = 0; i < m->n_fields; i++) {
		const char *fn = m->fields[i].name;
		if (strlen(fn) == len && memcmp(fn, name, len) == 0)
			return &m->fields[i];
	}
	return NULL;
}

uint32_t schema_field_num(const struct field_desc *f, enum config_era era)
{
	return era == CONFIG_ERA_B ? f->num_b : f->num_c;
}

const struct field_desc *schema_field_by_num(const struct msg_desc *m, enum config_era era,
					     uint32_t num)
{
	if (num == 0)
		return NULL;
	for (size_t i = 0; i < m->n_fields; i++)
		if (schema_field_num(&m->fields[i], era) == num)
			return &m->fields[i];
	return NULL;
}

/* Close enough to suggest: within a third of the length (at least 2 edits),
 * or one name contains the other (e.g. "probe_config" / "probe_configs"). */
const char *schema_closest_name(const char *const *names, size_t n, const char *name,
				size_t len)
{
	const char *best = NULL;
	size_t best_d = SIZE_MAX;

	for (size_t i = 0; i < n; i++) {
		size_t d = edit_distance(name, len, names[i], strlen(names[i]));
		size_t limit = len / 3 > 2 ? len / 3 : 2;
		if (d <= limit && d < best_d) {
			best = names[i];
			best_d = d;
		}
	}
	return best;
}

const char *schema_closest_field(const struct msg_desc *m, const char *name, size_t len)
{
	const char *names[32];
	size_t n = m->n_fields < 32 ? m->n_fields : 32;

	for (size_t i = 0; i < n; i++)
		names[i] = m->fields[i].name;
	return schema_closest_name(names, n, name, len);
}

const struct enum_value *schema_enum_by_name(const struct enum_desc *e, const char *name,
					     size_t len)
{
	for (size_t i = 0; i < e->n_values; i++) {
		const char *vn = e->values[i].name;
		if (strlen(vn) == len && memcmp(vn, name, len) == 0)
			return &e->values[i];
	}
	return NULL;
}

const char *schema_enum_name(const struct enum_desc *e, int32_t value)
{
	for (size_t i = 0; i < e->n_values; i++)
		if (e->values[i].value == value)
			return e->values[i].name;
	return NULL;
}

const char *schema_closest_enum(const struct enum_desc *e, const char *name, size_t len)
{
	const char *names[32];
	size_t n = e->n_values < 32 ? e->n_values : 32;

	for (size_t i = 0; i < n; i++)
		names[i] = e->values[i].name;
	return schema_closest_name(names, n, name, len);
}

bool schema_field_present(const struct field_desc *f, const void *obj)
{
	if (f->has_off != FD_NONE)
		return *(const bool *)schema_cmember(obj, f->has_off);
	switch (f->type) {
	case FT_STRING:
		return *(char *const *)schema_cmember(obj, f->off) != NULL;
	case FT_BOOL:
		return *(const bool *)schema_cmember(obj, f->off);
	case FT_INT32:
	case FT_ENUM:
		return *(const int32_t *)schema_cmember(obj, f->off) != 0;
	case FT_INT64:
		return *(const int64_t *)schema_cmember(obj, f->off) != 0;
	default:
		return false;
	}
}

size_t schema_count(const struct field_desc *f, const void *obj)
{
	const void *m = schema_cmember(obj, f->off);

	if (f->type == FT_MESSAGE)
		return *(const size_t *)schema_cmember(obj, f->count_off);
	if (f->type == FT_STRING)
		return ((const struct str_list *)m)->n;
	if (f->type == FT_INT64)
		return ((const struct i64_list *)m)->n;
	return ((const struct i32_list *)m)->n;
}

int64_t schema_int_at(const struct field_desc *f, const void *list, size_t i)
{
	if (f->type == FT_INT64)
		return ((const struct i64_list *)list)->v[i];
	return ((const struct i32_list *)list)->v[i];
}

const void *schema_element(const struct field_desc *f, const void *obj, size_t i)
{
	const char *arr = *(char *const *)schema_cmember(obj, f->off);

	return arr + i * f->msg->size;
}
