/* native.h — an ELF function symbol to the file offset a uprobe needs. */
#ifndef UPROBESTATS_RESOLVE_NATIVE_H
#define UPROBESTATS_RESOLVE_NATIVE_H

#include <stdint.h>

#include "common/err.h"

struct native_location {
	uint64_t offset;       /* file offset of the first instruction */
	uint64_t vaddr;        /* the symbol's value */
	uint64_t size;         /* the symbol's size (0 when unknown) */
	uint16_t machine;      /* EM_* */
	int from_dynsym;       /* 1: .dynsym, 0: .symtab */
};

/* Files opened and their symbols indexed (by name, functions by address)
 * once per run: a config naming a file 100,000 times reads it once.  code:
 * the command's code cache (code/codecache.h; required) the ELF files are
 * taken from.  The functions below take a cache (never NULL). */
struct native_cache;
struct code_cache;
struct native_cache *native_cache_new(struct code_cache *code);
void native_cache_free(struct native_cache *c);

/* Probe the symbol even when it is not a function (an object, TLS...) or not
 * proven to be an instruction start: the --unsafe-any-symbol override.  The
 * executable segment and the alignment are still required. */
#define NATIVE_UNSAFE_ANY_SYMBOL 0x1

/* Looks the symbol up in .dynsym and .symtab and maps it through the PT_LOAD
 * headers.  Refuses, with one line saying what is there: a missing or
 * undefined symbol; a symbol that is not a function (STT_FUNC, STT_GNU_IFUNC
 * or untyped); an address outside an executable segment or in a section
 * without SHF_EXECINSTR (.rodata in the text segment of a file linked with
 * -z noseparate-code); an offset not aligned for the machine; on x86_64 an
 * address that decoding from the start of its enclosing function symbol does
 * not prove to be an instruction start (or that no function symbol holds). */
int native_resolve(struct native_cache *cache, const char *path, const char *symbol,
		   unsigned flags, struct native_location *out, struct err *err);

/* A file offset that does not come from a symbol (a Java method's code start,
 * from the oat reader or oatdump): 0 when it lies in an executable segment,
 * in an SHF_EXECINSTR section when the file has section headers, aligned for
 * the machine; else -ENOEXEC/-EINVAL with one line saying what is there. */
int native_check_code_offset(struct native_cache *cache, const char *path, uint64_t offset,
			     struct err *err);

/* Instruction alignment a uprobe offset needs on this machine (1 on x86). */
unsigned native_insn_align(uint16_t machine);

#endif
