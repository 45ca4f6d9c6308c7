/* test_codecache.c — the code cache (code/codecache.h) over real files
 * and maps lines (a made-up proc directory: <dir>/<pid>/maps).
 *
 *  - Java: every compiled method recorded in oat-expected/ (signature, file
 *    offset, code size: written from the `methods` output of an independent
 *    run) of real oat files, mapped at a made-up load address: start, middle
 *    and last byte give kind java and that signature, the code start and the
 *    CodeInfo frame size; each stack map's native pc gives its dex pc (ART's
 *    rule: an exact Default or OSR map).  Where the oat file has
 *    .gnu_debugdata, the method name there (written by dex2oat) must equal
 *    ours without the parameters, and dex2oat's CFI must agree with the
 *    CodeInfo frame size.
 *  - Native: a stripped binary with mini debug info built here, and this unit
 *    binary through its own /proc/self/maps (a real load bias).
 *  - JIT, interpreter and unknown mappings; the caches (one open and one
 *    parse per file, whatever number of processes map it). */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "formats/cfi.h"
#include "formats/codeinfo.h"
#include "formats/elf.h"
#include "formats/minidebug.h"
#include "formats/oat.h"
#include "formats/oat_dexfile.h"
#include "formats/oat_methods.h"
#include "code/codecache.h"
#include "ut.h"

#define BASE 0x7f1200000000ull
#define PID 4242

/* A proc directory whose <pid>/maps holds text; the directory's path. */
static const char *fake_proc(const char *name, unsigned pid, const char *text)
{
	const char *dir = ut_tmpfile(name);
	char path[1024];
	FILE *f;

	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/%u", dir, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%u/maps", dir, pid);
	f = fopen(path, "w");
	if (!f) {
		ut_fail(__FILE__, __LINE__, "cannot write %s", path);
		return dir;
	}
	fputs(text, f);
	fclose(f);
	return dir;
}

/* "name" at a symbol's start, else "name+0xOFF" (as the frames print). */
static const char *sym_text(const struct code_info *ci, char *buf, size_t size)
{
	if (!ci->symbol)
		snprintf(buf, size, "%s", "");
	else if (!ci->symbol_off)
		snprintf(buf, size, "%s", ci->symbol);
	else
		snprintf(buf, size, "%s+0x%llx", ci->symbol, (unsigned long long)ci->symbol_off);
	return buf;
}

static struct code_info look(struct code_cache *c, uint64_t pc, bool is_return)
{
	struct code_info ci;

	memset(&ci, 0, sizeof(ci));
	if (code_cache_lookup(c, PID, pc, is_return, &ci) != 0)
		ut_fail(__FILE__, __LINE__, "lookup of 0x%llx failed", (unsigned long long)pc);
	return ci;
}

const char *minidebug_build_test_binary(void);

/* Maps lines placing every executable PT_LOAD of path at BASE + p_vaddr, with its
 * device and inode (the cache opens the file the process mapped: sys/proc_path.h). */
static void maps_for(const char *path, char *buf, size_t size)
{
	struct elf_file *e = NULL;
	struct err er = { 0 };
	const struct elf_segment *seg;
	struct stat st;
	size_t o = 0, n;

	buf[0] = 0;
	if (stat(path, &st) != 0 || elf_open(path, &e, &er))
		return;
	n = elf_load_segments(e, &seg);
	for (size_t i = 0; i < n; i++) {
		if (!(seg[i].flags & PF_X))
			continue;
		uint64_t start = (BASE + seg[i].vaddr) & ~0xfffull;
		uint64_t end = (BASE + seg[i].vaddr + seg[i].memsz + 0xfff) & ~0xfffull;
		o += (size_t)snprintf(buf + o, size - o, "%llx-%llx r-xp %08llx %x:%x %llu  %s\n",
				      (unsigned long long)start, (unsigned long long)end,
				      (unsigned long long)(seg[i].offset & ~0xfffull),
				      major(st.st_dev), minor(st.st_dev),
				      (unsigned long long)st.st_ino, path);
	}
	elf_close(e);
}

