/* vmtest_exits.c — exit probes on arm64, as test/e2e/test_exits.py checks them on the
 * host: target_exits' function that checks its own return address (x30 / the saved
 * lr) sees the uretprobe's trampoline on every call and its real caller under exit
 * probes; 10-deep recursion gives every call a record whose duration lies between
 * the target's own measurements; longjmp out of nested calls counts them as unwound;
 * a method trace of target_unwind (calls left by longjmps, and a call of another
 * function made after one from the same frame) gives each call the depth the target
 * itself saw, by the calls' entry sp (docs/sinks.md). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmjson.h"
#include "vmproc.h"
#include "vmtest.h"

#define WAIT_MS 300000
#define RA_CALLS 200
#define ROUNDS 20
#define DEPTH 10
#define JUMP_ROUNDS 40
#define MAX_CALLS 512
#define SLACK_NS 2000ULL

/* The target's own view of each returned call, by return value. */
struct seen {
	long ret[MAX_CALLS];
	unsigned long long inner[MAX_CALLS], outer[MAX_CALLS];
	int n;
	long bad_ra, calls, unwound;
};

static int seen_slot(struct seen *s, long ret)
{
	for (int i = 0; i < s->n; i++)
		if (s->ret[i] == ret)
			return i;
	if (s->n == MAX_CALLS)
		return -1;
	s->ret[s->n] = ret;
	s->inner[s->n] = s->outer[s->n] = 0;
	return s->n++;
}

static int read_seen(struct tc *t, const char *path, struct seen *s)
{
	char *text = read_file(path, NULL), *line, *save = NULL;

	memset(s, 0, sizeof(*s));
	if (!text) {
		tc_fail(t, "cannot read the target's %s", path);
		return -1;
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		long ret, a, b;
		unsigned long long ns;
		int k;
		if (sscanf(line, "{\"ret\": %ld, \"inner\": %llu}", &ret, &ns) == 2 &&
		    (k = seen_slot(s, ret)) >= 0)
			s->inner[k] = ns;
		else if (sscanf(line, "{\"ret\": %ld, \"outer\": %llu}", &ret, &ns) == 2 &&
			 (k = seen_slot(s, ret)) >= 0)
			s->outer[k] = ns;
		else if (sscanf(line, "{\"unwound\": %ld}", &a) == 1)
			s->unwound += a;
		else if (sscanf(line, "{\"calls\": %ld, \"bad_ra\": %ld", &a, &b) == 2)
			s->calls = a, s->bad_ra = b;
	}
	free(text);
	return 0;
}

/* The config of PROG on SYMBOL; with uret, its uretprobe asked for (exit_probes:
 * false, which needs --unsafe-uretprobe), else exit probes (the default). */
static const char *exits_config(struct tc *t, const char *prog, const char *symbol, bool uret)
{
	static char path[VM_PATH_MAX];
	char text[1024], exe[VM_PATH_MAX];

	snprintf(text, sizeof(text),
		 "tasks {\n"
		 "  probe_configs {\n"
		 "    bpf_name: \"prog_Uprobestats_uretprobe_%s\"\n"
		 "    file_paths: \"%s\"\n"
		 "    method_signature: \"%s\"\n%s"
		 "  }\n"
		 "}\n", prog, target_path(t, "target_exits", exe), symbol,
		 uret ? "    exit_probes: false\n" : "");
	tc_path(t, "exits.textproto", path);
	return tc_write(t, path, text) == 0 ? path : NULL;
}

/* Runs target_exits MODE COUNT under `run CONFIG --format json [EXTRA]`; fills res,
 * seen and (if err) stderr.  0, or -1 with the failure recorded. */
static int run_exits(struct tc *t, const char *mode, int count, const char *symbol,
		     const char *extra, struct results *res, struct seen *s, char **err)
{
	struct target a = { .pid = -1 };
	struct ups u = { .pid = -1 };
	char pid[16], n[16], out[VM_PATH_MAX];
	bool uret = extra && strcmp(extra, "--unsafe-uretprobe") == 0;
	const char *cfg = exits_config(t, "call_return", symbol, uret);
	int rc = -1;

	CHECK(cfg, "config");
	snprintf(n, sizeof(n), "%d", count);
	tc_path(t, "target.jsonl", out);
	const char *targs[] = { mode, n, out, NULL };
	if (target_start(t, &a, "target_exits", NULL, targs) < 0)
		goto out;
	snprintf(pid, sizeof(pid), "%d", (int)a.pid);
	const char *args[] = { "run", cfg, "--format", "json", "--pid", pid, extra, NULL };
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0 ||
	    target_go(t, &a) < 0 || target_wait(t, &a, WAIT_MS) < 0)
		goto out;
	if (check_rc(t, &u, ups_wait(&u, WAIT_MS, NULL), 0, "exit code") < 0)
		goto out;
	if (results_read(t, u.out, res) < 0 || read_seen(t, out, s) < 0)
		goto out;
	if (err)
		*err = ups_stderr(&u);
	rc = 0;
