/* test_sig_roundtrip.c — every method `methods` lists in the shared test data
 * resolves back to its own code, in both ways a config names a Java method:
 * the method_signature text `methods` prints, and fully_qualified_class_name +
 * method_name + fully_qualified_parameters built from the dex (not from that
 * text).  Each goes through java_resolve(), the function behind `resolve` and
 * `check`, and the text also through the config's own signature reader.
 * Plus hand-made names that the test files do not hold: D8's "-$$Lambda$"
 * classes and "-IA" parameters, digits first, non-ASCII letters and dex 040's
 * spaces, and names dex does not allow. */
#include "ut.h"

#include <errno.h>
#include <stdlib.h>

#include "common/arena.h"
#include "config/signature.h"
#include "formats/dex.h"
#include "formats/oat.h"
#include "formats/oat_dexfile.h"
#include "formats/oat_methods.h"
#include "oat_testlib.h"
#include "resolve/java_resolve.h"
#include "resolve/java_sig.h"

struct tally {
	size_t methods, text_ok, parts_ok, parts_ambiguous, without_dex;
};

/* The parts of method m, from the dex: class, name and parameters in Java form. */
struct parts {
	char cls[1024], name[512], params[64][512];
	const char *pv[256];
	uint32_t n;
};

static bool method_parts(const struct dex_file *d, uint32_t idx, struct parts *p)
{
	struct dex_method_id mid;
	struct dex_proto pr;
	const char *name;

	if (dex_method_id_at(d, idx, &mid) || dex_proto_at(d, mid.proto_idx, &pr) ||
	    !(name = dex_string(d, mid.name_idx)) || pr.n_params > 64)
		return false;
	dex_pretty_descriptor(dex_type_descriptor(d, mid.class_idx), p->cls, sizeof(p->cls));
	snprintf(p->name, sizeof(p->name), "%s", name);
	for (uint32_t i = 0; i < pr.n_params; i++) {
		const char *t = dex_type_descriptor(d, dex_proto_param(d, &pr, i));
		if (!t)
			return false;
		dex_pretty_descriptor(t, p->params[i], sizeof(p->params[i]));
		p->pv[i] = p->params[i];
	}
	p->n = pr.n_params;
	return true;
}

/* Another method of the list with the same class, name and parameters (a bridge method
 * differing only in its return type): the parts form cannot tell them apart. */
static bool has_twin(struct oat_dexset *ds, const struct oat_method_list *l, size_t k)
{
	const struct dex_file *d;
	char a[2048], b[2048], *pa, *pb;
	struct err e;

	if (oat_dexset_get(ds, l->v[k].dex_i, &d, &e) ||
	    dex_pretty_method(d, l->v[k].method_idx, a, sizeof(a)) < 0 || !(pa = strchr(a, ' ')))
		return false;
	for (size_t i = 0; i < l->n; i++) {
		if (i == k || !l->v[i].has_dex || l->v[i].dex_i != l->v[k].dex_i ||
		    l->v[i].cdi != l->v[k].cdi ||
		    dex_pretty_method(d, l->v[i].method_idx, b, sizeof(b)) < 0 ||
		    !(pb = strchr(b, ' ')))
			continue;
		if (!strcmp(pa, pb))
			return true;
	}
	return false;
}

static void check_text(const char *path, const char *sig, uint64_t want, struct tally *t)
{
	struct java_resolve_opts o = { .method_signature = sig, .file_paths = &path,
				       .n_file_paths = 1, .mode = JAVA_RESOLVER_BUILTIN,
				       .code = ut_code_cache() };
	struct java_resolution r;
	struct method_sig ms;
	const char *why = NULL;
	struct err e = { 0 };

	if (sig_parse(sig, &ms, &why))
		ut_fail(__FILE__, __LINE__, "%s: config reader refuses \"%s\": %s", path, sig, why);
	if (java_resolve(&o, &r, &e))
		ut_fail(__FILE__, __LINE__, "%s: resolve \"%s\": %s", path, sig, e.msg);
	else if (r.file_offset != want)
		ut_fail(__FILE__, __LINE__, "%s: \"%s\" resolves to 0x%llx, methods says 0x%llx",
			path, sig, (unsigned long long)r.file_offset, (unsigned long long)want);
	else
		t->text_ok++;
}

