/* Unit tests: validation, the guardrail and the plan printer. */
#include "ut.h"

#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/guardrail.h"
#include "config/load.h"
#include "config/plan_print.h"
#include "config/signature.h"
#include "config/validate.h"
#include "config_testdata.h"

static struct uprobestats_config *parse(const char *text)
{
	struct uprobestats_config *cfg = NULL;
	struct config_load_opts o = { .format = CONFIG_FORMAT_TEXT };
	struct err e;

	if (config_load_buffer("t.textproto", text, strlen(text), &o, &cfg, &e))
		fprintf(stderr, "    unexpected load error: %s\n", e.msg);
	return cfg;
}

/* Everything the problem printer writes, in a malloc()ed string. */
static char *problems_text(const struct uprobestats_config *cfg,
			   const struct config_problems *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	config_print_problems(f, cfg, p);
	fclose(f);
	return buf;
}

UT_TEST(config_validate_accepts_every_testdata_config)
{
	for (size_t i = 0; i < N_TESTDATA_CONFIGS; i++) {
		struct uprobestats_config *cfg = NULL;
		struct config_problems pr = { 0 };
		struct err e;
		const char *path = ut_testdata(testdata_configs[i].path);
		UT_EQ_INT(config_load_file(path, NULL, &cfg, &e), 0);
		UT_EQ_INT(config_validate(cfg, NULL, &pr), 0);
		if (pr.n_errors) {
			char *t = problems_text(cfg, &pr);
			ut_fail(__FILE__, __LINE__, "%s", t);
			free(t);
		}
		/* The one upstream slip these configs carry: positions with a
		 * timestamp program (PixelOS test_bss_noteScreenState) warn. */
		if (strstr(testdata_configs[i].path, "PixelOS-AOSP/test_bss_noteScreenState")) {
			UT_EQ_INT(pr.n_warnings, 1);
			UT_CONTAINS(pr.v[0].msg, "ignored by prog_GenericInstrumentation_uprobe_"
						 "call_timestamp_1");
		} else {
			UT_EQ_INT(pr.n_warnings, 0);
		}
		config_free(cfg);
	}
}

UT_TEST(config_validate_collects_every_problem)
{
	struct uprobestats_config *cfg = parse(
		"tasks {\n"
		"  probe_configs { bpf_name: \"p\" }\n"
		"  probe_configs { method_name: \"m\" }\n"
		"  duration_seconds: 0\n"
		"  statsd_logging_config { }\n"
		"}\n");
	struct config_problems pr = { 0 };

	UT_ASSERT(cfg);
	UT_EQ_INT(config_validate(cfg, NULL, &pr), 5);
	char *t = problems_text(cfg, &pr);
	/* No target name: every process (standalone), so only a warning. */
	UT_CONTAINS(t, "t.textproto:1:1: warning: no target_process_name: every process");
	UT_CONTAINS(t, "t.textproto:4:21: error: duration_seconds must be > 0, found 0 [duration]");
	UT_CONTAINS(t, "t.textproto:5:3: error: statsd_logging_config has no atom_id [atom]");
	UT_CONTAINS(t, "t.textproto:2:3: error: no method identity");
	UT_CONTAINS(t, "t.textproto:3:3: error: probe has no bpf_name");
	UT_CONTAINS(t, "t.textproto:3:32: error: method_name without fully_qualified_class_name");
	UT_CONTAINS(t, "5 errors, 1 warning");
	free(t);
	config_free(cfg);
}

