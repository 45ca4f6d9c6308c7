#include "catalog/record_kinds.h"

#include <string.h>

#include "records.h"

/* A field of payload type T: member m, stored as st, decoded as ty. */
#define F(T, m, nm, st, ty) \
	{ .name = nm, .off = offsetof(T, m), .size = sizeof(((T *)0)->m), .store = st, .type = ty }
#define STR(T, m) F(T, m, #m, RK_CHARS, FIELD_STRING)
/* An atom field: descriptor field i as type t. */
#define A(i, t) { .field = i, .type = t }
#define A_NAMED(i, t, nm) { .field = i, .type = t, .name = nm }
#define N(a) (sizeof(a) / sizeof(a[0]))

/* ---- GenericInstrumentation and Uprobestats (ours) ---- */

#define CR(m, nm) F(struct call_result, m, nm, RK_U64, FIELD_UINT64)
static const struct rk_field call_detail_fields[] = {
	CR(pc, "pc"), CR(regs[0], "r0"), CR(regs[1], "r1"), CR(regs[2], "r2"),
	CR(regs[3], "r3"), CR(regs[4], "r4"), CR(regs[5], "r5"), CR(regs[6], "r6"),
	CR(regs[7], "r7"), CR(regs[8], "r8"), CR(regs[9], "r9"),
};

static const char *const arg_names[10] = {
	"arg0", "arg1", "arg2", "arg3", "arg4", "arg5", "arg6", "arg7", "arg8", "arg9",
};

/* call_args: after call_detail's registers, each String argument as "argN"
 * (N its Java position). */
static void call_args_strings(const void *payload, struct fields_out *o)
{
	const struct call_args *a = payload;

	for (size_t k = 0; k < UPS_ARG_STRINGS; k++) {
		uint8_t pos = a->string_pos[k];
		if (pos < 10)
			fields_str(o, arg_names[pos], a->strings[k], UPS_ARG_STRING_LEN);
	}
}

static const struct rk_field call_timestamp_fields[] = {
	F(struct call_timestamp, event, "event", RK_U32, FIELD_INT32),
	F(struct call_timestamp, timestamp_ns, "timestamp_ns", RK_U64, FIELD_INT64),
};
static const struct rk_atom_field call_timestamp_atom[] = {
	A(0, RK_AT_INT32), A(1, RK_AT_INT64),
};

static const struct rk_field call_return_fields[] = {
	F(struct call_return, return_value, "return_value", RK_U64, FIELD_INT64),
	F(struct call_return, duration_ns, "duration_ns", RK_U64, FIELD_INT64),
};
static const struct rk_atom_field call_return_atom[] = {
	A(0, RK_AT_INT64), A(1, RK_AT_INT64),
};

/* ---- ProcessManagement, ArtTest ---- */

static const struct rk_field set_uid_fields[] = {
	F(struct set_uid_temp_allowlist_state, uid, "uid", RK_U64, FIELD_INT32),
	F(struct set_uid_temp_allowlist_state, on_allowlist, "on_allowlist", RK_U8, FIELD_BOOL),
};
static const struct rk_atom_field set_uid_atom[] = {
	A(0, RK_AT_INT32), A(1, RK_AT_BOOL),
};

/* The DeviceIdleTempAllowlistUpdated tail both layouts share. */
#define IDLE_TAIL(T)                                                     \
	F(T, changing_uid, "changing_uid", RK_S32, FIELD_INT32),          \
	F(T, adding, "adding", RK_U8, FIELD_BOOL),                        \
	F(T, duration_ms, "duration_ms", RK_S64, FIELD_INT64),            \
	F(T, type, "type", RK_S32, FIELD_INT32),                          \
	F(T, reason_code, "reason_code", RK_S32, FIELD_INT32),            \
	STR(T, reason),                                                   \
	F(T, calling_uid, "calling_uid", RK_S32, FIELD_INT32)

static const struct rk_field idle_fields[] = {
	F(struct update_device_idle, method_identifier, "method_identifier", RK_U64,
	  FIELD_UINT64),
	IDLE_TAIL(struct update_device_idle),
};
static const struct rk_field idle_legacy_fields[] = {
	IDLE_TAIL(struct update_device_idle_legacy),
};
/* The seven atom fields, from descriptor field `first` on. */
#define IDLE_ATOM(first)                                                 \
	A(first, RK_AT_INT32), A(first + 1, RK_AT_BOOL), A(first + 2, RK_AT_INT64), \
	A(first + 3, RK_AT_INT32), A(first + 4, RK_AT_INT32), A(first + 5, RK_AT_STRING), \
	A(first + 6, RK_AT_INT32)
