#include "probe/atoms.h"

#include <string.h>

#include "probe/binder_filter.h"
#include "probe/fields.h"
#include "records.h"

/* ---- SipHash-1-3 as Rust's DefaultHasher::new() computes it ---- */

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

static void sip_round(uint64_t v[4])
{
	v[0] += v[1]; v[1] = ROTL(v[1], 13); v[1] ^= v[0]; v[0] = ROTL(v[0], 32);
	v[2] += v[3]; v[3] = ROTL(v[3], 16); v[3] ^= v[2];
	v[0] += v[3]; v[3] = ROTL(v[3], 21); v[3] ^= v[0];
	v[2] += v[1]; v[1] = ROTL(v[1], 17); v[1] ^= v[2]; v[2] = ROTL(v[2], 32);
}

static void sip_block(uint64_t v[4], uint64_t m)
{
	v[3] ^= m;
	sip_round(v);
	v[0] ^= m;
}

int64_t atoms_string_hash(const char *s, size_t len)
{
	uint64_t v[4] = { 0x736f6d6570736575ULL, 0x646f72616e646f6dULL,
			  0x6c7967656e657261ULL, 0x7465646279746573ULL };
	size_t total = len + 1;   /* str's Hash appends one 0xff byte */
	uint64_t m = 0;
	size_t i;

	for (i = 0; i < total; i++) {
		uint8_t b = i < len ? (uint8_t)s[i] : 0xff;
		m |= (uint64_t)b << (8 * (i % 8));
		if (i % 8 == 7) {
			sip_block(v, m);
			m = 0;
		}
	}
	sip_block(v, m | (uint64_t)(total & 0xff) << 56);
	v[2] ^= 0xff;
	sip_round(v);
	sip_round(v);
	sip_round(v);
	return (int64_t)(v[0] ^ v[1] ^ v[2] ^ v[3]);
}

/* ---- per record kind ---- */

/* call_detail: one Int64 per configured position, in the configured order
 * (the newest upstream handler writes the raw 64-bit register). */
static void call_detail_atom(const struct plan_probe *p, const void *payload,
			     struct fields_out *o)
{
	const struct i32_list *pos = &p->task_cfg->statsd.primitive_argument_positions;
	struct call_result r;

	memcpy(&r, payload, sizeof(r));
	for (size_t i = 0; i < pos->n; i++) {
		int reg = plan_arg_register(p->abi, pos->v[i]);
		uint64_t v = reg >= 0 ? r.regs[reg] : 0;
		/* The C++ handlers wrote (int)regs[p]; the newest Rust one the raw
		 * register as Int64 (the default). */
		if (p->atom_int32_args)
			fields_i32(o, "arg", (int32_t)(uint32_t)v);
		else
			fields_i64(o, "arg", (int64_t)v);
	}
}

/* call_args (ours): as call_detail, but a String position becomes a String
 * field with its text. */
static void call_args_atom(const struct plan_probe *p, const void *payload,
			   struct fields_out *o)
{
	const struct i32_list *pos = &p->task_cfg->statsd.primitive_argument_positions;
	const struct call_args *a = payload;

	for (size_t i = 0; i < pos->n; i++) {
		int reg = plan_arg_register(p->abi, pos->v[i]);
		size_t k = UPS_ARG_STRINGS;
		for (size_t j = 0; j < UPS_ARG_STRINGS; j++)
			if (a->string_pos[j] == pos->v[i])
				k = j;
		if (k < UPS_ARG_STRINGS)
			fields_str(o, "arg", a->strings[k], UPS_ARG_STRING_LEN);
		else
			fields_i64(o, "arg", reg >= 0 ? (int64_t)a->r.regs[reg] : 0);
	}
}

/* call_timestamp: Int32 event, Int64 timestamp. */
static void call_timestamp_atom(const void *payload, struct fields_out *o)
{
	struct call_timestamp t;

	memcpy(&t, payload, sizeof(t));
	fields_i32(o, "event", (int32_t)t.event);
	fields_i64(o, "timestamp_ns", (int64_t)t.timestamp_ns);
}

/* call_return (ours): Int64 return value, Int64 duration in ns. */
static void call_return_atom(const void *payload, struct fields_out *o)
{
	struct call_return r;

	memcpy(&r, payload, sizeof(r));
	fields_i64(o, "return_value", (int64_t)r.return_value);
	fields_i64(o, "duration_ns", (int64_t)r.duration_ns);
}

/* Int32 uid, Bool onAllowlist. */
static void set_uid_atom(const void *payload, struct fields_out *o)
{
	struct set_uid_temp_allowlist_state r;

	memcpy(&r, payload, sizeof(r));
	fields_i32(o, "uid", (int32_t)r.uid);
	fields_bool(o, "on_allowlist", r.on_allowlist != 0);
}

