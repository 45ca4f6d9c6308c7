#include "ut.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan/pattern.h"

#define BOOT_EXT "oat/android-11/x86_64/aosp_x86_64_RP1A.201105.002_eng/boot-ext.oat"

static int parse_rc(const char *text, char *msg, size_t size)
{
	struct trace_pattern *p = NULL;
	struct err e = { 0 };
	int rc = pattern_parse(text, &p, &e);

	if (msg)
		snprintf(msg, size, "%s", e.msg);
	pattern_free(p);
	return rc;
}

UT_TEST(pattern_globs_java)
{
	UT_ASSERT(pattern_glob_match("start*", "startActivity", true));
	UT_ASSERT(!pattern_glob_match("start*", "restart", true));
	UT_ASSERT(pattern_glob_match("com.android.*", "com.android.Foo", true));
	UT_ASSERT(!pattern_glob_match("com.android.*", "com.android.server.Foo", true));
	UT_ASSERT(pattern_glob_match("com.android.**", "com.android.server.Foo", true));
	UT_ASSERT(pattern_glob_match("**.Foo", "a.b.c.Foo", true));
	UT_ASSERT(pattern_glob_match("Outer*", "Outer$Inner", true));
	UT_ASSERT(pattern_glob_match("a.?.C", "a.b.C", true));
	UT_ASSERT(!pattern_glob_match("a?b", "a.b", true));
	UT_ASSERT(pattern_glob_match("[gs]et*", "setX", true));
	UT_ASSERT(!pattern_glob_match("[!gs]et*", "setX", true));
	UT_ASSERT(pattern_glob_match("[a-c]x", "bx", true));
	UT_ASSERT(pattern_glob_match("\\*x", "*x", true));
	UT_ASSERT(!pattern_glob_match("\\*x", "ax", true));
	UT_ASSERT(pattern_glob_match("<init>", "<init>", true));
	/* code points: '?' is one character of UTF-8 text */
	UT_ASSERT(pattern_glob_match("caf?", "caf\xc3\xa9", true));
	UT_ASSERT(pattern_glob_match("[\xc3\xa0-\xc3\xbf]", "\xc3\xa9", true));
	UT_ASSERT(pattern_glob_match("My Class", "My Class", true));
	/* native: '*' matches anything, "::" included */
	UT_ASSERT(pattern_glob_match("*executeCommand*",
				     "android::IPCThreadState::executeCommand(int)", false));
	UT_ASSERT(pattern_glob_match("a*b*c*d*e*f*g*h*i*j*k", "abcdefghijk", false));
	UT_ASSERT(!pattern_glob_match("a*a*a*a*a*a*a*a*a*a*a*b",
				      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false));
}

UT_TEST(pattern_parse_forms)
{
	struct trace_pattern *p;
	struct err e = { 0 };

	UT_EQ_INT(pattern_parse("com.android.server.am.*.start*", &p, &e), 0);
	UT_ASSERT(pattern_is_java(p));
	UT_ASSERT(pattern_file(p) == NULL);
	pattern_free(p);
	UT_EQ_INT(pattern_parse("/data/x.odex:*Activity.onCreate(android.os.Bundle)", &p, &e), 0);
	UT_ASSERT(pattern_is_java(p));
	UT_EQ_STR(pattern_file(p), "/data/x.odex");
	pattern_free(p);
	UT_EQ_INT(pattern_parse("libbinder.so:android::IPCThreadState::*", &p, &e), 0);
	UT_ASSERT(!pattern_is_java(p));
	UT_EQ_STR(pattern_file(p), "libbinder.so");
	pattern_free(p);
	UT_EQ_INT(pattern_parse("/system/lib64/libc.so:open*", &p, &e), 0);
	UT_ASSERT(!pattern_is_java(p));
	pattern_free(p);
	UT_EQ_INT(parse_rc("a.B.c()", NULL, 0), 0);
	UT_EQ_INT(parse_rc("a.B.c(int, **)", NULL, 0), 0);
	UT_EQ_INT(parse_rc("a.B$1.c-d(int[])", NULL, 0), 0);
}

