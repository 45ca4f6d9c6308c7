/* The statsd encoder against the reference's worked examples (statsd-wire.md
 * §6.1–6.5, byte for byte) and against the independent decoder. */
#include "ut.h"

#include <stdlib.h>

#include "sink/statsd_atoms.h"
#include "sink/statsd_encode.h"
#include "statsd_decoder.h"
#include "statsd_testutil.h"

#define TS 0x0102030405060708ull

UT_TEST(statsd_example_6_1_int32_bool)
{
	struct statsd_event ev;

	statsd_event_init(&ev, TS);
	statsd_event_set_atom_id(&ev, 940);
	statsd_event_write_int32(&ev, 10001);
	statsd_event_write_bool(&ev, true);
	statsd_event_build(&ev);
	UT_ASSERT(st_bytes_eq(ev.buf, ev.len, "070401080706050403020100ac03000000112700000501"));

	statsd_event_init(&ev, TS);
	statsd_event_set_atom_id(&ev, 940);
	statsd_event_write_int32(&ev, 10001);
	statsd_event_add_bool_annotation(&ev, STATSD_ANN_IS_UID, true);
	statsd_event_write_bool(&ev, true);
	statsd_event_build(&ev);
	UT_ASSERT(st_bytes_eq(ev.buf, ev.len,
			      "07 04 01 08 07 06 05 04 03 02 01 00 ac 03 00 00"
			      "10 11 27 00 00 01 05 01 05 01"));
}

UT_TEST(statsd_example_6_2_int_int64_string)
{
	struct statsd_event ev;

	statsd_event_init(&ev, TS);
	statsd_event_set_atom_id(&ev, 940);
	statsd_event_write_int32(&ev, -5);
	statsd_event_write_int64(&ev, 0x1122334455667788ll);
	statsd_event_write_string(&ev, "abc", 3);
	UT_EQ_INT(statsd_event_build(&ev), 38);
	UT_ASSERT(st_bytes_eq(ev.buf, ev.len,
		"070501080706050403020100ac03000000fbffffff0188776655443322110203000000616263"));
}

UT_TEST(statsd_example_6_3_float)
{
	struct statsd_event ev;

	statsd_event_init(&ev, TS);
	statsd_event_set_atom_id(&ev, 940);
	statsd_event_write_float(&ev, 1.5f);
	statsd_event_build(&ev);
	UT_ASSERT(st_bytes_eq(ev.buf, ev.len, "070301080706050403020100ac030000040000c03f"));
	statsd_event_init(&ev, TS);
	statsd_event_set_atom_id(&ev, 940);
	statsd_event_write_float(&ev, 2.0f);
	statsd_event_build(&ev);
	UT_ASSERT(st_bytes_eq(ev.buf, ev.len, "070301080706050403020100ac0300000400000040"));
}

UT_TEST(statsd_example_6_4_full_datagram)
{
	uint8_t dg[STATSD_MAX_DATAGRAM];
	struct statsd_event ev;
	struct timespec rt = { .tv_sec = 1700000000, .tv_nsec = 123456789 };

	statsd_event_init(&ev, TS);
	statsd_event_set_atom_id(&ev, 940);
	statsd_event_write_int32(&ev, 10001);
	statsd_event_write_bool(&ev, true);
	statsd_event_build(&ev);
	statsd_frame(dg, 0x1234, rt);
	memcpy(dg + STATSD_FRAME_LEN, ev.buf, ev.len);
	UT_ASSERT(st_bytes_eq(dg, STATSD_FRAME_LEN + ev.len,
		"05341200f1536515cd5b0774617473070401080706050403020100ac03000000112700000501"));
}

