/* Unit tests: the binary wire reader, era detection, and the encoder. */
#include "ut.h"

#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "config/config.h"
#include "config/encode.h"
#include "config/load.h"
#include "config/model.h"
#include "config/protobuf.h"
#include "config/schema.h"
#include "config/textdump.h"
#include "common/wire.h"
#include "config_testdata.h"

static int load_bin(const char *bytes, size_t n, enum config_era era,
		    struct uprobestats_config **cfg, struct err *e)
{
	struct config_load_opts o = { .format = CONFIG_FORMAT_BINARY, .era = era };

	err_clear(e);
	return config_load_buffer("t.bin", bytes, n, &o, cfg, e);
}

/* An era-B config, as CalyxOS' statsd would have pushed it:
 * tasks { probe_configs { bpf_name "p" file_paths "/f"
 *                         method_signature "void a.B.c()" bpf_map "map_x" }
 *         target_process_name "system_server" duration_seconds 60
 *         statsd_logging_config { atom_id 71 primitive_argument_positions 0, 2 } } */
static const char era_b_bytes[] =
	"\x0a\x37"                                  /* tasks, 55 bytes */
	"\x0a\x1c"                                  /*  probe_configs, 28 bytes */
	"\x0a\x01p"                                 /*   1 bpf_name */
	"\x12\x02/f"                                /*   2 file_paths */
	"\x1a\x0cvoid a.B.c()"                      /*   3 method_signature */
	"\x22\x05map_x"                             /*   4 bpf_map (era B) */
	"\x12\x0dsystem_server"                     /*  2 target_process_name (era B) */
	"\x18\x3c"                                  /*  3 duration_seconds = 60 (era B) */
	"\x2a\x06\x08\x47\x10\x00\x10\x02";         /*  5 statsd {atom 71, positions 0, 2} */

UT_TEST(config_binary_detects_era_b)
{
	struct uprobestats_config *cfg = NULL;
	struct err e;

	UT_EQ_INT(load_bin(era_b_bytes, sizeof(era_b_bytes) - 1, CONFIG_ERA_AUTO, &cfg, &e), 0);
	UT_EQ_INT(cfg->era, CONFIG_ERA_B);
	UT_CONTAINS(cfg->era_reason, "era-B");
	const struct task_config *t = &cfg->tasks[0];
	UT_EQ_STR(t->target_process_name, "system_server");
	UT_ASSERT(t->has_duration_seconds);
	UT_EQ_INT(t->duration_seconds, 60);
	UT_EQ_INT(t->duration_seconds_loc.kind, SRC_LOC_BINARY);
	UT_EQ_INT(t->duration_seconds_loc.offset, 0x2f);
	UT_EQ_STR(t->probes[0].bpf_map, "map_x");
	UT_ASSERT(t->probes[0].fully_qualified_class_name == NULL);
	UT_EQ_STR(t->probes[0].method_signature, "void a.B.c()");
	UT_EQ_INT(t->statsd.atom_id, 71);
	UT_EQ_INT(t->statsd.primitive_argument_positions.n, 2);
	UT_EQ_INT(t->statsd.primitive_argument_positions.v[1], 2);
	config_free(cfg);
}

UT_TEST(config_binary_era_b_only_duration_is_detected)
{
	/* tasks { duration_seconds 5 } in era B: field 3 varint. */
	static const char b[] = "\x0a\x02\x18\x05";
	struct uprobestats_config *cfg = NULL;
	struct err e;

	UT_EQ_INT(load_bin(b, 4, CONFIG_ERA_AUTO, &cfg, &e), 0);
	UT_EQ_INT(cfg->era, CONFIG_ERA_B);
	UT_CONTAINS(cfg->era_reason, "Task field 3 is a varint");
	UT_EQ_INT(cfg->tasks[0].duration_seconds, 5);
	config_free(cfg);
}

UT_TEST(config_binary_forced_current_on_era_b_names_offset)
{
	struct uprobestats_config *cfg = NULL;
	struct err e;

	UT_EQ_INT(load_bin(era_b_bytes, sizeof(era_b_bytes) - 1, CONFIG_ERA_CURRENT, &cfg, &e),
		  CONFIG_EERA);
	UT_ASSERT(!cfg);
	UT_CONTAINS(e.msg, "t.bin+0x2f: Task field 3 (target_process_name in the current era) "
			   "has wire type varint, expected length-delimited");
	UT_CONTAINS(e.msg, "--config-era");
}

