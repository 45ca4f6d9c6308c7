/* symbolize.h — turning a PC of a traced process into a frame description,
 * and answering the unwinder's two questions about a PC (is it compiled Java
 * code, and with which frame; which CFI row applies), with caches so that a
 * repeated PC costs a lookup, not a parse.
 *
 * Two levels of state:
 *   struct symbolizer   the file cache, shared by every process: one entry
 *                       per file (keyed by dev+inode of the opened file, and
 *                       its path+mtime), opened once and kept until
 *                       sym_free(): the ELF/oat file, its symbol table sorted
 *                       by address (.symtab, .dynsym and .gnu_debugdata
 *                       merged), its compiled Java methods sorted by code
 *                       address (oat files: oat_list_methods() + CodeInfo
 *                       frame sizes), its CFI table (built on first CFI
 *                       query), its nterp range (libart).  A file that cannot
 *                       be opened is cached as a failure too (one attempt).
 *   struct sym_maps     one process's /proc/PID/maps, sorted by start; each
 *                       executable file mapping points at its cache entry.
 * A lookup: binary search the mapping, then binary search in the file's
 * sorted code ranges / symbols.  Stack maps of a Java method and dex line
 * tables are decoded on demand and kept per method.
 *
 * Kinds of frame:
 *   SYM_JAVA         a compiled method of an oat/odex mapping:
 *                    symbol "Class.method(params)" (as `methods` prints it),
 *                    dex_pc from the method's stack map at that native pc,
 *                    source file + line when the dex has debug info;
 *   SYM_NATIVE       an ELF mapping: the nearest preceding function symbol
 *                    "name+0xOFF" (or "" when no symbol covers it);
 *   SYM_INTERPRETED  libart's nterp/switch interpreter range (symbols
 *                    ExecuteNterpImpl .. EndExecuteNterpImpl, and the
 *                    artMterp/ExecuteSwitchImpl families);
 *   SYM_JIT          an executable anonymous mapping of the JIT code cache
 *                    ("/memfd:jit-cache", "[anon:dalvik-jit-code-cache]",
 *                    "/memfd:jit-zygote-cache");
 *   SYM_UNKNOWN      no mapping, or a file that cannot be read (file and
 *                    offset still filled when a mapping holds the PC).
 *
 * Paths in maps are opened under an optional root (a pulled sysroot on the
 * host); a mapping's file offset -> ELF vaddr uses the file's PT_LOAD
 * headers, so it works for any load bias.
 *
 * Return addresses: with SYM_RETURN_ADDRESS the symbol, method, CFI and line
 * lookups use pc-1 (the call instruction, which may be the last one of a
 * function), while Java stack maps are looked up at pc itself (ART records
 * the return address as the stack map's native pc). */
#ifndef UPROBESTATS_STACK_SYMBOLIZE_H
#define UPROBESTATS_STACK_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"
#include "formats/cfi.h"

enum sym_kind {
	SYM_UNKNOWN = 0,
	SYM_NATIVE,
	SYM_JAVA,
	SYM_INTERPRETED,
	SYM_JIT,
};

#define SYM_NO_DEX_PC 0xffffffffu
#define SYM_SYMBOL_MAX 1024   /* longer symbols end in "..." */

/* Returned by sym_lookup: strings point into the symbolizer's caches and stay
 * valid until sym_free() (file) or the next lookup (symbol is copied). */
struct sym_frame {
	enum sym_kind kind;
	uint64_t pc;
	const char *file;           /* mapping path, NULL when no mapping holds pc */
	uint64_t file_offset;       /* pc's offset in that file */
	char symbol[SYM_SYMBOL_MAX]; /* "" when unknown */
	uint32_t dex_pc;            /* SYM_NO_DEX_PC when no stack map */
	const char *source_file;    /* "Foo.java", NULL when unknown */
	uint32_t line;              /* 0 when unknown */
};

/* For the unwinder: a compiled Java method holding a PC. */
struct sym_java_method {
	uint64_t code_start;        /* absolute address of the first instruction */
	uint32_t code_size;
	uint32_t frame_size;        /* bytes; 0 = frameless leaf */
	uint32_t core_spill_mask, fp_spill_mask;
	uint16_t e_machine;         /* EM_X86_64 / EM_AARCH64 */
};

struct symbolizer;
struct sym_maps;

#define SYM_RETURN_ADDRESS 0x1

/* root: prefix for every mapped path (NULL or "" = the real file system). */
int sym_new(const char *root, struct symbolizer **out, struct err *err);
void sym_free(struct symbolizer *s);

/* Parses /proc/PID/maps text (kept lines: any with a start-end range).
 * sym_maps_read reads <proc_dir>/<pid>/maps (proc_dir NULL = "/proc"). */
int sym_maps_parse(struct symbolizer *s, const char *text, size_t len, struct sym_maps **out,
		   struct err *err);
int sym_maps_read(struct symbolizer *s, const char *proc_dir, pid_t pid, struct sym_maps **out,
		  struct err *err);
void sym_maps_free(struct sym_maps *m);

/* Describes pc.  Always fills *out (kind SYM_UNKNOWN at worst) and returns 0;
 * a reason for SYM_UNKNOWN (a file that failed to open) is in err when err is
 * given, with err->code set (negative), otherwise err->code is 0. */
int sym_lookup(struct symbolizer *s, const struct sym_maps *m, uint64_t pc, unsigned flags,
	       struct sym_frame *out, struct err *err);

/* 0 and *out when pc is inside a compiled Java method; -ENOENT when it is not
 * (any other mapping or none); other negative codes when the oat file or the
 * method's CodeInfo is damaged. */
int sym_java_method_at(struct symbolizer *s, const struct sym_maps *m, uint64_t pc,
		       unsigned flags, struct sym_java_method *out, struct err *err);

/* The CFI row for a native pc, in file vaddr terms; *bias (may be NULL) is
 * pc - vaddr (the mapping's load bias).  Looks in the file's .eh_frame, then
 * .debug_frame, then the .gnu_debugdata ELF's .debug_frame.  Errors as
 * cfi_row_at(), plus -ENOENT when no readable file maps pc. */
int sym_cfi_at(struct symbolizer *s, const struct sym_maps *m, uint64_t pc, unsigned flags,
	       struct cfi_row *row, uint64_t *bias, struct err *err);

/* "java", "native", "interpreted", "jit", "unknown". */
const char *sym_kind_name(enum sym_kind k);

/* Cache statistics (tests check that a second lookup does not parse). */
struct sym_stats {
	uint64_t files_opened, files_failed, lookups, method_tables_built;
};
void sym_get_stats(const struct symbolizer *s, struct sym_stats *out);

#endif
