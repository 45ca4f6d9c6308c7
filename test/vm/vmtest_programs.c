/* vmtest_programs.c — every embedded upstream program on arm64, as
 * test/e2e/test_programs.py checks them on the host: target_programs calls the probed
 * functions with the registers, stack out-args slots and fake ART objects each program
 * reads (on arm64: x0..x7 and the caller's frame), and prints per (program, call) the
 * fields the record must decode to, or that nothing may be written.  Every field of every
 * event is compared with those lines, in order; the summary counts each probe's events,
 * nothing dropped. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmjson.h"
#include "vmtest.h"

#define WAIT_MS 300000
#define MAX_LINES 256
#define STR_MAX 1024

struct probe {
	const char *obj, *prog, *symbol, *extra;
	const char *label; /* the target's name for the program (NULL: PROG) */
};

/* A JSON Lines file kept in memory, one parsed document per line. */
struct jlines {
	char *text;
	int n;
	struct jdoc doc[MAX_LINES];
};

static int jlines_read(struct tc *t, const char *path, struct jlines *jl)
{
	size_t len;

	memset(jl, 0, sizeof(*jl));
	jl->text = read_file(path, &len);
	for (char *line = jl->text; line < jl->text + len;) {
		char *nl = memchr(line, '\n', (size_t)(jl->text + len - line));
		size_t n = nl ? (size_t)(nl - line) : (size_t)(jl->text + len - line);
		if (jl->n == MAX_LINES) {
			tc_fail(t, "%s: more than %d lines", path, MAX_LINES);
			return -1;
		}
		if (json_parse(&jl->doc[jl->n], line, n) < 0) {
			tc_fail(t, "%s: line %d is not JSON: %.200s", path, jl->n + 1, line);
			return -1;
		}
		jl->n++;
		line += n + 1;
	}
	return 0;
}

static void jlines_free(struct jlines *jl)
{
	for (int i = 0; i < MAX_LINES; i++)
		json_free(&jl->doc[i]);
	free(jl->text);
	jl->text = NULL;
}

static const struct jnode *root(const struct jlines *jl, int i)
{
	return &jl->doc[i].n[0];
}

static const struct jnode *member(const struct jlines *jl, int i, const char *key)
{
	return json_get(&jl->doc[i], root(jl, i), key);
}

/* The method of an event's probe ({"probe": {"method": ...}} or "probe": "..."). */
static bool probe_is(const struct jlines *ev, int i, const char *symbol)
{
	const struct jnode *p = member(ev, i, "probe");

	if (p && p->type == J_OBJ)
		p = json_get(&ev->doc[i], p, "method");
	return json_str_is(p, symbol);
}

static bool is_event(const struct jlines *ev, int i)
{
	return json_str_is(member(ev, i, "type"), "event");
}

static int events_on(const struct jlines *ev, const char *symbol)
{
	int n = 0;

	for (int i = 0; i < ev->n; i++)
		n += is_event(ev, i) && probe_is(ev, i, symbol);
	return n;
}

/* test_programs.py's same_value(): "<positive>" is a number > 0, booleans only equal
 * booleans, numbers equal numbers or "0x..." strings of that value, strings equal
 * decoded. */
static bool same_value(const struct jnode *got, const struct jnode *want)
{
	unsigned long long g, w;
	static char gs[STR_MAX], ws[STR_MAX];

	if (json_str_is(want, "<positive>"))
		return got->type == J_NUM && got->s[0] != '-' && json_u64(got, &g) == 0 && g > 0;
	if (want->type == J_BOOL || got->type == J_BOOL)
		return want->type == got->type && want->len == got->len &&
		       memcmp(want->s, got->s, want->len) == 0;
	if (want->type == J_NUM)
		return json_u64(got, &g) == 0 && json_u64(want, &w) == 0 && g == w;
	long gl = json_str_decode(got, gs, sizeof(gs)), wl = json_str_decode(want, ws, sizeof(ws));
	return gl >= 0 && gl == wl && memcmp(gs, ws, (size_t)gl) == 0;
}

