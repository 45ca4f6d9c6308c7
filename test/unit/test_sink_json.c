/* JSON writer escaping, the JSON Lines records against docs/event.schema.json,
 * and the text lines. */
#include "ut.h"

#include <stdlib.h>

#include "sink/json_out.h"
#include "sink/jsonl_out.h"
#include "sink/text_out.h"
#include "sink_testutil.h"

static const struct probe_desc probe_a = {
	.task_index = 0, .task_id = 7, .probe_index = 1,
	.program = "prog_ProcessManagement_uprobe_set_uid_temp_allowlist_state",
	.map = "map_ProcessManagement_output_buf",
	.file = "/system/framework/oat/arm64/services.odex",
	.method = "void com.android.server.am.OomAdjuster.setUidTempAllowlistStateLSP(int, boolean)",
	.offset = 0x1a2b3c,
};

static void escaped(const char *in, size_t n, const char *want)
{
	struct capture c;
	struct outbuf o;
	struct json_out j;

	cap_open(&c);
	UT_EQ_INT(outbuf_init(&o, c.f, 64, "test", NULL), 0);
	json_init(&j, &o);
	json_string(&j, in, n);
	outbuf_flush(&o);
	outbuf_free(&o);
	UT_EQ_STR(cap_text(&c), want);
	struct jc_doc d;
	UT_EQ_INT(jc_parse(&d, c.buf, c.len), 0);
	jc_free(&d);
	cap_free(&c);
}