static bool json_str(const char *line, const char *key, char *out, size_t size)
{
	char pat[64];
	const char *p;
	size_t i = 0;

	snprintf(pat, sizeof(pat), "\"%s\": \"", key);
	if (!(p = strstr(line, pat)))
		return false;
	for (p += strlen(pat); *p && *p != '"' && i + 1 < size; p++)
		out[i++] = *p;
	out[i] = 0;
	return true;
}

static bool json_num(const char *line, const char *key, unsigned long long *v)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	if (!(p = strstr(line, pat)))
		return false;
	*v = strtoull(p + strlen(pat), NULL, 10);
	return true;
}

/* "int a.b.C.m(long)" -> "a.b.C.m" (the form dex2oat's mini debug info uses). */
static void strip_sig(const char *sig, char *out, size_t size)
{
	const char *sp = strchr(sig, ' '), *par = strchr(sig, '(');
	const char *from = sp && (!par || sp < par) ? sp + 1 : sig;
	size_t n = par ? (size_t)(par - from) : strlen(from);

	snprintf(out, size, "%.*s", (int)n, from);
}

struct jstats {
	unsigned long methods, stackmaps, lines, md_names, cfi, frames;
};

/* Every stack map of every compiled method: its native pc, as a return
 * address, gives kind java and the dex pc of the first Default or OSR row
 * there (ART's GetStackMapForNativePcOffset), or none. */
static void check_stack_maps(struct code_cache *c, const char *path, struct jstats *js)
{
	struct oat_file *o = NULL;
	struct oat_dexset *ds = NULL;
	struct oat_method_list ml = { 0 };
	struct err e = { 0 };

	UT_ASSERT(!oat_open(path, &o, &e));
	UT_ASSERT(!oat_dexset_new(o, path, NULL, 0, &ds, &e));
	UT_ASSERT(!oat_list_methods(o, ds, &ml, &e));
	for (size_t i = 0; i < ml.n && !ut_current_failed; i++) {
		const struct oat_method *om = &ml.v[i];
		struct art_frame_info fi;
		struct art_stack_map *rows = NULL;
		uint32_t n = 0;
		if (om->dedup_first != i || !om->code.code_size ||
		    oat_code_frame_info(o, &om->code, &fi, &rows, &n, &e))
			continue;
		for (uint32_t r = 0; r < n; r++) {
			struct code_info ci;
			uint32_t want = UINT32_MAX;
			bool hit = false;
			if (!rows[r].native_pc)
				continue;
			for (uint32_t k = 0; k < n; k++)
				if (rows[k].native_pc == rows[r].native_pc &&
				    (rows[k].kind == -1 || rows[k].kind == 1)) {
					want = rows[k].dex_pc;
					hit = true;
					break;
				}
			ci = look(c, BASE + om->code.vaddr + rows[r].native_pc, true);
			if (ci.kind != FRAME_JAVA || ci.dex_pc != want || ci.stack_map_hit != hit) {
				ut_fail(__FILE__, __LINE__, "%s: code 0x%x native pc 0x%x: kind %s "
					"dex pc 0x%x, want 0x%x", path, om->code.code_offset,
					rows[r].native_pc, frame_kind_name(ci.kind), ci.dex_pc, want);
				break;
			}
			js->stackmaps++;
			js->lines += ci.line != 0;
		}
		free(rows);
	}
	oat_method_list_free(&ml);
	oat_dexset_free(ds);
	oat_close(o);
}

/* The largest CFA offset of dex2oat's CFI rows over [vaddr, vaddr + size)
 * (the frame size: x86_64 counts the return address in both); -1 when no
 * row covers vaddr.  *entry_off: the CFA offset at vaddr. */
static int64_t cfi_max_off(const struct cfi_table *t, uint64_t vaddr, uint64_t size,
			   struct cfi_row *entry)
{
	struct err e = { 0 };
	struct cfi_row row;
	int64_t max_off = 0;

	if (cfi_row_at(t, vaddr, entry, &e))
		return -1;
	for (uint64_t a = vaddr; a < vaddr + size;) {
		if (cfi_row_at(t, a, &row, &e))
			break;
		max_off = row.cfa_off > max_off ? row.cfa_off : max_off;
		a = row.row_end > a ? row.row_end : a + 1;
	}
	return max_off;
}