UT_TEST(config_plan_prints_the_expected_shape)
{
	struct uprobestats_config *cfg = NULL;
	struct err e;
	char *buf = NULL;
	size_t len = 0;

	UT_EQ_INT(config_load_file(ut_testdata("configs/PixelOS-AOSP/binder.textproto"), NULL,
				   &cfg, &e), 0);
	FILE *f = open_memstream(&buf, &len);
	UT_ASSERT(f);
	config_print_plan(f, cfg, &(struct plan_print_opts){ .verbose = true });
	fclose(f);
	UT_CONTAINS(buf, "binder.textproto: 1 task\n  format: text\n  era: current");
	UT_CONTAINS(buf, "task 0:\n  target: running process \"system_server\"\n"
			 "  duration: 5 s\n  atom: none (no statsd_logging_config)\n"
			 "  maps: map_Binder_output_buf\n"
			 "  probe 1/1: prog_Binder_uprobe_exec_transact_internal\n"
			 "    method: android.os.Binder.execTransactInternal(int, "
			 "android.os.Parcel, android.os.Parcel, int, int)  "
			 "[by class + method name]\n"
			 "    binder: com.android.internal.app.IBatteryStats\n"
			 "      code 1: atom 915 [CALLING_UID, CODE, KTIME_NS]\n");
	free(buf);
	config_free(cfg);
}

static void hook(FILE *out, const struct uprobestats_config *cfg, size_t task, size_t probe,
		 void *ctx)
{
	(void)cfg;
	fprintf(out, "    offset: %s %zu.%zu\n", (const char *)ctx, task, probe);
}

UT_TEST(config_plan_calls_the_probe_hook)
{
	struct uprobestats_config *cfg = NULL;
	struct err e;
	char *buf = NULL;
	size_t len = 0;

	UT_EQ_INT(config_load_file(ut_testdata("configs/CalyxOS/test_bss_noteEvent.textproto"),
				   NULL, &cfg, &e), 0);
	FILE *f = open_memstream(&buf, &len);
	UT_ASSERT(f);
	config_print_plan(f, cfg, &(struct plan_print_opts){ .probe_hook = hook,
							     .hook_ctx = "resolved" });
	fclose(f);
	UT_CONTAINS(buf, "  duration: 60 s\n  atom: 71, fields = arguments [0, 2]\n"
			 "  probe 1/1: prog_GenericInstrumentation_uprobe_call\n"
			 "    method: void com.android.server.am.BatteryStatsService."
			 "noteEvent(int, java.lang.String, int)  [by signature]\n"
			 "    files:  /system/framework/oat/arm64/services.odex\n"
			 "    map:    map_GenericInstrumentation_output_buf  "
			 "[era-B per-probe map]\n"
			 "    offset: resolved 0.0\n");
	UT_ASSERT(!strstr(buf, "era:"));
	free(buf);
	config_free(cfg);
}

/* ---- guardrail (reference §6, §8.3) ---- */

static int guard(const char *text, const struct guardrail_opts *o, char **out)
{
	struct uprobestats_config *cfg = parse(text);
	struct config_problems pr = { 0 };
	int n;

	if (!cfg)
		return -1000;
	n = config_guardrail_check(cfg, o, &pr);
	*out = problems_text(cfg, &pr);
	config_free(cfg);
	return n;
}

#define SIG_PROBE(sig) \
	"probe_configs { bpf_name: \"p\" file_paths: \"f\" method_signature: \"" sig "\" } "
#define ART_PROBE(cls, m) "probe_configs { bpf_name: \"p\" fully_qualified_class_name: \"" cls \
	"\" method_name: \"" m "\" } "

