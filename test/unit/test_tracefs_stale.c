#include "ut.h"

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe/closer.h"
#include "probe/tracefs_uprobe.h"
#include "sys/proc.h"
#include "sys_testutil.h"

/* DIR/proc/PID/stat with that state and start time (field 22). */
static void fake_stat(const char *dir, int pid, char state, unsigned long long start)
{
	char rel[64], text[256];

	snprintf(rel, sizeof(rel), "proc/%d/stat", pid);
	snprintf(text, sizeof(text), "%d (a) b) %c 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 "
		 "%llu 19 20\n", pid, state, start);
	UT_EQ_INT(st_write(dir, rel, text), 0);
}

/* The file's text (empty when it cannot be read). */
static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 8192);

	if (f && buf && fread(buf, 1, 8191, f) == 0)
		buf[0] = '\0';
	if (f)
		fclose(f);
	return buf;
}

/* Only events whose run is gone go: the pid gone, a zombie, or a pid now
 * held by a process that started at another time; never a live run's (same
 * pid and start time), another tool's, a name we do not write, or one whose
 * owner cannot be read.  Groups of the older form uprobestats_<pid> go when
 * the pid no longer runs uprobestats. */
UT_TEST(tracefs_remove_stale_removes_only_events_of_runs_that_are_gone)
{
	char dir[512], path[600], proc[600];
	static const char events[] =
		"p:uprobestats_100_5000/p0 /bin/x:0x0000000000000010\n"   /* live: kept */
		"p:uprobestats_101_6000/p0 /bin/x:0x0000000000000010\n"   /* pid reused */
		"p:uprobestats_102_6000/p0 /bin/x:0x0000000000000010\n"   /* gone */
		"r:uprobestats_103_1/r1 /bin/x:0x0000000000000010\n"      /* zombie */
		"p:uprobestats_104/p0 /bin/x:0x0000000000000010\n"        /* old form, live */
		"p:uprobestats_105/p0 /bin/x:0x0000000000000010\n"        /* old form, gone */
		"p:uprobes/p_bash_0x10 /bin/bash:0x0000000000000010\n"    /* bpftrace's */
		"p:uprobestats_xyz/p0 /bin/x:0x0000000000000010\n"        /* not our form */
		"p:uprobestats_106_5/p0 /bin/x:0x0000000000000010\n";     /* no stat: kept */
	struct tracefs t;
	struct err e = { 0 };
	char *after;

	st_mkdtemp("tracefs-stale", dir, sizeof(dir));
	UT_EQ_INT(st_write(dir, "sys/kernel/tracing/uprobe_events", events), 0);
	fake_stat(dir, 100, 'S', 5000);
	fake_stat(dir, 101, 'R', 7000);
	fake_stat(dir, 103, 'Z', 1);
	UT_EQ_INT(st_write(dir, "proc/104/cmdline", "/data/local/tmp/uprobestats\0-x"), 0);
	UT_EQ_INT(st_write(dir, "proc/106/cmdline", "x"), 0);
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	UT_EQ_INT(tracefs_open(&t, dir, &e), 0);
	UT_EQ_INT(tracefs_remove_stale(&t, proc, CLOSER_COMMAND, &e), 4);
	/* A regular file stands in for uprobe_events: the removals are appended. */
	snprintf(path, sizeof(path), "%s/sys/kernel/tracing/uprobe_events", dir);
	after = read_all(path);
	UT_ASSERT(after && strlen(after) > strlen(events));
	UT_EQ_STR(after + strlen(events), "-:uprobestats_101_6000/p0\n-:uprobestats_102_6000/p0\n"
		  "-:uprobestats_103_1/r1\n-:uprobestats_105/p0\n");
	free(after);
}

/* A gone run whose closer (closer.h's argv, under any pid) still closes its
 * events is not stale: its events are left to the closer, on either path,
 * from uprobe_events or from the group directories of events/, which the
 * run reads where they exist (their reading waits on no event_mutex).  The
 * group of a gone run without a closer goes on both: with group_dirs even
 * though uprobe_events does not list it (only events/ can have shown it). */
#define CLOSERS_EVENTS "p:uprobestats_102_6000/p0 /bin/x:0x0000000000000010\n" \
		       "p:uprobestats_102_6000/p1 /bin/x:0x0000000000000020\n"