/* One expected-methods file: every method's PCs. */
static void java_file(const char *oat_rel, const char *jsonl_rel, struct jstats *js)
{
	char path[1024], maps[4096], line[8192], sig[4096], want[4096];
	struct code_cache *c = NULL;
	struct err e = { 0 };
	struct elf_file *elf = NULL;
	struct minidebug md = { 0 };
	struct cfi_table *md_cfi = NULL;
	bool has_md = false;
	int64_t delta = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s", ut_testdata(oat_rel));
	maps_for(path, maps, sizeof(maps));
	UT_ASSERT(maps[0]);
	UT_ASSERT((c = code_cache_new(fake_proc("java-proc", PID, maps))) != NULL);
	UT_ASSERT(!elf_open(path, &elf, &e));
	has_md = !minidebug_open(elf, &md, &e);
	if (has_md)
		UT_ASSERT(!cfi_open(md.elf, &md_cfi, &e));
	{
		const struct elf_segment *seg;
		size_t n = elf_load_segments(elf, &seg);
		for (size_t i = 0; i < n; i++)
			if (seg[i].flags & PF_X)
				delta = (int64_t)seg[i].vaddr - (int64_t)seg[i].offset;
	}
	UT_ASSERT((f = fopen(ut_testdata(jsonl_rel), "r")) != NULL);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long foff, size;
		struct code_info ci;
		if (!json_num(line, "file_offset", &foff) || !json_num(line, "code_size", &size) ||
		    !size)
			continue;
		/* Without the dex, the name comes from .gnu_debugdata (mdi_name). */
		if (!json_str(line, "signature", want, sizeof(want)) &&
		    !json_str(line, "mdi_name", want, sizeof(want)))
			snprintf(want, sizeof(want), "<dex #");
		uint64_t pc = BASE + (uint64_t)((int64_t)foff + delta);
		uint64_t probes[3] = { pc, pc + size / 2, pc + size - 1 };
		for (int k = 0; k < 3; k++) {
			ci = look(c, probes[k], false);
			if (ci.kind != FRAME_JAVA || ci.symbol_off != probes[k] - pc) {
				ut_fail(__FILE__, __LINE__, "%s: 0x%llx (%s) kind %s: %s",
					oat_rel, (unsigned long long)foff, want,
					frame_kind_name(ci.kind), ci.why ? ci.why : "");
				goto out;
			}
		}
		/* Methods sharing code print the first sharer's signature: accept any
		 * sharer by checking that some record at this offset has it. */
		snprintf(sig, sizeof(sig), "%s", ci.symbol ? ci.symbol : "");
		size_t sl = strlen(sig);
		if (sl == CODE_NAME_MAX - 1 && !strcmp(sig + sl - 3, "...") &&
		    !strncmp(sig, want, sl - 3))
			snprintf(sig, sizeof(sig), "%s", want);   /* truncated, prefix equal */
		if (!strcmp(want, "<dex #") && !strncmp(sig, want, 6))
			snprintf(sig, sizeof(sig), "%s", want);
		if (strcmp(sig, want)) {
			char cmd[2400], l2[8192];
			bool ok = false;
			FILE *g;
			snprintf(cmd, sizeof(cmd), "grep -F '\"file_offset\": %llu,' '%s'", foff,
				 ut_testdata(jsonl_rel));
			g = popen(cmd, "r");
			while (g && fgets(l2, sizeof(l2), g)) {
				char w2[4096];
				if ((json_str(l2, "signature", w2, sizeof(w2)) ||
				     json_str(l2, "mdi_name", w2, sizeof(w2))) && !strcmp(w2, sig))
					ok = true;
			}
			if (g)
				pclose(g);
			if (!ok) {
				ut_fail(__FILE__, __LINE__, "%s+0x%llx: \"%s\" != \"%s\"",
					oat_rel, foff, sig, want);
				goto out;
			}
		}
		UT_EQ_INT(ci.offset, foff + size - 1);
		ci = look(c, pc + 1, false);
		UT_EQ_U64(pc + 1 - ci.symbol_off, pc);
		UT_ASSERT(ci.frame_size % 16 == 0);
		if (has_md) {
			/* dex2oat's CFI (in .gnu_debugdata's .debug_frame) at the entry:
			 * CFA = sp + 8 (x86_64: the return address) or sp + 0 (arm64);
			 * its largest CFA offset over the method is the CodeInfo frame
			 * size. */
			struct cfi_row row;
			bool x86 = elf_machine(elf) == EM_X86_64;
			uint64_t vaddr = (uint64_t)((int64_t)foff + delta);
			int64_t max_off = cfi_max_off(md_cfi, vaddr, size, &row);
			if (max_off < 0) {
				ut_fail(__FILE__, __LINE__, "%s: no CFI at 0x%llx", oat_rel,
					(unsigned long long)vaddr);
				goto out;
			}
			UT_EQ_INT(row.cfa_reg, x86 ? CFI_X86_64_RSP : CFI_ARM64_SP);
			UT_EQ_INT(row.cfa_off, x86 ? 8 : 0);
			UT_ASSERT(row.from_debug_frame);
			js->cfi++;
			if (ci.frame_size && (uint64_t)max_off != ci.frame_size) {
				ut_fail(__FILE__, __LINE__,
					"%s: %s: CodeInfo frame %u, CFI max CFA offset %lld",
					oat_rel, sig, ci.frame_size, (long long)max_off);
				goto out;
			}
			js->frames += ci.frame_size != 0;
			struct elf_symbol es;
			char shortname[4096];
			strip_sig(sig, shortname, sizeof(shortname));
			if (!elf_find_symbol(md.elf, shortname, &es) && es.value == foff + delta)
				js->md_names++;
		}
		js->methods++;
	}
