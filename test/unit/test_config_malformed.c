/* Unit tests: a table of malformed configs, each with the message it must
 * produce (by substring, with its file:line:col or file+offset) and its
 * class: the load error code, or the problem kind validation/guardrail
 * reports. */
#include "ut.h"

#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/encode.h"
#include "config/guardrail.h"
#include "config/load.h"
#include "config/validate.h"

enum step {
	LOAD,           /* config_load_buffer fails with code */
	VALIDATE,       /* loads; config_validate reports kind */
	GUARD,          /* loads; the guardrail (forced on, list) reports kind */
	ENCODE,         /* loads; config_encode_binary(era) fails with code */
};

struct bad {
	enum step step;
	const char *text;             /* a textproto, or binary bytes when len != 0 */
	size_t len;
	int code;                     /* LOAD/ENCODE: expected error code */
	enum config_problem_kind kind;/* VALIDATE/GUARD: expected problem kind */
	const char *msg;              /* expected substring (location included) */
	enum config_era era;          /* LOAD of binary / ENCODE: forced era */
	enum guardrail_list list;     /* GUARD */
};

#define T(step, text, code, kind, msg) { step, text, 0, code, kind, msg, 0, 0 }

static const char *const known_programs[] = {
	"prog_GenericInstrumentation_uprobe_call_detail",
	"prog_Binder_uprobe_exec_transact_internal",
	"p",
};
static const char *const known_maps[] = { "map_GenericInstrumentation_call_detail_buf" };

static bool in(const char *const *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i], name))
			return true;
	return false;
}

static bool has_program(const char *name, void *ctx)
{
	(void)ctx;
	return in(known_programs, sizeof(known_programs) / sizeof(known_programs[0]), name);
}

static bool has_map(const char *name, void *ctx)
{
	(void)ctx;
	return in(known_maps, sizeof(known_maps) / sizeof(known_maps[0]), name);
}

static const char *hint(void *ctx)
{
	(void)ctx;
	return "prog_GenericInstrumentation_uprobe_call_detail, ...";
}

#define PROBE "probe_configs { bpf_name: \"p\" fully_qualified_class_name: \"a.B\" method_name: " \
	"\"m\" fully_qualified_parameters: [\"int\", \"java.lang.String\", \"double\"] } "
#define TGT "target_process_name: \"system_server\" "