UT_TEST(statsd_example_6_5_real_940_via_atom)
{
	struct field f[7] = {
		{ .name = "changing_uid", .type = FIELD_INT32, .v.i32 = 1001 },
		{ .name = "adding", .type = FIELD_BOOL, .v.b = true },
		{ .name = "duration_ms", .type = FIELD_INT64, .v.i64 = 5000 },
		{ .name = "type", .type = FIELD_INT32, .v.i32 = 1 },
		{ .name = "reason_code", .type = FIELD_INT32, .v.i32 = 2 },
		{ .name = "reason", .type = FIELD_STRING, .v.str = { "test reason", 11 } },
		{ .name = "calling_uid", .type = FIELD_INT32, .v.i32 = 1002 },
	};
	struct atom a = { .atom_id = 940, .boot_ns = TS, .fields = f, .n_fields = 7 };
	struct statsd_event ev;

	UT_EQ_INT(statsd_encode_atom(&ev, &a), 0);
	UT_EQ_INT(ev.len, 63);
	UT_ASSERT(st_bytes_eq(ev.buf, ev.len,
		"070901080706050403020100ac03000000e9030000050101881300000000000000010000000002"
		"000000020b0000007465737420726561736f6e00ea030000"));
}

UT_TEST(statsd_example_6_5_truncate_timestamp)
{
	struct statsd_event ev;

	statsd_event_init(&ev, TS);
	statsd_event_set_atom_id(&ev, 940);
	statsd_event_add_bool_annotation(&ev, STATSD_ANN_TRUNCATE_TIMESTAMP, true);
	statsd_event_write_int32(&ev, 7);
	statsd_event_build(&ev);
	UT_ASSERT(st_bytes_eq(ev.buf, ev.len, "070301080706050403020110ac0300000205010007000000"));
}

UT_TEST(statsd_example_6_5_lists)
{
	struct statsd_event ev;
	const int64_t i64s[] = { -1 };
	const bool bools[] = { true, false };
	const char *const strs[] = { "a", "" };
	const int32_t i32s[] = { 5, 6 };

	statsd_event_init(&ev, TS);
	statsd_event_set_atom_id(&ev, 940);
	statsd_event_write_string(&ev, "", 0);
	statsd_event_write_int64_list(&ev, i64s, 1);
	statsd_event_write_bool_list(&ev, bools, 2);
	statsd_event_write_string_list(&ev, strs, 2);
	statsd_event_write_int32_list(&ev, i32s, 2);
	statsd_event_add_bool_annotation(&ev, STATSD_ANN_IS_UID, true);
	statsd_event_build(&ev);
	UT_ASSERT(st_bytes_eq(ev.buf, ev.len,
		"070701080706050403020100ac0300000200000000030101ffffffffffffffff0302050100030202"
		"0100000061000000001302000500000006000000010501"));
}

UT_TEST(statsd_example_6_5_chain_and_bytes)
{
	struct statsd_event ev;
	const uint32_t uids[] = { 1000 };
	const char *const tags[] = { "x" };
	const int32_t i32s[] = { 1, 2 };
	const uint8_t bytes[] = { 0xaa, 0xbb };

	statsd_event_init(&ev, TS);
	statsd_event_set_atom_id(&ev, 100);
	statsd_event_write_attribution_chain(&ev, uids, tags, 1);
	statsd_event_write_int32_list(&ev, i32s, 2);
	statsd_event_write_bytes(&ev, bytes, 2);
	statsd_event_build(&ev);
	UT_ASSERT(st_bytes_eq(ev.buf, ev.len,
		"070501080706050403020100640000000901e8030000010000007803020001000000020000000602"
		"000000aabb"));
}

UT_TEST(statsd_example_6_5_error_event_no_atom_id)
{
	struct statsd_event ev;

	statsd_event_init(&ev, TS);
	statsd_event_write_int32(&ev, 1); /* no set_atom_id: lands in the id slot */
	statsd_event_build(&ev);
	UT_EQ_INT(ev.errors, STATSD_ERR_NO_ATOM_ID);
	UT_ASSERT(st_bytes_eq(ev.buf, ev.len, "070301080706050403020100010000000f02000000"));
}

