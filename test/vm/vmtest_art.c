/* vmtest_art.c — real ART-compiled arm64 code under a probe, as test/e2e/test_art.py
 * checks the x86_64 case on the host: target_art maps the Android 13 arm64 odex and
 * calls ActivityRecognitionEvent.<init>(String, int, long) and getEventType() with
 * ART's managed convention (x0 = ArtMethod*, x1 = this, w2 = the String reference,
 * w3 = the int, x4 = the long).  uprobestats resolves both methods from their Java
 * signatures with its built-in OAT reader and must report exactly the calls made, to
 * JSON and as statsd atoms.  The expected offsets come from the runner's command line
 * (taken from the independent oatdump table), not from uprobestats. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmjson.h"
#include "vmproc.h"
#include "vmtest.h"

#define CALLS 50
#define ATOM_ID 915
#define POLLED_ATOM_ID 12345
#define ART_METHOD 0x7a7a7a70ULL
#define LONG_BASE 5000000000LL
#define CLS "com.android.location.provider.ActivityRecognitionEvent"
#define WAIT_MS 300000

static const char *art_config(struct tc *t)
{
	static char path[VM_PATH_MAX];
	char text[2048];
	const char *odex = t->env->art_odex;

	snprintf(text, sizeof(text),
		 "tasks {\n"
		 "  probe_configs {\n"
		 "    bpf_name: \"prog_GenericInstrumentation_uprobe_call_detail\"\n"
		 "    file_paths: \"%s\"\n"
		 "    method_signature: \"void " CLS ".<init>(java.lang.String, int, long)\"\n"
		 "  }\n"
		 "  probe_configs {\n"
		 "    bpf_name: \"prog_Uprobestats_uretprobe_call_return\"\n"
		 "    file_paths: \"%s\"\n"
		 "    fully_qualified_class_name: \"" CLS "\"\n"
		 "    method_name: \"getEventType\"\n"
		 "  }\n"
		 "  bpf_maps: \"map_GenericInstrumentation_call_detail_buf\"\n"
		 "  bpf_maps: \"map_Uprobestats_call_return_buf\"\n"
		 "  statsd_logging_config {\n"
		 "    atom_id: %d\n"
		 "    primitive_argument_positions: [1, 2]\n"
		 "  }\n"
		 "}\n", odex, odex, ATOM_ID);
	tc_path(t, "art.textproto", path);
	return tc_write(t, path, text) == 0 ? path : NULL;
}

/* Call i passed (type 100+i, timestamp 5000000000+i); each i exactly once. */
static void check_calls(struct tc *t, const struct results *res)
{
	char seen[CALLS] = { 0 }, returned[CALLS] = { 0 };

	EQ(results_count(res, EV_EVENT, 0), CALLS, "call_detail events");
	EQ(results_count(res, EV_RETURN, 0), CALLS, "getEventType() return events");
	for (int k = 0; k < res->nev; k++) {
		const struct ev *e = &res->ev[k];
		if (e->kind == EV_EVENT) {
			unsigned long long i = e->r[3] - 100;
			CHECK(e->has & H_REGS, "call_detail event without registers");
			EQ(e->r[0], ART_METHOD, "ArtMethod* register (x0)");
			EQ(e->r[2], 0, "the null String reference (x2)");
			CHECK(i < CALLS && !seen[i],
			      "int argument (x3) %llu unexpected or seen twice", e->r[3]);
			seen[i] = 1;
			EQ(e->r[4], LONG_BASE + (long long)i, "long argument (x4)");
		} else if (e->kind == EV_RETURN) {
			unsigned long long i = e->return_value - 100;
			CHECK(i < CALLS && !returned[i],
			      "getEventType() returned %llu unexpected or twice", e->return_value);
			returned[i] = 1;
		}
	}
	const struct probe_sum want[2] = { { CALLS, CALLS, 0, 0 }, { CALLS, CALLS, 0, 0 } };
	check_summary(t, res, want, 2);
out:
	return;
}

