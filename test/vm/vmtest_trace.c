/* vmtest_trace.c — `uprobestats trace` with a Java class glob over real arm64 ART code,
 * as test/e2e/test_tracecmd.py checks the x86_64 case on the host.  target_art_exits
 * maps the Android 13 arm64 odex and calls LocationProviderBase.isEnabled() and
 * setAllowed(boolean) (frames, stack maps, setAllowed with two returns) CALLS times
 * each, alternating, on a fake ART thread.  `trace ODEX:LocationProviderBase.*` must
 * say what the glob matched and left out, then record exactly those calls: the
 * arguments at the entry; with --ret, exit probes giving isEnabled's return values and
 * durations inside the target's own bounds, in call order without overlap; and a
 * profile of exactly the two methods with their calls and times.  In the legacy round
 * the trace gets --target-kernel too (legacy objects, perf buffer, tracefs). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmjson.h"
#include "vmproc.h"
#include "vmtest.h"

#define CALLS 100
#define SLACK_NS 2000ULL
#define ART_METHOD 0x7a7a7a70ULL
#define WAIT_MS 300000
#define LPB "com.android.location.provider.LocationProviderBase"
#define IS_ENABLED "boolean " LPB ".isEnabled()"
#define SET_ALLOWED "void " LPB ".setAllowed(boolean)"
/* The glob over the Android 13 arm64 odex (as `methods --match` lists it): 22 methods,
 * 5 sharing their code with methods outside the class, 1 abstract. */
#define MATCHED "matched 22 method(s) in 1 file(s), 16 to probe; left out 5 code shared " \
		"with a method outside the pattern; left out 1 abstract or native"
#define ATTACHED "attached 16 probe(s)"
#define PROBES 16

/* One record of the run, reduced to what the checks read. */
struct trace_rec {
	int is_enabled;                     /* else setAllowed */
	int is_return;                      /* else an entry event */
	unsigned long long r0, r1, r2;      /* entry: x0 (ArtMethod*), x1 (this), x2 */
	unsigned long long ret, dur, boot;  /* return: value, duration, boot_ns at the exit */
};

struct trace_out {
	struct trace_rec rec[2 * CALLS + 8];
	int n;
	unsigned long long hits[2], delivered[2]; /* from the summary: isEnabled, setAllowed */
	int summaries, probes, others_hit;
};

/* Which of the two called methods NAME is: 1 isEnabled, 0 setAllowed, -1 another. */
static int method_index(const struct jnode *name)
{
	return json_str_is(name, IS_ENABLED) ? 1 : json_str_is(name, SET_ALLOWED) ? 0 : -1;
}

/* The same for the method the record's "probe" names. */
static int which_method(const struct jdoc *d, const struct jnode *obj)
{
	return method_index(json_get(d, json_get(d, obj, "probe"), "method"));
}

static int read_record(struct tc *t, const struct jdoc *d, struct trace_out *o)
{
	const struct jnode *root = &d->n[0], *f = json_get(d, root, "fields");
	const struct jnode *type = json_get(d, root, "type");
	struct trace_rec *r = &o->rec[o->n];
	int m = which_method(d, root);

	CHECK(m >= 0, "a record of a method the target never called");
	CHECK(o->n < (int)(sizeof(o->rec) / sizeof(o->rec[0])), "more records than calls");
	memset(r, 0, sizeof(*r));
	r->is_enabled = m;
	r->is_return = json_str_is(type, "return");
	if (r->is_return) {
		CHECK(json_u64(json_get(d, f, "return_value"), &r->ret) == 0 &&
		      json_u64(json_get(d, f, "duration_ns"), &r->dur) == 0 &&
		      json_u64(json_get(d, root, "boot_ns"), &r->boot) == 0,
		      "return record %d without return_value, duration_ns or boot_ns", o->n);
	} else {
		CHECK(json_u64(json_get(d, f, "r0"), &r->r0) == 0 &&
		      json_u64(json_get(d, f, "r1"), &r->r1) == 0 &&
		      json_u64(json_get(d, f, "r2"), &r->r2) == 0,
		      "entry record %d without r0..r2", o->n);
	}
	o->n++;
	return 0;
out:
	return -1;
}

static int read_summary(struct tc *t, const struct jdoc *d, struct trace_out *o)
{
	const struct jnode *probes = json_get(d, &d->n[0], "probes"), *p;

	o->summaries++;
	o->probes = json_count(d, probes);
	for (int i = 0; (p = json_at(d, probes, i)); i++) {
		unsigned long long hits = 0, delivered = 0;
		int m = which_method(d, p);

		CHECK(json_u64(json_get(d, p, "hits"), &hits) == 0 &&
		      json_u64(json_get(d, p, "delivered"), &delivered) == 0,
		      "summary probe %d without hits or delivered", i);
		if (m < 0) {
			o->others_hit += hits != 0;
			continue;
		}
		o->hits[m] += hits;
		o->delivered[m] += delivered;
	}
	return 0;
out:
	return -1;
}

