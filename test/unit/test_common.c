#include "ut.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "common/arena.h"
#include "common/err.h"
#include "common/mapfile.h"

UT_TEST(err_set_formats_and_returns_code)
{
	struct err e = { 0 };
	UT_EQ_INT(err_set(&e, -EINVAL, "bad %s at %d", "thing", 3), -EINVAL);
	UT_EQ_STR(e.msg, "bad thing at 3");
	err_prefix(&e, "file.txt");
	UT_EQ_STR(e.msg, "file.txt: bad thing at 3");
}

UT_TEST(mapfile_reports_missing_directory_and_empty)
{
	struct mapped_file f;
	struct err e = { 0 };
	UT_EQ_INT(mapfile_open("/nonexistent/x", 0, 0, &f, &e), -ENOENT);
	UT_CONTAINS(e.msg, "no such file");
	UT_EQ_INT(mapfile_open("/tmp", 0, 0, &f, &e), -EISDIR);
	UT_CONTAINS(e.msg, "is a directory");
	const char *p = ut_tmpfile("empty");
	FILE *fp = fopen(p, "w");
	UT_ASSERT(fp);
	fclose(fp);
	UT_EQ_INT(mapfile_open(p, 0, 0, &f, &e), -ENODATA);
	UT_EQ_INT(mapfile_open(p, 0, MAPFILE_ALLOW_EMPTY, &f, &e), 0);
	UT_EQ_INT(f.size, 0);
	mapfile_close(&f);
}

UT_TEST(mapfile_reads_proc_files)
{
	struct mapped_file f;
	struct err e = { 0 };
	UT_EQ_INT(mapfile_open("/proc/self/cmdline", 0, 0, &f, &e), 0);
	UT_ASSERT(f.size > 0);
	mapfile_close(&f);
}

/* The perms column of /proc/self/maps for the mapping holding addr ("" if none). */
static void maps_perms_at(const void *addr, char perms[8])
{
	FILE *fp = fopen("/proc/self/maps", "re");
	char line[512];
	unsigned long lo, hi;

	perms[0] = '\0';
	while (fp && fgets(line, sizeof(line), fp))
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 &&
		    (uintptr_t)addr >= lo && (uintptr_t)addr < hi)
			break;
		else
			perms[0] = '\0';
	if (fp)
		fclose(fp);
}

/* A shared mapping: the kernel puts live uprobes' breakpoints into private
 * mappings of a file that may execute (a read-only one too), so code read
 * through one shows another tool's traps where the file has instructions. */
UT_TEST(mapfile_maps_regular_files_shared_never_private)
{
	const char *p = ut_tmpfile("code");
	FILE *fp = fopen(p, "w");
	struct mapped_file f;
	struct err e = { 0 };
	char perms[8];

	UT_ASSERT(fp);
	fputs("\xc3 a return", fp);
	fclose(fp);
	UT_EQ_INT(mapfile_open(p, 0, MAPFILE_REGULAR, &f, &e), 0);
	UT_EQ_INT(f.mmapped, 1);
	maps_perms_at(f.data, perms);
	UT_EQ_STR(perms, "r--s");
	UT_EQ_INT(f.data[0], 0xc3);
	mapfile_close(&f);
}

UT_TEST(arena_allocates_and_grows)
{
	struct arena *a = arena_new();
	UT_ASSERT(a);
	char *s = arena_strdup(a, "hello");
	UT_EQ_STR(s, "hello");
	int *v = arena_grow(a, NULL, 0, 4, sizeof(int));
	v[3] = 7;
	int *w = arena_grow(a, v, 4, 100000, sizeof(int));
	UT_EQ_INT(w[3], 7);
	UT_EQ_INT(w[99999], 0);
	arena_free(a);
}
