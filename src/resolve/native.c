/* native.c — an ELF symbol to the file offset of a uprobe, refusing every
 * place that is not the start of an instruction of code: a breakpoint (int3,
 * brk) written into data corrupts what the process reads there, one written
 * inside an instruction changes the instruction. */
#include "resolve/native.h"

#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "code/codecache.h"
#include "code/codefile.h"
#include "common/grow.h"
#include "formats/elf.h"
#include "formats/ifunc.h"
#include "formats/insn.h"

unsigned native_insn_align(uint16_t machine)
{
	switch (machine) {
	case EM_AARCH64:
	case EM_RISCV:   /* compressed instructions are 2-byte aligned, full ones 4 */
		return machine == EM_RISCV ? 2 : 4;
	case EM_ARM:
		return 2;
	default:
		return 1;
	}
}

struct native_file;

struct place {
	const char *path, *symbol;
	const struct elf_file *elf;
	const struct native_file *nf;
	struct elf_symbol sym;
	uint64_t vaddr;        /* the symbol's address (Thumb bit cleared) */
	uint64_t offset;       /* its file offset */
	uint32_t seg_flags;
	struct elf_section sec; /* the section holding it; sec.name NULL: no section headers */
};

static const char *type_name(uint8_t type)
{
	switch (type) {
	case STT_OBJECT: return "an object";
	case STT_TLS: return "a thread-local variable";
	case STT_COMMON: return "a common (uninitialized) object";
	case STT_SECTION: return "a section symbol";
	case STT_FILE: return "a file name symbol";
	default: return "not a function";
	}
}

static void find_section(struct place *pl)
{
	size_t n = elf_section_count(pl->elf);

	memset(&pl->sec, 0, sizeof(pl->sec));
	for (size_t i = 0; i < n; i++) {
		struct elf_section s;
		if (elf_section_at(pl->elf, i, &s) < 0 || !(s.flags & SHF_ALLOC) ||
		    s.type == SHT_NOBITS || pl->vaddr < s.addr || pl->vaddr - s.addr >= s.size)
			continue;
		pl->sec = s;
		if (!pl->sec.name || !*pl->sec.name)
			pl->sec.name = "(unnamed section)";
		return;
	}
}

/* What the symbol is and where: a function in an executable section. */
static int check_kind(const struct place *pl, struct err *err)
{
	const char *sec = pl->sec.name;

	if (pl->sym.type != STT_FUNC && pl->sym.type != STT_GNU_IFUNC &&
	    pl->sym.type != STT_NOTYPE)
		return err_set(err, -ENOEXEC, "%s: '%s' is %s in %s, not a function: a breakpoint "
			       "there would corrupt it (--unsafe-any-symbol probes it anyway)",
			       pl->path, pl->symbol, type_name(pl->sym.type),
			       sec ? sec : "the file");
	if (pl->sym.type == STT_GNU_IFUNC) {
		char d[600];
		ifunc_describe(pl->elf, pl->symbol, &pl->sym, d, sizeof(d));
		return err_set(err, -ENOEXEC, "%s: %s (--unsafe-any-symbol probes the resolver "
			       "anyway)", pl->path, d);
	}
	if (!(pl->seg_flags & PF_X))
		return err_set(err, -ENOEXEC, "%s: '%s' (0x%llx) is in %s, not in an executable "
			       "segment: data, not code", pl->path, pl->symbol,
			       (unsigned long long)pl->vaddr, sec ? sec : "no section");
	if (sec && !(pl->sec.flags & SHF_EXECINSTR))
		return err_set(err, -ENOEXEC, "%s: '%s' (0x%llx) is in %s, which holds data, not "
			       "instructions (the segment is executable only because the file was "
			       "linked with -z noseparate-code)", pl->path, pl->symbol,
			       (unsigned long long)pl->vaddr, sec);
	return 0;
}

/* ---- the symbol index of one file, built once per run ---------------- */

struct native_sym {
	const char *name;
	struct elf_symbol sym;
	size_t order;            /* .dynsym first, then .symtab: the first one wins */
};

struct native_func {
	uint64_t start, end;
	const char *name;
};

