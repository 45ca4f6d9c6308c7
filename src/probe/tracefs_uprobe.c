#include "probe/tracefs_uprobe.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
	t->write = write;
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

/* One write to uprobe_events carries at most this many bytes of lines: the
 * kernel parses them one after the other, so a write costs one syscall and
 * one file open for hundreds of events instead of one each. */
#define BATCH_BYTES 32768

static int open_events(const char *dir)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/uprobe_events", dir);
	return open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
}

typedef char event_name[128];

/* Whether name ("group/event") is of the group of busy ("group/event"). */
static bool same_group(const char *name, const char *busy)
{
	size_t n = strcspn(busy, "/");

	return busy[n] == '/' && strncmp(name, busy, n + 1) == 0;
}

/* Removes the events named at names, names + stride, … (n of them), many
 * lines a write.  The kernel stops a write at the first line it refuses
 * (EBUSY: still open; ENOENT: gone) and says only why, so the lines of a
 * refused write are written again one at a time.  With skip_busy_groups, an
 * event refused as busy stands for the rest of its group, which is not
 * written: each write waits for the kernel's event_mutex, which a process
 * closing uprobe perf events holds across a grace period per event (see
 * probe/closer.h), so removing a closer's N busy events one by one waited
 * for N of its closes.  Returns how many are gone (ENOENT included), each
 * marked in gone[] when given, or -errno when uprobe_events cannot be
 * opened for writing. */
