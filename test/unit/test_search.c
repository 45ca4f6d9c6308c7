#include "ut.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "code/codecache.h"
#include "oat_testlib.h"
#include "resolve/java_resolve.h"
#include "resolve/methods_cmd.h"
#include "resolve/oat_search.h"
#include "sink_testutil.h"

/* A fixture tree of symlinks into the test data:
 *   root/a/org.apache.http.legacy.{odex,jar}        arm64
 *   root/b/com.android.location.provider.{odex,jar} arm64
 *   root/c/com.android.location.provider.{odex,jar} x86_64 */
static const char *fixture(char *root_buf, size_t size)
{
#define LOC "com.android.location.provider"
	static const char *const links[][2] = {
		{ "a/org.apache.http.legacy.odex", TD_A13 "org.apache.http.legacy.odex" },
		{ "a/org.apache.http.legacy.jar", TD_A13 "org.apache.http.legacy.jar" },
		{ "b/" LOC ".odex", TD_A13 LOC ".odex" },
		{ "b/" LOC ".jar", TD_A13 LOC ".jar" },
		{ "c/" LOC ".odex", TD_A11X LOC ".odex" },
		{ "c/" LOC ".jar", TD_A11X LOC ".jar" },
	};
#undef LOC
	char p[4096];
	const char *root = root_buf;

	/* ut_tmpfile reuses its buffer */
	snprintf(root_buf, size, "%s", ut_tmpfile("searchroot"));

	mkdir(root, 0755);
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		snprintf(p, sizeof(p), "%s/%c", root, links[i][0][0]);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/%s", root, links[i][0]);
		unlink(p);
		if (symlink(ut_testdata(links[i][1]), p) != 0)
			return NULL;
	}
	return root;
}

static const char *fake_maps(const char *root, char *p, size_t size)
{
	snprintf(p, size, "%s", ut_tmpfile("maps"));
	FILE *f = fopen(p, "w");

	fprintf(f, "5f000000-5f001000 r--p 00000000 fd:00 11 /system/bin/app_process64\n"
		   "70000000-70004000 r--p 00000000 fd:00 12 "
		   "%s/b/com.android.location.provider.odex\n"
		   "70004000-70009000 r-xp 00004000 fd:00 12 "
		   "%s/b/com.android.location.provider.odex\n"
		   "7100000-7101000 rw-p 00000000 00:00 0 [anon:dalvik-main space]\n", root, root);
	fclose(f);
	return p;
}

UT_TEST(search_finds_the_file_defining_the_class_and_caches)
{
	char rb[4096], cache[4096];
	const char *root = fixture(rb, sizeof(rb));
	const char *roots[] = { root };

	snprintf(cache, sizeof(cache), "%s", ut_tmpfile("cache"));
	struct oat_search_opts so = { .roots = roots, .n_roots = 1, .isa = "arm64",
				      .cache_dir = cache, .code = ut_code_cache() };
	struct oat_search_hit hit;
	struct err e = { 0 };

	UT_ASSERT(root);
	UT_EQ_INT(oat_search_class(&so, "Landroid/net/http/AndroidHttpClient;", &hit, &e), 0);
	UT_CONTAINS(hit.path, "/a/org.apache.http.legacy.odex");
	UT_CONTAINS(hit.why, "found under search root");
	UT_ASSERT(!hit.from_cache);
	UT_EQ_INT(oat_search_class(&so, "Landroid/net/http/AndroidHttpClient;", &hit, &e), 0);
	UT_ASSERT(hit.from_cache);
	UT_CONTAINS(hit.why, "from the cache");
	so.no_cache = true;
	UT_EQ_INT(oat_search_class(&so, "Landroid/net/http/AndroidHttpClient;", &hit, &e), 0);
	UT_ASSERT(!hit.from_cache);
	UT_EQ_INT(oat_search_class(&so, "Lno/such/Klass;", &hit, &e), -ENOENT);
	UT_CONTAINS(e.msg, "interpreted or JIT-compiled");
	/* x86_64 only has the x86_64 copy */
	so.isa = "x86_64";
	UT_EQ_INT(oat_search_class(&so, "Lcom/android/location/provider/ActivityChangedEvent;", &hit,
				   &e), 0);
	UT_CONTAINS(hit.path, "/c/com.android.location.provider.odex");
}

UT_TEST(search_prefers_files_the_process_maps)
{
	char rb[4096], maps[4096], cache[4096];
	const char *root = fixture(rb, sizeof(rb));
	const char *roots[] = { root };
	const char *params[] = { "java.util.List" };

	snprintf(cache, sizeof(cache), "%s", ut_tmpfile("cache2"));
	struct java_resolve_opts o = {
		.class_name = "com.android.location.provider.ActivityChangedEvent",
		.method_name = "<init>", .params = params, .n_params = 1, .params_given = true,
		.search = { .pid = 4242, .maps_path = fake_maps(root, maps, sizeof(maps)),
			    .roots = roots, .n_roots = 1, .isa = "arm64", .cache_dir = cache },
		.code = ut_code_cache(),
	};
	struct java_resolution r;
	struct err e = { 0 };

	UT_EQ_INT(java_resolve(&o, &r, &e), 0);
	UT_ASSERT(r.searched);
	UT_CONTAINS(r.path, "/b/com.android.location.provider.odex");
	UT_CONTAINS(r.notes, "file chosen by search");
	UT_CONTAINS(r.notes, "mapped by pid 4242");
	UT_EQ_U64(r.file_offset, 0x4010);
	/* a missing maps file is an error naming the pid */
	o.search.maps_path = "/nonexistent/maps";
	UT_EQ_INT(java_resolve(&o, &r, &e), -ENOENT);
	UT_CONTAINS(e.msg, "mappings of pid 4242");
}