/* Every atom has id 915 but the polled ones (12345, one per map at exit); the
 * call_detail ones carry (int, long) = positions 1 and 2. */
static void check_atoms(struct tc *t, const struct statsd_rx *rx)
{
	char seen[CALLS] = { 0 };
	int detail = 0, polled = 0;

	for (int k = 0; k < rx->count; k++) {
		struct atom a;
		const char *why = "";
		int rc = statsd_decode(rx->dgram[k], rx->len[k], &a, &why);
		if (rc == 1)
			continue;
		CHECK(rc == 0, "datagram %d: %s", k, why);
		if (a.id == POLLED_ATOM_ID) {
			/* map code, duration_ms, total events, task id: one per map */
			EQ(a.nvalues, 4, "polled atom fields");
			CHECK(a.values[0] > 0, "polled atom: map code %lld", a.values[0]);
			CHECK(a.values[1] >= 0, "polled atom: duration %lld ms", a.values[1]);
			EQ(a.values[2], CALLS, "polled atom: events polled from the map");
			EQ(a.values[3], 0, "polled atom: task id");
			polled++;
			continue;
		}
		EQ(a.id, ATOM_ID, "atom id");
		if (a.nvalues != 2 || a.values[1] < LONG_BASE)
			continue;
		long long i = a.values[0] - 100;
		CHECK(i >= 0 && i < CALLS && !seen[i], "atom int field %lld unexpected or twice",
		      a.values[0]);
		seen[i] = 1;
		EQ(a.values[1], LONG_BASE + i, "atom long field");
		detail++;
	}
	EQ(detail, CALLS, "atoms for call_detail");
	EQ(polled, 2, "one polled atom per map");
out:
	return;
}

static void art_compiled_methods_by_java_signature(struct tc *t)
{
	const struct vmenv *env = t->env;
	struct target a = { .pid = -1 };
	struct ups u = { .pid = -1 };
	struct results res = { 0 };
	struct statsd_rx rx = { .fd = -1 };
	char pid[16], init[32], get[32], n[16], sock[VM_PATH_MAX], statsd[VM_PATH_MAX + 16];
	char *err = NULL;
	const char *cfg = art_config(t);

	CHECK(cfg, "config");
	CHECK(statsd_rx_open(&rx, tc_path(t, "statsdw", sock)) == 0, "cannot bind %s", sock);
	snprintf(statsd, sizeof(statsd), "--statsd=%s", sock);
	snprintf(init, sizeof(init), "%lu", env->art_init_off);
	snprintf(get, sizeof(get), "%lu", env->art_get_off);
	snprintf(n, sizeof(n), "%d", CALLS);
	const char *targs[] = { env->art_odex, init, get, n, NULL };
	if (target_start(t, &a, "target_art", NULL, targs) < 0)
		goto out;
	snprintf(pid, sizeof(pid), "%d", (int)a.pid);
	const char *args[] = { "run", cfg, "--format", "json", "--pid", pid, statsd,
			       "--polled-atom", "12345", "-v", NULL };
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0 ||
	    target_go(t, &a) < 0 || target_wait(t, &a, WAIT_MS) < 0)
		goto out;
	if (check_rc(t, &u, ups_wait(&u, WAIT_MS, &rx), 0, "exit code") < 0)
		goto out;
	statsd_rx_drain(&rx);
	err = ups_stderr(&u);
	char want[64];
	snprintf(want, sizeof(want), "+0x%lx (oat-builtin", env->art_init_off);
	CHECK(strstr(err, want), "<init> not resolved to the expected %s...)", want);
	snprintf(want, sizeof(want), "+0x%lx (oat-builtin", env->art_get_off);
	CHECK(strstr(err, want), "getEventType() not resolved to the expected %s...)", want);
	CHECK(strstr(err, "instance method"), "instance calling convention not reported");
	/* call_return on Java code: exit probes, never a uretprobe. */
	CHECK(strstr(err, "exit probes at 1 exit site"), "getEventType(): no exit probes");
	if (results_read(t, u.out, &res) < 0)
		goto out;
	check_calls(t, &res);
	if (!t->failed)
		check_atoms(t, &rx);
