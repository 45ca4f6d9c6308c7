#include "sink/statsd_atoms.h"

#include <string.h>

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

static struct field str_field(const char *name, const char *s)
{
	s = s ? s : "";
	return (struct field){ .name = name, .type = FIELD_STRING,
			       .v.str = { .ptr = s, .len = (uint32_t)strlen(s) } };
}

const struct atom *statsd_attached_atom(struct attached_atom *aa, int32_t atom_id,
					int32_t program_code, const char *class_name,
					const char *method_name, const char *process_name,
					int64_t task_id, uint64_t boot_ns)
{
	aa->fields[0] = (struct field){ .name = "program", .type = FIELD_INT32,
					.v.i32 = program_code };
	aa->fields[1] = str_field("fully_qualified_class_name", class_name);
	aa->fields[2] = str_field("method_name", method_name);
	aa->fields[3] = str_field("process_name", process_name);
	aa->fields[4] = (struct field){ .name = "task_id", .type = FIELD_INT64, .v.i64 = task_id };
	aa->atom = (struct atom){ .atom_id = atom_id, .boot_ns = boot_ns, .fields = aa->fields,
				  .n_fields = 5, .is_uid = NULL };
	return &aa->atom;
}

const struct atom *statsd_error_atom(struct error_atom *ea, int32_t atom_id, int32_t error_type,
				     int64_t task_id, int32_t program_code, int32_t map_code,
				     int64_t failure_point, uint64_t boot_ns)
{
	ea->fields[0] = (struct field){ .name = "error_type", .type = FIELD_INT32,
					.v.i32 = error_type };
	ea->fields[1] = (struct field){ .name = "task_id", .type = FIELD_INT64, .v.i64 = task_id };
	ea->fields[2] = (struct field){ .name = "program", .type = FIELD_INT32,
					.v.i32 = program_code };
	ea->fields[3] = (struct field){ .name = "map", .type = FIELD_INT32, .v.i32 = map_code };
	ea->fields[4] = (struct field){ .name = "failure_point", .type = FIELD_INT64,
					.v.i64 = failure_point };
	ea->atom = (struct atom){ .atom_id = atom_id, .boot_ns = boot_ns, .fields = ea->fields,
				  .n_fields = 5, .is_uid = NULL };
	return &ea->atom;
}
