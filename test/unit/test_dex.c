#include "ut.h"

#include <errno.h>
#include <stdlib.h>

#include "common/arena.h"
#include "oat_testlib.h"
#include "formats/dex.h"
#include "resolve/java_sig.h"
#include "formats/vdex.h"
#include "formats/zip.h"

/* ---- zip ----------------------------------------------------------------- */

UT_TEST(zip_reads_stored_and_deflated_dex)
{
	struct zip_archive *z;
	struct zip_entry e;
	struct err er = { 0 };
	const uint8_t *data;
	size_t len;
	void *owned;

	UT_EQ_INT(zip_open(ut_testdata(TD_A13 "javax.obex.jar"), &z, &er), 0);
	UT_EQ_INT(zip_find(z, "classes.dex", &e, &er), 0);
	UT_EQ_INT(e.method, 0);
	UT_EQ_U64(e.crc32, 0x87227f22);   /* = the OatDexFile checksum of javax.obex.odex */
	UT_EQ_INT(zip_read(z, &e, 0, &data, &len, &owned, &er), 0);
	UT_ASSERT(owned == NULL);
	UT_EQ_INT(len, 1388);
	UT_ASSERT(!memcmp(data, "dex\n039", 8));
	UT_EQ_INT(zip_find(z, "classes2.dex", &e, &er), -ENOENT);
	zip_close(z);

	UT_EQ_INT(zip_open(ut_testdata(TD_A10 "TrustZoneAccessService.apk"), &z, &er), 0);
	UT_EQ_INT(zip_find(z, "classes.dex", &e, &er), 0);
	UT_EQ_INT(e.method, 8);
	UT_EQ_INT(zip_read(z, &e, 0, &data, &len, &owned, &er), 0);
	UT_ASSERT(owned != NULL);
	UT_EQ_INT(len, 33864);
	UT_ASSERT(!memcmp(data, "dex\n", 4));
	free(owned);
	UT_EQ_INT(zip_read(z, &e, 1000, &data, &len, &owned, &er), -EFBIG);
	zip_close(z);
}

UT_TEST(zip_rejects_damage_cleanly)
{
	size_t len;
	uint8_t *buf = td_copy(ut_testdata(TD_A10 "TrustZoneAccessService.apk"), &len);
	struct zip_archive *z;
	struct zip_entry e;
	struct err er = { 0 };
	const uint8_t *data;
	size_t n;
	void *owned;

	UT_ASSERT(buf);
	UT_EQ_INT(zip_open_mem("x.apk", buf, 10, &z, &er), -EINVAL);
	UT_CONTAINS(er.msg, "not a zip archive");
	UT_EQ_INT(zip_open_mem("x.apk", buf, len, &z, &er), 0);
	UT_EQ_INT(zip_find(z, "classes.dex", &e, &er), 0);
	/* flip a byte inside the deflated data: inflate or the CRC check fails */
	buf[e.local_off + 30 + e.name_len + 200] ^= 0x55;
	int rc = zip_read(z, &e, 0, &data, &n, &owned, &er);
	UT_EQ_INT(rc, -EINVAL);
	UT_ASSERT(strstr(er.msg, "CRC32") || strstr(er.msg, "corrupt deflate"));
	zip_close(z);
	/* every truncation point either fails or reads within bounds */
	for (size_t cut = 0; cut < len; cut += len / 61 + 1) {
		if (zip_open_mem("t.apk", buf, cut, &z, &er))
			continue;
		uint64_t cur = 0;
		while (zip_next(z, &cur, &e, &er) > 0)
			if (!zip_read(z, &e, 0, &data, &n, &owned, &er))
				free(owned);
		zip_close(z);
	}
	/* ZIP64 marker in the end record without the ZIP64 locator before it */
	uint8_t eocd[22] = { 0x50, 0x4b, 5, 6 };
	memset(eocd + 16, 0xff, 4);
	UT_EQ_INT(zip_open_mem("z64", eocd, sizeof(eocd), &z, &er), -EINVAL);
	UT_CONTAINS(er.msg, "expected a ZIP64 locator");
	free(buf);
}

/* ---- dex ----------------------------------------------------------------- */

/* Opens classes.dex of an archive; the archive stays open in *z. */
static struct dex_file *dex_from(const char *rel, struct zip_archive **z, void **owned)
{
	struct zip_entry e;
	struct err er = { 0 };
	const uint8_t *data;
	size_t len;
	struct dex_file *d = NULL;

