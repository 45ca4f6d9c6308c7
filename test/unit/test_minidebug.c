/* test_minidebug.c — .gnu_debugdata: real Android oat files from the shared
 * test data (their embedded ELF must equal what objcopy + `xz -d` extract, and
 * every symbol `nm` lists in it must be seen by elf_foreach_symbol), and a
 * stripped binary built here the way Android builds mini debug info. */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/cfi.h"
#include "formats/elf.h"
#include "formats/minidebug.h"
#include "ut.h"

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	long sz;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc((size_t)sz + 1);
	if (b && fread(b, 1, (size_t)sz, f) != (size_t)sz) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*n = (size_t)sz;
	return b;
}

struct want {
	unsigned long long value;
	char name[512];
	bool seen;
};

struct symset {
	struct want *v;
	size_t n;
};

static int mark_seen(void *ctx, const char *name, const struct elf_symbol *sym)
{
	struct symset *s = ctx;

	for (size_t i = 0; i < s->n; i++)
		if (!s->v[i].seen && s->v[i].value == sym->value && !strcmp(s->v[i].name, name))
			s->v[i].seen = true;
	return 0;
}

/* The symbols `nm` lists for path (defined ones with a name). */
static size_t nm_symbols(const char *path, struct symset *s)
{
	char cmd[1200], line[1024];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm --defined-only '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	s->v = NULL;
	s->n = 0;
	while (f && fgets(line, sizeof(line), f)) {
		struct want w = { 0 };
		char type;
		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "%llx %c %511[^\n]", &w.value, &type, w.name) != 3)
			continue;
		s->v = realloc(s->v, (s->n + 1) * sizeof(*s->v));
		s->v[s->n++] = w;
	}
	if (f)
		pclose(f);
	return s->n;
}

static void check_file(const char *path, bool has_symbols)
{
	struct elf_file *elf = NULL;
	struct minidebug md;
	struct err e = { 0 };
	char cmd[2048], xzf[1024], ref[1024];
	size_t rn = 0;
	uint8_t *r;
	struct symset want;

	snprintf(xzf, sizeof(xzf), "%s", ut_tmpfile("gdd.xz"));
	snprintf(ref, sizeof(ref), "%s", ut_tmpfile("gdd.elf"));
	snprintf(cmd, sizeof(cmd),
		 "llvm-objcopy --dump-section .gnu_debugdata='%s' '%s' '%s.junk' && "
		 "xz -dc '%s' > '%s'", xzf, path, xzf, xzf, ref);
	UT_ASSERT(system(cmd) == 0);
	UT_ASSERT((r = slurp(ref, &rn)) != NULL);
	UT_ASSERT(!elf_open(path, &elf, &e));
	if (minidebug_open(elf, &md, &e)) {
		ut_fail(__FILE__, __LINE__, "%s", e.msg);
		elf_close(elf);
		free(r);
		return;
	}
	UT_EQ_U64(md.len, rn);
	UT_ASSERT(!memcmp(md.buf, r, rn));
	UT_ASSERT((nm_symbols(ref, &want) > 0) == has_symbols);
	elf_foreach_symbol(md.elf, mark_seen, &want);
	for (size_t i = 0; i < want.n; i++)
		if (!want.v[i].seen)
			ut_fail(__FILE__, __LINE__, "%s: nm's %s at 0x%llx not listed", path,
				want.v[i].name, want.v[i].value);
	free(want.v);
	minidebug_close(&md);
	elf_close(elf);
	free(r);
}

UT_TEST(minidebug_real_oat_files)
{
	/* Android 10-15, x86_64/arm64/arm; the last two hold an empty symbol table. */
	static const char *const files[] = {
		"oat/android-11/x86_64/aosp_x86_64_RP1A.201105.002_eng/boot-ext.oat",
		"oat/android-11/x86_64/aosp_x86_64_RP1A.201105.002_eng/boot-voip-common.oat",
		"oat/android-10/arm64/realme_RMX2051CN_qssi_QKQ1.191117.002/RfToolkit.odex",
		"oat/android-13/arm64/realme_ice_ossi_TP1A.220905.001/boot-okhttp.oat",
		"oat/android-13/arm64/realme_ice_ossi_TP1A.220905.001/"
		"apex@com.android.permission@javalib@service-permission.jar@classes.odex",
		"oat/android-13/arm/realme_ice_ossi_TP1A.220905.001/"
		"com.android.location.provider.odex",
		"oat/android-15/arm64/sony_pdx245_XQ-EC72_69.1.A.2.78/"
		"apex@com.android.media@javalib@service-media-s.jar@classes.odex",
		"oat/android-11/x86_64/aosp_x86_64_RP1A.201105.002_eng/boot-ims-common.oat",
		"oat/android-11/arm64/xiaomi_sweet_vendor_MIUI12.5.8_RKFMIXM/TimeService.odex",
	};
	size_t n = sizeof(files) / sizeof(files[0]);
	for (size_t i = 0; i < n; i++) {
		check_file(ut_testdata(files[i]), i < n - 2);
		if (ut_current_failed)
			return;
	}
}

UT_TEST(minidebug_absent_is_enoent)
{
	struct elf_file *elf = NULL;
	struct minidebug md;
	struct err e = { 0 };
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	UT_ASSERT(n > 0);
	self[n] = 0;
	UT_ASSERT(!elf_open(self, &elf, &e));
	UT_EQ_INT(minidebug_open(elf, &md, &e), -ENOENT);
	UT_CONTAINS(e.msg, "no .gnu_debugdata");
	elf_close(elf);
}