static void check_parts(const char *path, const struct parts *p, bool twin, uint64_t want,
			struct tally *t)
{
	struct java_resolve_opts o = { .class_name = p->cls, .method_name = p->name,
				       .params = p->pv, .n_params = p->n, .params_given = true,
				       .file_paths = &path, .n_file_paths = 1,
				       .mode = JAVA_RESOLVER_BUILTIN, .code = ut_code_cache() };
	struct java_resolution r;
	struct err e = { 0 };
	int rc = java_resolve(&o, &r, &e);

	if (rc && twin && rc == -EINVAL) {
		t->parts_ambiguous++;      /* two methods differ only in the return type */
		return;
	}
	if (rc)
		ut_fail(__FILE__, __LINE__, "%s: resolve %s.%s (%u params): %s", path, p->cls,
			p->name, p->n, e.msg);
	else if (r.file_offset != want && !twin)
		ut_fail(__FILE__, __LINE__, "%s: %s.%s resolves to 0x%llx, methods says 0x%llx",
			path, p->cls, p->name, (unsigned long long)r.file_offset,
			(unsigned long long)want);
	else
		t->parts_ok++;
}

static void roundtrip_file(const char *rel, struct tally *t)
{
	const char *path = ut_testdata(rel);
	struct oat_file *o;
	struct oat_dexset *ds;
	struct oat_method_list l;
	struct err e = { 0 };

	UT_EQ_INT(oat_open(path, &o, &e), 0);
	UT_EQ_INT(oat_dexset_new(o, path, NULL, 0, &ds, &e), 0);
	UT_EQ_INT(oat_list_methods(o, ds, &l, &e), 0);
	for (size_t i = 0; i < l.n; i++) {
		const struct oat_method *m = &l.v[i];
		const struct dex_file *d;
		struct parts p;
		char sig[2048];

		t->methods++;
		if (!m->has_dex) {
			t->without_dex++;
			continue;
		}
		UT_EQ_INT(oat_dexset_get(ds, m->dex_i, &d, &e), 0);
		UT_ASSERT(dex_pretty_method(d, m->method_idx, sig, sizeof(sig)) > 0);
		UT_ASSERT(method_parts(d, m->method_idx, &p));
		check_text(path, sig, m->code.file_offset, t);
		check_parts(path, &p, has_twin(ds, &l, i), m->code.file_offset, t);
	}
	oat_method_list_free(&l);
	oat_dexset_free(ds);
	oat_close(o);
}

UT_TEST(sig_roundtrip_every_listed_method_resolves_back)
{
	struct tally t = { 0 };

	for (size_t i = 0; i < TD_N_OATS; i++)
		roundtrip_file(TD_ALL_OATS[i], &t);
	printf("  sig roundtrip: %zu methods in %zu files: %zu by text, %zu by parts "
	       "(+%zu bridge twins), %zu without a dex to name them\n", t.methods,
	       (size_t)TD_N_OATS, t.text_ok, t.parts_ok, t.parts_ambiguous, t.without_dex);
	/* Every method with a dex came back both ways; the data holds thousands. */
	UT_EQ_INT(t.text_ok, t.methods - t.without_dex);
	UT_EQ_INT(t.parts_ok + t.parts_ambiguous, t.methods - t.without_dex);
	UT_ASSERT(t.text_ok > 2000);
}

static const char *desc(const char *type)
{
	static char buf[512];   /* test-only scratch */
	if (java_type_to_descriptor(type, buf, sizeof(buf)))
		return "(error)";
	return buf;
}

