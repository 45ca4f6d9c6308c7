#include "ut.h"

#include <errno.h>

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
