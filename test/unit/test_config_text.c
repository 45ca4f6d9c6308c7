/* Unit tests: the textproto reader and the model it fills. */
#include "ut.h"

#include <string.h>

#include "config/config.h"
#include "config/load.h"
#include "config_testdata.h"

static struct uprobestats_config *load_text(const char *text, struct err *e)
{
	struct uprobestats_config *cfg = NULL;
	struct config_load_opts o = { .format = CONFIG_FORMAT_TEXT };

	err_clear(e);
	if (config_load_buffer("t.textproto", text, strlen(text), &o, &cfg, e))
		return NULL;
	return cfg;
}

UT_TEST(config_text_parses_pixel_binder)
{
	struct uprobestats_config *cfg = NULL;
	struct err e = { 0 };
	int rc = config_load_file(ut_testdata("configs/PixelOS-AOSP/binder.textproto"), NULL,
				  &cfg, &e);
	if (rc)
		fprintf(stderr, "%s\n", e.msg);
	UT_EQ_INT(rc, 0);
	UT_EQ_INT(cfg->format, CONFIG_FORMAT_TEXT);
	UT_EQ_INT(cfg->era, CONFIG_ERA_CURRENT);
	UT_EQ_INT(cfg->n_tasks, 1);
	const struct task_config *t = &cfg->tasks[0];
	UT_EQ_INT(t->n_probes, 1);
	UT_EQ_STR(t->probes[0].bpf_name, "prog_Binder_uprobe_exec_transact_internal");
	UT_EQ_INT(t->probes[0].fully_qualified_parameters.n, 5);
	UT_EQ_STR(t->probes[0].fully_qualified_parameters.v[1], "android.os.Parcel");
	UT_EQ_INT(t->probes[0].n_binder_filters, 1);
	const struct binder_filter *bf = &t->probes[0].binder_filters[0];
	UT_EQ_STR(bf->interface_name, "com.android.internal.app.IBatteryStats");
	UT_EQ_INT(bf->n_methods, 1);
	UT_EQ_INT(bf->methods[0].method_id, 1);
	UT_ASSERT(bf->methods[0].has_atom_config);
	UT_EQ_INT(bf->methods[0].atom_id, 915);
	UT_EQ_INT(bf->methods[0].atom_field_positions.n, 3);
	UT_EQ_INT(bf->methods[0].atom_field_positions.v[2], ATOM_FIELD_KTIME_NS);
	UT_EQ_INT(t->bpf_maps.n, 1);
	UT_EQ_STR(t->target_process_name, "system_server");
	UT_EQ_INT(t->duration_seconds, 5);
	UT_EQ_INT(t->duration_seconds_loc.line, 23);
	UT_EQ_INT(t->duration_seconds_loc.col, 21);
	config_free(cfg);
}

UT_TEST(config_text_unknown_field_suggests)
{
	struct err e;
	struct uprobestats_config *cfg = load_text("tasks {\n  probe_config { }\n}\n", &e);
	UT_ASSERT(!cfg);
	UT_EQ_INT(e.code, CONFIG_EFIELD);
	UT_CONTAINS(e.msg, "t.textproto:2:3: unknown field 'probe_config' in Task; did you mean "
			   "'probe_configs'?");
}

/* Every real config in ../shared/testdata/configs parses as text, and is
 * recognised as written for the era it was. */
UT_TEST(config_text_parses_every_testdata_config)
{
	for (size_t i = 0; i < N_TESTDATA_CONFIGS; i++) {
		const struct testdata_config *tc = &testdata_configs[i];
		struct uprobestats_config *cfg = NULL;
		struct err e = { 0 };
		if (config_load_file(ut_testdata(tc->path), NULL, &cfg, &e)) {
			ut_fail(__FILE__, __LINE__, "%s", e.msg);
			return;
		}
		UT_EQ_INT(cfg->format, CONFIG_FORMAT_TEXT);
		UT_EQ_INT(cfg->era, tc->era);
		UT_EQ_INT(cfg->n_tasks, 1);
		UT_EQ_INT(cfg->tasks[0].n_probes, tc->n_probes);
		config_free(cfg);
	}
}

