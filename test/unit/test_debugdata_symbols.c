/* Functions that exist only in .gnu_debugdata (a stripped Android binary's local
 * functions: every toybox applet), on the real Android 11 x86_64 toybox: patterns
 * (plan/pattern_native.c) and a config's symbol (resolve/native.c) find them at the
 * address binutils reads (readelf on the decompressed .symtab: writeall at vaddr
 * 0x30ac4, 84 bytes: file offset 0x2fac4). */
#include "ut.h"

#include <errno.h>

#include "plan/pattern.h"
#include "resolve/native.h"

#define TOYBOX "android-userland/x86_64-android11/system/bin/toybox"

UT_TEST(debugdata_functions_match_patterns_and_resolve)
{
	struct trace_pattern *p;
	struct pattern_matches m = { .code = ut_code_cache() };
	struct native_location loc;
	struct err e = { 0 };

	UT_EQ_INT(pattern_parse("toybox:writeall", &p, &e), 0);
	UT_EQ_INT(pattern_match_file(p, ut_testdata(TOYBOX), 0, &m, &e), 0);
	UT_EQ_INT(m.n, 1);
	UT_EQ_INT(m.v[0].file_offset, 0x2fac4);
	UT_EQ_INT(m.v[0].code_size, 84);
	pattern_matches_free(&m);
	pattern_free(p);
	struct native_cache *nc = native_cache_new(ut_code_cache());
	UT_ASSERT(nc);
	UT_EQ_INT(native_resolve(nc, ut_testdata(TOYBOX), "writeall", 0, &loc, &e), 0);
	UT_EQ_INT(loc.offset, 0x2fac4);
	UT_EQ_INT(loc.from_dynsym, 0);
	UT_EQ_INT(native_resolve(nc, ut_testdata(TOYBOX), "no_such_applet_main", 0, &loc, &e),
		  -ENOENT);
	native_cache_free(nc);
}