static long remove_names(const char *dir, ssize_t (*wr)(int, const void *, size_t),
			 const char *names, size_t stride, size_t n, bool *gone,
			 bool skip_busy_groups)
{
	char *buf = malloc(BATCH_BYTES);
	int fd = open_events(dir);
	size_t i = 0;
	long n_gone = 0;
	const char *busy = NULL;   /* the last event refused as busy */

	if (fd < 0) {
		n_gone = -errno;
		free(buf);
		return n_gone;
	}
	while (buf && i < n) {
		size_t len = 0, first = i;

		/* A name is shorter than 128 bytes: its line always fits. */
		for (; i < n && len + 132 < BATCH_BYTES; i++)
			len += (size_t)snprintf(buf + len, 132, "-:%.127s\n", names + i * stride);
		if (wr(fd, buf, len) == (ssize_t)len) {
			for (size_t k = first; gone && k < i; k++)
				gone[k] = true;
			n_gone += (long)(i - first);
			continue;
		}
		for (size_t k = first; k < i; k++) {
			const char *name = names + k * stride;
			bool ok = false;
			if (!busy || !same_group(name, busy)) {
				int l = snprintf(buf, 132, "-:%.127s\n", name);
				ok = wr(fd, buf, (size_t)l) == l || errno == ENOENT;
				if (!ok && errno == EBUSY && skip_busy_groups)
					busy = name;
			}
			if (gone)
				gone[k] = ok;
			n_gone += ok;
		}
	}
	close(fd);
	free(buf);
	return n_gone;
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

bool tracefs_owner_gone(const char *proc_dir, const char *name)
{
	return !strncmp(name, GROUP_PREFIX, strlen(GROUP_PREFIX)) &&
	       group_owner_gone(proc_dir, name, getpid());
}

/* The names a removal has taken out so far (and, when busy events are not
 * waited for, those refused as busy), sorted after each pass. */
struct removed_names {
	event_name *names;
	size_t n, cap;
	size_t removed;   /* of them, how many are gone */
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
static int choose_events(const char *dir, bool (*pick)(const char *name, const void *ctx),
			 const void *ctx, const struct removed_names *done, event_name **out,
			 size_t *n)
{
	char path[512], line[1024];
	size_t cap = 0;
	FILE *f;

	*out = NULL;
	*n = 0;
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

/* The events of group not removed before, from its directory events/<group>/
 * (an event is a directory there; enable and filter are files): unlike
 * uprobe_events, one reading shows them all whatever other processes remove
 * meanwhile (theirs are in other directories).  -ENOENT without one (no
 * event left, or no such directory on this kernel). */
static int choose_group_events(const char *dir, const char *group,
			       const struct removed_names *done, event_name **out, size_t *n)
{
	char path[512], name[sizeof(event_name)];
	struct dirent *de;
	size_t cap = 0;
	DIR *d;

	*out = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "%s/events/%s", dir, group);
	if (!(d = opendir(path)))
		return -errno;
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		bool is_dir = de->d_type == DT_DIR;

		if (de->d_type == DT_UNKNOWN)
			is_dir = fstatat(dirfd(d), de->d_name, &st, 0) == 0 && S_ISDIR(st.st_mode);
		if (!is_dir || de->d_name[0] == '.' ||
		    snprintf(name, sizeof(name), "%s/%s", group, de->d_name) >= (int)sizeof(name) ||
		    already_removed(done, name))
			continue;
		if (grow_array(out, &cap, *n + 1, 16) < 0)
			break;
		memcpy((*out)[(*n)++], name, sizeof(name));
	}
	closedir(d);
	return 0;
}

/* write(2), or a unit test's fake kernel (tracefs.write). */
typedef ssize_t (*writer)(int fd, const void *buf, size_t n);

/* One pass over uprobe_events: removes the events pick() chooses that an
 * earlier pass did not; returns how many, and sets *chosen_n to how many it
 * chose.  A pass can miss events: the kernel hands the list out a page per
 * read(), finding its place again by line number, so when another process
 * removes events above that place between two reads, as many lines below it
 * are never shown (three runs' closers at once left 22 of 900 events
 * behind).  The callers therefore pass again until a pass chooses nothing. */
static long remove_pass(const char *dir, writer wr,
			bool (*pick)(const char *name, const void *ctx), const void *ctx,
			const char *group, struct removed_names *done, bool give_up_busy,
			size_t *chosen_n)
{
	event_name *chosen;
	bool *gone = NULL;
	size_t n;
	long rc = group ? choose_group_events(dir, group, done, &chosen, &n)
			: choose_events(dir, pick, ctx, done, &chosen, &n);

	*chosen_n = n;
	if (rc < 0 || !n)
		return rc;
	if (!(gone = calloc(n, sizeof(bool))) ||
	    grow_array(&done->names, &done->cap, done->n + n, 64) < 0)
		rc = -ENOMEM;
	else
		rc = remove_names(dir, wr, chosen[0], sizeof(chosen[0]), n, gone, give_up_busy);
	for (size_t i = 0; rc >= 0 && gone && i < n; i++) {
		if (gone[i] || give_up_busy)
			memcpy(done->names[done->n++], chosen[i], sizeof(event_name));
		done->removed += gone[i];
	}
	if (rc > 0 || (rc == 0 && give_up_busy))
		qsort(done->names, done->n, sizeof(event_name), cmp_name);
	free(gone);
	free(chosen);
	return rc;
}

/* tracefs_remove_where, or with group the events of its directory. */
static int remove_passes(const char *dir, writer wr,
			 bool (*pick)(const char *name, const void *ctx),
			 const void *ctx, const char *group, long busy_wait_ms)
{
	const struct timespec pause = { .tv_nsec = 100 * 1000 * 1000 };
	struct removed_names done = { 0 };
	size_t chosen;
	long waited_ms = 0, rc;

	/* Each pass but the last removes a new event or waits 100 ms: the
	 * passes are bounded by the events and the wait.  Without a wait
	 * (busy_wait_ms 0) an event refused as busy, and the rest of its group,
	 * is not tried again: a later pass writes only events it had not seen.
	 * A uprobe_events that cannot be read or written is said at once, not
	 * tried again. */
	for (;;) {
		rc = remove_pass(dir, wr, pick, ctx, group, &done, busy_wait_ms <= 0, &chosen);
		if (rc < 0 || !chosen || (!rc && waited_ms >= busy_wait_ms))
			break;
		if (!rc) {
			nanosleep(&pause, NULL);
			waited_ms += 100;
		}
	}
	free(done.names);
	return rc < 0 && !done.removed ? (int)rc : (int)done.removed;
}

int tracefs_remove_where(const char *dir, bool (*pick)(const char *name, const void *ctx),
			 const void *ctx, long busy_wait_ms)
{
	return remove_passes(dir, write, pick, ctx, NULL, busy_wait_ms);
}

/* Whether a live closer (closer.h: argv "ups-closer CLOSER_COMMAND GATE DIR
 * GROUP", CLOSER_COMMAND given as closer_command) removes group's events
 * itself.  Its run is gone, so the group looks stale,
 * but its events are busy until the closer has closed each one, ~100 ms
 * apiece under event_mutex: taking them for stale costs a pass over
 * uprobe_events and a refused removal per busy event, each waiting its turn
 * at that mutex, again and again (an attach next to a 5,000-probe closer
 * took 37 s). */
static bool closer_holds(const char *proc_dir, const char *closer_command, const char *group)
{
	char path[PATH_MAX], cmd[512];
	struct dirent *de;
	bool held = false;
	DIR *d = closer_command ? opendir(proc_dir) : NULL;

	while (d && !held && (de = readdir(d)) != NULL) {
		const char *argv[5] = { 0 };
		size_t n = 0, len;
		FILE *f;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "%s/%s/cmdline", proc_dir, de->d_name);
		if (!(f = fopen(path, "re")))
			continue;
		len = fread(cmd, 1, sizeof(cmd) - 1, f);
		fclose(f);
		cmd[len] = '\0';
		for (size_t at = 0; n < 5 && at < len; at += strlen(cmd + at) + 1)
			argv[n++] = cmd + at;
		held = n == 5 && !strcmp(argv[1], closer_command) && !strcmp(argv[4], group);
	}
	if (d)
		closedir(d);
	return held;
}