static void stale_with_a_closer(bool group_dirs)
{
	char dir[512], path[600], proc[600];
	const char *events = group_dirs ? CLOSERS_EVENTS   /* the gone one unlisted */
		: CLOSERS_EVENTS "p:uprobestats_105_7000/p0 /bin/x:0x0000000000000010\n";
	static const char closer_argv[] = "ups-closer\0__closer\0" "20\0/sys/kernel/tracing\0"
					  "uprobestats_102_6000";
	char *after;
	struct tracefs t;
	struct err e = { 0 };
	FILE *f;

	st_mkdtemp("tracefs-closer", dir, sizeof(dir));
	UT_EQ_INT(st_write(dir, "sys/kernel/tracing/uprobe_events", events), 0);
	if (group_dirs) {
		UT_EQ_INT(st_write(dir, "sys/kernel/tracing/events/uprobestats_102_6000/p0/id",
				   "1\n"), 0);
		UT_EQ_INT(st_write(dir, "sys/kernel/tracing/events/uprobestats_102_6000/p1/id",
				   "2\n"), 0);
		UT_EQ_INT(st_write(dir, "sys/kernel/tracing/events/uprobestats_105_7000/p0/id",
				   "3\n"), 0);
		UT_EQ_INT(st_write(dir, "sys/kernel/tracing/events/enable", "0\n"), 0);
	}
	fake_stat(dir, 300, 'S', 9000);
	snprintf(path, sizeof(path), "%s/proc/300/cmdline", dir);
	UT_ASSERT((f = fopen(path, "w")) != NULL);
	UT_EQ_INT((int)fwrite(closer_argv, 1, sizeof(closer_argv), f), (int)sizeof(closer_argv));
	fclose(f);
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	UT_EQ_INT(tracefs_open(&t, dir, &e), 0);
	UT_EQ_INT(tracefs_remove_stale(&t, proc, CLOSER_COMMAND, &e), 1);
	snprintf(path, sizeof(path), "%s/sys/kernel/tracing/uprobe_events", dir);
	after = read_all(path);
	UT_ASSERT(after && strlen(after) > strlen(events));
	UT_EQ_STR(after + strlen(events), "-:uprobestats_105_7000/p0\n");
	free(after);
}

UT_TEST(tracefs_remove_stale_leaves_a_live_closers_events_to_it)
{
	stale_with_a_closer(false);
}

UT_TEST(tracefs_remove_stale_takes_the_groups_from_events_where_it_can)
{
	stale_with_a_closer(true);
}

/* The start times of processes are compared across time namespaces as the
 * initial one sees them: our namespace's BOOTTIME offset in clock ticks,
 * from a timens_offsets file (none: 0). */
UT_TEST(proc_boottime_offset_ticks_reads_the_boottime_line)
{
	char dir[512], path[600];
	long hz = sysconf(_SC_CLK_TCK);

	st_mkdtemp("timens", dir, sizeof(dir));
	UT_EQ_INT(st_write(dir, "offsets", "monotonic           7         0\n"
			   "boottime         1000 500000000\n"), 0);
	snprintf(path, sizeof(path), "%s/offsets", dir);
	UT_EQ_INT((int)proc_boottime_offset_ticks(path), (int)(1000 * hz + hz / 2));
	UT_EQ_INT(st_write(dir, "neg", "boottime -20 0\n"), 0);
	snprintf(path, sizeof(path), "%s/neg", dir);
	UT_EQ_INT((int)proc_boottime_offset_ticks(path), (int)(-20 * hz));
	snprintf(path, sizeof(path), "%s/none", dir);
	UT_EQ_INT((int)proc_boottime_offset_ticks(path), 0);
}

/* Our own group carries our pid and start time. */
UT_TEST(tracefs_group_names_our_pid_and_start_time)
{
	char dir[512], want[64];
	struct tracefs t;
	struct err e = { 0 };

	st_mkdtemp("tracefs-group", dir, sizeof(dir));
	UT_EQ_INT(st_write(dir, "sys/kernel/tracing/uprobe_events", ""), 0);
	UT_EQ_INT(tracefs_open(&t, dir, &e), 0);
	UT_ASSERT(t.owner_start > 0);
	snprintf(want, sizeof(want), "uprobestats_%d_%llu", (int)getpid(),
		 (unsigned long long)t.owner_start);
	UT_EQ_STR(t.group, want);
}

