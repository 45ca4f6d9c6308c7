/* vmtest_native.c — ELF symbol probes on target_native/target_latency, as
 * test/e2e/test_native.py, test_return.py and test_targets.py check them on the host:
 * exact counts, argument values, pid filtering, process names, return values,
 * durations and the latency histogram.  Counts are the host's, except the burst:
 * 20,000 calls instead of 1,000,000 (every hit is a trap into an emulated kernel). */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "vmtest.h"

#define N 1000
#define BASE 5000
#define N_BURST 20000
#define N_TARGETS 200
#define WAIT_MS 300000

static const struct probe_sum all_n = { N, N, 0, 0 };

/* Every call i of a target started with BASE: (i, base+i, -i, 0x1122334455667788, base, 7),
 * i = 0..n-1 each exactly once. */
static int check_call_args(struct tc *t, const struct results *res, long long pid, long base,
			   long n)
{
	char *seen = calloc((size_t)n, 1);

	for (int k = 0; k < res->nev; k++) {
		const struct ev *e = &res->ev[k];
		if (e->kind != EV_EVENT || (pid && e->pid != pid))
			continue;
		unsigned long long i = e->r[0];
		CHECK(e->has & H_REGS, "event without r0..r5");
		CHECK(i < (unsigned long long)n && !seen[i],
		      "first argument %llu unexpected or seen twice", i);
		seen[i] = 1;
		EQ(e->r[1], (unsigned long long)base + i, "second argument");
		EQ(e->r[2], -i, "third argument");
		EQ(e->r[3], 0x1122334455667788ULL, "fourth argument");
		EQ(e->r[4], base, "fifth argument");
		EQ(e->r[5], 7, "sixth argument");
	}
	for (long i = 0; i < n; i++)
		CHECK(seen[i], "no call with first argument %ld", i);
out:
	free(seen);
	return t->failed ? -1 : 0;
}

static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

static void pid_filtered_call_detail(struct tc *t)
{
	struct target a = { .pid = -1 }, b = { .pid = -1 };
	struct ups u = { .pid = -1 };
	struct results res = { 0 };
	char pid[16], *err = NULL;
	const char *cfg = native_config(t, "ups_target_fn", "call_detail", NULL, 0, NULL);

	CHECK(cfg, "config");
	if (native_start(t, &a, N, BASE, 1, NULL) < 0 ||
	    native_start(t, &b, N, BASE + 1, 1, NULL) < 0)
		goto out;
	snprintf(pid, sizeof(pid), "%d", (int)a.pid);
	const char *args[] = { "run", cfg, "--format", "json", "--pid", pid, NULL };
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0)
		goto out;
	long long apid = a.pid;
	/* The default path: uprobe_multi links on 6.10+ (the 6.12 kernel), the uprobe PMU
	 * before (5.10, 6.1), and a BPF ring buffer (every kernel here has one). */
	err = ups_stderr(&u);
	const char *path = t->env->target_kernel
		? "via tracefs uprobe_events, perfbuf output, legacy objects"
		: kernel_at_least(6, 10) ? "via uprobe_multi links, ringbuf output"
					 : "via uprobe PMU, ringbuf output";
	CHECK(strstr(err, path), "'%s' expected: %.400s", path, err);
	if (target_go(t, &a) < 0 || target_go(t, &b) < 0 || target_wait(t, &a, WAIT_MS) < 0 ||
	    target_wait(t, &b, WAIT_MS) < 0)
		goto out;
	/* It ends by itself: its only target exited. */
	if (check_rc(t, &u, ups_wait(&u, WAIT_MS, NULL), 0, "exit code") < 0)
		goto out;
	if (results_read(t, u.out, &res) < 0)
		goto out;
	EQ(results_count(&res, EV_EVENT, 0), N, "events");
	EQ(results_count(&res, EV_EVENT, apid), N, "events from the target pid");
	if (check_call_args(t, &res, 0, BASE, N) < 0)
		goto out;
	check_summary(t, &res, &all_n, 1);
out:
	free(err);
	ups_stop(&u, SIGKILL);
	target_kill(&a);
	target_kill(&b);
	results_free(&res);
}

