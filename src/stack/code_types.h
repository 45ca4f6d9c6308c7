/* code_types.h — what the two layers of the code cache (codecache.h per
 * process, codefile.h per file) both speak: the callback over compiled Java
 * method ranges and the cache's counters.  Header only, so neither layer
 * includes the other's header back. */
#ifndef UPROBESTATS_STACK_CODE_TYPES_H
#define UPROBESTATS_STACK_CODE_TYPES_H

#include <stdint.h>

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
};

#endif
