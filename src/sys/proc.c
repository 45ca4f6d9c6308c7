#include "sys/proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "common/grow.h"
#include "config/schema.h"

int proc_argv0(const char *proc_dir, pid_t pid, char *buf, size_t size)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/cmdline", proc_dir, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -ENOENT : -ENODATA;
	buf[n] = '\0';  /* argv[0] ends at the first NUL */
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

static bool parse_pid(const char *s, pid_t *pid)
{
	long v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > 4194304)
			return false;
		v = v * 10 + (*s - '0');
	}
	*pid = (pid_t)v;
	return v > 0;
}

bool proc_comm(const char *proc_dir, pid_t pid, char *buf, size_t size)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/comm", proc_dir, (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return true;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

bool proc_name_matches(const char *argv0, const char *name)
{
	const char *base = strrchr(argv0, '/');

	if (!strcmp(argv0, name))
		return true;
	return base && *name && !strchr(name, '/') && !strcmp(base + 1, name);
}

int proc_find_by_name(const char *proc_dir, const char *name, pid_t **out, size_t *n,
		      struct err *err)
{
	DIR *d = opendir(proc_dir);
	struct dirent *de;
	pid_t *pids = NULL;
	size_t count = 0, cap = 0;
	char argv0[4096];

	*out = NULL;
	*n = 0;
	if (!d)
		return err_set(err, -errno, "%s: cannot list processes: %s", proc_dir,
			       strerror(errno));
	while ((de = readdir(d))) {
		pid_t pid;
		if (!parse_pid(de->d_name, &pid))
			continue;
		if (proc_argv0(proc_dir, pid, argv0, sizeof(argv0)) != 0 ||
		    !proc_name_matches(argv0, name))
			continue;
		if (grow_array(&pids, &cap, count + 1, 16) < 0) {
			free(pids);
			closedir(d);
			return err_set(err, -ENOMEM, "out of memory listing processes");
		}
		pids[count++] = pid;
	}
	closedir(d);
	qsort(pids, count, sizeof(*pids), cmp_pid);
	*out = pids;
	*n = count;
	return 0;
}

void proc_nearest_name(const char *proc_dir, const char *name, char *buf, size_t size)
{
	char **names = NULL, argv0[4096], comm[64];
	size_t n = 0, cap = 0;
	DIR *d = opendir(proc_dir);
	struct dirent *de;
	const char *best;

	buf[0] = 0;
	while (d && (de = readdir(d))) {
		pid_t pid;
		const char *cand[2] = { argv0, comm };
		if (!parse_pid(de->d_name, &pid) ||
		    proc_argv0(proc_dir, pid, argv0, sizeof(argv0)) != 0)
			continue;
		if (!proc_comm(proc_dir, pid, comm, sizeof(comm)))
			comm[0] = 0;
		cand[0] = base_name(argv0);
		for (int k = 0; k < 2; k++) {
			if (!*cand[k])
				continue;
			if (grow_array(&names, &cap, n + 1, 64) < 0)
				goto out;
			if (!(names[n] = strdup(cand[k])))
				goto out;
			n++;
		}
	}
	best = schema_closest_name((const char *const *)names, n, name, strlen(name));
	if (best)
		snprintf(buf, size, "%s", best);
out:
	if (d)
		closedir(d);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int proc_maps_file(const char *proc_dir, pid_t pid, const char *path)
{
	struct stat st;
	char mp[256];
	FILE *f;
	char line[4096 + 128];
	int found = 0, lines = 0;

	if (stat(path, &st) < 0)
		return -errno;
	snprintf(mp, sizeof(mp), "%s/%d/maps", proc_dir, (int)pid);
	if (!(f = fopen(mp, "re")))
		return -errno;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned maj, min;
		unsigned long long ino;
		int name_at = 0;
		lines++;
		if (sscanf(line, "%*s %*s %*s %x:%x %llu %n", &maj, &min, &ino, &name_at) < 3)
			continue;
		/* the inode (a chrooted process's maps name the host path, which
		 * may differ from ours), else the same path */
		found = (ino == (unsigned long long)st.st_ino && makedev(maj, min) == st.st_dev) ||
			(name_at && !strncmp(line + name_at, path, strlen(path)) &&
			 line[name_at + (int)strlen(path)] == '\n');
	}
	fclose(f);
	return found ? 1 : lines ? 0 : -ESRCH;   /* no mapping at all: exited or a zombie */
}

