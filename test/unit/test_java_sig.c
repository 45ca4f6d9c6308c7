#include "ut.h"

#include <errno.h>

#include "common/arena.h"
#include "resolve/java_sig.h"

static const char *desc(const char *type)
{
	static char buf[256];   /* test-only scratch */
	if (java_type_to_descriptor(type, buf, sizeof(buf)))
		return "(error)";
	return buf;
}

UT_TEST(java_sig_types_to_descriptors)
{
	UT_EQ_STR(desc("int"), "I");
	UT_EQ_STR(desc("boolean"), "Z");
	UT_EQ_STR(desc("int[][]"), "[[I");
	UT_EQ_STR(desc("int [ ]"), "[I");
	UT_EQ_STR(desc("java.lang.String"), "Ljava/lang/String;");
	UT_EQ_STR(desc("java.lang.String[]"), "[Ljava/lang/String;");
	UT_EQ_STR(desc("java.lang.Object..."), "[Ljava/lang/Object;");
	UT_EQ_STR(desc("com.foo.Outer$Inner"), "Lcom/foo/Outer$Inner;");
	UT_EQ_STR(desc("java.util.Map<java.lang.String, java.util.List<Integer>>"), "Ljava/util/Map;");
	UT_EQ_STR(desc("  long  "), "J");
	UT_EQ_STR(desc("final int[] values"), "[I");
	UT_EQ_STR(desc("@NonNull java.lang.String s"), "Ljava/lang/String;");
	UT_EQ_STR(desc("[I"), "[I");
	UT_EQ_STR(desc("Ljava/lang/String;"), "Ljava/lang/String;");
	UT_EQ_STR(desc("void"), "V");
	UT_EQ_STR(desc("void[]"), "(error)");
	UT_EQ_STR(desc("a..b"), "(error)");
	UT_EQ_STR(desc("Map<K"), "(error)");
	UT_EQ_STR(desc(""), "(error)");
	UT_EQ_STR(desc("a b c"), "(error)");
}

UT_TEST(java_sig_parses_method_signature)
{
	struct arena *a = arena_new();
	struct java_sig s;
	struct err e = { 0 };

	UT_EQ_INT(java_sig_parse("void com.android.server.am.ActivityManagerService$LocalService."
				 "updateDeviceIdleTempAllowlist(int[], int, boolean, long, int, int, "
				 "java.lang.String, int)", a, &s, &e), 0);
	UT_EQ_STR(s.class_desc, "Lcom/android/server/am/ActivityManagerService$LocalService;");
	UT_EQ_STR(s.name, "updateDeviceIdleTempAllowlist");
	UT_EQ_STR(s.ret_desc, "V");
	UT_EQ_INT(s.n_params, 8);
	UT_EQ_STR(s.params[0], "[I");
	UT_EQ_STR(s.params[3], "J");
	UT_EQ_STR(s.params[6], "Ljava/lang/String;");
	UT_EQ_STR(java_sig_pretty(&s, a), "void com.android.server.am.ActivityManagerService$"
		  "LocalService.updateDeviceIdleTempAllowlist(int[], int, boolean, long, int, int, "
		  "java.lang.String, int)");

	UT_EQ_INT(java_sig_parse("  public static  java.util.List<java.lang.String>  a.B.<init> ( ) ",
				 a, &s, &e), 0);
	UT_EQ_STR(s.ret_desc, "Ljava/util/List;");
	UT_EQ_STR(s.name, "<init>");
	UT_EQ_INT(s.n_params, 0);
	UT_ASSERT(s.params_given);

	UT_EQ_INT(java_sig_parse("int a.B.m(java.util.Map<K, V>,int...)", a, &s, &e), 0);
	UT_EQ_INT(s.n_params, 2);
	UT_EQ_STR(s.params[0], "Ljava/util/Map;");
	UT_EQ_STR(s.params[1], "[I");

	UT_EQ_INT(java_sig_parse("a.B.m()", a, &s, &e), -EINVAL);
	UT_CONTAINS(e.msg, "missing the return type");
	UT_EQ_INT(java_sig_parse("void m(int)", a, &s, &e), -EINVAL);
	UT_CONTAINS(e.msg, "is not <class>.<method>");
	UT_EQ_INT(java_sig_parse("void a.B.m(int", a, &s, &e), -EINVAL);
	UT_EQ_INT(java_sig_parse("void a.B.m(int) x", a, &s, &e), -EINVAL);
	UT_EQ_INT(java_sig_parse("void a.B.m(in t x y)", a, &s, &e), -EINVAL);
	UT_CONTAINS(e.msg, "parameter");
	UT_EQ_INT(java_sig_parse("void a.B.m(void)", a, &s, &e), -EINVAL);
	arena_free(a);
}

UT_TEST(java_sig_from_parts_and_variants)
{
	struct arena *a = arena_new();
	struct java_sig s;
	struct err e = { 0 };
	const char *params[] = { "int[]", "java.lang.String" };

	UT_EQ_INT(java_sig_from_parts("com.foo.Outer.Inner", "run", params, 2, true, a, &s, &e), 0);
	UT_ASSERT(s.ret_desc == NULL);
	UT_EQ_STR(s.class_desc, "Lcom/foo/Outer/Inner;");
	UT_EQ_STR(java_sig_class_variant(&s, 1, a), "Lcom/foo/Outer$Inner;");
	UT_EQ_STR(java_sig_class_variant(&s, 2, a), "Lcom/foo$Outer$Inner;");
	UT_ASSERT(java_sig_class_variant(&s, 4, a) == NULL);
	UT_EQ_STR(java_sig_pretty(&s, a), "com.foo.Outer.Inner.run(int[], java.lang.String)");

	UT_EQ_INT(java_sig_from_parts("a.B", "m", NULL, 0, false, a, &s, &e), 0);
	UT_ASSERT(!s.params_given);
	UT_EQ_STR(java_sig_pretty(&s, a), "a.B.m");
	UT_EQ_INT(java_sig_from_parts("int", "m", NULL, 0, true, a, &s, &e), -EINVAL);
	UT_EQ_INT(java_sig_from_parts("a.B", "m(x)", NULL, 0, true, a, &s, &e), -EINVAL);
	UT_EQ_INT(java_sig_from_parts("", "m", NULL, 0, true, a, &s, &e), -EINVAL);
	arena_free(a);
}
