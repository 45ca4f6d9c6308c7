/* minidebug.h — ELF "mini debug info": the .gnu_debugdata section holds an
 * xz-compressed ELF file with a .symtab of function symbols (and, in some
 * builds, a .debug_frame) for a stripped library or oat file.  Android
 * builds most system libraries that way.
 *
 * Owns: finding the section, decompressing it (formats/xz.h) with a size cap,
 * and opening the embedded ELF as an elf_file so that elf_foreach_symbol()
 * and cfi_open() work on it like on any file.  The embedded ELF's addresses
 * are the outer file's virtual addresses. */
#ifndef UPROBESTATS_FORMATS_MINIDEBUG_H
#define UPROBESTATS_FORMATS_MINIDEBUG_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "formats/elf.h"

/* The decompressed ELF may not be larger than this (Android's are < 1 MiB). */
#define MINIDEBUG_MAX_SIZE (64u << 20)

struct minidebug {
	struct elf_file *elf;       /* the embedded ELF, named "<outer>!.gnu_debugdata" */
	uint8_t *buf;               /* its bytes (owned) */
	size_t len;
};

/* 0; -ENOENT when outer has no .gnu_debugdata (err says so); -EINVAL/-ENOTSUP/
 * -EFBIG from the xz decoder or the embedded ELF's reader, err prefixed with
 * "<outer>: .gnu_debugdata". */
int minidebug_open(const struct elf_file *outer, struct minidebug *out, struct err *err);
void minidebug_close(struct minidebug *m);

#endif