out:
	free(err);
	ups_stop(&u, SIGKILL);
	target_kill(&a);
	results_free(&res);
	statsd_rx_close(&rx);
}

/* --- exit probes on methods with frames, stack maps and two returns ------------------- */

#define EXIT_CALLS 100
#define SLACK_NS 2000ULL
#define BASE_CLS "com.android.location.provider.LocationProviderBase"

int read_art_calls(struct tc *t, const char *path, struct art_call *c, int max)
{
	char *text = read_file(path, NULL), *line, *save = NULL;
	int n = 0;

	if (!text) {
		tc_fail(t, "cannot read the target's %s", path);
		return -1;
	}
	for (line = strtok_r(text, "\n", &save); line && n < max;
	     line = strtok_r(NULL, "\n", &save)) {
		struct art_call *k = &c[n];
		memset(k, 0, sizeof(*k));
		if (sscanf(line, "{\"m\": \"isEnabled\", \"ret\": %u, \"inner\": %llu, "
				 "\"outer\": %llu, \"t0\": %llu}", &k->ret, &k->inner, &k->outer,
			   &k->t0) == 4)
			k->is_enabled = 1, n++;
		else if (sscanf(line, "{\"m\": \"setAllowed\", \"exit\": %u, \"inner\": %llu, "
				      "\"outer\": %llu, \"t0\": %llu}", &k->exit, &k->inner,
				&k->outer, &k->t0) == 4)
			n++;
	}
	free(text);
	return n;
}

static const char *exits_art_config(struct tc *t)
{
	static char path[VM_PATH_MAX];
	char text[2048];
	const char *odex = t->env->art_odex;

	snprintf(text, sizeof(text),
		 "tasks {\n"
		 "  probe_configs {\n"
		 "    bpf_name: \"prog_Uprobestats_uretprobe_call_return\"\n"
		 "    file_paths: \"%s\"\n"
		 "    method_signature: \"boolean " BASE_CLS ".isEnabled()\"\n"
		 "  }\n"
		 "  probe_configs {\n"
		 "    bpf_name: \"prog_Uprobestats_uretprobe_call_return\"\n"
		 "    file_paths: \"%s\"\n"
		 "    method_signature: \"void " BASE_CLS ".setAllowed(boolean)\"\n"
		 "  }\n"
		 "}\n", odex, odex);
	tc_path(t, "art-exits.textproto", path);
	return tc_write(t, path, text) == 0 ? path : NULL;
}

/* A return record's entry time: its exit (boot_ns) less its duration. */
static unsigned long long entry_of(const struct ev *e)
{
	return e->boot_ns - e->duration_ns;
}

static int by_entry(const void *a, const void *b)
{
	unsigned long long x = entry_of(*(const struct ev *const *)a);
	unsigned long long y = entry_of(*(const struct ev *const *)b);

	return x < y ? -1 : x > y;
}

/* The records of probe P against the target's calls of that method, in call
 * order.  The records are taken in entry-time order, not in the order the
 * JSON stream gives them (the tool hands the perf buffer's records out in time
 * order now too, probe/reorder): with the perf buffer (the legacy objects) each CPU
 * has its own buffer, so after the target migrates a later call's record can
 * be read before an earlier one's (issue 32: "isEnabled call 2 took 1224864
 * ns" was another call's record).  Each record's duration lies between the
 * time in the callees and the caller's measurement. */
