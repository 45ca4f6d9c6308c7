/* suspend_watch.c — see suspend_watch.h. */
#include "probe/suspend_watch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe/tracefs_uprobe.h"
#include "sys/proc.h"

#define EVENT "events/power/suspend_resume/enable"
#define MARK "suspend_resume: machine_suspend["
#define BUFFER_KB "8"      /* per CPU: a few hundred events, dozens a suspend */
#define TRACE_MAX (1u << 20)

static int write_file(const char *dir, const char *rel, const char *text)
{
	char path[768];
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if ((fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)) < 0)
		return -errno;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		rc = errno ? -errno : -EIO;
	close(fd);
	return rc;
}

/* Instances a gone run left (killed before it removed its own). */
static void remove_stale(const char *instances, const char *proc_dir)
{
	DIR *d = opendir(instances);
	char name[300], path[768];

	for (struct dirent *e; d && (e = readdir(d));) {
		snprintf(name, sizeof(name), "%s/", e->d_name);
		if (!tracefs_owner_gone(proc_dir, name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", instances, e->d_name);
		(void)write_file(path, EVENT, "0");
		(void)rmdir(path);
	}
	if (d)
		closedir(d);
}

int suspend_watch_open(struct suspend_watch *w, const char *root, const char *proc_dir,
		       struct err *err)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char instances[600], group[64];
	uint64_t start = 0;
	size_t i;
	int rc;

	w->dir[0] = '\0';
	for (i = 0; i < 2; i++) {
		struct stat st;
		snprintf(instances, sizeof(instances), "%s%s/instances", root ? root : "", dirs[i]);
		if (stat(instances, &st) == 0 && S_ISDIR(st.st_mode))
			break;
	}
	if (i == 2)
		return err_set(err, -ENOENT, "no tracefs with instances/ (tried "
			       "/sys/kernel/tracing and /sys/kernel/debug/tracing)");
	proc_start_time("/proc", getpid(), &start);
	snprintf(group, sizeof(group), "uprobestats_%d_%llu", (int)getpid(),
		 (unsigned long long)start);
	remove_stale(instances, proc_dir);
	snprintf(w->dir, sizeof(w->dir), "%s/%s", instances, group);
	if (mkdir(w->dir, 0700) < 0 && errno != EEXIST) {
		rc = -errno;
		w->dir[0] = '\0';
		return err_set(err, rc, "no tracefs instance %s/%s: %s", instances, group,
			       strerror(-rc));
	}
	/* the records' clock; the event last, once the clock is set */
	if ((rc = write_file(w->dir, "trace_clock", "mono")) < 0 ||
	    (rc = write_file(w->dir, "buffer_size_kb", BUFFER_KB)) < 0 ||
	    (rc = write_file(w->dir, EVENT, "1")) < 0) {
		err_set(err, rc, "tracefs instance %s: no mono trace clock or no "
			"power:suspend_resume event: %s", w->dir, strerror(-rc));
		suspend_watch_close(w);
		return rc;
	}
	return 0;
}

bool suspend_watch_on(const struct suspend_watch *w)
{
	return w->dir[0] != '\0';
}

/* "   SECONDS.MICROS: " before p's MARK: its ns, or 0. */
static uint64_t line_stamp(const char *line, const char *mark)
{
	const char *colon = mark;
	const char *p;
	unsigned long long sec = 0, usec = 0, scale = 1;

	while (colon > line && colon[-1] == ' ')
		colon--;
	if (colon == line || colon[-1] != ':')
		return 0;
	p = --colon;
	while (p > line && p[-1] >= '0' && p[-1] <= '9')
		p--;
	if (p == colon || p == line || p[-1] != '.')
		return 0;
	for (const char *q = p; q < colon; q++) {
		usec = usec * 10 + (unsigned long long)(*q - '0');
		scale *= 10;
	}
	const char *s_end = --p;
	while (p > line && p[-1] >= '0' && p[-1] <= '9')
		p--;
	if (p == s_end)
		return 0;
	for (const char *q = p; q < s_end; q++)
		sec = sec * 10 + (unsigned long long)(*q - '0');
	if (scale > 1000000000ull)
		return 0;
	return sec * 1000000000ull + usec * (1000000000ull / scale);
}

bool suspend_watch_parse(const char *text, size_t n, uint64_t after, uint64_t before,
			 uint64_t *at)
{
	bool found = false;

	for (const char *line = text, *end = text + n; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *stop = nl ? nl : end;
		size_t len = (size_t)(stop - line);
		char buf[512];

		if (len < sizeof(buf)) {
			memcpy(buf, line, len);
			buf[len] = '\0';
			const char *m = strstr(buf, MARK);
			uint64_t ts = m ? line_stamp(buf, m) : 0;
			if (ts > after && ts <= before && (!found || ts > *at)) {
				*at = ts;
				found = true;
			}
		}
		line = stop + 1;
	}
	return found;
}

bool suspend_watch_boundary(const struct suspend_watch *w, uint64_t after, uint64_t before,
			    uint64_t *at)
{
	char path[768], *text;
	size_t n = 0;
	ssize_t r;
	bool found;
	int fd;

	if (!suspend_watch_on(w))
		return false;
	snprintf(path, sizeof(path), "%s/trace", w->dir);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	if (!(text = malloc(TRACE_MAX))) {
		close(fd);
		return false;
	}
	while (n < TRACE_MAX && (r = read(fd, text + n, TRACE_MAX - n)) > 0)
		n += (size_t)r;
	close(fd);
	found = suspend_watch_parse(text, n, after, before, at);
	free(text);
	return found;
}

void suspend_watch_close(struct suspend_watch *w)
{
	if (!suspend_watch_on(w))
		return;
	(void)write_file(w->dir, EVENT, "0");
	(void)rmdir(w->dir);
	w->dir[0] = '\0';
}
