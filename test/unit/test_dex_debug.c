/* test_dex_debug.c — dex line tables against Debian's dexdump (ART's), whose
 * "positions" table lists the same (dex pc, line) entries: every method with
 * code of classes.dex of several real jars/apks (Android 10-15), in class_def
 * and class_data order, plus each class's source file; a compact dex (vdex)
 * against the standard dex of the same apk; and damaged programs. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/dex.h"
#include "formats/dex_debug.h"
#include "formats/oat.h"
#include "formats/oat_dexfile.h"
#include "formats/zip.h"
#include "ut.h"

struct text {
	char *s;
	size_t n, cap;
};

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct text *t, const char *fmt, ...)
{
	va_list ap, ap2;
	int k;

	va_start(ap, fmt);
	va_copy(ap2, ap);
	k = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (k >= 0 && t->n + (size_t)k + 1 > t->cap) {
		t->cap = (t->n + (size_t)k + 1) * 2;
		t->s = realloc(t->s, t->cap);
	}
	if (k >= 0) {
		vsnprintf(t->s + t->n, (size_t)k + 1, fmt, ap2);
		t->n += (size_t)k;
	}
	va_end(ap2);
}

/* "(params)ret" of a method id. */
static void method_type(const struct dex_file *d, uint32_t midx, char *buf, size_t size)
{
	struct dex_method_id id;
	struct dex_proto p;
	size_t o = 0;

	buf[0] = 0;
	if (dex_method_id_at(d, midx, &id) || dex_proto_at(d, id.proto_idx, &p))
		return;
	o += (size_t)snprintf(buf + o, size - o, "(");
	for (uint32_t i = 0; i < p.n_params && o < size; i++)
		o += (size_t)snprintf(buf + o, size - o, "%s",
				      dex_type_descriptor(d, dex_proto_param(d, &p, i)));
	if (o < size)
		snprintf(buf + o, size - o, ")%s", dex_type_descriptor(d, p.return_type_idx));
}

/* Our listing, in the format the dexdump parser below produces. */
static unsigned long ours(const struct dex_file *d, struct text *t)
{
	unsigned long entries = 0;

	for (uint32_t cdi = 0; cdi < dex_class_def_count(d); cdi++) {
		struct dex_class_def cd;
		struct dex_class_iter it;
		struct dex_method m;
		struct err e = { 0 };
		const char *sf = dex_class_source_file(d, cdi);
		dex_class_def_at(d, cdi, &cd);
		add(t, "class %s source %s\n", dex_type_descriptor(d, cd.class_idx), sf ? sf : "-");
		if (dex_class_iter_init(d, cdi, &it, &e))
			continue;
		while (dex_class_iter_next(&it, &m, &e) == 1) {
			struct dex_method_id id;
			struct dex_position *v;
			size_t n;
			char type[1024];
			if (!m.code_off)
				continue;
			dex_method_id_at(d, m.method_idx, &id);
			method_type(d, m.method_idx, type, sizeof(type));
			add(t, " %s %s\n", dex_string(d, id.name_idx), type);
			int rc = dex_method_positions(d, &m, &v, &n, &e);
			if (rc && rc != -ENOENT)
				add(t, "  error %s\n", e.msg);
			for (size_t i = 0; i < n; i++, entries++)
				add(t, "  0x%04x line=%u\n", v[i].dex_pc, v[i].line);
			free(v);
		}
	}
	return entries;
}