UT_TEST(config_binary_forced_b_reads_field_4_as_bpf_map)
{
	/* tasks { probe_configs { fully_qualified_class_name "a.B" } } read as era B. */
	static const char b[] = "\x0a\x07\x0a\x05\x22\x03" "a.B";
	struct uprobestats_config *cfg = NULL;
	struct err e;

	UT_EQ_INT(load_bin(b, sizeof(b) - 1, CONFIG_ERA_B, &cfg, &e), 0);
	UT_EQ_STR(cfg->tasks[0].probes[0].bpf_map, "a.B");
	UT_CONTAINS(cfg->era_reason, "forced");
	config_free(cfg);
	UT_EQ_INT(load_bin(b, sizeof(b) - 1, CONFIG_ERA_AUTO, &cfg, &e), 0);
	UT_EQ_INT(cfg->era, CONFIG_ERA_CURRENT);
	UT_EQ_STR(cfg->tasks[0].probes[0].fully_qualified_class_name, "a.B");
	config_free(cfg);
}

UT_TEST(config_binary_packed_and_unpacked_positions)
{
	/* statsd { atom_id 915 positions [1, 3] packed, then 5 unpacked } */
	static const char b[] = "\x0a\x0b\x2a\x09\x08\x93\x07\x12\x02\x01\x03\x10\x05";
	struct uprobestats_config *cfg = NULL;
	struct err e;

	UT_EQ_INT(load_bin(b, sizeof(b) - 1, CONFIG_ERA_AUTO, &cfg, &e), 0);
	const struct statsd_logging_config *s = &cfg->tasks[0].statsd;
	UT_EQ_INT(s->atom_id, 915);
	UT_EQ_INT(s->primitive_argument_positions.n, 3);
	UT_EQ_INT(s->primitive_argument_positions.v[0], 1);
	UT_EQ_INT(s->primitive_argument_positions.v[1], 3);
	UT_EQ_INT(s->primitive_argument_positions.v[2], 5);
	UT_EQ_INT(s->primitive_argument_positions.loc[1].offset, 0xa);
	config_free(cfg);
}

UT_TEST(config_binary_skips_unknown_fields_of_every_wire_type)
{
	/* tasks { task_id 7, f99 varint, f98 fixed64, f97 fixed32, f96 bytes,
	 *         f95 group { f1 varint } } */
	static const char b[] =
		"\x0a\x20"
		"\x38\x07"
		"\x98\x06\x01"
		"\x91\x06\x01\x02\x03\x04\x05\x06\x07\x08"
		"\x8d\x06\x01\x02\x03\x04"
		"\x82\x06\x02hi"
		"\xfb\x05\x08\x01\xfc\x05";
	struct uprobestats_config *cfg = NULL;
	struct err e;

	UT_EQ_INT(load_bin(b, sizeof(b) - 1, CONFIG_ERA_CURRENT, &cfg, &e), 0);
	UT_EQ_INT(cfg->tasks[0].task_id, 7);
	UT_EQ_INT(cfg->n_unknown_fields, 5);
	config_free(cfg);
}

