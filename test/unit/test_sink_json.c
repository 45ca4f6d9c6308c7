/* JSON writer escaping, the JSON Lines records against docs/event.schema.json,
 * and the text lines. */
#include "ut.h"

#include <stdlib.h>
#include <string.h>

#include "sink/jsonl_out.h"
#include "sink/text_out.h"
#include "sink_testutil.h"
#include "stack/unwind.h"
#include "vocab/json_out.h"

static const struct probe_desc probe_a = {
	.task_index = 0, .task_id = 7, .probe_index = 1,
	.program = "prog_ProcessManagement_uprobe_set_uid_temp_allowlist_state",
	.map = "map_ProcessManagement_output_buf",
	.file = "/system/framework/oat/arm64/services.odex",
	.method = "void com.android.server.am.OomAdjuster."
		  "setUidTempAllowlistStateLSP(int, boolean)",
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

/* ---- the per-event writer against the generic one ------------------------ */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Bytes that exercise every escaping rule: ASCII, controls, quotes, valid
 * 2/3/4-byte UTF-8, U+2028, and broken sequences. */
static size_t random_text(char *out, size_t cap)
{
	static const char *const pieces[] = {
		"a", "Zz09", " ", "\"", "\\", "\n", "\x01", "\x1f", "\x7f", "\0",
		"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xe2\x80\xa8", "\xe2\x80\xa9",
		"\xff", "\xc0\x80", "\xed\xa0\x80", "\xe2\x82", "\x80", "\xf4\x90\x80\x80",
	};
	static const size_t lens[] = {
		1, 4, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3, 4, 3, 3, 1, 2, 3, 2, 1, 4,
	};
	size_t n = 0, want = cap >= 2 ? rng() % (cap / 2) : 0;

	while (n < want) {
		size_t k = rng() % (sizeof(lens) / sizeof(lens[0]));
		if (n + lens[k] > cap)
			break;
		memcpy(out + n, pieces[k], lens[k]);
		n += lens[k];
	}
	return n;
}

static const int64_t edge_i64[] = { 0, 1, -1, 9, 10, 99, 100, 12345678901234ll,
				    9223372036854775807ll, -9223372036854775807ll - 1 };
static const uint64_t edge_u64[] = { 0, 1, 15, 16, 255, 0x1000, 0xffffffffull,
				     0x8000000000000000ull, 18446744073709551615ull };

static void random_field(struct field *f, char *text, size_t text_cap, int32_t *l32,
			 int64_t *l64)
{
	static const char *const names[] = {
		"pc", "r0", "uid", "reason", "na\"me", "\xc3\xa9t\xc3\xa9",
	};
	static const float floats[] = { 0.0f, 1.5f, -2.25e-10f, 3.4e38f, 1.0f / 0.0f, 0.0f / 0.0f };
	uint32_t n;

	memset(f, 0, sizeof(*f));
	f->name = rng() % 9 ? names[rng() % 6] : NULL;
	f->type = (enum field_type)(rng() % 10); /* 9: not a type: written as null */
	switch (f->type) {
	case FIELD_INT32: f->v.i32 = (int32_t)edge_i64[rng() % 10]; break;
	case FIELD_INT64: f->v.i64 = rng() % 2 ? edge_i64[rng() % 10] : (int64_t)rng(); break;
	case FIELD_UINT64:
		f->v.u64 = rng() % 2 ? edge_u64[rng() % 9] : rng() >> (rng() % 64);
		break;
	case FIELD_BOOL: f->v.b = rng() % 2; break;
	case FIELD_FLOAT: f->v.f = floats[rng() % 6]; break;
	case FIELD_STRING:
	case FIELD_BYTES:
		f->v.str.len = (uint32_t)random_text(text, text_cap);
		f->v.str.ptr = rng() % 8 ? text : NULL;
		break;
	case FIELD_INT32_LIST:
		n = (uint32_t)(rng() % 5);
		for (uint32_t i = 0; i < n; i++)
			l32[i] = (int32_t)edge_i64[rng() % 10];
		f->v.i32s.ptr = l32;
		f->v.i32s.n = n;
		break;
	case FIELD_INT64_LIST:
		n = (uint32_t)(rng() % 5);
		for (uint32_t i = 0; i < n; i++)
			l64[i] = edge_i64[rng() % 10];
		f->v.i64s.ptr = l64;
		f->v.i64s.n = n;
		break;
	default: break;
	}
}

static void random_event(struct event *ev, struct field *f, char (*texts)[96], int32_t (*l32)[4],
			 int64_t (*l64)[4], char *comm, char *process)
{
	static const int64_t walls[] = { 0, -5, 1, 999999999, 1000000000, 1700000000123456789ll,
					 9223372036854775807ll - 3000000000ll };
	static const struct probe_desc odd_probe = {
		.task_id = -3, .task_index = 4294967295u, .probe_index = 2, .program = "p\"rog",
		.map = NULL, .file = "/data/\xff\n/x", .method = NULL, .offset = 0,
	};

	memset(ev, 0, sizeof(*ev));
	ev->kind = (enum event_kind)(rng() % 4);
	ev->boot_ns = rng() % 2 ? edge_u64[rng() % 9] : rng();
	ev->wall_ns = rng() % 3 ? walls[rng() % 7] + (int64_t)(rng() % 3000000000ull)
				: walls[rng() % 7];
	ev->pid = (uint32_t)rng();
	ev->tid = (uint32_t)(rng() % 100000);
	random_text(comm, 32);
	comm[rng() % 16] = '\0';
	ev->comm = rng() % 5 ? comm : NULL;
	process[random_text(process, 95)] = '\0';
	ev->process = rng() % 5 ? process : NULL;
	ev->probe = rng() % 3 ? &probe_a : rng() % 2 ? &odd_probe : NULL;
	ev->duration_ns = rng();
	ev->n_lost = rng();
	ev->n_fields = rng() % 12;
	for (size_t i = 0; i < ev->n_fields; i++)
		random_field(&f[i], texts[i], sizeof(texts[i]), l32[i], l64[i]);
	ev->fields = f;
}

/* A random call stack (--stack): kinds, symbols or none, files or none,
 * notes, dex pcs and lines, every string through the escaping rules. */
static void random_stack(struct stack_trace *st, char (*strs)[3][64])
{
	static const char *const ends[] = { "outermost frame", "stack slice ends", NULL };

	st->n = rng() % 6;
	st->end = ends[rng() % 3];
	for (size_t i = 0; i < st->n; i++) {
		struct stack_frame *f = &st->frames[i];
		for (int k = 0; k < 3; k++)
			strs[i][k][random_text(strs[i][k], 63)] = '\0';
		*f = (struct stack_frame){
			.pc = rng(), .kind = (enum frame_kind)(rng() % 5), .offset = rng() >> 20,
			.symbol = rng() % 3 ? strs[i][0] : NULL, .symbol_off = rng() % 4096,
			.file = rng() % 4 ? strs[i][1] : NULL,
			.dex_pc = rng() % 2 ? (uint32_t)(rng() % 70000) : UINT32_MAX,
			.line = rng() % 2 ? (int32_t)(rng() % 5000) : 0,
			.note = rng() % 3 ? NULL : strs[i][2],
		};
	}
}

UT_TEST(jsonl_per_event_writer_matches_the_generic_writer)
{
	struct capture fast, ref;
	struct jsonl_out a, b;
	struct field f[12];
	char texts[12][96], comm[33], process[96];
	int32_t l32[12][4];
	int64_t l64[12][4];

	cap_open(&fast);
	cap_open(&ref);
	UT_EQ_INT(jsonl_open(&a, fast.f, NULL), 0);
	UT_EQ_INT(jsonl_open(&b, ref.f, NULL), 0);
	static struct stack_trace st;
	static char strs[UNWIND_MAX_FRAMES][3][64];

	for (int i = 0; i < 20000; i++) {
		struct event ev;
		random_event(&ev, f, texts, l32, l64, comm, process);
		if (rng() % 3 == 0) {
			random_stack(&st, strs);
			ev.stack = &st;
		}
		jsonl_event(&a, &ev);
		jsonl_event_generic(&b, &ev);
	}
	jsonl_close(&a);
	jsonl_close(&b);
	const char *x = cap_text(&fast), *y = cap_text(&ref);
	size_t at = 0;
	while (x[at] && x[at] == y[at])
		at++;
	if (x[at] != y[at])
		ut_fail(__FILE__, __LINE__,
			"outputs differ at byte %zu: fast '%.80s' generic '%.80s'",
			at, x + (at > 40 ? at - 40 : 0), y + (at > 40 ? at - 40 : 0));
	UT_ASSERT(fast.len > 1000000);
	cap_free(&fast);
	cap_free(&ref);
}

UT_TEST(jsonl_lines_longer_than_half_the_buffer_are_streamed)
{
	struct capture c;
	struct jsonl_out s;
	size_t n = 200 * 1024;
	char *big = malloc(n);
	struct field f = { .name = "s", .type = FIELD_STRING };
	struct event ev = { .kind = EVENT_RECORD, .probe = &probe_a, .fields = &f, .n_fields = 1 };

	UT_ASSERT(big != NULL);
	for (size_t i = 0; i < n; i++)
		big[i] = i % 1000 == 999 ? '\n' : 'a' + (char)(i % 26);
	f.v.str.ptr = big;
	f.v.str.len = (uint32_t)n;
	cap_open(&c);
	UT_EQ_INT(jsonl_open(&s, c.f, NULL), 0);
	jsonl_event(&s, &ev);
	jsonl_event(&s, &ev);
	jsonl_close(&s);
	struct jc_doc d;
	const char *text = cap_text(&c);
	const char *nl = strchr(text, '\n');
	UT_ASSERT(nl != NULL);
	UT_EQ_INT(jc_parse(&d, text, (size_t)(nl - text)), 0);
	jc_free(&d);
	UT_EQ_INT((long long)c.len, 2 * (long long)(nl - text + 1));
	cap_free(&c);
	free(big);
}

UT_TEST(json_escape_in_chunks_matches_one_pass)
{
	for (int round = 0; round < 200; round++) {
		size_t cap = 1 + rng() % 3000;
		char *in = malloc(cap), *want = malloc(JSON_ESCAPE_MAX(cap) + 1);
		size_t n;
		struct capture c;
		struct outbuf o;

		UT_ASSERT(in && want);
		n = random_text(in, cap) * 2 <= cap ? random_text(in, cap) : 0;
		*json_escape_into(want, in, n) = '\0';
		cap_open(&c);
		UT_EQ_INT(outbuf_init(&o, c.f, round % 2 ? 16 : 0, "test", NULL), 0);
		json_escape(&o, in, n);
		outbuf_flush(&o);
		outbuf_free(&o);
		UT_EQ_STR(cap_text(&c), want);
		cap_free(&c);
		free(in);
		free(want);
	}
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
	UT_EQ_INT(text_open(&t, c.f, true, NULL), 0);
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