static void dexdump_listing(const char *dexpath, struct text *t)
{
	char cmd[1200], line[4096], cls[1024] = "", name[1024] = "", type[1024] = "";
	bool in_pos = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "/usr/bin/dexdump '%s' 2>/dev/null", dexpath);
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char sf[1024];
		long idx;
		unsigned pc, ln;
		line[strcspn(line, "\n")] = 0;
		if (in_pos && sscanf(line, "        0x%x line=%u", &pc, &ln) == 2) {
			add(t, "  0x%04x line=%u\n", pc, ln);
			continue;
		}
		in_pos = false;
		if (sscanf(line, "  Class descriptor  : '%1023[^']'", cls) == 1) {
		} else if (sscanf(line, "  source_file_idx   : %ld (%1023[^)])", &idx, sf) == 2) {
			/* printed after the class's methods: patched in below */
			add(t, "@source %s\n", idx < 0 ? "-" : sf);
		} else if (sscanf(line, "      name          : '%1023[^']'", name) == 1) {
		} else if (sscanf(line, "      type          : '%1023[^']'", type) == 1) {
		} else if (!strcmp(line, "      positions     : ")) {
			add(t, " %s %s\n", name, type);
			in_pos = true;
		} else if (!strncmp(line, "Class #", 7)) {
			add(t, "@class\n");
		}
		if (!strncmp(line, "  Class descriptor", 18))
			add(t, "@name %s\n", cls);
	}
	if (f)
		pclose(f);
}

/* dexdump prints a class's source file after its methods; rebuild our order. */
static void normalize(struct text *in, struct text *out)
{
	char *save = NULL, *l;
	struct text body = { 0 };
	char name[1100] = "";

	for (l = strtok_r(in->s, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(l, "@class", 6)) {
			body.n = 0;
			if (body.s)
				body.s[0] = 0;
		} else if (!strncmp(l, "@name ", 6)) {
			snprintf(name, sizeof(name), "%s", l + 6);
		} else if (!strncmp(l, "@source ", 8)) {
			add(out, "class %s source %s\n%s", name, l + 8, body.s ? body.s : "");
			body.n = 0;
			if (body.s)
				body.s[0] = 0;
		} else {
			add(&body, "%s\n", l);
		}
	}
	free(body.s);
}

static void first_diff(const char *a, const char *b, const char *what)
{
	size_t i = 0, ls = 0;

	while (a[i] && a[i] == b[i]) {
		if (a[i] == '\n')
			ls = i + 1;
		i++;
	}
	ut_fail(__FILE__, __LINE__, "%s: differs at \"%.120s\" vs \"%.120s\"", what, a + ls,
		b + ls);
}

static void compare_jar(const char *rel, unsigned long min_entries)
{
	struct zip_archive *z = NULL;
	struct zip_entry ze;
	struct err e = { 0 };
	const uint8_t *data;
	size_t len;
	void *owned = NULL;
	struct dex_file *d = NULL;
	struct text a = { 0 }, raw = { 0 }, b = { 0 };
	char dexpath[1024];
	FILE *f;

	snprintf(dexpath, sizeof(dexpath), "%s", ut_tmpfile("dd-debug.dex"));
	UT_ASSERT(!zip_open(ut_testdata(rel), &z, &e));
	UT_ASSERT(!zip_find(z, "classes.dex", &ze, &e));
	UT_ASSERT(!zip_read(z, &ze, 0, &data, &len, &owned, &e));
	UT_ASSERT((f = fopen(dexpath, "wb")) != NULL);
	fwrite(data, 1, len, f);
	fclose(f);
	UT_ASSERT(!dex_open(rel, data, len, 0, &d, &e));
	unsigned long n = ours(d, &a);
	dexdump_listing(dexpath, &raw);
	UT_ASSERT(raw.s);
	normalize(&raw, &b);
	fprintf(stderr, "    %s: %lu position entries\n", rel, n);
	if (!a.s || !b.s || strcmp(a.s, b.s))
		first_diff(a.s ? a.s : "", b.s ? b.s : "", rel);
	UT_ASSERT(n >= min_entries);
	free(a.s), free(raw.s), free(b.s);
	dex_close(d);
	free(owned);
	zip_close(z);
}