/* The JSON Lines of the run into O: events, returns and the summary. */
static int read_trace_out(struct tc *t, const char *path, struct trace_out *o)
{
	size_t len;
	char *text = read_file(path, &len);
	struct jdoc d = { 0 };
	int rc = 0, lineno = 0;

	memset(o, 0, sizeof(*o));
	for (char *line = text; rc == 0 && line < text + len;) {
		char *nl = memchr(line, '\n', (size_t)(text + len - line));
		size_t n = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
		const struct jnode *type;

		lineno++;
		if (json_parse(&d, line, n) < 0) {
			tc_fail(t, "output line %d is not JSON: %.200s", lineno, line);
			rc = -1;
			break;
		}
		type = json_get(&d, &d.n[0], "type");
		if (json_str_is(type, "event") || json_str_is(type, "return"))
			rc = read_record(t, &d, o);
		else if (json_str_is(type, "summary"))
			rc = read_summary(t, &d, o);
		line += n + 1;
	}
	json_free(&d);
	free(text);
	return rc;
}

/* Entry records: x0 the ArtMethod* stand-in, x1 the same `this` every call, x2 0 for
 * isEnabled() and setAllowed's argument, (i >> 1) & 1 on its call i. */
static void check_entries(struct tc *t, const struct trace_out *o)
{
	int k[2] = { 0, 0 };
	unsigned long long self = 0;

	for (int i = 0; i < o->n; i++) {
		const struct trace_rec *r = &o->rec[i];
		int m = r->is_enabled;

		CHECK(!r->is_return, "a return record without --ret");
		EQ(r->r0, ART_METHOD, "x0 (the ArtMethod*)");
		if (!self)
			self = r->r1;
		EQ(r->r1, self, "x1 (this) the same on every call");
		EQ(r->r2, m ? 0 : (unsigned long long)((k[0] >> 1) & 1),
		   m ? "isEnabled(): x2" : "setAllowed(boolean): x2 (the argument)");
		k[m]++;
	}
	EQ(k[1], CALLS, "isEnabled() entry records");
	EQ(k[0], CALLS, "setAllowed(boolean) entry records");
out:
	return;
}

/* Return records against the target's calls, in order: the same method, a duration > 0
 * between the time in its callees and the caller's measurement, isEnabled's value; and
 * each call starting after the one before it returned (the target calls them one after
 * the other, so the slices are ordered and never overlap). */
static void check_returns(struct tc *t, const struct trace_out *o, const struct art_call *c,
			  int nc, unsigned long long sum[2])
{
	unsigned long long prev_end = 0;
	int i;

	CHECK(o->n == nc, "%d return records for %d calls", o->n, nc);
	for (i = 0; i < o->n; i++) {
		const struct trace_rec *r = &o->rec[i];

		CHECK(r->is_return, "an entry record with --ret (record %d)", i);
		CHECK(r->is_enabled == c[i].is_enabled, "record %d is of the other method", i);
		CHECK(r->dur > 0 && r->dur + SLACK_NS >= c[i].inner &&
		      r->dur <= c[i].outer + SLACK_NS,
		      "call %d (%s) took %llu ns; the target measured %llu ns in its callees, "
		      "%llu ns around the call", i, r->is_enabled ? "isEnabled" : "setAllowed",
		      r->dur, c[i].inner, c[i].outer);
		CHECK(r->boot > r->dur && r->boot - r->dur >= prev_end,
		      "call %d starts before call %d returned", i, i - 1);
		prev_end = r->boot;
		if (r->is_enabled)
			EQ(r->ret, c[i].ret, "isEnabled() return value");
		sum[r->is_enabled] += r->dur;
	}
out:
	return;
}

/* The profile (--profile-format json): exactly the two methods, CALLS calls each; with
 * --ret every call returned, none unwound, total = self = the records' sum (neither
 * calls the other), and ordered percentiles; without, no times. */