UT_TEST(pattern_parse_errors)
{
	char m[ERR_MSG_MAX];

	UT_EQ_INT(parse_rc("", m, sizeof(m)), -EINVAL);
	UT_EQ_INT(parse_rc("justaname", m, sizeof(m)), -EINVAL);
	UT_CONTAINS(m, "CLASS.METHOD");
	UT_EQ_INT(parse_rc("a.B.[c", m, sizeof(m)), -EINVAL);
	UT_CONTAINS(m, "no closing ']'");
	UT_CONTAINS(m, "column 5");
	UT_EQ_INT(parse_rc("x.odex:a.B.c(int, [a)", m, sizeof(m)), -EINVAL);
	UT_CONTAINS(m, "column 19");
	UT_EQ_INT(parse_rc("a.B.c(int", m, sizeof(m)), -EINVAL);
	UT_CONTAINS(m, "')'");
	UT_EQ_INT(parse_rc("a.B.c(int,)", m, sizeof(m)), -EINVAL);
	UT_CONTAINS(m, "empty parameter");
	UT_EQ_INT(parse_rc("a..B.c", m, sizeof(m)), -EINVAL);
	UT_EQ_INT(parse_rc(".B.c", m, sizeof(m)), -EINVAL);
	UT_EQ_INT(parse_rc("a.B.", m, sizeof(m)), -EINVAL);
	UT_CONTAINS(m, "empty method");
	UT_EQ_INT(parse_rc(":foo", m, sizeof(m)), -EINVAL);
	UT_EQ_INT(parse_rc("libc.so:", m, sizeof(m)), -EINVAL);
	UT_EQ_INT(parse_rc("a.B.c\\", m, sizeof(m)), -EINVAL);
	UT_EQ_INT(parse_rc("a.B.c)", m, sizeof(m)), -EINVAL);
	UT_ASSERT(!strchr(m, '\n'));
}

static size_t count_reason(const struct pattern_matches *m, enum match_left_out r)
{
	size_t n = 0;
	for (size_t i = 0; i < m->n; i++)
		n += m->v[i].left_out == r;
	return n;
}

UT_TEST(pattern_matches_real_oat)
{
	struct trace_pattern *p;
	struct pattern_matches m = { .code = ut_code_cache() };
	struct err e = { 0 };
	const char *f = ut_testdata(BOOT_EXT);

	UT_EQ_INT(pattern_parse("*Parser.*(String)", &p, &e), 0);
	UT_EQ_INT(pattern_match_file(p, f, 0, &m, &e), 0);
	UT_ASSERT(m.n > 0);
	for (size_t i = 0; i < m.n; i++) {
		UT_CONTAINS(m.v[i].name, "Parser.");
		UT_CONTAINS(m.v[i].name, "(java.lang.String)");
		UT_ASSERT(m.v[i].is_java);
		UT_EQ_INT(m.v[i].n_params, 1);
		UT_EQ_STR(m.v[i].param_descs[0], "Ljava/lang/String;");
		if (m.v[i].left_out == MATCH_OK)
			UT_ASSERT(m.v[i].file_offset && m.v[i].code_size);
	}
	UT_EQ_U64(m.by_reason[MATCH_OK], count_reason(&m, MATCH_OK));
	UT_EQ_U64(m.n_files, 1);
	UT_EQ_U64(m.files[0].matched, m.n);
	size_t all = m.n, ok = m.by_reason[MATCH_OK];
	pattern_matches_free(&m);
	/* max: the rest become over-max, nothing is dropped */
	m = (struct pattern_matches){ .code = ut_code_cache() };
	UT_EQ_INT(pattern_match_file(p, f, 1, &m, &e), 0);
	UT_EQ_U64(m.n, all);
	UT_EQ_U64(m.by_reason[MATCH_OK], ok ? 1 : 0);
	UT_EQ_U64(m.by_reason[MATCH_OVER_MAX], ok ? ok - 1 : 0);
	pattern_matches_free(&m);
	pattern_free(p);
}

UT_TEST(pattern_no_match_explained)
{
	struct trace_pattern *p;
	struct pattern_matches m = { .code = ut_code_cache() };
	struct err e = { 0 };
	const char *f = ut_testdata(BOOT_EXT);

	UT_EQ_INT(pattern_parse("org.ccil.cowan.tagsoup.Parser.strat*", &p, &e), 0);
	UT_EQ_INT(pattern_match_file(p, f, 0, &m, &e), 0);
	UT_EQ_U64(m.n, 0);
	UT_EQ_INT(pattern_explain_no_match(p, &m, &e), -ENOENT);
	UT_CONTAINS(e.msg, "boot-ext.oat");
	UT_CONTAINS(e.msg, "nearest");
	UT_CONTAINS(e.msg, "Parser.stag");
	pattern_matches_free(&m);
	pattern_free(p);

	m = (struct pattern_matches){ .code = ut_code_cache() };
	UT_EQ_INT(pattern_parse("org.ccil.cowan.tagsoup.Parsr.start*", &p, &e), 0);
	UT_EQ_INT(pattern_match_file(p, f, 0, &m, &e), 0);
	UT_EQ_INT(pattern_explain_no_match(p, &m, &e), -ENOENT);
	UT_CONTAINS(e.msg, "nearest classes: org.ccil.cowan.tagsoup.Parser");
	pattern_matches_free(&m);
	pattern_free(p);
}

UT_TEST(pattern_single_ambiguous)
{
	struct trace_pattern *p;
	struct pattern_matches m = { .code = ut_code_cache() };
	struct err e = { 0 };
	size_t idx;

	UT_EQ_INT(pattern_parse("org.ccil.cowan.tagsoup.Parser.*", &p, &e), 0);
	UT_EQ_INT(pattern_match_file(p, ut_testdata(BOOT_EXT), 0, &m, &e), 0);
	UT_ASSERT(m.n > 1);
	UT_EQ_INT(pattern_single(p, &m, &idx, &e), -EINVAL);
	UT_CONTAINS(e.msg, "ambiguous");
	UT_CONTAINS(e.msg, m.v[0].name);
	pattern_matches_free(&m);
	pattern_free(p);
}

