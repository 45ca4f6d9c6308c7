#include "ut.h"

#include <errno.h>
#include <stdlib.h>

#include "oat_testlib.h"
#include "formats/dex.h"
#include "resolve/java_resolve.h"
#include "formats/oat.h"
#include "formats/oat_code.h"
#include "formats/oat_dexfile.h"

/* A plausible first instruction of an ART method for the ISA: a stack-overflow
 * probe, a frame set-up or a register save. */
static bool plausible_entry(const char *isa, const uint8_t *p)
{
	uint32_t w = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		     (uint32_t)p[3] << 24;

	if (!strcmp(isa, "arm64"))
		return w == 0xd1400bf0 ||                       /* sub x16, sp, #0x2000 */
		       (w & 0xff8003ff) == 0xd10003ff ||        /* sub sp, sp, #imm */
		       (w & 0xffc003e0) == 0xa98003e0 ||        /* stp x, y, [sp, #-n]! */
		       (w & 0xffe00fe0) == 0xf8000fe0;          /* str x, [sp, #-n]! */
	if (!strcmp(isa, "x86_64"))
		return !memcmp(p, "\x48\x85\x84\x24", 4) ||     /* test rax, [rsp - n] */
		       (p[0] == 0x41 && (p[1] & 0xf8) == 0x50) || (p[0] & 0xf8) == 0x50;
	if (!strcmp(isa, "x86"))
		return !memcmp(p, "\x85\x84\x24", 3) || (p[0] & 0xf8) == 0x50 ||
		       (p[0] == 0x83 && p[1] == 0xec);
	if (!strcmp(isa, "arm"))                                /* Thumb-2 */
		return (p[0] == 0xad && p[1] == 0xf5) ||        /* sub.w ip, sp, #n */
		       p[1] == 0xb5 || (p[0] == 0x2d && p[1] == 0xe9);  /* push / stmdb sp! */
	return false;
}

/* The code size from the raw header bytes before the code, decoded here
 * independently of oat_code_at(): the version's own rule only. */
static uint32_t raw_code_size(const uint8_t *file, uint64_t off, unsigned version)
{
	uint32_t data;

	memcpy(&data, file + off - 4, 4);
	if (version < 192)
		return data & 0x7fffffff;
	uint32_t ci = version < 238 ? data & 0x3fffffff : version == 238 ? data & 0x7fffffff : data;
	uint32_t size = 0;
	oat_codeinfo_code_size(file + off - ci, ci, &size);
	return size;
}