struct native_file {
	char *path;
	const struct elf_file *elf; /* the code cache's; NULL: the open failed with open_err */
	const struct elf_file *md_elf; /* its .gnu_debugdata ELF (the code cache's), if any */
	struct err open_err;
	struct native_sym *syms; /* defined symbols by name, then order */
	size_t n_syms;
	struct native_func *funcs; /* function symbols by start */
	uint64_t *max_end;       /* max_end[i]: the largest end of funcs[0..i] */
	size_t n_funcs;
};

struct native_cache {
	struct native_file *files;
	size_t n, cap;
	struct code_cache *code;  /* the command's parsed files (required) */
};

struct index_build {
	struct native_file *nf;
	size_t cap_syms, cap_funcs;
	bool oom;
};

static int index_cb(void *ctx, const char *name, const struct elf_symbol *s)
{
	struct index_build *b = ctx;
	struct native_file *nf = b->nf;

	if (s->shndx == SHN_UNDEF)
		return 0;
	if (grow_array(&nf->syms, &b->cap_syms, nf->n_syms + 1, 256) < 0)
		return b->oom = true, 1;
	nf->syms[nf->n_syms] = (struct native_sym){ name, *s, nf->n_syms };
	nf->n_syms++;
	if ((s->type != STT_FUNC && s->type != STT_GNU_IFUNC) || !s->size ||
	    s->value + s->size < s->value)
		return 0;
	if (grow_array(&nf->funcs, &b->cap_funcs, nf->n_funcs + 1, 256) < 0)
		return b->oom = true, 1;
	nf->funcs[nf->n_funcs++] = (struct native_func){ s->value, s->value + s->size, name };
	return 0;
}

static int by_name(const void *a, const void *b)
{
	const struct native_sym *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->order > y->order) - (x->order < y->order);
}

