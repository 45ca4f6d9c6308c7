#include "sys/maps.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "common/mapfile.h"
#include "sys/sysroot.h"

/* One line (NUL-terminated, no newline) into *m; m->path points into it. */
static bool parse_line(const char *line, struct proc_mapping *m)
{
	unsigned long long start, end, off, inode;
	unsigned maj, min;
	char perms[8];
	int pos = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu%n", &start, &end, perms, &off, &maj, &min,
		   &inode, &pos) != 7 || !pos || end <= start || strlen(perms) != 4)
		return false;
	*m = (struct proc_mapping){ .start = start, .end = end, .offset = off,
				    .dev = makedev(maj, min), .inode = inode };
	memcpy(m->perms, perms, 5);
	for (line += pos; *line == ' ' || *line == '\t'; line++)
		;
	m->path = line;
	m->path_len = strlen(line);
	return true;
}

int proc_maps_parse(const char *text, size_t len, proc_maps_fn fn, void *ctx)
{
	/* a line NUL-terminated for the parser and the callback (longer ones are
	 * cut: PATH_MAX bounds what the kernel prints) */
	char line[4352];

	for (const char *s = text, *end = text + len; s < end;) {
		const char *nl = memchr(s, '\n', (size_t)(end - s)), *e = nl ? nl : end;
		size_t n = (size_t)(e - s) < sizeof(line) ? (size_t)(e - s) : sizeof(line) - 1;
		struct proc_mapping m;
		int rc;

		memcpy(line, s, n);
		line[n] = '\0';
		if (parse_line(line, &m) && (rc = fn(ctx, &m)))
			return rc;
		s = e + 1;
	}
	return 0;
}

int proc_maps_read_file(const char *path, proc_maps_fn fn, void *ctx, struct err *err)
{
	struct mapped_file mf;
	int rc;

	if ((rc = mapfile_open(path, 0, MAPFILE_ALLOW_EMPTY, &mf, err)))
		return rc;
	rc = proc_maps_parse((const char *)mf.data, mf.size, fn, ctx);
	mapfile_close(&mf);
	return rc;
}

void proc_maps_path(const char *proc_dir, pid_t pid, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%d/maps", proc_dir ? proc_dir : SYS_DEFAULT_PROC, (int)pid);
}

int proc_maps_read(const char *proc_dir, pid_t pid, proc_maps_fn fn, void *ctx,
		   struct err *err)
{
	char path[4200];

	proc_maps_path(proc_dir, pid, path, sizeof(path));
	return proc_maps_read_file(path, fn, ctx, err);
}
