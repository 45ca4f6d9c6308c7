#include "ut.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "common/mapfile.h"
#include "oat_testlib.h"
#include "resolve/java_resolve.h"
#include "resolve/oatdump.h"

#define CE "oat/oatdump-text/compiler-explorer/"

static int parse_file(const char *rel, struct oatdump_output *out, struct err *e)
{
	struct mapped_file mf;
	int rc;

	if ((rc = mapfile_open(ut_testdata(rel), 0, 0, &mf, e)))
		return rc;
	rc = oatdump_parse_text((const char *)mf.data, mf.size, out, e);
	mapfile_close(&mf);
	return rc;
}

UT_TEST(oatdump_parses_real_text_output)
{
	struct oatdump_output o;
	struct err e = { 0 };
	const struct oatdump_method *m;

	UT_EQ_INT(parse_file(CE "java.oatdump.asm", &o, &e), 0);
	UT_EQ_INT(o.version, 239);
	UT_ASSERT(o.has_exec_offset);
	UT_EQ_INT(o.exec_offset, 0x1000);
	UT_EQ_INT(o.n, 2);
	m = oatdump_find(&o, "int Square.square(int)");
	UT_ASSERT(m);
	UT_EQ_INT(m->dex_method_idx, 1);
	UT_EQ_U64(m->code_offset, 0x1020);
	UT_EQ_INT(m->code_size, 8);
	UT_ASSERT(oatdump_find(&o, "void Square.<init>()"));
	UT_ASSERT(!oatdump_find(&o, "void Square.<init>(int)"));
	oatdump_output_free(&o);

	/* kotlin: the type-lookup line "0: LExampleKt;" must not be a class or method */
	UT_EQ_INT(parse_file(CE "kotlin.oatdump.asm", &o, &e), 0);
	UT_EQ_INT(o.n, 1);
	m = oatdump_find(&o, "int ExampleKt.square(int)");
	UT_ASSERT(m);
	UT_EQ_U64(m->code_offset, 0x1010);
	oatdump_output_free(&o);
}

UT_TEST(oatdump_parses_json_and_text_variants)
{
	struct oatdump_output o;
	struct err e = { 0 };
	const char *json =
		"I oatdump: Starting runtime in imageless mode\n"
		"{\"method\":\"void a.B.<init>()\",\"offset\":\"0x00001010\"}\n"
		"{\"method\": \"java.lang.String a.B$C.q(int[], java.lang.String)\", "
		"\"offset\": \"0x2021\"}\n"
		"{\"method\":\"void a.B.n()\",\"offset\":\"0x00000000\"}\n";
	UT_EQ_INT(oatdump_parse_json(json, strlen(json), &o, &e), 0);
	UT_EQ_INT(o.n, 3);
	const struct oatdump_method *m =
		oatdump_find(&o, "java.lang.String a.B$C.q(int[],java.lang.String)");
	UT_ASSERT(m);
	UT_EQ_U64(m->code_offset, 0x2021);
	UT_ASSERT(!m->has_size);
	oatdump_output_free(&o);
	UT_EQ_INT(oatdump_parse_json("{\"method\":\"x\"}\n", 15, &o, &e), -EINVAL);

	/* Android 10-11 CODE lines carry size_offset; code_offset lines may keep a
	 * trailing space; a dex string constant mimicking a method line is ignored. */
	const char *text =
		"MAGIC:\noat\n183\n\nEXECUTABLE OFFSET:\n0x00002000\n\nOatDexFile:\n"
		"location: /system/framework/x.jar\n"
		"3: La/B; (offset=0x00000abc) (type_idx=7) (Verified) (OatClassSomeCompiled)\n"
		"  0: void a.B.m(long) (dex_method_idx=12)\n"
		"    DEX CODE:\n"
		"      0x0000: 1a00 0000  | const-string v0, "
		"\"  9: void x.Y.z() (dex_method_idx=1)\"\n"
		"    OatMethodOffsets (offset=0x00000ac4)\n"
		"      code_offset: 0x00002011 \n"
		"    CODE: (code_offset=0x00002011 size_offset=0x0000200d size=64)...\n"
		"  1: void a.B.n() (dex_method_idx=13)\n"
		"      code_offset: 0x00000000 \n"
		"    CODE: (code_offset=0x00000000 size_offset=0x00000000 size=0)\n";
	UT_EQ_INT(oatdump_parse_text(text, strlen(text), &o, &e), 0);
	UT_EQ_INT(o.version, 183);
	UT_EQ_INT(o.n, 2);
	UT_EQ_U64(o.v[0].code_offset, 0x2011);
	UT_EQ_INT(o.v[0].code_size, 64);
	UT_EQ_INT(o.v[0].dex_method_idx, 12);
	UT_EQ_U64(o.v[1].code_offset, 0);
	oatdump_output_free(&o);
	UT_EQ_INT(oatdump_parse_text("usage: oatdump\n", 15, &o, &e), -EINVAL);
	UT_CONTAINS(e.msg, "no \"OatDexFile:\"");

	/* offsets: oatdata-relative before v247, ELF-relative after; Thumb bit cleared */
	UT_EQ_U64(oatdump_file_offset(239, 0x1000, 0x2011), 0x3010);
	UT_EQ_U64(oatdump_file_offset(247, 0x1000, 0x3011), 0x3010);
}

/* Writes an executable script into the scratch directory. */
static const char *script(const char *name, const char *body)
{
	const char *p = ut_tmpfile(name);
	FILE *f = fopen(p, "w");
	if (!f)
		return NULL;
	fprintf(f, "#!/bin/sh\n%s", body);
	fclose(f);
	chmod(p, 0755);
	return p;
}