/* One event's fields against one expectation's, by name and value. */
static int compare_fields(struct tc *t, const char *what, const struct jdoc *gd,
			  const struct jnode *got, const struct jdoc *wd, const struct jnode *want)
{
	CHECK(got && want, "%s: no fields", what);
	EQ(json_count(gd, got), json_count(wd, want), "field count");
	for (int c = want->child; c >= 0; c = wd->n[c].next) {
		const struct jnode *w = &wd->n[c];
		char key[128];
		snprintf(key, sizeof(key), "%.*s", (int)w->keylen, w->key);
		const struct jnode *g = json_get(gd, got, key);
		CHECK(g, "%s: no field %s", what, key);
		CHECK(same_value(g, w), "%s.%s: expected %.*s, got %.*s", what, key, (int)w->len,
		      w->s, (int)g->len, g->s);
	}
out:
	return t->failed ? -1 : 0;
}

/* The events on SYMBOL equal, in order and field by field, the target's expectations for
 * program LABEL; calls it must ignore left no event. */
static int check_program(struct tc *t, const struct jlines *exps, const struct jlines *ev,
			 const char *label, const char *symbol, long long pid)
{
	int e = 0, k = 0, wanted = 0, expectations = 0;
	char what[160];

	for (int i = 0; i < exps->n; i++) {
		if (!json_str_is(member(exps, i, "prog"), label) ||
		    !json_str_is(member(exps, i, "fn"), symbol))
			continue;
		expectations++;
		const struct jnode *emit = member(exps, i, "emit");
		if (emit && emit->type == J_BOOL && emit->s[0] == 'f')
			continue;
		while (e < ev->n && !(is_event(ev, e) && probe_is(ev, e, symbol)))
			e++;
		snprintf(what, sizeof(what), "%s[%d]", label, k);
		CHECK(e < ev->n, "%s: only %d events on %s, the target expected more", label, k,
		      symbol);
		unsigned long long got_pid;
		CHECK(json_u64(member(ev, e, "pid"), &got_pid) == 0 && (long long)got_pid == pid,
		      "%s pid", what);
		if (compare_fields(t, what, &ev->doc[e], member(ev, e, "fields"), &exps->doc[i],
				   member(exps, i, "fields")) < 0)
			goto out;
		e++;
		k++;
		wanted++;
	}
	CHECK(expectations > 0, "the target printed no expectation for %s", label);
	EQ(events_on(ev, symbol), wanted, "events on the probed function");
out:
	return t->failed ? -1 : 0;
}

static const char *programs_config(struct tc *t, const struct probe *p, int n,
				   const char *const maps[])
{
	static char path[VM_PATH_MAX];
	static char text[8192];
	char exe[VM_PATH_MAX];
	size_t o = 0;

	target_path(t, "target_programs", exe);
	o += (size_t)snprintf(text + o, sizeof(text) - o, "tasks {\n");
	for (int i = 0; i < n; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o,
				      "  probe_configs {\n"
				      "    bpf_name: \"prog_%s_uprobe_%s\"\n"
				      "    file_paths: \"%s\"\n"
				      "    method_signature: \"%s\"\n"
				      "%s"
				      "  }\n",
				      p[i].obj, p[i].prog, exe, p[i].symbol,
				      p[i].extra ? p[i].extra : "");
	for (int i = 0; maps[i]; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "  bpf_maps: \"%s\"\n", maps[i]);
	snprintf(text + o, sizeof(text) - o, "}\n");
	tc_path(t, "programs.textproto", path);
	return tc_write(t, path, text) == 0 ? path : NULL;
}

/* Runs uprobestats on a fresh target_programs (its stdout: the expectations), checks
 * every probe's events and the summary.  EV is left for further checks. */