static void all_processes_counts_both(struct tc *t)
{
	struct target a = { .pid = -1 }, b = { .pid = -1 };
	struct ups u = { .pid = -1 };
	struct results res = { 0 };
	const char *cfg = native_config(t, "ups_target_fn", "call_detail", NULL, 0, NULL);

	CHECK(cfg, "config");
	if (native_start(t, &a, N, BASE, 1, NULL) < 0 ||
	    native_start(t, &b, N, BASE + 1, 1, NULL) < 0)
		goto out;
	long long apid = a.pid, bpid = b.pid;
	const char *args[] = { "run", cfg, "--format", "json", NULL };
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0)
		goto out;
	if (target_go(t, &a) < 0 || target_go(t, &b) < 0 || target_wait(t, &a, WAIT_MS) < 0 ||
	    target_wait(t, &b, WAIT_MS) < 0)
		goto out;
	if (check_rc(t, &u, ups_stop(&u, SIGINT), 0, "exit code") < 0)
		goto out;
	if (results_read(t, u.out, &res) < 0)
		goto out;
	EQ(results_count(&res, EV_EVENT, apid), N, "events from the first process");
	EQ(results_count(&res, EV_EVENT, bpid), N, "events from the second process");
	check_call_args(t, &res, bpid, BASE + 1, N);
out:
	ups_stop(&u, SIGKILL);
	target_kill(&a);
	target_kill(&b);
	results_free(&res);
}

static void target_process_name_takes_first_match(struct tc *t)
{
	struct target a = { .pid = -1 }, other = { .pid = -1 };
	struct ups u = { .pid = -1 };
	struct results res = { 0 };
	const char *name = "ups-e2e-named-target";
	const char *cfg = native_config(t, "ups_target_fn", "call_detail", name, 0, NULL);

	CHECK(cfg, "config");
	/* The same binary under another name is not counted. */
	if (native_start(t, &a, N, BASE, 1, name) < 0 ||
	    native_start(t, &other, N, BASE + 1, 1, NULL) < 0)
		goto out;
	long long apid = a.pid;
	const char *args[] = { "run", cfg, "--format", "json", NULL };
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0)
		goto out;
	if (target_go(t, &a) < 0 || target_go(t, &other) < 0 || target_wait(t, &a, WAIT_MS) < 0 ||
	    target_wait(t, &other, WAIT_MS) < 0)
		goto out;
	if (check_rc(t, &u, ups_wait(&u, WAIT_MS, NULL), 0, "exit code") < 0)
		goto out;
	if (results_read(t, u.out, &res) < 0)
		goto out;
	EQ(results_count(&res, EV_EVENT, 0), N, "events");
	EQ(results_count(&res, EV_EVENT, apid), N, "events of the named process (pids seen)");
out:
	ups_stop(&u, SIGKILL);
	target_kill(&a);
	target_kill(&other);
	results_free(&res);
}

static void call_timestamp_event_ids(struct tc *t)
{
	struct target a = { .pid = -1 };
	struct ups u = { .pid = -1 };
	struct results res = { 0 };
	char pid[16];
	const char *cfg = native_config(t, "ups_target_second", "call_timestamp_3", NULL, 0, NULL);

	CHECK(cfg, "config");
	if (native_start(t, &a, 10, 42, 4, NULL) < 0)
		goto out;
	snprintf(pid, sizeof(pid), "%d", (int)a.pid);
	const char *args[] = { "run", cfg, "--format", "json", "--pid", pid, NULL };
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0 ||
	    target_go(t, &a) < 0 || target_wait(t, &a, WAIT_MS) < 0)
		goto out;
	if (check_rc(t, &u, ups_wait(&u, WAIT_MS, NULL), 0, "exit code") < 0)
		goto out;
	if (results_read(t, u.out, &res) < 0)
		goto out;
	EQ(results_count(&res, EV_EVENT, 0), 4, "one event per thread");
	long long tids[4];
	int ntids = 0;
	for (int i = 0; i < res.nev; i++) {
		const struct ev *e = &res.ev[i];
		if (e->kind != EV_EVENT)
			continue;
		CHECK(e->has & H_EVENT_ID, "event without an event id");
		EQ(e->event_id, 3, "event id");
		CHECK((e->has & H_TIMESTAMP) && e->timestamp_ns > 0, "timestamp");
		bool dup = false;
		for (int k = 0; k < ntids; k++)
			dup |= tids[k] == e->tid;
		if (!dup)
			tids[ntids++] = e->tid;
	}
	EQ(ntids, 4, "distinct threads");