static const struct rk_atom_field idle_atom[] = { IDLE_ATOM(1) };
static const struct rk_atom_field idle_legacy_atom[] = { IDLE_ATOM(0) };

/* ArtTest AOT (the update_device_idle layout): Int64 adding, Int64
 * reason_code, Int64 hash(reason). */
static const struct rk_atom_field art_test_aot_atom[] = {
	A(2, RK_AT_INT64), A(5, RK_AT_INT64), A_NAMED(6, RK_AT_HASH, "reason_hash"),
};

static const struct rk_field process_change_fields[] = {
	F(struct process_change, pid, "pid", RK_S32, FIELD_INT32),
	F(struct process_change, uid, "uid", RK_S32, FIELD_INT32),
	STR(struct process_change, process_name),
};

#define SA(m, st, ty) F(struct start_activity_as_user, m, #m, st, ty)
static const struct rk_field start_activity_fields[] = {
	SA(method_identifier, RK_U64, FIELD_UINT64),
	STR(struct start_activity_as_user, calling_package),
	SA(request_code, RK_S32, FIELD_INT32),
	SA(start_flags, RK_S32, FIELD_INT32),
	SA(user_id, RK_S32, FIELD_INT32),
	SA(validate_incoming_user, RK_S32, FIELD_INT32),
	SA(x0, RK_U64, FIELD_UINT64),
};
/* ArtTest JIT: Int64 validate_incoming_user, Int64 user_id, Int64
 * hash(calling_package). */
static const struct rk_atom_field start_activity_atom[] = {
	A(5, RK_AT_INT64), A(4, RK_AT_INT64), A_NAMED(1, RK_AT_HASH, "calling_package_hash"),
};

/* ---- BitmapAllocation, DisruptiveApp, Binder, Accessibility ---- */

static const struct rk_field bitmap_heap_fields[] = {
	F(struct bitmap_constructor_heap, value, "value", RK_U64, FIELD_INT64),
};
static const struct rk_atom_field bitmap_heap_atom[] = { A(0, RK_AT_INT64) };

#define BE(m) F(struct bitmap_event, m, #m, RK_U32, FIELD_INT64)
static const struct rk_field bitmap_event_fields[] = {
	BE(type), BE(width), BE(height), BE(scaled_width), BE(scaled_height),
	BE(pixel_storage_type), BE(bitmap_size),
	F(struct bitmap_event, uid, "uid", RK_U32, FIELD_INT32),
	F(struct bitmap_event, native_ptr, "native_ptr", RK_U64, FIELD_UINT64),
	STR(struct bitmap_event, activity_name),
};
/* Upstream's V0 handler: an allocation becomes
 * AndroidGraphicsBitmapAllocated(Int32 uid [is_uid], Int32 width, Int32
 * height); other bitmap events write no atom. */
static const struct rk_atom_field bitmap_event_atom[] = {
	{ .field = 7, .type = RK_AT_INT32, .is_uid = true }, A(1, RK_AT_INT32), A(2, RK_AT_INT32),
};

static bool bitmap_allocated(const void *payload)
{
	uint32_t type;

	memcpy(&type, (const char *)payload + offsetof(struct bitmap_event, type), sizeof(type));
	return type == BITMAP_EVENT_ALLOCATION;
}

static const struct rk_field bind_service_fields[] = {
	STR(struct bind_service_locked, intent_action),
	STR(struct bind_service_locked, intent_package),
	STR(struct bind_service_locked, intent_component_name_package),
	STR(struct bind_service_locked, intent_component_name_class),
	F(struct bind_service_locked, bind_flags, "bind_flags", RK_S64, FIELD_INT64),
	STR(struct bind_service_locked, calling_package),
};
/* BindServiceLockedWithBalFlagsReported(String intent_package, Int64 flags,
 * String calling_package, String intent_action, String component package,
 * String component class). */
static const struct rk_atom_field bind_service_atom[] = {
	A(1, RK_AT_STRING), A_NAMED(4, RK_AT_INT64, "flags"), A(5, RK_AT_STRING),
	A(0, RK_AT_STRING), A(2, RK_AT_STRING), A(3, RK_AT_STRING),
};

