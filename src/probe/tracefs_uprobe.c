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

/* Removes the events whose "group/name" pick() chooses; returns how many,
 * and sets *left to how many of them the kernel refused to remove. */
static int remove_events_where(const char *dir, bool (*pick)(const char *name, const void *ctx),
			       const void *ctx, size_t *left)
{
	char path[512], line[1024], del[160];
	char (*chosen)[128] = NULL;
	size_t n = 0, cap = 0;
	int removed = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/uprobe_events", dir);
	f = fopen(path, "re");
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
		if (!sp || sp - name >= 128)
			continue;
		*sp = '\0';
		if (!pick(name, ctx))
			continue;
		if (grow_array(&chosen, &cap, n + 1, 16) < 0)
			break;
		snprintf(chosen[n++], 128, "%s", name);
	}
	fclose(f);
	snprintf(path, sizeof(path), "%s/uprobe_events", dir);
	int fd = n ? open(path, O_WRONLY | O_APPEND | O_CLOEXEC) : -1;
	if (n && fd < 0) {   /* not a state of the moment: said, not tried again */
		free(chosen);
		return -errno;
	}
	/* One line a write: a batch stops at its first failing line. */
	for (size_t i = 0; fd >= 0 && i < n; i++) {
		int len = snprintf(del, sizeof(del), "-:%s\n", chosen[i]);
		if (write(fd, del, (size_t)len) == len)
			removed++;
	}
	if (fd >= 0)
		close(fd);
	free(chosen);
	*left = n - (size_t)removed;
	return removed;
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

int tracefs_remove_stale(struct tracefs *t, const char *proc_dir, struct err *err)
{
	struct stale_ctx c = { .proc_dir = proc_dir, .self = t->owner };
	size_t left;
	int rc = remove_events_where(t->dir, is_stale, &c, &left);

	if (rc < 0)
		return err_set(err, rc, "%s/uprobe_events: %s", t->dir, strerror(-rc));
	return rc;
}

static bool in_group(const char *name, const void *group)
{
	size_t n = strlen(group);

	return strncmp(name, group, n) == 0 && name[n] == '/';
}

/* The closer removes its run's group right after closing the last perf
 * events; an event the kernel still counts as in use refuses removal (EBUSY),
 * so what is left is tried again for a few seconds, not left behind. */
int tracefs_remove_group(const char *dir, const char *group)
{
	const struct timespec pause = { .tv_nsec = 100 * 1000 * 1000 };
	int removed = 0, rc;
	size_t left = 0;

	for (int attempt = 0; attempt < 50; attempt++) {
		rc = remove_events_where(dir, in_group, group, &left);
		if (rc < 0)
			return removed ? removed : rc;
		removed += rc;
		if (!left)
			break;
		nanosleep(&pause, NULL);
	}
	return removed;
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