static int run_and_check(struct tc *t, const struct probe *p, int n, const char *const maps[],
			 const char *extra_arg, struct jlines *ev)
{
	struct target tg = { .pid = -1 };
	struct ups u = { .pid = -1 };
	struct jlines *exps = calloc(1, sizeof(*exps));
	char pid[16];
	const char *cfg = programs_config(t, p, n, maps);
	int total = 0;

	memset(ev, 0, sizeof(*ev));
	CHECK(cfg && exps, "config");
	if (target_start(t, &tg, "target_programs", NULL, (const char *const[]){ NULL }) < 0)
		goto out;
	long long tpid = tg.pid;
	snprintf(pid, sizeof(pid), "%d", (int)tg.pid);
	const char *args[] = { "run", cfg, "--format", "json", "--pid", pid, extra_arg, NULL };
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0 ||
	    target_go(t, &tg) < 0 || target_wait(t, &tg, WAIT_MS) < 0)
		goto out;
	/* It ends by itself: its target exited. */
	if (check_rc(t, &u, ups_wait(&u, WAIT_MS, NULL), 0, "exit code") < 0)
		goto out;
	if (jlines_read(t, tg.out, exps) < 0 || jlines_read(t, u.out, ev) < 0)
		goto out;
	for (int i = 0; i < n; i++) {
		if (check_program(t, exps, ev, p[i].label ? p[i].label : p[i].prog, p[i].symbol,
				  tpid) < 0) {
			tc_fail(t, "(stderr) %s", ups_stderr_tail(&u));
			goto out;
		}
		total += events_on(ev, p[i].symbol);
	}
	int all = 0, summaries = 0;
	for (int i = 0; i < ev->n; i++) {
		all += is_event(ev, i);
		if (json_str_is(member(ev, i, "type"), "summary")) {
			const struct jnode *probes = member(ev, i, "probes");
			summaries++;
			EQ(json_count(&ev->doc[i], probes), n, "summary rows");
			for (int k = 0; k < n; k++) {
				const struct jnode *row = json_at(&ev->doc[i], probes, k);
				unsigned long long v[4];
				const char *keys[4] = { "hits", "delivered", "dropped_kernel",
							"dropped_sink" };
				unsigned long long want[4] = { 0, 0, 0, 0 };
				want[0] = want[1] = (unsigned long long)events_on(ev, p[k].symbol);
				for (int j = 0; j < 4; j++) {
					CHECK(json_u64(json_get(&ev->doc[i], row, keys[j]),
						       &v[j]) == 0,
					      "summary row %d has no %s", k, keys[j]);
					CHECK(v[j] == want[j],
					      "%s: summary %s: expected %llu, got %llu", p[k].prog,
					      keys[j], want[j], v[j]);
				}
			}
		}
	}
	EQ(all, total, "events (none on unprobed functions)");
	EQ(summaries, 1, "summary lines");
out:
	ups_stop(&u, SIGKILL);
	target_kill(&tg);
	if (exps)
		jlines_free(exps);
	free(exps);
	return t->failed ? -1 : 0;
}

static void run_simple(struct tc *t, const struct probe *p, int n, const char *const maps[],
		       const char *extra_arg)
{
	struct jlines *ev = calloc(1, sizeof(*ev));

	if (!ev)
		abort();
	run_and_check(t, p, n, maps, extra_arg, ev);
	jlines_free(ev);
	free(ev);
}

#define PM "ProcessManagement"
#define BM "BitmapAllocation"
#define DA "DisruptiveApp"
#define PROBE(obj, prog, symbol) { (obj), (prog), (symbol), NULL, NULL }
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void process_management(struct tc *t)
{
	static const struct probe p[] = {
		PROBE(PM, "set_uid_temp_allowlist_state", "ups_set_uid_temp_allowlist_state"),
		PROBE(PM, "update_device_idle_temp_allowlist",
		      "ups_update_device_idle_temp_allowlist"),
		PROBE(PM, "set_pid", "ups_set_pid"),
		PROBE(PM, "make_active", "ups_make_active"),
		PROBE(PM, "on_process_active", "ups_on_process_active"),
	};
	static const char *const maps[] = { "map_" PM "_output_buf",
					    "map_" PM "_update_device_idle_temp_allowlist_records",
					    "map_" PM "_process_change_output_buf", NULL };
	run_simple(t, p, COUNT(p), maps, NULL);
}

static void process_management_legacy_record(struct tc *t)
{
	static const struct probe p[] = {
		PROBE(PM, "update_device_idle_temp_allowlist_legacy",
		      "ups_update_device_idle_temp_allowlist"),
	};
	static const char *const maps[] = {
		"map_" PM "_update_device_idle_temp_allowlist_records", NULL
	};
	run_simple(t, p, COUNT(p), maps, NULL);
}

