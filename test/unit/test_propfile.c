/* The two property-store parsers on fixture bytes, damaged in the ways a
 * hostile or half-written file could be. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/mapfile.h"
#include "common/bytes.h"
#include "sys/propfile.h"
#include "sys_testutil.h"
#include "ut.h"

#define HDR PROP_AREA_HEADER_SIZE

struct blob {
	uint8_t *b;
	size_t len;
};

static bool load(const char *rel, struct blob *out)
{
	struct mapped_file f;
	struct err e;

	if (mapfile_open(st_fixture(rel), 0, 0, &f, &e) < 0)
		return false;
	out->b = malloc(f.size);
	out->len = f.size;
	if (out->b)
		memcpy(out->b, f.data, f.size);
	mapfile_close(&f);
	return out->b != NULL;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* Data offset of the first-level trie node "ro" in a build_prop area. */
static uint32_t ro_node(const struct blob *a)
{
	return ld32(a->b + HDR + 16);
}

static int get(const struct blob *a, const char *name, char *v, size_t size, struct err *e)
{
	return prop_area_get(a->b, a->len, "area", name, v, size, e);
}

UT_TEST(propfile_area_rejects_short_and_foreign_files)
{
	uint8_t junk[HDR] = { 0 };
	char v[PROP_VALUE_MAX];
	struct err e;

	UT_EQ_INT(prop_area_get(junk, 12, "x", "a", v, sizeof(v), &e), -EBADMSG);
	UT_CONTAINS(e.msg, "too short for a property area");
	UT_EQ_INT(prop_area_get(junk, sizeof(junk), "x", "a", v, sizeof(v), &e), -EBADMSG);
	UT_CONTAINS(e.msg, "x: not a property area");
}

UT_TEST(propfile_area_detects_cyclic_trie)
{
	struct blob a;
	char v[PROP_VALUE_MAX];
	struct err e;

	UT_ASSERT(load("props/android14/u:object_r:build_prop:s0", &a));
	uint32_t ro = ro_node(&a);
	put32(a.b + HDR + ro + 8, ro);    /* left -> itself */
	put32(a.b + HDR + ro + 12, ro);   /* right -> itself */
	UT_EQ_INT(get(&a, "zz.x", v, sizeof(v), &e), -EBADMSG);
	UT_CONTAINS(e.msg, "cycle");
	free(a.b);
}

UT_TEST(propfile_area_checks_prop_info_records)
{
	struct blob a;
	char v[PROP_VALUE_MAX];
	struct err e;
	uint32_t info;

	UT_ASSERT(load("props/android14/u:object_r:build_prop:s0", &a));
	UT_EQ_INT(get(&a, "ro.build.type", v, sizeof(v), &e), 0);
	/* Find the record through its name, then damage it three ways. */
	uint8_t *name = memmem(a.b, a.len, "ro.build.type", 14);
	UT_ASSERT(name);
	info = (uint32_t)(name - a.b - HDR - 96);

	uint32_t serial = ld32(a.b + HDR + info);
	put32(a.b + HDR + info, 92u << 24);
	UT_EQ_INT(get(&a, "ro.build.type", v, sizeof(v), &e), -EBADMSG);
	UT_CONTAINS(e.msg, "value length in the serial exceeds 91");

	put32(a.b + HDR + info, serial | (1u << 16));     /* claims to be long */
	put32(a.b + HDR + info + 60, 0x7fffffff);
	UT_EQ_INT(get(&a, "ro.build.type", v, sizeof(v), &e), -EBADMSG);
	UT_CONTAINS(e.msg, "long value offset out of bounds");

	put32(a.b + HDR + info, serial);
	name[3] = 'X';
	UT_EQ_INT(get(&a, "ro.build.type", v, sizeof(v), &e), -EBADMSG);
	UT_CONTAINS(e.msg, "does not carry the name");
	free(a.b);
}