UT_TEST(statsd_example_6_5_loss_atom_752)
{
	struct statsd_event ev;
	const int32_t errs[] = { -11 }, tags[] = { 940 }, counts[] = { 3 };

	statsd_event_init(&ev, TS);
	statsd_event_set_atom_id(&ev, 752);
	statsd_event_write_int32(&ev, 10123);
	statsd_event_add_bool_annotation(&ev, STATSD_ANN_IS_UID, true);
	statsd_event_write_int64(&ev, 1000);
	statsd_event_write_int64(&ev, 2000);
	statsd_event_write_int32(&ev, 0);
	statsd_event_write_int32_list(&ev, errs, 1);
	statsd_event_write_int32_list(&ev, tags, 1);
	statsd_event_write_int32_list(&ev, counts, 1);
	UT_EQ_INT(statsd_event_build(&ev), 68);
	UT_ASSERT(st_bytes_eq(ev.buf, ev.len,
		"070901080706050403020100f0020000108b27000001050101e80300000000000001d00700000000"
		"00000000000000030100f5ffffff030100ac03000003010003000000"));
}

UT_TEST(statsd_drop_datagram_example_4_1)
{
	uint8_t dg[STATSD_DROP_LEN];
	struct timespec rt = { .tv_sec = 1700000000, .tv_nsec = 123456789 };

	statsd_drop_datagram(dg, 0x1234, rt, -11, 940, 3);
	UT_ASSERT(st_bytes_eq(dg, sizeof(dg),
			      "05 34 12 00 f1 53 65 15 cd 5b 07 f5 ff ff ff 01 03 00 00 00 ac 03 00 00"));
}

/* A single string of 4043 bytes gives exactly 4064; 4044 overflows. */
UT_TEST(statsd_push_limit_4064_and_error_event)
{
	static char big[4100];
	struct statsd_event ev;
	struct sd_datagram d;
	char why[200];

	memset(big, 'x', sizeof(big));
	statsd_event_init(&ev, TS);
	statsd_event_set_atom_id(&ev, 940);
	statsd_event_write_string(&ev, big, 4043);
	UT_EQ_INT(statsd_event_build(&ev), 4064);
	UT_EQ_INT(ev.errors, 0);
	UT_EQ_INT(sd_decode_event(ev.buf, ev.len, &d, why, sizeof(why)), 0);
	UT_EQ_INT(d.fields[0].len, 4043);

	statsd_event_init(&ev, TS);
	statsd_event_set_atom_id(&ev, 940);
	statsd_event_write_string(&ev, big, 4044);
	UT_EQ_INT(statsd_event_build(&ev), 21);
	UT_EQ_INT(ev.errors, STATSD_ERR_OVERFLOW);
	UT_ASSERT(st_bytes_eq(ev.buf, ev.len, "070301080706050403020100ac0300000f04000000"));
	/* statsd rejects the error event: it counts an error for atom 940. */
	UT_EQ_INT(sd_decode_event(ev.buf, ev.len, &d, why, sizeof(why)), -1);
	UT_CONTAINS(why, "type 0xf not allowed");
}

UT_TEST(statsd_overflow_keeps_later_fields_out_and_annotations_safe)
{
	static char big[5000];
	struct statsd_event ev;

	memset(big, 'y', sizeof(big));
	statsd_event_init(&ev, TS);
	statsd_event_set_atom_id(&ev, 940);
	statsd_event_add_bool_annotation(&ev, STATSD_ANN_TRUNCATE_TIMESTAMP, true);
	statsd_event_write_string(&ev, big, sizeof(big));
	statsd_event_write_int32(&ev, 1);
	statsd_event_add_bool_annotation(&ev, STATSD_ANN_IS_UID, true);
	statsd_event_build(&ev);
	/* atom-level annotation nibble cleared, fields gone, OVERFLOW set */
	UT_ASSERT(st_bytes_eq(ev.buf, ev.len, "070301080706050403020100ac0300000f04000000"));
}

