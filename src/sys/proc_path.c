#include "sys/proc_path.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

/* One file-backed line of /proc/PID/maps. */
struct mapping {
	unsigned long start, end;
	dev_t dev;
	ino_t ino;
	const char *path;   /* points into the line */
};

static bool parse_maps_line(char *line, struct mapping *m)
{
	unsigned maj, min;
	unsigned long long ino;
	int n = 0;
	size_t len;

	if (sscanf(line, "%lx-%lx %*4s %*x %x:%x %llu %n", &m->start, &m->end, &maj, &min,
		   &ino, &n) != 5 || !n || line[n] != '/')
		return false;
	len = strcspn(line + n, "\n");
	line[n + len] = '\0';
	if (len > 10 && !strcmp(line + n + len - 10, " (deleted)"))
		return false;
	m->dev = makedev(maj, min);
	m->ino = (ino_t)ino;
	m->path = line + n;
	return true;
}

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

/* The mapping of the file seen (at seen_path), else the one whose maps path is
 * path: written to out as openable() gives it.  1 when found, 0 when not, or
 * a negative error. */
static int from_maps(const char *proc_dir, pid_t pid, const struct stat *seen,
		     const char *seen_path, const char *path, char *out, size_t size)
{
	char maps[64], *line = NULL, *by_path = NULL;
	size_t cap = 0;
	struct mapping m, bp = { 0 };
	int rc = 0;
	FILE *f;

	snprintf(maps, sizeof(maps), "%s/%d/maps", proc_dir, (int)pid);
	if (!(f = fopen(maps, "re")))
		return 0;
	while (!rc && getline(&line, &cap, f) > 0) {
		if (!parse_maps_line(line, &m))
			continue;
		if (seen && m.dev == seen->st_dev && m.ino == seen->st_ino)
			rc = openable(proc_dir, pid, &m, seen_path, out, size) ?: 1;
		else if (!by_path && !strcmp(m.path, path) && (by_path = strdup(m.path)))
			bp = (struct mapping){ m.start, m.end, m.dev, m.ino, by_path };
	}
	if (!rc && by_path)
		rc = openable(proc_dir, pid, &bp, NULL, out, size) ?: 1;
	free(by_path);
	free(line);
	fclose(f);
	return rc;
}

int proc_path_resolve(const char *proc_dir, pid_t pid, const char *path, char *out,
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
