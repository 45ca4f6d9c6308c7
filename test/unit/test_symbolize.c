/* test_symbolize.c — the symbolizer over real files and maps lines.
 *
 *  - Java: every compiled method recorded in oat-expected/ (signature, file
 *    offset, code size: written from the `methods` output of an independent
 *    run) of real oat files, mapped at a made-up load address: start, middle
 *    and last byte give kind java and that signature; sym_java_method_at gives
 *    the code range and CodeInfo frame size; each stack map's native pc gives
 *    its dex pc.  Where the oat file has .gnu_debugdata, the method name there
 *    (written by dex2oat) must equal ours without the parameters.
 *  - Native: a stripped binary with mini debug info built here, and this unit
 *    binary through its own /proc/self/maps (a real load bias).
 *  - JIT, interpreter and unknown mappings; the caches (one open per file). */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/codeinfo.h"
#include "formats/elf.h"
#include "formats/minidebug.h"
#include "formats/oat.h"
#include "formats/oat_dexfile.h"
#include "formats/oat_methods.h"
#include "stack/symbolize.h"
#include "ut.h"

#define BASE 0x7f1200000000ull

const char *minidebug_build_test_binary(void);

/* Maps lines placing every executable PT_LOAD of path at BASE + p_vaddr. */
static void maps_for(const char *path, char *buf, size_t size)
{
	struct elf_file *e = NULL;
	struct err er = { 0 };
	const struct elf_segment *seg;
	size_t o = 0, n;

	buf[0] = 0;
	if (elf_open(path, &e, &er))
		return;
	n = elf_load_segments(e, &seg);
	for (size_t i = 0; i < n; i++) {
		if (!(seg[i].flags & PF_X))
			continue;
		uint64_t start = (BASE + seg[i].vaddr) & ~0xfffull;
		uint64_t end = (BASE + seg[i].vaddr + seg[i].memsz + 0xfff) & ~0xfffull;
		o += (size_t)snprintf(buf + o, size - o, "%llx-%llx r-xp %08llx fd:01 1234  %s\n",
				      (unsigned long long)start, (unsigned long long)end,
				      (unsigned long long)(seg[i].offset & ~0xfffull), path);
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
 * address, gives kind java and the row's dex pc (the first non-OSR row there). */
static void check_stack_maps(struct symbolizer *s, struct sym_maps *m, const char *path,
			     struct jstats *js)
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
			struct sym_frame fr;
			uint32_t want = SYM_NO_DEX_PC;
			if (!rows[r].native_pc)
				continue;
			for (uint32_t k = 0; k < n; k++)
				if (rows[k].native_pc == rows[r].native_pc && rows[k].kind != 1 &&
				    rows[k].dex_pc != 0xffffffffu) {
					want = rows[k].dex_pc;
					break;
				}
			sym_lookup(s, m, BASE + om->code.vaddr + rows[r].native_pc,
				   SYM_RETURN_ADDRESS, &fr, &e);
			if (fr.kind != SYM_JAVA || fr.dex_pc != want) {
				ut_fail(__FILE__, __LINE__, "%s: code 0x%x native pc 0x%x: kind %s "
					"dex pc 0x%x, want 0x%x", path, om->code.code_offset,
					rows[r].native_pc, sym_kind_name(fr.kind), fr.dex_pc, want);
				break;
			}
			js->stackmaps++;
			js->lines += fr.line != 0;
		}
		free(rows);
	}
	oat_method_list_free(&ml);
	oat_dexset_free(ds);
	oat_close(o);
}

