#include "ut.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>

#include "oat_testlib.h"
#include "formats/dex.h"
#include "formats/oat.h"
#include "formats/oat_code.h"
#include "formats/oat_dexfile.h"
#include "formats/oat_methods.h"
#include "resolve/oat_lookup.h"
#include "resolve/java_sig.h"
#include "common/arena.h"
#include "formats/zip.h"

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
			ut_fail(__FILE__, __LINE__, "%s: missing %lld/%lld/%lld", rel, di, cdi,
				cmi);
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

/* Open, list and look up over a damaged copy: a clean error or a result,
 * never a crash or an out-of-bounds read (ASan). */
static void exercise(const char *rel, const uint8_t *buf, size_t len, const struct java_sig *sig)
{
	struct oat_file *o;
	struct oat_dexset *ds;
	struct oat_method_list l;
	struct oat_lookup_result lr;
	struct err e = { 0 };

	if (oat_open_mem(rel, buf, len, &o, &e)) {
		UT_ASSERT(e.msg[0] && !strchr(e.msg, '\n'));
		return;
	}
	if (!oat_dexset_new(o, ut_testdata(rel), NULL, 0, &ds, &e)) {
		if (!oat_list_methods(o, ds, &l, &e))
			oat_method_list_free(&l);
		else
			UT_ASSERT(e.msg[0] && !strchr(e.msg, '\n'));
		oat_lookup_method(o, ds, sig, &lr, &e);
		oat_dexset_free(ds);
	}
	oat_close(o);
}

UT_TEST(oat_survives_truncation_and_corruption)
{
	static const char *const files[][2] = {
		{ TD_A10 "CACertService.odex",
		  "int vendor.qti.hardware.cacert.server.ModemInterface.nInitializeAuthClient()" },
		{ TD_A11X86 "com.android.location.provider.odex",
		  "void com.android.location.provider.ActivityChangedEvent.<init>(java.util.List)" },
		{ TD_A13 "com.android.location.provider.odex",
		  "void com.android.location.provider.ActivityChangedEvent.<init>(java.util.List)" },
		{ TD_A15 "apex@com.android.media@javalib@service-media-s.jar@classes.odex",
		  "void a.B.c()" },
	};
	struct arena *a = arena_new();

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		struct java_sig sig;
		struct err e;
		size_t len;
		uint8_t *orig = td_copy(ut_testdata(files[f][0]), &len), *buf = malloc(len);
		uint32_t seed = 99;
		UT_ASSERT(orig && buf);
		UT_EQ_INT(java_sig_parse(files[f][1], a, &sig, &e), 0);
		for (size_t cut = 0; cut < len; cut += len / 47 + 1) {
			uint8_t *t = malloc(cut ? cut : 1);
			memcpy(t, orig, cut);
			exercise(files[f][0], t, cut, &sig);
			free(t);
		}
		for (int round = 0; round < 60; round++) {
			memcpy(buf, orig, len);
			for (int k = 0; k < 6; k++) {
				seed = seed * 1103515245u + 12345u;
				/* mostly the oat header, records and class tables */
				size_t span = k < 4 ? (len < 0x3000 ? len : 0x3000) : len;
				buf[(seed >> 8) % span] ^= (uint8_t)(1u << (seed % 8));
			}
			exercise(files[f][0], buf, len, &sig);
		}
		free(buf);
		free(orig);
	}
	arena_free(a);
}

static int by_start(const void *a, const void *b)
{
	const struct oat_method *x = a, *y = b;
	if (x->code.file_offset != y->code.file_offset)
		return x->code.file_offset < y->code.file_offset ? -1 : 1;
	return 0;
}

/* Every file: compiled code lies inside an executable PT_LOAD's file range,
 * ranges never overlap except exact duplicates, and (v194+) each OatClass
 * counts as many methods as its class_data. */
UT_TEST(oat_code_ranges_and_class_counts_are_consistent)
{
	for (size_t i = 0; i < TD_N_OATS; i++) {
		const char *path = ut_testdata(TD_ALL_OATS[i]);
		struct oat_file *o;
		struct oat_dexset *ds;
		struct oat_method_list l;
		struct err e = { 0 };
		const struct elf_segment *segs;
		size_t nseg;

		UT_EQ_INT(oat_open(path, &o, &e), 0);
		UT_EQ_INT(oat_dexset_new(o, path, NULL, 0, &ds, &e), 0);
		if (oat_list_methods(o, ds, &l, &e))
			ut_fail(__FILE__, __LINE__, "%s: %s", TD_ALL_OATS[i], e.msg);
		nseg = elf_load_segments(oat_elf(o), &segs);
		for (size_t k = 0; k < l.n; k++) {
			const struct oat_code *c = &l.v[k].code;
			bool inside = false;
			for (size_t s = 0; s < nseg; s++)
				if ((segs[s].flags & PF_X) && c->file_offset >= segs[s].offset &&
				    c->file_offset + c->code_size <=
					    segs[s].offset + segs[s].filesz)
					inside = true;
			UT_ASSERT(inside);
		}
		if (l.n)
			qsort(l.v, l.n, sizeof(*l.v), by_start);
		for (size_t k = 1; k < l.n; k++) {
			const struct oat_code *a = &l.v[k - 1].code, *b = &l.v[k].code;
			UT_ASSERT(a->file_offset == b->file_offset ||
				  a->file_offset + a->code_size <= b->file_offset);
			if (a->file_offset == b->file_offset)
				UT_EQ_INT(a->code_size, b->code_size);
		}
		for (uint32_t di = 0; di < oat_dex_count(o) && oat_info(o)->version >= 194; di++) {
			const struct dex_file *d;
			if (oat_dexset_get(ds, di, &d, &e))
				continue;
			for (uint32_t c = 0; c < dex_class_def_count(d); c++) {
				struct dex_class_iter it;
				struct oat_class oc;
				UT_EQ_INT(dex_class_iter_init(d, c, &it, &e), 0);
				UT_EQ_INT(oat_class_get(o, di, c, OAT_UNKNOWN_COUNT, &oc, &e), 0);
				if (oc.type != OAT_CLASS_NONE_COMPILED)
					UT_EQ_INT(oc.num_methods, it.n_direct + it.n_virtual);
			}
		}
		oat_method_list_free(&l);
		oat_dexset_free(ds);
		oat_close(o);
	}
}

