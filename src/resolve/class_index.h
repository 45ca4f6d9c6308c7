/* class_index.h — which classes the dex files of one oat/odex define,
 * cached on disk.
 *
 * A cache file (<cache_dir>/<hash of path>.cls) holds a header line with the
 * oat's path, size, mtime, oat checksum and ISA, then one class descriptor
 * per line; it is used only when all of those still match the file. */
#ifndef UPROBESTATS_RESOLVE_CLASS_INDEX_H
#define UPROBESTATS_RESOLVE_CLASS_INDEX_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

struct class_index;         /* opaque */

/* cache_dir NULL: no caching.  dex_files: extra archives for finding the
 * dex (see oat_dexfile.h).  A dex that cannot be found makes the index
 * partial (class_index_missing_dex() says so); it is not cached then.
 * code: the command's code cache (code/codecache.h; required), which the
 * oat file and its dex files are taken from. */
struct code_cache;
int class_index_load(struct code_cache *code, const char *oat_path, const char *cache_dir,
		     const char *const *dex_files, size_t n_dex_files, struct class_index **out,
		     struct err *err);
void class_index_free(struct class_index *ci);

bool class_index_has(const struct class_index *ci, const char *desc);
bool class_index_from_cache(const struct class_index *ci);
const char *class_index_isa(const struct class_index *ci);
size_t class_index_count(const struct class_index *ci);
/* Non-empty when some dex could not be read (the first reason). */
const char *class_index_missing_dex(const struct class_index *ci);

#endif