static const struct bad cases[] = {
	/* ---- syntax ---- */
	T(LOAD, "tasks {", CONFIG_ESYNTAX, 0,
	  "t:1:8: expected '}' to close the Task opened at 1:7, found end of file"),
	T(LOAD, "tasks { probe_configs { bpf_name: \"abc } }", CONFIG_ESYNTAX, 0,
	  "t:1:35: unterminated string (missing closing \")"),
	/* Upstream PixelOS test/test/test_bss_noteEvent.textproto, as shipped. */
	T(LOAD, "tasks {\n    probe_configs {\n"
		"        bpf_name: \"prog_GenericInstrumentation_uprobe_call_detail\"\n"
		"        bpf_map: \"map_GenericInstrumentation_call_detail_buf\"\"\n"
		"        file_paths: \"/system/framework/oat/arm64/services.odex\"\n    }\n}\n",
	  CONFIG_ESYNTAX, 0, "t:4:62: unterminated string (missing closing \"); a stray \" right "
	  "after the previous string?"),
	T(LOAD, "tasks { duration_seconds 5 }", CONFIG_ESYNTAX, 0,
	  "t:1:26: expected ':' after field name 'duration_seconds', found number '5'"),
	T(LOAD, "tasks { @ }", CONFIG_ESYNTAX, 0, "t:1:9: unexpected character '@'"),
	T(LOAD, "tasks }", CONFIG_ESYNTAX, 0,
	  "t:1:7: expected '{' to open UprobestatsConfig.tasks, found '}'"),
	T(LOAD, "tasks < duration_seconds: 1 }", CONFIG_ESYNTAX, 0,
	  "t:1:29: expected a field name of Task or '>', found '}'"),
	T(LOAD, "tasks { bpf_maps: [\"a\", \"b\" }", CONFIG_ESYNTAX, 0,
	  "t:1:29: expected ',' or ']' in the list, found '}'"),
	T(LOAD, "tasks { target_process_name: \"a\\qb\" }", CONFIG_ESYNTAX, 0,
	  "t:1:32: unknown escape in string"),
	T(LOAD, "tasks { target_process_name: \"a\\x\" }", CONFIG_ESYNTAX, 0,
	  "t:1:32: \\x without hex digits in string"),
	T(LOAD, "\n\n  }", CONFIG_ESYNTAX, 0,
	  "t:3:3: expected a field name of UprobestatsConfig, found '}'"),
	T(LOAD, "tasks { target_process_name: \"\\u12\" }", CONFIG_ESYNTAX, 0,
	  "t:1:31: \\u/\\U escape with too few hex digits in string"),
	/* ---- fields ---- */
	T(LOAD, "tasks {\n  probe_config { }\n}", CONFIG_EFIELD, 0,
	  "t:2:3: unknown field 'probe_config' in Task; did you mean 'probe_configs'?"),
	T(LOAD, "task { }", CONFIG_EFIELD, 0,
	  "t:1:1: unknown field 'task' in UprobestatsConfig; did you mean 'tasks'?"),
	T(LOAD, "tasks { xyzzy: 1 }", CONFIG_EFIELD, 0,
	  "t:1:9: unknown field 'xyzzy' in Task (fields: probe_configs, bpf_maps, "),
	T(LOAD, "tasks { duration_seconds: 5\n duration_seconds: 6 }", CONFIG_EFIELD, 0,
	  "t:2:2: Task.duration_seconds is set twice (it is not repeated)"),
	T(LOAD, "tasks { probe_configs { bpf_nmae: \"x\" } }", CONFIG_EFIELD, 0,
	  "t:1:25: unknown field 'bpf_nmae' in ProbeConfig; did you mean 'bpf_name'?"),
	/* ---- values and types ---- */
	T(LOAD, "tasks { duration_seconds: \"60\" }", CONFIG_EVALUE, 0,
	  "t:1:27: expected an int32 for Task.duration_seconds, found string \"60\""),
	T(LOAD, "tasks { target_process_name: system_server }", CONFIG_EVALUE, 0,
	  "t:1:30: expected a quoted string for Task.target_process_name, found identifier "
	  "'system_server'"),
	T(LOAD, "tasks { target_process_selection: ANY_APP_PROCESS_ON_STAR }", CONFIG_EVALUE, 0,
	  "t:1:35: unknown TargetProcessSelection value 'ANY_APP_PROCESS_ON_STAR'; did you "
	  "mean 'ANY_APP_PROCESS_ON_START'?"),
	T(LOAD, "tasks { target_process_selection: 9 }", CONFIG_EVALUE, 0,
	  "t:1:35: 9 is not a TargetProcessSelection value (UNKNOWN, SPECIFIC_PROCESS_NAME"),
	T(LOAD, "tasks { duration_seconds: 1.5 }", CONFIG_EVALUE, 0,
	  "t:1:27: Task.duration_seconds expects an int32, found '1.5'"),
	T(LOAD, "tasks { duration_seconds: 089 }", CONFIG_EVALUE, 0,
	  "t:1:27: Task.duration_seconds expects an int32, found '089'"),
	T(LOAD, "tasks { probe_configs { binder_transaction_filters { method_configs { "
		"event_service_config { flush: yes } } } } }", CONFIG_EVALUE, 0,
	  "t:1:101: expected true or false for EventServiceConfig.flush, found identifier 'yes'"),
	T(LOAD, "tasks { target_process_name: [\"a\", \"b\"] }", CONFIG_EVALUE, 0,
	  "t:1:30: Task.target_process_name is not repeated; a [list] is not allowed"),
	T(LOAD, "tasks { target_process_name: \"a\\000b\" }", CONFIG_EVALUE, 0,
	  "t:1:30: string contains a NUL byte"),
	/* ---- ranges ---- */
	T(LOAD, "tasks { duration_seconds: 2147483648 }", CONFIG_ERANGE, 0,
	  "t:1:27: 2147483648 is out of range for Task.duration_seconds (an int32)"),
	T(LOAD, "tasks { duration_seconds: -2147483649 }", CONFIG_ERANGE, 0,
	  "t:1:27: -2147483649 is out of range for Task.duration_seconds"),
	T(LOAD, "tasks { task_id: 0x1FFFFFFFFFFFFFFFF }", CONFIG_ERANGE, 0,
	  "t:1:18: 0x1FFFFFFFFFFFFFFFF is out of range for Task.task_id (an int64)"),
	T(LOAD, "tasks { task_id: 9223372036854775808 }", CONFIG_ERANGE, 0,
	  "t:1:18: 9223372036854775808 is out of range for Task.task_id"),
	/* ---- eras and wire ---- */
	{ LOAD, "\x0a\x02\x18\x3c", 4, CONFIG_EERA, 0,
	  "t+0x2: Task field 3 (target_process_name in the current era) has wire type varint",
	  CONFIG_ERA_CURRENT, 0 },
	{ LOAD, "\x0a\x04\x22\x02xy", 6, CONFIG_EERA, 0,
	  "t+0x2: Task field 4 (duration_seconds in the current era) has wire type "
	  "length-delimited, expected varint", CONFIG_ERA_CURRENT, 0 },
	{ LOAD, "\x0a\x02\x22\x02", 4, CONFIG_EWIRE, 0,
	  "t+0x2: unknown field runs past the end of its message", CONFIG_ERA_B, 0 },
	{ LOAD, "\x0a\x09\x0a", 3, CONFIG_EWIRE, 0, "t+0x0: tasks runs past the end",
	  CONFIG_ERA_AUTO, 0 },
	{ ENCODE, "tasks { probe_configs { bpf_map: \"map_x\" } bpf_maps: \"map_y\" }", 0,
	  CONFIG_EERA, 0, "t: cannot encode: the config mixes the era-B field bpf_map with the "
	  "current-era field bpf_maps", CONFIG_ERA_AUTO, 0 },
	{ ENCODE, "tasks { task_id: 3 }", 0, CONFIG_EERA, 0,
	  "t: Task.task_id has no field number in the B era", CONFIG_ERA_B, 0 },
	/* ---- validation ---- */
	T(VALIDATE, "# nothing\n", 0, CP_NO_TASKS, "t: error: the config has no tasks"),
	T(VALIDATE, "tasks { " TGT "}", 0, CP_NO_TASKS, "t:1:1: error: task has no probe_configs"),
	T(VALIDATE, "tasks { " TGT "probe_configs { bpf_name: \"p\" } }", 0, CP_METHOD,
	  "t:1:46: error: no method identity"),
	T(VALIDATE, "tasks { " TGT "probe_configs { bpf_name: \"p\" file_paths: \"/x\" "
		"method_signature: \"void m(int\" } }", 0, CP_METHOD,
	  "t:1:111: error: method_signature \"void m(int\" is neither a Java signature"),
	T(VALIDATE, "tasks { " TGT "probe_configs { bpf_name: \"p\" method_signature: "
		"\"void a.B.m()\" } }", 0, CP_METHOD,
	  "t:1:94: error: method_signature needs file_paths"),
	T(VALIDATE, "tasks { " TGT "probe_configs { bpf_name: \"p\" file_paths: \"/x\" "
		"method_signature: \"void a.B.m(int)\" fully_qualified_class_name: \"a.C\" "
		"method_name: \"m\" } }", 0, CP_METHOD,
	  "error: method_signature names a.B.m but fully_qualified_class_name + method_name "
	  "name a.C.m"),
	T(VALIDATE, "tasks { " TGT "probe_configs { bpf_name: \"prog_Nope\" "
		"fully_qualified_class_name: \"a.B\" method_name: \"m\" } }", 0, CP_PROGRAM,
	  "t:1:72: error: unknown bpf_name \"prog_Nope\"; embedded programs: "
	  "prog_GenericInstrumentation_uprobe_call_detail, ..."),
	T(VALIDATE, "tasks { " TGT PROBE "bpf_maps: [\"map_GenericInstrumentation_call_detail_"
		"buf\", \"map_nope\"] }", 0, CP_MAP,
	  "t:1:252: error: unknown map \"map_nope\" in bpf_maps"),
	T(VALIDATE, "tasks { " TGT PROBE "statsd_logging_config { atom_id: 915 "
		"primitive_argument_positions: [0, 3] } }", 0, CP_ARG_POSITION,
	  "t:1:266: error: argument position 3 does not exist: a.B.m has 3 parameters"),
	T(VALIDATE, "tasks { " TGT PROBE "statsd_logging_config { atom_id: 915 "
		"primitive_argument_positions: [1] } }", 0, CP_ARG_POSITION,
	  "t:1:263: error: argument position 1 is java.lang.String, not a primitive"),
	T(VALIDATE, "tasks { " TGT PROBE "statsd_logging_config { atom_id: 915 "
		"primitive_argument_positions: [2] } }", 0, CP_ARG_POSITION,
	  "error: argument position 2 is a double, passed in a floating-point register"),
	T(VALIDATE, "tasks { " TGT "probe_configs { bpf_name: \"p\" file_paths: \"/lib/libc.so\" "
		"method_signature: \"malloc\" } statsd_logging_config { atom_id: 1 "
		"primitive_argument_positions: [6] } }", 0, CP_ARG_POSITION,
	  "error: argument position 6: a native probe can read arguments 0..5"),
	T(VALIDATE, "tasks { " TGT PROBE "statsd_logging_config { atom_id: 915 "
		"primitive_argument_positions: [-1] } }", 0, CP_ARG_POSITION,
	  "error: argument position -1 is negative"),
	T(VALIDATE, "tasks { " TGT PROBE "duration_seconds: -5 }", 0, CP_DURATION,
	  "t:1:213: error: duration_seconds must be > 0, found -5"),
	T(VALIDATE, "tasks { " TGT PROBE "statsd_logging_config { primitive_argument_positions: 0 }"
		" }", 0, CP_ATOM, "t:1:195: error: statsd_logging_config has no atom_id"),
	T(VALIDATE, "tasks { " TGT PROBE "statsd_logging_config { atom_id: 0 } }", 0, CP_ATOM,
	  "t:1:228: error: atom_id 0 is not a valid atom id"),
	T(VALIDATE, "tasks { " TGT PROBE "target_process_selection: ANY_APP_PROCESS_ON_START }", 0,
	  CP_TARGET, "t:1:221: error: target_process_selection ANY_APP_PROCESS_ON_START watches "
	  "every app start, but target_process_name \"system_server\" names one process"),
	T(VALIDATE, "tasks { " PROBE "target_process_selection: SPECIFIC_APP_PROCESS_ON_START }", 0,
	  CP_TARGET, "t:1:184: error: target_process_selection SPECIFIC_APP_PROCESS_ON_START "
	  "needs target_process_name"),
	T(VALIDATE, "tasks { target_process_selection: SPECIFIC_PROCESS_NAME " PROBE "}", 0,
	  CP_TARGET, "error: target_process_selection SPECIFIC_PROCESS_NAME needs"),
	T(VALIDATE, "tasks { target_process_name: \"\" " PROBE "}", 0, CP_TARGET,
	  "t:1:30: error: target_process_name is empty"),
	T(VALIDATE, "tasks { " TGT "probe_configs { bpf_name: \"p\" fully_qualified_class_name: "
		"\"a.B\" method_name: \"m\" binder_transaction_filters { interface_name: \"I\" "
		"method_configs { method_id: 1 atom_config { atom_id: 1 } } } } }", 0, CP_BINDER,
	  "error: binder_transaction_filters only apply to "
	  "prog_Binder_uprobe_exec_transact_internal, not p"),
	T(VALIDATE, "tasks { " TGT "probe_configs { bpf_name: \"prog_Binder_uprobe_exec_transact_"
		"internal\" fully_qualified_class_name: \"a.B\" method_name: \"m\" "
		"binder_transaction_filters { interface_name: \"I\" method_configs { method_id: 0 "
		"atom_config { atom_id: 1 atom_field_positions: [UNKNOWN] } } } } }", 0, CP_BINDER,
	  "error: method_configs[0] needs a method_id > 0"),
	T(VALIDATE, "tasks { " TGT "probe_configs { bpf_name: \"prog_Binder_uprobe_exec_transact_"
		"internal\" fully_qualified_class_name: \"a.B\" method_name: \"m\" "
		"binder_transaction_filters { interface_name: \"I\" method_configs { method_id: 2 "
		"} } } }", 0, CP_BINDER,
	  "error: method_configs[0] needs event_service_config or atom_config"),
	/* ---- guardrail ---- */
	{ GUARD, "tasks { " TGT PROBE "}", 0, 0, CP_GUARDRAIL,
	  "t:1:104: error: guardrail (guardrail forced on): method a.B.m is not under a class "
	  "prefix the newest allowlist permits on user builds", 0, GUARDRAIL_LIST_NEWEST },
	{ GUARD, "tasks { " TGT "probe_configs { bpf_name: \"p\" file_paths: \"/x\" "
	  "method_signature: \"void com.android.server.am.ActivityManagerService$LocalService."
	  "updateDeviceIdleTempAllowlist(int)\" } }", 0, 0, CP_GUARDRAIL,
	  "method com.android.server.am.ActivityManagerService$LocalService."
	  "updateDeviceIdleTempAllowlist is not under a class prefix the cpp-v1 allowlist",
	  0, GUARDRAIL_LIST_CPP_V1 },
};

