/* pattern_native.c — a native pattern (LIB:SYMBOL-GLOB) against one ELF file:
 * function symbols (STT_FUNC, STT_GNU_IFUNC) of .dynsym, .symtab and the
 * mini debug info's .symtab (.gnu_debugdata: the only names a stripped Android
 * executable such as toybox has for its own functions), defined in an
 * executable section and mapped by an executable PT_LOAD, at an
 * instruction-aligned offset (the rules of resolve/native.c).  Aliases (two
 * names at one address) give one probe (pattern_dedup.c).  Also finds a bare library name in a
 * process's maps or the system library directories. */
#include "plan/pattern.h"
#include "plan/pattern_impl.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "code/codecache.h"
#include "code/codefile.h"
#include "formats/elf.h"
#include "formats/ifunc.h"
#include "resolve/demangle.h"
#include "resolve/native.h"
#include "common/zip_path.h"
#include "sys/maps.h"
#include "sys/proc_path.h"

static const char *const LIB_DIRS[] = {
	"/system/lib64", "/system/lib", "/apex/com.android.runtime/lib64/bionic",
	"/apex/com.android.runtime/lib/bionic", "/vendor/lib64", "/vendor/lib",
	"/system_ext/lib64", "/product/lib64",
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
	"/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib", NULL,
};

/* "libc.so" matches libc.so and libc.so.6; "libc" matches libc.so*. */
static bool lib_name_is(const char *base, size_t n, const char *name)
{
	size_t k = strlen(name);

	if (n < k || memcmp(base, name, k))
		return false;
	if (n == k)
		return true;
	return (base[k] == '.' && k >= 3 && !memcmp(name + k - 3, ".so", 3)) ||
	       (n >= k + 3 && !memcmp(base + k, ".so", 3) && (n == k + 3 || base[k + 3] == '.'));
}

struct lib_ctx {
	const char *proc_dir;
	struct code_cache *code;
	int pid;
	const char *name;
	char *buf;
	size_t size;
	char zip_err[400];           /* the first zip mapping that is no stored ELF, why */
};

/* A library mapped from a zip (an APK: bionic maps a stored, page-aligned
 * entry from its data offset): the entry the mapping's offset falls in, when
 * its last component is the name; buf gets "MAPS_PATH!/ENTRY". */
static bool is_zip_lib(struct lib_ctx *lc, const struct proc_mapping *m, const char *slash)
{
	char mapped[PATH_MAX];
	struct code_file *f;
	const char *entry, *base;

	struct err e = { 0 };

	/* through the run's code cache, which opens each file once (an ELF is
	 * kept for the probes and stacks; only a file that is no ELF is read as
	 * a zip), never a second look at the file's first bytes */
	if (!proc_mapping_exec(m) ||
	    proc_path_of_mapping(lc->proc_dir, lc->pid, m, mapped, sizeof(mapped)) ||
	    !(f = code_cache_file_mapped(lc->code, mapped, m->path, m->offset)) ||
	    !code_file_member(f))
		return false;
	if (!code_file_elf(f, &e) && !lc->zip_err[0])
		snprintf(lc->zip_err, sizeof(lc->zip_err), "; %s", e.msg);
	if (!(entry = code_file_member(f)) || !*entry)
		return false;
	base = strrchr(entry, '/');
	base = base ? base + 1 : entry;
	return lib_name_is(base, strlen(base), lc->name) &&
	       !zip_path_join(lc->buf, lc->size, slash, strlen(slash), entry, strlen(entry));
}

static int is_lib(void *ctx, const struct proc_mapping *m)
{
	struct lib_ctx *lc = ctx;
	const char *slash = strchr(m->path, '/'), *base = strrchr(m->path, '/');

	if (!slash || strlen(slash) >= lc->size)
		return 0;
	if (lib_name_is(base + 1, strlen(base + 1), lc->name)) {
		snprintf(lc->buf, lc->size, "%s", slash);
		return 1;
	}
	return lc->code && is_zip_lib(lc, m, slash);
}