UT_TEST(statsd_builder_error_rules)
{
	struct statsd_event ev;
	static int32_t many[128];

	/* annotation before the atom id */
	statsd_event_init(&ev, TS);
	statsd_event_add_bool_annotation(&ev, STATSD_ANN_IS_UID, true);
	statsd_event_set_atom_id(&ev, 5);
	statsd_event_build(&ev);
	UT_EQ_INT(ev.errors, STATSD_ERR_ANNOTATION_DOES_NOT_FOLLOW_FIELD);

	/* atom id after a field; id > 127; 16 annotations; 128-long list */
	statsd_event_init(&ev, TS);
	statsd_event_write_int32(&ev, 9);
	statsd_event_set_atom_id(&ev, 5);
	UT_EQ_INT(ev.errors, STATSD_ERR_ATOM_ID_INVALID_POSITION);
	statsd_event_init(&ev, TS);
	statsd_event_set_atom_id(&ev, 5);
	statsd_event_write_int32(&ev, 9);
	statsd_event_add_bool_annotation(&ev, 200, true);
	UT_EQ_INT(ev.errors, STATSD_ERR_ANNOTATION_ID_TOO_LARGE);
	statsd_event_init(&ev, TS);
	statsd_event_set_atom_id(&ev, 5);
	statsd_event_write_int32(&ev, 9);
	for (int i = 0; i < 16; i++)
		statsd_event_add_bool_annotation(&ev, STATSD_ANN_PRIMARY_FIELD, true);
	UT_EQ_INT(ev.errors, STATSD_ERR_TOO_MANY_ANNOTATIONS);
	statsd_event_init(&ev, TS);
	statsd_event_set_atom_id(&ev, 5);
	statsd_event_write_int32_list(&ev, many, 128);
	UT_EQ_INT(ev.errors, STATSD_ERR_LIST_TOO_LONG);
	statsd_event_write_int32_list(&ev, many, 127); /* fits 4064: 127*4 */
	UT_EQ_INT(statsd_event_build(&ev), 21);

	/* 126 fields = 128 elements: TOO_MANY_FIELDS */
	statsd_event_init(&ev, TS);
	statsd_event_set_atom_id(&ev, 5);
	for (int i = 0; i < 126; i++)
		statsd_event_write_bool(&ev, true);
	statsd_event_build(&ev);
	UT_EQ_INT(ev.errors, STATSD_ERR_TOO_MANY_FIELDS);
	/* 125 fields are fine */
	statsd_event_init(&ev, TS);
	statsd_event_set_atom_id(&ev, 5);
	for (int i = 0; i < 125; i++)
		statsd_event_write_bool(&ev, i & 1);
	statsd_event_build(&ev);
	UT_EQ_INT(ev.errors, 0);
	UT_EQ_INT(ev.buf[1], 127);
}

UT_TEST(statsd_strings_stop_at_nul_and_null_is_empty)
{
	struct statsd_event ev;

	statsd_event_init(&ev, TS);
	statsd_event_set_atom_id(&ev, 940);
	statsd_event_write_string(&ev, "ab\0cd", 5);
	statsd_event_write_string(&ev, NULL, 7);
	statsd_event_write_bytes(&ev, NULL, 3);
	statsd_event_build(&ev);
	UT_ASSERT(st_bytes_eq(ev.buf, ev.len,
			      "070501080706050403020100ac030000 02020000006162 0200000000 0600000000"));
}