UT_TEST(pattern_array_params)
{
	UT_ASSERT(pattern_glob_match("int[]", "int[]", true));
	UT_ASSERT(pattern_glob_match("*[]", "java.lang.String[]", false));
	UT_ASSERT(!pattern_glob_match("int[]", "int", true));
	UT_ASSERT(pattern_glob_match("[\\]x]", "]", true));
}

/* Native: C++ names given demangled, with or without parameters; aliases give one probe. */
UT_TEST(pattern_native_demangled_names)
{
	struct trace_pattern *p;
	struct pattern_matches m = { .code = ut_code_cache() };
	struct err e = { 0 };
	const char *lib = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";

	UT_EQ_INT(pattern_parse("libstdc++.so:std::ios_base::Init::Init", &p, &e), 0);
	UT_ASSERT(!pattern_is_java(p));
	UT_EQ_INT(pattern_match_file(p, lib, 0, &m, &e), 0);
	UT_ASSERT(m.n >= 1);
	UT_EQ_STR(m.v[0].name, "std::ios_base::Init::Init()");
	UT_ASSERT(!strncmp(m.v[0].raw_name, "_ZNSt8ios_base4InitC", 20));
	UT_EQ_U64(m.by_reason[MATCH_OK], 1);   /* C1 and C2 share an address */
	UT_ASSERT(m.v[0].file_offset > 0);
	pattern_matches_free(&m);
	pattern_free(p);

	m = (struct pattern_matches){ .code = ut_code_cache() };
	UT_EQ_INT(pattern_parse("x:_ZNSt8ios_base4Init*", &p, &e), 0);
	UT_EQ_INT(pattern_match_file(p, lib, 0, &m, &e), 0);
	UT_ASSERT(m.n >= 2);
	pattern_matches_free(&m);
	pattern_free(p);
}

/* A real Android userland (bionic, ../shared/testdata/android-userland): the number
 * of matches of `pat` in `rel`; 0 (and the test failed) when one is left raw although
 * `demangled`, or when none is named `want_name`. */
static size_t android_matches(const char *rel, const char *pat, bool demangled,
			      const char *want_name)
{
	char text[512];
	struct trace_pattern *p = NULL;
	struct pattern_matches m = { .code = ut_code_cache() };
	struct err e = { 0 };
	bool found = !want_name, raw = false;
	size_t n = 0;

	snprintf(text, sizeof(text), "%s:%s", ut_testdata(rel), pat);
	if (pattern_parse(text, &p, &e) || pattern_match_file(p, NULL, 0, &m, &e)) {
		ut_fail(__FILE__, __LINE__, "%s: %s", text, e.msg);
		goto out;
	}
	for (size_t i = 0; i < m.n; i++) {
		raw |= demangled && !strcmp(m.v[i].name, m.v[i].raw_name);
		found |= want_name && !strcmp(m.v[i].name, want_name);
	}
	if (raw || !found)
		ut_fail(__FILE__, __LINE__, "%s: %s", text, raw ? "a name left raw" :
			"no match of that name");
	else
		n = m.n;
out:
	pattern_matches_free(&m);
	pattern_free(p);
	return n;
}

/* toybox is stripped to .dynsym, which names none of its own functions: they are in
 * the .symtab inside .gnu_debugdata (xz), as in every Android executable. */
UT_TEST(pattern_native_android_minidebug_symbols)
{
	UT_EQ_U64(android_matches("android-userland/arm64-android11/system/bin/toybox",
				  "dd_main", false, "dd_main"), 1);
	UT_EQ_U64(android_matches("android-userland/x86_64-android11/system/bin/toybox",
				  "dd_main", false, "dd_main"), 1);
	UT_ASSERT(android_matches("android-userland/x86_64-android11/system/bin/toybox",
				  "*_main", false, "cat_main") > 100);
}

/* libbinder's Parcel::unsafeReadTypedVector<T, U>(std::vector<T>*, int (Parcel::*)(U*)
 * const) const: a pointer to a const member function ("M" class "KF...E"). */
UT_TEST(pattern_native_android_member_function_pointers)
{
	const char *want = "int android::Parcel::unsafeReadTypedVector<int, int>(std::__1::"
			   "vector<int, std::__1::allocator<int> >*, int (android::Parcel::*)"
			   "(int*) const) const";

	UT_ASSERT(android_matches("android-userland/arm64-android11/system/lib64/libbinder.so",
				  "android::Parcel::unsafeReadTypedVector*", true, want) >= 10);
	UT_ASSERT(android_matches("android-userland/x86_64-android11/system/lib64/libbinder.so",
				  "android::Parcel::readNullableTypedVector*", true, NULL) >= 10);
}
