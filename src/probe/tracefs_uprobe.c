#include "probe/tracefs_uprobe.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/grow.h"
#include "probe/attach.h"
#include "sys/proc.h"

#define GROUP_PREFIX "uprobestats_"

int tracefs_open(struct tracefs *t, const char *root, struct err *err)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[512];
	uint64_t start = 0;

	memset(t, 0, sizeof(*t));
	t->owner = getpid();
	/* Our start time makes the group ours for good: a later process that
	 * reuses our pid starts later, so it cannot pass for the owner. */
	proc_start_time("/proc", t->owner, &start);
	t->owner_start = start;
	snprintf(t->group, sizeof(t->group), GROUP_PREFIX "%d_%llu", (int)t->owner,
		 (unsigned long long)start);
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s%s/uprobe_events", root ? root : "", dirs[i]);
		if (access(path, W_OK) == 0) {
			snprintf(t->dir, sizeof(t->dir), "%s%s", root ? root : "", dirs[i]);
			return 0;
		}
	}
	return err_set(err, -ENOENT,
		       "no tracefs with uprobe_events (tried /sys/kernel/tracing "
		       "and /sys/kernel/debug/tracing): mount -t tracefs tracefs "
		       "/sys/kernel/tracing");
}

static int write_events(const struct tracefs *t, const char *line)
{
	char path[512];
	ssize_t n;
	int fd, e;

	snprintf(path, sizeof(path), "%s/uprobe_events", t->dir);
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, line, strlen(line));
	e = n < 0 ? -errno : 0;
	close(fd);
	return e;
}

static int read_event_id(const struct tracefs *t, const char *name)
{
	char path[512], buf[32];
	FILE *f;
	int id = -1;

	snprintf(path, sizeof(path), "%s/events/%s/id", t->dir, name);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (fgets(buf, sizeof(buf), f))
		id = atoi(buf);
	fclose(f);
	return id > 0 ? id : -EINVAL;
}

/* Whether the run that named group "uprobestats_<pid>_<start>" is gone: no
 * process with that pid, a zombie, or one that started at another time (the
 * pid was reused).  Groups named before start times were part of the name,
 * "uprobestats_<pid>", are gone when the pid no longer runs uprobestats. */
static bool group_owner_gone(const char *proc_dir, const char *group, pid_t self)
{
	const char *p = group + strlen(GROUP_PREFIX);
	char argv0[4096], *end;
	const char *base;
	unsigned long long start;
	uint64_t now_start;
	long pid;
	int rc;

	errno = 0;
	pid = strtol(p, &end, 10);
	if (errno || end == p || pid <= 0 || pid > INT_MAX)
		return false;   /* not a name we write: never touch it */
	if (*end == '_') {
		p = end + 1;
		start = strtoull(p, &end, 10);
		if (errno || end == p || *end != '/')
			return false;
		rc = proc_start_time(proc_dir, (pid_t)pid, &now_start);
		if (rc == -ESRCH || !proc_alive(proc_dir, (pid_t)pid))
			return true;   /* a zombie holds no events, or no such pid */
		return rc == 0 && now_start != start;   /* unreadable: proves nothing */
	}
	if (*end != '/' || (pid_t)pid == self)
		return false;
	if (proc_argv0(proc_dir, (pid_t)pid, argv0, sizeof(argv0)) != 0)
		return true;
	base = strrchr(argv0, '/');
	return !strstr(base ? base + 1 : argv0, "uprobestats");
}

typedef char event_name[128];