UT_TEST(config_binary_malformed_inputs_name_the_offset)
{
	static const struct {
		const char *bytes;
		size_t n;
		int code;
		const char *msg;
	} cases[] = {
		{ "\x0a\x05\x0a\x01", 4, CONFIG_EWIRE, "t.bin+0x0: tasks runs past the end" },
		{ "\x0a\x03\x0a\x05p", 5, CONFIG_EWIRE, "t.bin+0x2: probe_configs runs past" },
		{ "\x0a\x02\x20\xff", 4, CONFIG_EWIRE, "t.bin+0x3: duration_seconds runs past" },
		{ "\x0a\x0b\x20\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 13, CONFIG_EWIRE,
		  "varint longer than 10 bytes" },
		{ "\x00\x01", 2, CONFIG_EWIRE, "t.bin+0x0: invalid field number 0" },
		{ "\x0e", 1, CONFIG_EWIRE, "t.bin+0x0: invalid wire type 6 (field 1)" },
		{ "\x0c", 1, CONFIG_EWIRE, "end-group (field 1) without a start" },
		{ "\x0b\x08\x01", 3, CONFIG_EERA, "UprobestatsConfig field 1 (tasks" },
		{ "\xfb\x05\x08", 3, CONFIG_EWIRE, "group runs past the end" },
		{ "\x0a\x04\x0a\x02\x0a\x05", 6, CONFIG_EWIRE, "bpf_name runs past" },
		{ "\x0a\x05\x0a\x03\x0a\x01\x00", 7, CONFIG_EVALUE,
		  "t.bin+0x4: bpf_name holds a NUL" },
		{ "\x0a\x03\x2a\x01\x10", 5, CONFIG_EWIRE,
		  "primitive_argument_positions runs past" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct uprobestats_config *cfg = NULL;
		struct err e;
		int rc = load_bin(cases[i].bytes, cases[i].n, CONFIG_ERA_CURRENT, &cfg, &e);
		if (rc != cases[i].code || !strstr(e.msg, cases[i].msg)) {
			ut_fail(__FILE__, __LINE__, "case %zu: rc %d, \"%s\"", i, rc, e.msg);
			config_free(cfg);
			return;
		}
	}
}

UT_TEST(config_binary_every_prefix_of_an_encoding_is_handled)
{
	const size_t n = sizeof(era_b_bytes) - 1;

	for (size_t k = 0; k < n; k++) {
		struct uprobestats_config *cfg = NULL;
		struct err e;
		int rc = load_bin(era_b_bytes, k, CONFIG_ERA_AUTO, &cfg, &e);
		UT_ASSERT(rc == 0 || rc == CONFIG_EWIRE);
		if (rc)
			UT_CONTAINS(e.msg, "t.bin+0x");
		config_free(cfg);
	}
}

UT_TEST(config_binary_empty_input_is_an_empty_config)
{
	struct uprobestats_config *cfg = NULL;
	struct err e;

	UT_EQ_INT(load_bin("", 0, CONFIG_ERA_AUTO, &cfg, &e), 0);
	UT_EQ_INT(cfg->n_tasks, 0);
	UT_CONTAINS(cfg->era_reason, "no era-specific fields");
	config_free(cfg);
}

UT_TEST(config_binary_negative_int32_uses_ten_bytes_and_round_trips)
{
	static const char text[] = "tasks { duration_seconds: -1 task_id: -9223372036854775808 }";
	struct config_load_opts o = { .format = CONFIG_FORMAT_TEXT };
	struct uprobestats_config *a = NULL, *b = NULL;
	struct err e;
	uint8_t *bin;
	size_t len;

	UT_EQ_INT(config_load_buffer("t", text, sizeof(text) - 1, &o, &a, &e), 0);
	UT_EQ_INT(config_encode_binary(a, CONFIG_ERA_AUTO, &bin, &len, NULL, &e), 0);
	/* tag, len, (tag + 10) duration, (tag + 10) task_id */
	UT_EQ_INT(len, 2 + 11 + 11);
	UT_EQ_INT(load_bin((const char *)bin, len, CONFIG_ERA_AUTO, &b, &e), 0);
	UT_EQ_INT(b->tasks[0].duration_seconds, -1);
	UT_EQ_INT(b->tasks[0].task_id, INT64_MIN);
	free(bin);
	config_free(a);
	config_free(b);
}

/* Our exit_probes field (1003): unset, true and false all survive text ->
 * binary -> model and the text dump (false must stay "set to false"). */
UT_TEST(config_exit_probes_field_round_trips_set_and_unset)
{
	static const char text[] =
		"tasks { probe_configs { bpf_name: \"a\" exit_probes: true }\n"
		"        probe_configs { bpf_name: \"b\" exit_probes: false }\n"
		"        probe_configs { bpf_name: \"c\" } }";
	struct config_load_opts o = { .format = CONFIG_FORMAT_TEXT };
	struct uprobestats_config *a = NULL, *b = NULL, *c = NULL;
	struct err e = { 0 };
	char why[256], *dump = NULL;
	size_t len, dump_len = 0;
	uint8_t *bin;

	UT_EQ_INT(config_load_buffer("t", text, sizeof(text) - 1, &o, &a, &e), 0);
	UT_ASSERT(a->tasks[0].probes[0].has_exit_probes && a->tasks[0].probes[0].exit_probes);
	UT_ASSERT(a->tasks[0].probes[1].has_exit_probes && !a->tasks[0].probes[1].exit_probes);
	UT_ASSERT(!a->tasks[0].probes[2].has_exit_probes);
	UT_EQ_INT(config_encode_binary(a, CONFIG_ERA_AUTO, &bin, &len, NULL, &e), 0);
	UT_EQ_INT(load_bin((const char *)bin, len, CONFIG_ERA_AUTO, &b, &e), 0);
	if (!config_equal(a, b, why, sizeof(why)))
		ut_fail(__FILE__, __LINE__, "binary differs: %s", why);
	UT_ASSERT(b->tasks[0].probes[1].has_exit_probes && !b->tasks[0].probes[1].exit_probes);
	FILE *f = open_memstream(&dump, &dump_len);
	UT_ASSERT(f);
	UT_EQ_INT(config_dump_text(a, f), 0);
	fclose(f);
	UT_ASSERT(strstr(dump, "exit_probes: false") != NULL);
	UT_EQ_INT(config_load_buffer("dump", dump, dump_len, &o, &c, &e), 0);
	if (!config_equal(a, c, why, sizeof(why)))
		ut_fail(__FILE__, __LINE__, "text dump differs: %s", why);
	free(dump);
	free(bin);
	config_free(a);
	config_free(b);
	config_free(c);
}

UT_TEST(config_schema_rows_are_in_field_number_order)
{
	const struct msg_desc *all[] = { &schema_config, &schema_task, &schema_probe,
					 &schema_statsd, &schema_binder_filter,
					 &schema_binder_method };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		uint32_t last_b = 0, last_c = 0;
		for (size_t k = 0; k < all[i]->n_fields; k++) {
			const struct field_desc *f = &all[i]->fields[k];
			UT_ASSERT(!f->num_b || f->num_b > last_b);
			UT_ASSERT(!f->num_c || f->num_c > last_c);
			UT_ASSERT(f->num_b || f->num_c);
			last_b = f->num_b ? f->num_b : last_b;
			last_c = f->num_c ? f->num_c : last_c;
		}
	}
}

