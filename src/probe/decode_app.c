/* Decoders of the app and framework records: BitmapAllocation,
 * DisruptiveApp, Binder and Accessibility. */
#include "probe/decode.h"

#include <stddef.h>
#include <string.h>

#include "probe/fields.h"
#include "records.h"

size_t decode_bitmap_constructor_heap(const void *payload, struct field *out, size_t max)
{
	struct fields_out o = { .f = out, .max = max };
	struct bitmap_constructor_heap r;

	memcpy(&r, payload, sizeof(r));
	fields_i64(&o, "value", (int64_t)r.value);
	return o.n;
}

size_t decode_bitmap_event(const void *payload, struct field *out, size_t max)
{
	struct fields_out o = { .f = out, .max = max };
	struct bitmap_event r;

	memcpy(&r, payload, sizeof(r));
	fields_i64(&o, "type", r.type);
	fields_i64(&o, "width", r.width);
	fields_i64(&o, "height", r.height);
	fields_i64(&o, "scaled_width", r.scaled_width);
	fields_i64(&o, "scaled_height", r.scaled_height);
	fields_i64(&o, "pixel_storage_type", r.pixel_storage_type);
	fields_i64(&o, "bitmap_size", r.bitmap_size);
	fields_i32(&o, "uid", (int32_t)r.uid);
	fields_u64(&o, "native_ptr", r.native_ptr);
	FIELDS_STR_MEMBER(&o, "activity_name", payload, struct bitmap_event, activity_name);
	return o.n;
}

size_t decode_bind_service_locked(const void *payload, struct field *out, size_t max)
{
	struct fields_out o = { .f = out, .max = max };
	int64_t flags;

	memcpy(&flags, (const char *)payload + offsetof(struct bind_service_locked, bind_flags),
	       sizeof(flags));
	FIELDS_STR_MEMBER(&o, "intent_action", payload, struct bind_service_locked, intent_action);
	FIELDS_STR_MEMBER(&o, "intent_package", payload, struct bind_service_locked,
			  intent_package);
	FIELDS_STR_MEMBER(&o, "intent_component_name_package", payload, struct bind_service_locked,
	    intent_component_name_package);
	FIELDS_STR_MEMBER(&o, "intent_component_name_class", payload, struct bind_service_locked,
	    intent_component_name_class);
	fields_i64(&o, "bind_flags", flags);
	FIELDS_STR_MEMBER(&o, "calling_package", payload, struct bind_service_locked,
			  calling_package);
	return o.n;
}

size_t decode_component_enabled_setting(const void *payload, struct field *out, size_t max)
{
	struct fields_out o = { .f = out, .max = max };
	int32_t new_state;

	memcpy(&new_state,
	       (const char *)payload + offsetof(struct component_enabled_setting, new_state),
	       sizeof(new_state));
	FIELDS_STR_MEMBER(&o, "package_name", payload, struct component_enabled_setting,
			  package_name);
	FIELDS_STR_MEMBER(&o, "class_name", payload, struct component_enabled_setting, class_name);
	fields_i32(&o, "new_state", new_state);
	FIELDS_STR_MEMBER(&o, "calling_package_name", payload, struct component_enabled_setting,
	    calling_package_name);
	return o.n;
}

size_t decode_binder_transaction(const void *payload, struct field *out, size_t max)
{
	struct fields_out o = { .f = out, .max = max };
	struct binder_transaction r;

	memcpy(&r, payload, sizeof(r));
	FIELDS_STR_MEMBER(&o, "interface_descriptor", payload, struct binder_transaction,
	    interface_descriptor);
	fields_i64(&o, "code", (int64_t)r.code);
	fields_i32(&o, "calling_uid", r.calling_uid);
	fields_i64(&o, "timestamp_ns", (int64_t)r.timestamp_ns);
	return o.n;
}

size_t decode_accessibility_event(const void *payload, struct field *out, size_t max)
{
	struct fields_out o = { .f = out, .max = max };
	struct accessibility_event r;

	memcpy(&r, payload, sizeof(r));
	fields_i64(&o, "timestamp_ns", (int64_t)r.timestamp_ns);
	fields_i32(&o, "variant", r.variant);
	FIELDS_STR_MEMBER(&o, "package_name", payload, struct accessibility_event, package_name);
	FIELDS_STR_MEMBER(&o, "permission_name", payload, struct accessibility_event,
			  permission_name);
	fields_i32(&o, "uid", r.uid);
	fields_i32(&o, "code", r.code);
	return o.n;
}

/* MalwareSignal: "signal" names the half the program filled (wm_bound_uid from
 * add_bound_client_uid, component_enabled_setting from set_component_enabled_setting),
 * then that half's fields, as upstream's debug log printed them. */
size_t decode_malware_signal(const void *payload, struct field *out, size_t max)
{
#define MS(m) (const char *)payload + offsetof(struct malware_signal, m)
	struct fields_out o = { .f = out, .max = max };
	struct malware_signal r;

	memcpy(&r, payload, sizeof(r));
	if (r.wm_bound_uid.initialized) {
		fields_str(&o, "signal", "wm_bound_uid", sizeof("wm_bound_uid"));
		fields_u64(&o, "client_uid", r.wm_bound_uid.client_uid);
		fields_str(&o, "client_package_name", MS(wm_bound_uid.client_package_name),
			   UPS_MALWARE_STR_LEN);
		fields_u64(&o, "bind_flags", r.wm_bound_uid.bind_flags);
	}
	if (r.component_enabled_setting.initialized) {
		fields_str(&o, "signal", "component_enabled_setting",
			   sizeof("component_enabled_setting"));
		fields_str(&o, "package_name", MS(component_enabled_setting.package_name),
			   UPS_MALWARE_STR_LEN);
		fields_str(&o, "class_name", MS(component_enabled_setting.class_name),
			   UPS_MALWARE_STR_LEN);
		fields_i32(&o, "new_state", r.component_enabled_setting.new_state);
		fields_str(&o, "calling_package_name",
			   MS(component_enabled_setting.calling_package_name),
			   UPS_MALWARE_STR_LEN);
	}
	return o.n;
#undef MS
}

size_t decode_binder_start_activity(const void *payload, struct field *out, size_t max)
{
	struct fields_out o = { .f = out, .max = max };
	struct binder_start_activity r;

	memcpy(&r, payload, sizeof(r));
	fields_uid(&o, "calling_uid", r.calling_uid);
	return o.n;
}
