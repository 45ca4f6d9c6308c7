/* Record decoding from the kind descriptors (catalog/record_kinds.c) and the
 * defensive string reading it uses (catalog/fields.c): every record kind
 * decodes to named fields, strings stop at NUL or at the field's end, and
 * keep invalid UTF-8 bytes (the outputs repair them). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "catalog/fields.h"
#include "catalog/record_kinds.h"
#include "records.h"
#include "ut.h"

UT_TEST(fields_str_len_is_bounded_and_valid_utf8)
{
	char full[8];

	memset(full, 'a', sizeof(full));
	UT_EQ_INT(fields_str_len(full, sizeof(full)), 8);          /* no NUL: the size */
	UT_EQ_INT(fields_str_len("abc\0def", 8), 3);
	/* invalid bytes are kept (each output repairs them one by one) */
	UT_EQ_INT(fields_str_len("ab\xff" "cd", 6), 5);             /* invalid byte */
	UT_EQ_INT(fields_str_len("bad\xff\xfeutf8", 10), 9);
	UT_EQ_INT(fields_str_len("a\xc3", 3), 2);                   /* cut sequence */
	UT_EQ_INT(fields_str_len("caf\xc3\xa9", 5), 5);             /* é */
	UT_EQ_INT(fields_str_len("\xf0\x9d\x84\x9e!", 6), 5);       /* U+1D11E */
	UT_EQ_INT(fields_str_len("\xed\xa0\x80", 4), 3);            /* a surrogate */
	UT_EQ_INT(fields_str_len("\xc0\xaf", 3), 2);                /* overlong */
	UT_EQ_INT(fields_str_len("\xe2\x98", 2), 2);                /* truncated at the end */
}

static const struct field *find(const struct field *f, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(f[i].name, name) == 0)
			return &f[i];
	return NULL;
}

UT_TEST(decode_every_record_kind_names_its_fields)
{
	static const struct { uint32_t kind; size_t payload; size_t n; } kinds[] = {
		{ UPS_REC_SET_UID_TEMP_ALLOWLIST_STATE, 16, 2 },
		{ UPS_REC_UPDATE_DEVICE_IDLE, 296, 8 },
		{ UPS_REC_UPDATE_DEVICE_IDLE_LEGACY, 288, 7 },
		{ UPS_REC_PROCESS_CHANGE, 264, 3 },
		{ UPS_REC_BITMAP_CONSTRUCTOR_HEAP, 8, 1 },
		{ UPS_REC_BITMAP_EVENT, 168, 10 },
		{ UPS_REC_BIND_SERVICE_LOCKED, 648, 6 },
		{ UPS_REC_COMPONENT_ENABLED_SETTING, 388, 4 },
		{ UPS_REC_BINDER_TRANSACTION, 152, 4 },
		{ UPS_REC_ACCESSIBILITY_EVENT, 280, 6 },
		{ UPS_REC_ART_TEST_AOT, 296, 8 },
		{ UPS_REC_START_ACTIVITY_AS_USER, 160, 7 },
		{ UPS_REC_MALWARE_SIGNAL, 278, 9 },           /* both halves "initialized" */
		{ UPS_REC_BINDER_START_ACTIVITY, 4, 1 },
	};
	struct field f[CATALOG_MAX_FIELDS];
	/* The payload sits at the very end of its buffer: ASan catches a decoder
	 * reading one byte too far. */
	static uint8_t buf[1024];

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		const struct record_kind *r = record_kind_get(kinds[i].kind);
		uint8_t *p = buf + sizeof(buf) - kinds[i].payload;
		UT_ASSERT(r != NULL);
		UT_EQ_INT(r->size, (sizeof(struct ups_envelope) + kinds[i].payload + 7) & ~7u);
		memset(buf, 'x', sizeof(buf));   /* strings without NUL, garbage numbers */
		UT_EQ_INT(record_decode(r, p, f, CATALOG_MAX_FIELDS), kinds[i].n);
		for (size_t k = 0; k < kinds[i].n; k++)
			if (f[k].type == FIELD_STRING)
				UT_ASSERT((const uint8_t *)f[k].v.str.ptr + f[k].v.str.len <=
					  buf + sizeof(buf));
	}
}

/* call_return carries the sp at the call's entry for the call-tree writers
 * only: the event's entry_sp, never a field (JSON Lines, text and atoms keep
 * return_value and duration_ns).  call_unwound: each dropped call's sp and
 * entry time. */
UT_TEST(decode_call_return_entry_sp_is_no_field)
{
	struct call_return r = { .return_value = 7, .duration_ns = 300, .entry_ns = 1000,
				 .entry_sp = 0x7ffe1230 };
	const struct record_kind *rk = record_kind_get(UPS_REC_CALL_RETURN);
	const struct record_kind *u = record_kind_get(UPS_REC_CALL_UNWOUND);
	struct field f[CATALOG_MAX_FIELDS];

	UT_ASSERT(rk != NULL && u != NULL);
	UT_EQ_INT(rk->size, 72);
	UT_EQ_INT(record_decode(rk, &r, f, CATALOG_MAX_FIELDS), 2);
	UT_EQ_STR(f[0].name, "return_value");
	UT_EQ_STR(f[1].name, "duration_ns");
	UT_EQ_U64(record_duration(rk, &r), 300);
	UT_EQ_U64(record_entry_sp(rk, &r), 0x7ffe1230);
	UT_EQ_U64(record_entry_sp(record_kind_get(UPS_REC_CALL_DETAIL), &r), 0);
	UT_EQ_INT(u->size, 40 + 16 + 16 * UPS_UNWOUND_MAX);
	UT_EQ_INT(offsetof(struct call_unwound, calls[1].entry_ns), 16 + 16 + 8);
}

