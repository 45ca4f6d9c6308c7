/* Record -> atom mappings (probe/atoms.c), one record kind at a time, from
 * payloads built byte by byte at upstream's offsets (not through the structs
 * of records.h, so a layout slip there shows here too). */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "probe/atoms.h"
#include "records.h"
#include "ut.h"

static void put32(uint8_t *b, size_t off, uint32_t v)
{
	memcpy(b + off, &v, 4);
}

static void put64(uint8_t *b, size_t off, uint64_t v)
{
	memcpy(b + off, &v, 8);
}

static void puts_at(uint8_t *b, size_t off, const char *s)
{
	memcpy(b + off, s, strlen(s));
}

#define FIELD_TYPE(out, i, t)                                                  \
	do {                                                                   \
		UT_ASSERT((size_t)(i) < (out).n_fields);                       \
		UT_EQ_INT((out).fields[i].type, t);                            \
	} while (0)
#define EXPECT_I32(out, i, val)                                                \
	do {                                                                   \
		FIELD_TYPE(out, i, FIELD_INT32);                               \
		UT_EQ_INT((out).fields[i].v.i32, val);                         \
	} while (0)
#define EXPECT_I64(out, i, val)                                                \
	do {                                                                   \
		FIELD_TYPE(out, i, FIELD_INT64);                               \
		UT_EQ_INT((out).fields[i].v.i64, val);                         \
	} while (0)
#define EXPECT_BOOL(out, i, val)                                               \
	do {                                                                   \
		FIELD_TYPE(out, i, FIELD_BOOL);                                \
		UT_EQ_INT((out).fields[i].v.b, val);                           \
	} while (0)
#define EXPECT_STR(out, i, val)                                                \
	do {                                                                   \
		FIELD_TYPE(out, i, FIELD_STRING);                              \
		UT_EQ_INT((out).fields[i].v.str.len, strlen(val));             \
		UT_ASSERT(memcmp((out).fields[i].v.str.ptr, val, strlen(val)) == 0); \
	} while (0)
#define EXPECT_NO_UID(out)                                                     \
	do {                                                                   \
		for (size_t k_ = 0; k_ < (out).n_fields; k_++)                 \
			UT_ASSERT(!(out).is_uid[k_]);                          \
	} while (0)

/* A task with statsd_logging_config { atom_id } and one probe. */
struct fixture {
	struct task_config task;
	struct probe_config cfg;
	struct plan_probe probe;
};

static void fixture_init(struct fixture *f, int64_t atom_id)
{
	memset(f, 0, sizeof(*f));
	if (atom_id) {
		f->task.has_statsd_logging_config = true;
		f->task.statsd.has_atom_id = true;
		f->task.statsd.atom_id = atom_id;
	}
	f->probe.task_cfg = &f->task;
	f->probe.cfg = &f->cfg;
	f->probe.abi = ARG_ABI_ART_INSTANCE;
}

static int map(struct fixture *f, uint32_t kind, const void *payload, struct atom_buf *out)
{
	struct atom_src src = { .probe = &f->probe, .kind = kind, .payload = payload };
	memset(out, 0xAB, sizeof(*out));   /* nothing may be left unset */
	return atoms_from_record(&src, out);
}

UT_TEST(atoms_set_uid_temp_allowlist_state)
{
	uint8_t p[16] = { 0 };
	struct fixture f;
	struct atom_buf a;

	fixture_init(&f, 926);
	put64(p, 0, 10123);
	p[8] = 1;
	UT_EQ_INT(map(&f, UPS_REC_SET_UID_TEMP_ALLOWLIST_STATE, p, &a), 1);
	UT_EQ_INT(a.atom_id, 926);
	UT_EQ_INT(a.n_fields, 2);
	EXPECT_I32(a, 0, 10123);
	EXPECT_BOOL(a, 1, true);
	EXPECT_NO_UID(a);
}

/* The seven DeviceIdleTempAllowlistUpdated fields, from either layout. */
#define EXPECT_IDLE_ATOM(a)                                                    \
	do {                                                                   \
		UT_EQ_INT((a).atom_id, 940);                                   \
		UT_EQ_INT((a).n_fields, 7);                                    \
		EXPECT_I32(a, 0, 10050);                                       \
		EXPECT_BOOL(a, 1, true);                                       \
		EXPECT_I64(a, 2, 300000);                                      \
		EXPECT_I32(a, 3, 1);                                           \
		EXPECT_I32(a, 4, 316);                                         \
		EXPECT_STR(a, 5, "shell");                                     \
		EXPECT_I32(a, 6, -2000);                                       \
		EXPECT_NO_UID(a);                                              \
	} while (0)