static void bitmap_snapshot_programs(struct tc *t)
{
	static const struct probe p[] = {
		PROBE(BM, "bitmap_creation_for_snapshot", "ups_bitmap_init"),
		PROBE(BM, "apply_free_function", "ups_cleaner_thunk_run"),
		PROBE(BM, "activity_perform_start", "ups_activity_perform_start"),
		PROBE(BM, "create_scaled_bitmap", "ups_create_scaled_bitmap"),
	};
	static const char *const maps[] = { "map_" BM "_output", NULL };
	run_simple(t, p, COUNT(p), maps, NULL);
}

static void bitmap_creation(struct tc *t)
{
	static const struct probe p[] = { PROBE(BM, "bitmap_creation", "ups_bitmap_init") };
	static const char *const maps[] = { "map_" BM "_output", NULL };
	run_simple(t, p, COUNT(p), maps, NULL);
}

static void bitmap_constructor_heap(struct tc *t)
{
	static const struct probe p[] = { PROBE(BM, "bitmap_constructor_heap", "ups_bitmap_init") };
	static const char *const maps[] = { "map_" BM "_output_buf", NULL };
	run_simple(t, p, COUNT(p), maps, NULL);
}

static const struct probe da_probes[] = {
	PROBE(DA, "bind_service_locked", "ups_bind_service_locked"),
	PROBE(DA, "set_component_enabled_setting", "ups_set_component_enabled_setting"),
};
static const char *const da_maps[] = { "map_" DA "_BindServiceLocked_output_buf",
				       "map_" DA "_ComponentEnabledSetting_output_buf", NULL };

static void disruptive_app(struct tc *t)
{
	run_simple(t, da_probes, COUNT(da_probes), da_maps, NULL);
}

/* The largest record (688 bytes) through the perf-event-array fallback. */
static void disruptive_app_perf_buffer(struct tc *t)
{
	run_simple(t, da_probes, COUNT(da_probes), da_maps, "--force-perfbuf");
}

#define BINDER_FILTERS                                                                     \
	"    binder_transaction_filters {\n"                                               \
	"      interface_name: \"com.android.internal.app.IBatteryStats\"\n"               \
	"      method_ids: 3\n"                                                            \
	"      method_configs {\n"                                                         \
	"        method_id: 1\n"                                                           \
	"        atom_config {\n"                                                          \
	"          atom_id: 915\n"                                                         \
	"          atom_field_positions: CALLING_UID\n"                                    \
	"          atom_field_positions: CODE\n"                                           \
	"          atom_field_positions: KTIME_NS\n"                                       \
	"        }\n"                                                                      \
	"      }\n"                                                                        \
	"      method_configs {\n"                                                         \
	"        method_id: 7\n"                                                           \
	"        event_service_config { flush: true }\n"                                   \
	"      }\n"                                                                        \
	"    }\n"                                                                          \
	"    binder_transaction_filters {\n"                                               \
	"      interface_name: \"ünïcødé.IFilter\"\n"       \
	"      method_configs {\n"                                                         \
	"        method_id: 9\n"                                                           \
	"        atom_config { atom_id: 916 atom_field_positions: INTERFACE_NAME }\n"      \
	"      }\n"                                                                        \
	"    }\n"

/* Listed (interface, code) pairs emit; another code of a listed interface, unlisted
 * interfaces and the a11y interface do not (the target's expectations). */
static void binder_filter_from_config(struct tc *t)
{
	static const struct probe p[] = {
		{ "Binder", "exec_transact_internal", "ups_exec_transact_internal", BINDER_FILTERS,
		  NULL },
	};
	static const char *const maps[] = { "map_Binder_output_buf", NULL };
	static const unsigned long long codes[] = { 1, 7, 3, 9 };
	struct jlines *ev = calloc(1, sizeof(*ev));
	int k = 0;

	if (!ev)
		abort();
	if (run_and_check(t, p, COUNT(p), maps, NULL, ev) < 0)
		goto out;
	for (int i = 0; i < ev->n; i++) {
		unsigned long long code;
		if (!is_event(ev, i))
			continue;
		CHECK(k < COUNT(codes), "more transactions reported than the 4 expected");
		CHECK(json_u64(json_get(&ev->doc[i], member(ev, i, "fields"), "code"), &code) == 0,
		      "event without a code");
		EQ(code, codes[k], "transaction code reported (1, 7, 3, 9 in order)");
		k++;
	}
	EQ(k, COUNT(codes), "transactions reported");
out:
	jlines_free(ev);
	free(ev);
}