/* None when every string is empty (upstream's BpfDataInvalid) or the BAL
 * flag is missing. */
static bool bind_service_valid(const void *payload)
{
#define BSL(m) (const char *)payload + offsetof(struct bind_service_locked, m), UPS_STR_LEN
	int64_t flags;

	memcpy(&flags, (const char *)payload + offsetof(struct bind_service_locked, bind_flags),
	       sizeof(flags));
	return (flags & 0x00100000) &&
	       (fields_str_len(BSL(intent_action)) || fields_str_len(BSL(intent_package)) ||
		fields_str_len(BSL(intent_component_name_package)) ||
		fields_str_len(BSL(intent_component_name_class)) ||
		fields_str_len(BSL(calling_package)));
#undef BSL
}

static const struct rk_field component_fields[] = {
	STR(struct component_enabled_setting, package_name),
	STR(struct component_enabled_setting, class_name),
	F(struct component_enabled_setting, new_state, "new_state", RK_S32, FIELD_INT32),
	STR(struct component_enabled_setting, calling_package_name),
};
/* SetComponentEnabledSettingReported(String package, String class, Int32
 * new_state, String calling_package); is_launcher_activity needs the package
 * manager and is not written. */
static const struct rk_atom_field component_atom[] = {
	A(0, RK_AT_STRING), A(1, RK_AT_STRING), A(2, RK_AT_INT32), A(3, RK_AT_STRING),
};

/* Only for disabling states (new_state >= 2) of a named component. */
static bool component_disabled(const void *payload)
{
#define CES(m) (const char *)payload + offsetof(struct component_enabled_setting, m), UPS_STR_LEN
	int32_t state;

	memcpy(&state,
	       (const char *)payload + offsetof(struct component_enabled_setting, new_state),
	       sizeof(state));
	return state >= 2 && fields_str_len(CES(package_name)) && fields_str_len(CES(class_name));
#undef CES
}

static const struct rk_field binder_fields[] = {
	STR(struct binder_transaction, interface_descriptor),
	F(struct binder_transaction, code, "code", RK_U64, FIELD_INT64),
	F(struct binder_transaction, calling_uid, "calling_uid", RK_S32, FIELD_INT32),
	F(struct binder_transaction, timestamp_ns, "timestamp_ns", RK_U64, FIELD_INT64),
};

static const struct rk_field accessibility_fields[] = {
	F(struct accessibility_event, timestamp_ns, "timestamp_ns", RK_U64, FIELD_INT64),
	F(struct accessibility_event, variant, "variant", RK_S32, FIELD_INT32),
	STR(struct accessibility_event, package_name),
	STR(struct accessibility_event, permission_name),
	F(struct accessibility_event, uid, "uid", RK_S32, FIELD_INT32),
	F(struct accessibility_event, code, "code", RK_S32, FIELD_INT32),
};

/* A stack record: header + wrapped record (padded to 8) + PCs + stack
 * bytes, each bounded (records.h). */