/* A uprobe_events that takes no writes (here a read-only mount) is said at
 * once: the closer's group removal tries again only what the kernel refused
 * (EBUSY), not for seconds a file it cannot open for writing. */
UT_TEST(tracefs_remove_group_says_an_unwritable_uprobe_events)
{
	char dir[512], tracing[560], path[600];
	int status = 0;
	pid_t child;

	st_mkdtemp("tracefs-ro", dir, sizeof(dir));
	UT_EQ_INT(st_write(dir, "sys/kernel/tracing/uprobe_events",
			   "p:uprobestats_1_2/p0 /bin/x:0x0000000000000010\n"), 0);
	snprintf(tracing, sizeof(tracing), "%s/sys/kernel/tracing", dir);
	snprintf(path, sizeof(path), "%s/uprobe_events", tracing);
	child = fork();
	if (child == 0) {
		if (unshare(CLONE_NEWNS) < 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount(path, path, NULL, MS_BIND, NULL) < 0 ||
		    mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL) < 0)
			_exit(2);
		_exit(tracefs_remove_group(tracing, "uprobestats_1_2") == -EROFS ? 0 : 1);
	}
	UT_ASSERT(child > 0);
	UT_EQ_INT(waitpid(child, &status, 0), child);
	UT_ASSERT(WIFEXITED(status));
	UT_EQ_INT(WEXITSTATUS(status), 0);   /* 2: no namespace */
}

struct late_line {
	const char *path;   /* the fake uprobe_events */
	int calls;
};

/* Chooses group uprobestats_7_7's events; on its first call it adds one more
 * to the list the pass is reading already (stdio has the whole small file),
 * as the kernel's list shows a pass no line that another process's removals
 * above it moved past its page boundary: only a new reading shows it. */
static bool pick_and_add_late(const char *name, const void *ctx)
{
	struct late_line *l = (struct late_line *)ctx;

	if (l->calls++ == 0) {
		FILE *f = fopen(l->path, "a");
		if (f) {   /* without it the removal count below is 2, not 3 */
			fputs("p:uprobestats_7_7/p2 /bin/x:0x0000000000000030\n", f);
			fclose(f);
		}
	}
	return strncmp(name, "uprobestats_7_7/", 16) == 0;
}

/* A removal reads the list again until a reading shows none it has not
 * removed: the event missed by the first reading goes too, and none is
 * written twice (the fake file keeps listing removed events). */
UT_TEST(tracefs_remove_where_reads_again_until_no_event_of_its_is_left)
{
	char dir[512], path[600];
	static const char events[] =
		"p:uprobestats_7_7/p0 /bin/x:0x0000000000000010\n"
		"p:uprobes/p_bash_0x10 /bin/bash:0x0000000000000010\n"
		"p:uprobestats_7_7/p1 /bin/x:0x0000000000000020\n";
	struct late_line l = { path, 0 };
	char *after;

	st_mkdtemp("tracefs-again", dir, sizeof(dir));
	UT_EQ_INT(st_write(dir, "uprobe_events", events), 0);
	snprintf(path, sizeof(path), "%s/uprobe_events", dir);
	UT_EQ_INT(tracefs_remove_where(dir, pick_and_add_late, &l, 0), 3);
	after = read_all(path);
	UT_ASSERT(after && strlen(after) > strlen(events));
	UT_EQ_STR(after + strlen(events), "p:uprobestats_7_7/p2 /bin/x:0x0000000000000030\n"
		  "-:uprobestats_7_7/p0\n-:uprobestats_7_7/p1\n-:uprobestats_7_7/p2\n");
	free(after);
}

/* Nothing to read: the error, not a count. */
UT_TEST(tracefs_remove_where_without_uprobe_events_says_why)
{
	char dir[512];
	struct late_line l = { "/nonexistent", 1 };

	st_mkdtemp("tracefs-none", dir, sizeof(dir));
	UT_EQ_INT(tracefs_remove_where(dir, pick_and_add_late, &l, 0), -ENOENT);
}

/* The closer's group removal takes the names from events/<group>/, where a
 * reading shows all of them: here uprobe_events lists only p0 (as a reading
 * does that other closers' removals moved past p1), yet both go, once each
 * (the fake keeps both directories), and another group's event stays. */
