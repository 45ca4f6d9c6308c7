/* decode.h — record payload decoders (bpf/records.h) into named fields for
 * text/JSON, one per record kind, used by the catalog's record table.
 *
 * Each takes the payload that follows the envelope (the loop has checked the
 * record's exact size) and never reads past it; strings come out bounded and
 * valid UTF-8 (probe/fields.h).  Field names are upstream's, in snake_case. */
#ifndef UPROBESTATS_PROBE_DECODE_H
#define UPROBESTATS_PROBE_DECODE_H

#include <stddef.h>

#include "sink/event.h"

/* ProcessManagement, ArtTest (decode_system.c) */
size_t decode_set_uid_temp_allowlist_state(const void *payload, struct field *out, size_t max);
size_t decode_update_device_idle(const void *payload, struct field *out, size_t max);
size_t decode_update_device_idle_legacy(const void *payload, struct field *out, size_t max);
size_t decode_process_change(const void *payload, struct field *out, size_t max);
size_t decode_start_activity_as_user(const void *payload, struct field *out, size_t max);

/* BitmapAllocation, DisruptiveApp, Binder, Accessibility (decode_app.c) */
size_t decode_bitmap_constructor_heap(const void *payload, struct field *out, size_t max);
size_t decode_bitmap_event(const void *payload, struct field *out, size_t max);
size_t decode_bind_service_locked(const void *payload, struct field *out, size_t max);
size_t decode_component_enabled_setting(const void *payload, struct field *out, size_t max);
size_t decode_binder_transaction(const void *payload, struct field *out, size_t max);
size_t decode_accessibility_event(const void *payload, struct field *out, size_t max);
size_t decode_malware_signal(const void *payload, struct field *out, size_t max);
size_t decode_binder_start_activity(const void *payload, struct field *out, size_t max);

#endif
