/* codemap.h — what code is at a PC of a traced process, for the unwinder
 * (stack/unwind.h's lookup) and the frames it prints.
 *
 * Owns two caches that live for the run, so a hit costs lookups, not parses:
 *   per process: its executable mappings from /proc/PID/maps, read again
 *     when a PC falls outside all of them (a library loaded since);
 *   per file: an ELF's function symbols (.symtab/.dynsym, sorted) and CFI
 *     (formats/cfi.h), or an oat/odex file's compiled methods (sorted by
 *     code address) with their CodeInfo frame info and stack maps decoded on
 *     first use, and their names from the dex files.
 * JIT code caches are FRAME_JIT, the interpreter (nterp and
 * art::interpreter) FRAME_INTERPRETED, anonymous or unreadable code
 * FRAME_UNKNOWN with the reason.  Strings it returns live as long as the
 * codemap. */
#ifndef UPROBESTATS_STACK_CODEMAP_H
#define UPROBESTATS_STACK_CODEMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "stack/unwind.h"

struct codemap;

/* proc_dir: "/proc" (tests may point elsewhere). */
struct codemap *codemap_new(const char *proc_dir);
void codemap_free(struct codemap *m);

/* Reads pid's mappings now, again if they were read before (a process known
 * at attach may have exited by the time its records are drained; its cached
 * mappings then still serve, and a failed read keeps them). */
void codemap_prime(struct codemap *m, uint32_t pid);

/* Calls cb for every compiled Java method pid maps now (oat/odex code in
 * its executable mappings): the method's code range in the process and its
 * CodeInfo frame size (methods without readable CodeInfo are left out).
 * Stops at cb's first non-zero return and returns it; else 0. */
typedef int (*codemap_java_fn)(void *ctx, uint64_t start, uint64_t end, uint32_t frame_size);
int codemap_java_ranges(struct codemap *m, uint32_t pid, codemap_java_fn cb, void *ctx);

int codemap_lookup(struct codemap *m, uint32_t pid, uint64_t pc, bool is_return,
		   struct code_info *out);

#endif
