/* codefile.h — the per-file layer of the code cache (stack/codecache.h):
 * one entry per file (device, inode, mtime), opened once, what the lookups
 * need from it decoded on first use.  Only codecache.c uses it. */
#ifndef UPROBESTATS_STACK_CODEFILE_H
#define UPROBESTATS_STACK_CODEFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "stack/code_types.h"
#include "stack/unwind.h"

struct code_file;
struct code_files;

struct code_files *code_files_new(void);
void code_files_free(struct code_files *fs);

/* The entry for the file at path (which the messages call shown: the maps path when
 * path is the process's view of it, /proc/PID/root/... or /proc/PID/map_files/...),
 * or NULL when out of memory.  A file that cannot be read gets an entry too
 * (code_file_why() says why), tried once. */
struct code_file *code_file_get(struct code_files *fs, const char *path, const char *shown);

/* NULL when the file is readable, else "unknown in SHOWN". */
const char *code_file_why(const struct code_file *f);

/* A file offset -> ELF vaddr through the PT_LOAD headers. */
bool code_file_vaddr(const struct code_file *f, uint64_t off, uint64_t *vaddr);

/* Fills out's kind and its Java or native fields for code at vaddr (where to
 * look: pc-1 for a return address) whose PC is at pc_vaddr. */
void code_file_describe(struct code_file *f, uint64_t vaddr, uint64_t pc_vaddr,
			struct code_info *out);

/* Every compiled method of f mapped by [start, end) at file offset off: its
 * process range and frame size (see code_cache_java_ranges). */
int code_file_java_ranges(struct code_file *f, uint64_t start, uint64_t end, uint64_t off,
			  code_cache_java_fn cb, void *ctx);

void code_files_stats(const struct code_files *fs, struct code_cache_stats *out);

#endif