static void check_art_records(struct tc *t, const struct results *res, const struct art_call *c,
			      int n, int is_enabled)
{
	static const struct ev *mine[4 * EXIT_CALLS];
	int k = 0, j = 0, m = 0;

	for (int i = 0; i < res->nev; i++) {
		const struct ev *e = &res->ev[i];
		if (e->kind != EV_RETURN || e->task_index != 0 || e->probe_index != !is_enabled)
			continue;
		CHECK(m < (int)(sizeof(mine) / sizeof(mine[0])), "too many records of %s",
		      is_enabled ? "isEnabled" : "setAllowed");
		mine[m++] = e;
	}
	qsort(mine, (size_t)m, sizeof(mine[0]), by_entry);
	for (int i = 0; i < m; i++) {
		const struct ev *e = mine[i];
		while (j < n && c[j].is_enabled != is_enabled)
			j++;
		CHECK(j < n, "more records than calls of %s", is_enabled ? "isEnabled" : "setAllowed");
		/* Not also "inside the target's window by BOOTTIME", as the e2e twin checks:
		 * under software emulation two clock reads lie up to ~250 us apart, so the
		 * tool's and the target's BOOTTIME-MONOTONIC offsets differ by that much.  A
		 * stale entry paired with this exit would fail the upper bound here. */
		CHECK(e->duration_ns + SLACK_NS >= c[j].inner && e->duration_ns <= c[j].outer + SLACK_NS,
		      "%s call %d took %llu ns from %llu; the target measured %llu ns in its callees, "
		      "%llu ns around the call from %llu", is_enabled ? "isEnabled" : "setAllowed", k,
		      e->duration_ns, entry_of(e), c[j].inner, c[j].outer, c[j].t0);
		if (is_enabled)
			EQ(e->return_value, c[j].ret, "isEnabled() return value");
		j++;
		k++;
	}
	EQ(k, EXIT_CALLS, is_enabled ? "isEnabled records" : "setAllowed records");
out:
	return;
}

static void art_exit_probes_frames_stack_maps_two_exits(struct tc *t)
{
	static struct art_call calls[2 * EXIT_CALLS + 8];
	const struct vmenv *env = t->env;
	struct target a = { .pid = -1 };
	struct ups u = { .pid = -1 };
	struct results res = { 0 };
	char pid[16], ie[32], sa[32], n[16], out[VM_PATH_MAX];
	char *err = NULL;
	const char *cfg = exits_art_config(t);
	int got, changed = 0;

	CHECK(env->art_is_enabled_off && env->art_set_allowed_off, "no --art-exits offsets given");
	CHECK(cfg, "config");
	snprintf(ie, sizeof(ie), "%lu", env->art_is_enabled_off);
	snprintf(sa, sizeof(sa), "%lu", env->art_set_allowed_off);
	snprintf(n, sizeof(n), "%d", EXIT_CALLS);
	tc_path(t, "calls.jsonl", out);
	const char *targs[] = { env->art_odex, ie, sa, n, out, NULL };
	if (target_start(t, &a, "target_art_exits", NULL, targs) < 0)
		goto out;
	snprintf(pid, sizeof(pid), "%d", (int)a.pid);
	const char *args[] = { "run", cfg, "--format", "json", "--pid", pid, "-v", NULL };
	if (ups_run_held(t, &u, &a, args, WAIT_MS) < 0)
		goto out;
	err = ups_stderr(&u);
	CHECK(strstr(err, "exit probes at 1 exit site"), "isEnabled(): not on exit probes");
	CHECK(strstr(err, "exit probes at 2 exit sites"), "setAllowed(): not on its two returns");
	got = read_art_calls(t, out, calls, (int)(sizeof(calls) / sizeof(calls[0])));
	EQ(got, 2 * EXIT_CALLS, "calls the target made");
	for (int i = 0; i < got; i++)
		changed += !calls[i].is_enabled && calls[i].exit;
	CHECK(changed > 0 && changed < EXIT_CALLS, "setAllowed took both returns (%d changed)",
	      changed);
	if (results_read(t, u.out, &res) < 0)
		goto out;
	check_art_records(t, &res, calls, got, 1);
	if (!t->failed)
		check_art_records(t, &res, calls, got, 0);
	if (!t->failed) {
		const struct probe_sum want[2] = { { EXIT_CALLS, EXIT_CALLS, 0, 0 },
						   { EXIT_CALLS, EXIT_CALLS, 0, 0 } };
		check_summary(t, &res, want, 2);
	}
out:
	free(err);
	ups_stop(&u, SIGKILL);
	target_kill(&a);
	results_free(&res);
}