/* text -> binary -> model gives the same model, detected as the same era;
 * text -> text dump -> model too. */
UT_TEST(config_binary_round_trips_every_testdata_config)
{
	for (size_t i = 0; i < N_TESTDATA_CONFIGS; i++) {
		const struct testdata_config *tc = &testdata_configs[i];
		struct uprobestats_config *text = NULL, *bin = NULL, *again = NULL;
		struct config_load_opts to = { .format = CONFIG_FORMAT_TEXT };
		enum config_era used;
		struct err e = { 0 };
		char why[256], *dump = NULL;
		size_t len = 0, dump_len = 0;
		uint8_t *bytes = NULL;

		UT_EQ_INT(config_load_file(ut_testdata(tc->path), NULL, &text, &e), 0);
		UT_EQ_INT(config_encode_binary(text, CONFIG_ERA_AUTO, &bytes, &len, &used, &e), 0);
		UT_EQ_INT(used, tc->era);
		UT_EQ_INT(load_bin((const char *)bytes, len, CONFIG_ERA_AUTO, &bin, &e), 0);
		UT_EQ_INT(bin->era, tc->era);
		if (!config_equal(text, bin, why, sizeof(why)))
			ut_fail(__FILE__, __LINE__, "%s: binary differs: %s", tc->path, why);

		FILE *f = open_memstream(&dump, &dump_len);
		UT_ASSERT(f);
		UT_EQ_INT(config_dump_text(text, f), 0);
		fclose(f);
		UT_EQ_INT(config_load_buffer("dump", dump, dump_len, &to, &again, &e), 0);
		if (!config_equal(text, again, why, sizeof(why)))
			ut_fail(__FILE__, __LINE__, "%s: text dump differs: %s", tc->path, why);
		free(dump);
		free(bytes);
		config_free(text);
		config_free(bin);
		config_free(again);
	}
}

/* An extension-style schema exercising the encodings no upstream field uses
 * yet (sint32/sint64 zigzag, sfixed32/sfixed64, packed): decode, encode and
 * the text reader all follow the table row. */
struct ext_msg {
	int32_t z32;
	bool has_z32;
	int64_t z64;
	bool has_z64;
	int32_t f32;
	bool has_f32;
	int64_t f64;
	bool has_f64;
	struct i64_list packed;
	struct src_loc loc;
};

#define EXT_ROW(nm, n, ty, en, rep, pk, m, h)                                      \
	{ .name = nm, .num_b = n, .num_c = n, .type = ty, .enc = en, .repeated = rep,   \
	  .packed = pk, .off = offsetof(struct ext_msg, m), .has_off = h,             \
	  .count_off = FD_NONE, .loc_off = FD_NONE }

static const struct field_desc ext_fields[] = {
	EXT_ROW("z32", 1000, FT_INT32, ENC_ZIGZAG, false, false, z32,
		offsetof(struct ext_msg, has_z32)),
	EXT_ROW("z64", 1001, FT_INT64, ENC_ZIGZAG, false, false, z64,
		offsetof(struct ext_msg, has_z64)),
	EXT_ROW("f32", 1002, FT_INT32, ENC_FIXED, false, false, f32,
		offsetof(struct ext_msg, has_f32)),
	EXT_ROW("f64", 1003, FT_INT64, ENC_FIXED, false, false, f64,
		offsetof(struct ext_msg, has_f64)),
	EXT_ROW("packed", 1004, FT_INT64, ENC_ZIGZAG, true, true, packed, FD_NONE),
};