UT_TEST(tracefs_remove_group_takes_its_names_from_the_group_directory)
{
	char dir[512], path[600];
	static const char events[] =
		"p:uprobestats_7_7/p0 /bin/x:0x0000000000000010\n"
		"p:uprobestats_8_8/p0 /bin/x:0x0000000000000010\n";
	char *after;

	st_mkdtemp("tracefs-groupdir", dir, sizeof(dir));
	UT_EQ_INT(st_write(dir, "uprobe_events", events), 0);
	UT_EQ_INT(st_write(dir, "events/uprobestats_7_7/p0/id", "1001\n"), 0);
	UT_EQ_INT(st_write(dir, "events/uprobestats_7_7/r1/id", "1002\n"), 0);
	UT_EQ_INT(st_write(dir, "events/uprobestats_7_7/enable", "0\n"), 0);
	UT_EQ_INT(st_write(dir, "events/uprobestats_8_8/p0/id", "1003\n"), 0);
	UT_EQ_INT(tracefs_remove_group(dir, "uprobestats_7_7"), 2);
	snprintf(path, sizeof(path), "%s/uprobe_events", dir);
	after = read_all(path);
	UT_ASSERT(after && strlen(after) > strlen(events));
	UT_ASSERT(!strcmp(after + strlen(events), "-:uprobestats_7_7/p0\n-:uprobestats_7_7/r1\n") ||
		  !strcmp(after + strlen(events), "-:uprobestats_7_7/r1\n-:uprobestats_7_7/p0\n"));
	free(after);
}

/* A fake kernel for the stale removal: lines of group uprobestats_102_6000
 * are refused as busy (a closer still closes their perf events, holding
 * event_mutex across each close: every write waits for it), as the kernel
 * does, stopping the write at that line; other lines are appended to the
 * fake uprobe_events. */
static int busy_writes;

static ssize_t busy_group_write(int fd, const void *buf, size_t n)
{
	const char *text = buf, *busy = strstr(text, "-:uprobestats_102_6000/");
	size_t keep = busy ? (size_t)(busy - text) : n;

	if (busy)
		busy_writes++;
	if (keep && write(fd, buf, keep) != (ssize_t)keep)
		return -1;
	if (!busy)
		return (ssize_t)n;
	errno = EBUSY;
	return -1;
}

/* A gone run's group whose events are busy (its closer's) is written to once
 * by a run's stale removal, at its first event, then left to the closer: the
 * others of the group are not tried, nor tried again in the next passes.
 * (They were, each: a run that started while another run's closer was
 * tearing down 1,000 tracefs events waited on event_mutex for about all of
 * its closes, minutes on a loaded machine, its signals blocked.)  A gone
 * run's events that are not busy go. */
UT_TEST(tracefs_remove_stale_leaves_a_busy_group_at_its_first_event)
{
	char dir[512], path[600], proc[600];
	static const char events[] =
		"p:uprobestats_102_6000/p0 /bin/x:0x0000000000000010\n"
		"p:uprobestats_102_6000/p1 /bin/x:0x0000000000000020\n"
		"p:uprobestats_103_6000/p0 /bin/x:0x0000000000000010\n"
		"p:uprobestats_102_6000/p2 /bin/x:0x0000000000000030\n"
		"p:uprobestats_102_6000/p3 /bin/x:0x0000000000000040\n"
		"p:uprobestats_103_6000/p1 /bin/x:0x0000000000000020\n";
	struct tracefs t;
	struct err e = { 0 };
	char *after;

	st_mkdtemp("tracefs-busy", dir, sizeof(dir));
	UT_EQ_INT(st_write(dir, "sys/kernel/tracing/uprobe_events", events), 0);
	UT_EQ_INT(st_write(dir, "proc/1/stat", "1 (a) S 0\n"), 0);   /* 102, 103: gone */
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	UT_EQ_INT(tracefs_open(&t, dir, &e), 0);
	t.write = busy_group_write;
	busy_writes = 0;
	UT_EQ_INT(tracefs_remove_stale(&t, proc, CLOSER_COMMAND, &e), 2);
	/* the batch, stopped at p0; then p0 alone */
	UT_EQ_INT(busy_writes, 2);
	snprintf(path, sizeof(path), "%s/sys/kernel/tracing/uprobe_events", dir);
	after = read_all(path);
	UT_ASSERT(after && strlen(after) > strlen(events));
	UT_EQ_STR(after + strlen(events), "-:uprobestats_103_6000/p0\n-:uprobestats_103_6000/p1\n");
	free(after);
}