bool proc_alive(const char *proc_dir, pid_t pid)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%d", proc_dir, (int)pid);
	return access(path, F_OK) == 0;
}

#define PROC_PF_KTHREAD 0x00200000u /* task flags in /proc/PID/stat: a kernel thread */

int proc_check_traceable(const char *proc_dir, pid_t pid, struct err *err)
{
	char path[256], buf[1024], state = 0;
	const char *p;
	unsigned long flags = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/stat", proc_dir, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) /* a test fixture may hold only the pid's directory */
		return proc_alive(proc_dir, pid) ? 0
		       : err_set(err, -ESRCH, "no process with pid %d", (int)pid);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return err_set(err, -ESRCH, "no process with pid %d", (int)pid);
	buf[n] = '\0';
	/* "pid (comm) S ppid pgrp session tty tpgid flags ...": comm may hold ')' */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", &state, &flags) != 2)
		return 0; /* an unknown layout: let attaching say what it finds */
	if (state == 'Z' || state == 'X')
		return err_set(err, -ESRCH, "pid %d is a zombie: it has exited (its parent has "
			       "not reaped it yet), so it runs no code to probe", (int)pid);
	if (flags & PROC_PF_KTHREAD)
		return err_set(err, -ESRCH, "pid %d is a kernel thread: it runs no user code to "
			       "probe", (int)pid);
	return 0;
}

int proc_start_time(const char *proc_dir, pid_t pid, uint64_t *start)
{
	char path[256], buf[1024], state = 0;
	unsigned long long t;
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/stat", proc_dir, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ENOENT;
	buf[n] = '\0';
	/* after "(comm)": state, then fields 4..21, then starttime (22) */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
			 "%*d %*d %*d %*d %llu", &state, &t) != 2)
		return -EINVAL;
	if (state == 'Z' || state == 'X')
		return -ESRCH;
	/* Two runs in time namespaces of different offsets would each read the
	 * other's start time shifted, and take its live events for a gone run's. */
	*start = t - (uint64_t)proc_boottime_offset_ticks(NULL);
	return 0;
}

int64_t proc_boottime_offset_ticks(const char *timens_offsets)
{
	FILE *f = fopen(timens_offsets ? timens_offsets : "/proc/self/timens_offsets", "re");
	long hz = sysconf(_SC_CLK_TCK);
	char line[128], name[32];
	long long sec, nsec;
	int64_t ticks = 0;

	if (!f)
		return 0;
	/* "monotonic  S  NS" and "boottime  S  NS" lines */
	while (hz > 0 && fgets(line, sizeof(line), f))
		if (sscanf(line, "%31s %lld %lld", name, &sec, &nsec) == 3 &&
		    !strcmp(name, "boottime") && nsec >= 0 && nsec < 1000000000LL &&
		    sec > -(1LL << 40) && sec < (1LL << 40))
			ticks = (int64_t)(sec * hz + nsec / (1000000000LL / hz));
	fclose(f);
	return ticks;
}

/* The first number a line of /proc/PID/status gives for scan ("Uid: %ld"),
 * or -1. */