out:
	ups_stop(&u, SIGKILL);
	target_kill(&a);
	results_free(&res);
}

static void burst_loses_nothing(struct tc *t)
{
	struct target a = { .pid = -1 };
	struct ups u = { .pid = -1 };
	struct results res = { 0 };
	char pid[16];
	const char *cfg = native_config(t, "ups_target_fn", "call_detail", NULL, 0, NULL);

	CHECK(cfg, "config");
	if (native_start(t, &a, N_BURST, 1, 1, NULL) < 0)
		goto out;
	snprintf(pid, sizeof(pid), "%d", (int)a.pid);
	const char *args[] = { "run", cfg, "--format", "json", "--pid", pid, NULL };
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0 ||
	    target_go(t, &a) < 0 || target_wait(t, &a, WAIT_MS) < 0)
		goto out;
	if (check_rc(t, &u, ups_wait(&u, WAIT_MS, NULL), 0, "exit code") < 0)
		goto out;
	if (results_read(t, u.out, &res) < 0)
		goto out;
	EQ(res.lines, N_BURST + 1, "events written, then the summary");
	EQ(results_count(&res, EV_EVENT, 0), N_BURST, "events");
	const struct probe_sum want = { N_BURST, N_BURST, 0, 0 };
	check_summary(t, &res, &want, 1);
out:
	ups_stop(&u, SIGKILL);
	target_kill(&a);
	results_free(&res);
}

/* --- return values and latency (test_return.py) ---------------------------------------------- */

static const char *latency_config(struct tc *t)
{
	static char path[VM_PATH_MAX];
	char exe[VM_PATH_MAX], text[1024];

	target_path(t, "target_latency", exe);
	snprintf(text, sizeof(text),
		 "tasks {\n"
		 "  probe_configs {\n"
		 "    bpf_name: \"prog_Uprobestats_uretprobe_call_return\"\n"
		 "    file_paths: \"%s\"\n"
		 "    method_signature: \"ups_sleep_fn\"\n"
		 "  }\n"
		 "  probe_configs {\n"
		 "    bpf_name: \"prog_Uprobestats_uretprobe_call_latency\"\n"
		 "    file_paths: \"%s\"\n"
		 "    method_signature: \"ups_sleep_fn\"\n"
		 "  }\n"
		 "}\n", exe, exe);
	tc_path(t, "latency.textproto", path);
	return tc_write(t, path, text) == 0 ? path : NULL;
}

/* The in-kernel latency histogram on stderr: rows "LO -> HI : COUNT |stars|".  The host
 * test wants all calls in the 10 ms slot (2^23..2^24-1 ns).  Under emulation the guest
 * clock is the host's and the vCPU threads share the host's cores, so a 10 ms sleep may
 * take much longer, and the two uretprobe programs' timestamps of one call may differ by
 * milliseconds.  What holds: every call counted, none in a slot below 8 ms (a call
 * cannot take less than its sleep) or above 1 s. */
static void check_histogram(struct tc *t, const char *err, int count)
{
	unsigned long long total = 0;
	int rows = 0;

	for (const char *line = err; line; line = strchr(line, '\n')) {
		unsigned long long lo, hi, n;
		line += *line == '\n';
		if (sscanf(line, " %llu -> %llu : %llu |", &lo, &hi, &n) != 3)
			continue;
		rows++;
		total += n;
		CHECK(n == 0 || (lo >= 8388608 && hi < 1073741824ULL),
		      "%llu calls in the slot %llu..%llu ns", n, lo, hi);
	}
	CHECK(rows > 0, "no latency histogram on stderr");
	EQ(total, count, "calls counted in the histogram");
out:
	return;
}

