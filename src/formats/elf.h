/* elf.h — a hostile-input-safe reader for little-endian ELF32/ELF64 files.
 *
 * Owns: the ELF header, program headers (PT_LOAD list, vaddr -> file offset),
 * section headers (by name), and symbol lookup in .dynsym/.symtab or, when a
 * file has no section headers, through PT_DYNAMIC (DT_SYMTAB + DT_HASH or
 * DT_GNU_HASH).  Everything is validated at open: a header, segment or
 * section that points outside the file is one clear error naming the file
 * and the offending offsets.  Used for oat/odex files and for native
 * libraries (the native-symbol resolver). */
#ifndef UPROBESTATS_FORMATS_ELF_H
#define UPROBESTATS_FORMATS_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct elf_file;            /* opaque */

struct elf_symbol {
	uint64_t value, size;
	uint8_t type, bind;     /* STT_*, STB_* */
	uint16_t shndx;
	bool from_dynsym;       /* false: from .symtab */
};

struct elf_segment {        /* one program header */
	uint32_t type, flags;   /* PT_*, PF_* */
	uint64_t offset, vaddr, filesz, memsz, align;
};

struct elf_section {
	const char *name;       /* "" when the section has no name */
	uint32_t type, link, info;
	uint64_t flags, addr, offset, size, entsize;
};

/* Maps the file read-only.  Errors: -ENOENT/-EACCES (mapfile), -ENOEXEC (not
 * an ELF file, big-endian, unknown class), -EINVAL (a table outside the file). */
int elf_open(const char *path, struct elf_file **out, struct err *err);
/* The same over a caller-owned buffer that must outlive the elf_file; name is
 * used in messages. */
int elf_open_mem(const char *name, const void *buf, size_t len, struct elf_file **out,
		 struct err *err);
void elf_close(struct elf_file *f);

const char *elf_name(const struct elf_file *f);
uint16_t elf_machine(const struct elf_file *f);   /* EM_* */
int elf_class(const struct elf_file *f);          /* 32 or 64 */
uint16_t elf_type(const struct elf_file *f);      /* ET_* */
const uint8_t *elf_data(const struct elf_file *f, size_t *size);

/* .dynsym then .symtab (section headers), falling back to PT_DYNAMIC
 * DT_SYMTAB/DT_HASH/DT_GNU_HASH when there are no section headers.
 * Undefined symbols (st_shndx == SHN_UNDEF) are skipped.  0 or -ENOENT. */
int elf_find_symbol(const struct elf_file *f, const char *name, struct elf_symbol *out);

/* Calls fn for every named symbol of .dynsym, then .symtab (or the PT_DYNAMIC
 * table).  fn returns non-zero to stop; that value is returned. */
typedef int (*elf_symbol_fn)(void *ctx, const char *name, const struct elf_symbol *sym);
int elf_foreach_symbol(const struct elf_file *f, elf_symbol_fn fn, void *ctx);

/* vaddr -> file offset through the PT_LOAD program headers (not section
 * headers); reports the segment's p_flags.  -ERANGE when no PT_LOAD's
 * file-backed part holds it.  seg_flags may be NULL. */
int elf_vaddr_to_offset(const struct elf_file *f, uint64_t vaddr, uint64_t *off,
			uint32_t *seg_flags);

/* The PT_LOAD program headers in file order. */
size_t elf_load_segments(const struct elf_file *f, const struct elf_segment **out);
/* Every program header. */
size_t elf_segments(const struct elf_file *f, const struct elf_segment **out);

/* First section with that name; 0 or -ENOENT. */
int elf_find_section(const struct elf_file *f, const char *name, struct elf_section *out);
size_t elf_section_count(const struct elf_file *f);
int elf_section_at(const struct elf_file *f, size_t i, struct elf_section *out);

#endif