	*owned = NULL;
	if (zip_open(ut_testdata(rel), z, &er) || zip_find(*z, "classes.dex", &e, &er) ||
	    zip_read(*z, &e, 0, &data, &len, owned, &er) ||
	    dex_open(rel, data, len, 0, &d, &er))
		return NULL;
	return d;
}

UT_TEST(dex_lookups_and_pretty_printing)
{
	struct zip_archive *z;
	void *owned;
	struct dex_file *d = dex_from(TD_A13 "com.android.location.provider.jar", &z, &owned);
	uint32_t cdi, t, s;
	struct dex_method m;
	char buf[512];
	const char *params[] = { "Ljava/util/List;" };

	UT_ASSERT(d);
	UT_EQ_INT(dex_find_class_def(d, "Lcom/android/location/provider/ActivityChangedEvent;",
				     &cdi), 0);
	UT_EQ_INT(cdi, 0);
	UT_EQ_INT(dex_find_class_def(d, "Ljava/util/List;", &cdi), -ENOENT);   /* referenced only */
	UT_EQ_INT(dex_find_type(d, "Ljava/util/List;", &t), 0);
	UT_EQ_INT(dex_find_string(d, "<init>", &s), 0);
	UT_EQ_STR(dex_string(d, s), "<init>");
	UT_EQ_INT(dex_find_string(d, "no such string at all", &s), -ENOENT);
	UT_EQ_INT(dex_find_method(d, 0, "<init>", "V", params, 1, &m), 0);
	UT_EQ_INT(m.method_idx, 72);
	UT_EQ_INT(m.index_in_class, 0);
	UT_EQ_INT(m.access_flags, DEX_ACC_PUBLIC | DEX_ACC_CONSTRUCTOR);
	UT_ASSERT(dex_pretty_method(d, 72, buf, sizeof(buf)) > 0);
	UT_EQ_STR(buf, "void com.android.location.provider.ActivityChangedEvent.<init>(java.util.List)");
	/* snprintf semantics: the needed length, a truncated NUL-terminated copy */
	UT_EQ_INT(dex_pretty_method(d, 72, buf, 10), 78);
	UT_EQ_INT(strlen(buf), 9);
	UT_EQ_INT(dex_pretty_descriptor("[[Ljava/lang/String;", buf, sizeof(buf)), 20);
	UT_EQ_STR(buf, "java.lang.String[][]");
	dex_pretty_descriptor("[J", buf, sizeof(buf));
	UT_EQ_STR(buf, "long[]");
	dex_close(d);
	zip_close(z);
}

/* Runs Debian's dexdump on a dex and checks, for every method it lists,
 * that the signature resolves to the same position and flags here. */
struct dd_state {
	char cls[512], name[512], type[1024];
	int is_virtual, pos, n_direct;
	unsigned checked;
};

static void dd_check(const struct dex_file *d, struct dd_state *st, unsigned long access)
{
	struct arena *a = arena_new();
	char ret[512], *params[256];
	size_t n = 0;
	uint32_t cdi;
	struct dex_method m;
	char *p = st->type + 1, *close = strchr(st->type, ')');

	/* "(I[Ljava/lang/String;)V" -> params, ret */
	while (close && p < close && n < 256) {
		char *q = p;
		while (*q == '[')
			q++;
		q = *q == 'L' ? strchr(q, ';') + 1 : q + 1;
		params[n++] = arena_strndup(a, p, (size_t)(q - p));
		p = q;
	}
	snprintf(ret, sizeof(ret), "%s", close ? close + 1 : "");
	UT_EQ_INT(dex_find_class_def(d, st->cls, &cdi), 0);
	if (dex_find_method(d, cdi, st->name, ret, (const char *const *)params, n, &m))
		ut_fail(__FILE__, __LINE__, "%s %s %s not found", st->cls, st->name, st->type);
	UT_EQ_INT(m.index_in_class, st->is_virtual ? st->n_direct + st->pos : st->pos);
	UT_EQ_INT(m.access_flags, access);
	struct dex_method_id mid;
	UT_EQ_INT(dex_method_id_at(d, m.method_idx, &mid), 0);
	UT_EQ_STR(dex_type_descriptor(d, mid.class_idx), st->cls);
	st->checked++;
	arena_free(a);
}