/* --- a lone `ret`: one exit probe, call and return in one hit ------------------------- */

#define LONE_CALLS 100
#define LONE_RET_BASE 0x7a7a0000ULL

/* void FusedProvider.<init>() is a lone `ret` (d65f03c0): call_return gets one probe at
 * that instruction, never a uretprobe nor an entry probe, and reports each call there:
 * duration 0, the return value x0 (target_art_lone leaves 0x7a7a0000 + i in it). */
static void art_lone_ret_one_exit_probe(struct tc *t)
{
	static char cfg[VM_PATH_MAX];
	const struct vmenv *env = t->env;
	struct target a = { .pid = -1 };
	struct ups u = { .pid = -1 };
	struct results res = { 0 };
	char pid[16], off[32], n[16], text[1024], seen[LONE_CALLS] = { 0 };
	char *err = NULL;
	int k = 0;

	CHECK(env->art_lone_off, "no --art-lone offset given");
	snprintf(text, sizeof(text),
		 "tasks {\n  probe_configs {\n"
		 "    bpf_name: \"prog_Uprobestats_uretprobe_call_return\"\n"
		 "    file_paths: \"%s\"\n"
		 "    method_signature: \"void com.android.location.provider.FusedProvider.<init>()\"\n"
		 "  }\n}\n", env->art_odex);
	tc_path(t, "art-lone.textproto", cfg);
	CHECK(tc_write(t, cfg, text) == 0, "config");
	snprintf(off, sizeof(off), "%lu", env->art_lone_off);
	snprintf(n, sizeof(n), "%d", LONE_CALLS);
	const char *targs[] = { env->art_odex, off, n, NULL };
	if (target_start(t, &a, "target_art_lone", NULL, targs) < 0)
		goto out;
	snprintf(pid, sizeof(pid), "%d", (int)a.pid);
	const char *args[] = { "run", cfg, "--format", "json", "--pid", pid, "-v", NULL };
	if (ups_run_held(t, &u, &a, args, WAIT_MS) < 0)
		goto out;
	err = ups_stderr(&u);
	CHECK(strstr(err, "one exit probe at its lone ret"), "<init>(): not on its lone-ret probe");
	CHECK(strstr(err, "attached 1 probe(s)") && strstr(err, "in 1 place(s)"),
	      "one probe in one place (no uretprobe, no entry probe) not reported");
	if (results_read(t, u.out, &res) < 0)
		goto out;
	EQ(results_count(&res, EV_RETURN, 0), LONE_CALLS, "return records");
	for (int i = 0; i < res.nev; i++) {
		const struct ev *e = &res.ev[i];
		unsigned long long j = e->return_value - LONE_RET_BASE;
		if (e->kind != EV_RETURN)
			continue;
		EQ(e->duration_ns, 0, "duration of a lone ret");
		CHECK(j < LONE_CALLS && !seen[j], "return value 0x%llx unexpected or twice",
		      e->return_value);
		seen[j] = 1;
		k++;
	}
	EQ(k, LONE_CALLS, "calls returned");
	const struct probe_sum want[1] = { { LONE_CALLS, LONE_CALLS, 0, 0 } };
	check_summary(t, &res, want, 1);
out:
	free(err);
	ups_stop(&u, SIGKILL);
	target_kill(&a);
	results_free(&res);
}