UT_TEST(json_escapes_controls_quotes_and_bad_utf8)
{
	escaped("a\"b\\c", 5, "\"a\\\"b\\\\c\"");
	escaped("\n\r\t\b\f\x01\x1f\x7f", 8, "\"\\n\\r\\t\\b\\f\\u0001\\u001f\x7f\"");
	escaped("nul\0x", 5, "\"nul\\u0000x\"");
	escaped("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9, "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
	escaped("\xff", 1, "\"\\ufffd\"");
	escaped("\xc0\x80", 2, "\"\\ufffd\\ufffd\"");             /* overlong NUL */
	escaped("\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"");    /* surrogate */
	escaped("\xe2\x82", 2, "\"\\ufffd\\ufffd\"");              /* truncated */
	escaped("\xf4\x90\x80\x80", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* > U+10FFFF */
	escaped("\xe2\x80\xa8|\xe2\x80\xa9", 7, "\"\\u2028|\\u2029\"");
}

UT_TEST(json_writer_nests_and_separates)
{
	struct capture c;
	struct outbuf o;
	struct json_out j;

	cap_open(&c);
	UT_EQ_INT(outbuf_init(&o, c.f, 16, "test", NULL), 0); /* tiny: forces drains */
	json_init(&j, &o);
	json_object_begin(&j);
	json_key(&j, "a");
	json_array_begin(&j);
	json_i64(&j, -9223372036854775807ll - 1);
	json_u64(&j, 18446744073709551615ull);
	json_double(&j, 0.5);
	json_double(&j, 1.0 / 0.0);
	json_object_begin(&j);
	json_object_end(&j);
	json_array_end(&j);
	json_key(&j, "h");
	json_hex(&j, 0xdeadbeef);
	json_key(&j, "b");
	json_hexbytes(&j, (const uint8_t *)"\x00\xff", 2);
	json_object_end(&j);
	json_newline(&j);
	json_array_begin(&j);
	json_array_end(&j);
	outbuf_flush(&o);
	outbuf_free(&o);
	UT_EQ_STR(cap_text(&c), "{\"a\":[-9223372036854775808,18446744073709551615,0.5,null,{}],"
				"\"h\":\"0xdeadbeef\",\"b\":\"00ff\"}\n[]");
	cap_free(&c);
}

/* One of each record kind, every field type. */
static void write_sample(struct jsonl_out *s)
{
	static const int32_t l32[] = { 1, -2 };
	static const int64_t l64[] = { 1ll << 40 };
	const struct field f[] = {
		{ .name = "uid", .type = FIELD_INT32, .v.i32 = 10001 },
		{ .name = "onAllowlist", .type = FIELD_BOOL, .v.b = true },
		{ .name = "x2", .type = FIELD_UINT64, .v.u64 = 0xffffffff80000000ull },
		{ .name = "dur", .type = FIELD_INT64, .v.i64 = -5 },
		{ .name = "reason", .type = FIELD_STRING, .v.str = { "bad\xff\"q\"\n", 8 } },
		{ .name = "raw", .type = FIELD_BYTES, .v.str = { "\x01\xab", 2 } },
		{ .name = "f", .type = FIELD_FLOAT, .v.f = 1.5f },
		{ .name = "codes", .type = FIELD_INT32_LIST, .v.i32s = { l32, 2 } },
		{ .name = "times", .type = FIELD_INT64_LIST, .v.i64s = { l64, 1 } },
	};
	struct event ev = {
		.kind = EVENT_RECORD, .boot_ns = 12000000345ull, .wall_ns = 1700000000123456789ll,
		.pid = 1234, .tid = 1240, .comm = "binder:1234_2", .process = "system_server",
		.probe = &probe_a, .fields = f, .n_fields = sizeof(f) / sizeof(f[0]),
	};
	jsonl_event(s, &ev);
	ev.kind = EVENT_RETURN;
	ev.duration_ns = 4500;
	ev.n_fields = 1;
	jsonl_event(s, &ev);
	struct event drop = { .kind = EVENT_DROP, .boot_ns = 13000000000ull, .probe = &probe_a,
			      .n_lost = 12 };
	jsonl_event(s, &drop);
	struct event lost = { .kind = EVENT_LOST, .boot_ns = 13000000001ull, .n_lost = 3 };
	jsonl_event(s, &lost);
}

UT_TEST(jsonl_records_match_the_schema)
{
	struct jc_doc schema;
	struct capture c;
	struct jsonl_out s;
	char why[512] = "";

	UT_EQ_INT(load_schema(&schema), 0);
	cap_open(&c);
	UT_EQ_INT(jsonl_open(&s, c.f, NULL), 0);
	write_sample(&s);
	jsonl_close(&s);
	const char *text = cap_text(&c);
	int n = validate_lines(&schema, text, why, sizeof(why));
	if (n < 0)
		ut_fail(__FILE__, __LINE__, "%s", why);
	UT_EQ_INT(n, 4);
	UT_CONTAINS(text, "{\"type\":\"event\",\"boot_ns\":12000000345,\"wall_ns\":1700000000123456789,"
			  "\"wall\":\"2023-11-14T22:13:20.123456789Z\",\"pid\":1234,\"tid\":1240,"
			  "\"comm\":\"binder:1234_2\",\"process\":\"system_server\",\"task_id\":7,"
			  "\"task_index\":0,\"probe_index\":1,\"probe\":{\"file\":\"/system/"
			  "framework/oat/arm64/services.odex\",\"method\":\"void com.android.server."
			  "am.OomAdjuster.setUidTempAllowlistStateLSP(int, boolean)\",\"offset\":"
			  "\"0x1a2b3c\"},\"program\":\"prog_ProcessManagement_uprobe_set_uid_temp_"
			  "allowlist_state\",\"map\":\"map_ProcessManagement_output_buf\",\"fields\":"
			  "{\"uid\":10001,\"onAllowlist\":true,\"x2\":\"0xffffffff80000000\",\"dur\":-5,"
			  "\"reason\":\"bad\\ufffd\\\"q\\\"\\n\",\"raw\":\"01ab\",\"f\":1.5,\"codes\":"
			  "[1,-2],\"times\":[1099511627776]}}\n");
	UT_CONTAINS(text, "\"type\":\"return\"");
	UT_CONTAINS(text, "\"duration_ns\":4500,\"fields\":{\"uid\":10001}}");
	UT_CONTAINS(text, "{\"type\":\"drop\",\"boot_ns\":13000000000,\"wall_ns\":0,\"wall\":null");
	UT_CONTAINS(text, "\"count\":12,\"fields\":{}}");
	UT_CONTAINS(text, "\"type\":\"lost\"");
	UT_CONTAINS(text, "\"probe\":null,\"program\":null,\"map\":null,\"count\":3");
	cap_free(&c);
	jc_free(&schema);
}

/* The validator is not a rubber stamp: each of these breaks the schema. */
UT_TEST(jsonl_schema_rejects_broken_records)
{
	static const char *const bad[] = {
		"{\"type\":\"event\"}",
		"{\"type\":\"nope\",\"boot_ns\":1}",
		"{\"type\":\"drop\",\"boot_ns\":-1,\"wall_ns\":0,\"wall\":null,\"pid\":0,\"tid\":0,"
		"\"comm\":null,\"process\":null,\"task_id\":null,\"task_index\":null,"
		"\"probe_index\":null,\"probe\":null,\"program\":null,\"map\":null,\"count\":1,"
		"\"fields\":{}}",
		"{\"type\":\"drop\",\"boot_ns\":1,\"wall_ns\":0,\"wall\":null,\"pid\":0,\"tid\":0,"
		"\"comm\":null,\"process\":null,\"task_id\":null,\"task_index\":null,"
		"\"probe_index\":null,\"probe\":null,\"program\":null,\"map\":null,\"count\":1,"
		"\"fields\":{},\"extra\":1}",
		"{\"type\":\"drop\",\"boot_ns\":1,\"wall_ns\":0,\"wall\":null,\"pid\":0,\"tid\":0,"
		"\"comm\":null,\"process\":null,\"task_id\":null,\"task_index\":null,"
		"\"probe_index\":null,\"probe\":{\"file\":1},\"program\":null,\"map\":null,"
		"\"count\":1,\"fields\":{}}",
	};
	struct jc_doc schema;
	char why[256];

	UT_EQ_INT(load_schema(&schema), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		UT_EQ_INT(validate_lines(&schema, bad[i], why, sizeof(why)), -1);
	jc_free(&schema);
}

UT_TEST(text_lines_are_aligned)
{
	struct capture c;
	struct text_out t;
	const struct field f[] = {
		{ .name = "uid", .type = FIELD_INT32, .v.i32 = 10001 },
		{ .name = "reason", .type = FIELD_STRING, .v.str = { "a\"b\n\xff", 5 } },
		{ .name = "r", .type = FIELD_UINT64, .v.u64 = 0x10 },
	};
	struct event ev = { .kind = EVENT_RECORD, .boot_ns = 12000000345ull, .pid = 1234,
			    .tid = 1240, .comm = "system_server", .probe = &probe_a,
			    .fields = f, .n_fields = 3 };

	cap_open(&c);
	UT_EQ_INT(text_open(&t, c.f, NULL), 0);
	text_event(&t, &ev);
	ev.comm = "x";
	ev.pid = 7;
	ev.tid = 7;
	ev.boot_ns = 999123456789000ull;
	ev.kind = EVENT_RETURN;
	ev.duration_ns = 1234567;
	ev.n_fields = 0;
	text_event(&t, &ev);
	struct event drop = { .kind = EVENT_DROP, .boot_ns = 13000000000ull, .n_lost = 12,
			      .probe = &probe_a };
	text_event(&t, &drop);
	text_close(&t);
	const char *out = cap_text(&c);
	UT_EQ_STR(out,
		  "#         BOOT_S     PID     TID COMM             PROBE                    "
		  "                FIELDS\n"
		  "    12.000000345    1234    1240 system_server    OomAdjuster.setUidTempAllo"
		  "wlistStateLSP  uid=10001 reason=\"a\\\"b\\n\\xff\" r=0x10\n"
		  "999123.456789000       7       7 x                OomAdjuster.setUidTempAllo"
		  "wlistStateLSP  <- dur=1.234567ms\n"
		  "    13.000000000       -       - -                DROP OomAdjuster.setUidTem"
		  "pAllowlistStateLSP lost=12 (kernel ring buffer full)\n");
	cap_free(&c);
}

UT_TEST(text_durations_pick_a_unit)
{
	struct capture c;
	struct outbuf o;

	cap_open(&c);
	UT_EQ_INT(outbuf_init(&o, c.f, 0, "t", NULL), 0);
	text_duration(&o, 850);
	outbuf_putc(&o, ' ');
	text_duration(&o, 12345);
	outbuf_putc(&o, ' ');
	text_duration(&o, 2000000001);
	outbuf_flush(&o);
	outbuf_free(&o);
	UT_EQ_STR(cap_text(&c), "850ns 12.345us 2.000000001s");
	cap_free(&c);
}
