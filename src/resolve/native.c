#include "resolve/native.h"

#include <elf.h>
#include <errno.h>
#include <string.h>

#include "formats/elf.h"

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

static int check_location(const char *path, const char *symbol, uint16_t machine,
			  uint64_t vaddr, uint64_t offset, uint32_t seg_flags, struct err *err)
{
	unsigned align = native_insn_align(machine);

	if (!(seg_flags & PF_X))
		return err_set(err, -ENOEXEC,
			       "%s: symbol '%s' (0x%llx) is not in an executable segment: "
			       "a data symbol?", path, symbol, (unsigned long long)vaddr);
	if (machine == EM_ARM && (vaddr & 1))
		return err_set(err, -ENOTSUP,
			       "%s: symbol '%s' is Thumb code (address 0x%llx has bit 0 set): "
			       "the kernel cannot uprobe Thumb instructions", path, symbol,
			       (unsigned long long)vaddr);
	if (offset % align)
		return err_set(err, -EINVAL,
			       "%s: symbol '%s' maps to file offset 0x%llx, not %u-byte aligned "
			       "as instructions must be on this machine", path, symbol,
			       (unsigned long long)offset, align);
	return 0;
}

int native_resolve(const char *path, const char *symbol, struct native_location *out,
		   struct err *err)
{
	struct elf_file *elf;
	struct elf_symbol sym;
	uint32_t seg_flags = 0;
	uint64_t offset;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = elf_open(path, &elf, err);
	if (rc < 0)
		return rc;
	out->machine = elf_machine(elf);
	rc = elf_find_symbol(elf, symbol, &sym);
	if (rc < 0) {
		elf_close(elf);
		return err_set(err, -ENOENT, "%s: no symbol '%s' in .dynsym or .symtab%s", path,
			       symbol, rc == -ENOENT ? "" : " (symbol tables unreadable)");
	}
	if (sym.shndx == SHN_UNDEF) {
		elf_close(elf);
		return err_set(err, -ENOENT,
			       "%s: symbol '%s' is undefined here (imported from another "
			       "library): probe the library that defines it", path, symbol);
	}
	rc = elf_vaddr_to_offset(elf, sym.value & ~(uint64_t)(out->machine == EM_ARM),
				 &offset, &seg_flags);
	elf_close(elf);
	if (rc < 0)
		return err_set(err, rc, "%s: symbol '%s' address 0x%llx is in no file-backed "
			       "PT_LOAD segment", path, symbol, (unsigned long long)sym.value);
	rc = check_location(path, symbol, out->machine, sym.value, offset, seg_flags, err);
	if (rc < 0)
		return rc;
	out->offset = offset;
	out->vaddr = sym.value;
	out->size = sym.size;
	out->from_dynsym = sym.from_dynsym;
	return 0;
}
