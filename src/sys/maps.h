/* maps.h — the one reader of /proc/PID/maps (under the configured proc root,
 * sys/sysroot.h), for everything that asks what a process maps: the code
 * cache (code/codecache.h), oat search (resolve/oat_search.h), library
 * lookup by name (plan/pattern_native.c) and paths as a process sees them
 * (sys/proc_path.h).
 *
 * Lines that do not have the kernel's shape
 *   START-END PERMS OFFSET DEV INODE [PATH]
 * are skipped; PATH is the rest of the line after the blanks that follow
 * INODE (it may hold blanks itself, e.g. " (deleted)"). */
#ifndef UPROBESTATS_SYS_MAPS_H
#define UPROBESTATS_SYS_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"

struct proc_mapping {
	uint64_t start, end;      /* [start, end) in the process */
	uint64_t offset;          /* file offset of start */
	char perms[5];            /* "r-xp" */
	dev_t dev;                /* makedev(major, minor) */
	uint64_t inode;
	const char *path;         /* "" when none; valid during the callback only */
	size_t path_len;
};

static inline bool proc_mapping_exec(const struct proc_mapping *m)
{
	return m->perms[2] == 'x';
}

/* Called for each mapping in file order; a non-zero return stops the walk
 * and is returned. */
typedef int (*proc_maps_fn)(void *ctx, const struct proc_mapping *m);

/* Over maps text (len bytes, no NUL needed). */
int proc_maps_parse(const char *text, size_t len, proc_maps_fn fn, void *ctx);

/* Over a file laid out like /proc/PID/maps (tests give their own).
 * Errors name the file. */
int proc_maps_read_file(const char *path, proc_maps_fn fn, void *ctx, struct err *err);

/* Over <proc_dir>/<pid>/maps; proc_dir NULL means "/proc". */
int proc_maps_read(const char *proc_dir, pid_t pid, proc_maps_fn fn, void *ctx,
		   struct err *err);

/* "<proc_dir>/<pid>/maps" into buf (for messages). */
void proc_maps_path(const char *proc_dir, pid_t pid, char *buf, size_t size);

#endif