static const struct msg_desc ext_desc = {
	"Ext", sizeof(struct ext_msg), offsetof(struct ext_msg, loc), ext_fields,
	sizeof(ext_fields) / sizeof(ext_fields[0]),
};

UT_TEST(config_binary_zigzag_fixed_and_packed_encodings)
{
	struct uprobestats_config *cfg = model_new("ext");
	struct ext_msg in, out;
	struct err e;
	uint8_t *bin;
	size_t len;

	UT_ASSERT(cfg);
	memset(&in, 0, sizeof(in));
	in.z32 = -3, in.has_z32 = true;
	in.z64 = INT64_MIN, in.has_z64 = true;
	in.f32 = -2, in.has_f32 = true;
	in.f64 = 0x0102030405060708, in.has_f64 = true;
	UT_EQ_INT(model_push_i64(cfg->arena, &in.packed, -1, NULL), 0);
	UT_EQ_INT(model_push_i64(cfg->arena, &in.packed, 64, NULL), 0);
	UT_EQ_INT(config_encode_message(cfg, &ext_desc, &in, CONFIG_ERA_CURRENT, &bin, &len, &e),
		  0);
	/* z32 -3 -> zigzag 5; tag 1000<<3 = 0x1f40 -> c0 3e */
	UT_EQ_INT(bin[0], 0xc0);
	UT_EQ_INT(bin[1], 0x3e);
	UT_EQ_INT(bin[2], 5);
	/* packed: tag (1004<<3|2) = e2 3e, length 3, zigzag(-1)=1, zigzag(64)=128 -> 80 01 */
	UT_EQ_INT(bin[len - 6], 0xe2);
	UT_EQ_INT(bin[len - 4], 3);
	UT_EQ_INT(bin[len - 2], 0x80);
	memset(&out, 0, sizeof(out));
	UT_EQ_INT(protobuf_decode_message(cfg, &ext_desc, &out, bin, len, CONFIG_ERA_CURRENT, &e),
		  0);
	UT_EQ_INT(out.z32, -3);
	UT_EQ_INT(out.z64, INT64_MIN);
	UT_EQ_INT(out.f32, -2);
	UT_EQ_U64(out.f64, 0x0102030405060708);
	UT_EQ_INT(out.packed.n, 2);
	UT_EQ_INT(out.packed.v[0], -1);
	UT_EQ_INT(out.packed.v[1], 64);
	/* A fixed field sent as a varint is a wire-type error naming it. */
	static const uint8_t wrong[] = { 0xd0, 0x3e, 0x01 };   /* f32 (1002) as varint */
	UT_EQ_INT(protobuf_decode_message(cfg, &ext_desc, &out, wrong, 3, CONFIG_ERA_CURRENT, &e),
		  CONFIG_EERA);
	UT_CONTAINS(e.msg, "ext+0x0: Ext field 1002 (f32 in the current era) has wire type "
			   "varint, expected fixed32");
	free(bin);
	config_free(cfg);
}

UT_TEST(config_format_and_era_option_parsing)
{
	enum config_format f;
	enum config_era era;

	UT_EQ_INT(config_format_parse("binary", &f), 0);
	UT_EQ_INT(f, CONFIG_FORMAT_BINARY);
	UT_EQ_INT(config_format_parse("proto", &f), -EINVAL);
	UT_EQ_INT(config_era_parse("b", &era), 0);
	UT_EQ_INT(era, CONFIG_ERA_B);
	UT_EQ_INT(config_era_parse("current", &era), 0);
	UT_EQ_INT(era, CONFIG_ERA_CURRENT);
	UT_EQ_INT(config_era_parse("a", &era), -EINVAL);
}

UT_TEST(config_binary_file_is_detected_by_content)
{
	const char *path = ut_tmpfile("config");
	struct uprobestats_config *cfg = NULL;
	struct err e;
	FILE *f = fopen(path, "wb");

	UT_ASSERT(f);
	fwrite(era_b_bytes, 1, sizeof(era_b_bytes) - 1, f);
	fclose(f);
	UT_EQ_INT(config_load_file(path, NULL, &cfg, &e), 0);
	UT_EQ_INT(cfg->format, CONFIG_FORMAT_BINARY);
	UT_EQ_INT(cfg->era, CONFIG_ERA_B);
	UT_EQ_STR(cfg->tasks[0].target_process_name, "system_server");
	char where[128];
	config_loc_str(cfg, &cfg->tasks[0].duration_seconds_loc, where, sizeof(where));
	UT_ASSERT(strncmp(where, path, strlen(path)) == 0);
	UT_EQ_STR(where + strlen(path), "+0x2f");
	config_free(cfg);
}
