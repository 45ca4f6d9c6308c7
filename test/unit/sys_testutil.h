/* sys_testutil.h — fixture trees for the sys/ tests: fake /proc, /sys and
 * /dev/__properties__ laid out in a scratch directory, and fake executables. */
#ifndef UPROBESTATS_SYS_TESTUTIL_H
#define UPROBESTATS_SYS_TESTUTIL_H

#include <stddef.h>

/* test/fixtures/<rel> in the source tree. */
const char *st_fixture(const char *rel);

/* A fresh empty directory under the scratch dir: <scratch>/<name>-<n>. */
const char *st_mkdtemp(const char *name, char *buf, size_t size);

/* Writes text to dir/rel, creating parent directories.  0 or -errno. */
int st_write(const char *dir, const char *rel, const char *text);

/* Writes an executable shell script (the body after "#!/bin/sh\n"). */
int st_write_script(const char *dir, const char *rel, const char *body);

/* Copies the regular files of src_dir into dst_dir (created). */
int st_copy_dir(const char *src_dir, const char *dst_dir);

/* Overwrites n bytes at off in path. */
int st_patch(const char *path, long off, const void *bytes, size_t n);

/* Reads up to size bytes at off of path. */
int st_peek(const char *path, long off, void *bytes, size_t n);

#endif
