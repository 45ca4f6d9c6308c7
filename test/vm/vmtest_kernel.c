/* vmtest_kernel.c — the kernel paths, as test/e2e/test_kernel_paths.py and
 * test_return.py's perf-buffer test check them on the host: perf event array output
 * (--force-perfbuf), attaching through tracefs uprobe_events (--force-tracefs) and
 * cleaning up after itself and after a kill -9, and loading without kernel BTF. */
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vmtest.h"

#define N_PERFBUF 20000
#define N 500
#define WAIT_MS 300000
#define TRACEFS_EVENTS "/sys/kernel/tracing/uprobe_events"

static void forced_perf_buffer_delivers_everything(struct tc *t)
{
	struct target a = { .pid = -1 };
	struct ups u = { .pid = -1 };
	struct results res = { 0 };
	char pid[16], *err = NULL, *seen = calloc(N_PERFBUF, 1);
	const char *cfg = native_config(t, "ups_target_fn", "call_detail", NULL, 0, NULL);

	CHECK(cfg, "config");
	if (native_start(t, &a, N_PERFBUF, 9, 1, NULL) < 0)
		goto out;
	snprintf(pid, sizeof(pid), "%d", (int)a.pid);
	const char *args[] = { "run", cfg, "--format", "json", "--force-perfbuf", "--pid", pid,
			       NULL };
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0)
		goto out;
	err = ups_stderr(&u);
	CHECK(strstr(err, "perfbuf output"), "perf buffer in use: %.400s", err);
	if (target_go(t, &a) < 0 || target_wait(t, &a, WAIT_MS) < 0)
		goto out;
	if (check_rc(t, &u, ups_wait(&u, WAIT_MS, NULL), 0, "exit code") < 0 ||
	    results_read(t, u.out, &res) < 0)
		goto out;
	EQ(results_count(&res, EV_EVENT, 0), N_PERFBUF, "events");
	for (int i = 0; i < res.nev; i++) {
		unsigned long long r0 = res.ev[i].r[0];
		if (res.ev[i].kind != EV_EVENT)
			continue;
		CHECK(r0 < N_PERFBUF && !seen[r0], "first argument %llu unexpected or seen twice",
		      r0);
		seen[r0] = 1;
	}
out:
	free(seen);
	free(err);
	ups_stop(&u, SIGKILL);
	target_kill(&a);
	results_free(&res);
}

/* Lines of uprobe_events that are ours (named uprobestats_*). */
static int our_tracefs_events(void)
{
	char *text = read_file(TRACEFS_EVENTS, NULL);
	int n = 0;

	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		n += strstr(line, "uprobestats_") != NULL;
		line = nl ? nl + 1 : NULL;
	}
	free(text);
	return n;
}

/* Lines of uprobe_events of the run with this pid (group uprobestats_<pid>_<start>). */
static int run_tracefs_events(pid_t pid)
{
	char *text = read_file(TRACEFS_EVENTS, NULL), tag[48];
	int n = 0;

	snprintf(tag, sizeof(tag), "uprobestats_%d_", (int)pid);
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		n += strstr(line, tag) != NULL;
		line = nl ? nl + 1 : NULL;
	}
	free(text);
	return n;
}

static int pins_found;

static int count_pin(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	pins_found += strstr(path + ftw->base, "uprobestats") != NULL;
	return 0;
}

static int our_bpffs_pins(void)
{
	pins_found = 0;
	nftw("/sys/fs/bpf", count_pin, 16, FTW_PHYS);
	return pins_found;
}

static void forced_tracefs_attaches_and_cleans_up(struct tc *t)
{
	struct target a = { .pid = -1 };
	struct ups u = { .pid = -1 };
	struct results res = { 0 };
	char pid[16], *err = NULL;
	const char *cfg = native_config(t, "ups_target_fn", "call_detail", NULL, 0, NULL);

	CHECK(cfg, "config");
	if (native_start(t, &a, N, 3, 1, NULL) < 0)
		goto out;
	snprintf(pid, sizeof(pid), "%d", (int)a.pid);
	const char *args[] = { "run", cfg, "--format", "json", "--force-tracefs", "--pid", pid,
			       NULL };
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0)
		goto out;
	err = ups_stderr(&u);
	CHECK(strstr(err, "via tracefs uprobe_events"), "%.400s", err);
	EQ(our_tracefs_events(), 1, "events of ours in uprobe_events while attached");
	if (target_go(t, &a) < 0 || target_wait(t, &a, WAIT_MS) < 0)
		goto out;
	if (check_rc(t, &u, ups_wait(&u, WAIT_MS, NULL), 0, "exit code") < 0 ||
	    results_read(t, u.out, &res) < 0)
		goto out;
	EQ(results_count(&res, EV_EVENT, 0), N, "events");
	const struct probe_sum want = { N, N, 0, 0 };
	if (check_summary(t, &res, &want, 1) < 0)
		goto out;
	EQ(our_tracefs_events(), 0, "tracefs events left behind");
out:
	free(err);
	ups_stop(&u, SIGKILL);
	target_kill(&a);
	results_free(&res);
}