UT_TEST(config_guardrail_allows_and_refuses_as_upstream)
{
	const struct guardrail_opts user = { .mode = GUARDRAIL_AUTO, .on_android = true,
					     .build_type = "user" };
	const struct guardrail_opts userdebug = { .on_android = true, .build_type = "userdebug" };
	char *t;

	UT_EQ_INT(guard("tasks { " SIG_PROBE("void com.android.server.am.OomAdjuster."
					     "$$ExternalSyntheticLambda0.accept(int)") "}",
			&user, &t), 0);
	free(t);
	UT_EQ_INT(guard("tasks { " ART_PROBE("com.android.server.am.OomAdjuster$$Lambda", "run")
			"}", &user, &t), 0);
	free(t);
	UT_EQ_INT(guard("tasks { " ART_PROBE("com.android.server.am.ActivityManagerService$"
					     "LocalService", "updateDeviceIdleTempAllowlist") "}",
			&user, &t), 0);
	free(t);
	UT_EQ_INT(guard("tasks { " SIG_PROBE("void com.android.server.am.OomAdjusterWithSomeSuffix"
					    ".m()") "}", &user, &t), 1);
	UT_CONTAINS(t, "t.textproto:1:73: error: guardrail (ro.build.type=user): method "
		       "com.android.server.am.OomAdjusterWithSomeSuffix.m is not under a class "
		       "prefix the newest allowlist permits on user builds");
	free(t);
	/* A refused probe in the second task rejects the config. */
	UT_EQ_INT(guard("tasks { " ART_PROBE("com.android.server.am.OomAdjuster", "a") "} "
			"tasks { " ART_PROBE("android.graphics.Bitmap", "<init>") "}",
			&user, &t), 1);
	UT_CONTAINS(t, "method android.graphics.Bitmap.<init> is not under");
	free(t);
	/* userdebug allows everything; off Android AUTO is off. */
	UT_EQ_INT(guard("tasks { " ART_PROBE("android.graphics.Bitmap", "<init>") "}", &userdebug,
			&t), 0);
	free(t);
	UT_EQ_INT(guard("tasks { " ART_PROBE("android.graphics.Bitmap", "<init>") "}",
			&(struct guardrail_opts){ 0 }, &t), 0);
	free(t);
}

UT_TEST(config_guardrail_modes_and_lists)
{
	struct guardrail_opts o = { 0 };
	enum guardrail_mode m;
	enum guardrail_list l;
	char *t;

	UT_ASSERT(!guardrail_active(&o));
	o.on_android = true;
	UT_ASSERT(guardrail_active(&o));   /* unknown build type on Android: fail closed */
	o.build_type = "eng";
	UT_ASSERT(!guardrail_active(&o));
	o.mode = GUARDRAIL_USER;
	UT_ASSERT(guardrail_active(&o));
	UT_EQ_INT(guardrail_mode_parse("off", &m), 0);
	UT_EQ_INT(m, GUARDRAIL_OFF);
	UT_EQ_INT(guardrail_mode_parse("on", &m), -EINVAL);
	UT_EQ_INT(guardrail_list_parse("cpp-v1", &l), 0);
	UT_EQ_STR(guardrail_list_name(l), "cpp-v1");
	UT_EQ_INT(guardrail_list_parse("oldest", &l), -EINVAL);

	const char *udt = "com.android.server.am.ActivityManagerService$LocalService."
			  "updateDeviceIdleTempAllowlist";
	const char *oom = "com.android.server.am.OomAdjuster";
	UT_ASSERT(guardrail_allows(GUARDRAIL_LIST_NEWEST, udt, strlen(udt)));
	UT_ASSERT(guardrail_allows(GUARDRAIL_LIST_CPP_V2, udt, strlen(udt)));
	UT_ASSERT(!guardrail_allows(GUARDRAIL_LIST_CPP_V1, udt, strlen(udt)));
	UT_ASSERT(!guardrail_allows(GUARDRAIL_LIST_CPP_V1, oom, strlen(oom)));
	UT_ASSERT(guardrail_allows(GUARDRAIL_LIST_RUST, oom, strlen(oom)));
	const char *perm = "com.android.server.pm.permission.PermissionManagerService."
			   "grantRuntimePermission";
	UT_ASSERT(guardrail_allows(GUARDRAIL_LIST_NEWEST, perm, strlen(perm)));
	UT_ASSERT(!guardrail_allows(GUARDRAIL_LIST_RUST, perm, strlen(perm)));

	/* A native probe has no Java name: refused on user builds. */
	o = (struct guardrail_opts){ .mode = GUARDRAIL_USER };
	UT_EQ_INT(guard("tasks { " SIG_PROBE("malloc") "}", &o, &t), 1);
	UT_CONTAINS(t, "guardrail (guardrail forced on): native symbol malloc is not under");
	free(t);
	/* The dispatch_gesture program is allowed by itself, not the whole config. */
	UT_EQ_INT(guard("tasks { probe_configs { bpf_name: \"prog_Accessibility_uprobe_dispatch_"
			"gesture\" fully_qualified_class_name: \"android.os.Binder\" method_name: "
			"\"execTransactInternal\" } " ART_PROBE("a.B", "c") "}", &o, &t), 1);
	UT_CONTAINS(t, "method a.B.c is not under");
	free(t);
}