static void check_file(const char *rel)
{
	char ep[4096], line[4096], sigs[5][1024];
	long long offs[5], sizes[5], flags[5];
	size_t rows = 0, picked = 0;
	FILE *f;

	snprintf(ep, sizeof(ep), "%s", ut_testdata(rel));
	char *p = strstr(ep, "/oat/android-");
	memmove(p + 13, p + 4, strlen(p + 4) + 1);
	memcpy(p, "/oat-expected", 13);
	strcat(ep, ".jsonl");
	f = fopen(ep, "r");
	UT_ASSERT(f);
	while (fgets(line, sizeof(line), f))
		rows++;
	rewind(f);
	for (size_t i = 0; fgets(line, sizeof(line), f) && picked < 5; i++) {
		long long acc = 0, size = 0;
		if (!jstr(line, "signature", sigs[picked], sizeof(sigs[0])) ||
		    !jnum(line, "access_flags", &acc) || !jnum(line, "code_size", &size) ||
		    (acc & DEX_ACC_NATIVE) || size < 96 || i < picked * rows / 5)
			continue;
		jnum(line, "file_offset", &offs[picked]);
		sizes[picked] = size;
		flags[picked++] = acc;
	}
	fclose(f);
	if (!picked)
		return;   /* no dex for this file: covered by the expected-table test */
	UT_ASSERT(picked == 5 || rows < 40);

	size_t len;
	uint8_t *file = td_copy(ut_testdata(rel), &len);
	const char *path = ut_testdata(rel);
	UT_ASSERT(file);
	for (size_t k = 0; k < picked; k++) {
		struct java_resolve_opts o = { .method_signature = sigs[k], .file_paths = &path,
					       .n_file_paths = 1, .mode = JAVA_RESOLVER_BUILTIN,
					       .code = ut_code_cache() };
		struct java_resolution r;
		struct err e = { 0 };
		int rc = java_resolve(&o, &r, &e);
		if (rc)
			ut_fail(__FILE__, __LINE__, "%s: %s: %s", rel, sigs[k], e.msg);
		UT_EQ_INT(rc, 0);
		UT_EQ_U64(r.file_offset, offs[k]);
		UT_EQ_INT(r.code_size, sizes[k]);
		UT_EQ_INT(r.access_flags, flags[k]);
		UT_EQ_INT(r.is_static, (flags[k] & DEX_ACC_STATIC) != 0);
		UT_EQ_STR(r.signature, sigs[k]);
		UT_EQ_INT(r.found_by, JAVA_FOUND_BUILTIN);
		unsigned version = (unsigned)atoi(strstr(r.notes, "oat v") + 5);
		UT_EQ_INT(raw_code_size(file, r.file_offset, version), sizes[k]);
		if (!plausible_entry(r.isa, file + r.file_offset))
			ut_fail(__FILE__, __LINE__, "%s: %s: implausible entry %02x %02x %02x %02x",
				rel, sigs[k], file[r.file_offset], file[r.file_offset + 1],
				file[r.file_offset + 2], file[r.file_offset + 3]);
		UT_EQ_INT(r.thumb, !strcmp(r.isa, "arm"));
		if (r.thumb)
			UT_CONTAINS(r.warning, "Thumb");
	}
	free(file);
}

UT_TEST(resolve_five_methods_in_every_compiled_file)
{
	for (size_t i = 0; i < TD_N_COMPILED; i++)
		check_file(TD_COMPILED[i]);
}

static int resolve_in(const char *rel, const char *sig, struct java_resolution *r,
		      struct err *e)
{
	const char *path = ut_testdata(rel);
	struct java_resolve_opts o = { .method_signature = sig, .file_paths = &path,
				       .n_file_paths = 1, .mode = JAVA_RESOLVER_BUILTIN,
				       .code = ut_code_cache() };
	return java_resolve(&o, r, e);
}

UT_TEST(resolve_explains_methods_without_code)
{
	struct java_resolution r;
	struct err e = { 0 };

	/* verify filter (v225) */
	UT_EQ_INT(resolve_in(TD_A13 "javax.obex.odex", "void javax.obex.ObexPacket.<init>(int, int)",
			     &r, &e), -ENODATA);
	UT_CONTAINS(e.msg, "compiler-filter 'verify', which compiles no methods");
	UT_CONTAINS(e.msg, "cmd package compile -m speed -f");
	/* verify filter, v244 (magic + SHA-1 records), class in a jar */
	UT_EQ_INT(resolve_in(TD_A15 "com.android.media.remotedisplay.odex",
			     "void com.android.media.remotedisplay.RemoteDisplay.<init>"
			     "(java.lang.String, java.lang.String)", &r, &e), -ENODATA);
	UT_CONTAINS(e.msg, "'verify'");
	/* quicken (v170): only JNI stubs */
	UT_EQ_INT(resolve_in(TD_A10 "TimeService.odex",
			     "void com.qualcomm.timeservice.R.<init>()",
			     &r, &e), -ENODATA);
	UT_CONTAINS(e.msg, "'quicken', which compiles only JNI stubs");
}

/* First method of a dex whose flags match (want & flags) == want, or -1. */
static int64_t find_method_with(const struct dex_file *d, uint32_t want, char *sig, size_t size)
{
	for (uint32_t c = 0; c < dex_class_def_count(d); c++) {
		struct dex_class_iter it;
		struct dex_method m;
		struct err e;
		if (dex_class_iter_init(d, c, &it, &e))
			continue;
		while (dex_class_iter_next(&it, &m, &e) > 0)
			if ((m.access_flags & want) == want) {
				dex_pretty_method(d, m.method_idx, sig, size);
				return m.method_idx;
			}
	}
	return -1;
}

