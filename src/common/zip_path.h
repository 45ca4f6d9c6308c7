/* zip_path.h — the spelling of a file stored inside a zip archive (an APK, a
 * split APK, a jar), as bionic's linker and Android's tools write it:
 *
 *   CONTAINER!/ENTRY      /data/app/com.example/base.apk!/lib/x86_64/libfoo.so
 *   CONTAINER!ENTRY       /data/app/com.example/base.apk!lib/x86_64/libfoo.so
 *                         (only after a name ending in .apk, .zip or .jar)
 *
 * The separator is the first "!/" (the linker's rule), else the first '!'
 * right after ".apk", ".zip" or ".jar".  ENTRY is a zip entry name: relative,
 * no empty, "." or ".." component, no NUL, no trailing '/'.  Also the check of
 * entry names read from an archive (the same rules), so that a hostile zip
 * never names a file outside itself.  Pure string work: used by formats/zip,
 * sys/proc_path (the container as a process sees it), the code cache and the
 * planners. */
#ifndef UPROBESTATS_COMMON_ZIP_PATH_H
#define UPROBESTATS_COMMON_ZIP_PATH_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

/* 1 when path names a zip entry (*container_len: the container's length in
 * path, *entry: the entry name in path), 0 when it is a plain path (no
 * separator), or -EINVAL with err set ("PATH: ... expected ..., found ...")
 * when it has a separator but the container or the entry name is bad. */
int zip_path_split(const char *path, size_t *container_len, const char **entry,
		   struct err *err);

/* Whether name (len bytes, not NUL-terminated) is a safe entry name (see
 * above); when not, *why says what is wrong ("a '..' component"). */
bool zip_entry_name_ok(const char *name, size_t len, const char **why);

/* "CONTAINER!/ENTRY" into buf; -ENAMETOOLONG when it does not fit. */
int zip_path_join(char *buf, size_t size, const char *container, size_t container_len,
		  const char *entry, size_t entry_len);

#endif