static void return_values_durations_and_histogram(struct tc *t)
{
	const int count = 20, ms = 10;
	struct target a = { .pid = -1 };
	struct ups u = { .pid = -1 };
	struct results res = { 0 };
	char pid[16], c[16], m[16];
	char *err = NULL;
	const char *cfg = latency_config(t);

	CHECK(cfg, "config");
	snprintf(c, sizeof(c), "%d", count);
	snprintf(m, sizeof(m), "%d", ms);
	const char *targs[] = { c, m, NULL };
	if (target_start(t, &a, "target_latency", NULL, targs) < 0)
		goto out;
	snprintf(pid, sizeof(pid), "%d", (int)a.pid);
	const char *args[] = { "run", cfg, "--format", "json", "--pid", pid, NULL };
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0 ||
	    target_go(t, &a) < 0 || target_wait(t, &a, WAIT_MS) < 0)
		goto out;
	if (check_rc(t, &u, ups_wait(&u, WAIT_MS, NULL), 0, "exit code") < 0)
		goto out;
	if (results_read(t, u.out, &res) < 0)
		goto out;
	EQ(results_count(&res, EV_RETURN, 0), count, "return events");
	for (int i = 0; i < res.nev; i++) {
		const struct ev *e = &res.ev[i];
		if (e->kind != EV_RETURN)
			continue;
		EQ(e->return_value, ms * 3, "return value");
		CHECK(e->has & H_DURATION, "return event without a duration");
		EQ(e->top_duration_ns, e->duration_ns, "event duration");
		/* The host allows up to 5x the sleep; an emulated sleep may take far longer. */
		CHECK(e->duration_ns >= ms * 1000000ULL && e->duration_ns < 1000000000ULL,
		      "duration %llu ns for a %d ms sleep", e->duration_ns, ms);
	}
	err = ups_stderr(&u);
	check_histogram(t, err, count);
out:
	free(err);
	ups_stop(&u, SIGKILL);
	target_kill(&a);
	results_free(&res);
}

/* --- process targeting (test_targets.py) ----------------------------------------------------- */

/* The pid in "process N started; attached" on stderr, waited for. */
static long long started_pid(struct tc *t, struct ups *u)
{
	const char *marker = " started; attached";

	if (ups_wait_for(t, u, marker, 60000) < 0)
		return -1;
	char *err = ups_stderr(u);
	const char *m = strstr(err, marker), *p = m;
	while (p > err && p[-1] >= '0' && p[-1] <= '9')
		p--;
	long long pid = p < m && p - err >= 8 && strncmp(p - 8, "process ", 8) == 0 ?
				strtoll(p, NULL, 10) : -1;
	free(err);
	if (pid < 0)
		tc_fail(t, "no 'process N started; attached' on stderr");
	return pid;
}

static void on_start_attaches_when_it_appears(struct tc *t)
{
	struct target a = { .pid = -1 }, other = { .pid = -1 };
	struct ups u = { .pid = -1 };
	struct results res = { 0 };
	const char *name = "ups-e2e-late-starter";
	const char *cfg =
	    native_config(t, "ups_target_fn", "call_detail", name, 30,
			  "  target_process_selection: SPECIFIC_APP_PROCESS_ON_START");

	CHECK(cfg, "config");
	const char *args[] = { "run", cfg, "--format", "json", NULL };
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0)
		goto out;
	/* Started after uprobestats, as Android starts an app: forked from a process named
	 * zygote64, named when it execs.  (Forked from a process with a final name, a child
	 * that execs later than uprobestats' first look at it is taken for that process
	 * and never looked at again.)  A same-binary process with another name first. */
	if (tc_proc_name(t, "zygote64") < 0)
		goto out;
	native_start(t, &other, N_TARGETS, 1, 1, NULL);
	native_start(t, &a, N_TARGETS, 7, 1, name);
	tc_proc_name(t, NULL);
	if (t->failed)
		goto out;
	long long apid = a.pid, pid = started_pid(t, &u);
	if (pid < 0)
		goto out;
	EQ(pid, apid, "the process attached to");
	if (target_go(t, &other) < 0 || target_go(t, &a) < 0 ||
	    target_wait(t, &other, WAIT_MS) < 0 || target_wait(t, &a, WAIT_MS) < 0)
		goto out;
	/* The task ends when its process exits. */
	if (check_rc(t, &u, ups_wait(&u, WAIT_MS, NULL), 0, "exit code") < 0)
		goto out;
	if (results_read(t, u.out, &res) < 0)
		goto out;
	EQ(results_count(&res, EV_EVENT, 0), N_TARGETS, "events");
	EQ(results_count(&res, EV_EVENT, apid), N_TARGETS, "events of the named process");
	const struct probe_sum want = { N_TARGETS, N_TARGETS, 0, 0 };
	check_summary(t, &res, &want, 1);