UT_TEST(resolve_explains_abstract_and_profile_exclusion)
{
	const char *rel = TD_A13 "org.apache.http.legacy.odex";
	struct oat_file *o;
	struct oat_dexset *ds;
	const struct dex_file *d;
	struct java_resolution r;
	struct err e = { 0 };
	char sig[1024];

	UT_EQ_INT(oat_open(ut_testdata(rel), &o, &e), 0);
	UT_EQ_INT(oat_dexset_new(o, ut_testdata(rel), NULL, 0, &ds, &e), 0);
	UT_EQ_INT(oat_dexset_get(ds, 0, &d, &e), 0);
	UT_ASSERT(find_method_with(d, DEX_ACC_ABSTRACT, sig, sizeof(sig)) >= 0);
	UT_EQ_INT(resolve_in(rel, sig, &r, &e), -ENODATA);
	UT_CONTAINS(e.msg, "abstract");
	/* speed-profile: find a concrete method the bitmap leaves out */
	bool seen = false;
	for (uint32_t c = 0; c < dex_class_def_count(d) && !seen; c++) {
		struct dex_class_iter it;
		struct dex_method m;
		struct oat_class oc;
		if (dex_class_iter_init(d, c, &it, &e) ||
		    oat_class_get(o, 0, c, it.n_direct + it.n_virtual, &oc, &e) ||
		    oc.type != OAT_CLASS_SOME_COMPILED)
			continue;
		while (!seen && dex_class_iter_next(&it, &m, &e) > 0) {
			uint32_t co;
			enum oat_miss why;
			if (!m.code_off ||
			    oat_class_method(o, &oc, m.index_in_class, NULL, &co, &why, &e) ||
			    why != OAT_MISS_BITMAP)
				continue;
			dex_pretty_method(d, m.method_idx, sig, sizeof(sig));
			seen = true;
		}
	}
	UT_ASSERT(seen);
	UT_EQ_INT(resolve_in(rel, sig, &r, &e), -ENODATA);
	UT_CONTAINS(e.msg, "'speed-profile', which compiles only methods in the profile");
	oat_dexset_free(ds);
	oat_close(o);
}

UT_TEST(resolve_reports_missing_class_method_and_ambiguity)
{
	const char *rel = TD_A13 "com.android.location.provider.odex";
	const char *path = ut_testdata(rel);
	struct java_resolution r;
	struct err e = { 0 };

	UT_EQ_INT(resolve_in(rel, "void a.b.NoSuch.m()", &r, &e), -ENOENT);
	UT_CONTAINS(e.msg, "no dex file of this oat defines class a.b.NoSuch");
	UT_EQ_INT(resolve_in(rel, "void com.android.location.provider.ActivityChangedEvent.nope(int)",
			     &r, &e), -ENOENT);
	UT_CONTAINS(e.msg, "has no method");
	UT_CONTAINS(e.msg, "inherited");
	/* wrong return type: the same-named method is listed */
	UT_EQ_INT(resolve_in(rel, "int com.android.location.provider.ActivityChangedEvent.<init>"
			     "(java.util.List)", &r, &e), -ENOENT);
	UT_CONTAINS(e.msg, "same-named: void com.android.location.provider.ActivityChangedEvent"
		    ".<init>(java.util.List)");
	UT_EQ_INT(resolve_in(rel, "void x(", &r, &e), -EINVAL);
	/* the parts form, with a canonical inner-class name and no parameter list */
	struct java_resolve_opts o = { .class_name = "com.android.location.provider."
						     "ActivityChangedEvent",
				       .method_name = "getActivityRecognitionEvents",
				       .file_paths = &path, .n_file_paths = 1,
				       .code = ut_code_cache() };
	UT_EQ_INT(java_resolve(&o, &r, &e), 0);
	UT_EQ_STR(r.signature, "java.lang.Iterable com.android.location.provider."
		  "ActivityChangedEvent.getActivityRecognitionEvents()");
	UT_ASSERT(!r.is_static);
	UT_EQ_INT(r.n_params, 0);
	/* "Outer.Inner" retried as "Outer$Inner" */
	o.class_name = "com.android.location.provider.ActivityRecognitionProvider.SinkTransport";
	o.method_name = "onActivityChanged";
	UT_EQ_INT(java_resolve(&o, &r, &e), 0);
	UT_EQ_INT(r.n_params, 1);
	UT_EQ_STR(java_resolution_param(&r, 0), "Landroid/hardware/location/ActivityChangedEvent;");
	UT_EQ_STR(r.ret_desc, "V");
	/* a static method: no `this` register */
	o.class_name = "com.android.location.provider.ActivityRecognitionProvider";
	o.method_name = "-$$Nest$fgetmSinkSet";
	UT_EQ_INT(java_resolve(&o, &r, &e), 0);
	UT_ASSERT(r.is_static);
	UT_ASSERT(r.flags_known);
	/* overloads without a parameter list are refused */
	o.class_name = "com.android.location.provider.ActivityRecognitionProvider$SinkTransport";
	o.method_name = "<init>";
	UT_EQ_INT(java_resolve(&o, &r, &e), -EINVAL);
	UT_CONTAINS(e.msg, "has 2 overloads; give the parameter list");
}