struct stale_ctx {
	const char *proc_dir;
	const char *closer_command;
	pid_t self;
	char group[128];      /* the group last judged (a group's lines are together) */
	bool group_stale;
};

/* name: "group/event" or "group/". */
static bool is_stale(const char *name, const void *ctx)
{
	struct stale_ctx *c = (struct stale_ctx *)ctx;
	const char *slash = strchr(name, '/');
	size_t n = slash ? (size_t)(slash - name) : 0;

	if (!n || n >= sizeof(c->group))
		return false;
	if (strncmp(c->group, name, n) != 0 || c->group[n] != '\0') {
		memcpy(c->group, name, n);
		c->group[n] = '\0';
		c->group_stale = group_owner_gone(c->proc_dir, name, c->self) &&
				 !closer_holds(c->proc_dir, c->closer_command, c->group);
	}
	return c->group_stale;
}

/* The stale groups from the directory events/, whose reading needs no
 * event_mutex (uprobe_events hands its lines out a page per turn at it):
 * each removed from its own directory.  -errno when events/ cannot be read. */
static int remove_stale_groups(const char *dir, writer wr, struct stale_ctx *c)
{
	char path[512], name[sizeof(c->group) + 1];
	event_name *stale = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int removed = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/events", dir);
	if (!(d = opendir(path)))
		return -errno;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, GROUP_PREFIX, strlen(GROUP_PREFIX)) != 0 ||
		    snprintf(name, sizeof(name), "%s/", de->d_name) >= (int)sizeof(name) ||
		    !is_stale(name, c) || grow_array(&stale, &cap, n + 1, 8) < 0)
			continue;
		snprintf(stale[n++], sizeof(event_name), "%s", de->d_name);
	}
	closedir(d);
	for (size_t i = 0; i < n; i++) {
		int rc = remove_passes(dir, wr, NULL, NULL, stale[i], 0);
		removed += rc > 0 ? rc : 0;
	}
	free(stale);
	return removed;
}

/* A gone run's events that are still busy belong to its closer, which is
 * still closing their perf events and removes them itself: neither taken for
 * stale (closer_holds) nor waited for.  The groups come from events/ where
 * it can be read, else from uprobe_events. */
int tracefs_remove_stale(struct tracefs *t, const char *proc_dir, const char *closer_command,
			 struct err *err)
{
	struct stale_ctx c = { .proc_dir = proc_dir, .closer_command = closer_command,
			       .self = t->owner };
	int rc = remove_stale_groups(t->dir, t->write, &c);

	if (rc < 0)
		rc = remove_passes(t->dir, t->write, is_stale, &c, NULL, 0);
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
 * than left behind (a later run would remove it: its owner is gone).  The
 * names come from the group's directory: a reading of uprobe_events can miss
 * every one of them while other runs' closers remove theirs (the clean-clone
 * make test once left all 8); uprobe_events is read only when the directory
 * is gone (all removed, or a kernel without it) or unreadable. */
int tracefs_remove_group(const char *dir, const char *group)
{
	int rc = remove_passes(dir, write, NULL, NULL, group, 5000);

	if (rc > 0)
		return rc;
	return rc < 0 && rc != -ENOENT && rc != -ENOTDIR ? rc
		: tracefs_remove_where(dir, in_group, group, 5000);
}

/* Appends ev's line to buf (room bytes): its length, or 0 when it does not
 * fit. */
