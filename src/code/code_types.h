/* code_types.h — what the two layers of the code cache (codecache.h per
 * process, codefile.h per file) and their users speak: what is at a PC
 * (struct code_info, the unwinder's lookup answer), the callback over
 * compiled Java method ranges and the cache's counters.  Header only, so
 * neither layer includes the other's header back. */
#ifndef UPROBESTATS_CODE_CODE_TYPES_H
#define UPROBESTATS_CODE_CODE_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "formats/cfi.h"
#include "vocab/frames.h"

/* What the lookup says about the code at one PC. */
struct code_info {
	enum frame_kind kind;
	const char *file;        /* mapping path ("" for anonymous), owned by the cache */
	uint64_t offset;         /* file offset of the PC */
	const char *symbol;      /* "Class.method(params)", "func", or NULL */
	uint64_t symbol_off;     /* PC - symbol start */
	/* FRAME_JAVA */
	uint32_t frame_size;
	uint32_t core_spill_mask; /* ART's register numbers; the saves are restored */
	bool frameless;          /* frame size 0: the return address stays in lr/[sp] */
	bool stack_map_hit;      /* the PC is code + a Default/OSR stack map's native pc */
	uint32_t dex_pc;         /* of that stack map; UINT32_MAX: none */
	int32_t line;            /* source line from the dex debug info; 0: unknown */
	/* FRAME_NATIVE */
	bool has_cfi;
	struct cfi_row cfi;      /* when has_cfi: addresses already in the process */
	int cfi_error;           /* why there is no row (-ENOENT: no FDE covers the PC) */
	bool file_has_cfi;       /* false: the file has no .eh_frame/.debug_frame at all,
				  * so frame pointers are all there is */
	/* both: the PC is the first instruction of its symbol/method */
	bool at_start;
	/* FRAME_JAVA: the PC is a return instruction (an exit probe's place):
	 * the frame is already gone, as at the first instruction */
	bool at_exit;
	const char *why;         /* FRAME_UNKNOWN: what could not be read */
};

/* Java method names longer than this end in "..." */
#define CODE_NAME_MAX 1024

/* One compiled Java method's code range in a process and its CodeInfo frame
 * size; a non-zero return stops the walk (see code_cache_java_ranges). */
typedef int (*code_cache_java_fn)(void *ctx, uint64_t start, uint64_t end, uint32_t frame_size);

/* What the cache has done so far (tests check that a file is parsed once). */
struct code_cache_stats {
	uint64_t files_opened;     /* files opened and parsed (ELF headers, symbols) */
	uint64_t files_failed;     /* files that could not be read (tried once) */
	uint64_t oat_parsed;       /* oat/odex method tables built */
	uint64_t maps_read;        /* /proc/PID/maps reads */
	uint64_t exits_analysed;   /* exit analyses run: each method's once (code_file_exits) */
};

#endif
