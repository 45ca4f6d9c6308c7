/* tracefs_create / tracefs_remove against a fake kernel: uprobe_events
 * writes go through fake_write, which runs each line as the kernel does (in
 * order, stopping at the first it refuses, the write failing with that
 * line's errno) on a fake events/ tree. */
#include "ut.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe/tracefs_uprobe.h"
#include "sys_testutil.h"

static char fake_dir[512];      /* the fake tracefs: uprobe_events, events/ */
static int fake_writes, fake_next_id;
static char fake_busy[64];      /* an event whose removal is refused (still open) */

/* One line: 0, or the errno the kernel refuses it with. */
static int fake_line(const char *line)
{
	char name[128], rel[200], path[800], id[16];
	const char *sp = strpbrk(line + 2, " \n");

	snprintf(name, sizeof(name), "%.*s", (int)(sp - (line + 2)), line + 2);
	snprintf(rel, sizeof(rel), "events/%s/id", name);
	snprintf(path, sizeof(path), "%s/%s", fake_dir, rel);
	if (line[0] == '-') {
		if (strcmp(name, fake_busy) == 0)
			return EBUSY;
		if (unlink(path) != 0)
			return ENOENT;
		*strrchr(path, '/') = '\0';
		rmdir(path);
		return 0;
	}
	if (strstr(line, "FAIL"))   /* as for a file the kernel cannot find */
		return ENOENT;
	if (access(path, F_OK) == 0)
		return EEXIST;
	snprintf(id, sizeof(id), "%d\n", ++fake_next_id);
	return st_write(fake_dir, rel, id) == 0 ? 0 : EIO;
}

static ssize_t fake_write(int fd, const void *buf, size_t n)
{
	const char *p = buf, *end = p + n;

	fake_writes++;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		char line[8192];
		int e;

		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		e = fake_line(line);
		if (e) {
			errno = e;
			return -1;
		}
		if (write(fd, p, len) != (ssize_t)len)   /* the log of what was done */
			return -1;
		p += len;
	}
	return (ssize_t)n;
}

/* A fake tracefs with its group's events directory. */
static void fake_tracefs(const char *name, struct tracefs *t)
{
	char root[512];
	struct err e = { 0 };

	st_mkdtemp(name, root, sizeof(root));
	UT_EQ_INT(st_write(root, "sys/kernel/tracing/uprobe_events", ""), 0);
	snprintf(fake_dir, sizeof(fake_dir), "%s/sys/kernel/tracing", root);
	UT_EQ_INT(tracefs_open(t, root, &e), 0);
	t->write = fake_write;
	fake_writes = fake_next_id = 0;
	fake_busy[0] = '\0';
}

/* How many events of t's group the fake kernel holds. */
static int events_left(const struct tracefs *t)
{
	char path[800];
	int n = 0;

	for (int i = 0; i < 5000; i++) {
		snprintf(path, sizeof(path), "%s/events/%s/p%d/id", fake_dir, t->group, i);
		n += access(path, F_OK) == 0;
	}
	return n;
}

static struct tracefs_event *events(size_t n, size_t fail_at)
{
	static const char *const paths[] = { "/system/lib64/libc.so",
					     "/data/app/x/oat/arm64/base.odex" };
	struct tracefs_event *ev = calloc(n, sizeof(*ev));

	for (size_t i = 0; ev && i < n; i++) {
		ev[i].path = i == fail_at ? "/system/lib64/FAIL.so" : paths[i % 2];
		ev[i].offset = 0x1000 + 4 * i;
	}
	return ev;
}

/* 2,000 events: a few writes (not one each), every id read, every name
 * distinct; then removed, a few writes again. */
