/* Android properties through the fixture stores of test/fixtures/props
 * (written by mkprops.py, an independent writer of bionic's formats). */
#include <errno.h>
#include <stdint.h>

#include "sys/properties.h"
#include "sys/propfile.h"
#include "sys_testutil.h"
#include "ut.h"

#define LONG_VALUE                                                                        \
	"arm64-v8a,arm64-v8a,arm64-v8a,arm64-v8a,arm64-v8a,arm64-v8a,arm64-v8a,arm64-v8a," \
	"arm64-v8a,arm64-v8a,arm64-v8a,arm64-v8a,arm64-v8a,arm64-v8a,end"

static struct sys_paths store(const char *props, const char *getprop)
{
	return (struct sys_paths){ .props = props, .getprop = getprop };
}

/* Expects name to read as want from the area files. */
#define UT_PROP(paths, name, want)                                                 \
	do {                                                                       \
		char v_[PROPS_VALUE_MAX];                                          \
		enum props_source s_;                                              \
		struct err e_ = { 0 };                                             \
		int rc_ = props_get(paths, name, v_, sizeof(v_), &s_, &e_);        \
		if (rc_ != 0)                                                      \
			ut_fail(__FILE__, __LINE__, "%s: %d %s", name, rc_, e_.msg); \
		UT_EQ_INT(rc_, 0);                                                 \
		UT_EQ_STR(v_, want);                                               \
		UT_EQ_INT(s_, PROPS_SOURCE_AREA);                                  \
	} while (0)

UT_TEST(props_reads_short_values_from_several_contexts)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", st_fixture("props/android14"));
	struct sys_paths p = store(dir, "");

	UT_PROP(&p, "ro.build.type", "userdebug");            /* prefix "ro.build." */
	UT_PROP(&p, "ro.build.version.sdk", "34");
	UT_PROP(&p, "ro.product.cpu.abi", "arm64-v8a");       /* another context */
	UT_PROP(&p, "ro.debuggable", "1");                    /* exact rule */
	UT_PROP(&p, "ro.bootloader", "slider-1.2-9152140");   /* prefix without a dot */
	UT_PROP(&p, "ro.boot.hardware", "oriole");
	UT_PROP(&p, "sys.boot_completed", "1");               /* the default context */
	UT_PROP(&p, "persist.sys.timezone", "Europe/Paris");
}

UT_TEST(props_reads_long_values)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", st_fixture("props/android14"));
	struct sys_paths p = store(dir, "");

	UT_PROP(&p, "ro.product.cpu.abilist", LONG_VALUE);
}

UT_TEST(props_reads_the_backup_of_a_value_being_written)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", st_fixture("props/android14"));
	struct sys_paths p = store(dir, "");

	UT_PROP(&p, "debug.updating", "old");
}

UT_TEST(props_missing_property_is_enoent_from_the_areas)
{
	char dir[4096], v[PROPS_VALUE_MAX];
	enum props_source src;
	struct err e = { 0 };
	static const char *const names[] = { "ro.build.nope", "ro.build", "ro..type", "ro.build.",
					     "nosuch", "ro.build.type.x" };

	snprintf(dir, sizeof(dir), "%s", st_fixture("props/android14"));
	struct sys_paths p = store(dir, "");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		UT_EQ_INT(props_get(&p, names[i], v, sizeof(v), &src, &e), -ENOENT);
		UT_EQ_INT(src, PROPS_SOURCE_AREA);
		UT_CONTAINS(e.msg, "not set");
	}
}

UT_TEST(props_value_too_long_for_the_buffer_is_erange)
{
	char dir[4096], v[16];
	enum props_source src;
	struct err e = { 0 };

	snprintf(dir, sizeof(dir), "%s", st_fixture("props/android14"));
	struct sys_paths p = store(dir, "");
	UT_EQ_INT(props_get(&p, "ro.product.cpu.abilist", v, sizeof(v), &src, &e), -ERANGE);
	UT_EQ_INT(props_get(&p, "ro.build.fingerprint", v, sizeof(v), &src, &e), -ERANGE);
	UT_EQ_INT(props_get(&p, "ro.build.type", v, 10, &src, &e), 0);
	UT_EQ_STR(v, "userdebug");
}