UT_TEST(decode_update_device_idle_at_upstream_offsets)
{
	uint8_t p[296] = { 0 };
	uint32_t v;
	uint64_t d = 300000, id = 0x7000001234;
	struct field f[CATALOG_MAX_FIELDS];
	const struct field *x;
	size_t n;

	memcpy(p, &id, 8);
	v = 10050;
	memcpy(p + 8, &v, 4);
	p[12] = 1;
	memcpy(p + 16, &d, 8);
	memcpy(p + 32, "caf\xc3\xa9", 5);
	v = 2000;
	memcpy(p + 288, &v, 4);
	n = record_decode(record_kind_get(UPS_REC_UPDATE_DEVICE_IDLE), p, f, CATALOG_MAX_FIELDS);
	UT_EQ_INT(n, 8);
	UT_ASSERT((x = find(f, n, "method_identifier")) && x->type == FIELD_UINT64);
	UT_EQ_U64(x->v.u64, id);
	UT_ASSERT((x = find(f, n, "changing_uid")) && x->v.i32 == 10050);
	UT_ASSERT((x = find(f, n, "adding")) && x->type == FIELD_BOOL && x->v.b);
	UT_ASSERT((x = find(f, n, "duration_ms")) && x->v.i64 == 300000);
	UT_ASSERT((x = find(f, n, "reason")) && x->type == FIELD_STRING);
	UT_EQ_INT(x->v.str.len, 5);
	UT_ASSERT(memcmp(x->v.str.ptr, "caf\xc3\xa9", 5) == 0);
	UT_ASSERT((x = find(f, n, "calling_uid")) && x->v.i32 == 2000);
}

UT_TEST(decode_binder_transaction_at_upstream_offsets)
{
	uint8_t p[152] = { 0 };
	uint64_t code = 7, ts = 42;
	int32_t uid = 10001;
	struct field f[CATALOG_MAX_FIELDS];
	const struct field *x;
	size_t n;

	memcpy(p, "com.x.IFoo", 10);
	memcpy(p + 128, &code, 8);
	memcpy(p + 136, &uid, 4);
	memcpy(p + 144, &ts, 8);
	n = record_decode(record_kind_get(UPS_REC_BINDER_TRANSACTION), p, f, CATALOG_MAX_FIELDS);
	UT_ASSERT((x = find(f, n, "interface_descriptor")) && x->v.str.len == 10);
	UT_ASSERT((x = find(f, n, "code")) && x->v.i64 == 7);
	UT_ASSERT((x = find(f, n, "calling_uid")) && x->v.i32 == 10001);
	UT_ASSERT((x = find(f, n, "timestamp_ns")) && x->v.i64 == 42);
}

UT_TEST(decode_malware_signal_at_upstream_offsets)
{
	uint8_t p[278] = { 0 };
	uint64_t uid = 10123, flags = 0x104;
	int32_t state = 2;
	struct field f[CATALOG_MAX_FIELDS];
	const struct field *x;
	size_t n;

	/* WmBoundUid {u64 client_uid@0; char client_package_name[64]@8; u64 bind_flags@72;
	 * bool initialized@80}, packed */
	memcpy(p, &uid, 8);
	memcpy(p + 8, "com.x.bound", 11);
	memcpy(p + 72, &flags, 8);
	p[80] = 1;
	n = record_decode(record_kind_get(UPS_REC_MALWARE_SIGNAL), p, f, CATALOG_MAX_FIELDS);
	UT_EQ_INT(n, 4);
	UT_ASSERT((x = find(f, n, "signal")) && x->v.str.len == strlen("wm_bound_uid"));
	UT_ASSERT((x = find(f, n, "client_uid")) && x->v.u64 == 10123);
	UT_ASSERT((x = find(f, n, "client_package_name")) && x->v.str.len == 11);
	UT_ASSERT((x = find(f, n, "bind_flags")) && x->v.u64 == 0x104);
	/* ComponentEnabledSetting at 81 {package_name[64]@81; class_name[64]@145;
	 * int new_state@209; calling_package_name[64]@213; bool initialized@277} */
	memset(p, 0, sizeof(p));
	memcpy(p + 81, "com.x", 5);
	memset(p + 145, 'c', 64);           /* no NUL: bounded by the field */
	memcpy(p + 209, &state, 4);
	memcpy(p + 213, "shell", 5);
	p[277] = 1;
	n = record_decode(record_kind_get(UPS_REC_MALWARE_SIGNAL), p, f, CATALOG_MAX_FIELDS);
	UT_EQ_INT(n, 5);
	UT_ASSERT((x = find(f, n, "package_name")) && x->v.str.len == 5);
	UT_ASSERT((x = find(f, n, "class_name")) && x->v.str.len == 64);
	UT_ASSERT((x = find(f, n, "new_state")) && x->v.i32 == 2);
	UT_ASSERT((x = find(f, n, "calling_package_name")) && x->v.str.len == 5);
	p[277] = 0;
	UT_EQ_INT(record_decode(record_kind_get(UPS_REC_MALWARE_SIGNAL), p, f, CATALOG_MAX_FIELDS), 0);
}

UT_TEST(decode_respects_max_fields)
{
	uint8_t p[648] = { 0 };
	struct field f[2];

	UT_EQ_INT(record_decode(record_kind_get(UPS_REC_BIND_SERVICE_LOCKED), p, f, 2), 2);
}