UT_TEST(sig_names_as_dex_writes_them)
{
	/* D8's desugared lambdas and synthetic "-IA" classes; '-', '$', '_', digits first */
	UT_EQ_STR(desc("com.android.server.ethernet.-$$Lambda$EthernetTracker$Tethered"
		       "InterfaceRequestList$XN5PgArJyXhsC6ogbFrlROIObf0"),
		  "Lcom/android/server/ethernet/-$$Lambda$EthernetTracker$TetheredInterface"
		  "RequestList$XN5PgArJyXhsC6ogbFrlROIObf0;");
	UT_EQ_STR(desc("a.OplusCpuController$CpuTraker-IA"), "La/OplusCpuController$CpuTraker-IA;");
	UT_EQ_STR(desc("a.1b.2C"), "La/1b/2C;");
	UT_EQ_STR(desc("_._$"), "L_/_$;");
	/* non-ASCII letters: U+00E9, U+4E2D; U+1F600 as UTF-8 and as MUTF-8 (dex's form) */
	UT_EQ_STR(desc("caf\xc3\xa9.\xe4\xb8\xad"), "Lcaf\xc3\xa9/\xe4\xb8\xad;");
	UT_EQ_STR(desc("a.\xf0\x9f\x98\x80"), "La/\xed\xa0\xbd\xed\xb8\x80;");
	UT_EQ_STR(desc("a.\xed\xa0\xbd\xed\xb8\x80"), "La/\xed\xa0\xbd\xed\xb8\x80;");
	/* dex 040: U+00A0, U+2000..U+200A, U+202F; descriptors may hold plain spaces */
	UT_EQ_STR(desc("a.b\xc2\xa0" "c"), "La/b\xc2\xa0" "c;");
	UT_EQ_STR(desc("a.b\xe2\x80\x8a" "c"), "La/b\xe2\x80\x8a" "c;");
	UT_EQ_STR(desc("La/My Class;"), "La/My Class;");
	UT_EQ_STR(desc("[La/My Class;"), "[La/My Class;");

	/* not SimpleNames: C1 controls, U+200B..U+200F, U+2028, U+FFF0.., lone surrogates,
	 * broken UTF-8, ASCII punctuation */
	UT_EQ_STR(desc("a.b\xc2\x85"), "(error)");
	UT_EQ_STR(desc("a.b\xe2\x80\x8b"), "(error)");
	UT_EQ_STR(desc("a.b\xe2\x80\xa8"), "(error)");
	UT_EQ_STR(desc("a.b\xef\xbf\xbf"), "(error)");
	UT_EQ_STR(desc("a.b\xed\xa0\xbd"), "(error)");
	UT_EQ_STR(desc("a.b\xed\xb8\x80"), "(error)");
	UT_EQ_STR(desc("a.b\xc3"), "(error)");
	UT_EQ_STR(desc("a.b\xc0\xae"), "(error)");
	UT_EQ_STR(desc("a.b#c"), "(error)");
	UT_EQ_STR(desc("a.b:c"), "(error)");
	UT_EQ_STR(desc("a.b+c"), "(error)");
	UT_EQ_STR(desc("a/b"), "(error)");
	UT_EQ_STR(desc("La/b.c;"), "(error)");
	UT_EQ_STR(desc("L;"), "(error)");
}