out:
	ups_stop(&u, SIGKILL);
	target_kill(&a);
	target_kill(&other);
	results_free(&res);
}

static void never_starts_is_exit_6(struct tc *t)
{
	char *err = NULL;
	const char *cfg =
	    native_config(t, "ups_target_fn", "call_detail", "ups-e2e-never", 1,
			  "  target_process_selection: SPECIFIC_APP_PROCESS_ON_START");

	CHECK(cfg, "config");
	const char *args[] = { "run", cfg, "--format", "json", NULL };
	int rc = ups_run(t, args, 120000, &err);
	EQ(rc, 6, "exit code");
	CHECK(strstr(err, "no process named 'ups-e2e-never' started within 1 s"),
	      "message: %.400s", err);
out:
	free(err);
}

static void missing_target_is_exit_6(struct tc *t)
{
	char *err = NULL;
	const char *cfg = native_config(t, "ups_target_fn", "call_detail", "ups-e2e-not-running",
					0, NULL);

	CHECK(cfg, "config");
	const char *args[] = { "run", cfg, NULL };
	int rc = ups_run(t, args, 120000, &err);
	EQ(rc, 6, "exit code");
	CHECK(strstr(err, "no running process named 'ups-e2e-not-running'"), "message: %.400s",
	      err);
	CHECK(!strstr(err, "attached"), "nothing attached: %.400s", err);
out:
	free(err);
}

static void all_matches_takes_every_process(struct tc *t)
{
	struct target a = { .pid = -1 }, b = { .pid = -1 };
	struct ups u = { .pid = -1 };
	struct results res = { 0 };
	char *err = NULL;
	const char *name = "ups-e2e-twins";
	const char *cfg = native_config(t, "ups_target_fn", "call_detail", name, 0, NULL);

	CHECK(cfg, "config");
	if (native_start(t, &a, N_TARGETS, 1, 1, name) < 0 ||
	    native_start(t, &b, N_TARGETS, 2, 1, name) < 0)
		goto out;
	long long apid = a.pid, bpid = b.pid;
	const char *args[] = { "run", cfg, "--format", "json", "--all-matches", NULL };
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0)
		goto out;
	err = ups_stderr(&u);
	CHECK(strstr(err, "in 2 place(s)"), "two attachments: %.400s", err);
	if (target_go(t, &a) < 0 || target_go(t, &b) < 0 || target_wait(t, &a, WAIT_MS) < 0 ||
	    target_wait(t, &b, WAIT_MS) < 0)
		goto out;
	if (check_rc(t, &u, ups_wait(&u, WAIT_MS, NULL), 0, "exit code") < 0)
		goto out;
	if (results_read(t, u.out, &res) < 0)
		goto out;
	EQ(results_count(&res, EV_EVENT, apid), N_TARGETS, "first twin");
	EQ(results_count(&res, EV_EVENT, bpid), N_TARGETS, "second twin");
out:
	free(err);
	ups_stop(&u, SIGKILL);
	target_kill(&a);
	target_kill(&b);
	results_free(&res);
}

static void target_exiting_mid_run_is_reported(struct tc *t)
{
	struct target a = { .pid = -1 };
	struct ups u = { .pid = -1 };
	char pid[16];
	char *err = NULL;
	const char *cfg = native_config(t, "ups_target_fn", "call_detail", NULL, 60, NULL);

	CHECK(cfg, "config");
	if (native_start(t, &a, N_TARGETS, 1, 1, NULL) < 0)
		goto out;
	snprintf(pid, sizeof(pid), "%d", (int)a.pid);
	const char *args[] = { "run", cfg, "--format", "json", "--pid", pid, NULL };
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0)
		goto out;
	target_kill(&a);
	if (check_rc(t, &u, ups_wait(&u, 30000, NULL), 0, "exit code") < 0)
		goto out;
	err = ups_stderr(&u);
	CHECK(strstr(err, "every target process has exited"), "%.400s", err);
out:
	free(err);
	ups_stop(&u, SIGKILL);
	target_kill(&a);
}

static int count_task_pid(const struct results *res, unsigned long long task, long long pid)
{
	int n = 0;

	for (int i = 0; i < res->nev; i++)
		n += res->ev[i].kind == EV_EVENT && res->ev[i].task_index == task &&
		     res->ev[i].pid == pid;
	return n;
}

