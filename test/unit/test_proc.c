#include "ut.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/name_cache.h"
#include "sys/proc.h"

/* A fake /proc: DIR/PID/cmdline (argv joined by NULs) and DIR/PID/status. */
static void fake_proc(const char *dir, int pid, const char *argv0, long uid)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", dir, pid);
	mkdir(dir, 0755);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/cmdline", dir, pid);
	f = fopen(path, "w");
	if (argv0) {
		fputs(argv0, f);
		fputc('\0', f);
		fputs("--flag", f);
		fputc('\0', f);
	}
	fclose(f);
	snprintf(path, sizeof(path), "%s/%d/status", dir, pid);
	f = fopen(path, "w");
	fprintf(f, "Name:\tx\nUid:\t%ld\t%ld\t%ld\t%ld\n", uid, uid, uid, uid);
	fclose(f);
}

UT_TEST(proc_find_by_name_matches_argv0_exactly_in_pid_order)
{
	const char *dir = ut_tmpfile("proc-find");
	pid_t *pids;
	size_t n;
	struct err e = { 0 };

	fake_proc(dir, 300, "com.foo", 10001);
	fake_proc(dir, 20, "com.foo", 10001);
	fake_proc(dir, 21, "com.foo:remote", 10001);
	fake_proc(dir, 22, NULL, 0); /* kernel thread: empty cmdline */
	UT_EQ_INT(proc_find_by_name(dir, "com.foo", &pids, &n, &e), 0);
	UT_EQ_INT(n, 2);
	UT_EQ_INT(pids[0], 20);
	UT_EQ_INT(pids[1], 300);
	free(pids);
	UT_EQ_INT(proc_find_by_name("/nonexistent-proc", "x", &pids, &n, &e), -ENOENT);
	UT_CONTAINS(e.msg, "cannot list processes");
}

#define SEC_NS 1000000000ull

UT_TEST(proc_watch_waits_for_an_app_to_take_its_name)
{
	const char *dir = ut_tmpfile("proc-watch");
	struct proc_watch w;
	struct err e = { 0 };

	fake_proc(dir, 100, "com.app", 10050);  /* already running: not "starting" */
	UT_EQ_INT(proc_watch_init(&w, dir, "com.app", true, &e), 0);
	UT_EQ_INT(proc_watch_poll_at(&w, 1 * SEC_NS), 0);
	fake_proc(dir, 200, "zygote64", 10050); /* forked, not yet named */
	fake_proc(dir, 201, "/system/bin/sh", 2000);
	UT_EQ_INT(proc_watch_poll_at(&w, 2 * SEC_NS), 0);
	fake_proc(dir, 200, "<pre-initialized>", 10050);
	UT_EQ_INT(proc_watch_poll_at(&w, 3 * SEC_NS), 0);
	/* Unnamed processes stay candidates longer than named ones. */
	fake_proc(dir, 200, "com.app", 10050);
	UT_EQ_INT(proc_watch_poll_at(&w, 10 * SEC_NS), 200);
	proc_watch_free(&w);
}

UT_TEST(proc_watch_sees_a_process_caught_between_fork_and_exec)
{
	char dir[512];
	struct proc_watch w;
	struct err e = { 0 };

	/* ut_tmpfile() returns one shared buffer: keep a copy. */
	snprintf(dir, sizeof(dir), "%s", ut_tmpfile("proc-watch-exec"));
	mkdir(dir, 0755);
	UT_EQ_INT(proc_watch_init(&w, dir, "target", false, &e), 0);
	fake_proc(dir, 300, "/usr/bin/python3", 0); /* the parent's name, before exec */
	UT_EQ_INT(proc_watch_poll_at(&w, 1 * SEC_NS), 0);
	fake_proc(dir, 300, "target", 0);            /* after exec */
	UT_EQ_INT(proc_watch_poll_at(&w, 1 * SEC_NS + 10000000), 300);
	proc_watch_free(&w);
	/* A process that keeps another name settles and is not read again. */
	UT_EQ_INT(proc_watch_init(&w, ut_tmpfile("proc-watch-empty"), "target", false, &e), -ENOENT);
	UT_EQ_INT(proc_watch_init(&w, dir, "other", false, &e), 0);
	fake_proc(dir, 301, "/bin/sh", 0);
	UT_EQ_INT(proc_watch_poll_at(&w, 1 * SEC_NS), 0);
	UT_EQ_INT(w.n_cands, 1);
	UT_EQ_INT(proc_watch_poll_at(&w, 4 * SEC_NS), 0);
	UT_EQ_INT(w.n_cands, 0);
	proc_watch_free(&w);
}

