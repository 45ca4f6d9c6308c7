/* sys/proc_path.c: paths as a traced process sees them, on a fake /proc whose
 * PID/root is a symlink to a "chroot" and whose PID/maps lists real files. */
#include "ut.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sys/proc_path.h"

static void touch(const char *path)
{
	FILE *f = fopen(path, "w");
	fputs("x", f);
	fclose(f);
}

/* One maps line: the file at real (its device and inode) under the name shown. */
static void maps_line(FILE *f, unsigned long start, const char *real, const char *shown)
{
	struct stat st;

	stat(real, &st);
	fprintf(f, "%lx-%lx r-xp 00000000 %02x:%02x %lu   %s\n", start, start + 0x1000,
		major(st.st_dev), minor(st.st_dev), (unsigned long)st.st_ino, shown);
}

UT_TEST(proc_path_resolve_names_the_file_the_process_maps)
{
	char d[256], proc[300], p[600], want[600], out[600];
	const char *base = ut_tmpfile("proc-path");
	FILE *maps;

	snprintf(d, sizeof(d), "%s", base);
	mkdir(d, 0755);
	snprintf(p, sizeof(p), "%s/chroot", d);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/chroot/lib.so", d);          /* what the process maps */
	touch(p);
	snprintf(p, sizeof(p), "%s/chroot/notyet.so", d);       /* in its view, not mapped */
	touch(p);
	snprintf(p, sizeof(p), "%s/namesake.so", d);            /* the tracer's namesake */
	touch(p);
	snprintf(proc, sizeof(proc), "%s/proc", d);
	mkdir(proc, 0755);
	snprintf(p, sizeof(p), "%s/42", proc);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/42/root", proc);
	snprintf(want, sizeof(want), "%s/chroot", d);
	UT_EQ_INT(symlink(want, p), 0);

	/* A chroot: maps shows the file under its path here. */
	snprintf(p, sizeof(p), "%s/42/maps", proc);
	maps = fopen(p, "w");
	snprintf(want, sizeof(want), "%s/chroot/lib.so", d);
	fprintf(maps, "00400000-00401000 r--p 00000000 00:00 0   [vdso]\n");
	maps_line(maps, 0x1000, want, want);
	fclose(maps);
	UT_EQ_INT(proc_path_resolve(proc, 42, "/lib.so", out, sizeof(out)), 0);
	UT_EQ_STR(out, want);
	UT_EQ_INT(proc_path_resolve(proc, 42, want, out, sizeof(out)), 0);
	UT_EQ_STR(out, want);

	/* Its own mount namespace: maps shows a path that is another file here. */
	maps = fopen(p, "w");
	snprintf(p, sizeof(p), "%s/namesake.so", d);
	fprintf(maps, "%lx-%lx r-xp 00000000 00:00 99 %s (deleted)\n", 0x5000ul, 0x6000ul, p);
	maps_line(maps, 0x1000, want, p);
	fclose(maps);
	UT_EQ_INT(proc_path_resolve(proc, 42, "/lib.so", out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/42/root/lib.so", proc);
	UT_EQ_STR(out, want);
	/* Asked by the path maps shows (a bare library name found there). */
	UT_EQ_INT(proc_path_resolve(proc, 42, p, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/42/map_files/1000-2000", proc);
	UT_EQ_STR(out, want);

	/* Not mapped (yet): the process's view when it differs from ours. */
	UT_EQ_INT(proc_path_resolve(proc, 42, "/notyet.so", out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/42/root/notyet.so", proc);
	UT_EQ_STR(out, want);
	UT_EQ_INT(proc_path_resolve(proc, 42, "/nowhere.so", out, sizeof(out)), 0);
	UT_EQ_STR(out, "/nowhere.so");
	/* No process, a relative path, a process that is gone: unchanged. */
	UT_EQ_INT(proc_path_resolve(proc, 0, "/lib.so", out, sizeof(out)), 0);
	UT_EQ_STR(out, "/lib.so");
	UT_EQ_INT(proc_path_resolve(proc, 42, "lib.so", out, sizeof(out)), 0);
	UT_EQ_STR(out, "lib.so");
	UT_EQ_INT(proc_path_resolve(proc, 43, "/lib.so", out, sizeof(out)), 0);
	UT_EQ_STR(out, "/lib.so");
	UT_EQ_INT(proc_path_resolve(proc, 42, "/lib.so", out, 8), -ENAMETOOLONG);
}