static int from_maps(const char *proc_dir, struct code_cache *code, const char *name, int pid,
		     char *buf, size_t size, struct err *err)
{
	struct lib_ctx lc = { proc_dir ? proc_dir : "/proc", code, pid, name, buf, size, "" };
	char mp[4200];
	int rc;

	proc_maps_path(proc_dir, pid, mp, sizeof(mp));
	if ((rc = proc_maps_read(proc_dir, pid, is_lib, &lc, err)) < 0)
		return err_prefix(err, "cannot read the mappings of pid %d", pid);
	if (!rc)
		return err_set(err, -ENOENT, "pid %d maps no library named %s, neither a file nor "
			       "an APK's entry (see %s); give its path instead%s", pid, name, mp,
			       lc.zip_err);
	return 0;
}

static bool is_elf(const char *path)
{
	unsigned char m[4] = { 0 };
	FILE *f = fopen(path, "rb");
	bool ok;

	if (!f)
		return false;
	ok = fread(m, 1, 4, f) == 4 && !memcmp(m, "\x7f" "ELF", 4);
	fclose(f);
	return ok;
}

/* name itself, else the first (sorted) entry lib_name_is() accepts, if an ELF. */
static bool in_dir(const char *dir, const char *name, char *buf, size_t size)
{
	struct dirent **ents;
	bool found = false;
	int n;

	snprintf(buf, size, "%s/%s", dir, name);
	if (is_elf(buf))
		return true;
	if ((n = scandir(dir, &ents, NULL, alphasort)) < 0)
		return false;
	for (int i = 0; i < n; i++) {
		const char *e = ents[i]->d_name;
		if (!found && lib_name_is(e, strlen(e), name)) {
			snprintf(buf, size, "%s/%s", dir, e);
			found = is_elf(buf);
		}
		free(ents[i]);
	}
	free(ents);
	return found;
}

int pattern_find_library(const char *proc_dir, struct code_cache *code, const char *name, int pid,
			 char *buf, size_t size, struct err *err)
{
	struct stat st;
	char tried[512] = "";

	if (pid > 0)
		return from_maps(proc_dir, code, name, pid, buf, size, err);
	for (const char *const *d = LIB_DIRS; *d; d++) {
		if (stat(*d, &st) != 0)
			continue;
		if (in_dir(*d, name, buf, size))
			return 0;
		size_t l = strlen(tried);
		if (l + 64 < sizeof(tried))
			snprintf(tried + l, sizeof(tried) - l, "%s%s", l ? ", " : "", *d);
	}
	return err_set(err, -ENOENT, "no library %s in %s: give its path (/.../%s) or a "
		       "process (--pid) that maps it", name, *tried ? tried : "the system "
		       "library directories", name);
}

int pattern_find_library_under(const char *root, const char *name, char *buf, size_t size,
			       struct err *err)
{
	char dir[4096];
	struct stat st;

	for (const char *const *d = LIB_DIRS; *d; d++) {
		snprintf(dir, sizeof(dir), "%s%s", root, *d);
		if (stat(dir, &st) == 0 && in_dir(dir, name, buf, size))
			return 0;
	}
	return err_set(err, -ENOENT, "no library %s under %s's library directories (%s/system/"
		       "lib64, %s/lib, …): give its path (/.../%s)", name, root, root, root, name);
}

struct native_ctx {
	struct demangler *dm;
	const struct trace_pattern *p;
	const struct elf_file *elf;
	const struct elf_file *sym_elf;     /* whose section table the symbols index */
	const char *path;
	size_t max;
	struct pattern_matches *out;
	int rc;
	struct err *err;
};

static bool exec_section(const struct elf_file *f, uint16_t shndx)
{
	struct elf_section sh;

	if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
		return false;
	return !elf_section_at(f, shndx, &sh) && (sh.flags & SHF_EXECINSTR);
}