static long status_number(const char *proc_dir, pid_t pid, const char *scan)
{
	char path[256], line[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/status", proc_dir, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, scan, &v) == 1)
			break;
	fclose(f);
	return v;
}

long proc_uid(const char *proc_dir, pid_t pid)
{
	return status_number(proc_dir, pid, "Uid: %ld");
}

long proc_tgid(const char *proc_dir, pid_t tid)
{
	return status_number(proc_dir, tid, "Tgid: %ld");
}

static bool known_has(const struct proc_watch *w, pid_t pid)
{
	if (!w->n_known)
		return false;
	return bsearch(&pid, w->known, w->n_known, sizeof(pid_t), cmp_pid) != NULL;
}

static int known_add(struct proc_watch *w, pid_t pid)
{
	size_t i;

	if (grow_array(&w->known, &w->cap_known, w->n_known + 1, 256) < 0)
		return -ENOMEM;
	/* Keep it sorted: new pids mostly arrive in increasing order. */
	for (i = w->n_known; i > 0 && w->known[i - 1] > pid; i--)
		w->known[i] = w->known[i - 1];
	w->known[i] = pid;
	w->n_known++;
	return 0;
}

int proc_watch_init(struct proc_watch *w, const char *proc_dir, const char *name, bool android,
		    struct err *err)
{
	DIR *d;
	struct dirent *de;

	memset(w, 0, sizeof(*w));
	w->proc_dir = proc_dir;
	w->name = name;
	w->android = android;
	d = opendir(proc_dir);
	if (!d)
		return err_set(err, -errno, "%s: cannot list processes: %s", proc_dir,
			       strerror(errno));
	while ((de = readdir(d))) {
		pid_t pid;
		if (parse_pid(de->d_name, &pid) && known_add(w, pid) < 0) {
			closedir(d);
			proc_watch_free(w);
			return err_set(err, -ENOMEM, "out of memory watching processes");
		}
	}
	closedir(d);
	return 0;
}

/* Names an Android app process has between fork and taking its own name:
 * zygote's (inherited), the USAP pool's, and ART's placeholder. */
static bool transitional_name(const char *argv0)
{
	static const char *const names[] = { "<pre-initialized>", "zygote", "zygote64",
					     "usap32", "usap64", NULL };
	for (size_t i = 0; names[i]; i++)
		if (strcmp(argv0, names[i]) == 0)
			return true;
	return false;
}

/* 1: this is the process; 2: named, not ours (yet: it may still exec or
 * rename); -1: not named yet; 0: gone. */
static int watch_match(const struct proc_watch *w, pid_t pid)
{
	char argv0[4096];
	int rc = proc_argv0(w->proc_dir, pid, argv0, sizeof(argv0));

	if (rc == -ENOENT)
		return 0;
	if (rc == -ENODATA || transitional_name(argv0))
		return -1;
	if (w->name)
		return proc_name_matches(argv0, w->name) ? 1 : 2;
	if (w->android)
		return proc_uid(w->proc_dir, pid) >= ANDROID_FIRST_APP_UID ? 1 : 2;
	return 1;
}

/* The candidate entry of pid, added (first seen now) when new; NULL on ENOMEM. */
static struct proc_watch_candidate *candidate(struct proc_watch *w, pid_t pid, uint64_t now)
{
	for (size_t i = 0; i < w->n_cands; i++)
		if (w->cands[i].pid == pid)
			return &w->cands[i];
	if (grow_array(&w->cands, &w->cap_cands, w->n_cands + 1, 32) < 0)
		return NULL;
	w->cands[w->n_cands] = (struct proc_watch_candidate){ pid, now };
	return &w->cands[w->n_cands++];
}

/* A candidate that has not matched within its window (or is gone) becomes
 * known, and is not looked at again. */
static int settle(struct proc_watch *w, struct proc_watch_candidate *c, int match, uint64_t now)
{
	uint64_t window = match < 0 ? PROC_WATCH_UNNAMED_NS : PROC_WATCH_SETTLE_NS;
	pid_t pid = c->pid;

	if (match != 0 && now - c->first_seen_ns < window)
		return 0;
	*c = w->cands[--w->n_cands];
	return known_add(w, pid);
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

pid_t proc_watch_poll_at(struct proc_watch *w, uint64_t now)
{
	DIR *d = opendir(w->proc_dir);
	struct dirent *de;
	pid_t found = 0;

	if (!d)
		return -errno;
	while (!found && (de = readdir(d))) {
		struct proc_watch_candidate *c;
		pid_t pid;
		int m;

		if (!parse_pid(de->d_name, &pid) || known_has(w, pid))
			continue;
		c = candidate(w, pid, now);
		if (!c) {
			found = -ENOMEM;
			break;
		}
		m = watch_match(w, pid);
		if (m == 1)
			found = pid;
		else if (settle(w, c, m, now) < 0)
			found = -ENOMEM;
	}
	closedir(d);
	return found;
}

pid_t proc_watch_poll(struct proc_watch *w)
{
	return proc_watch_poll_at(w, monotonic_ns());
}

void proc_watch_free(struct proc_watch *w)
{
	free(w->known);
	free(w->cands);
	w->known = NULL;
	w->cands = NULL;
	w->n_known = w->cap_known = w->n_cands = w->cap_cands = 0;
}
