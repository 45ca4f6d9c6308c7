/* Unit tests of stack/kwalk.c: the kernel walk's table (sorting by
 * (tgid, start), overlaps dropped, padding to a power of two) and its
 * building from a process's oat mappings (code_cache_java_ranges), checked
 * against the independent oat-expected table and objdump's prologue; the
 * oat file two processes map is opened and parsed once, and the unwinder's
 * lookups after the table reuse it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "code/codecache.h"
#include "stack/kwalk.h"
#include "ut.h"

UT_TEST(kwalk_finish_sorts_drops_overlaps_pads)
{
	struct kwalk_table t = { 0 };
	struct err e = { 0 };

	UT_EQ_INT(kwalk_table_add(&t, 20, 0x1000, 0x1100, 64), 0);
	UT_EQ_INT(kwalk_table_add(&t, 10, 0x3000, 0x3040, 32), 0);
	UT_EQ_INT(kwalk_table_add(&t, 10, 0x1000, 0x1100, 48), 0);
	UT_EQ_INT(kwalk_table_add(&t, 10, 0x10f0, 0x1200, 16), 0);  /* overlaps: dropped */
	UT_EQ_INT(kwalk_table_add(&t, 10, 0x2000, 0x2000, 16), 0);  /* empty: ignored */
	UT_EQ_INT(kwalk_table_add(&t, UPS_KWALK_NONE, 0x1, 0x2, 16), 0); /* ignored */
	UT_EQ_INT(kwalk_table_finish(&t, &e), 0);
	UT_EQ_INT(t.n, 3);
	UT_EQ_INT(t.bits, 2);
	UT_EQ_INT(kwalk_table_size(&t), 4);
	UT_EQ_INT(t.v[0].tgid, 10);
	UT_EQ_U64(t.v[0].start, 0x1000);
	UT_EQ_INT(t.v[0].frame_size, 48);
	UT_EQ_U64(t.v[1].start, 0x3000);
	UT_EQ_INT(t.v[2].tgid, 20);
	UT_EQ_INT(t.v[3].tgid, UPS_KWALK_NONE);
	UT_EQ_U64(t.v[3].start, UINT64_MAX);
	kwalk_table_free(&t);
}

UT_TEST(kwalk_finish_empty_is_one_padding_entry)
{
	struct kwalk_table t = { 0 };
	struct err e = { 0 };

	UT_EQ_INT(kwalk_table_finish(&t, &e), 0);
	UT_EQ_INT(t.n, 0);
	UT_EQ_INT(t.bits, 0);
	UT_ASSERT(t.v != NULL);
	UT_EQ_INT(t.v[0].tgid, UPS_KWALK_NONE);
	kwalk_table_free(&t);
}

#define ODEX "oat/android-11/x86_64/aosp_x86_64_RP1A.201105.002_eng/" \
	     "com.android.location.provider.odex"
/* oat-expected: ActivityChangedEvent.<init> at file offset 12304, 208 bytes;
 * objdump: its prologue pushes r13, r12, rbp, rbx and subtracts 0x18, so
 * the frame is 8 * (4 + 1) + 0x18 = 64. */
#define INIT_OFF 12304
#define INIT_SIZE 208
#define INIT_FRAME 64

static void write_maps(const char *dir, unsigned pid, const char *line)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u", dir, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%u/maps", dir, pid);
	f = fopen(path, "w");
	UT_ASSERT(f != NULL);
	if (!f)
		return;
	fputs(line, f);
	fclose(f);
}

static const struct ups_kwalk_ent *find(const struct kwalk_table *t, uint32_t tgid,
					uint64_t start)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].tgid == tgid && t->v[i].start == start)
			return &t->v[i];
	return NULL;
}

UT_TEST(kwalk_build_from_oat_mappings)
{
	const char *dir = ut_tmpfile("kwalk-proc");
	const char *odex = ut_testdata(ODEX);
	char line[1024];
	pid_t pids[] = { 300, 100, 200 };
	struct kwalk_table t = { 0 };
	struct err e = { 0 };
	const struct ups_kwalk_ent *x;
	size_t per_pid = 0;

	mkdir(dir, 0755);
	/* pid 100: the whole file at offset 0; pid 200: from offset 0x2000, so
	 * the load bias differs; pid 300: no oat mapping at all */
	snprintf(line, sizeof(line), "7f0000000000-7f0000100000 r-xp 00000000 00:00 0 %s\n",
		 odex);
	write_maps(dir, 100, line);
	snprintf(line, sizeof(line), "7f1000002000-7f1000100000 r-xp 00002000 00:00 0 %s\n",
		 odex);
	write_maps(dir, 200, line);
	write_maps(dir, 300, "7f2000000000-7f2000001000 r-xp 00000000 00:00 0 [vdso]\n");
	struct code_cache *code = code_cache_new(dir);
	struct code_cache_stats st;
	struct code_info ci;

	UT_ASSERT(code != NULL);
	UT_EQ_INT(kwalk_table_build(&t, code, pids, 3, &e), 0);
	UT_ASSERT(t.n > 2);
	UT_EQ_INT(kwalk_table_size(&t) >= t.n, 1);
	UT_ASSERT(kwalk_table_size(&t) < 2 * t.n || t.n == 1);
	x = find(&t, 100, 0x7f0000000000ull + INIT_OFF);
	UT_ASSERT(x != NULL);
	if (x) {
		UT_EQ_U64(x->end - x->start, INIT_SIZE);
		UT_EQ_INT(x->frame_size, INIT_FRAME);
	}
	x = find(&t, 200, 0x7f1000002000ull + INIT_OFF - 0x2000);
	UT_ASSERT(x != NULL);
	if (x)
		UT_EQ_INT(x->frame_size, INIT_FRAME);
	for (size_t i = 0; i < t.n; i++) {
		UT_ASSERT(t.v[i].tgid == 100 || t.v[i].tgid == 200);
		if (i)
			UT_ASSERT(t.v[i - 1].tgid < t.v[i].tgid ||
				  (t.v[i - 1].tgid == t.v[i].tgid &&
				   t.v[i - 1].end <= t.v[i].start));
		UT_ASSERT(t.v[i].frame_size % 16 == 0);
		per_pid += t.v[i].tgid == 100;
	}
	UT_EQ_INT(per_pid * 2, t.n);  /* the same methods in both processes */
	/* the unwinder's view of the same code, from the same cache */
	UT_EQ_INT(code_cache_lookup(code, 200, 0x7f1000002000ull + INIT_OFF - 0x2000, false, &ci),
		  0);
	UT_EQ_INT(ci.kind, FRAME_JAVA);
	UT_EQ_INT(ci.frame_size, INIT_FRAME);
	UT_ASSERT(ci.at_start);
	/* one open and one parse of the odex for both processes and the lookup */
	code_cache_get_stats(code, &st);
	UT_EQ_INT(st.files_opened, 1);
	UT_EQ_INT(st.oat_parsed, 1);
	UT_EQ_INT(st.files_failed, 0);
	code_cache_free(code);
	kwalk_table_free(&t);
}
