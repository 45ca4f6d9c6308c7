#include "common/zip_path.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define MAX_ENTRY_NAME 0xffff     /* a zip name length is 16 bits */

bool zip_entry_name_ok(const char *name, size_t len, const char **why)
{
	size_t start = 0;

	if (!len)
		return *why = "an empty name", false;
	if (len > MAX_ENTRY_NAME)
		return *why = "a name over 65535 bytes", false;
	if (memchr(name, '\0', len))
		return *why = "a NUL byte in the name", false;
	if (name[0] == '/')
		return *why = "an absolute name (a leading '/')", false;
	if (memchr(name, '\\', len))
		return *why = "a '\\' in the name", false;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && name[i] != '/')
			continue;
		size_t n = i - start;
		if (!n)
			return *why = i == len ? "a trailing '/' (a directory)" : "an empty component",
			       false;
		if (n == 1 && name[start] == '.')
			return *why = "a '.' component", false;
		if (n == 2 && name[start] == '.' && name[start + 1] == '.')
			return *why = "a '..' component", false;
		start = i + 1;
	}
	return true;
}

/* The '!' of CONTAINER!ENTRY: right after a name ending in .apk, .zip or .jar. */
static const char *bare_separator(const char *path)
{
	static const char *const exts[] = { ".apk", ".zip", ".jar" };

	for (const char *bang = strchr(path, '!'); bang; bang = strchr(bang + 1, '!')) {
		for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++)
			if (bang - path >= 5 && !strncasecmp(bang - 4, exts[i], 4) &&
			    bang[-5] != '/')
				return bang;
	}
	return NULL;
}

int zip_path_split(const char *path, size_t *container_len, const char **entry,
		   struct err *err)
{
	const char *sep = strstr(path, "!/"), *name, *why;
	size_t clen;

	if (sep) {
		name = sep + 2;
	} else if ((sep = bare_separator(path))) {
		name = sep + 1;
	} else {
		return 0;
	}
	clen = (size_t)(sep - path);
	if (!clen || path[clen - 1] == '/')
		return err_set(err, -EINVAL, "%.300s: expected a zip file's path before '!', "
			       "found %s", path, clen ? "a directory ('/')" : "nothing");
	if (!zip_entry_name_ok(name, strlen(name), &why))
		return err_set(err, -EINVAL, "%.300s+%zu: expected an entry name after '!' "
			       "(like lib/arm64-v8a/libfoo.so), found %s", path,
			       (size_t)(name - path), why);
	*container_len = clen;
	*entry = name;
	return 1;
}

int zip_path_join(char *buf, size_t size, const char *container, size_t container_len,
		  const char *entry, size_t entry_len)
{
	if (container_len > INT32_MAX || entry_len > INT32_MAX ||
	    (size_t)snprintf(buf, size, "%.*s!/%.*s", (int)container_len, container,
			     (int)entry_len, entry) >= size)
		return -ENAMETOOLONG;
	return 0;
}
