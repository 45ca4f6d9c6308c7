#include "sys/proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
		if (proc_argv0(proc_dir, pid, argv0, sizeof(argv0)) != 0 || strcmp(argv0, name))
			continue;
		if (count == cap) {
			pid_t *np;
			cap = cap ? cap * 2 : 16;
			np = realloc(pids, cap * sizeof(*pids));
			if (!np) {
				free(pids);
				closedir(d);
				return err_set(err, -ENOMEM, "out of memory listing processes");
			}
			pids = np;
		}
		pids[count++] = pid;
	}
	closedir(d);
	qsort(pids, count, sizeof(*pids), cmp_pid);
	*out = pids;
	*n = count;
	return 0;
}

bool proc_alive(const char *proc_dir, pid_t pid)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%d", proc_dir, (int)pid);
	return access(path, F_OK) == 0;
}