static void check_profile(struct tc *t, const char *path, int ret,
			  const unsigned long long sum[2])
{
	char *text = read_file(path, NULL);
	struct jdoc d = { 0 };
	const struct jnode *methods, *row, *complete;
	int seen[2] = { 0, 0 };

	CHECK(json_parse(&d, text, strlen(text)) == 0, "the profile is not one JSON object");
	CHECK(json_str_is(json_get(&d, &d.n[0], "type"), "profile"), "no profile record");
	complete = json_get(&d, &d.n[0], "complete");
	CHECK(complete && complete->type == J_BOOL && !strncmp(complete->s, "true", 4),
	      "profile incomplete");
	methods = json_get(&d, &d.n[0], "methods");
	EQ(json_count(&d, methods), 2, "profiled methods");
	for (int i = 0; (row = json_at(&d, methods, i)); i++) {
		unsigned long long calls, returns, total, self, unwound, p50, p99, max;
		int m = method_index(json_get(&d, row, "method"));

		CHECK(m >= 0 && !seen[m], "profile row %d: another method, or twice", i);
		seen[m] = 1;
		CHECK(json_u64(json_get(&d, row, "calls"), &calls) == 0 &&
		      json_u64(json_get(&d, row, "returns"), &returns) == 0 &&
		      json_u64(json_get(&d, row, "total_ns"), &total) == 0 &&
		      json_u64(json_get(&d, row, "self_ns"), &self) == 0 &&
		      json_u64(json_get(&d, row, "unwound"), &unwound) == 0 &&
		      json_u64(json_get(&d, row, "p50_ns"), &p50) == 0 &&
		      json_u64(json_get(&d, row, "p99_ns"), &p99) == 0 &&
		      json_u64(json_get(&d, row, "max_ns"), &max) == 0,
		      "profile row %d lacks a field", i);
		EQ(calls, CALLS, "profile calls");
		EQ(returns, ret ? CALLS : 0, "profile returns");
		EQ(unwound, 0, "profile unwound");
		EQ(total, ret ? sum[m] : 0, "profile total_ns (the records' sum)");
		EQ(self, total, "profile self_ns (no nesting between the two)");
		if (ret)
			CHECK(p50 > 0 && p50 <= p99 && p99 <= max && max <= total,
			      "percentiles out of order: p50 %llu, p99 %llu, max %llu", p50, p99,
			      max);
	}
out:
	json_free(&d);
	free(text);
}

static void trace_class_glob(struct tc *t, int ret)
{
	static struct art_call calls[2 * CALLS + 8];
	static struct trace_out o;
	const struct vmenv *env = t->env;
	struct target a = { .pid = -1 };
	struct ups u = { .pid = -1 };
	char pid[16], ie[32], sa[32], n[16], out[VM_PATH_MAX], prof[VM_PATH_MAX];
	char pattern[VM_PATH_MAX + 64];
	unsigned long long sum[2] = { 0, 0 };
	char *err = NULL;
	int nc, argc = 0;

	CHECK(env->art_is_enabled_off && env->art_set_allowed_off, "no --art-exits offsets given");
	snprintf(ie, sizeof(ie), "%lu", env->art_is_enabled_off);
	snprintf(sa, sizeof(sa), "%lu", env->art_set_allowed_off);
	snprintf(n, sizeof(n), "%d", CALLS);
	tc_path(t, "calls.jsonl", out);
	tc_path(t, "profile.json", prof);
	snprintf(pattern, sizeof(pattern), "%s:LocationProviderBase.*", env->art_odex);
	const char *targs[] = { env->art_odex, ie, sa, n, out, NULL };
	if (target_start(t, &a, "target_art_exits", NULL, targs) < 0)
		goto out;
	snprintf(pid, sizeof(pid), "%d", (int)a.pid);
	const char *args[16] = { "trace", "--pid", pid, "--format", "json", "--profile-format",
				 "json", "--profile", prof };
	argc = 9;
	if (ret)
		args[argc++] = "--ret";
	if (env->target_kernel) {
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
	err = ups_stderr(&u);
	CHECK(strstr(err, MATCHED), "'%s' expected: %.600s", MATCHED, err);
	CHECK(strstr(err, ATTACHED), "'%s' expected: %.600s", ATTACHED, err);
	if (read_trace_out(t, u.out, &o) < 0)
		goto out;
	EQ(o.summaries, 1, "summary records");
	EQ(o.probes, PROBES, "probes in the summary");
	EQ(o.others_hit, 0, "probes of uncalled methods with hits");
	EQ(o.hits[1], CALLS, "isEnabled() hits");
	EQ(o.hits[0], CALLS, "setAllowed(boolean) hits");
	EQ(o.delivered[1], CALLS, "isEnabled() delivered");
	EQ(o.delivered[0], CALLS, "setAllowed(boolean) delivered");
	if (!ret) {
		check_entries(t, &o);
	} else {
		nc = read_art_calls(t, out, calls, (int)(sizeof(calls) / sizeof(calls[0])));
		EQ(nc, 2 * CALLS, "calls the target made");
		check_returns(t, &o, calls, nc, sum);
	}
	if (!t->failed)
		check_profile(t, prof, ret, sum);
out:
	free(err);
	ups_stop(&u, SIGKILL);
	target_kill(&a);
}

static void art_trace_class_glob_entries(struct tc *t)
{
	trace_class_glob(t, 0);
}

static void art_trace_class_glob_ret(struct tc *t)
{
	trace_class_glob(t, 1);
}

const struct vmcase vm_trace_cases[] = {
	{ "art.trace_class_glob_entries_and_profile", art_trace_class_glob_entries },
	{ "art.trace_class_glob_ret_values_durations_profile", art_trace_class_glob_ret },
	{ NULL, NULL },
};