UT_TEST(atoms_update_device_idle_newest_layout)
{
	uint8_t p[296] = { 0 };
	struct fixture f;
	struct atom_buf a;

	fixture_init(&f, 940);
	put64(p, 0, 0x7000001234);   /* method_identifier: not in the atom */
	put32(p, 8, 10050);
	p[12] = 1;
	put64(p, 16, 300000);
	put32(p, 24, 1);
	put32(p, 28, 316);
	puts_at(p, 32, "shell");
	put32(p, 288, (uint32_t)-2000);
	UT_EQ_INT(map(&f, UPS_REC_UPDATE_DEVICE_IDLE, p, &a), 1);
	EXPECT_IDLE_ATOM(a);
}

UT_TEST(atoms_update_device_idle_legacy_layout)
{
	uint8_t p[288] = { 0 };
	struct fixture f;
	struct atom_buf a;

	fixture_init(&f, 940);
	put32(p, 0, 10050);
	p[4] = 1;
	put64(p, 8, 300000);
	put32(p, 16, 1);
	put32(p, 20, 316);
	puts_at(p, 24, "shell");
	put32(p, 280, (uint32_t)-2000);
	UT_EQ_INT(map(&f, UPS_REC_UPDATE_DEVICE_IDLE_LEGACY, p, &a), 1);
	EXPECT_IDLE_ATOM(a);
}

UT_TEST(atoms_need_a_logging_config)
{
	uint8_t p[296] = { 0 };
	struct fixture f;
	struct atom_buf a;

	fixture_init(&f, 0);
	UT_EQ_INT(map(&f, UPS_REC_SET_UID_TEMP_ALLOWLIST_STATE, p, &a), 0);
	UT_EQ_INT(map(&f, UPS_REC_UPDATE_DEVICE_IDLE, p, &a), 0);
	UT_EQ_INT(a.n_fields, 0);
}

UT_TEST(atoms_call_timestamp_and_call_detail_unchanged)
{
	uint8_t t[16] = { 0 }, d[88] = { 0 };
	int32_t positions[2] = { 1, 0 };
	struct fixture f;
	struct atom_buf a;

	fixture_init(&f, 915);
	put32(t, 0, 3);
	put64(t, 8, 99);
	UT_EQ_INT(map(&f, UPS_REC_CALL_TIMESTAMP, t, &a), 1);
	UT_EQ_INT(a.n_fields, 2);
	EXPECT_I32(a, 0, 3);
	EXPECT_I64(a, 1, 99);
	f.task.statsd.primitive_argument_positions = (struct i32_list){ .v = positions, .n = 2 };
	put64(d, 8 + 8 * 2, 11);   /* regs[2]: Java argument 0 */
	put64(d, 8 + 8 * 3, 22);   /* regs[3]: Java argument 1 */
	UT_EQ_INT(map(&f, UPS_REC_CALL_DETAIL, d, &a), 1);
	UT_EQ_INT(a.n_fields, 2);
	EXPECT_I64(a, 0, 22);
	EXPECT_I64(a, 1, 11);
}

/* Binder: interface@0, code@128, calling_uid@136, timestamp_ns@144. */
static void binder_payload(uint8_t *p, const char *iface, uint64_t code)
{
	memset(p, 0, 152);
	puts_at(p, 0, iface);
	put64(p, 128, code);
	put32(p, 136, 10001);
	put64(p, 144, 123456789);
}

