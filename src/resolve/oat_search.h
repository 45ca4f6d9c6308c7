/* oat_search.h — finding the oat/odex file that defines a class, for configs
 * that name a Java method but no file.
 *
 * Search order: the oat/odex files the target process has mapped
 * (/proc/PID/maps, in mapping order), then the search roots (the boot image
 * and framework/apex/app locations for the ISA by default), depth-first in
 * name order.  For each candidate the set of classes its dex files define is
 * read from a per-file cache (keyed by path, size, mtime and oat checksum)
 * or built and cached, so a second run does no dex parsing at all. */
#ifndef UPROBESTATS_RESOLVE_OAT_SEARCH_H
#define UPROBESTATS_RESOLVE_OAT_SEARCH_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

struct code_cache;

struct oat_search_opts {
	int pid;                    /* > 0: files mapped by this process come first */
	const char *proc_dir;       /* NULL: "/proc" (sys/maps.h) */
	const char *root;           /* a chroot the files are under (-c); NULL: none */
	const char *maps_path;      /* overrides /proc/<pid>/maps (tests) */
	const char *const *roots;   /* directories searched next; NULL = defaults for isa */
	size_t n_roots;
	const char *isa;            /* "arm64", "arm", "x86", "x86_64", "riscv64"; NULL = any */
	const char *cache_dir;      /* NULL = oat_search_default_cache_dir() */
	bool no_cache;              /* neither read nor write the class-index cache */
	const char *const *dex_files; /* extra archives for dex lookup (may be NULL) */
	size_t n_dex_files;
	/* the command's parsed files (code/codecache.h; required: the class
	 * indexes read the oat files through it; java_resolve sets its own) */
	struct code_cache *code;
};

struct oat_search_hit {
	char path[4096];
	char why[1024];             /* how it was found, for verbose output */
	bool from_cache;            /* the class index came from the cache */
};

/* First candidate whose dex defines class_desc ("Lcom/foo/Bar;").  -ENOENT
 * with err naming what was searched when none does. */
int oat_search_class(const struct oat_search_opts *o, const char *class_desc,
		     struct oat_search_hit *hit, struct err *err);

/* Every candidate oat/odex in search order (the process's maps, then the
 * roots), without opening them: *paths and each entry malloc'd, caller frees.
 * Used by pattern matching, which looks into all of them. */
int oat_search_candidates(const struct oat_search_opts *o, char ***paths, size_t *n,
			  struct err *err);

/* /data/local/tmp/uprobestats-cache on Android, else $XDG_CACHE_HOME/uprobestats
 * or /tmp/uprobestats-cache. */
void oat_search_default_cache_dir(char *buf, size_t size);

/* The default roots for an ISA: NULL-terminated static list of patterns,
 * "%s" standing for the ISA. */
const char *const *oat_search_default_roots(void);

#endif