static unsigned compare_with_dexdump(const char *rel)
{
	struct zip_archive *z;
	void *owned;
	struct dex_file *d = dex_from(rel, &z, &owned);
	char cmd[4096], line[4096];
	const char *dexpath = ut_tmpfile("dd.dex");
	struct dd_state st = { 0 };
	FILE *f;
	size_t len;
	const uint8_t *data;
	struct zip_entry e;
	struct err er;

	if (!d)
		return 0;
	zip_find(z, "classes.dex", &e, &er);
	zip_read(z, &e, 0, &data, &len, &owned, &er);
	f = fopen(dexpath, "wb");
	fwrite(data, 1, len, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "/usr/bin/dexdump '%s' 2>/dev/null", dexpath);
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "  Class descriptor  : '%511[^']'", st.cls) == 1) {
			st.n_direct = 0;
		} else if (!strcmp(line, "  Direct methods    -")) {
			st.is_virtual = 0, st.pos = -1;
		} else if (!strcmp(line, "  Virtual methods   -")) {
			st.is_virtual = 1, st.pos = -1;
		} else if (!strncmp(line, "    #", 5) && strstr(line, ": (in ")) {
			st.pos = atoi(line + 5);
			if (!st.is_virtual)
				st.n_direct = st.pos + 1;
		} else if (sscanf(line, "      name          : '%511[^']'", st.name) == 1) {
		} else if (sscanf(line, "      type          : '%1023[^']'", st.type) == 1) {
		} else if (!strncmp(line, "      access        : 0x", 24) && st.type[0] == '(') {
			dd_check(d, &st, strtoul(line + 22, NULL, 16));
			st.type[0] = 0;
		} else if (!strncmp(line, "  Static fields", 15) ||
			   !strncmp(line, "  Instance fields", 17)) {
			st.type[0] = 0;
		}
	}
	if (f)
		pclose(f);
	dex_close(d);
	zip_close(z);
	return st.checked;
}

UT_TEST(dex_method_positions_agree_with_dexdump)
{
	/* v183, v225 and v244 odex files' jars (and the v170 one) */
	UT_ASSERT(compare_with_dexdump(TD_A11X "com.android.location.provider.jar") > 50);
	UT_ASSERT(compare_with_dexdump(TD_A13 "org.apache.http.legacy.jar") > 1000);
	UT_ASSERT(compare_with_dexdump(TD_A15 "com.android.media.remotedisplay.jar") > 10);
	UT_ASSERT(compare_with_dexdump("oat/android-10/arm64/google_coral_QD1A.190821.011.C4/"
				       "com.google.android.camera.experimental2019.jar") >= 2);
}

/* ---- vdex ---------------------------------------------------------------- */

UT_TEST(vdex_021_compact_dex_section)
{
	struct vdex_file *v;
	struct dex_file *d;
	struct err er = { 0 };
	uint64_t cur = 0;
	uint32_t off, cdi;

	UT_EQ_INT(vdex_open(ut_testdata(TD_A10 "TrustZoneAccessService.vdex"), &v, &er), 0);
	UT_EQ_INT(vdex_version(v), 21);
	UT_EQ_INT(vdex_dex_count(v), 1);
	UT_EQ_U64(vdex_checksum(v, 0), 0x6ac18381);
	UT_ASSERT(vdex_has_dex_section(v));
	UT_EQ_INT(vdex_next_dex(v, &cur, &off, &er), 1);
	UT_EQ_INT(off, 48);
	UT_EQ_INT(vdex_next_dex(v, &cur, &off, &er), 0);
	UT_EQ_INT(vdex_open_dex(v, 48, &d, &er), 0);
	UT_ASSERT(dex_is_compact(d));
	UT_EQ_STR(dex_magic(d), "cdex001");
	UT_ASSERT(dex_class_def_count(d) == 54);
	/* data offsets resolve against the shared data after the dex section */
	struct dex_class_def cd;
	UT_EQ_INT(dex_class_def_at(d, 0, &cd), 0);
	UT_ASSERT(dex_type_descriptor(d, cd.class_idx) != NULL);
	UT_EQ_INT(dex_find_class_def(d, dex_type_descriptor(d, cd.class_idx), &cdi), 0);
	UT_EQ_INT(cdi, 0);
	dex_close(d);
	UT_EQ_INT(vdex_open_dex(v, 44, &d, &er), -EINVAL);
	vdex_close(v);

	UT_EQ_INT(vdex_open(ut_testdata(TD_A10 "CneApp.vdex"), &v, &er), 0);
	UT_ASSERT(!vdex_has_dex_section(v));
	UT_EQ_INT(vdex_open_dex(v, 48, &d, &er), -ENOENT);
	UT_CONTAINS(er.msg, "holds no dex files");
	vdex_close(v);
}