UT_TEST(atoms_binder_fields_follow_atom_field_positions)
{
	int32_t positions[4] = { ATOM_FIELD_CALLING_UID, ATOM_FIELD_INTERFACE_NAME,
				 ATOM_FIELD_CODE, ATOM_FIELD_KTIME_NS };
	char name[] = "com.android.internal.app.IBatteryStats";
	struct binder_method_config methods[2];
	struct binder_filter filter;
	uint8_t p[152];
	struct fixture f;
	struct atom_buf a;

	memset(methods, 0, sizeof(methods));
	methods[0].has_method_id = true;
	methods[0].method_id = 1;
	methods[0].has_atom_config = true;
	methods[0].has_atom_id = true;
	methods[0].atom_id = 915;
	methods[0].atom_field_positions = (struct i32_list){ .v = positions, .n = 4 };
	methods[1].has_method_id = true;
	methods[1].method_id = 7;
	methods[1].has_event_service_config = true;
	memset(&filter, 0, sizeof(filter));
	filter.interface_name = name;
	filter.methods = methods;
	filter.n_methods = 2;
	fixture_init(&f, 0);   /* the atom id comes from atom_config, not the task */
	f.cfg.binder_filters = &filter;
	f.cfg.n_binder_filters = 1;
	binder_payload(p, filter.interface_name, 1);
	UT_EQ_INT(map(&f, UPS_REC_BINDER_TRANSACTION, p, &a), 1);
	UT_EQ_INT(a.atom_id, 915);
	UT_EQ_INT(a.n_fields, 4);
	EXPECT_I32(a, 0, 10001);
	UT_ASSERT(a.is_uid[0]);
	EXPECT_STR(a, 1, "com.android.internal.app.IBatteryStats");
	UT_ASSERT(!a.is_uid[1]);
	EXPECT_I32(a, 2, 1);
	EXPECT_I64(a, 3, 123456789);
	UT_ASSERT(!a.is_uid[2] && !a.is_uid[3]);

	binder_payload(p, filter.interface_name, 7);   /* event service only */
	UT_EQ_INT(map(&f, UPS_REC_BINDER_TRANSACTION, p, &a), 0);
	binder_payload(p, "com.android.internal.app.IBatteryStat", 1);   /* not the name */
	UT_EQ_INT(map(&f, UPS_REC_BINDER_TRANSACTION, p, &a), 0);
	positions[1] = ATOM_FIELD_UNKNOWN;                   /* upstream: an error */
	binder_payload(p, filter.interface_name, 1);
	UT_EQ_INT(map(&f, UPS_REC_BINDER_TRANSACTION, p, &a), 0);
}

UT_TEST(atoms_string_hash_matches_rust_default_hasher)
{
	/* Values printed by rustc's DefaultHasher over &str. */
	UT_EQ_INT(atoms_string_hash("shell", 5), -5667491721050574174LL);
	UT_EQ_INT(atoms_string_hash("", 0), 3476900567878811119LL);
	UT_EQ_INT(atoms_string_hash("exactly8", 8), 2180113891977074974LL);
	UT_EQ_INT(atoms_string_hash("café ☕", strlen("café ☕")), -4578051384532736957LL);
	UT_EQ_INT(atoms_string_hash("0123456789abcdef0123", 20), -5238581616147834833LL);
}

UT_TEST(atoms_art_test_aot_and_jit)
{
	uint8_t aot[296] = { 0 }, jit[160] = { 0 };
	const char *pkg = "com.android.uprobestats.disruptive";
	struct fixture f;
	struct atom_buf a;

	fixture_init(&f, 915);
	aot[12] = 1;
	put32(aot, 28, 316);
	puts_at(aot, 32, "shell");
	UT_EQ_INT(map(&f, UPS_REC_ART_TEST_AOT, aot, &a), 1);
	UT_EQ_INT(a.n_fields, 3);
	EXPECT_I64(a, 0, 1);
	EXPECT_I64(a, 1, 316);
	EXPECT_I64(a, 2, -5667491721050574174LL);

	puts_at(jit, 8, pkg);
	put32(jit, 144, (uint32_t)-2);
	put32(jit, 148, 1);
	UT_EQ_INT(map(&f, UPS_REC_START_ACTIVITY_AS_USER, jit, &a), 1);
	UT_EQ_INT(a.n_fields, 3);
	EXPECT_I64(a, 0, 1);
	EXPECT_I64(a, 1, -2);
	EXPECT_I64(a, 2, 3716230209409209514LL);
}

/* BindServiceLocked: four 128-byte strings, bind_flags@512, calling@520. */
UT_TEST(atoms_bind_service_locked)
{
	uint8_t p[648] = { 0 };
	struct fixture f;
	struct atom_buf a;

	fixture_init(&f, 1001);
	puts_at(p, 0, "act");
	puts_at(p, 128, "ipkg");
	puts_at(p, 256, "cnpkg");
	puts_at(p, 384, "cncls");
	put64(p, 512, 0x00100001);
	puts_at(p, 520, "caller");
	UT_EQ_INT(map(&f, UPS_REC_BIND_SERVICE_LOCKED, p, &a), 1);
	UT_EQ_INT(a.n_fields, 6);
	EXPECT_STR(a, 0, "ipkg");
	EXPECT_I64(a, 1, 0x00100001);
	EXPECT_STR(a, 2, "caller");
	EXPECT_STR(a, 3, "act");
	EXPECT_STR(a, 4, "cnpkg");
	EXPECT_STR(a, 5, "cncls");

	put64(p, 512, 0x1);                       /* no BAL flag */
	UT_EQ_INT(map(&f, UPS_REC_BIND_SERVICE_LOCKED, p, &a), 0);
	memset(p, 0, sizeof(p));                  /* every string empty */
	put64(p, 512, 0x00100000);
	UT_EQ_INT(map(&f, UPS_REC_BIND_SERVICE_LOCKED, p, &a), 0);
}

