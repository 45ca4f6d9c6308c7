#include "ut.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>

#include "common/mapfile.h"
#include "formats/elf.h"

#define ODEX_ARM "oat/android-13/arm/realme_ice_ossi_TP1A.220905.001/" \
		 "com.android.location.provider.odex"
#define ODEX_A15 "oat/android-15/arm64/sony_pdx245_XQ-EC72_69.1.A.2.78/" \
	"apex@com.android.media@javalib@service-media-s.jar@classes.odex"

/* A private, writable copy of a file (callers corrupt it). */
static uint8_t *load_copy(const char *path, size_t *len)
{
	struct mapped_file mf;
	struct err e = { 0 };
	uint8_t *buf;

	if (mapfile_open(path, 0, 0, &mf, &e))
		return NULL;
	buf = malloc(mf.size);
	if (buf)
		memcpy(buf, mf.data, mf.size);
	*len = mf.size;
	mapfile_close(&mf);
	return buf;
}

UT_TEST(elf_reads_odex_arm32_symbols_and_segments)
{
	struct elf_file *f;
	struct err e = { 0 };
	struct elf_symbol s;
	uint64_t off;
	uint32_t flags;

	UT_EQ_INT(elf_open(ut_testdata(ODEX_ARM), &f, &e), 0);
	UT_EQ_INT(elf_class(f), 32);
	UT_EQ_INT(elf_machine(f), EM_ARM);
	UT_EQ_INT(elf_find_symbol(f, "oatdata", &s), 0);
	UT_EQ_U64(s.value, 0x1000);
	UT_EQ_U64(s.size, 0x3000);
	UT_ASSERT(s.from_dynsym);
	UT_EQ_INT(elf_find_symbol(f, "oatlastword", &s), 0);
	UT_EQ_U64(s.value, 0x851a);
	UT_EQ_INT(elf_find_symbol(f, "nope", &s), -ENOENT);
	/* .text: file offset == vaddr; .dynstr segment: vaddr 0xc000 at offset 0xa000. */
	UT_EQ_INT(elf_vaddr_to_offset(f, 0x4010, &off, &flags), 0);
	UT_EQ_U64(off, 0x4010);
	UT_EQ_INT(flags, PF_R | PF_X);
	UT_EQ_INT(elf_vaddr_to_offset(f, 0xc09c, &off, &flags), 0);
	UT_EQ_U64(off, 0xa09c);
	/* .bss and .dex have no file data. */
	UT_EQ_INT(elf_vaddr_to_offset(f, 0xa000, &off, NULL), -ERANGE);
	UT_EQ_INT(elf_vaddr_to_offset(f, 0xb000, &off, NULL), -ERANGE);
	const struct elf_segment *loads;
	UT_EQ_INT(elf_load_segments(f, &loads), 7);
	struct elf_section sec;
	UT_EQ_INT(elf_find_section(f, ".text", &sec), 0);
	UT_EQ_U64(sec.size, 0x451e);
	UT_EQ_INT(elf_find_section(f, ".nothere", &sec), -ENOENT);
	elf_close(f);
}

UT_TEST(elf_reads_16k_aligned_odex)
{
	struct elf_file *f;
	struct err e = { 0 };
	struct elf_symbol s;
	uint64_t off;

	UT_EQ_INT(elf_open(ut_testdata(ODEX_A15), &f, &e), 0);
	UT_EQ_INT(elf_class(f), 64);
	UT_EQ_INT(elf_machine(f), EM_AARCH64);
	UT_EQ_INT(elf_find_symbol(f, "oatdata", &s), 0);
	UT_EQ_INT(elf_vaddr_to_offset(f, s.value, &off, NULL), 0);
	UT_EQ_U64(off, 0x4000);
	UT_EQ_INT(elf_find_symbol(f, "oatexec", &s), 0);
	UT_EQ_U64(s.value, 0x8000);
	elf_close(f);
}

UT_TEST(elf_reads_host_binary_and_library)
{
	struct elf_file *f;
	struct err e = { 0 };
	struct elf_symbol s;
	uint64_t off;
	uint32_t flags;

	UT_EQ_INT(elf_open("/bin/ls", &f, &e), 0);
	UT_EQ_INT(elf_class(f), 64);
	UT_EQ_INT(elf_find_symbol(f, "_obstack_begin", &s), 0);
	UT_EQ_INT(s.type, STT_FUNC);
	UT_EQ_INT(elf_vaddr_to_offset(f, s.value, &off, &flags), 0);
	UT_ASSERT(flags & PF_X);
	/* Imports are undefined: not found. */
	UT_EQ_INT(elf_find_symbol(f, "malloc", &s), -ENOENT);
	elf_close(f);
}

struct count_ctx {
	int n;
};

static int count_cb(void *ctx, const char *name, const struct elf_symbol *sym)
{
	(void)name;
	(void)sym;
	((struct count_ctx *)ctx)->n++;
	return 0;
}