static size_t stack_stated_size(const void *data, size_t avail)
{
	struct ups_stack_hdr h;

	if (avail < sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	if (h.inner_len < sizeof(struct ups_envelope) || h.inner_len > UPS_STACK_MAX_INNER ||
	    h.stack_len > UPS_STACK_MAX_BYTES || h.n_pcs > UPS_STACK_MAX_FRAMES)
		return 0;
	return sizeof(h) + ((h.inner_len + 7u) & ~7u) + (size_t)h.n_pcs * 8 + h.stack_len;
}

size_t record_kind_size(const struct record_kind *rk, const void *data, size_t avail)
{
	return rk->stated_size ? rk->stated_size(data, avail) : rk->size;
}

/* ---- the historical programs (LMODroid/CalyxOS) ---- */

/* MalwareSignal: one packed record for two programs.  "signal" names the half
 * the program filled, then that half's fields, as upstream's debug log printed
 * them; no atom (upstream only logged these). */
static void malware_signal_decode(const void *payload, struct fields_out *o)
{
#define MS(m) (const char *)payload + offsetof(struct malware_signal, m)
	struct malware_signal r;

	memcpy(&r, payload, sizeof(r));
	if (r.wm_bound_uid.initialized) {
		fields_str(o, "signal", "wm_bound_uid", sizeof("wm_bound_uid"));
		fields_u64(o, "client_uid", r.wm_bound_uid.client_uid);
		fields_str(o, "client_package_name", MS(wm_bound_uid.client_package_name),
			   UPS_MALWARE_STR_LEN);
		fields_u64(o, "bind_flags", r.wm_bound_uid.bind_flags);
	}
	if (r.component_enabled_setting.initialized) {
		fields_str(o, "signal", "component_enabled_setting",
			   sizeof("component_enabled_setting"));
		fields_str(o, "package_name", MS(component_enabled_setting.package_name),
			   UPS_MALWARE_STR_LEN);
		fields_str(o, "class_name", MS(component_enabled_setting.class_name),
			   UPS_MALWARE_STR_LEN);
		fields_i32(o, "new_state", r.component_enabled_setting.new_state);
		fields_str(o, "calling_package_name",
			   MS(component_enabled_setting.calling_package_name),
			   UPS_MALWARE_STR_LEN);
	}
#undef MS
}

/* BinderExecTransactInternal: CalyxOS's handler wrote atom 915
 * (test_uprobestats_atom_reported) with Int32 calling_uid, whatever the config. */
#define ATOM_TEST_UPROBESTATS_ATOM_REPORTED 915
static const struct rk_field binder_start_activity_fields[] = {
	F(struct binder_start_activity, calling_uid, "calling_uid", RK_S32, FIELD_INT32),
};
static const struct rk_atom_field binder_start_activity_atom[] = {
	A(0, RK_AT_INT32),
};

/* ---- the table ---- */

#define KIND(k, nm, rec, flds, ...) \
	{ .kind = k, .name = nm, .size = sizeof(struct rec), .fields = flds, \
	  .n_fields = N(flds), __VA_ARGS__ }
#define ATOM(a, ...) .atom = RK_ATOM_FIELDS, .atom_fields = a, .n_atom_fields = N(a), __VA_ARGS__

static const struct record_kind kinds[] = {
	KIND(UPS_REC_CALL_RETURN, "call_return", rec_call_return, call_return_fields,
	     .is_return = true, .duration_field = 1, .has_entry_sp = true,
	     .entry_sp_off = offsetof(struct call_return, entry_sp), ATOM(call_return_atom)),
	KIND(UPS_REC_CALL_ARGS, "call_args", rec_call_args, call_detail_fields,
	     .decode_more = call_args_strings, .atom = RK_ATOM_ARGS),
	KIND(UPS_REC_CALL_DETAIL, "call_detail", rec_call_detail, call_detail_fields,
	     .atom = RK_ATOM_ARGS),
	KIND(UPS_REC_CALL_TIMESTAMP, "call_timestamp", rec_call_timestamp,
	     call_timestamp_fields, ATOM(call_timestamp_atom)),
	KIND(UPS_REC_SET_UID_TEMP_ALLOWLIST_STATE, "set_uid_temp_allowlist_state",
	     rec_set_uid_temp_allowlist_state, set_uid_fields, ATOM(set_uid_atom)),
	KIND(UPS_REC_UPDATE_DEVICE_IDLE, "update_device_idle", rec_update_device_idle,
	     idle_fields, ATOM(idle_atom)),
	KIND(UPS_REC_UPDATE_DEVICE_IDLE_LEGACY, "update_device_idle_legacy",
	     rec_update_device_idle_legacy, idle_legacy_fields, ATOM(idle_legacy_atom)),
	KIND(UPS_REC_PROCESS_CHANGE, "process_change", rec_process_change,
	     process_change_fields),
	KIND(UPS_REC_BITMAP_CONSTRUCTOR_HEAP, "bitmap_constructor_heap",
	     rec_bitmap_constructor_heap, bitmap_heap_fields, ATOM(bitmap_heap_atom)),
	KIND(UPS_REC_BITMAP_EVENT, "bitmap_event", rec_bitmap_event, bitmap_event_fields,
	     ATOM(bitmap_event_atom, .atom_when = bitmap_allocated)),
	KIND(UPS_REC_BIND_SERVICE_LOCKED, "bind_service_locked", rec_bind_service_locked,
	     bind_service_fields, ATOM(bind_service_atom, .atom_when = bind_service_valid)),
	KIND(UPS_REC_COMPONENT_ENABLED_SETTING, "component_enabled_setting",
	     rec_component_enabled_setting, component_fields,
	     ATOM(component_atom, .atom_when = component_disabled)),
	KIND(UPS_REC_BINDER_TRANSACTION, "binder_transaction", rec_binder_transaction,
	     binder_fields, .atom = RK_ATOM_BINDER),
	KIND(UPS_REC_ACCESSIBILITY_EVENT, "accessibility_event", rec_accessibility_event,
	     accessibility_fields),
	KIND(UPS_REC_ART_TEST_AOT, "art_test_aot", rec_update_device_idle, idle_fields,
	     ATOM(art_test_aot_atom)),
	KIND(UPS_REC_START_ACTIVITY_AS_USER, "start_activity_as_user",
	     rec_start_activity_as_user, start_activity_fields, ATOM(start_activity_atom)),
	{ .kind = UPS_REC_MALWARE_SIGNAL, .name = "malware_signal",
	  .size = sizeof(struct rec_malware_signal), .decode_more = malware_signal_decode },
	KIND(UPS_REC_BINDER_START_ACTIVITY, "binder_start_activity", rec_binder_start_activity,
	     binder_start_activity_fields,
	     ATOM(binder_start_activity_atom,
		  .fixed_atom_id = ATOM_TEST_UPROBESTATS_ATOM_REPORTED)),
	/* call_return's exit probes: the calls they dropped (intake.c) */
	{ .kind = UPS_REC_CALL_UNWOUND, .name = "call_unwound",
	  .size = sizeof(struct rec_call_unwound), .unwound = true },
	/* --stack: no fields of its own; the record it wraps is decoded */
	{ .kind = UPS_REC_STACK, .name = "stack", .size = sizeof(struct ups_stack_hdr),
	  .stated_size = stack_stated_size, .wrapper = true },
};

const struct record_kind *record_kind_get(uint32_t kind)
{
	for (size_t i = 0; i < N(kinds); i++)
		if (kinds[i].kind == kind)
			return &kinds[i];
	return NULL;
}

size_t record_kind_count(void)
{
	return N(kinds);
}

const struct record_kind *record_kind_at(size_t i)
{
	return i < N(kinds) ? &kinds[i] : NULL;
}

/* ---- decoding ---- */

static int64_t load_int(const struct rk_field *f, const char *p)
{
	uint8_t u8;
	uint32_t u32;
	int32_t s32;
	uint64_t u64;

	switch (f->store) {
	case RK_U8: memcpy(&u8, p, 1); return u8;
	case RK_U32: memcpy(&u32, p, 4); return u32;
	case RK_S32: memcpy(&s32, p, 4); return s32;
	default: memcpy(&u64, p, 8); return (int64_t)u64;
	}
}

static void decode_field(const struct rk_field *f, const char *payload, struct fields_out *o)
{
	const char *p = payload + f->off;
	int64_t v;

	if (f->store == RK_CHARS) {
		fields_str(o, f->name, p, f->size);
		return;
	}
	v = load_int(f, p);
	switch (f->type) {
	case FIELD_INT32: fields_i32(o, f->name, (int32_t)v); break;
	case FIELD_UINT64: fields_u64(o, f->name, (uint64_t)v); break;
	case FIELD_BOOL: fields_bool(o, f->name, v != 0); break;
	default: fields_i64(o, f->name, v); break;
	}
}

void record_decode_into(const struct record_kind *rk, const void *payload,
			struct fields_out *o)
{
	for (size_t i = 0; i < rk->n_fields; i++)
		decode_field(&rk->fields[i], payload, o);
	if (rk->decode_more)
		rk->decode_more(payload, o);
}

size_t record_decode(const struct record_kind *rk, const void *payload, struct field *out,
		     size_t max)
{
	struct fields_out o = { .f = out, .max = max };

	record_decode_into(rk, payload, &o);
	return o.n;
}

uint64_t record_duration(const struct record_kind *rk, const void *payload)
{
	if (!rk->is_return || rk->duration_field >= rk->n_fields)
		return 0;
	return (uint64_t)load_int(&rk->fields[rk->duration_field],
				  (const char *)payload + rk->fields[rk->duration_field].off);
}

uint64_t record_entry_sp(const struct record_kind *rk, const void *payload)
{
	uint64_t sp;

	if (!rk->has_entry_sp)
		return 0;
	memcpy(&sp, (const char *)payload + rk->entry_sp_off, sizeof(sp));
	return sp;
}