static void kill_9_then_rerun_leaves_nothing_behind(struct tc *t)
{
	struct target a = { .pid = -1 };
	struct ups u = { .pid = -1 }, u2 = { .pid = -1 };
	char pid[16];
	const char *cfg = native_config(t, "ups_target_fn", "call_detail", NULL, 0, NULL);

	CHECK(cfg, "config");
	if (native_start(t, &a, N, 3, 1, NULL) < 0)
		goto out;
	snprintf(pid, sizeof(pid), "%d", (int)a.pid);
	const char *args[] = { "run", cfg, "--force-tracefs", "--pid", pid, NULL };
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0)
		goto out;
	CHECK(our_tracefs_events() > 0, "the killed run had events");
	ups_stop(&u, SIGKILL);
	CHECK(our_tracefs_events() > 0, "a kill -9 leaves its events (the kernel keeps them)");
	/* The rerun removes the dead run's events, then its own at exit. */
	if (ups_start(t, &u2, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u2) < 0)
		goto out;
	EQ(our_tracefs_events(), 1, "only the rerun's own event while it runs");
	if (target_go(t, &a) < 0 || target_wait(t, &a, WAIT_MS) < 0)
		goto out;
	if (check_rc(t, &u2, ups_wait(&u2, WAIT_MS, NULL), 0, "rerun exit code") < 0)
		goto out;
	EQ(our_tracefs_events(), 0, "tracefs events left behind");
	EQ(our_bpffs_pins(), 0, "bpffs pins left behind");
out:
	ups_stop(&u, SIGKILL);
	ups_stop(&u2, SIGKILL);
	target_kill(&a);
}

/* Three tracefs runs on one function at once, the second killed: a fourth
 * removes only the dead run's event; the live ones keep theirs and every
 * event; nothing is left at the end. */
static void concurrent_tracefs_runs_keep_their_events(struct tc *t)
{
	struct target a = { .pid = -1 };
	struct ups u[4] = { { .pid = -1 }, { .pid = -1 }, { .pid = -1 }, { .pid = -1 } };
	struct results res = { 0 };
	const struct probe_sum want = { N, N, 0, 0 };
	char pid[16];
	const char *cfg = native_config(t, "ups_target_fn", "call_detail", NULL, 0, NULL);

	CHECK(cfg, "config");
	if (native_start(t, &a, N, 3, 1, NULL) < 0)
		goto out;
	snprintf(pid, sizeof(pid), "%d", (int)a.pid);
	const char *args[] = { "run", cfg, "--format", "json", "--force-tracefs", "--pid", pid,
			       NULL };
	for (int i = 0; i < 3; i++)
		if (ups_start(t, &u[i], args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u[i]) < 0)
			goto out;
	for (int i = 0; i < 3; i++)
		EQ(run_tracefs_events(u[i].pid), 1, "a run's own event while attached");
	pid_t dead = u[1].pid;
	ups_stop(&u[1], SIGKILL);
	EQ(run_tracefs_events(dead), 1, "a SIGKILLed run leaves its event");
	if (ups_start(t, &u[3], args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u[3]) < 0)
		goto out;
	EQ(run_tracefs_events(dead), 0, "the dead run's event once a fourth started");
	for (int i = 0; i < 4; i++)
		if (i != 1)
			EQ(run_tracefs_events(u[i].pid), 1, "a live run's event");
	if (target_go(t, &a) < 0 || target_wait(t, &a, WAIT_MS) < 0)
		goto out;
	for (int i = 0; i < 4; i++) {
		if (i == 1)
			continue;
		if (check_rc(t, &u[i], ups_wait(&u[i], WAIT_MS, NULL), 0, "exit code") < 0 ||
		    results_read(t, u[i].out, &res) < 0)
			goto out;
		EQ(results_count(&res, EV_EVENT, 0), N, "events of a live run");
		if (check_summary(t, &res, &want, 1) < 0)
			goto out;
		results_free(&res);
	}
	EQ(our_tracefs_events(), 0, "tracefs events left behind");
out:
	for (int i = 0; i < 4; i++)
		ups_stop(&u[i], SIGKILL);
	target_kill(&a);
	results_free(&res);
}

/* /sys/kernel/btf/vmlinux replaced by /dev/null in a private mount namespace: the
 * objects carry no CO-RE relocations, so they still load. */
static void loads_without_kernel_btf(struct tc *t)
{
	struct target a = { .pid = -1 };
	struct ups u = { .pid = -1 };
	struct results res = { 0 };
	char pid[16];
	const char *cfg = native_config(t, "ups_target_fn", "call_detail", NULL, 0, NULL);
	struct stat st;

	CHECK(stat("/sys/kernel/btf/vmlinux", &st) == 0 && st.st_size > 0,
	      "this kernel has no /sys/kernel/btf/vmlinux to hide");
	CHECK(cfg, "config");
	if (native_start(t, &a, N, 3, 1, NULL) < 0)
		goto out;
	snprintf(pid, sizeof(pid), "%d", (int)a.pid);
	const char *args[] = { "run", cfg, "--format", "json", "--pid", pid, NULL };
	if (ups_start(t, &u, args, SPAWN_NO_BTF) < 0 || ups_wait_attached(t, &u) < 0)
		goto out;
	if (target_go(t, &a) < 0 || target_wait(t, &a, WAIT_MS) < 0)
		goto out;
	if (check_rc(t, &u, ups_wait(&u, WAIT_MS, NULL), 0, "exit code") < 0 ||
	    results_read(t, u.out, &res) < 0)
		goto out;
	EQ(results_count(&res, EV_EVENT, 0), N, "events");
out:
	ups_stop(&u, SIGKILL);
	target_kill(&a);
	results_free(&res);
}

const struct vmcase vm_kernel_cases[] = {
	{ "kernel.forced_perf_buffer_delivers_everything", forced_perf_buffer_delivers_everything },
	{ "kernel.forced_tracefs_attaches_and_cleans_up", forced_tracefs_attaches_and_cleans_up },
	{ "kernel.kill_9_then_rerun_leaves_nothing_behind",
	  kill_9_then_rerun_leaves_nothing_behind },
	{ "kernel.loads_without_kernel_btf", loads_without_kernel_btf },
	{ "kernel.concurrent_tracefs_runs_keep_their_events",
	  concurrent_tracefs_runs_keep_their_events },
	{ NULL, NULL },
};