UT_TEST(statsd_atom_types_decode_as_written)
{
	const int32_t l32[] = { 7, -7 };
	const int64_t l64[] = { 1ll << 40 };
	struct field f[] = {
		{ .name = "u", .type = FIELD_UINT64, .v.u64 = 0xfffffffffffffffeull },
		{ .name = "b", .type = FIELD_BYTES, .v.str = { "\x00\x01", 2 } },
		{ .name = "f", .type = FIELD_FLOAT, .v.f = -0.25f },
		{ .name = "l", .type = FIELD_INT32_LIST, .v.i32s = { l32, 2 } },
		{ .name = "m", .type = FIELD_INT64_LIST, .v.i64s = { l64, 1 } },
		{ .name = "uid", .type = FIELD_INT32, .v.i32 = 10001 },
	};
	const bool is_uid[] = { false, false, false, true, false, true };
	struct atom a = { .atom_id = 915, .boot_ns = 42, .fields = f, .n_fields = 6,
			  .is_uid = is_uid };
	struct statsd_event ev;
	struct sd_datagram d;
	char why[200] = "";

	UT_EQ_INT(statsd_encode_atom(&ev, &a), 0);
	UT_EQ_INT(sd_decode_event(ev.buf, ev.len, &d, why, sizeof(why)), 0);
	UT_EQ_INT(d.atom_id, 915);
	UT_EQ_U64(d.timestamp_ns, 42);
	UT_EQ_INT(d.n_fields, 6);
	UT_EQ_INT(d.fields[0].type, STATSD_INT64);
	UT_EQ_U64(d.fields[0].i64, 0xfffffffffffffffeull);
	UT_EQ_INT(d.fields[1].type, STATSD_BYTE_ARRAY);
	UT_EQ_INT(d.fields[1].len, 2);
	UT_ASSERT(d.fields[2].f32 == -0.25f);
	UT_EQ_INT(d.fields[3].count, 2);
	UT_EQ_INT(sd_list_int(&d.fields[3], 1), -7);
	UT_EQ_INT(d.fields[3].n_ann, 1);
	UT_EQ_INT(d.fields[3].ann[0].id, STATSD_ANN_IS_UID);
	UT_EQ_INT(sd_list_int(&d.fields[4], 0), 1ll << 40);
	UT_EQ_INT(d.fields[5].i64, 10001);
	UT_EQ_INT(d.fields[5].n_ann, 1);
}

/* Upstream's self-metrics as we send them (cli/self_atoms.h): byte for byte. */
UT_TEST(statsd_self_metric_attached_and_error_atoms)
{
	struct attached_atom aa;
	struct error_atom ea;
	struct statsd_event ev;

	UT_EQ_INT(statsd_encode_atom(&ev, statsd_attached_atom(&aa, 100002, 5, "a.B", "m",
								"system_server", 7, TS)), 0);
	UT_ASSERT(st_bytes_eq(ev.buf, ev.len,
			      "07 07 01 0807060504030201 00 a2860100"
			      "00 05000000"
			      "02 03000000 612e42"
			      "02 01000000 6d"
			      "02 0d000000 73797374656d5f736572766572"
			      "01 0700000000000000"));
	/* absent strings are empty strings, not skipped fields */
	UT_EQ_INT(statsd_encode_atom(&ev, statsd_attached_atom(&aa, 100002, 0, NULL, "f", NULL,
								-1, TS)), 0);
	UT_ASSERT(st_bytes_eq(ev.buf, ev.len,
			      "07 07 01 0807060504030201 00 a2860100 00 00000000 02 00000000"
			      "02 01000000 66 02 00000000 01 ffffffffffffffff"));
	UT_EQ_INT(statsd_encode_atom(&ev, statsd_error_atom(&ea, 100003, 3, 7, 0, 0, 1, TS)), 0);
	UT_ASSERT(st_bytes_eq(ev.buf, ev.len,
			      "07 07 01 0807060504030201 00 a3860100"
			      "00 03000000 01 0700000000000000 00 00000000 00 00000000"
			      "01 0100000000000000"));
}

/* A string with invalid UTF-8 goes to statsd as every output shows it:
 * each bad byte one U+FFFD, so "bad\xff\xfeutf8" keeps its length in
 * characters and differs from "bad" (the rule of docs/json-schema.md). */
UT_TEST(statsd_string_invalid_utf8_each_bad_byte_is_ufffd)
{
	struct statsd_event ev;

	statsd_event_init(&ev, TS);
	statsd_event_set_atom_id(&ev, 940);
	statsd_event_write_string(&ev, "b\xff\xfe" "c\xc3\xa9", 6);
	UT_EQ_INT(statsd_event_build(&ev), 16 + 1 + 4 + 10);
	/* the string field: type 0x02, length 10, b EFBFBD EFBFBD c C3A9 */
	UT_ASSERT(st_bytes_eq(ev.buf + 16, ev.len - 16, "020a00000062efbfbdefbfbd63c3a9"));
}