static int by_start(const void *a, const void *b)
{
	const struct native_func *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

static int index_file(struct native_file *nf, struct code_file *cf, struct err *err)
{
	struct index_build b = { .nf = nf };

	elf_foreach_symbol(nf->elf, index_cb, &b);
	/* Then .gnu_debugdata's .symtab (a stripped Android binary's local functions,
	 * at the file's own addresses): after .dynsym and .symtab, which win. */
	nf->md_elf = code_file_minidebug(cf);
	if (!b.oom && nf->md_elf)
		elf_foreach_symbol(nf->md_elf, index_cb, &b);
	nf->max_end = malloc((nf->n_funcs ? nf->n_funcs : 1) * sizeof(uint64_t));
	if (b.oom || !nf->max_end)
		return err_set(err, -ENOMEM, "%s: out of memory", nf->path);
	qsort(nf->syms, nf->n_syms, sizeof(*nf->syms), by_name);
	qsort(nf->funcs, nf->n_funcs, sizeof(*nf->funcs), by_start);
	for (size_t i = 0; i < nf->n_funcs; i++)
		nf->max_end[i] = i && nf->max_end[i - 1] > nf->funcs[i].end ? nf->max_end[i - 1]
			       : nf->funcs[i].end;
	return 0;
}

static void file_free(struct native_file *nf)
{
	free(nf->path);
	free(nf->syms);
	free(nf->funcs);
	free(nf->max_end);
	memset(nf, 0, sizeof(*nf));
}

/* The ELF: the code cache's, then its index. */
static int file_open(struct native_file *nf, struct code_cache *code, const char *path,
		     struct err *err)
{
	struct code_file *cf;

	memset(nf, 0, sizeof(*nf));
	nf->path = strdup(path);
	if (!nf->path || !(cf = code_cache_file(code, path)))
		return err_set(err, -ENOMEM, "out of memory");
	nf->elf = code_file_elf(cf, &nf->open_err);
	if (!nf->elf) {
		*err = nf->open_err;
		return nf->open_err.code ? nf->open_err.code : -EINVAL;
	}
	return index_file(nf, cf, err);
}

struct native_cache *native_cache_new(struct code_cache *code)
{
	struct native_cache *c = calloc(1, sizeof(struct native_cache));

	if (c)
		c->code = code;
	return c;
}

void native_cache_free(struct native_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		file_free(&c->files[i]);
	free(c->files);
	free(c);
}

/* The file's index from the cache (opened and indexed on first use; a file
 * that failed to open fails the same way again). */
static int cached_file(struct native_cache *c, const char *path, struct native_file **out,
		       struct err *err)
{
	struct native_file *nf;
	int rc;

	for (size_t i = 0; i < c->n; i++) {
		if (strcmp(c->files[i].path, path))
			continue;
		*out = &c->files[i];
		if (c->files[i].elf)
			return 0;
		*err = c->files[i].open_err;
		return err->code ? err->code : -EINVAL;
	}
	if (grow_array(&c->files, &c->cap, c->n + 1, 8) < 0)
		return err_set(err, -ENOMEM, "out of memory");
	nf = &c->files[c->n];
	rc = file_open(nf, c->code, path, err);
	if (rc < 0 && !nf->path)
		return rc;
	if (rc < 0 && nf->elf) {  /* indexing failed: forget it */
		file_free(nf);
		return rc;
	}
	c->n++;
	*out = nf;
	return rc;
}

static const struct native_sym *find_sym(const struct native_file *nf, const char *name)
{
	size_t lo = 0, hi = nf->n_syms;

	while (lo < hi) {  /* the first entry with this name */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(nf->syms[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nf->n_syms && !strcmp(nf->syms[lo].name, name) ? &nf->syms[lo] : NULL;
}

/* The outermost function symbol holding v: the first (by start) whose end
 * lies past v among those starting at or before it; NULL when none. */
static const struct native_func *enclosing(const struct native_file *nf, uint64_t v)
{
	size_t lo = 0, hi = nf->n_funcs, n;

	while (lo < hi) {  /* n = how many start at or before v */
		size_t mid = lo + (hi - lo) / 2;
		if (nf->funcs[mid].start <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	n = lo;
	if (!n || nf->max_end[n - 1] <= v)
		return NULL;
	lo = 0;
	hi = n - 1;
	while (lo < hi) {  /* the first i whose max_end passes v: funcs[i] holds v */
		size_t mid = lo + (hi - lo) / 2;
		if (nf->max_end[mid] > v)
			hi = mid;
		else
			lo = mid + 1;
	}
	return &nf->funcs[lo];
}

/* x86_64: decode from the start of the enclosing function up to the offset. */
static int check_x86_boundary(const struct place *pl, struct err *err)
{
	const struct native_func *fn = enclosing(pl->nf, pl->vaddr);
	uint64_t start_off, fsize;
	size_t file_size;
	const uint8_t *data = elf_data(pl->elf, &file_size);
	struct err e = { 0 };

	if (!fn)
		return err_set(err, -EINVAL, "%s: '%s' (0x%llx) lies in no function symbol, so "
			       "nothing proves it is the start of an instruction "
			       "(--unsafe-any-symbol probes it anyway)", pl->path, pl->symbol,
			       (unsigned long long)pl->vaddr);
	if (fn->start == pl->vaddr)
		return 0;  /* a function's own start */
	if (elf_vaddr_to_offset(pl->elf, fn->start, &start_off, NULL) < 0 ||
	    start_off >= file_size)
		return err_set(err, -EINVAL, "%s: '%s': the function holding it ('%s') is not in "
			       "the file", pl->path, pl->symbol, fn->name);
	fsize = fn->end - fn->start;
	if (fsize > file_size - start_off)
		fsize = file_size - start_off;
	if (insn_boundary_check(CODE_ARCH_X86_64, data + start_off, (size_t)fsize,
				(size_t)(pl->vaddr - fn->start), &e) < 0)
		return err_set(err, e.code ? e.code : -EINVAL, "%s: '%s' is %s+0x%llx, not "
			       "proven to be the start of an instruction: %s (--unsafe-any-symbol "
			       "probes it anyway)", pl->path, pl->symbol, fn->name,
			       (unsigned long long)(pl->vaddr - fn->start), e.msg);
	return 0;
}

static int check_location(const struct place *pl, uint16_t machine, unsigned flags,
			  struct err *err)
{
	unsigned align = native_insn_align(machine);
	int rc;

	if (!(flags & NATIVE_UNSAFE_ANY_SYMBOL) && (rc = check_kind(pl, err)) < 0)
		return rc;
	if (!(pl->seg_flags & PF_X))
		return err_set(err, -ENOEXEC, "%s: '%s' (0x%llx) is not in an executable segment",
			       pl->path, pl->symbol, (unsigned long long)pl->vaddr);
	if (machine == EM_ARM && (pl->sym.value & 1))
		return err_set(err, -ENOTSUP,
			       "%s: symbol '%s' is Thumb code (address 0x%llx has bit 0 set): "
			       "the kernel cannot uprobe Thumb instructions", pl->path, pl->symbol,
			       (unsigned long long)pl->sym.value);
	if (pl->offset % align)
		return err_set(err, -EINVAL,
			       "%s: symbol '%s' maps to file offset 0x%llx, not %u-byte aligned "
			       "as instructions must be on this machine", pl->path, pl->symbol,
			       (unsigned long long)pl->offset, align);
	if (machine == EM_X86_64 && !(flags & NATIVE_UNSAFE_ANY_SYMBOL))
		return check_x86_boundary(pl, err);
	return 0;
}

static int resolve_in(const struct native_file *nf, const char *symbol, unsigned flags,
		      struct native_location *out, struct err *err)
{
	const char *path = nf->path;
	const struct native_sym *ns;
	struct place pl = { .path = path, .symbol = symbol, .elf = nf->elf, .nf = nf };
	int rc;

	memset(out, 0, sizeof(*out));
	out->machine = elf_machine(nf->elf);
	ns = find_sym(nf, symbol);
	if (!ns)
		return err_set(err, -ENOENT, "%s: no symbol '%s' in .dynsym or .symtab", path,
			       symbol);
	pl.sym = ns->sym;
	pl.vaddr = pl.sym.value & ~(uint64_t)(out->machine == EM_ARM);
	rc = elf_vaddr_to_offset(nf->elf, pl.vaddr, &pl.offset, &pl.seg_flags);
	if (rc < 0)
		return err_set(err, rc, "%s: symbol '%s' address 0x%llx is in no file-backed "
			       "PT_LOAD segment", path, symbol, (unsigned long long)pl.sym.value);
	find_section(&pl);
	rc = check_location(&pl, out->machine, flags, err);
	if (rc < 0)
		return rc;
	out->offset = pl.offset;
	out->vaddr = pl.sym.value;
	out->size = pl.sym.size;
	out->from_dynsym = pl.sym.from_dynsym;
	return 0;
}

int native_resolve(struct native_cache *cache, const char *path, const char *symbol,
		   unsigned flags, struct native_location *out, struct err *err)
{
	struct native_file *nf;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = cached_file(cache, path, &nf, err);
	return rc < 0 ? rc : resolve_in(nf, symbol, flags, out, err);
}

/* The PT_LOAD segment whose file-backed part holds a file offset. */
static const struct elf_segment *segment_of_offset(const struct elf_file *elf, uint64_t off)
{
	const struct elf_segment *segs;
	size_t n = elf_load_segments(elf, &segs);

	for (size_t i = 0; i < n; i++)
		if (off >= segs[i].offset && off - segs[i].offset < segs[i].filesz)
			return &segs[i];
	return NULL;
}

int native_check_code_offset(struct native_cache *cache, const char *path, uint64_t offset,
			     struct err *err)
{
	struct native_file *nf;
	const struct elf_segment *seg;
	struct place pl = { .path = path, .symbol = "the method's code" };
	unsigned align;
	int rc;

	if ((rc = cached_file(cache, path, &nf, err)) < 0)
		return rc;
	pl.elf = nf->elf;
	align = native_insn_align(elf_machine(nf->elf));
	seg = segment_of_offset(nf->elf, offset);
	if (!seg || !(seg->flags & PF_X)) {
		rc = err_set(err, -ENOEXEC, "%s+0x%llx: not in an executable segment of the file: "
			     "not code", path, (unsigned long long)offset);
	} else {
		pl.vaddr = seg->vaddr + (offset - seg->offset);
		find_section(&pl);
		if (pl.sec.name && !(pl.sec.flags & SHF_EXECINSTR))
			rc = err_set(err, -ENOEXEC, "%s+0x%llx: in %s, which holds data, not "
				     "instructions", path, (unsigned long long)offset, pl.sec.name);
		else if (offset % align)
			rc = err_set(err, -EINVAL, "%s+0x%llx: not %u-byte aligned as instructions "
				     "must be on this machine", path, (unsigned long long)offset,
				     align);
	}
	return rc;
}