/* The text-format features beyond what upstream's configs use. */
UT_TEST(config_text_accepts_the_full_syntax)
{
	static const char text[] =
		"# comment\n"
		"tasks: <  # angle brackets, with a colon\n"
		"  probe_configs: [ { bpf_name: 'single' 'quoted' ; },\n"
		"                   < bpf_name: \"esc\\t\\101\\x42\\u00e9\\n\\\"\\\\\" > ]\n"
		"  duration_seconds: 0x1e,\n"
		"  task_id: -017;\n"
		"  target_process_selection: 2\n"
		"  bpf_maps: \"a\" bpf_maps: [\"b\", \"c\",]\n"
		"  statsd_logging_config { atom_id: +915\n"
		"                          primitive_argument_positions: [0x0, 01] }\n"
		">\n"
		"tasks { probe_configs { binder_transaction_filters { method_configs {\n"
		"  event_service_config { flush: t } } method_configs { event_service_config {\n"
		"  flush: False } atom_config { atom_field_positions: [1, INTERFACE_NAME] } }\n"
		"} } }\n";
	struct err e;
	struct uprobestats_config *cfg = load_text(text, &e);

	if (!cfg)
		ut_fail(__FILE__, __LINE__, "%s", e.msg);
	UT_ASSERT(cfg);
	UT_EQ_INT(cfg->n_tasks, 2);
	const struct task_config *t = &cfg->tasks[0];
	UT_EQ_INT(t->n_probes, 2);
	UT_EQ_STR(t->probes[0].bpf_name, "singlequoted");
	UT_EQ_STR(t->probes[1].bpf_name, "esc\tAB\xc3\xa9\n\"\\");
	UT_EQ_INT(t->probes[1].loc.line, 4);
	UT_EQ_INT(t->probes[1].loc.col, 20);
	UT_EQ_INT(t->duration_seconds, 30);
	UT_EQ_INT(t->task_id, -15);
	UT_EQ_INT(t->target_process_selection, TPS_ANY_APP_PROCESS_ON_START);
	UT_EQ_INT(t->bpf_maps.n, 3);
	UT_EQ_STR(t->bpf_maps.v[2], "c");
	UT_EQ_INT(t->bpf_maps.loc[1].col, 28);
	UT_EQ_INT(t->statsd.atom_id, 915);
	UT_EQ_INT(t->statsd.primitive_argument_positions.v[1], 1);
	const struct binder_filter *f = &cfg->tasks[1].probes[0].binder_filters[0];
	UT_EQ_INT(f->n_methods, 2);
	UT_ASSERT(f->methods[0].has_event_service_config && f->methods[0].flush);
	UT_ASSERT(f->methods[1].has_event_service_config && !f->methods[1].flush);
	UT_ASSERT(f->methods[1].has_atom_config && !f->methods[1].has_atom_id);
	UT_EQ_INT(f->methods[1].atom_field_positions.v[1], ATOM_FIELD_INTERFACE_NAME);
	config_free(cfg);
}

UT_TEST(config_text_empty_parameter_list_is_kept)
{
	struct err e;
	struct uprobestats_config *cfg = load_text(
		"tasks { probe_configs { fully_qualified_parameters: [] } probe_configs { } }", &e);

	UT_ASSERT(cfg);
	UT_ASSERT(cfg->tasks[0].probes[0].has_fully_qualified_parameters);
	UT_EQ_INT(cfg->tasks[0].probes[0].fully_qualified_parameters.n, 0);
	UT_ASSERT(!cfg->tasks[0].probes[1].has_fully_qualified_parameters);
	config_free(cfg);
}

UT_TEST(config_text_format_detection)
{
	struct uprobestats_config *cfg = NULL;
	struct err e;

	/* A text config that starts with a newline (0x0a, like a binary tag). */
	UT_EQ_INT(config_load_buffer("n", "\ntasks {}", 9, NULL, &cfg, &e), 0);
	UT_EQ_INT(cfg->format, CONFIG_FORMAT_TEXT);
	config_free(cfg);
	/* Bytes that are not text are read as binary, and a failure says so. */
	UT_EQ_INT(config_load_buffer("b", "\x0a\x05\x01", 3, NULL, &cfg, &e), CONFIG_EWIRE);
	UT_CONTAINS(e.msg, "b+0x0: tasks runs past the end");
	UT_CONTAINS(e.msg, "so it was read as binary protobuf");
	/* A binary config that happens to be printable text after the tag
	 * ("\n" then '<' ...) is not taken for a textproto. */
	UT_EQ_INT(config_load_buffer("p", "\n\x02\x38\x01", 4, NULL, &cfg, &e), 0);
	UT_EQ_INT(cfg->format, CONFIG_FORMAT_BINARY);
	config_free(cfg);
	UT_EQ_STR(config_format_name(CONFIG_FORMAT_BINARY), "binary");
	UT_EQ_STR(config_err_class(CONFIG_ERANGE), "range");
	UT_EQ_STR(config_err_class(-ENOENT), "io");
	UT_EQ_INT(config_load_file("/nonexistent/cfg", NULL, &cfg, &e), -ENOENT);
	UT_ASSERT(!cfg);
}

UT_TEST(config_text_deep_nesting_and_bad_bytes_are_refused)
{
	struct err e;
	struct uprobestats_config *cfg = load_text("tasks { \x01 }", &e);

	UT_ASSERT(!cfg);
	UT_CONTAINS(e.msg, "t.textproto:1:9: unexpected byte 0x01");
	/* The schema bounds nesting: Task has no Task inside, so a deep input
	 * stops at the first unknown name rather than recursing. */
	cfg = load_text("tasks { tasks { tasks { } } }", &e);
	UT_ASSERT(!cfg);
	UT_EQ_INT(e.code, CONFIG_EFIELD);
}