/* The seven DeviceIdleTempAllowlistUpdated fields; both layouts share the
 * tail from changing_uid on, so base points at changing_uid. */
static void update_idle_atom(const char *base, struct fields_out *o)
{
	struct update_device_idle_legacy r;

	memcpy(&r, base, offsetof(struct update_device_idle_legacy, reason));
	memcpy(&r.calling_uid, base + offsetof(struct update_device_idle_legacy, calling_uid),
	       sizeof(r.calling_uid));
	fields_i32(o, "changing_uid", r.changing_uid);
	fields_bool(o, "adding", r.adding != 0);
	fields_i64(o, "duration_ms", r.duration_ms);
	fields_i32(o, "type", r.type);
	fields_i32(o, "reason_code", r.reason_code);
	FIELDS_STR_MEMBER(o, "reason", base, struct update_device_idle_legacy, reason);
	fields_i32(o, "calling_uid", r.calling_uid);
}

/* ArtTest AOT: Int64 adding, Int64 reason_code, Int64 hash(reason). */
static void art_test_aot_atom(const void *payload, struct fields_out *o)
{
	struct update_device_idle r;
	const char *reason = (const char *)payload + offsetof(struct update_device_idle, reason);

	memcpy(&r, payload, offsetof(struct update_device_idle, reason));
	fields_i64(o, "adding", r.adding != 0);
	fields_i64(o, "reason_code", r.reason_code);
	fields_i64(o, "reason_hash",
		   atoms_string_hash(reason, fields_str_len(reason, sizeof(r.reason))));
}

/* ArtTest JIT: Int64 validate_incoming_user, Int64 user_id,
 * Int64 hash(calling_package). */
static void art_test_jit_atom(const void *payload, struct fields_out *o)
{
	struct start_activity_as_user r;
	const char *pkg = (const char *)payload +
			  offsetof(struct start_activity_as_user, calling_package);

	memcpy(&r, payload, sizeof(r));
	fields_i64(o, "validate_incoming_user", r.validate_incoming_user);
	fields_i64(o, "user_id", r.user_id);
	fields_i64(o, "calling_package_hash",
		   atoms_string_hash(pkg, fields_str_len(pkg, sizeof(r.calling_package))));
}

/* Bitmap, upstream's V0 handler: an allocation becomes
 * AndroidGraphicsBitmapAllocated(Int32 uid [is_uid], Int32 width, Int32 height);
 * other bitmap events write no atom. */
static int bitmap_atom(const void *payload, struct fields_out *o)
{
	struct bitmap_event r;

	memcpy(&r, payload, sizeof(r));
	if (r.type != BITMAP_EVENT_ALLOCATION)
		return 0;
	fields_uid(o, "uid", (int32_t)r.uid);
	fields_i32(o, "width", (int32_t)r.width);
	fields_i32(o, "height", (int32_t)r.height);
	return 1;
}

/* BindServiceLockedWithBalFlagsReported(String intent_package, Int64 flags,
 * String calling_package, String intent_action, String component package,
 * String component class); none when every string is empty (upstream's
 * BpfDataInvalid) or the BAL flag is missing. */
static int bind_service_atom(const void *payload, struct fields_out *o)
{
#define BSL(m) (const char *)payload + offsetof(struct bind_service_locked, m), UPS_STR_LEN
	int64_t flags;

	memcpy(&flags, (const char *)payload + offsetof(struct bind_service_locked, bind_flags),
	       sizeof(flags));
	if (!(flags & 0x00100000) ||
	    (!fields_str_len(BSL(intent_action)) && !fields_str_len(BSL(intent_package)) &&
	     !fields_str_len(BSL(intent_component_name_package)) &&
	     !fields_str_len(BSL(intent_component_name_class)) &&
	     !fields_str_len(BSL(calling_package))))
		return 0;
	fields_str(o, "intent_package", BSL(intent_package));
	fields_i64(o, "flags", flags);
	fields_str(o, "calling_package", BSL(calling_package));
	fields_str(o, "intent_action", BSL(intent_action));
	fields_str(o, "intent_component_name_package", BSL(intent_component_name_package));
	fields_str(o, "intent_component_name_class", BSL(intent_component_name_class));
	return 1;
#undef BSL
}

/* SetComponentEnabledSettingReported(String package, String class,
 * Int32 new_state, String calling_package), only for disabling states
 * (new_state >= 2) of a named component; is_launcher_activity needs the
 * package manager and is not written. */
static int component_enabled_atom(const void *payload, struct fields_out *o)
{
#define CES(m) (const char *)payload + offsetof(struct component_enabled_setting, m), UPS_STR_LEN
	int32_t state;

	memcpy(&state,
	       (const char *)payload + offsetof(struct component_enabled_setting, new_state),
	       sizeof(state));
	if (state < 2 || !fields_str_len(CES(package_name)) || !fields_str_len(CES(class_name)))
		return 0;
	fields_str(o, "package_name", CES(package_name));
	fields_str(o, "class_name", CES(class_name));
	fields_i32(o, "new_state", state);
	fields_str(o, "calling_package_name", CES(calling_package_name));
	return 1;
#undef CES
}