static void binder_without_filters_is_refused(struct tc *t)
{
	static const struct probe p[] = {
		{ "Binder", "exec_transact_internal", "ups_exec_transact_internal", "", NULL },
	};
	static const char *const maps[] = { "map_Binder_output_buf", NULL };
	char pid[16], *err = NULL;
	const char *cfg = programs_config(t, p, COUNT(p), maps);

	CHECK(cfg, "config");
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	const char *args[] = { "run", cfg, "--format", "json", "--pid", pid, NULL };
	int rc = ups_run(t, args, 120000, &err);
	CHECK(rc != 0, "a Binder probe without filters must not run");
	CHECK(strstr(err, "binder_transaction_filters"), "error names the missing filters: %.400s",
	      err);
out:
	free(err);
}

static void accessibility(struct tc *t)
{
	static const struct probe p[] = {
		PROBE("Accessibility", "grant_runtime_permission", "ups_grant_runtime_permission"),
		PROBE("Accessibility", "dispatch_gesture", "ups_exec_transact_internal"),
	};
	static const char *const maps[] = { "map_Accessibility_output_buf", NULL };
	run_simple(t, p, COUNT(p), maps, NULL);
}

static void art_test_programs(struct tc *t)
{
	static const struct probe p[] = {
		{ "ArtTest", "update_device_idle_temp_allowlist",
		  "ups_update_device_idle_temp_allowlist", NULL,
		  "art_test_update_device_idle_temp_allowlist" },
		PROBE("ArtTest", "start_activity_as_user", "ups_start_activity_as_user"),
	};
	static const char *const maps[] = { "map_ArtTest_output_buf_aot",
					    "map_ArtTest_output_buf_jit", NULL };
	run_simple(t, p, COUNT(p), maps, NULL);
}

/* The historical programs of LMODroid/CalyxOS configs. */
static void malware_signal(struct tc *t)
{
	static const struct probe p[] = {
		PROBE("MalwareSignal", "add_bound_client_uid", "ups_add_bound_client_uid"),
		{ "MalwareSignal", "set_component_enabled_setting",
		  "ups_set_component_enabled_setting", NULL,
		  "malware_set_component_enabled_setting" },
	};
	static const char *const maps[] = { "map_MalwareSignal_output_buf", NULL };
	run_simple(t, p, COUNT(p), maps, NULL);
}

static void binder_exec_transact_internal(struct tc *t)
{
	static const struct probe p[] = {
		PROBE("BinderExecTransactInternal", "activity_task_manager_startActivity",
		      "ups_exec_transact_internal"),
	};
	static const char *const maps[] = { "map_BinderExecTransactInternal_output_buf", NULL };
	run_simple(t, p, COUNT(p), maps, NULL);
}

const struct vmcase vm_programs_cases[] = {
	{ "programs.process_management", process_management },
	{ "programs.process_management_legacy_record", process_management_legacy_record },
	{ "programs.bitmap_snapshot_programs", bitmap_snapshot_programs },
	{ "programs.bitmap_creation", bitmap_creation },
	{ "programs.bitmap_constructor_heap", bitmap_constructor_heap },
	{ "programs.disruptive_app", disruptive_app },
	{ "programs.disruptive_app_perf_buffer", disruptive_app_perf_buffer },
	{ "programs.binder_filter_from_config", binder_filter_from_config },
	{ "programs.binder_without_filters_is_refused", binder_without_filters_is_refused },
	{ "programs.accessibility", accessibility },
	{ "programs.art_test_programs", art_test_programs },
	{ "programs.malware_signal", malware_signal },
	{ "programs.binder_exec_transact_internal", binder_exec_transact_internal },
	{ NULL, NULL },
};