out:
	fclose(f);
	check_stack_maps(c, path, js);
	cfi_close(md_cfi);
	if (has_md)
		minidebug_close(&md);
	elf_close(elf);
	struct code_cache_stats st;
	code_cache_get_stats(c, &st);
	UT_EQ_INT(st.files_opened, 1);
	UT_EQ_INT(st.oat_parsed, 1);
	code_cache_free(c);
}

UT_TEST(codecache_java_methods_x86_64)
{
	struct jstats js = { 0 };
	const char *d = "aosp_x86_64_RP1A.201105.002_eng/";
	char a[512], b[512];

	snprintf(a, sizeof(a), "oat/android-11/x86_64/%sboot-ext.oat", d);
	snprintf(b, sizeof(b), "oat-expected/android-11/x86_64/%sboot-ext.oat.jsonl", d);
	java_file(a, b, &js);
	fprintf(stderr, "    boot-ext.oat: %lu methods, %lu names equal to .gnu_debugdata's, "
		"%lu stack maps, %lu with a source line, %lu frame sizes = CFI\n", js.methods,
		js.md_names, js.stackmaps, js.lines, js.frames);
	UT_ASSERT(js.stackmaps > 1000);
	UT_ASSERT(js.lines > 500);
	UT_EQ_INT(js.cfi, js.methods);
	UT_ASSERT(js.frames > 100);
	UT_ASSERT(js.methods > 200);
	/* dex2oat's symbol names: nearly all (overloads share a name, so the
	 * symbol with that name may be another overload) */
	UT_ASSERT(js.md_names * 10 >= js.methods * 8);
}

UT_TEST(codecache_java_methods_arm64)
{
	struct jstats js = { 0 };
	const char *d = "android-13/arm64/realme_ice_ossi_TP1A.220905.001/";
	static const char *const files[] = {
		"boot-okhttp.oat", "org.apache.http.legacy.odex",
		"apex@com.android.permission@javalib@service-permission.jar@classes.odex",
	};
	char a[512], b[512];

	for (size_t i = 0; i < 3 && !ut_current_failed; i++) {
		snprintf(a, sizeof(a), "oat/%s%s", d, files[i]);
		snprintf(b, sizeof(b), "oat-expected/%s%s.jsonl", d, files[i]);
		java_file(a, b, &js);
	}
	fprintf(stderr, "    arm64: %lu methods, %lu names equal to .gnu_debugdata's, "
		"%lu stack maps, %lu with a line, %lu frame sizes = CFI\n", js.methods, js.md_names,
		js.stackmaps, js.lines, js.frames);
	UT_ASSERT(js.methods > 3000);
	UT_ASSERT(js.stackmaps > 5000);
	UT_ASSERT(js.cfi > 2000);
	UT_ASSERT(js.frames > 1000);
	UT_ASSERT(js.md_names * 10 >= js.methods * 7);
}