/* --- sections' Java path on compiled static methods ------------------------------------- */

#define HTTP "org.apache.http"
#define N_STATIC 5

/* The methods target_art_static calls, in its argument order, and the section each is
 * given in the two runs (async pairs, then counters; "" = not probed). */
static const struct {
	const char *sig, *section[2];
	int name, value;
} STATIC_PROBES[N_STATIC] = {
	{ "java.util.Date " HTTP ".impl.cookie.DateUtils.parseDate(java.lang.String)",
	  { "BEGIN", "" }, 0, -1 },
	{ "void " HTTP ".params.HttpProtocolParams.setUserAgent(" HTTP ".params.HttpParams, "
	  "java.lang.String)", { "BEGIN", "" }, 1, -1 },
	{ "long android.net.http.AndroidHttpClient.getMinGzipSize(android.content.ContentResolver)",
	  { "END", "" }, -1, -1 },
	{ "void " HTTP ".impl.EnglishReasonPhraseCatalog.setReason(int, java.lang.String)",
	  { "ASYNC_END", "COUNTER" }, 1, 0 },
	{ "java.net.URI " HTTP ".client.utils.URIUtils.createURI(java.lang.String, "
	  "java.lang.String, int, java.lang.String, java.lang.String, java.lang.String)",
	  { "ASYNC_BEGIN", "COUNTER" }, 1, 2 },
};

/* What target_art_static does on arm64, as add_section() writes it, per run. */
static const char *const STATIC_SECTIONS[2] = {
	"begin:outer:1,begin:inner:2,end:inner:2,end:outer:1,async_begin:load:404,"
	"async_begin:load:503,async_end:load:404,async_end:load:503,",
	"counter:load:404,counter:load:503,counter:load:404,counter:load:503,",
};

/* /vm/testdata/art_static.txt (mkinitramfs.sh): the odex, then the methods' file offsets
 * (STATIC_PROBES' order) from the independent oatdump table. */
static int read_art_static(struct tc *t, char *odex, size_t size, char off[N_STATIC][24])
{
	char *text = read_file("/vm/testdata/art_static.txt", NULL), *nl;
	int ok = 0;

	nl = text ? strchr(text, '\n') : NULL;
	if (nl && (size_t)(nl - text) < size) {
		memcpy(odex, text, (size_t)(nl - text));
		odex[nl - text] = '\0';
		ok = sscanf(nl + 1, "%23s %23s %23s %23s %23s", off[0], off[1], off[2], off[3],
			    off[4]) == N_STATIC;
	}
	free(text);
	CHECK(ok, "/vm/testdata/art_static.txt does not hold ODEX then %d offsets", N_STATIC);
	return 0;
out:
	return -1;
}

static const char *static_config(struct tc *t, const char *odex, int run)
{
	static char path[VM_PATH_MAX];
	char text[4096];
	size_t n = (size_t)snprintf(text, sizeof(text), "tasks {\n");

	for (int i = 0; i < N_STATIC; i++) {
		if (!STATIC_PROBES[i].section[run][0])
			continue;
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "  probe_configs {\n"
				      "    bpf_name: \"prog_Uprobestats_uprobe_call_args\"\n"
				      "    file_paths: \"%s\"\n"
				      "    method_signature: \"%s\"\n"
				      "    section: %s\n", odex, STATIC_PROBES[i].sig,
				      STATIC_PROBES[i].section[run]);
		if (STATIC_PROBES[i].name >= 0)
			n += (size_t)snprintf(text + n, sizeof(text) - n,
					      "    section_name_arg: %d\n", STATIC_PROBES[i].name);
		if (STATIC_PROBES[i].value >= 0)
			n += (size_t)snprintf(text + n, sizeof(text) - n,
					      "    section_value_arg: %d\n",
					      STATIC_PROBES[i].value);
		n += (size_t)snprintf(text + n, sizeof(text) - n, "  }\n");
	}
	snprintf(text + n, sizeof(text) - n, "  bpf_maps: \"map_Uprobestats_call_args_buf\"\n}\n");
	tc_path(t, run ? "art_static_counters.textproto" : "art_static_async.textproto", path);
	return tc_write(t, path, text) == 0 ? path : NULL;
}

