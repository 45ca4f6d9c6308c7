/* test_zip_apk — libraries stored in APKs: the `!/` spelling (common/zip_path.h),
 * a zip's stored entry by name and by a mapping offset (formats/zip.h, plain and
 * ZIP64), and the code cache's ELF inside an APK (code/codefile.h): offsets from
 * the ELF's start, the base where the entry's data starts, frames of an APK
 * mapping named APK!/ENTRY.  The archives are written here (zipalign's layout:
 * stored entries page-aligned by the local header's extra field); the library is
 * the x86_64 Android 11 userland's libdl.so. */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "code/codecache.h"
#include "code/codefile.h"
#include "common/zip_path.h"
#include "formats/elf.h"
#include "formats/zip.h"
#include "ut.h"

#define LIBDL "android-userland/x86_64-android11/system/lib64/libdl.so"
#define ENTRY "lib/x86_64/libdl.so"

/* ---- the `!/` spelling ---- */

static int split(const char *p, size_t *clen, const char **entry, struct err *e)
{
	return zip_path_split(p, clen, entry, e);
}

UT_TEST(zip_path_both_spellings_and_plain_paths)
{
	struct err e = { 0 };
	const char *entry;
	size_t clen;

	UT_EQ_INT(split("/data/app/x/base.apk!/lib/arm64-v8a/libfoo.so", &clen, &entry, &e), 1);
	UT_EQ_INT(clen, strlen("/data/app/x/base.apk"));
	UT_EQ_STR(entry, "lib/arm64-v8a/libfoo.so");
	UT_EQ_INT(split("/data/app/x/base.APK!lib/x86_64/libfoo.so", &clen, &entry, &e), 1);
	UT_EQ_STR(entry, "lib/x86_64/libfoo.so");
	/* the first "!/" is the separator, as bionic's linker splits */
	UT_EQ_INT(split("/a!/b.zip!/c", &clen, &entry, &e), 1);
	UT_EQ_INT(clen, 2);
	UT_EQ_STR(entry, "b.zip!/c");
	/* plain paths: no separator, a '!' not after .apk/.zip/.jar */
	UT_EQ_INT(split("/system/lib64/libc.so", &clen, &entry, &e), 0);
	UT_EQ_INT(split("/data/local/tmp/wow!x.so", &clen, &entry, &e), 0);
	UT_EQ_INT(split("libc.so", &clen, &entry, &e), 0);
}