struct nm_sym {
	unsigned long long value, size;
	char name[256];
};

/* Function symbols of the unstripped build (nm -S). */
static size_t nm_funcs(const char *path, struct nm_sym *v, size_t max)
{
	char cmd[1200], line[1024];
	size_t n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm -S --defined-only '%s'", path);
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f) && n < max) {
		char t;
		int k = sscanf(line, "%llx %llx %c %255s", &v[n].value, &v[n].size, &t, v[n].name);
		if (k == 4 && (t == 't' || t == 'T') && v[n].size)
			n++;
	}
	if (f)
		pclose(f);
	return n;
}

/* The stripped binary with mini debug info: every function of the unstripped
 * build symbolizes to its name (start) and name+0xOFF (inside); the nterp
 * range is "interpreted"; CFI rows come from its .eh_frame. */
UT_TEST(codecache_native_minidebug_binary)
{
	const char *stripped = minidebug_build_test_binary();
	char full[1024], maps[4096], got[600];
	struct nm_sym syms[64];
	struct code_cache *c = NULL;
	size_t n;
	unsigned checked = 0, interp = 0;

	UT_ASSERT(stripped);
	snprintf(full, sizeof(full), "%s", stripped);
	full[strlen(full) - strlen(".stripped")] = 0;   /* the unstripped "prog" */
	n = nm_funcs(full, syms, 64);
	UT_ASSERT(n >= 6);
	maps_for(stripped, maps, sizeof(maps));
	UT_ASSERT((c = code_cache_new(fake_proc("native-proc", PID, maps))) != NULL);
	for (size_t i = 0; i < n; i++) {
		struct code_info ci;
		char want[300];
		uint64_t pc = BASE + syms[i].value;
		bool is_interp = !strcmp(syms[i].name, "ExecuteNterpImpl");
		ci = look(c, pc, false);
		UT_EQ_STR(sym_text(&ci, got, sizeof(got)), syms[i].name);
		UT_EQ_INT(ci.kind, is_interp ? FRAME_INTERPRETED : FRAME_NATIVE);
		/* CFI at the function's entry: its FDE */
		UT_ASSERT(ci.has_cfi);
		UT_EQ_INT(ci.cfi.fde_start, syms[i].value);
		if (syms[i].size > 1) {
			ci = look(c, pc + syms[i].size - 1, false);
			snprintf(want, sizeof(want), "%s+0x%llx", syms[i].name, syms[i].size - 1);
			UT_EQ_STR(sym_text(&ci, got, sizeof(got)), want);
			/* as a return address just past the function: still this one */
			ci = look(c, pc + syms[i].size, true);
			snprintf(want, sizeof(want), "%s+0x%llx", syms[i].name, syms[i].size);
			UT_EQ_STR(sym_text(&ci, got, sizeof(got)), want);
		}
		interp += is_interp;
		checked++;
	}
	UT_EQ_INT(interp, 1);
	struct code_cache_stats st;
	code_cache_get_stats(c, &st);
	UT_EQ_INT(st.files_opened, 1);
	UT_EQ_INT(st.oat_parsed, 0);
	UT_ASSERT(checked >= 6);
	code_cache_free(c);
}

static int __attribute__((noinline)) codecache_probe_target(int x)
{
	return x * 7 + 3;
}

