/* Decoders of the system_server records: ProcessManagement and ArtTest. */
#include "probe/decode.h"

#include <stddef.h>
#include <string.h>

#include "probe/fields.h"
#include "records.h"

/* A string member of payload type T, read in place (the payload outlives the
 * fields; a local copy would not). */
size_t decode_set_uid_temp_allowlist_state(const void *payload, struct field *out, size_t max)
{
	struct fields_out o = { .f = out, .max = max };
	struct set_uid_temp_allowlist_state r;

	memcpy(&r, payload, sizeof(r));
	fields_i32(&o, "uid", (int32_t)r.uid);
	fields_bool(&o, "on_allowlist", r.on_allowlist != 0);
	return o.n;
}

size_t decode_update_device_idle(const void *payload, struct field *out, size_t max)
{
	struct fields_out o = { .f = out, .max = max };
	struct update_device_idle r;

	memcpy(&r, payload, sizeof(r));
	fields_u64(&o, "method_identifier", r.method_identifier);
	fields_i32(&o, "changing_uid", r.changing_uid);
	fields_bool(&o, "adding", r.adding != 0);
	fields_i64(&o, "duration_ms", r.duration_ms);
	fields_i32(&o, "type", r.type);
	fields_i32(&o, "reason_code", r.reason_code);
	FIELDS_STR_MEMBER(&o, "reason", payload, struct update_device_idle, reason);
	fields_i32(&o, "calling_uid", r.calling_uid);
	return o.n;
}

size_t decode_update_device_idle_legacy(const void *payload, struct field *out, size_t max)
{
	struct fields_out o = { .f = out, .max = max };
	struct update_device_idle_legacy r;

	memcpy(&r, payload, sizeof(r));
	fields_i32(&o, "changing_uid", r.changing_uid);
	fields_bool(&o, "adding", r.adding != 0);
	fields_i64(&o, "duration_ms", r.duration_ms);
	fields_i32(&o, "type", r.type);
	fields_i32(&o, "reason_code", r.reason_code);
	FIELDS_STR_MEMBER(&o, "reason", payload, struct update_device_idle_legacy, reason);
	fields_i32(&o, "calling_uid", r.calling_uid);
	return o.n;
}

size_t decode_process_change(const void *payload, struct field *out, size_t max)
{
	struct fields_out o = { .f = out, .max = max };
	struct process_change r;

	memcpy(&r, payload, offsetof(struct process_change, process_name));
	fields_i32(&o, "pid", r.pid);
	fields_i32(&o, "uid", r.uid);
	FIELDS_STR_MEMBER(&o, "process_name", payload, struct process_change, process_name);
	return o.n;
}

size_t decode_start_activity_as_user(const void *payload, struct field *out, size_t max)
{
	struct fields_out o = { .f = out, .max = max };
	struct start_activity_as_user r;

	memcpy(&r, payload, sizeof(r));
	fields_u64(&o, "method_identifier", r.method_identifier);
	FIELDS_STR_MEMBER(&o, "calling_package", payload, struct start_activity_as_user,
			  calling_package);
	fields_i32(&o, "request_code", r.request_code);
	fields_i32(&o, "start_flags", r.start_flags);
	fields_i32(&o, "user_id", r.user_id);
	fields_i32(&o, "validate_incoming_user", r.validate_incoming_user);
	fields_u64(&o, "x0", r.x0);
	return o.n;
}
