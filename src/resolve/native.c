/* native.c — an ELF symbol to the file offset of a uprobe, refusing every
 * place that is not the start of an instruction of code: a breakpoint (int3,
 * brk) written into data corrupts what the process reads there, one written
 * inside an instruction changes the instruction. */
#include "resolve/native.h"

#include <elf.h>
#include <errno.h>
#include <string.h>

#include "formats/elf.h"
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

struct place {
	const char *path, *symbol;
	const struct elf_file *elf;
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
			       pl->path, pl->symbol, type_name(pl->sym.type), sec ? sec : "the file");
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

struct enclosing {
	uint64_t vaddr;          /* what is looked for */
	uint64_t start, size;    /* the function found */
	const char *name;        /* NULL: none */
};

/* The outermost function symbol whose [value, value+size) holds vaddr. */
static int enclosing_cb(void *ctx, const char *name, const struct elf_symbol *s)
{
	struct enclosing *en = ctx;

	if ((s->type != STT_FUNC && s->type != STT_GNU_IFUNC) || !s->size ||
	    s->value > en->vaddr || en->vaddr - s->value >= s->size)
		return 0;
	if (!en->name || s->value < en->start) {
		en->name = name;
		en->start = s->value;
		en->size = s->size;
	}
	return 0;
}

/* x86_64: decode from the start of the enclosing function up to the offset. */
static int check_x86_boundary(const struct place *pl, struct err *err)
{
	struct enclosing en = { .vaddr = pl->vaddr };
	uint64_t start_off, fsize;
	size_t file_size;
	const uint8_t *data = elf_data(pl->elf, &file_size);
	struct err e = { 0 };

	elf_foreach_symbol(pl->elf, enclosing_cb, &en);
	if (!en.name)
		return err_set(err, -EINVAL, "%s: '%s' (0x%llx) lies in no function symbol, so "
			       "nothing proves it is the start of an instruction (--unsafe-any-symbol "
			       "probes it anyway)", pl->path, pl->symbol,
			       (unsigned long long)pl->vaddr);
	if (en.start == pl->vaddr)
		return 0;  /* a function's own start */
	if (elf_vaddr_to_offset(pl->elf, en.start, &start_off, NULL) < 0 ||
	    start_off >= file_size)
		return err_set(err, -EINVAL, "%s: '%s': the function holding it ('%s') is not in "
			       "the file", pl->path, pl->symbol, en.name);
	fsize = en.size < file_size - start_off ? en.size : file_size - start_off;
	if (insn_boundary_check(CODE_ARCH_X86_64, data + start_off, (size_t)fsize,
				(size_t)(pl->vaddr - en.start), &e) < 0)
		return err_set(err, e.code ? e.code : -EINVAL, "%s: '%s' is %s+0x%llx, not "
			       "proven to be the start of an instruction: %s (--unsafe-any-symbol "
			       "probes it anyway)", pl->path, pl->symbol, en.name,
			       (unsigned long long)(pl->vaddr - en.start), e.msg);
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

int native_resolve(const char *path, const char *symbol, unsigned flags,
		   struct native_location *out, struct err *err)
{
	struct elf_file *elf;
	struct place pl = { .path = path, .symbol = symbol };
	int rc;

	memset(out, 0, sizeof(*out));
	rc = elf_open(path, &elf, err);
	if (rc < 0)
		return rc;
	pl.elf = elf;
	out->machine = elf_machine(elf);
	rc = elf_find_symbol(elf, symbol, &pl.sym);
	if (rc < 0) {
		elf_close(elf);
		return err_set(err, -ENOENT, "%s: no symbol '%s' in .dynsym or .symtab%s", path,
			       symbol, rc == -ENOENT ? "" : " (symbol tables unreadable)");
	}
	if (pl.sym.shndx == SHN_UNDEF) {
		elf_close(elf);
		return err_set(err, -ENOENT,
			       "%s: symbol '%s' is undefined here (imported from another "
			       "library): probe the library that defines it", path, symbol);
	}
	pl.vaddr = pl.sym.value & ~(uint64_t)(out->machine == EM_ARM);
	rc = elf_vaddr_to_offset(elf, pl.vaddr, &pl.offset, &pl.seg_flags);
	if (rc < 0) {
		elf_close(elf);
		return err_set(err, rc, "%s: symbol '%s' address 0x%llx is in no file-backed "
			       "PT_LOAD segment", path, symbol, (unsigned long long)pl.sym.value);
	}
	find_section(&pl);
	rc = check_location(&pl, out->machine, flags, err);
	elf_close(elf);
	if (rc < 0)
		return rc;
	out->offset = pl.offset;
	out->vaddr = pl.sym.value;
	out->size = pl.sym.size;
	out->from_dynsym = pl.sym.from_dynsym;
	return 0;
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

int native_check_code_offset(const char *path, uint64_t offset, struct err *err)
{
	struct elf_file *elf;
	const struct elf_segment *seg;
	struct place pl = { .path = path, .symbol = "the method's code" };
	unsigned align;
	int rc;

	rc = elf_open(path, &elf, err);
	if (rc < 0)
		return rc;
	pl.elf = elf;
	align = native_insn_align(elf_machine(elf));
	seg = segment_of_offset(elf, offset);
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
	elf_close(elf);
	return rc;
}