static bool check_case(const struct bad *c, char *got, size_t size)
{
	struct config_load_opts o = { .format = c->len ? CONFIG_FORMAT_BINARY : CONFIG_FORMAT_TEXT,
				      .era = c->era };
	struct config_catalog cat = { has_program, has_map, hint, NULL };
	struct config_validate_opts vo = { .catalog = &cat };
	struct uprobestats_config *cfg = NULL;
	struct config_problems pr = { 0 };
	struct err e = { 0 };
	size_t len = c->len ? c->len : strlen(c->text);
	int rc = config_load_buffer("t", c->text, len, &o, &cfg, &e);
	bool ok = false;

	if (c->step == LOAD) {
		snprintf(got, size, "rc %d: %s", rc, e.msg);
		return rc == c->code && strstr(e.msg, c->msg);
	}
	if (rc) {
		snprintf(got, size, "load failed: %s", e.msg);
		return false;
	}
	if (c->step == ENCODE) {
		uint8_t *bin = NULL;
		size_t n = 0;
		rc = config_encode_binary(cfg, c->era, &bin, &n, NULL, &e);
		snprintf(got, size, "rc %d: %s", rc, e.msg);
		free(bin);
		config_free(cfg);
		return rc == c->code && strstr(e.msg, c->msg);
	}
	if (c->step == VALIDATE) {
		config_validate(cfg, &vo, &pr);
	} else {
		struct guardrail_opts g = { .mode = GUARDRAIL_USER, .list = c->list };
		config_guardrail_check(cfg, &g, &pr);
	}
	char *text = NULL;
	size_t tl = 0;
	FILE *f = open_memstream(&text, &tl);
	if (f) {
		config_print_problems(f, cfg, &pr);
		fclose(f);
	}
	snprintf(got, size, "%s", text ? text : "");
	/* The matching line must carry the expected kind. */
	for (size_t i = 0; text && i < pr.n; i++) {
		char line[1200], where[300];
		snprintf(line, sizeof(line), "%s: %s: %s",
			 config_loc_str(cfg, &pr.v[i].loc, where, sizeof(where)),
			 pr.v[i].severity == CS_ERROR ? "error" : "warning", pr.v[i].msg);
		if (strstr(line, c->msg) && pr.v[i].kind == c->kind)
			ok = true;
	}
	free(text);
	config_free(cfg);
	return ok;
}

UT_TEST(config_malformed_table)
{
	char got[4096];
	size_t n = sizeof(cases) / sizeof(cases[0]);

	UT_ASSERT(n >= 30);
	for (size_t i = 0; i < n; i++)
		if (!check_case(&cases[i], got, sizeof(got)))
			ut_fail(__FILE__, __LINE__, "case %zu (%.50s...): want \"%s\", got %s", i,
				cases[i].text, cases[i].msg, got);
}