static size_t event_line(const struct tracefs_event *ev, char *buf, size_t room)
{
	int l = snprintf(buf, room, "%c:%s %s:0x%llx\n", ev->retprobe ? 'r' : 'p', ev->name,
			 ev->path, (unsigned long long)ev->offset);

	return l > 0 && (size_t)l < room ? (size_t)l : 0;
}

/* Writes the lines of ev[*done..n) that fit in one write and reads their
 * ids; *done moves past those read.  On failure *failed is the event at
 * fault: the kernel created the lines before the one it refused (their ids
 * read), and none after it. */
static int create_some(const struct tracefs *t, int fd, char *buf, struct tracefs_event *ev,
		       size_t n, size_t *done, size_t *failed, struct err *err)
{
	size_t len = 0, end = *done, l, k;
	int e = 0;

	while (end < n && (l = event_line(&ev[end], buf + len, BATCH_BYTES - len)) > 0) {
		len += l;
		end++;
	}
	errno = 0;
	if (end == *done)   /* one line longer than a whole write */
		e = ENAMETOOLONG;
	else if (t->write(fd, buf, len) != (ssize_t)len)
		e = errno ? errno : EIO;
	for (k = *done; k < end && (ev[k].id = read_event_id(t, ev[k].name)) > 0; k++)
		;
	*done = k;
	if (!e && k == end)
		return 0;
	*failed = k < end ? k : end - 1;
	ev += *failed;
	if (!e)
		return err_set(err, ev->id, "tracefs event %s: no id: %s", ev->name,
			       strerror(-ev->id));
	return err_set(err, -e, "%s+0x%llx: creating tracefs uprobe %s: %s", ev->path,
		       (unsigned long long)ev->offset, ev->name, uprobe_strerror(e));
}

int tracefs_create(struct tracefs *t, struct tracefs_event *ev, size_t n, size_t *failed,
		   struct err *err)
{
	char *buf;
	size_t done = 0;
	int fd, rc = 0;

	*failed = 0;
	for (size_t i = 0; i < n; i++) {
		if (strpbrk(ev[i].path, " \t\n")) {
			*failed = i;
			return err_set(err, -EINVAL, "%s: tracefs uprobe_events cannot name a path "
				       "with white space", ev[i].path);
		}
		snprintf(ev[i].name, sizeof(ev[i].name), "%s/%c%u", t->group,
			 ev[i].retprobe ? 'r' : 'p', t->next_id++);
	}
	if (!n)
		return 0;
	buf = malloc(BATCH_BYTES);
	fd = open_events(t->dir);
	if (fd < 0 || !buf)
		rc = err_set(err, fd < 0 ? -errno : -ENOMEM, "%s/uprobe_events: %s", t->dir,
			     fd < 0 ? strerror(errno) : "out of memory");
	while (rc == 0 && done < n)
		rc = create_some(t, fd, buf, ev, n, &done, failed, err);
	if (fd >= 0)
		close(fd);
	free(buf);
	/* What was created goes, the event at fault too should the kernel have
	 * kept it (ENOENT for what it did not). */
	if (rc < 0)
		tracefs_remove(t, ev, *failed + 1);
	return rc;
}

void tracefs_remove(const struct tracefs *t, const struct tracefs_event *ev, size_t n)
{
	if (n)
		remove_names(t->dir, t->write, ev[0].name, sizeof(*ev), n, NULL, false);
}

int tracefs_open_event(const struct tracefs_event *ev, pid_t pid, int prog_fd,
		       const uint64_t *cookie, struct tracefs_probe *out, struct err *err)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = (__u64)ev->id;
	attr.sample_period = 1;
	fd = (int)syscall(__NR_perf_event_open, &attr, pid >= 0 ? pid : -1, pid >= 0 ? -1 : 0, -1,
			  PERF_FLAG_FD_CLOEXEC);
	fd = fd < 0 ? -errno : perf_event_bind(fd, prog_fd, cookie);
	if (fd < 0)
		return err_set(err, fd, "%s+0x%llx: opening tracefs uprobe %s for pid %d: %s",
			       ev->path, (unsigned long long)ev->offset, ev->name, (int)pid,
			       uprobe_strerror(-fd));
	snprintf(out->name, sizeof(out->name), "%s", ev->name);
	out->perf_fd = fd;
	return 0;
}

void tracefs_detach(struct tracefs *t, struct tracefs_probe *p)
{
	if (p->perf_fd >= 0)
		close(p->perf_fd);
	p->perf_fd = -1;
	remove_names(t->dir, t->write, p->name, 0, 1, NULL, false);
}