/* Without section headers the symbols come from PT_DYNAMIC: DT_HASH for the
 * odex, DT_GNU_HASH only for the aarch64 libc. */
static void check_no_shdrs(const char *path, const char *sym)
{
	struct elf_file *f;
	struct err e = { 0 };
	struct elf_symbol want, got;
	struct count_ctx c1 = { 0 }, c2 = { 0 };
	size_t len;
	uint8_t *buf = load_copy(path, &len);

	UT_ASSERT(buf);
	UT_EQ_INT(elf_open_mem(path, buf, len, &f, &e), 0);
	UT_EQ_INT(elf_find_symbol(f, sym, &want), 0);
	elf_foreach_symbol(f, count_cb, &c1);
	elf_close(f);
	if (buf[EI_CLASS] == ELFCLASS64) {
		memset(buf + 40, 0, 8);   /* e_shoff */
		memset(buf + 60, 0, 2);   /* e_shnum */
	} else {
		memset(buf + 32, 0, 4);
		memset(buf + 48, 0, 2);
	}
	UT_EQ_INT(elf_open_mem(path, buf, len, &f, &e), 0);
	UT_EQ_INT(elf_section_count(f), 0);
	UT_EQ_INT(elf_find_symbol(f, sym, &got), 0);
	UT_EQ_U64(got.value, want.value);
	UT_EQ_U64(got.size, want.size);
	elf_foreach_symbol(f, count_cb, &c2);
	UT_ASSERT(c2.n > 0 && c2.n <= c1.n);
	elf_close(f);
	free(buf);
}

UT_TEST(elf_falls_back_to_pt_dynamic)
{
	check_no_shdrs(ut_testdata(ODEX_ARM), "oatdata");
	check_no_shdrs(ut_testdata(ODEX_A15), "oatlastword");
	check_no_shdrs("/usr/aarch64-linux-gnu/lib/libc.so.6", "malloc");
}

UT_TEST(elf_rejects_non_elf_and_big_endian)
{
	struct elf_file *f;
	struct err e = { 0 };
	uint8_t buf[64] = "PK\3\4";

	UT_EQ_INT(elf_open_mem("x.zip", buf, sizeof(buf), &f, &e), -ENOEXEC);
	UT_CONTAINS(e.msg, "x.zip: not an ELF file");
	memcpy(buf, "\177ELF\2\2\1", 7);
	UT_EQ_INT(elf_open_mem("be", buf, sizeof(buf), &f, &e), -ENOEXEC);
	UT_CONTAINS(e.msg, "not little-endian");
	UT_EQ_INT(elf_open("/nonexistent.so", &f, &e), -ENOENT);
}

static int touch_cb(void *ctx, const char *name, const struct elf_symbol *sym)
{
	((struct count_ctx *)ctx)->n += (int)strlen(name) + (int)(sym->value & 1);
	return 0;
}

/* Open, look up and iterate: must either fail cleanly or stay in bounds. */
static void exercise(const char *name, const uint8_t *buf, size_t len)
{
	struct elf_file *f;
	struct err e = { 0 };
	struct elf_symbol s;
	struct count_ctx c = { 0 };
	uint64_t off;

	if (elf_open_mem(name, buf, len, &f, &e)) {
		UT_ASSERT(e.msg[0] != 0);
		UT_ASSERT(strchr(e.msg, '\n') == NULL);
		return;
	}
	if (elf_find_symbol(f, "oatdata", &s) == 0)
		elf_vaddr_to_offset(f, s.value, &off, NULL);
	elf_foreach_symbol(f, touch_cb, &c);
	elf_close(f);
}

UT_TEST(elf_survives_truncation_and_corruption)
{
	for (size_t p = 0; p < 2; p++) {
		size_t len;
		char path[512];
		snprintf(path, sizeof(path), "%s", p ? "/bin/ls" : ut_testdata(ODEX_ARM));
		uint8_t *orig = load_copy(path, &len);
		UT_ASSERT(orig);
		for (size_t cut = 0; cut < len; cut += (cut < 256 ? 7 : len / 97 + 1)) {
			uint8_t *t = malloc(cut ? cut : 1);
			memcpy(t, orig, cut);
			exercise(path, t, cut);
			free(t);
		}
		uint8_t *c = malloc(len);
		uint32_t seed = 12345;
		for (int round = 0; round < 200; round++) {
			memcpy(c, orig, len);
			for (int k = 0; k < 8; k++) {
				seed = seed * 1103515245u + 12345u;
				/* bias toward the headers, where the damage matters */
				size_t at = (seed >> 8) % (k < 6 ? (len < 4096 ? len : 4096) : len);
				c[at] ^= (uint8_t)(seed >> 3);
			}
			exercise(path, c, len);
		}
		free(c);
		free(orig);
	}
}