static int run_fake(const char *bin, const char *rel, const char *sig, enum java_resolver_mode m,
		    int timeout, struct java_resolution *r, struct err *e)
{
	const char *path = ut_testdata(rel);
	struct java_resolve_opts o = { .method_signature = sig, .file_paths = &path,
				       .n_file_paths = 1, .mode = m, .oatdump_path = bin,
				       .oatdump_timeout_ms = timeout, .code = ut_code_cache() };
	return java_resolve(&o, r, e);
}

UT_TEST(oatdump_fallback_replays_recorded_output)
{
	struct java_resolution r;
	struct err e = { 0 };
	char body[2048];
	const char *rel = TD_A13 "com.android.location.provider.odex";

	/* v225 < 241: text mode.  Replays what oatdump prints for this file
	 * (code offsets oatdata-relative, as oat-expected records them). */
	snprintf(body, sizeof(body),
		 "case \"$*\" in *--dump-method-and-offset-as-json*) exit 3;; esac\n"
		 "case \"$*\" in *--oat-file=*com.android.location.provider.odex*) ;; "
		 "*) exit 4;; esac\n"
		 "cat <<'EOF'\nMAGIC:\noat\n225\n\nOatDexFile:\n"
		 "0: Lcom/android/location/provider/ActivityChangedEvent; (offset=0x00000ab0) "
		 "(type_idx=1) (Verified) (AllCompiled)\n"
		 "  0: void com.android.location.provider.ActivityChangedEvent."
		 "<init>(java.util.List) "
		 "(dex_method_idx=72)\n"
		 "    CODE: (code_offset=0x%08x size=160)...\nEOF\n", 0x3010);
	const char *bin = script("oatdump-text", body);
	UT_EQ_INT(run_fake(bin, rel, "void com.android.location.provider.ActivityChangedEvent.<init>"
			   "(java.util.List)", JAVA_RESOLVER_OATDUMP, 0, &r, &e), 0);
	UT_EQ_INT(r.found_by, JAVA_FOUND_OATDUMP);
	UT_EQ_U64(r.file_offset, 0x4010);   /* oatdata at 0x1000 */
	UT_EQ_INT(r.code_size, 160);
	UT_EQ_INT(r.dex_method_idx, 72);
	UT_CONTAINS(r.notes, "oatdata-relative");
	UT_EQ_INT(run_fake(bin, rel, "void com.android.location.provider.ActivityChangedEvent.x()",
			   JAVA_RESOLVER_OATDUMP, 0, &r, &e), -ENOENT);
	UT_CONTAINS(e.msg, "oatdump lists no method");
}

UT_TEST(oatdump_auto_falls_back_when_the_dex_is_missing)
{
	struct java_resolution r;
	struct err e = { 0 };
	const char *rel = TD_A15 "apex@com.android.media@javalib@service-media-s.jar@classes.odex";
	/* v244 >= 241: JSON mode; no jar exists for this odex, so the built-in
	 * reader cannot see signatures and auto mode asks oatdump. */
	const char *bin = script("oatdump-json",
		"case \"$*\" in *--dump-method-and-offset-as-json*) ;; *) exit 3;; esac\n"
		"echo 'W oatdump: imageless mode' >&2\n"
		"echo '{\"method\":\"void com.android.server.media.Fake.<init>()\","
		"\"offset\":\"0x00004010\"}'\n");
	UT_EQ_INT(run_fake(bin, rel, "void com.android.server.media.Fake.<init>()", JAVA_RESOLVER_AUTO,
			   0, &r, &e), 0);
	UT_EQ_INT(r.found_by, JAVA_FOUND_OATDUMP);
	UT_EQ_U64(r.file_offset, 0x8010);   /* oatdata at 0x4000 (16 KiB alignment) */
	UT_ASSERT(!r.flags_known);
	UT_CONTAINS(r.notes, "falling back to oatdump");
	UT_EQ_STR(r.isa, "arm64");
	/* builtin mode does not fall back */
	UT_EQ_INT(run_fake(bin, rel, "void com.android.server.media.Fake.<init>()",
			   JAVA_RESOLVER_BUILTIN, 0, &r, &e), -ENOENT);
	UT_CONTAINS(e.msg, "no matching archive");
}

UT_TEST(oatdump_errors_and_timeouts_are_reported)
{
	struct java_resolution r;
	struct err e = { 0 };
	const char *rel = TD_A13 "com.android.location.provider.odex";
	const char *sig =
		"void com.android.location.provider.ActivityChangedEvent.<init>(java.util.List)";

	const char *bin = script("oatdump-fail",
				 "echo 'Failed to open oat file: version 225 != 230' >&2\n"
				 "exit 1\n");
	UT_EQ_INT(run_fake(bin, rel, sig, JAVA_RESOLVER_OATDUMP, 0, &r, &e), -EIO);
	UT_CONTAINS(e.msg, "exit status 1");
	UT_CONTAINS(e.msg, "oatdump stderr: Failed to open oat file: version 225 != 230");

	bin = script("oatdump-hang", "exec sleep 10\n");
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	UT_EQ_INT(run_fake(bin, rel, sig, JAVA_RESOLVER_OATDUMP, 300, &r, &e), -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &b);
	UT_CONTAINS(e.msg, "did not finish within 300 ms");
	UT_ASSERT(b.tv_sec - a.tv_sec < 3);

	UT_EQ_INT(run_fake("/nonexistent/oatdump", rel, sig, JAVA_RESOLVER_OATDUMP, 0, &r, &e),
		  -ENOENT);
	UT_CONTAINS(e.msg, "cannot run /nonexistent/oatdump");
}