/* ComponentEnabledSetting: package@0, class@128, new_state@256, calling@260. */
UT_TEST(atoms_component_enabled_setting)
{
	uint8_t p[388] = { 0 };
	struct fixture f;
	struct atom_buf a;

	fixture_init(&f, 1002);
	puts_at(p, 0, "com.example");
	puts_at(p, 128, "com.example.Main");
	put32(p, 256, 2);
	puts_at(p, 260, "shell");
	UT_EQ_INT(map(&f, UPS_REC_COMPONENT_ENABLED_SETTING, p, &a), 1);
	UT_EQ_INT(a.n_fields, 4);
	EXPECT_STR(a, 0, "com.example");
	EXPECT_STR(a, 1, "com.example.Main");
	EXPECT_I32(a, 2, 2);
	EXPECT_STR(a, 3, "shell");

	put32(p, 256, 1);                         /* enabling: no atom */
	UT_EQ_INT(map(&f, UPS_REC_COMPONENT_ENABLED_SETTING, p, &a), 0);
	put32(p, 256, 3);
	memset(p + 128, 0, 128);                  /* no class name */
	UT_EQ_INT(map(&f, UPS_REC_COMPONENT_ENABLED_SETTING, p, &a), 0);
}

/* BitmapEvent: type@0, width@4, height@8, ..., uid@28 (upstream padding),
 * native_ptr@32, activity@40. */
UT_TEST(atoms_bitmap_allocation_with_the_process_uid)
{
	uint8_t p[168] = { 0 }, heap[8] = { 0 };
	struct fixture f;
	struct atom_buf a;

	fixture_init(&f, 1039);
	put32(p, 4, 1000);
	put32(p, 8, 600);
	put32(p, 28, 10123);
	UT_EQ_INT(map(&f, UPS_REC_BITMAP_EVENT, p, &a), 1);
	UT_EQ_INT(a.atom_id, 1039);
	UT_EQ_INT(a.n_fields, 3);
	EXPECT_I32(a, 0, 10123);
	UT_ASSERT(a.is_uid[0]);
	EXPECT_I32(a, 1, 1000);
	EXPECT_I32(a, 2, 600);
	UT_ASSERT(!a.is_uid[1] && !a.is_uid[2]);
	put32(p, 0, BITMAP_EVENT_BITMAP_SCALED);  /* only allocations (upstream V0) */
	UT_EQ_INT(map(&f, UPS_REC_BITMAP_EVENT, p, &a), 0);

	put64(heap, 0, 123);
	UT_EQ_INT(map(&f, UPS_REC_BITMAP_CONSTRUCTOR_HEAP, heap, &a), 1);
	UT_EQ_INT(a.n_fields, 1);
	EXPECT_I64(a, 0, 123);
}

UT_TEST(atoms_none_for_process_change_and_accessibility)
{
	uint8_t p[296] = { 0 };
	struct fixture f;
	struct atom_buf a;

	fixture_init(&f, 915);
	UT_EQ_INT(map(&f, UPS_REC_PROCESS_CHANGE, p, &a), 0);
	UT_EQ_INT(map(&f, UPS_REC_ACCESSIBILITY_EVENT, p, &a), 0);
}

UT_TEST(atoms_binder_exec_transact_internal_is_915)
{
	uint8_t p[4];
	struct fixture f;
	struct atom_buf a;

	put32(p, 0, (uint32_t)-7);
	fixture_init(&f, 777);       /* upstream ignores the config's atom id */
	UT_EQ_INT(map(&f, UPS_REC_BINDER_START_ACTIVITY, p, &a), 1);
	UT_EQ_INT(a.atom_id, 915);
	UT_EQ_INT(a.n_fields, 1);
	FIELD_TYPE(a, 0, FIELD_INT32);
	UT_EQ_INT(a.fields[0].v.i32, -7);
	UT_ASSERT(!a.is_uid[0]);
}

UT_TEST(atoms_none_for_malware_signal)
{
	uint8_t p[278] = { 0 };
	struct fixture f;
	struct atom_buf a;

	p[80] = 1;
	fixture_init(&f, 915);
	UT_EQ_INT(map(&f, UPS_REC_MALWARE_SIGNAL, p, &a), 0);
}