static int on_symbol(void *ctx, const char *name, const struct elf_symbol *sym)
{
	struct native_ctx *x = ctx;
	uint16_t mach = elf_machine(x->elf);
	uint64_t off;
	uint32_t flags;

	if ((sym->type != STT_FUNC && sym->type != STT_GNU_IFUNC) || !*name ||
	    !exec_section(x->sym_elf, sym->shndx))
		return 0;
	/* the raw name, the demangled one, and the demangled one without its return type
	 * and parameters ("android::IPCThreadState::executeCommand") */
	char dem[2048];
	size_t ns = 0, ne = 0;
	bool have_dem = x->dm && !strncmp(name, "_Z", 2) &&
			!demangle_with(x->dm, name, dem, sizeof(dem), &ns, &ne);
	if (!glob_match(&x->p->sym, name, strlen(name)) &&
	    !(have_dem && (glob_match(&x->p->sym, dem, strlen(dem)) ||
			   glob_match(&x->p->sym, dem + ns, ne - ns))))
		return 0;
	if (elf_vaddr_to_offset(x->elf, sym->value & ~(uint64_t)(mach == EM_ARM), &off, &flags) ||
	    !(flags & PF_X) || off % native_insn_align(mach))
		return 0;
	struct pattern_match pm = { .file_offset = off, .code_size = sym->size,
				    .e_machine = mach };
	/* a repeat (the symbol in .dynsym and .symtab) or an alias: pattern_push */
	if (sym->type == STT_GNU_IFUNC) {
		char d[600];
		ifunc_describe(x->elf, name, sym, d, sizeof(d));
		pm.left_out = MATCH_UNPROBEABLE;
		pm.left_out_detail = strdup(d);
	} else if (mach == EM_ARM && (sym->value & 1)) {
		pm.left_out = MATCH_UNPROBEABLE;
		pm.left_out_detail = strdup("arm32 Thumb code: the kernel cannot uprobe Thumb "
					    "instructions");
	}
	pm.path = strdup(x->path);
	pm.name = strdup(have_dem ? dem : name);
	pm.raw_name = strdup(name);
	if (!pm.path || !pm.name || !pm.raw_name || pattern_push(x->out, &pm, x->max)) {
		pattern_match_clear(&pm);
		x->rc = err_set(x->err, -ENOMEM, "out of memory");
		return 1;
	}
	return 0;
}

/* The functions only .gnu_debugdata names (Android keeps there the symbols
 * .dynsym lacks).  A file without one, or with one that does not decode, has
 * just its own tables: the symbols found there stay matchable. */
static void minidebug_symbols(struct native_ctx *x, struct code_file *f)
{
	const struct elf_file *md = code_file_minidebug(f);

	if (!md)
		return;
	x->sym_elf = md;
	elf_foreach_symbol(md, on_symbol, x);
	x->sym_elf = x->elf;
}

int pattern_native_file(const struct trace_pattern *p, const char *path, size_t max,
			struct pattern_matches *out, struct err *err)
{
	const struct elf_file *elf;
	struct code_file *f;
	const char *entry;
	size_t clen = 0;

	if (zip_path_split(path, &clen, &entry, err) < 0)
		return err->code;
	if (pattern_note_searched(out, path) || !(f = code_cache_file(out->code, path)))
		return err_set(err, -ENOMEM, "out of memory");
	if (!(elf = code_file_elf(f, err)))
		return err->code;
	/* an APK's library named by its file name only ("base.apk!libfoo.so", as a
	 * tombstone names it): its matches by the entry's whole name */
	if (clen && code_file_member(f) && strcmp(code_file_member(f), entry))
		path = code_file_path(f);
	struct native_ctx x = { .p = p, .elf = elf, .sym_elf = elf, .path = path, .max = max,
				.out = out, .err = err, .dm = demangler_new() };
	elf_foreach_symbol(elf, on_symbol, &x);
	if (!x.rc)
		minidebug_symbols(&x, f);
	demangler_free(x.dm);
	return x.rc;
}