UT_TEST(tracefs_create_makes_many_events_a_write_and_reads_each_id)
{
	struct tracefs t;
	struct tracefs_event *ev = events(2000, (size_t)-1);
	struct err e = { 0 };
	size_t failed = 7;

	fake_tracefs("tracefs-batch", &t);
	UT_ASSERT(ev);
	UT_EQ_INT(tracefs_create(&t, ev, 2000, &failed, &e), 0);
	UT_ASSERT(fake_writes >= 2 && fake_writes <= 10);
	UT_EQ_INT(events_left(&t), 2000);
	for (int i = 0; i < 2000; i++)
		UT_EQ_INT(ev[i].id, i + 1);
	UT_ASSERT(strstr(ev[1999].name, t.group) == ev[1999].name);
	UT_CONTAINS(ev[1999].name, "/p1999");
	fake_writes = 0;
	tracefs_remove(&t, ev, 2000);
	UT_ASSERT(fake_writes >= 1 && fake_writes <= 10);
	UT_EQ_INT(events_left(&t), 0);
	free(ev);
}

/* The kernel refuses event 1,500 (its second write): the error names that
 * event's file and offset with the kernel's errno, *failed is its index, and
 * every event created before it is removed again. */
UT_TEST(tracefs_create_refused_mid_batch_names_the_event_and_leaves_none)
{
	struct tracefs t;
	struct tracefs_event *ev = events(2000, 1500);
	struct err e = { 0 };
	size_t failed = 0;
	char want[200];

	fake_tracefs("tracefs-batch-fail", &t);
	UT_ASSERT(ev);
	UT_EQ_INT(tracefs_create(&t, ev, 2000, &failed, &e), -ENOENT);
	UT_EQ_INT(failed, 1500);
	snprintf(want, sizeof(want), "/system/lib64/FAIL.so+0x%x: creating tracefs uprobe "
		 "%s/p1500: No such file or directory", 0x1000 + 4 * 1500, t.group);
	UT_EQ_STR(e.msg, want);
	UT_EQ_INT(events_left(&t), 0);
	free(ev);
}

/* The first event refused: nothing was created, nothing is left. */
UT_TEST(tracefs_create_refused_at_the_first_event_leaves_none)
{
	struct tracefs t;
	struct tracefs_event *ev = events(3, 0);
	struct err e = { 0 };
	size_t failed = 9;

	fake_tracefs("tracefs-batch-first", &t);
	UT_EQ_INT(tracefs_create(&t, ev, 3, &failed, &e), -ENOENT);
	UT_EQ_INT(failed, 0);
	UT_CONTAINS(e.msg, "FAIL.so+0x1000: creating tracefs uprobe");
	UT_EQ_INT(events_left(&t), 0);
	free(ev);
}

/* A path with white space is refused before anything is written. */
UT_TEST(tracefs_create_refuses_white_space_before_writing)
{
	struct tracefs t;
	struct tracefs_event ev[2] = { { .path = "/a/b" }, { .path = "/a/b c" } };
	struct err e = { 0 };
	size_t failed = 0;

	fake_tracefs("tracefs-batch-space", &t);
	UT_EQ_INT(tracefs_create(&t, ev, 2, &failed, &e), -EINVAL);
	UT_EQ_INT(failed, 1);
	UT_EQ_STR(e.msg, "/a/b c: tracefs uprobe_events cannot name a path with white space");
	UT_EQ_INT(fake_writes, 0);
}

/* A removal the kernel refuses in the middle of a write (an event still
 * open) does not keep the others: they are written again one at a time. */
UT_TEST(tracefs_remove_goes_on_past_an_event_the_kernel_keeps)
{
	struct tracefs t;
	struct tracefs_event *ev = events(100, (size_t)-1);
	struct err e = { 0 };
	size_t failed;

	fake_tracefs("tracefs-batch-busy", &t);
	UT_EQ_INT(tracefs_create(&t, ev, 100, &failed, &e), 0);
	snprintf(fake_busy, sizeof(fake_busy), "%s", ev[40].name);
	tracefs_remove(&t, ev, 100);
	UT_EQ_INT(events_left(&t), 1);
	fake_busy[0] = '\0';
	tracefs_remove(&t, ev + 40, 1);
	UT_EQ_INT(events_left(&t), 0);
	free(ev);
}