/* A stored zip with one entry, built by hand (the multidex test needs an
 * archive whose entry is classes2.dex). */
static size_t make_zip(uint8_t *out, const char *name, const uint8_t *data, uint32_t len,
		       uint32_t crc)
{
	uint16_t n = (uint16_t)strlen(name);
	size_t p = 0, cd;
	uint8_t lh[30] = { 0x50, 0x4b, 3, 4, 10 }, ch[46] = { 0x50, 0x4b, 1, 2, 10, 0, 10 };
	uint8_t eo[22] = { 0x50, 0x4b, 5, 6 };

	memcpy(lh + 14, &crc, 4), memcpy(lh + 18, &len, 4), memcpy(lh + 22, &len, 4);
	memcpy(lh + 26, &n, 2);
	memcpy(out + p, lh, 30), p += 30;
	memcpy(out + p, name, n), p += n;
	memcpy(out + p, data, len), p += len;
	cd = p;
	memcpy(ch + 16, &crc, 4), memcpy(ch + 20, &len, 4), memcpy(ch + 24, &len, 4);
	memcpy(ch + 28, &n, 2);
	memcpy(out + p, ch, 46), p += 46;
	memcpy(out + p, name, n), p += n;
	uint16_t one = 1;
	uint32_t cds = (uint32_t)(p - cd), cdo = (uint32_t)cd;
	memcpy(eo + 8, &one, 2), memcpy(eo + 10, &one, 2);
	memcpy(eo + 12, &cds, 4), memcpy(eo + 16, &cdo, 4);
	memcpy(out + p, eo, 22), p += 22;
	return p;
}

UT_TEST(oat_finds_multidex_entries)
{
	const char *loc = "/system/framework/javax.obex.jar";
	const char *multi = "/system/framework/x!classes2.dex";   /* same length */
	size_t len, jlen;
	uint8_t *odex = td_copy(ut_testdata(TD_A13 "javax.obex.odex"), &len);
	uint8_t *jar = td_copy(ut_testdata(TD_A13 "javax.obex.jar"), &jlen);
	uint8_t zip[4096];
	char opath[4096], zpath[4096];
	FILE *f;

	UT_ASSERT(odex && jar);
	uint8_t *at = memmem(odex, len, loc, strlen(loc));
	UT_ASSERT(at);
	memcpy(at, multi, strlen(multi));
	snprintf(opath, sizeof(opath), "%s", ut_tmpfile("multi.odex"));
	snprintf(zpath, sizeof(zpath), "%s", ut_tmpfile("x"));
	f = fopen(opath, "wb");
	fwrite(odex, 1, len, f);
	fclose(f);
	/* the jar's stored classes.dex, renamed classes2.dex (same CRC) */
	struct zip_archive *z;
	struct zip_entry e;
	struct err er = { 0 };
	const uint8_t *dex;
	size_t dlen;
	void *owned;
	UT_EQ_INT(zip_open_mem("j", jar, jlen, &z, &er), 0);
	UT_EQ_INT(zip_find(z, "classes.dex", &e, &er), 0);
	UT_EQ_INT(zip_read(z, &e, 0, &dex, &dlen, &owned, &er), 0);
	size_t zl = make_zip(zip, "classes2.dex", dex, (uint32_t)dlen, e.crc32);
	zip_close(z);
	f = fopen(zpath, "wb");
	fwrite(zip, 1, zl, f);
	fclose(f);

	struct oat_file *o;
	struct oat_dexset *ds;
	const struct dex_file *d;
	UT_EQ_INT(oat_open(opath, &o, &er), 0);
	UT_EQ_STR(oat_dex_at(o, 0)->location, multi);
	UT_EQ_INT(oat_dexset_new(o, opath, NULL, 0, &ds, &er), 0);
	UT_EQ_INT(oat_dexset_get(ds, 0, &d, &er), 0);
	UT_CONTAINS(oat_dexset_source(ds, 0), "/x!classes2.dex");
	oat_dexset_free(ds);
	oat_close(o);
	free(odex);
	free(jar);
}