out:
	ups_stop(&u, SIGKILL);
	target_kill(&a);
	return rc;
}

/* Every record's duration between the target's inner and outer measurement of the
 * call with its return value; returns the number of records checked. */
static int check_durations(struct tc *t, const struct results *res, struct seen *s)
{
	int checked = 0;

	for (int k = 0; k < res->nev; k++) {
		const struct ev *e = &res->ev[k];
		int i;
		if (e->kind != EV_RETURN)
			continue;
		for (i = 0; i < s->n && s->ret[i] != (long)e->return_value; i++)
			;
		CHECK(i < s->n && s->outer[i], "a record returned %llu: no such call",
		      e->return_value);
		CHECK(e->duration_ns + SLACK_NS >= s->inner[i] &&
		      e->duration_ns <= s->outer[i] + SLACK_NS,
		      "call returning %ld took %llu ns; the target measured %llu ns inside, "
		      "%llu ns from its caller", s->ret[i], e->duration_ns, s->inner[i],
		      s->outer[i]);
		s->outer[i] = 0;  /* each call once */
		checked++;
	}
out:
	return checked;
}

static void exits_return_address_uretprobe_vs_exit_probes(struct tc *t)
{
	static struct seen s;

	for (int exit_probes = 0; exit_probes < 2; exit_probes++) {
		struct results res = { 0 };
		int bad = 0;
		if (run_exits(t, "ra", RA_CALLS, "ups_ra_check",
			      exit_probes ? "--exit-probes" : "--unsafe-uretprobe", &res, &s,
			      NULL) < 0) {
			results_free(&res);
			return;
		}
		EQ(s.calls, RA_CALLS, "calls");
		EQ(s.bad_ra, exit_probes ? 0 : RA_CALLS, "calls that saw a foreign return address");
		EQ(results_count(&res, EV_RETURN, 0), RA_CALLS, "return records");
		for (int k = 0; k < res.nev; k++)
			bad += res.ev[k].kind == EV_RETURN && res.ev[k].return_value % 2 != 1;
		EQ(bad, 0, "return values 2i+1");
out:
		results_free(&res);
		if (t->failed)
			return;
	}
}

static void exits_recursion_every_call_timed(struct tc *t)
{
	static struct seen s;
	struct results res = { 0 };

	if (run_exits(t, "recurse", ROUNDS, "ups_recurse", "--exit-probes", &res, &s, NULL) < 0)
		goto out;
	EQ(s.n, ROUNDS * DEPTH, "calls the target measured");
	EQ(results_count(&res, EV_RETURN, 0), ROUNDS * DEPTH, "return records");
	EQ(check_durations(t, &res, &s), ROUNDS * DEPTH, "records inside their call's bounds");
	const struct probe_sum want = { ROUNDS * DEPTH, ROUNDS * DEPTH, 0, 0 };
	check_summary(t, &res, &want, 1);
out:
	results_free(&res);
}

static void exits_longjmp_unwound_counted(struct tc *t)
{
	static struct seen s;
	struct results res = { 0 };
	char *err = NULL, want[64];
	long calls = 0;

	if (run_exits(t, "longjmp", JUMP_ROUNDS, "ups_jump", "--exit-probes", &res, &s, &err) < 0)
		goto out;
	for (int r = 0; r < JUMP_ROUNDS; r++)
		calls += r % 4 + 1;
	CHECK(s.unwound > 0, "no round jumped");
	EQ(results_count(&res, EV_RETURN, 0), calls - s.unwound, "records: the calls that returned");
	EQ(check_durations(t, &res, &s), calls - s.unwound, "records inside their call's bounds");
	const struct probe_sum sum = { (unsigned long long)calls,
				       (unsigned long long)(calls - s.unwound), 0, 0 };
	check_summary(t, &res, &sum, 1);
	snprintf(want, sizeof(want), ": %ld calls unwound", s.unwound);
	CHECK(err && strstr(err, want), "summary does not say '%s'", want);
out:
	free(err);
	results_free(&res);
}

/* target_unwind's own account (ent|xit|unr NAME lines) as speedscope tells it: "O
 * NAME" at each entry, "C NAME" at each exit or unroll, a line each. */
static char *account_as_speedscope(struct tc *t, const char *path)
{
	char *text = read_file(path, NULL), *line, *save = NULL, *out;
	size_t cap, n = 0;

	if (!text) {
		tc_fail(t, "cannot read the target's %s", path);
		return NULL;
	}
	cap = strlen(text) + 1;
	out = calloc(1, cap);
	for (line = strtok_r(text, "\n", &save); out && line; line = strtok_r(NULL, "\n", &save))
		if (strlen(line) > 4)
			n += (size_t)snprintf(out + n, cap - n, "%c %s\n",
					      strncmp(line, "ent ", 4) ? 'C' : 'O', line + 4);
	free(text);
	return out;
}