static char *run_cmd(bool resolve, const void *opts, int *rc, struct err *e)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	*rc = resolve ? resolve_cmd(opts, f, e) : methods_cmd(opts, f, e);
	fclose(f);
	return buf;
}

UT_TEST(methods_and_resolve_commands_print_results)
{
	struct methods_cmd_opts mo = {
		.file = ut_testdata(TD_A13 "com.android.location.provider.odex"),
		.code = ut_code_cache(),
	};
	struct err e = { 0 };
	int rc, lines = 0;
	char *out = run_cmd(false, &mo, &rc, &e);

	UT_EQ_INT(rc, 0);
	for (char *p = out; (p = strchr(p, '\n')); p++)
		lines++;
	UT_EQ_INT(lines, 133 + 2);   /* header + column titles + one line per method */
	UT_CONTAINS(out, "0x00004010    200     72 void com.android.location.provider."
		    "ActivityChangedEvent.<init>(java.util.List)");
	free(out);
	mo.json = true;
	mo.filter = "ActivityChangedEvent.<init>";
	out = run_cmd(false, &mo, &rc, &e);
	UT_EQ_STR(out, "{\"type\":\"method\",\"signature\":\"void com.android.location.provider."
		  "ActivityChangedEvent.<init>(java.util.List)\",\"dex_method_idx\":72,\"dex_index\":0,"
		  "\"class_def_idx\":0,"
		  "\"class_method_index\":0,\"code_offset\":12304,\"file_offset\":16400,"
		  "\"code_size\":200,\"isa\":\"arm64\",\"thumb\":false,\"access_flags\":65537,"
		  "\"dedup_group\":0,\"dedup_count\":1,\"frame_size\":64,\"core_spill_mask\":1136656384,"
		  "\"fp_spill_mask\":0,\"num_stack_maps\":6,\"frameless_leaf\":false,"
		  "\"frame_error\":null,\"exit_sites\":[16476],\"exit_sites_error\":null}\n");
	/* a row of docs/event.schema.json's "method" type */
	struct jc_doc schema;
	char why[512] = "";
	UT_EQ_INT(load_schema(&schema), 0);
	if (validate_lines(&schema, out, why, sizeof(why)) != 1)
		ut_fail(__FILE__, __LINE__, "methods --json breaks the schema: %s", why);
	jc_free(&schema);
	free(out);

	struct resolve_cmd_opts ro = { .file = mo.file, .signature = "void com.android.location."
				       "provider.ActivityChangedEvent.<init>(java.util.List)",
				       .code = mo.code };
	out = run_cmd(true, &ro, &rc, &e);
	UT_EQ_INT(rc, 0);
	UT_ASSERT(!strncmp(out, "0x4010 ", 7));
	UT_CONTAINS(out, " arm64 size=200 instance void com.android.location.provider.");
	free(out);
	ro.json = true;
	out = run_cmd(true, &ro, &rc, &e);
	UT_EQ_INT(rc, 0);
	UT_CONTAINS(out, "\"frame_size\":64,\"core_spill_mask\":1136656384,\"fp_spill_mask\":0,"
		    "\"num_stack_maps\":6,\"frameless_leaf\":false,\"frame_error\":null,"
		    "\"exit_sites\":[16476],\"exit_sites_error\":null,\"error\":null}\n");
	/* resolve's one shape (docs/json-schema.md, "resolve") */
	UT_ASSERT(!strncmp(out, "{\"type\":\"resolve\",\"path\":", 25));
	UT_CONTAINS(out, ",\"file_offset\":16400,\"code_size\":200,\"isa\":\"arm64\","
		    "\"thumb\":false,\"java\":true,\"name\":\"void com.android.location.provider."
		    "ActivityChangedEvent.<init>(java.util.List)\",\"signature\":\"void ");
	UT_CONTAINS(out, ",\"raw_name\":null,\"static\":false,\"access_flags\":65537,"
		    "\"params\":[\"Ljava/util/List;\"],\"found_by\":\"builtin\",\"searched\":false,"
		    "\"left_out\":null,\"detail\":null,\"warning\":null,\"notes\":");
	free(out);
	ro.signature = "void a.B.c()";
	out = run_cmd(true, &ro, &rc, &e);
	UT_EQ_INT(rc, -ENOENT);
	/* a failure: the same keys, null but error */
	UT_ASSERT(!strncmp(out, "{\"type\":\"resolve\",\"path\":null,\"file_offset\":null,", 49));
	UT_CONTAINS(out, "\"exit_sites\":null,\"exit_sites_error\":null,\"error\":\"");
	free(out);
	/* every form read the odex through the one code cache, once */
	struct code_cache_stats st;
	code_cache_get_stats(mo.code, &st);
	UT_EQ_U64(st.files_opened, 1);
	UT_EQ_U64(st.oat_parsed, 1);
}