static void two_tasks_run_together_in_one_loop(struct tc *t)
{
	struct target a = { .pid = -1 }, b = { .pid = -1 };
	struct ups u = { .pid = -1 };
	struct results res = { 0 };
	char text[8192], cfg[VM_PATH_MAX];
	int n1 = native_task(t, text, sizeof(text), "ups_target_fn", "call_detail",
			     "ups-e2e-task-a", 0, NULL);

	CHECK(n1 > 0 && native_task(t, text + n1, sizeof(text) - (size_t)n1, "ups_target_second",
				    "call_timestamp_2", "ups-e2e-task-b", 0, NULL) > 0,
	      "config");
	if (tc_write(t, tc_path(t, "two-tasks.textproto", cfg), text) < 0 ||
	    native_start(t, &a, N_TARGETS, 1, 1, "ups-e2e-task-a") < 0 ||
	    native_start(t, &b, N_TARGETS, 2, 1, "ups-e2e-task-b") < 0)
		goto out;
	long long apid = a.pid, bpid = b.pid;
	const char *args[] = { "run", cfg, "--format", "json", NULL };
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0)
		goto out;
	if (target_go(t, &a) < 0 || target_go(t, &b) < 0 || target_wait(t, &a, WAIT_MS) < 0 ||
	    target_wait(t, &b, WAIT_MS) < 0)
		goto out;
	/* Each task ends when its process exits. */
	if (check_rc(t, &u, ups_wait(&u, WAIT_MS, NULL), 0, "exit code") < 0 ||
	    results_read(t, u.out, &res) < 0)
		goto out;
	EQ(count_task_pid(&res, 0, apid), N_TARGETS, "task 0 events");
	EQ(count_task_pid(&res, 1, bpid), 1, "task 1 events");
	const struct probe_sum want[2] = { { N_TARGETS, N_TARGETS, 0, 0 }, { 1, 1, 0, 0 } };
	check_summary(t, &res, want, 2);
out:
	ups_stop(&u, SIGKILL);
	target_kill(&a);
	target_kill(&b);
	results_free(&res);
}

static void sighup_detaches_cleanly(struct tc *t)
{
	struct target a = { .pid = -1 };
	struct ups u = { .pid = -1 };
	struct results res = { 0 };
	char pid[16];
	const char *cfg = native_config(t, "ups_target_fn", "call_detail", NULL, 0, NULL);

	CHECK(cfg, "config");
	if (native_start(t, &a, N_TARGETS, 1, 1, NULL) < 0)
		goto out;
	snprintf(pid, sizeof(pid), "%d", (int)a.pid);
	const char *args[] = { "run", cfg, "--format", "json", "--pid", pid, NULL };
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0)
		goto out;
	if (check_rc(t, &u, ups_stop(&u, SIGHUP), 0, "exit code") < 0 ||
	    results_read(t, u.out, &res) < 0)
		goto out;
	EQ(res.nsummary, 1, "summary written");
out:
	ups_stop(&u, SIGKILL);
	target_kill(&a);
	results_free(&res);
}

const struct vmcase vm_native_cases[] = {
	{ "native.pid_filtered_call_detail", pid_filtered_call_detail },
	{ "native.all_processes_counts_both", all_processes_counts_both },
	{ "native.target_process_name_takes_first_match", target_process_name_takes_first_match },
	{ "native.call_timestamp_event_ids", call_timestamp_event_ids },
	{ "native.burst_of_20000_calls_loses_nothing", burst_loses_nothing },
	{ "return.return_values_durations_and_histogram", return_values_durations_and_histogram },
	{ "targets.on_start_attaches_when_it_appears", on_start_attaches_when_it_appears },
	{ "targets.process_that_never_starts_is_exit_6", never_starts_is_exit_6 },
	{ "targets.missing_target_process_is_exit_6", missing_target_is_exit_6 },
	{ "targets.all_matches_takes_every_process", all_matches_takes_every_process },
	{ "targets.target_exiting_mid_run_is_reported", target_exiting_mid_run_is_reported },
	{ "targets.two_tasks_run_together_in_one_loop", two_tasks_run_together_in_one_loop },
	{ "targets.sighup_detaches_cleanly", sighup_detaches_cleanly },
	{ NULL, NULL },
};