/* Builds prog (with static functions), strips it and adds .gnu_debugdata the
 * way Android's build does; returns the stripped file's path (static). */
const char *minidebug_build_test_binary(void);
const char *minidebug_build_test_binary(void)
{
	static char out[1024];
	char dir[1024], cmd[8192];
	const char *src =
		"#define NI __attribute__((noinline))\\n"
		"static int NI leaf_one(int x) { return x * 3 + 1; }\\n"
		"static int NI leaf_two(int x) { return leaf_one(x) ^ 5; }\\n"
		"static int NI middle(int x) { return leaf_two(x) + leaf_one(x); }\\n"
		"int exported_entry(int x) { return middle(x) * 2; }\\n"
		"volatile int nterp_sink;\\n"
		"void ExecuteNterpImpl(void) { nterp_sink++; nterp_sink++; }\\n"
		"void EndExecuteNterpImpl(void) { }\\n"
		"int main(int c, char **v) { (void)v; return exported_entry(c) & 1; }\\n";

	snprintf(dir, sizeof(dir), "%s", ut_tmpfile("md"));
	snprintf(out, sizeof(out), "%s/prog.stripped", dir);
	snprintf(cmd, sizeof(cmd),
		 "set -e; mkdir -p '%s'; cd '%s'; printf '%s' > prog.c; "
		 "cc -O1 -g -fno-inline -o prog prog.c; "
		 "nm -D prog --format=posix --defined-only | awk '{print $1}' | sort > dynsyms; "
		 "nm prog --format=posix --defined-only | awk '$2 ~ /[Tt]/ {print $1}' | sort "
		 "> funcsyms; comm -13 dynsyms funcsyms > keep_symbols; "
		 "objcopy --only-keep-debug prog debug; "
		 "objcopy -S --remove-section .gdb_index --remove-section .comment "
		 "--keep-symbols=keep_symbols debug mini_debuginfo; "
		 "rm -f mini_debuginfo.xz; xz mini_debuginfo; "
		 "strip --strip-all -R .comment prog -o prog.stripped; "
		 "objcopy --add-section .gnu_debugdata=mini_debuginfo.xz prog.stripped",
		 dir, dir, src);
	return system(cmd) == 0 ? out : NULL;
}

UT_TEST(minidebug_built_here)
{
	const char *p = minidebug_build_test_binary();
	struct elf_file *elf = NULL;
	struct minidebug md;
	struct err e = { 0 };
	struct elf_symbol s;

	UT_ASSERT(p);
	UT_ASSERT(!elf_open(p, &elf, &e));
	UT_ASSERT(elf_find_symbol(elf, "leaf_one", &s) == -ENOENT);   /* really stripped */
	UT_ASSERT(!minidebug_open(elf, &md, &e));
	UT_ASSERT(!elf_find_symbol(md.elf, "leaf_one", &s));
	UT_ASSERT(!elf_find_symbol(md.elf, "middle", &s));
	UT_ASSERT(s.size > 0);
	minidebug_close(&md);
	elf_close(elf);
}

UT_TEST(minidebug_damaged_section_fails_cleanly)
{
	const char *p = ut_testdata(
		"oat/android-11/x86_64/aosp_x86_64_RP1A.201105.002_eng/boot-ext.oat");
	struct elf_file *elf = NULL, *m = NULL;
	struct elf_section sec;
	struct err e = { 0 };
	const uint8_t *d;
	size_t len;

	UT_ASSERT(!elf_open(p, &elf, &e));
	d = elf_data(elf, &len);
	UT_ASSERT(!elf_find_section(elf, ".gnu_debugdata", &sec));
	uint8_t *copy = malloc(len);
	UT_ASSERT(copy);
	for (unsigned k = 0; k < 40; k++) {
		struct minidebug md;
		memcpy(copy, d, len);
		copy[sec.offset + (k * 7919) % sec.size] ^= (uint8_t)(1 + k);
		UT_ASSERT(!elf_open_mem("dmg", copy, len, &m, &e));
		e.msg[0] = 0;
		int rc = minidebug_open(m, &md, &e);
		UT_ASSERT(rc < 0);
		UT_CONTAINS(e.msg, "dmg!.gnu_debugdata");
		elf_close(m);
	}
	free(copy);
	elf_close(elf);
}

/* An embedded ELF for another machine is refused (found by fuzz_minidebug: the
 * message used the embedded ELF after closing it). */
UT_TEST(minidebug_machine_mismatch_is_refused)
{
	const char *p = ut_testdata(
		"oat/android-11/arm64/xiaomi_sweet_vendor_MIUI12.5.8_RKFMIXM/CneApp.odex");
	struct elf_file *elf = NULL, *m = NULL;
	struct minidebug md;
	struct err e = { 0 };
	const uint8_t *d;
	size_t len;

	UT_ASSERT(!elf_open(p, &elf, &e));
	d = elf_data(elf, &len);
	uint8_t *copy = malloc(len);
	UT_ASSERT(copy);
	memcpy(copy, d, len);
	copy[18] = EM_X86_64;   /* e_machine of the outer file */
	copy[19] = 0;
	UT_ASSERT(!elf_open_mem("x86", copy, len, &m, &e));
	UT_EQ_INT(minidebug_open(m, &md, &e), -EINVAL);
	UT_CONTAINS(e.msg, "embedded ELF is for machine 183, the file for 62");
	elf_close(m);
	free(copy);
	elf_close(elf);
}