UT_TEST(resolve_warns_about_shared_code)
{
	/* Find a de-duplicated pair in the expected table and resolve one of them. */
	const char *rel = TD_A13 "org.apache.http.legacy.odex";
	char ep[4096], line[4096], sig[1024], prev_sig[1024] = "";
	long long prev_off = -1, off;
	FILE *f;
	struct java_resolution r;
	struct err e = { 0 };
	bool done = false;

	snprintf(ep, sizeof(ep), "%s/oat-expected/android-13/arm64/realme_ice_ossi_TP1A.220905.001/"
		 "org.apache.http.legacy.odex.jsonl", getenv("UPROBESTATS_TESTDATA"));
	f = fopen(ep, "r");
	UT_ASSERT(f);
	/* the table is in class order; sort-free search for an equal offset */
	char (*sigs)[1024] = calloc(800, sizeof(*sigs));
	long long *offs = calloc(800, sizeof(*offs));
	size_t n = 0;
	while (fgets(line, sizeof(line), f) && n < 800)
		if (jstr(line, "signature", sigs[n], sizeof(sigs[0])) &&
		    jnum(line, "code_offset", &off))
			offs[n++] = off;
	fclose(f);
	for (size_t i = 0; i < n && !done; i++)
		for (size_t j = i + 1; j < n && !done; j++)
			if (offs[i] == offs[j]) {
				snprintf(sig, sizeof(sig), "%s", sigs[i]);
				snprintf(prev_sig, sizeof(prev_sig), "%s", sigs[j]);
				prev_off = offs[i];
				done = true;
			}
	free(sigs);
	free(offs);
	UT_ASSERT(done && prev_off > 0);
	UT_EQ_INT(resolve_in(rel, sig, &r, &e), 0);
	UT_ASSERT(r.n_sharers >= 1);
	UT_CONTAINS(r.warning, "shared (de-duplicated)");
	UT_CONTAINS(r.warning, prev_sig);
}

UT_TEST(resolve_in_boot_image_extensions)
{
	struct java_resolution r;
	struct err e = { 0 };

	/* boot-ext.oat names its dex /system/framework/ext.jar: found by base name */
	UT_EQ_INT(resolve_in(TD_A13 "boot-ext.oat",
			     "int com.android.i18n.phonenumbers.AsYouTypeFormatter.nope()", &r, &e),
		  -ENOENT);
	UT_CONTAINS(e.msg, "has no method");
	UT_EQ_INT(resolve_in(TD_A11X "boot-framework-atb-backward-compatibility.oat",
			     "void a.B.c()", &r, &e), -ENOENT);
	UT_CONTAINS(e.msg, "no dex file of this oat defines class a.B");
}