UT_TEST(zip_path_refuses_bad_names_with_one_line)
{
	static const struct {
		const char *path, *why;
	} bad[] = {
		{ "/x/base.apk!/../../etc/passwd", "'..' component" },
		{ "/x/base.apk!/lib/./a.so", "'.' component" },
		{ "/x/base.apk!/", "empty name" },
		{ "/x/base.apk!/lib//a.so", "empty component" },
		{ "/x/base.apk!/lib/", "trailing '/'" },
		{ "/x/base.apk!//lib/a.so", "absolute name" },
		{ "!/lib/a.so", "found nothing" },
		{ "/x/!/lib/a.so", "a directory" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct err e = { 0 };
		const char *entry;
		size_t clen;
		UT_EQ_INT(split(bad[i].path, &clen, &entry, &e), -EINVAL);
		UT_CONTAINS(e.msg, bad[i].why);
		UT_CONTAINS(e.msg, "expected");
	}
	const char *why;
	UT_ASSERT(!zip_entry_name_ok("lib/a\0.so", 9, &why));
	UT_CONTAINS(why, "NUL");
	UT_ASSERT(zip_entry_name_ok("lib/x86_64/libfoo.so", 20, &why));
	UT_ASSERT(zip_entry_name_ok("lib/..a/b", 9, &why));
}

/* ---- writing archives ---- */

struct zent {
	const char *name;
	const uint8_t *data;
	size_t len;
	uint16_t method;        /* 0 stored (aligned), 8: the bytes are written as they are */
};

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

/* An archive of n entries into a malloc'ed buffer (*len); data_off[i]: where
 * entry i's data starts. */
static uint8_t *make_zip(const struct zent *ents, size_t n, size_t align, bool zip64,
			 size_t *len, uint64_t *data_off)
{
	size_t cap = 1 << 20, at = 0, cd_at, cd_len = 0;
	uint8_t *b = calloc(1, cap), *cd = calloc(1, 1 << 16);
	uint64_t local[8];

	for (size_t i = 0; i < n; i++) {
		const struct zent *z = &ents[i];
		size_t nl = strlen(z->name), x64 = zip64 ? 20 : 0;
		size_t start = at + 30 + nl + x64, pad = z->method ? 0 : (align - (start + 4) % align) % align;
		size_t xl = x64 + (z->method ? 0 : 4 + pad);
		local[i] = at;
		put32(b + at, 0x04034b50);
		put16(b + at + 4, 20);
		put16(b + at + 8, z->method);
		put32(b + at + 18, zip64 ? 0xffffffffu : (uint32_t)z->len);
		put32(b + at + 22, zip64 ? 0xffffffffu : (uint32_t)z->len);
		put16(b + at + 26, (uint16_t)nl);
		put16(b + at + 28, (uint16_t)xl);
		memcpy(b + at + 30, z->name, nl);
		if (zip64) {
			put16(b + at + 30 + nl, 1);
			put16(b + at + 32 + nl, 16);
			put64(b + at + 34 + nl, z->len);
			put64(b + at + 42 + nl, z->len);
		}
		if (!z->method) {
			put16(b + at + 30 + nl + x64, 0xd935);
			put16(b + at + 32 + nl + x64, (uint16_t)pad);
		}
		at += 30 + nl + xl;
		data_off[i] = at;
		memcpy(b + at, z->data, z->len);
		at += z->len;
		/* its central record */
		uint8_t *c = cd + cd_len;
		put32(c, 0x02014b50);
		put16(c + 10, z->method);
		put32(c + 20, zip64 ? 0xffffffffu : (uint32_t)z->len);
		put32(c + 24, zip64 ? 0xffffffffu : (uint32_t)z->len);
		put16(c + 28, (uint16_t)nl);
		put16(c + 30, zip64 ? 28 : 0);
		put32(c + 42, zip64 ? 0xffffffffu : (uint32_t)local[i]);
		memcpy(c + 46, z->name, nl);
		if (zip64) {
			put16(c + 46 + nl, 1);
			put16(c + 48 + nl, 24);
			put64(c + 50 + nl, z->len);
			put64(c + 58 + nl, z->len);
			put64(c + 66 + nl, local[i]);
		}
		cd_len += 46 + nl + (zip64 ? 28 : 0);
	}
	cd_at = at;
	memcpy(b + at, cd, cd_len);
	at += cd_len;
	if (zip64) {
		size_t rec = at;
		put32(b + at, 0x06064b50);
		put64(b + at + 4, 44);
		put64(b + at + 24, n);
		put64(b + at + 32, n);
		put64(b + at + 40, cd_len);
		put64(b + at + 48, cd_at);
		at += 56;
		put32(b + at, 0x07064b50);
		put64(b + at + 8, rec);
		put32(b + at + 16, 1);
		at += 20;
	}
	put32(b + at, 0x06054b50);
	put16(b + at + 8, zip64 ? 0xffff : (uint16_t)n);
	put16(b + at + 10, zip64 ? 0xffff : (uint16_t)n);
	put32(b + at + 12, zip64 ? 0xffffffffu : (uint32_t)cd_len);
	put32(b + at + 16, zip64 ? 0xffffffffu : (uint32_t)cd_at);
	at += 22;
	free(cd);
	*len = at;
	return b;
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = malloc(1 << 20);

	*len = f && b ? fread(b, 1, 1 << 20, f) : 0;
	if (f)
		fclose(f);
	return b;
}

static const char *write_file(const char *name, const uint8_t *b, size_t len)
{
	const char *path = ut_tmpfile(name);
	FILE *f = fopen(path, "wb");

	if (f) {
		fwrite(b, 1, len, f);
		fclose(f);
	}
	return path;
}

/* ---- entries by name and by offset ---- */

static void check_lookups(bool zip64, size_t align)
{
	static const uint8_t manifest[] = "<manifest package='x'/>";
	size_t dl_len, len;
	uint8_t *dl = read_file(ut_testdata(LIBDL), &dl_len);
	struct zent ents[] = { { "AndroidManifest.xml", manifest, sizeof(manifest), 8 },
			       { ENTRY, dl, dl_len, 0 } };
	uint64_t data[2], off;
	uint8_t *zip = make_zip(ents, 2, align, zip64, &len, data);
	struct zip_archive *z;
	struct zip_entry e;
	struct err er = { 0 };

	UT_ASSERT(dl_len > 1000);
	UT_EQ_INT(data[1] % align, 0);
	UT_EQ_INT(zip_open_mem("t.apk", zip, len, &z, &er), 0);
	UT_EQ_INT(zip_stored_entry(z, ENTRY, &e, &off, &er), 0);
	UT_EQ_U64(off, data[1]);
	UT_EQ_U64(e.comp_size, dl_len);
	/* by a mapping's offset: its start, inside, its last byte */
	for (uint64_t at = data[1]; at < data[1] + dl_len; at += dl_len / 3) {
		UT_EQ_INT(zip_entry_holding(z, at, &e, &off, &er), 0);
		UT_EQ_U64(off, data[1]);
	}
	UT_EQ_INT(zip_entry_holding(z, data[1] + dl_len - 1, &e, &off, &er), 0);
	/* what else is at an offset */
	UT_EQ_INT(zip_entry_holding(z, data[1] - 8, &e, &off, &er), -ENOENT);
	UT_CONTAINS(er.msg, "t.apk+0x");
	UT_CONTAINS(er.msg, "expected the data of a stored entry");
	UT_CONTAINS(er.msg, "local header");
	UT_EQ_INT(zip_entry_holding(z, data[1] + dl_len + 2, &e, &off, &er), -ENOENT);
	UT_CONTAINS(er.msg, "central directory");
	UT_EQ_INT(zip_entry_holding(z, len + 4096, &e, &off, &er), -ENOENT);
	UT_CONTAINS(er.msg, "end of the file");
	/* the compressed one, by name and by offset */
	UT_EQ_INT(zip_stored_entry(z, "AndroidManifest.xml", &e, &off, &er), -ENOTSUP);
	UT_CONTAINS(er.msg, "is compressed (method 8)");
	UT_EQ_INT(zip_entry_holding(z, data[0], &e, &off, &er), -ENOTSUP);
	UT_EQ_INT(zip_stored_entry(z, "lib/x86_64/none.so", &e, &off, &er), -ENOENT);
	UT_CONTAINS(er.msg, "no entry lib/x86_64/none.so");
	zip_close(z);
	free(zip);
	free(dl);
}

UT_TEST(zip_stored_entry_by_name_and_mapping_offset)
{
	check_lookups(false, 4096);
	check_lookups(false, 16384);
}

UT_TEST(zip_zip64_stored_entry_by_name_and_mapping_offset)
{
	check_lookups(true, 4096);
	check_lookups(true, 16384);
}

UT_TEST(zip_hostile_entries_one_line_each)
{
	static const uint8_t elf[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
	struct zent ents[] = { { "lib/a.so", elf, sizeof(elf), 0 }, { "lib/b.so", elf, 64, 0 } };
	uint64_t data[2], off;
	size_t len;
	uint8_t *zip = make_zip(ents, 2, 64, false, &len, data);
	uint8_t *cd = zip + data[1] + 64;   /* the central directory follows b's data */
	struct zip_archive *z;
	struct zip_entry e;
	struct err er = { 0 };

	/* the central directory lies: b's record points at a's local header */
	uint8_t *b_rec = cd + 46 + 8;
	uint32_t b_local = (uint32_t)(b_rec[42] | b_rec[43] << 8 | b_rec[44] << 16);
	put32(b_rec + 42, 0);
	UT_EQ_INT(zip_open_mem("lie.apk", zip, len, &z, &er), 0);
	UT_EQ_INT(zip_stored_entry(z, "lib/b.so", &e, &off, &er), -EINVAL);
	UT_CONTAINS(er.msg, "lie.apk+0x0: expected the local header of entry lib/b.so");
	zip_close(z);
	/* overlapping entries: a's data said to run over b's record and data */
	put32(b_rec + 42, b_local);
	put32(cd + 20, (uint32_t)(data[1] + 64 - data[0]));
	put32(cd + 24, (uint32_t)(data[1] + 64 - data[0]));
	UT_EQ_INT(zip_open_mem("ovl.apk", zip, len, &z, &er), 0);
	UT_EQ_INT(zip_stored_entry(z, "lib/b.so", &e, &off, &er), -EINVAL);
	UT_CONTAINS(er.msg, "entry lib/b.so");
	UT_CONTAINS(er.msg, "overlaps entry lib/a.so");
	UT_EQ_INT(zip_entry_holding(z, data[0], &e, &off, &er), -EINVAL);
	UT_CONTAINS(er.msg, "expected entries apart");
	zip_close(z);
	put32(cd + 20, 64);
	put32(cd + 24, 64);
	/* a's data past the end of the file */
	put32(cd + 20, 0x7fffffff);
	put32(cd + 24, 0x7fffffff);
	UT_EQ_INT(zip_open_mem("end.apk", zip, len, &z, &er), 0);
	UT_EQ_INT(zip_stored_entry(z, "lib/a.so", &e, &off, &er), -EINVAL);
	UT_CONTAINS(er.msg, "expected 0x7fffffff bytes of data, found the file ends");
	zip_close(z);
	put32(cd + 20, 64);
	put32(cd + 24, 64);
	/* a name with '..': the central and the local name both */
	memcpy(cd + 46, "../ab.so", 8);
	memcpy(zip + 30, "../ab.so", 8);
	UT_EQ_INT(zip_open_mem("dots.apk", zip, len, &z, &er), 0);
	UT_EQ_INT(zip_entry_holding(z, data[0], &e, &off, &er), -EINVAL);
	UT_CONTAINS(er.msg, "expected a relative entry name, found a '..' component");
	UT_EQ_INT(zip_entry_holding(z, data[0], &e, &off, &er), -EINVAL);
	zip_close(z);
	memcpy(cd + 46, "lib/a\0so", 8);
	UT_EQ_INT(zip_open_mem("nul.apk", zip, len, &z, &er), 0);
	UT_EQ_INT(zip_entry_holding(z, data[0], &e, &off, &er), -EINVAL);
	UT_CONTAINS(er.msg, "NUL");
	zip_close(z);
	/* a truncated central directory */
	UT_EQ_INT(zip_open_mem("cut.apk", zip, len, &z, &er), 0);
	zip_close(z);
	put32(zip + len - 22 + 12, 0x1000);
	UT_EQ_INT(zip_open_mem("cut.apk", zip, len, &z, &er), -EINVAL);
	UT_CONTAINS(er.msg, "central directory");
	free(zip);
}

/* A tombstone's spelling: base.apk!libdl.so, the entry by its file name only. */
UT_TEST(zip_stored_entry_by_file_name_one_or_an_error_naming_every_candidate)
{
	static const uint8_t manifest[] = "<manifest/>";
	size_t dl_len, len;
	uint8_t *dl = read_file(ut_testdata(LIBDL), &dl_len);
	struct zent one[] = { { "AndroidManifest.xml", manifest, sizeof(manifest), 8 },
			      { ENTRY, dl, dl_len, 0 } };
	struct zent two[] = { { ENTRY, dl, dl_len, 0 },
			      { "lib/arm64-v8a/libdl.so", dl, dl_len, 0 },
			      { "lib/x86_64/xlibdl.so", dl, dl_len, 0 } };
	uint64_t data[3], off;
	uint8_t *zip = make_zip(one, 2, 4096, false, &len, data);
	struct zip_archive *z;
	struct zip_entry e;
	struct err er = { 0 };

	UT_EQ_INT(zip_open_mem("t.apk", zip, len, &z, &er), 0);
	UT_EQ_INT(zip_stored_entry(z, "libdl.so", &e, &off, &er), 0);
	UT_EQ_U64(off, data[1]);
	UT_EQ_INT(e.name_len, strlen(ENTRY));
	UT_ASSERT(!memcmp(e.name, ENTRY, e.name_len));
	/* a file name no entry has; a name with '/' is an entry name only */
	UT_EQ_INT(zip_stored_entry(z, "libc.so", &e, &off, &er), -ENOENT);
	UT_CONTAINS(er.msg, "t.apk: no entry libc.so (nor one named .../libc.so)");
	UT_EQ_INT(zip_stored_entry(z, "x86_64/libdl.so", &e, &off, &er), -ENOENT);
	UT_CONTAINS(er.msg, "no entry x86_64/libdl.so");
	/* the file name of a compressed entry: found, then refused as such */
	UT_EQ_INT(zip_stored_entry(z, "AndroidManifest.xml", &e, &off, &er), -ENOTSUP);
	zip_close(z);
	free(zip);

	/* two entries of that file name (xlibdl.so is not one): one error naming both */
	zip = make_zip(two, 3, 4096, false, &len, data);
	UT_EQ_INT(zip_open_mem("fat.apk", zip, len, &z, &er), 0);
	UT_EQ_INT(zip_stored_entry(z, "libdl.so", &e, &off, &er), -ENOENT);
	UT_CONTAINS(er.msg, "fat.apk: no entry libdl.so, and 2 entries have that file name: "
		    "lib/x86_64/libdl.so, lib/arm64-v8a/libdl.so; name one as fat.apk!/ENTRY");
	UT_EQ_INT(zip_stored_entry(z, "xlibdl.so", &e, &off, &er), 0);
	UT_EQ_U64(off, data[2]);
	zip_close(z);
	free(zip);
	free(dl);
}

/* ---- the code cache's ELF in an APK ---- */

UT_TEST(codefile_elf_in_apk_counts_from_the_entry_and_names_frames_apk_entry)
{
	static const uint8_t manifest[] = "<manifest/>";
	size_t dl_len, len;
	uint8_t *dl = read_file(ut_testdata(LIBDL), &dl_len);
	struct zent ents[] = { { "AndroidManifest.xml", manifest, sizeof(manifest), 8 },
			       { ENTRY, dl, dl_len, 0 } };
	uint64_t data[2], sym_off;
	uint8_t *zip = make_zip(ents, 2, 4096, false, &len, data);
	char apk[1024];   /* a copy: ut_tmpfile's buffer is reused by the next call */
	char member[1024], maps[4096], dir[1024], pidd[1100];
	struct elf_file *plain;
	struct elf_symbol sym;
	struct err er = { 0 };

	snprintf(apk, sizeof(apk), "%s", write_file("app.apk", zip, len));
	UT_EQ_INT(elf_open(ut_testdata(LIBDL), &plain, &er), 0);
	UT_EQ_INT(elf_find_symbol(plain, "dlopen", &sym), 0);
	UT_EQ_INT(elf_vaddr_to_offset(plain, sym.value, &sym_off, NULL), 0);
	elf_close(plain);

	struct code_cache *c = ut_code_cache();
	snprintf(member, sizeof(member), "%s!/%s", apk, ENTRY);
	struct code_file *f = code_cache_file(c, member);
	UT_ASSERT(f && code_file_elf(f, &er));
	UT_EQ_U64(code_file_base(f), data[1]);
	UT_EQ_STR(code_file_member(f), ENTRY);
	UT_EQ_U64(code_file_function_at(f, sym_off), sym.size);   /* offsets from the ELF */
	/* the same file by a mapping's offset, and a plain open of the APK is not it */
	UT_ASSERT(code_cache_file_mapped(c, apk, apk, data[1] + 0x10) == f);
	UT_ASSERT(code_cache_file(c, apk) != f);
	/* an APK offset that is no entry's data: a failed file saying what is there */
	struct code_file *bad = code_cache_file_mapped(c, apk, apk, 0);
	UT_ASSERT(bad && !code_file_elf(bad, &er));
	UT_CONTAINS(er.msg, "+0x0: expected the data of a stored entry");
	/* by its file name only (a tombstone's APK!NAME): the same file, named
	 * APK!/ENTRY, found again by that name */
	snprintf(member, sizeof(member), "%s!libdl.so", apk);
	UT_ASSERT(code_cache_file(c, member) == f);
	struct code_cache *c2 = ut_code_cache();
	struct code_file *byname = code_cache_file(c2, member);
	UT_ASSERT(byname && code_file_elf(byname, &er));
	UT_EQ_U64(code_file_base(byname), data[1]);
	UT_EQ_STR(code_file_member(byname), ENTRY);
	snprintf(member, sizeof(member), "%s!/%s", apk, ENTRY);
	UT_EQ_STR(code_file_path(byname), member);
	snprintf(member, sizeof(member), "%s!libdl.so", apk);
	UT_ASSERT(code_cache_file(c2, member) == byname);
	snprintf(member, sizeof(member), "%s!/%s", apk, ENTRY);
	UT_ASSERT(code_cache_file(c2, member) == byname);
	/* a non-ELF entry named with !/ */
	snprintf(member, sizeof(member), "%s!/AndroidManifest.xml", apk);
	UT_ASSERT(!code_file_elf(code_cache_file(c, member), &er));
	UT_CONTAINS(er.msg, "is compressed");

	/* a process mapping the library from the APK (bionic: the entry's data
	 * offset, page-aligned, executable) */
	snprintf(dir, sizeof(dir), "%s", ut_tmpfile("apkproc"));
	mkdir(dir, 0755);
	snprintf(pidd, sizeof(pidd), "%s/77", dir);
	mkdir(pidd, 0755);
	snprintf(maps, sizeof(maps),
		 "7f0000000000-7f0000002000 r-xp %08llx 00:00 0    %s\n"
		 "7f1000000000-7f1000001000 r-xp 00000000 00:00 0    %s\n",
		 (unsigned long long)data[1], apk, apk);
	snprintf(pidd, sizeof(pidd), "%s/77/maps", dir);
	write_file("apkproc/77/maps", (const uint8_t *)maps, strlen(maps));
	struct code_cache *pc = code_cache_new(dir);
	struct code_info ci;
	UT_ASSERT(pc);
	UT_EQ_INT(code_cache_lookup(pc, 77, 0x7f0000000000ull + sym_off, false, &ci), 0);
	UT_EQ_INT(ci.kind, FRAME_NATIVE);
	UT_EQ_STR(ci.symbol, "dlopen");
	UT_ASSERT(ci.at_start);
	UT_EQ_U64(ci.offset, sym_off);
	snprintf(member, sizeof(member), "%s!/%s", apk, ENTRY);
	UT_EQ_STR(ci.file, member);
	/* the mapping of the local header: unknown, not someone else's symbol */
	UT_EQ_INT(code_cache_lookup(pc, 77, 0x7f1000000010ull, false, &ci), 0);
	UT_EQ_INT(ci.kind, FRAME_UNKNOWN);
	code_cache_free(pc);
	free(zip);
	free(dl);
}
