/* ifunc.h — what a GNU ifunc symbol is, and which functions it can pick.
 *
 * An STT_GNU_IFUNC symbol's address is its resolver: code the dynamic linker runs
 * once at load time, which returns the address of the implementation every call
 * then goes to (bionic: memcpy, strlen, … on arm64, by CPU features).  A uprobe on
 * the resolver sees the load, never a call.  The implementations are the addresses
 * the resolver's code computes: arm64 adrp + add pairs, x86_64 [rip+disp32] lea;
 * only those that are the start of a function symbol are named. */
#ifndef UPROBESTATS_FORMATS_IFUNC_H
#define UPROBESTATS_FORMATS_IFUNC_H

#include <stddef.h>
#include <stdint.h>

#include "formats/elf.h"

/* The addresses the resolver code (size bytes at vaddr, of machine EM_AARCH64 or
 * EM_X86_64) computes, in code order, duplicates left out: at most max of them
 * written to out.  Returns how many; 0 for another machine or code it cannot read. */
size_t ifunc_targets(uint16_t machine, const uint8_t *code, size_t size, uint64_t vaddr,
		     uint64_t *out, size_t max);

/* One line for the resolver symbol name at sym in f: "GNU ifunc: NAME is its resolver,
 * run once at load time to pick the implementation; probe one of those instead: A, B"
 * (or that none could be read from its code).  Truncated to size. */
void ifunc_describe(const struct elf_file *f, const char *name, const struct elf_symbol *sym,
		    char *buf, size_t size);

#endif
