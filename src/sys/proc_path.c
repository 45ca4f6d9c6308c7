#include "sys/proc_path.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/zip_path.h"
#include "sys/maps.h"

/* One file-backed mapping of /proc/PID/maps. */
struct mapping {
	unsigned long start, end;
	dev_t dev;
	ino_t ino;
	const char *path;
};

static bool same_file(const char *path, dev_t dev, ino_t ino)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

static int put(char *out, size_t size, const char *s)
{
	return (size_t)snprintf(out, size, "%s", s) < size ? 0 : -ENAMETOOLONG;
}

/* The path of mapping m that names its file here (see proc_path.h); known, when
 * not NULL, is a path already seen to be that file. */
static int openable(const char *proc_dir, pid_t pid, const struct mapping *m,
		    const char *known, char *out, size_t size)
{
	char via_root[PATH_MAX];

	if (same_file(m->path, m->dev, m->ino))
		return put(out, size, m->path);
	if (known)
		return put(out, size, known);
	if ((size_t)snprintf(via_root, sizeof(via_root), "%s/%d/root%s", proc_dir, (int)pid,
			     m->path) < sizeof(via_root) &&
	    same_file(via_root, m->dev, m->ino))
		return put(out, size, via_root);
	return (size_t)snprintf(out, size, "%s/%d/map_files/%lx-%lx", proc_dir, (int)pid,
				m->start, m->end) < size ? 0 : -ENAMETOOLONG;
}

int proc_path_of_mapping(const char *proc_dir, pid_t pid, const struct proc_mapping *pm,
			 char *out, size_t size)
{
	struct mapping m = { pm->start, pm->end, pm->dev, (ino_t)pm->inode, pm->path };

	return openable(proc_dir ? proc_dir : "/proc", pid, &m, NULL, out, size);
}

struct find_ctx {
	const char *proc_dir, *seen_path, *path;
	pid_t pid;
	const struct stat *seen;
	char *out;
	size_t size;
	struct mapping by_path;       /* the first mapping whose maps path is path */
	char *by_path_name;
	int rc;                       /* openable()'s, for the mapping of seen */
};

static int find_mapping(void *ctx, const struct proc_mapping *pm)
{
	struct find_ctx *c = ctx;
	struct mapping m = { pm->start, pm->end, pm->dev, (ino_t)pm->inode, pm->path };
	size_t len = pm->path_len;

	if (pm->path[0] != '/' || (len > 10 && !strcmp(pm->path + len - 10, " (deleted)")))
		return 0;
	if (c->seen && m.dev == c->seen->st_dev && m.ino == c->seen->st_ino) {
		c->rc = openable(c->proc_dir, c->pid, &m, c->seen_path, c->out, c->size) ?: 1;
		return 1;
	}
	if (!c->by_path_name && !strcmp(m.path, c->path) && (c->by_path_name = strdup(m.path))) {
		c->by_path = m;
		c->by_path.path = c->by_path_name;
	}
	return 0;
}

/* The mapping of the file seen (at seen_path), else the one whose maps path is
 * path: written to out as openable() gives it.  1 when found, 0 when not, or
 * a negative error. */
static int from_maps(const char *proc_dir, pid_t pid, const struct stat *seen,
		     const char *seen_path, const char *path, char *out, size_t size)
{
	struct find_ctx c = { proc_dir, seen_path, path, pid, seen, out, size, { 0 }, NULL, 0 };
	struct err e = { 0 };
	int rc;

	proc_maps_read(proc_dir, pid, find_mapping, &c, &e);   /* unreadable: not mapped */
	rc = c.rc;
	if (!rc && c.by_path_name)
		rc = openable(proc_dir, pid, &c.by_path, NULL, out, size) ?: 1;
	free(c.by_path_name);
	return rc;
}

static int resolve_plain(const char *proc_dir, pid_t pid, const char *path, char *out,
			 size_t size);

int proc_path_resolve(const char *proc_dir, pid_t pid, const char *path, char *out,
		      size_t size)
{
	char container[PATH_MAX], resolved[PATH_MAX];
	const char *entry;
	size_t clen;
	int rc;

	/* CONTAINER!/ENTRY (an APK's library): the container as the process sees it */
	if (zip_path_split(path, &clen, &entry, NULL) <= 0)
		return resolve_plain(proc_dir, pid, path, out, size);
	if (clen >= sizeof(container))
		return -ENAMETOOLONG;
	memcpy(container, path, clen);
	container[clen] = '\0';
	if ((rc = resolve_plain(proc_dir, pid, container, resolved, sizeof(resolved))))
		return rc;
	return zip_path_join(out, size, resolved, strlen(resolved), entry, strlen(entry));
}

static int resolve_plain(const char *proc_dir, pid_t pid, const char *path, char *out,
			 size_t size)
{
	char via_root[PATH_MAX];
	struct stat st;
	bool seen;
	int rc;

	if (pid <= 0 || path[0] != '/')
		return put(out, size, path);
	if ((size_t)snprintf(via_root, sizeof(via_root), "%s/%d/root%s", proc_dir, (int)pid,
			     path) >= sizeof(via_root))
		return put(out, size, path);
	seen = stat(via_root, &st) == 0;
	if ((rc = from_maps(proc_dir, pid, seen ? &st : NULL, via_root, path, out, size)))
		return rc < 0 ? rc : 0;
	if (seen && !same_file(path, st.st_dev, st.st_ino))
		return put(out, size, via_root);
	return put(out, size, path);
}