/* A 027 vdex with a dex section, built around a real dex: the layout of
 * Android 12+ files that embed their dex (none in the test data do). */
UT_TEST(vdex_027_with_dex_section)
{
	size_t len;
	uint8_t *jar = td_copy(ut_testdata(TD_A13 "javax.obex.jar"), &len);
	struct zip_archive *z;
	struct zip_entry e;
	struct err er = { 0 };
	const uint8_t *dex;
	size_t dlen;
	void *owned;
	uint8_t v[4096] = "vdex027";
	struct vdex_file *vf;
	struct dex_file *d;
	uint32_t cdi;

	UT_ASSERT(jar);
	UT_EQ_INT(zip_open_mem("j", jar, len, &z, &er), 0);
	UT_EQ_INT(zip_find(z, "classes.dex", &e, &er), 0);
	UT_EQ_INT(zip_read(z, &e, 0, &dex, &dlen, &owned, &er), 0);
	uint32_t secs[] = { 4, 0, 60, 4, 1, 64, (uint32_t)dlen, 2, 0, 0, 3, 0, 0 };
	memcpy(v + 8, secs, sizeof(secs));
	memcpy(v + 60, &e.crc32, 4);
	memcpy(v + 64, dex, dlen);
	UT_EQ_INT(vdex_open_mem("synthetic.vdex", v, 64 + dlen, &vf, &er), 0);
	UT_EQ_INT(vdex_version(vf), 27);
	UT_EQ_U64(vdex_checksum(vf, 0), e.crc32);
	UT_EQ_INT(vdex_open_dex(vf, 64, &d, &er), 0);
	UT_EQ_INT(dex_find_class_def(d, "Ljavax/obex/ObexPacket;", &cdi), 0);
	dex_close(d);
	vdex_close(vf);
	/* a section running past the end */
	UT_EQ_INT(vdex_open_mem("short.vdex", v, 100, &vf, &er), -EINVAL);
	UT_CONTAINS(er.msg, "runs past the end");
	memcpy(v + 4, "026", 3);
	UT_EQ_INT(vdex_open_mem("old.vdex", v, 64 + dlen, &vf, &er), -ENOTSUP);
	zip_close(z);
	free(jar);
}

UT_TEST(dex_survives_truncation_and_corruption)
{
	struct zip_archive *z;
	void *owned;
	struct dex_file *d0 = dex_from(TD_A13 "javax.obex.jar", &z, &owned);
	size_t len = dex_file_size(d0);
	uint8_t *buf = malloc(len);
	struct err er;
	uint32_t seed = 7;

	UT_ASSERT(buf);
	dex_close(d0);
	struct zip_entry e;
	const uint8_t *data;
	zip_find(z, "classes.dex", &e, &er);
	zip_read(z, &e, 0, &data, &len, &owned, &er);
	for (int round = 0; round < 400; round++) {
		struct dex_file *d;
		size_t n = round < 100 ? len * (size_t)round / 100 : len;
		memcpy(buf, data, len);
		for (int k = 0; round >= 100 && k < 4; k++) {
			seed = seed * 1103515245u + 12345u;
			buf[(seed >> 8) % len] ^= (uint8_t)(seed >> 16);
		}
		if (dex_open("fuzzed", buf, n, 0, &d, &er))
			continue;
		for (uint32_t c = 0; c < dex_class_def_count(d); c++) {
			struct dex_class_iter it;
			struct dex_method m;
			char sig[256];
			if (dex_class_iter_init(d, c, &it, &er))
				continue;
			while (dex_class_iter_next(&it, &m, &er) > 0)
				dex_pretty_method(d, m.method_idx, sig, sizeof(sig));
		}
		uint32_t cdi;
		dex_find_class_def(d, "Ljavax/obex/ObexPacket;", &cdi);
		dex_close(d);
	}
	free(buf);
	zip_close(z);
}