UT_TEST(sig_parses_every_name_form)
{
	struct arena *a = arena_new();
	struct java_sig s;
	struct err e = { 0 };
	struct method_sig ms;
	const char *why;
	const char *lambda = "void com.android.server.ethernet.-$$Lambda$EthernetTracker$"
			     "TetheredInterfaceRequestList$XN5PgArJyXhsC6ogbFrlROIObf0.<init>("
			     "com.android.server.ethernet.EthernetTracker)";

	UT_EQ_INT(java_sig_parse(lambda, a, &s, &e), 0);
	UT_EQ_STR(s.name, "<init>");
	UT_EQ_STR(s.params[0], "Lcom/android/server/ethernet/EthernetTracker;");
	UT_EQ_INT(sig_parse(lambda, &ms, &why), 0);

	UT_EQ_INT(java_sig_parse("void a.C.<init>(a.C, a.C$T-IA)", a, &s, &e), 0);
	UT_EQ_STR(s.params[1], "La/C$T-IA;");
	UT_EQ_INT(java_sig_parse("java.util.HashSet a.P.-$$Nest$fgetmSinkSet(a.P)", a, &s, &e), 0);
	UT_EQ_STR(s.name, "-$$Nest$fgetmSinkSet");
	UT_EQ_INT(java_sig_parse("int a.\xc3\xa9t\xc3\xa9.\xe4\xb8\xad(int)", a, &s, &e), 0);
	UT_EQ_STR(s.class_desc, "La/\xc3\xa9t\xc3\xa9;");

	/* dex 040 spaces: in the class and method of the text form, in every parts field,
	 * and in parameter and return types written as descriptors */
	UT_EQ_INT(java_sig_parse("void a.My Class.my method(int, La/My Class;)", a, &s, &e), 0);
	UT_EQ_STR(s.class_desc, "La/My Class;");
	UT_EQ_STR(s.name, "my method");
	UT_EQ_STR(s.params[1], "La/My Class;");
	UT_EQ_INT(java_sig_parse("La/My Class; a.B.m()", a, &s, &e), 0);
	UT_EQ_STR(s.ret_desc, "La/My Class;");
	UT_EQ_STR(s.class_desc, "La/B;");
	UT_EQ_INT(sig_parse("void a.My Class.my method(int)", &ms, &why), 0);
	UT_ASSERT(ms.name.len == strlen("a.My Class.my method"));
	const char *params[] = { "a.My Class", "int []" };
	UT_EQ_INT(java_sig_from_parts("a.My Class", "my method", params, 2, true, a, &s, &e), 0);
	UT_EQ_STR(s.params[0], "La/My Class;");
	UT_EQ_STR(s.params[1], "[I");

	/* the same clear errors for names dex does not allow */
	UT_EQ_INT(java_sig_parse("void a.B#.m()", a, &s, &e), -EINVAL);
	UT_CONTAINS(e.msg, "class \"a.B#\" is not a Java type name");
	UT_EQ_INT(java_sig_parse("void a.B.m#()", a, &s, &e), -EINVAL);
	UT_CONTAINS(e.msg, "method name \"m#\" contains '#'");
	UT_EQ_INT(java_sig_from_parts("a.B", "m\xe2\x80\xa8", NULL, 0, true, a, &s, &e), -EINVAL);
	UT_CONTAINS(e.msg, "a character dex does not allow in names (byte 0xe2 at 1)");
	UT_EQ_INT(java_sig_parse("void a.B.m(a.b:c)", a, &s, &e), -EINVAL);
	UT_CONTAINS(e.msg, "parameter \"a.b:c\" is not a Java type name");
	UT_EQ_INT(sig_parse("public void a.B.m()", &ms, &why), -1);
	UT_CONTAINS(why, "modifier");
	arena_free(a);
}

/* A parameter type with a space (dex 040) in the text form: the usual reading
 * takes "a.My Class" as type a.My and parameter name Class; the resolver reads
 * the signature again with whole parameters when the first names no method. */
UT_TEST(sig_whole_params_second_reading)
{
	struct arena *a = arena_new();
	struct java_sig s;
	struct err e = { 0 };
	const char *odex = ut_testdata(TD_A11X "com.android.location.provider.odex");
	struct java_resolution r;

	UT_EQ_INT(java_sig_parse("void a.B.m(a.My Class, int)", a, &s, &e), 0);
	UT_EQ_STR(s.params[0], "La/My;");
	UT_EQ_INT(java_sig_parse_whole_params("void a.B.m(a.My Class, int)", a, &s, &e), 0);
	UT_EQ_STR(s.params[0], "La/My Class;");
	UT_EQ_STR(s.params[1], "I");
	UT_EQ_INT(java_sig_parse_whole_params("void a.B.m(final int[] v)", a, &s, &e), -EINVAL);

	/* parameter names still work, and a missing method keeps the first reading's
	 * error */
	struct java_resolve_opts o = {
		.method_signature = "void com.android.location.provider.ActivityRecognitionEvent"
				    ".<init>(java.lang.String name, int type, long time)",
		.file_paths = &odex, .n_file_paths = 1, .mode = JAVA_RESOLVER_BUILTIN,
		.code = ut_code_cache() };
	UT_EQ_INT(java_resolve(&o, &r, &e), 0);
	o.method_signature = "void com.android.location.provider.ActivityRecognitionEvent"
			     ".nope(java.lang.String name)";
	UT_EQ_INT(java_resolve(&o, &r, &e), -ENOENT);
	UT_CONTAINS(e.msg, "nope");
	arena_free(a);
}