/* This process through its real /proc/self/maps (PIE: a real load bias). */
UT_TEST(codecache_self_process)
{
	struct code_cache *c = code_cache_new(NULL);
	struct code_info ci;
	char got[600];
	uint64_t pc = (uint64_t)(uintptr_t)&codecache_probe_target;
	uint32_t self = (uint32_t)getpid();

	UT_ASSERT(c != NULL);
	UT_ASSERT(codecache_probe_target(1) == 10);
	UT_EQ_INT(code_cache_lookup(c, self, pc, false, &ci), 0);
	UT_EQ_INT(ci.kind, FRAME_NATIVE);
	UT_EQ_STR(sym_text(&ci, got, sizeof(got)), "codecache_probe_target");
	UT_ASSERT(ci.file && strstr(ci.file, "unit_tests"));
	UT_ASSERT(ci.has_cfi);
	UT_EQ_INT(ci.cfi.cfa_reg, CFI_X86_64_RSP);
	UT_EQ_INT(ci.cfi.cfa_off, 8);
	UT_EQ_INT(ci.cfi.regs[CFI_X86_64_RA].kind, CFI_RULE_OFFSET);
	UT_EQ_INT(ci.cfi.regs[CFI_X86_64_RA].off, -8);
	code_cache_lookup(c, self, pc + 2, false, &ci);
	UT_EQ_STR(sym_text(&ci, got, sizeof(got)), "codecache_probe_target+0x2");
	/* a second maps read reuses every file */
	struct code_cache_stats a, b;
	code_cache_get_stats(c, &a);
	code_cache_prime(c, self);
	code_cache_lookup(c, self, pc, false, &ci);
	code_cache_get_stats(c, &b);
	UT_EQ_INT(b.maps_read, a.maps_read + 1);
	UT_EQ_INT(b.files_opened, a.files_opened);
	UT_EQ_INT(b.files_failed, a.files_failed);
	UT_EQ_STR(sym_text(&ci, got, sizeof(got)), "codecache_probe_target");
	code_cache_free(c);
}

UT_TEST(codecache_jit_unknown_and_missing_files)
{
	const char *maps =
		"7000000000-7000100000 r-xp 00000000 00:01 11 /memfd:jit-cache (deleted)\n"
		"7100000000-7100100000 r-xp 00000000 00:00 0 [anon:dalvik-jit-code-cache]\n"
		"7200000000-7200001000 r-xp 00000000 fd:01 99 /no/such/lib.so\n"
		"7300000000-7300001000 r--p 00000000 fd:01 98 /no/such/data.bin\n"
		"7400000000-7400001000 r-xp 00000000 00:00 0 [vdso]\n"
		"7500000000-7500100000 r-xp 00000000 00:01 12 /memfd:jit-zygote-cache (deleted)\n"
		"garbage line\n";
	struct code_cache *c = code_cache_new(fake_proc("jit-proc", PID, maps));
	struct code_info ci;

	UT_ASSERT(c != NULL);
	ci = look(c, 0x7000000010, false);
	UT_EQ_INT(ci.kind, FRAME_JIT);
	UT_EQ_U64(ci.offset, 0x10);
	ci = look(c, 0x7100000010, false);
	UT_EQ_INT(ci.kind, FRAME_JIT);
	/* the zygote's JIT cache is JIT code too (one label for every JIT cache) */
	ci = look(c, 0x7500000010, false);
	UT_EQ_INT(ci.kind, FRAME_JIT);
	ci = look(c, 0x7200000010, false);
	UT_EQ_INT(ci.kind, FRAME_UNKNOWN);
	UT_EQ_STR(ci.file, "/no/such/lib.so");
	UT_ASSERT(ci.why != NULL);
	UT_CONTAINS(ci.why, "/no/such/lib.so");
	ci = look(c, 0x7300000010, false);   /* not executable: no mapping */
	UT_EQ_INT(ci.kind, FRAME_UNKNOWN);
	UT_ASSERT(ci.file == NULL);
	ci = look(c, 0x7400000010, false);
	UT_EQ_INT(ci.kind, FRAME_UNKNOWN);
	UT_EQ_STR(ci.file, "[vdso]");
	ci = look(c, 0x10, false);
	UT_EQ_INT(ci.kind, FRAME_UNKNOWN);
	ci = look(c, 0x7000000010, false);
	UT_ASSERT(!ci.has_cfi);
	/* the missing file was tried once */
	ci = look(c, 0x7200000020, false);
	struct code_cache_stats st;
	code_cache_get_stats(c, &st);
	UT_EQ_INT(st.files_failed, 1);
	UT_EQ_STR(frame_kind_name(FRAME_INTERPRETED), "interpreted");
	code_cache_free(c);
}