UT_TEST(dex_debug_matches_dexdump)
{
	compare_jar("oat/android-11/x86_64/aosp_x86_64_RP1A.201105.002_eng/ext.jar", 5000);
	compare_jar("oat/android-14/arm64/sony_pdx245_sm8650_main-branch/CneApp.apk", 5000);
	compare_jar("oat/android-15/arm64/sony_pdx245_XQ-EC72_69.1.A.2.78/com.qti.location.sdk.jar",
		    3000);
	compare_jar("oat/android-10/arm64/realme_RMX2051CN_qssi_QKQ1.191117.002/RfToolkit.apk",
		    2000);
	compare_jar("oat/android-13/arm64/realme_ice_ossi_TP1A.220905.001/javax.obex.jar", 10);
}

/* The compact dex inside an Android 10 vdex against the apk's standard dex. */
UT_TEST(dex_debug_compact_dex_matches_standard)
{
	const char *dir = "oat/android-10/arm64/google_coral_QD1A.190821.011.C4/";
	char odex[1024], apk[1024];
	struct oat_file *o = NULL;
	struct oat_dexset *ds = NULL;
	const struct dex_file *cd = NULL;
	struct dex_file *sd = NULL;
	struct zip_archive *z = NULL;
	struct zip_entry ze;
	const uint8_t *data;
	size_t len;
	void *owned = NULL;
	struct err e = { 0 };
	struct text a = { 0 }, b = { 0 };

	snprintf(odex, sizeof(odex), "%s", ut_testdata(dir));
	snprintf(apk, sizeof(apk), "%sTrustZoneAccessService.apk", odex);
	strcat(odex, "TrustZoneAccessService.odex");
	UT_ASSERT(!oat_open(odex, &o, &e));
	UT_ASSERT(!oat_dexset_new(o, odex, NULL, 0, &ds, &e));
	UT_ASSERT(!oat_dexset_get(ds, 0, &cd, &e));
	UT_ASSERT(dex_is_compact(cd));
	UT_ASSERT(!zip_open(apk, &z, &e));
	UT_ASSERT(!zip_find(z, "classes.dex", &ze, &e));
	UT_ASSERT(!zip_read(z, &ze, 0, &data, &len, &owned, &e));
	UT_ASSERT(!dex_open("apk", data, len, 0, &sd, &e));
	ours(cd, &a);
	ours(sd, &b);
	UT_ASSERT(a.s && b.s);
	if (strcmp(a.s, b.s))
		first_diff(a.s, b.s, "cdex vs dex");
	free(a.s), free(b.s);
	dex_close(sd);
	free(owned);
	zip_close(z);
	oat_dexset_free(ds);
	oat_close(o);
}

/* A hand-made dex-like buffer is not needed: damage the real ext.jar dex's
 * line programs and check every method still answers 0 or a clean error. */
UT_TEST(dex_debug_damaged_programs_are_safe)
{
	struct zip_archive *z = NULL;
	struct zip_entry ze;
	struct err e = { 0 };
	const uint8_t *data;
	size_t len;
	void *owned = NULL;

	UT_ASSERT(!zip_open(ut_testdata("oat/android-13/arm64/realme_ice_ossi_TP1A.220905.001/"
					"javax.obex.jar"), &z, &e));
	UT_ASSERT(!zip_find(z, "classes.dex", &ze, &e));
	UT_ASSERT(!zip_read(z, &ze, 0, &data, &len, &owned, &e));
	uint8_t *copy = malloc(len);
	UT_ASSERT(copy);
	for (unsigned round = 0; round < 200; round++) {
		struct dex_file *d = NULL;
		memcpy(copy, data, len);
		srand(round);
		for (int k = 0; k < 4; k++)
			copy[len / 3 + (size_t)rand() % (len - len / 3)] = (uint8_t)rand();
		if (dex_open("dmg", copy, len, 0, &d, &e))
			continue;
		struct text t = { 0 };
		ours(d, &t);
		free(t.s);
		dex_close(d);
	}
	free(copy);
	free(owned);
	zip_close(z);
}
