/* proc.h — finding processes through /proc (or a fixture directory laid out
 * like it, for tests). */
#ifndef UPROBESTATS_SYS_PROC_H
#define UPROBESTATS_SYS_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/err.h"

/* Reads argv[0] of pid (the cmdline up to its first NUL) into buf.
 * Returns 0, or -ENOENT when the process is gone, or -ENODATA for kernel
 * threads and zombies (empty cmdline). */
int proc_argv0(const char *proc_dir, pid_t pid, char *buf, size_t size);

/* Every pid whose argv[0] equals name exactly, in ascending pid order.
 * *out is malloc'ed (free it); *n may be 0. */
int proc_find_by_name(const char *proc_dir, const char *name, pid_t **out, size_t *n,
		      struct err *err);

bool proc_alive(const char *proc_dir, pid_t pid);

#endif
