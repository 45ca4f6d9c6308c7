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

/* Looks the symbol up in .dynsym and .symtab and maps it through the PT_LOAD
 * headers.  Refuses a missing symbol, an address outside an executable
 * segment, and an offset that is not instruction-aligned for the machine. */
int native_resolve(const char *path, const char *symbol, struct native_location *out,
		   struct err *err);

/* Instruction alignment a uprobe offset needs on this machine (1 on x86). */
unsigned native_insn_align(uint16_t machine);

#endif