UT_TEST(props_android7_layout_searches_every_area)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", st_fixture("props/android7"));
	struct sys_paths p = store(dir, "");

	UT_PROP(&p, "ro.build.type", "userdebug");
	UT_PROP(&p, "ro.product.cpu.abilist", LONG_VALUE);
	UT_PROP(&p, "sys.boot_completed", "1");
}

UT_TEST(props_android6_single_file_store)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s", st_fixture("props/android6"));
	struct sys_paths p = store(path, "");

	UT_PROP(&p, "ro.build.version.sdk", "34");
	UT_PROP(&p, "ro.debuggable", "1");
	UT_PROP(&p, "ro.product.cpu.abilist", LONG_VALUE);
}

UT_TEST(props_off_android_is_a_normal_answer)
{
	char v[64];
	enum props_source src;
	struct err e = { 0 };
	struct sys_paths p = store(ut_tmpfile("no-such-properties"), "");

	UT_EQ_INT(props_get(&p, "ro.build.type", v, sizeof(v), &src, &e), -ENOENT);
	UT_EQ_INT(src, PROPS_SOURCE_NONE);
	UT_CONTAINS(e.msg, "not an Android device");
	p.getprop = ut_tmpfile("no-such-getprop");
	UT_EQ_INT(props_get(&p, "ro.build.type", v, sizeof(v), &src, &e), -ENOENT);
	UT_EQ_INT(src, PROPS_SOURCE_NONE);
}

static const char fake_getprop[] =
	"case \"$1\" in\n"
	"ro.build.type) echo user ;;\n"
	"ro.gone.thing) echo from-getprop ;;\n"
	"ro.build.version.sdk) echo 33 ;;\n"
	"ro.fail) exit 3 ;;\n"
	"*) echo ;;\n"
	"esac\n";

UT_TEST(props_getprop_answers_when_there_is_no_store)
{
	char dir[4096], gp[4096], v[64];
	enum props_source src;
	struct err e = { 0 };

	st_mkdtemp("getprop", dir, sizeof(dir));
	UT_EQ_INT(st_write_script(dir, "getprop", fake_getprop), 0);
	snprintf(gp, sizeof(gp), "%s/getprop", dir);
	struct sys_paths p = store(ut_tmpfile("no-such-properties"), gp);

	UT_EQ_INT(props_get(&p, "ro.build.type", v, sizeof(v), &src, &e), 0);
	UT_EQ_STR(v, "user");
	UT_EQ_INT(src, PROPS_SOURCE_GETPROP);
	UT_EQ_INT(props_get(&p, "ro.unset", v, sizeof(v), &src, &e), -ENOENT);
	UT_EQ_INT(src, PROPS_SOURCE_GETPROP);
	UT_EQ_INT(props_get(&p, "ro.fail", v, sizeof(v), &src, &e), -EIO);
	UT_CONTAINS(e.msg, "exit status 3");
}

UT_TEST(props_unreadable_area_falls_back_to_getprop)
{
	char dir[4096], gp[4096], v[64];
	enum props_source src;
	struct err e = { 0 };

	st_mkdtemp("getprop", dir, sizeof(dir));
	UT_EQ_INT(st_write_script(dir, "getprop", fake_getprop), 0);
	snprintf(gp, sizeof(gp), "%s/getprop", dir);
	char props[4096];
	snprintf(props, sizeof(props), "%s", st_fixture("props/android14"));
	struct sys_paths p = store(props, gp);

	/* property_info names u:object_r:absent_prop:s0, which has no file. */
	UT_EQ_INT(props_get(&p, "ro.gone.thing", v, sizeof(v), &src, &e), 0);
	UT_EQ_STR(v, "from-getprop");
	UT_EQ_INT(src, PROPS_SOURCE_GETPROP);
	/* Without getprop the missing area is the error, named. */
	p.getprop = "";
	UT_EQ_INT(props_get(&p, "ro.gone.thing", v, sizeof(v), &src, &e), -EIO);
	UT_CONTAINS(e.msg, "absent_prop");
	UT_CONTAINS(e.msg, "no such file");
}

