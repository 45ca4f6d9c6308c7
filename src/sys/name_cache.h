/* name_cache.h — pid -> process name (argv[0]) for events, read from /proc
 * once per pid and kept in a fixed-size table (no allocation per event). */
#ifndef UPROBESTATS_SYS_NAME_CACHE_H
#define UPROBESTATS_SYS_NAME_CACHE_H

#include <stdint.h>
#include <sys/types.h>

#define NAME_CACHE_SLOTS 1024
#define NAME_CACHE_LEN 96
/* A live pid's name is read again when a record comes this long after the
 * last reading: a pid reused by another process, or an app's process renamed
 * after zygote forked it ("<pre-initialized>", then its package), shows its
 * new name from then on. */
#define NAME_CACHE_RECHECK_NS 1000000000ull

struct name_cache_slot {
	pid_t pid;                   /* 0: empty */
	uint64_t read_ns;            /* when its name was read (the caller's clock) */
	char name[NAME_CACHE_LEN];   /* "" when the process was gone before we looked */
};

struct name_cache {
	const char *proc_dir;
	struct name_cache_slot slots[NAME_CACHE_SLOTS];
};

void name_cache_init(struct name_cache *c, const char *proc_dir);
/* The process name of pid: argv[0]; when the cmdline is gone (a zombie, an
 * exited short-lived process), the kernel's comm, the executable's name, else
 * fallback (a record's thread name; may be NULL).  NULL when none is known.
 * now_ns is the record's time (CLOCK_MONOTONIC): a name read more than
 * NAME_CACHE_RECHECK_NS before it is read again, and kept when the process
 * is gone by then (its late records keep its name); 0: never again. */
const char *name_cache_get(struct name_cache *c, pid_t pid, const char *fallback,
			   uint64_t now_ns);

#endif
