#include "ut.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>

#include "oat_testlib.h"
#include "resolve/dex.h"
#include "resolve/oat.h"
#include "resolve/oat_code.h"
#include "resolve/oat_dexfile.h"
#include "resolve/oat_methods.h"

UT_TEST(oat_opens_every_test_file)
{
	for (size_t i = 0; i < TD_N_OATS; i++) {
		const char *path = ut_testdata(TD_ALL_OATS[i]);
		struct oat_file *o;
		struct err e = { 0 };
		int rc = oat_open(path, &o, &e);
		if (rc)
			ut_fail(__FILE__, __LINE__, "%s: %s", TD_ALL_OATS[i], e.msg);
		UT_EQ_INT(rc, 0);
		const struct oat_info *in = oat_info(o);
		UT_ASSERT(in->version >= 170 && in->version <= 265);
		UT_ASSERT(in->dex_count >= 1);
		UT_ASSERT(strstr(in->header_layout, "chosen by validation") == NULL);
		UT_ASSERT(oat_dex_at(o, 0)->location[0] != 0);
		oat_close(o);
	}
}

UT_TEST(oat_header_facts_match_known_files)
{
	struct oat_file *o;
	struct err e = { 0 };

	UT_EQ_INT(oat_open(ut_testdata(TD_A15 "apex@com.android.media@javalib@"
				       "service-media-s.jar@classes.odex"), &o, &e), 0);
	const struct oat_info *in = oat_info(o);
	UT_EQ_INT(in->version, 244);
	UT_EQ_U64(in->oatdata_off, 0x4000);
	UT_EQ_INT(in->executable_offset, 0x4000);
	UT_EQ_STR(in->isa, "arm64");
	UT_CONTAINS(in->header_layout, "v222/224-254");
	UT_CONTAINS(in->record_layout, "magic+SHA-1, 6");
	UT_EQ_STR(oat_kv_get(o, "compiler-filter"), "speed");
	UT_EQ_STR(oat_dex_at(o, 0)->location, "/apex/com.android.media/javalib/service-media-s.jar");
	UT_EQ_STR(oat_dex_at(o, 0)->magic, "dex\n039");
	oat_close(o);

	/* v236 mainline file: no magic/SHA-1 despite the number. */
	UT_EQ_INT(oat_open(ut_testdata(TD_A14 "EuiccMemoryReset.odex"), &o, &e), 0);
	UT_EQ_INT(oat_info(o)->version, 236);
	UT_CONTAINS(oat_info(o)->record_layout, "no magic/SHA-1, 5");
	UT_CONTAINS(oat_info(o)->record_layout, "chosen by validation");
	UT_EQ_STR(oat_kv_get(o, "compiler-filter"), "verify");
	UT_ASSERT(!oat_info(o)->has_oatexec);
	oat_close(o);

	/* Boot extension: empty key/value store. */
	UT_EQ_INT(oat_open(ut_testdata(TD_A13 "boot-ext.oat"), &o, &e), 0);
	UT_EQ_INT(oat_info(o)->kv_size, 0);
	UT_ASSERT(oat_kv_get(o, "compiler-filter") == NULL);
	oat_close(o);
}

UT_TEST(oat_rejects_non_oat_elf)
{
	struct oat_file *o;
	struct err e = { 0 };

	UT_EQ_INT(oat_open("/bin/ls", &o, &e), -ENOEXEC);
	UT_CONTAINS(e.msg, "no \"oatdata\" dynamic symbol");
}

/* Expected-file path for an oat path relative to the test data. */
static void expected_path(const char *rel, char *buf, size_t size)
{
	snprintf(buf, size, "%s.jsonl", ut_testdata(rel));
	char *p = strstr(buf, "/oat/android-");
	/* .../testdata/oat/android-X/... -> .../testdata/oat-expected/android-X/... */
	if (p) {
		memmove(p + 13, p + 4, strlen(p + 4) + 1);
		memcpy(p, "/oat-expected", 13);
	}
}

static const struct oat_method *find_method(const struct oat_method_list *l, long long di,
					    long long cdi, long long cmi)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].dex_i == di && l->v[i].cdi == cdi && l->v[i].index_in_class == cmi)
			return &l->v[i];
	return NULL;
}

/* Every expected method is listed with the same facts, and nothing more. */
static void check_expected(const char *rel)
{
	char ep[4096], line[4096], sig[2048], want[2048];
	struct oat_file *o;
	struct oat_dexset *ds;
	struct oat_method_list l;
	struct err e = { 0 };
	size_t rows = 0;
	FILE *f;

	expected_path(rel, ep, sizeof(ep));
	f = fopen(ep, "r");
	UT_ASSERT(f);
	UT_EQ_INT(oat_open(ut_testdata(rel), &o, &e), 0);
	UT_EQ_INT(oat_dexset_new(o, ut_testdata(rel), NULL, 0, &ds, &e), 0);
	if (oat_list_methods(o, ds, &l, &e))
		ut_fail(__FILE__, __LINE__, "%s: %s", rel, e.msg);
	while (fgets(line, sizeof(line), f)) {
		long long di, cdi, cmi, v;
		UT_ASSERT(jnum(line, "dex_index", &di) && jnum(line, "class_def_idx", &cdi) &&
			  jnum(line, "class_method_index", &cmi));
		const struct oat_method *m = find_method(&l, di, cdi, cmi);
		if (!m)
			ut_fail(__FILE__, __LINE__, "%s: missing %lld/%lld/%lld", rel, di, cdi, cmi);
		UT_ASSERT(m);
		UT_ASSERT(jnum(line, "code_offset", &v));
		UT_EQ_U64(m->code.code_offset, v);
		UT_ASSERT(jnum(line, "file_offset", &v));
		UT_EQ_U64(m->code.file_offset, v);
		UT_ASSERT(jnum(line, "code_size", &v));
		UT_EQ_U64(m->code.code_size, v);
		UT_EQ_INT(m->code.thumb, strstr(line, "\"thumb\": true") != NULL);
		if (jnum(line, "dex_method_idx", &v)) {
			UT_EQ_INT(m->method_idx, v);
			UT_ASSERT(jnum(line, "access_flags", &v));
			UT_EQ_INT(m->access_flags, v);
			const struct dex_file *d;
			UT_EQ_INT(oat_dexset_get(ds, m->dex_i, &d, &e), 0);
			UT_ASSERT(jstr(line, "signature", want, sizeof(want)));
			UT_ASSERT(dex_pretty_method(d, m->method_idx, sig, sizeof(sig)) > 0);
			UT_EQ_STR(sig, want);
		} else {
			UT_ASSERT(!m->has_dex);
		}
		rows++;
	}
	UT_ASSERT(rows > 0);
	if (rows != l.n)
		ut_fail(__FILE__, __LINE__, "%s: %zu expected, %zu listed", rel, rows, l.n);
	fclose(f);
	oat_method_list_free(&l);
	oat_dexset_free(ds);
	oat_close(o);
}

UT_TEST(oat_methods_match_expected_tables)
{
	for (size_t i = 0; i < TD_N_COMPILED; i++)
		check_expected(TD_COMPILED[i]);
}
