/* elf_diff.h — the ELF reader (src/formats/elf.c, minidebug.c, cfi.c) against
 * independent implementations: libelf (elfutils) for headers, program headers,
 * sections, symbols and the vaddr -> file offset mapping; Debian's xz for the
 * .gnu_debugdata image; binutils' readelf for the CFI's FDE ranges.
 *
 * One struct diff per file (or per in-memory image) collects the mismatches:
 * each one is printed as "FAIL FILE: WHERE: FIELD: ours X, theirs Y" (theirs: libelf,
 * or the tool WHERE names). */
#ifndef UPROBESTATS_TEST_ELF_DIFF_H
#define UPROBESTATS_TEST_ELF_DIFF_H

#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "formats/elf.h"

#define DIFF_MAX_REPORTS 20      /* mismatch lines printed per file; all are counted */

struct diff {
	const char *file;            /* as printed */
	size_t fails;
	/* what was compared (the per-file counts line) */
	size_t secs, segs, dynsym, symtab, mapped, lookups, mini_syms, fdes;
	bool has_mini;
	bool planted;                /* the self-test's expected mismatches */
};

/* One mismatch: prints the first DIFF_MAX_REPORTS per file, counts all. */
void diff_fail(struct diff *d, const char *where, const char *field, const char *ours,
	       const char *theirs);
/* The same for two integers (printed in hex); true when they are equal. */
bool diff_u64(struct diff *d, const char *where, const char *field, uint64_t ours,
	      uint64_t theirs);
bool diff_str(struct diff *d, const char *where, const char *field, const char *ours,
	      const char *theirs);

/* Everything libelf and ours both expose of one image: header, program headers,
 * sections, symbols (.dynsym then .symtab, named ones), name lookups and the
 * vaddr -> offset mapping of every defined symbol. */
void diff_image(struct diff *d, const struct elf_file *ours, Elf *theirs);
/* Only the header, program headers and section headers. */
void diff_tables(struct diff *d, const struct elf_file *ours, Elf *theirs);

/* The symbols ours finds through PT_DYNAMIC (DT_HASH/DT_GNU_HASH) when the image's
 * section headers are gone, against libelf's .dynsym of the intact image. */
void diff_no_sections(struct diff *d, const uint8_t *data, size_t len, Elf *theirs);

/* .gnu_debugdata: ours (minidebug_open) against `xz -dc` of the section libelf
 * reads, byte for byte, then diff_image() over the two readings of that image. */
void diff_minidebug(struct diff *d, const struct elf_file *ours, Elf *theirs);

/* FDE ranges of cfi_open() against `readelf --debug-dump=frames` of path. */
void diff_cfi(struct diff *d, const struct elf_file *ours, const char *path);

/* Truncated and corrupted copies of path in dir: ours must never crash, must fail
 * where libelf cannot read the header or program headers, and must agree with
 * libelf on whatever both read.  Returns the number of failures. */
size_t hostile_file(const char *path, const char *dir, size_t *mutants);

/* libelf helpers shared by the comparisons. */
const char *lelf_section_name(Elf *e, const GElf_Shdr *sh);
bool lelf_read_all_shdrs(Elf *e, size_t *n);
bool lelf_read_all_phdrs(Elf *e, size_t *n);

#endif