/* One run of target_art_static under `run` of RUN's config: its sections, exactly. */
static void static_run(struct tc *t, const char *odex, char off[N_STATIC][24], int run)
{
	char pid[16], *err = NULL, *text = NULL;
	struct target a = { .pid = -1 };
	struct ups u = { .pid = -1 };
	struct jdoc d = { 0 };
	struct threads th = { 0 };
	size_t len = 0;
	pid_t tpid = -1;
	const char *cfg = static_config(t, odex, run);

	CHECK(cfg, "config");
	const char *targs[] = { odex, off[0], off[1], off[2], off[3], off[4], NULL };
	if (target_start(t, &a, "target_art_static", NULL, targs) < 0)
		goto out;
	tpid = a.pid;   /* a.pid is cleared once the target is reaped */
	snprintf(pid, sizeof(pid), "%d", (int)a.pid);
	const char *args[] = { "run", cfg, "--format", "json", "--pid", pid, "-v", NULL };
	if (ups_run_held(t, &u, &a, args, WAIT_MS) < 0)
		goto out;
	err = ups_stderr(&u);
	CHECK(strstr(err, "setReason(int, java.lang.String), static method") &&
	      strstr(err, "java.lang.String), static method"),
	      "not resolved as static methods: %.600s", err);
	text = read_file(u.out, &len);
	for (char *line = text; text && line < text + len && !t->failed;) {
		char *nl = memchr(line, '\n', (size_t)(text + len - line));
		size_t k = nl ? (size_t)(nl - line) : (size_t)(text + len - line);

		CHECK(json_parse(&d, line, k) == 0, "an output line is not JSON: %.200s", line);
		if (json_get(&d, &d.n[0], "section"))
			add_section(&d, &d.n[0], tpid, &th);
		line += k + 1;
	}
	CHECK(!strcmp(th.main, STATIC_SECTIONS[run]) && !th.worker[0],
	      "%s run: %s (other threads: %s); expected %s", run ? "counters" : "async",
	      th.main, th.worker, STATIC_SECTIONS[run]);
out:
	json_free(&d);
	free(text);
	free(err);
	ups_stop(&u, SIGKILL);
	target_kill(&a);
}

/* android.os.Trace's methods are all static: the static calling convention (x0 =
 * ArtMethod*, the arguments from x1) on real compiled static methods of the Android 13
 * arm64 org.apache.http.legacy odex, called by target_art_static the way ART does:
 * names read as ART Strings from x1 (beginSection(String)'s register) and x2
 * (traceBegin(long, String)'s), an end, ints with garbage above their low half from x3
 * (asyncTraceBegin(long, String, int)'s and traceCounter(long, String, int)'s register)
 * and x1; nesting, async pairs by cookie and counter values exact.  The register after
 * the arguments holds a decoy: the instance convention's offset would read it. */
static void art_sections_static_methods(struct tc *t)
{
	char odex[VM_PATH_MAX], off[N_STATIC][24];

	if (read_art_static(t, odex, sizeof(odex), off) < 0)
		return;
	static_run(t, odex, off, 0);
	if (!t->failed)
		static_run(t, odex, off, 1);
}

const struct vmcase vm_art_cases[] = {
	{ "art.compiled_methods_by_java_signature", art_compiled_methods_by_java_signature },
	{ "art.exit_probes_frames_stack_maps_two_exits",
	  art_exit_probes_frames_stack_maps_two_exits },
	{ "art.lone_ret_one_exit_probe", art_lone_ret_one_exit_probe },
	{ "art.sections_static_methods", art_sections_static_methods },
	{ NULL, NULL },
};