/* One expected-methods file: every method's PCs. */
static void java_file(const char *oat_rel, const char *jsonl_rel, struct jstats *js)
{
	char path[1024], maps[4096], line[8192], sig[4096], want[4096];
	struct symbolizer *s = NULL;
	struct sym_maps *m = NULL;
	struct err e = { 0 };
	struct elf_file *elf = NULL;
	struct minidebug md = { 0 };
	bool has_md = false;
	int64_t delta = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s", ut_testdata(oat_rel));
	maps_for(path, maps, sizeof(maps));
	UT_ASSERT(maps[0]);
	UT_ASSERT(!sym_new(NULL, &s, &e));
	UT_ASSERT(!sym_maps_parse(s, maps, strlen(maps), &m, &e));
	UT_ASSERT(!elf_open(path, &elf, &e));
	has_md = !minidebug_open(elf, &md, &e);
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
		struct sym_frame fr;
		struct sym_java_method jm;
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
			sym_lookup(s, m, probes[k], 0, &fr, &e);
			if (fr.kind != SYM_JAVA) {
				ut_fail(__FILE__, __LINE__, "%s: 0x%llx (%s) kind %s: %s",
					oat_rel, (unsigned long long)foff, want,
					sym_kind_name(fr.kind), e.msg);
				goto out;
			}
		}
		/* Methods sharing code print the first sharer's signature: accept any
		 * sharer by checking that some record at this offset has it. */
		snprintf(sig, sizeof(sig), "%s", fr.symbol);
		size_t sl = strlen(sig);
		if (sl == SYM_SYMBOL_MAX - 1 && !strcmp(sig + sl - 3, "...") &&
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
		UT_EQ_INT(fr.file_offset, foff + size - 1);
		if (sym_java_method_at(s, m, pc + 1, 0, &jm, &e)) {
			ut_fail(__FILE__, __LINE__, "%s: %s", oat_rel, e.msg);
			goto out;
		}
		UT_EQ_U64(jm.code_start, pc);
		UT_EQ_U64(jm.code_size, size);
		UT_ASSERT(jm.frame_size % 16 == 0);
		if (has_md) {
			/* dex2oat's CFI (in .gnu_debugdata's .debug_frame) at the entry:
			 * CFA = sp + 8 (x86_64: the return address) or sp + 0 (arm64). */
			struct cfi_row row;
			bool x86 = jm.e_machine == EM_X86_64;
			if (sym_cfi_at(s, m, pc, 0, &row, NULL, &e)) {
				ut_fail(__FILE__, __LINE__, "%s: %s", oat_rel, e.msg);
				goto out;
			}
			UT_EQ_INT(row.cfa_reg, x86 ? CFI_X86_64_RSP : CFI_ARM64_SP);
			UT_EQ_INT(row.cfa_off, x86 ? 8 : 0);
			UT_ASSERT(row.from_debug_frame);
			js->cfi++;
			/* CodeInfo's frame size against dex2oat's CFI: the largest CFA
			 * offset over the method's rows is the frame size (x86_64 counts
			 * the return address in both). */
			int64_t max_off = 0;
			for (uint64_t a = pc; a < pc + size;) {
				if (sym_cfi_at(s, m, a, 0, &row, NULL, &e))
					break;
				max_off = row.cfa_off > max_off ? row.cfa_off : max_off;
				a = BASE + row.row_end > a ? BASE + row.row_end : a + 1;
			}
			if (jm.frame_size && (uint64_t)max_off != jm.frame_size) {
				ut_fail(__FILE__, __LINE__,
					"%s: %s: CodeInfo frame %u, CFI max CFA offset %lld",
					oat_rel, sig, jm.frame_size, (long long)max_off);
				goto out;
			}
			js->frames += jm.frame_size != 0;
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
	check_stack_maps(s, m, path, js);
	if (has_md)
		minidebug_close(&md);
	elf_close(elf);
	struct sym_stats st;
	sym_get_stats(s, &st);
	UT_EQ_INT(st.files_opened, 1);
	UT_EQ_INT(st.method_tables_built, 1);
	sym_maps_free(m);
	sym_free(s);
}

UT_TEST(symbolize_java_methods_x86_64)
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

UT_TEST(symbolize_java_methods_arm64)
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
UT_TEST(symbolize_native_minidebug_binary)
{
	const char *stripped = minidebug_build_test_binary();
	char full[1024], maps[4096];
	struct nm_sym syms[64];
	struct symbolizer *s = NULL;
	struct sym_maps *m = NULL;
	struct err e = { 0 };
	size_t n;
	unsigned checked = 0, interp = 0;

	UT_ASSERT(stripped);
	snprintf(full, sizeof(full), "%s", stripped);
	full[strlen(full) - strlen(".stripped")] = 0;   /* the unstripped "prog" */
	n = nm_funcs(full, syms, 64);
	UT_ASSERT(n >= 6);
	maps_for(stripped, maps, sizeof(maps));
	UT_ASSERT(!sym_new(NULL, &s, &e));
	UT_ASSERT(!sym_maps_parse(s, maps, strlen(maps), &m, &e));
	for (size_t i = 0; i < n; i++) {
		struct sym_frame fr;
		struct cfi_row row;
		uint64_t bias;
		char want[300];
		uint64_t pc = BASE + syms[i].value;
		bool is_interp = !strcmp(syms[i].name, "ExecuteNterpImpl");
		sym_lookup(s, m, pc, 0, &fr, &e);
		UT_EQ_STR(fr.symbol, syms[i].name);
		UT_EQ_INT(fr.kind, is_interp ? SYM_INTERPRETED : SYM_NATIVE);
		if (syms[i].size > 1) {
			sym_lookup(s, m, pc + syms[i].size - 1, 0, &fr, &e);
			snprintf(want, sizeof(want), "%s+0x%llx", syms[i].name, syms[i].size - 1);
			UT_EQ_STR(fr.symbol, want);
			/* as a return address just past the function: still this one */
			sym_lookup(s, m, pc + syms[i].size, SYM_RETURN_ADDRESS, &fr, &e);
			snprintf(want, sizeof(want), "%s+0x%llx", syms[i].name, syms[i].size);
			UT_EQ_STR(fr.symbol, want);
		}
		interp += is_interp;
		UT_EQ_INT(sym_cfi_at(s, m, pc, 0, &row, &bias, &e), 0);
		UT_EQ_U64(bias, BASE);
		UT_EQ_INT(row.fde_start, syms[i].value);
		checked++;
	}
	UT_EQ_INT(interp, 1);
	struct sym_stats st;
	sym_get_stats(s, &st);
	UT_EQ_INT(st.files_opened, 1);
	UT_EQ_INT(st.method_tables_built, 0);
	UT_ASSERT(checked >= 6);
	sym_maps_free(m);
	sym_free(s);
}

static int __attribute__((noinline)) symbolize_probe_target(int x)
{
	return x * 7 + 3;
}

/* This process through its real /proc/self/maps (PIE: a real load bias). */
UT_TEST(symbolize_self_process)
{
	struct symbolizer *s = NULL;
	struct sym_maps *m = NULL, *m2 = NULL;
	struct err e = { 0 };
	struct sym_frame fr;
	struct cfi_row row;
	uint64_t pc = (uint64_t)(uintptr_t)&symbolize_probe_target;

	UT_ASSERT(symbolize_probe_target(1) == 10);
	UT_ASSERT(!sym_new(NULL, &s, &e));
	UT_ASSERT(!sym_maps_read(s, NULL, getpid(), &m, &e));
	sym_lookup(s, m, pc, 0, &fr, &e);
	UT_EQ_INT(fr.kind, SYM_NATIVE);
	UT_EQ_STR(fr.symbol, "symbolize_probe_target");
	UT_ASSERT(fr.file && strstr(fr.file, "unit_tests"));
	sym_lookup(s, m, pc + 2, 0, &fr, &e);
	UT_EQ_STR(fr.symbol, "symbolize_probe_target+0x2");
	UT_EQ_INT(sym_cfi_at(s, m, pc, 0, &row, NULL, &e), 0);
	UT_EQ_INT(row.cfa_reg, CFI_X86_64_RSP);
	UT_EQ_INT(row.cfa_off, 8);
	UT_EQ_INT(row.regs[CFI_X86_64_RA].kind, CFI_RULE_OFFSET);
	UT_EQ_INT(row.regs[CFI_X86_64_RA].off, -8);
	/* a second maps read reuses every file */
	struct sym_stats a, b;
	sym_get_stats(s, &a);
	UT_ASSERT(!sym_maps_read(s, NULL, getpid(), &m2, &e));
	sym_lookup(s, m2, pc, 0, &fr, &e);
	sym_get_stats(s, &b);
	UT_EQ_INT(b.files_opened, a.files_opened);
	UT_EQ_INT(b.files_failed, a.files_failed);
	UT_EQ_STR(fr.symbol, "symbolize_probe_target");
	/* not a compiled Java method */
	struct sym_java_method jm;
	UT_EQ_INT(sym_java_method_at(s, m, pc, 0, &jm, &e), -ENOENT);
	sym_maps_free(m2);
	sym_maps_free(m);
	sym_free(s);
}

UT_TEST(symbolize_jit_unknown_and_missing_files)
{
	const char *maps =
		"7000000000-7000100000 r-xp 00000000 00:01 11 /memfd:jit-cache (deleted)\n"
		"7100000000-7100100000 r-xp 00000000 00:00 0 [anon:dalvik-jit-code-cache]\n"
		"7200000000-7200001000 r-xp 00000000 fd:01 99 /no/such/lib.so\n"
		"7300000000-7300001000 r--p 00000000 fd:01 98 /no/such/data.bin\n"
		"7400000000-7400001000 r-xp 00000000 00:00 0 [vdso]\n"
		"garbage line\n";
	struct symbolizer *s = NULL;
	struct sym_maps *m = NULL;
	struct err e = { 0 };
	struct sym_frame fr;
	struct cfi_row row;

	UT_ASSERT(!sym_new(NULL, &s, &e));
	UT_ASSERT(!sym_maps_parse(s, maps, strlen(maps), &m, &e));
	sym_lookup(s, m, 0x7000000010, 0, &fr, &e);
	UT_EQ_INT(fr.kind, SYM_JIT);
	UT_EQ_U64(fr.file_offset, 0x10);
	sym_lookup(s, m, 0x7100000010, 0, &fr, &e);
	UT_EQ_INT(fr.kind, SYM_JIT);
	e.code = 0;
	sym_lookup(s, m, 0x7200000010, 0, &fr, &e);
	UT_EQ_INT(fr.kind, SYM_UNKNOWN);
	UT_EQ_STR(fr.file, "/no/such/lib.so");
	UT_ASSERT(e.code < 0);
	UT_CONTAINS(e.msg, "/no/such/lib.so");
	sym_lookup(s, m, 0x7300000010, 0, &fr, &e);   /* not executable: no mapping */
	UT_EQ_INT(fr.kind, SYM_UNKNOWN);
	UT_ASSERT(fr.file == NULL);
	sym_lookup(s, m, 0x7400000010, 0, &fr, &e);
	UT_EQ_INT(fr.kind, SYM_UNKNOWN);
	UT_EQ_STR(fr.file, "[vdso]");
	sym_lookup(s, m, 0x10, 0, &fr, &e);
	UT_EQ_INT(fr.kind, SYM_UNKNOWN);
	UT_EQ_INT(sym_cfi_at(s, m, 0x7000000010, 0, &row, NULL, &e), -ENOENT);
	/* the missing file was tried once */
	sym_lookup(s, m, 0x7200000020, 0, &fr, &e);
	struct sym_stats st;
	sym_get_stats(s, &st);
	UT_EQ_INT(st.files_failed, 1);
	UT_EQ_STR(sym_kind_name(SYM_INTERPRETED), "interpreted");
	sym_maps_free(m);
	sym_free(s);
}
