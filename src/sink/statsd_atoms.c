#include "sink/statsd_atoms.h"

const struct atom *statsd_polled_atom(struct polled_atom *pa, int32_t atom_id, int32_t map_code,
				      int64_t duration_ms, int64_t total_events, int64_t task_id,
				      uint64_t boot_ns)
{
	pa->fields[0] = (struct field){ .name = "map", .type = FIELD_INT32, .v.i32 = map_code };
	pa->fields[1] = (struct field){ .name = "duration_ms", .type = FIELD_INT64,
					.v.i64 = duration_ms };
	pa->fields[2] = (struct field){ .name = "total_events", .type = FIELD_INT64,
					.v.i64 = total_events };
	pa->fields[3] = (struct field){ .name = "task_id", .type = FIELD_INT64, .v.i64 = task_id };
	pa->atom = (struct atom){ .atom_id = atom_id, .boot_ns = boot_ns, .fields = pa->fields,
				  .n_fields = 4, .is_uid = NULL };
	return &pa->atom;
}