/* Every shared config prints as: a header, one task block with its target,
 * duration and atom lines, and one "probe k/n" block per probe. */
UT_TEST(config_plan_shape_for_every_testdata_config)
{
	for (size_t i = 0; i < N_TESTDATA_CONFIGS; i++) {
		const struct testdata_config *tc = &testdata_configs[i];
		struct uprobestats_config *cfg = NULL;
		struct err e;
		char *buf = NULL, want[64];
		size_t len = 0;

		UT_EQ_INT(config_load_file(ut_testdata(tc->path), NULL, &cfg, &e), 0);
		FILE *f = open_memstream(&buf, &len);
		UT_ASSERT(f);
		config_print_plan(f, cfg, NULL);
		fclose(f);
		UT_CONTAINS(buf, ": 1 task\ntask 0:\n  target: ");
		UT_CONTAINS(buf, "\n  duration: ");
		UT_CONTAINS(buf, "\n  atom: ");
		for (unsigned k = 1; k <= tc->n_probes; k++) {
			snprintf(want, sizeof(want), "\n  probe %u/%u: prog_", k, tc->n_probes);
			UT_CONTAINS(buf, want);
		}
		snprintf(want, sizeof(want), "probe %u/", tc->n_probes + 1);
		UT_ASSERT(!strstr(buf, want));
		UT_CONTAINS(buf, "    method: ");
		free(buf);
		config_free(cfg);
	}
}

UT_TEST(config_signature_parsing_and_param_counts)
{
	struct method_sig s;
	const char *why = NULL;

	UT_EQ_INT(sig_parse("void android.graphics.Bitmap.<init>(long, byte[], "
			    "android.graphics.NinePatch$InsetStruct)", &s, &why), 0);
	UT_ASSERT(!s.native);
	UT_EQ_INT(s.n_params, 3);
	UT_ASSERT(s.name.len == strlen("android.graphics.Bitmap.<init>"));
	UT_ASSERT(sig_class(&s).len == strlen("android.graphics.Bitmap"));
	UT_ASSERT(s.params[1].len == 6 && !memcmp(s.params[1].p, "byte[]", 6));
	UT_EQ_INT(sig_parse("int android.util.Slog.i()", &s, &why), 0);
	UT_EQ_INT(s.n_params, 0);
	UT_EQ_INT(sig_parse("_ZN7android6Parcel5writeEPKvm", &s, &why), 0);
	UT_ASSERT(s.native);
	UT_EQ_INT(sig_parse("void m(int)", &s, &why), -1);
	UT_CONTAINS(why, "not qualified by its class");
	UT_EQ_INT(sig_parse("void a.B.m(int,)", &s, &why), -1);
	UT_CONTAINS(why, "empty parameter");
	UT_EQ_INT(sig_parse("a.B.m(int)", &s, &why), -1);
	UT_CONTAINS(why, "no return type");
	UT_ASSERT(sig_is_primitive("boolean", 7) && !sig_is_primitive("int[]", 5));
	UT_ASSERT(sig_is_floating("double", 6) && !sig_is_floating("long", 4));

	struct probe_config p = { 0 };
	UT_EQ_INT(config_probe_param_count(&p), -2);
	p.method_signature = "malloc";
	UT_EQ_INT(config_probe_param_count(&p), -1);
	p.method_signature = "void a.B.m(int, long)";
	UT_EQ_INT(config_probe_param_count(&p), 2);
	p.method_signature = NULL;
	p.fully_qualified_class_name = "a.B";
	p.method_name = "m";
	UT_EQ_INT(config_probe_param_count(&p), 0);
}