/* A copy of the android14 store whose build_prop area is damaged at off. */
static const char *damaged_store(const char *name, long off, uint32_t value, char *dir,
				 size_t size)
{
	char area[4096];

	st_mkdtemp(name, dir, size);
	if (st_copy_dir(st_fixture("props/android14"), dir) < 0)
		return NULL;
	snprintf(area, sizeof(area), "%s/u:object_r:build_prop:s0", dir);
	return st_patch(area, off, &value, sizeof(value)) < 0 ? NULL : dir;
}

UT_TEST(props_corrupt_area_is_one_clear_error)
{
	char dir[4096], v[64];
	enum props_source src;
	struct err e = { 0 };

	UT_ASSERT(damaged_store("badmagic", 8, 0xdeadbeef, dir, sizeof(dir)));
	struct sys_paths p = store(dir, "");
	UT_EQ_INT(props_get(&p, "ro.build.type", v, sizeof(v), &src, &e), -EBADMSG);
	UT_CONTAINS(e.msg, "u:object_r:build_prop:s0: not a property area: magic 0xdeadbeef");
	UT_ASSERT(!strchr(e.msg, '\n'));
	/* Other contexts are unaffected. */
	UT_PROP(&p, "ro.product.cpu.abi", "arm64-v8a");

	/* The root's children offset pointing past the end. */
	UT_ASSERT(damaged_store("badtrie", 128 + 16, 0x7ffffff0, dir, sizeof(dir)));
	UT_EQ_INT(props_get(&p, "ro.build.type", v, sizeof(v), &src, &e), -EBADMSG);
	UT_CONTAINS(e.msg, "corrupt property area: trie node offset out of bounds");
}

UT_TEST(props_corrupt_area_still_answers_through_getprop)
{
	char dir[4096], tools[4096], gp[4096], v[64];
	enum props_source src;
	struct err e = { 0 };

	UT_ASSERT(damaged_store("badmagic-gp", 8, 0, dir, sizeof(dir)));
	st_mkdtemp("getprop", tools, sizeof(tools));
	UT_EQ_INT(st_write_script(tools, "getprop", fake_getprop), 0);
	snprintf(gp, sizeof(gp), "%s/getprop", tools);
	struct sys_paths p = store(dir, gp);
	UT_EQ_INT(props_get(&p, "ro.build.type", v, sizeof(v), &src, &e), 0);
	UT_EQ_STR(v, "user");
	UT_EQ_INT(src, PROPS_SOURCE_GETPROP);
}

UT_TEST(props_android_info_from_the_store)
{
	char dir[4096];
	struct android_info info;

	snprintf(dir, sizeof(dir), "%s", st_fixture("props/android14"));
	struct sys_paths p = store(dir, "");
	android_info_read(&p, &info);
	UT_ASSERT(info.on_android);
	UT_EQ_INT(info.source, PROPS_SOURCE_AREA);
	UT_EQ_STR(info.build_type, "userdebug");
	UT_EQ_STR(info.sdk, "34");
	UT_EQ_INT(info.sdk_int, 34);
	UT_EQ_STR(info.release, "14");
	UT_EQ_STR(info.abi, "arm64-v8a");
	UT_EQ_INT(info.debuggable, 1);
	UT_EQ_STR(info.problem, "");
}

UT_TEST(props_android_info_off_android)
{
	struct android_info info;
	struct sys_paths p = store(ut_tmpfile("no-such-properties"), "");

	android_info_read(&p, &info);
	UT_ASSERT(!info.on_android);
	UT_EQ_INT(info.source, PROPS_SOURCE_NONE);
	UT_EQ_STR(info.build_type, "");
	UT_EQ_INT(info.sdk_int, 0);
	UT_EQ_INT(info.debuggable, -1);
	UT_EQ_STR(info.problem, "");
}