/* The speedscope file's one profile as "O NAME" / "C NAME" lines, each close checked
 * to be of the innermost open frame; NULL with the failure recorded. */
static char *speedscope_actions(struct tc *t, const char *path)
{
	struct jdoc d = { 0 };
	char *text = read_file(path, NULL), *out = NULL;
	const struct jnode *frames, *prof, *evs;
	int open[64], depth = 0, n_ev;
	size_t cap, n = 0;

	if (!text || json_parse(&d, text, strlen(text)) < 0) {
		tc_fail(t, "speedscope file %s: not read or not JSON", path);
		goto out;
	}
	frames = json_get(&d, json_get(&d, &d.n[0], "shared"), "frames");
	prof = json_at(&d, json_get(&d, &d.n[0], "profiles"), 0);
	evs = json_get(&d, prof, "events");
	if (!frames || !evs || json_count(&d, json_get(&d, &d.n[0], "profiles")) != 1) {
		tc_fail(t, "speedscope file: not one profile with events");
		goto out;
	}
	n_ev = json_count(&d, evs);
	cap = (size_t)n_ev * 48 + 1;
	out = calloc(1, cap);
	for (int i = 0; out && i < n_ev; i++) {
		const struct jnode *ev = json_at(&d, evs, i), *name;
		unsigned long long f;
		bool opens = json_str_is(json_get(&d, ev, "type"), "O");
		if (json_u64(json_get(&d, ev, "frame"), &f) < 0 ||
		    !(name = json_get(&d, json_at(&d, frames, (int)f), "name")) ||
		    (opens ? depth == 64 : depth == 0 || open[depth - 1] != (int)f)) {
			tc_fail(t, "speedscope event %d: bad frame or not nested", i);
			free(out);
			out = NULL;
			break;
		}
		if (opens)
			open[depth++] = (int)f;
		else
			depth--;
		n += (size_t)snprintf(out + n, cap - n, "%c %.*s\n", opens ? 'O' : 'C',
				      (int)name->len, name->s);
	}
out:
	json_free(&d);
	free(text);
	return out;
}

/* target_unwind 2 under trace --ret --trace-format speedscope: the calls left by
 * longjmps, and ups_uw_beside entered after one from the frame the left call had
 * (its sp), in the target's own order and nesting: beside each left call, never
 * inside it, whether a later call of the left function revealed it or none did. */
static void exits_method_trace_depth_by_entry_sp(struct tc *t)
{
	const struct vmenv *env = t->env;
	struct target a = { .pid = -1 };
	struct ups u = { .pid = -1 };
	char pid[16], acc[VM_PATH_MAX], file[VM_PATH_MAX], exe[VM_PATH_MAX], pattern[VM_PATH_MAX];
	char *want = NULL, *got = NULL;
	const char *args[16] = { "trace", "--pid", pid, "--ret", "--trace", file,
				 "--trace-format", "speedscope" };
	int argc = 8;

	tc_path(t, "account.txt", acc);
	tc_path(t, "unwind.speedscope.json", file);
	snprintf(pattern, sizeof(pattern), "%s:ups_uw_*", target_path(t, "target_unwind", exe));
	const char *targs[] = { "2", acc, NULL };
	if (target_start(t, &a, "target_unwind", NULL, targs) < 0)
		goto out;
	snprintf(pid, sizeof(pid), "%d", (int)a.pid);
	if (env->target_kernel) {   /* the harness adds it to `run` only */
		args[argc++] = "--target-kernel";
		args[argc++] = env->target_kernel;
	}
	args[argc++] = pattern;
	args[argc] = NULL;
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0 ||
	    target_go(t, &a) < 0 || target_wait(t, &a, WAIT_MS) < 0)
		goto out;
	if (check_rc(t, &u, ups_wait(&u, WAIT_MS, NULL), 0, "exit code") < 0)
		goto out;
	if (!(want = account_as_speedscope(t, acc)) || !(got = speedscope_actions(t, file)))
		goto out;
	CHECK(strstr(want, "O ups_uw_beside"), "the account has no ups_uw_beside: %.300s", want);
	CHECK(strcmp(got, want) == 0, "speedscope differs from the target's account:\n%.1500s\n"
	      "wanted:\n%.1500s", got, want);
out:
	free(want);
	free(got);
	ups_stop(&u, SIGKILL);
	target_kill(&a);
}

const struct vmcase vm_exits_cases[] = {
	{ "exits.return_address_uretprobe_vs_exit_probes",
	  exits_return_address_uretprobe_vs_exit_probes },
	{ "exits.recursion_every_call_timed", exits_recursion_every_call_timed },
	{ "exits.longjmp_unwound_counted", exits_longjmp_unwound_counted },
	{ "exits.method_trace_depth_by_entry_sp", exits_method_trace_depth_by_entry_sp },
	{ NULL, NULL },
};