UT_TEST(proc_watch_any_app_means_app_uid_on_android)
{
	const char *dir = ut_tmpfile("proc-watch-any");
	struct proc_watch w;
	struct err e = { 0 };

	fake_proc(dir, 10, "init", 0);
	UT_EQ_INT(proc_watch_init(&w, dir, NULL, true, &e), 0);
	fake_proc(dir, 50, "/system/bin/logcat", 2000);
	UT_EQ_INT(proc_watch_poll(&w), 0);
	fake_proc(dir, 51, "com.example.game", 10123);
	UT_EQ_INT(proc_watch_poll(&w), 51);
	proc_watch_free(&w);
	/* Off Android any new process counts. */
	UT_EQ_INT(proc_watch_init(&w, dir, NULL, false, &e), 0);
	fake_proc(dir, 60, "/usr/bin/true", 1000);
	UT_EQ_INT(proc_watch_poll(&w), 60);
	proc_watch_free(&w);
}

/* As Android names processes (toybox ps NAME, pidof): argv[0], or its last path
 * component for a name without '/'; a multi-call binary by the name it was run as. */
UT_TEST(proc_name_matches_argv0_or_its_basename)
{
	UT_ASSERT(proc_name_matches("system_server", "system_server"));
	UT_ASSERT(proc_name_matches("/system/bin/surfaceflinger", "surfaceflinger"));
	UT_ASSERT(proc_name_matches("/system/bin/surfaceflinger", "/system/bin/surfaceflinger"));
	UT_ASSERT(proc_name_matches("/system/bin/cat", "cat"));
	UT_ASSERT(!proc_name_matches("/system/bin/cat", "toybox"));
	UT_ASSERT(!proc_name_matches("/system/bin/cat", "bin/cat"));
	UT_ASSERT(!proc_name_matches("com.foo:remote", "com.foo"));
	UT_ASSERT(!proc_name_matches("/system/bin/", ""));
	UT_ASSERT(!proc_name_matches("surfaceflinger", "/system/bin/surfaceflinger"));
}

/* ---- sys/name_cache: a pid's name, read again while it lives ---- */

UT_TEST(name_cache_rereads_a_live_pid_after_a_second_and_keeps_a_gone_ones)
{
	const char *dir = ut_tmpfile("proc-names");
	char path[512];
	static struct name_cache c;   /* 100 KiB: not on the stack */

	fake_proc(dir, 4100, "<pre-initialized>", 10001);
	name_cache_init(&c, dir);
	UT_EQ_STR(name_cache_get(&c, 4100, "comm", SEC_NS), "<pre-initialized>");
	/* zygote's child takes its package name (or the pid goes to another process) */
	fake_proc(dir, 4100, "com.foo", 10001);
	UT_EQ_STR(name_cache_get(&c, 4100, "comm", SEC_NS + SEC_NS / 2), "<pre-initialized>");
	UT_EQ_STR(name_cache_get(&c, 4100, "comm", 0), "<pre-initialized>");   /* 0: as kept */
	UT_EQ_STR(name_cache_get(&c, 4100, "comm", 2 * SEC_NS + 1), "com.foo");
	/* gone: the name stays for its late records */
	snprintf(path, sizeof(path), "%s/4100/cmdline", dir);
	UT_EQ_INT(unlink(path), 0);
	UT_EQ_STR(name_cache_get(&c, 4100, "comm", 10 * SEC_NS), "com.foo");
	/* a record out of order (an earlier time) reads nothing again */
	fake_proc(dir, 4100, "com.bar", 10001);
	UT_EQ_STR(name_cache_get(&c, 4100, "comm", 5 * SEC_NS), "com.foo");
	UT_EQ_STR(name_cache_get(&c, 4100, "comm", 12 * SEC_NS), "com.bar");
	/* a pid sharing the slot (direct-mapped) reads its own */
	fake_proc(dir, 4100 + NAME_CACHE_SLOTS, "other", 0);
	UT_EQ_STR(name_cache_get(&c, 4100 + NAME_CACHE_SLOTS, NULL, 12 * SEC_NS), "other");
}

UT_TEST(proc_tgid_reads_the_thread_group_of_a_thread)
{
	const char *dir = ut_tmpfile("proc-tgid");
	char path[512];
	FILE *f;

	fake_proc(dir, 77, "x", 0);
	snprintf(path, sizeof(path), "%s/77/status", dir);
	f = fopen(path, "w");
	fprintf(f, "Name:\tworker\nUmask:\t0022\nState:\tS\nTgid:\t70\nNgid:\t0\nPid:\t77\n");
	fclose(f);
	UT_EQ_INT(proc_tgid(dir, 77), 70);
	UT_EQ_INT(proc_tgid(dir, 78), -1);                     /* gone */
	UT_EQ_INT(proc_tgid("/proc", getpid()), getpid());     /* a real one */
}
