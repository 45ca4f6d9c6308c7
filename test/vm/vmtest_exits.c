/* vmtest_exits.c — exit probes on arm64, as test/e2e/test_exits.py checks them on the
 * host: target_exits' function that checks its own return address (x30 / the saved
 * lr) sees the uretprobe's trampoline on every call and its real caller under exit
 * probes; 10-deep recursion gives every call a record whose duration lies between
 * the target's own measurements; longjmp out of nested calls counts them as unwound. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

const struct vmcase vm_exits_cases[] = {
	{ "exits.return_address_uretprobe_vs_exit_probes",
	  exits_return_address_uretprobe_vs_exit_probes },
	{ "exits.recursion_every_call_timed", exits_recursion_every_call_timed },
	{ "exits.longjmp_unwound_counted", exits_longjmp_unwound_counted },
	{ NULL, NULL },
};