/* The names a removal has taken out so far, sorted after each pass. */
struct removed_names {
	event_name *names;
	size_t n, cap;
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

static bool already_removed(const struct removed_names *r, const char *name)
{
	return r->n && bsearch(name, r->names, r->n, sizeof(event_name), cmp_name);
}

/* The events of uprobe_events whose "group/name" pick() chooses and that were
 * not removed before: *n of them in *out (the caller frees it). */
static int choose_events(const char *path, bool (*pick)(const char *name, const void *ctx),
			 const void *ctx, const struct removed_names *done, event_name **out,
			 size_t *n)
{
	char line[1024];
	size_t cap = 0;
	FILE *f = fopen(path, "re");

	*out = NULL;
	*n = 0;
	if (!f)
		return -errno;
	/* Lines look like "p:uprobestats_123_4567/p4 /path:0x0000000000001234";
	 * another tool's events (bpftrace, simpleperf, Perfetto) never start
	 * with our prefix. */
	while (fgets(line, sizeof(line), f)) {
		char *name = line + 2, *sp;

		if (strlen(line) < 2 || line[1] != ':' ||
		    strncmp(name, GROUP_PREFIX, strlen(GROUP_PREFIX)) != 0)
			continue;
		sp = strchr(name, ' ');
		if (!sp || sp - name >= (long)sizeof(event_name))
			continue;
		*sp = '\0';
		if (!pick(name, ctx) || already_removed(done, name))
			continue;
		if (grow_array(out, &cap, *n + 1, 16) < 0)
			break;
		snprintf((*out)[(*n)++], sizeof(event_name), "%s", name);
	}
	fclose(f);
	return 0;
}

/* One pass over uprobe_events: removes the events pick() chooses that an
 * earlier pass did not; returns how many, and sets *chosen_n to how many it
 * chose.  A pass can miss events: the kernel hands the list out a page per
 * read(), finding its place again by line number, so when another process
 * removes events above that place between two reads, as many lines below it
 * are never shown (three runs' closers at once left 22 of 900 events
 * behind).  The callers therefore pass again until a pass chooses nothing. */
static int remove_pass(const char *dir, bool (*pick)(const char *name, const void *ctx),
		       const void *ctx, struct removed_names *done, size_t *chosen_n)
{
	char path[512], del[160];
	event_name *chosen;
	size_t n;
	int removed = 0, fd, rc;

	snprintf(path, sizeof(path), "%s/uprobe_events", dir);
	rc = choose_events(path, pick, ctx, done, &chosen, &n);
	*chosen_n = n;
	if (rc < 0)
		return rc;
	fd = n ? open(path, O_WRONLY | O_APPEND | O_CLOEXEC) : -1;
	if (n && fd < 0) {
		free(chosen);
		return -errno;
	}
	/* One line a write: a batch stops at its first failing line. */
	for (size_t i = 0; i < n; i++) {
		int len = snprintf(del, sizeof(del), "-:%s\n", chosen[i]);
		if (write(fd, del, (size_t)len) != len ||
		    grow_array(&done->names, &done->cap, done->n + 1, 64) < 0)
			continue;
		memcpy(done->names[done->n++], chosen[i], sizeof(event_name));
		removed++;
	}
	if (fd >= 0)
		close(fd);
	free(chosen);
	if (removed)
		qsort(done->names, done->n, sizeof(event_name), cmp_name);
	return removed;
}

/* Passes until one chooses nothing new (every event removed, or one the
 * list still shows after its removal succeeded: never written twice), or
 * until a pass removes none and busy_wait_ms has gone by. */
int tracefs_remove_where(const char *dir, bool (*pick)(const char *name, const void *ctx),
			 const void *ctx, long busy_wait_ms)
{
	const struct timespec pause = { .tv_nsec = 100 * 1000 * 1000 };
	struct removed_names done = { 0 };
	size_t chosen;
	long waited_ms = 0;
	int rc;

	/* Each pass but the last removes a new event or waits 100 ms: the
	 * passes are bounded by the events and the wait. */
	for (;;) {
		rc = remove_pass(dir, pick, ctx, &done, &chosen);
		if (rc < 0 || !chosen || (!rc && waited_ms >= busy_wait_ms))
			break;
		if (!rc) {
			nanosleep(&pause, NULL);
			waited_ms += 100;
		}
	}
	free(done.names);
	return rc < 0 && !done.n ? rc : (int)done.n;
}

struct stale_ctx {
	const char *proc_dir;
	pid_t self;
};

static bool is_stale(const char *name, const void *ctx)
{
	const struct stale_ctx *c = ctx;

	return group_owner_gone(c->proc_dir, name, c->self);
}

/* A gone run's events that are still busy belong to its closer, which is
 * still closing their perf events and removes them itself: not waited for. */
int tracefs_remove_stale(struct tracefs *t, const char *proc_dir, struct err *err)
{
	struct stale_ctx c = { .proc_dir = proc_dir, .self = t->owner };
	int rc = tracefs_remove_where(t->dir, is_stale, &c, 0);

	if (rc < 0)
		return err_set(err, rc, "%s/uprobe_events: %s", t->dir, strerror(-rc));
	return rc;
}

static bool in_group(const char *name, const void *group)
{
	size_t n = strlen(group);

	return strncmp(name, group, n) == 0 && name[n] == '/';
}

/* The closer's last step.  Its perf events are all closed, so none should be
 * busy; if the kernel still refuses one, it is tried again for 5 s rather
 * than left behind (a later run would remove it: its owner is gone). */
int tracefs_remove_group(const char *dir, const char *group)
{
	return tracefs_remove_where(dir, in_group, group, 5000);
}

int tracefs_attach(struct tracefs *t, const char *path, uint64_t offset, bool retprobe,
		   pid_t pid, int prog_fd, const uint64_t *cookie, struct tracefs_probe *out,
		   struct err *err)
{
	struct perf_event_attr attr;
	char line[PATH_MAX + 128], del[160];
	int id, fd, rc;

	if (strpbrk(path, " \t\n"))
		return err_set(err, -EINVAL, "%s: tracefs uprobe_events cannot name a path with "
			       "white space", path);
	snprintf(out->name, sizeof(out->name), "%s/%c%u", t->group, retprobe ? 'r' : 'p',
		 t->next_id++);
	snprintf(line, sizeof(line), "%c:%s %s:0x%llx\n", retprobe ? 'r' : 'p', out->name, path,
		 (unsigned long long)offset);
	snprintf(del, sizeof(del), "-:%s\n", out->name);
	rc = write_events(t, line);
	if (rc < 0)
		return err_set(err, rc, "%s+0x%llx: creating tracefs uprobe %s: %s", path,
			       (unsigned long long)offset, out->name, uprobe_strerror(-rc));
	id = read_event_id(t, out->name);
	if (id < 0) {
		write_events(t, del);
		return err_set(err, id, "tracefs event %s: no id: %s", out->name, strerror(-id));
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = (__u64)id;
	attr.sample_period = 1;
	fd = (int)syscall(__NR_perf_event_open, &attr, pid >= 0 ? pid : -1, pid >= 0 ? -1 : 0, -1,
			  PERF_FLAG_FD_CLOEXEC);
	fd = fd < 0 ? -errno : perf_event_bind(fd, prog_fd, cookie);
	if (fd < 0) {
		rc = fd;
		write_events(t, del);
		return err_set(err, rc, "%s+0x%llx: opening tracefs uprobe %s for %s%d: %s", path,
			       (unsigned long long)offset, out->name, pid >= 0 ? "pid " : "pid ",
			       (int)pid, uprobe_strerror(-rc));
	}
	out->perf_fd = fd;
	return 0;
}

void tracefs_detach(struct tracefs *t, struct tracefs_probe *p)
{
	char del[160];

	if (p->perf_fd >= 0)
		close(p->perf_fd);
	p->perf_fd = -1;
	snprintf(del, sizeof(del), "-:%s\n", p->name);
	write_events(t, del);
}
