/* mapfile.h — read-only views of whole files, for parsers.
 *
 * A file is mmapped (shared, read-only: a private mapping would show the
 * breakpoints of other tools' live uprobes on it) when it is a regular file,
 * and read into memory otherwise (pipes, /proc, a file system without shared
 * mappings).  Errors name the path and the reason: missing, a directory,
 * unreadable, too large, empty (when the caller forbids it). */
#ifndef UPROBESTATS_COMMON_MAPFILE_H
#define UPROBESTATS_COMMON_MAPFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"

struct mapped_file {
	const uint8_t *data;
	size_t size;
	dev_t dev;
	ino_t ino;
	int64_t mtime_ns;
	int mmapped;           /* 1: munmap on release, 0: free */
};

#define MAPFILE_ALLOW_EMPTY 0x1
/* Only a regular file (the binary-format readers: ELF, OAT, VDEX, zip): a
 * device, FIFO or socket is refused with what it is (/dev/zero would
 * otherwise be read forever). */
#define MAPFILE_REGULAR     0x2
/* A regular file or a stream (a pipe, /proc, /dev/stdin as a pipe), never a
 * character or block device or a socket (configs: /dev/zero is refused with
 * what it is rather than read to the size limit). */
#define MAPFILE_NO_DEVICE   0x4

/* Whatever a caller asks, nothing larger is mapped or read. */
#define MAPFILE_MAX_SIZE ((size_t)4 << 30)
/* Streams (pipes, /proc files) with max_size 0 are read up to this. */
#define MAPFILE_MAX_STREAM ((size_t)64 << 20)

/* max_size == 0 means the limits above. */
int mapfile_open(const char *path, size_t max_size, unsigned flags,
		 struct mapped_file *out, struct err *err);
void mapfile_close(struct mapped_file *f);

#endif