UT_TEST(propfile_area_long_value_must_be_terminated)
{
	struct blob a;
	char v[256];
	struct err e;

	UT_ASSERT(load("props/android14/u:object_r:vendor_default_prop:s0", &a));
	UT_EQ_INT(get(&a, "ro.product.cpu.abilist", v, sizeof(v), &e), 0);
	UT_EQ_INT(strlen(v), 143);
	/* Cut the file right inside the long value. */
	uint8_t *val = memmem(a.b, a.len, v, strlen(v));
	UT_ASSERT(val);
	a.len = (size_t)(val - a.b) + 10;
	UT_EQ_INT(get(&a, "ro.product.cpu.abilist", v, sizeof(v), &e), -EBADMSG);
	UT_CONTAINS(e.msg, "long value runs past the end");
	free(a.b);
}

static int ctx(const struct blob *p, const char *name, const char **c, struct err *e)
{
	return prop_info_context(p->b, p->len, "property_info", name, c, e);
}

UT_TEST(propfile_info_maps_names_to_contexts)
{
	struct blob p;
	const char *c;
	struct err e;

	UT_ASSERT(load("props/android14/property_info", &p));
	UT_EQ_INT(ctx(&p, "ro.build.type", &c, &e), 0);
	UT_EQ_STR(c, "u:object_r:build_prop:s0");
	UT_EQ_INT(ctx(&p, "ro.debuggable", &c, &e), 0);
	UT_EQ_STR(c, "u:object_r:userdebug_or_eng_prop:s0");
	UT_EQ_INT(ctx(&p, "ro.bootloader", &c, &e), 0);
	UT_EQ_STR(c, "u:object_r:bootloader_prop:s0");
	UT_EQ_INT(ctx(&p, "ro.boot.hardware", &c, &e), 0);
	UT_EQ_STR(c, "u:object_r:bootloader_prop:s0");
	UT_EQ_INT(ctx(&p, "ro.bo", &c, &e), 0);            /* too short for "boot" */
	UT_EQ_STR(c, "u:object_r:default_prop:s0");
	UT_EQ_INT(ctx(&p, "anything.else", &c, &e), 0);
	UT_EQ_STR(c, "u:object_r:default_prop:s0");
	free(p.b);
}

UT_TEST(propfile_info_rejects_bad_headers)
{
	struct blob p;
	const char *c;
	struct err e;

	UT_ASSERT(load("props/android14/property_info", &p));
	UT_EQ_INT(prop_info_context(p.b, 10, "pi", "a", &c, &e), -EBADMSG);
	UT_EQ_INT(prop_info_context(p.b, p.len - 4, "pi", "a", &c, &e), -EBADMSG);
	UT_CONTAINS(e.msg, "size field disagrees");
	put32(p.b + 4, 2);
	UT_EQ_INT(ctx(&p, "a", &c, &e), -EBADMSG);
	UT_CONTAINS(e.msg, "needs a reader of version 2");
	put32(p.b + 4, 1);
	put32(p.b + 20, 0xfffffff0);                         /* root offset */
	UT_EQ_INT(ctx(&p, "a", &c, &e), -EBADMSG);
	UT_CONTAINS(e.msg, "trie node out of bounds");
	free(p.b);
}

UT_TEST(propfile_info_context_cannot_escape_the_directory)
{
	struct blob p;
	const char *c;
	struct err e;
	static const char absent[] = "u:object_r:absent_prop:s0";

	UT_ASSERT(load("props/android14/property_info", &p));
	uint8_t *s = memmem(p.b, p.len, absent, sizeof(absent));
	UT_ASSERT(s);
	memcpy(s, "../../etc/passwd", 17);
	UT_EQ_INT(ctx(&p, "ro.gone.x", &c, &e), -EBADMSG);
	UT_CONTAINS(e.msg, "not a plain file name");
	memcpy(s, "..", 3);
	UT_EQ_INT(ctx(&p, "ro.gone.x", &c, &e), -EBADMSG);
	free(p.b);
}

UT_TEST(propfile_info_context_index_out_of_range)
{
	struct blob p;
	const char *c;
	struct err e;
	uint32_t contexts, n;

	UT_ASSERT(load("props/android14/property_info", &p));
	contexts = ld32(p.b + 12);
	n = ld32(p.b + contexts);
	put32(p.b + contexts, n - 1);    /* drop the last context from the table */
	UT_EQ_INT(ctx(&p, "ro.product.x", &c, &e), -EBADMSG);   /* vendor_default sorts last */
	UT_CONTAINS(e.msg, "offset array out of bounds");
	free(p.b);
}
