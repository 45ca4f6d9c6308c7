/* artdebug.h — ART's debugger interface of one traced process, read-only:
 * the JIT code it published in __jit_debug_descriptor and the dex files in
 * __dex_debug_descriptor (ART's runtime/jit/debugger_interface.cc; the GDB
 * JIT interface plus Android's fields), as libunwindstack and simpleperf
 * read them.
 *
 * Layouts (64-bit processes; docs/symbolization.md):
 *   descriptor: u32 version (1), u32 action_flag, relevant_entry, first_entry,
 *     then Android's: magic "Android1"/"Android2", u32 flags, u32
 *     sizeof_descriptor, u32 sizeof_entry, u32 action_seqlock, u64
 *     action_timestamp (56 bytes);
 *   entry: next, prev, symfile_addr, u64 symfile_size, then Android's u64
 *     register_timestamp and ("Android2") u32 seqlock (48 bytes).
 * A seqlock is odd while its owner changes it.  Reading follows the protocol:
 * the descriptor's seqlock before and after the walk; with Android2 each
 * entry's seqlock even and unchanged across the copy of the entry and its
 * symfile; a change retries the walk (16 times).  On arm64 the pointers'
 * top byte (MTE/HWASan tags) is cleared.  Everything is bounded: entries,
 * bytes per symfile and in all, a list that loops; whatever a hostile or
 * changing descriptor does costs at most those bounds and is counted.
 *
 * Memory is read only through the caller's function (process_vm_readv in
 * the tool: code/codecache.c; a buffer in the tests and the fuzzer).
 *
 * Each JIT symfile is an ELF (.text NOBITS at the code's address, .symtab
 * of FUNC symbols, .debug_frame; or those inside .gnu_debugdata, xz): a PC
 * in one is named by its symbol and stepped by its CFI.  A dex address (the
 * DEX1 CFI rule's value) is named by the method whose code item holds it,
 * with its dex pc and line. */
#ifndef UPROBESTATS_CODE_ARTDEBUG_H
#define UPROBESTATS_CODE_ARTDEBUG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "code/code_types.h"

/* Reads len bytes at addr of the traced process: 0, or a negative errno
 * when not all of them could be read. */
typedef int (*art_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

#define ART_MAX_ENTRIES 4096            /* entries walked per descriptor read */
#define ART_MAX_SYMFILE (4u << 20)      /* one JIT symfile's bytes */
#define ART_MAX_DEXFILE (64u << 20)     /* one dex file's bytes */
#define ART_MAX_TOTAL (128u << 20)      /* every copy of one read together */
#define ART_MAX_RETRIES 16

struct art_debug_stats {
	uint64_t reads;          /* walks of a descriptor */
	uint64_t races;          /* walks retried: a seqlock changed or was odd */
	uint64_t entries;        /* entries read */
	uint64_t bad;            /* entries left out: unreadable, not an ELF/dex, oversized */
	uint64_t loops;          /* lists that came back to an entry or passed the limit */
	uint64_t gave_up;        /* walks still racing after every retry */
};

struct art_debug;

/* jit_desc, dex_desc: the descriptors' addresses in the process (0: none).
 * arm64: strip pointer tags. */
struct art_debug *art_debug_new(uint64_t jit_desc, uint64_t dex_desc, bool arm64,
				art_read_fn read, void *ctx);
void art_debug_free(struct art_debug *a);

/* JIT code at pc (q: where to look, pc-1 for a return address): true with
 * out's kind FRAME_JIT, its symbol and CFI row filled.  Reads the JIT
 * descriptor again when pc is in no symfile known and the descriptor's
 * seqlock moved since the last read.  Symbol strings live as long as a. */
bool art_debug_jit(struct art_debug *a, uint64_t pc, uint64_t q, struct code_info *out);

/* The interpreted method at dex address addr: true with out's kind
 * FRAME_INTERPRETED, symbol (PrettyMethod with signature), dex pc and line
 * filled, file the dex's name.  Reads the dex descriptor again when addr is
 * in no dex file known and its seqlock moved. */
bool art_debug_dex(struct art_debug *a, uint64_t addr, struct code_info *out);

/* Reads both descriptors' lists now (unless their seqlocks say nothing
 * changed since the last read). */
void art_debug_refresh(struct art_debug *a);

void art_debug_get_stats(const struct art_debug *a, struct art_debug_stats *out);

#endif
