/* Unit tests: the textproto reader and the model it fills. */
#include "ut.h"

#include <string.h>

#include "config/config.h"
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