/* Binder: the matched method_config's atom_config, fields in the order of
 * atom_field_positions. */
static int binder_atom(const struct atom_src *src, struct atom_buf *out, struct fields_out *o)
{
	const char *iface = (const char *)src->payload;
	size_t len = fields_str_len(iface, UPS_STR_LEN);
	const struct binder_method_config *mc;
	struct binder_transaction r;

	memcpy(&r, src->payload, sizeof(r));
	mc = binder_filter_method(src->probe->cfg, iface, len, r.code);
	if (!mc || !mc->has_atom_config || !mc->has_atom_id || mc->atom_id <= 0)
		return 0;
	out->atom_id = mc->atom_id;
	for (size_t i = 0; i < mc->atom_field_positions.n; i++) {
		switch (mc->atom_field_positions.v[i]) {
		case ATOM_FIELD_CALLING_UID: fields_uid(o, "calling_uid", r.calling_uid); break;
		case ATOM_FIELD_INTERFACE_NAME:
			fields_str(o, "interface_name", iface, UPS_STR_LEN);
			break;
		case ATOM_FIELD_CODE: fields_i32(o, "code", (int32_t)r.code); break;
		case ATOM_FIELD_KTIME_NS: fields_i64(o, "ktime_ns", (int64_t)r.timestamp_ns); break;
		default: return 0;   /* UNKNOWN: upstream errors, no atom */
		}
	}
	return 1;
}

/* Kinds whose atom id is the task's statsd_logging_config.atom_id. */
static int task_atom(const struct atom_src *src, struct fields_out *o)
{
	const char *p = src->payload;

	switch (src->kind) {
	case UPS_REC_CALL_DETAIL: call_detail_atom(src->probe, p, o); return 1;
	case UPS_REC_CALL_TIMESTAMP: call_timestamp_atom(p, o); return 1;
	case UPS_REC_CALL_RETURN: call_return_atom(p, o); return 1;
	case UPS_REC_CALL_ARGS: call_args_atom(src->probe, p, o); return 1;
	case UPS_REC_SET_UID_TEMP_ALLOWLIST_STATE: set_uid_atom(p, o); return 1;
	case UPS_REC_UPDATE_DEVICE_IDLE:
		update_idle_atom(p + offsetof(struct update_device_idle, changing_uid), o);
		return 1;
	case UPS_REC_UPDATE_DEVICE_IDLE_LEGACY: update_idle_atom(p, o); return 1;
	case UPS_REC_BITMAP_CONSTRUCTOR_HEAP: {
		struct bitmap_constructor_heap r;
		memcpy(&r, p, sizeof(r));
		fields_i64(o, "value", (int64_t)r.value);
		return 1;
	}
	case UPS_REC_BITMAP_EVENT: return bitmap_atom(p, o);
	case UPS_REC_BIND_SERVICE_LOCKED: return bind_service_atom(p, o);
	case UPS_REC_COMPONENT_ENABLED_SETTING: return component_enabled_atom(p, o);
	case UPS_REC_ART_TEST_AOT: art_test_aot_atom(p, o); return 1;
	case UPS_REC_START_ACTIVITY_AS_USER: art_test_jit_atom(p, o); return 1;
	default: return 0;   /* process_change, accessibility, malware_signal: no atom
			      * (docs/programs.md) */
	}
}

int atoms_from_record(const struct atom_src *src, struct atom_buf *out)
{
	const struct task_config *t = src->probe->task_cfg;
	struct fields_out o = { .f = out->fields, .is_uid = out->is_uid,
				.max = CATALOG_MAX_FIELDS };
	int rc;

	out->atom_id = 0;
	out->n_fields = 0;
	if (src->kind == UPS_REC_BINDER_TRANSACTION) {
		rc = binder_atom(src, out, &o);
	} else if (src->kind == UPS_REC_BINDER_START_ACTIVITY) {
		/* CalyxOS's handler: always atom 915 (test_uprobestats_atom_reported),
		 * Int32 calling_uid, whatever the task's logging config says. */
		struct binder_start_activity r;
		memcpy(&r, src->payload, sizeof(r));
		out->atom_id = ATOM_TEST_UPROBESTATS_ATOM_REPORTED;
		fields_i32(&o, "calling_uid", r.calling_uid);
		rc = 1;
	} else {
		if (!t->has_statsd_logging_config || !t->statsd.has_atom_id)
			return 0;
		out->atom_id = (int32_t)t->statsd.atom_id;
		rc = task_atom(src, &o);
	}
	out->n_fields = o.n;
	return rc;
}
