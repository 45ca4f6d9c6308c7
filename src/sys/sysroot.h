/* sysroot.h — where the device-environment layer looks, and reading the small
 * text files it finds there (/proc/sys knobs, sysfs attributes, /proc/self).
 *
 * Every path the sys/ modules touch comes from a struct sys_paths so tests can
 * point them at a fixture tree.  A NULL field means the real location. */
#ifndef UPROBESTATS_SYS_SYSROOT_H
#define UPROBESTATS_SYS_SYSROOT_H

#include <stdbool.h>
#include <stddef.h>

#define SYS_DEFAULT_PROC "/proc"
#define SYS_DEFAULT_SYS "/sys"
#define SYS_DEFAULT_PROPS "/dev/__properties__"
#define SYS_DEFAULT_GETPROP "/system/bin/getprop"
#define SYS_DEFAULT_SOCKETS "/dev/socket"

struct sys_paths {
	const char *proc;        /* "/proc" */
	const char *sys;         /* "/sys" */
	const char *props; /* "/dev/__properties__" (a directory, or one file before Android 7) */
	const char *getprop;     /* "/system/bin/getprop"; "" turns the fallback off */
	const char *sockets;     /* "/dev/socket": logdw, statsdw */
	const char *uname_release; /* kernel release override; NULL: <proc>/sys/kernel/osrelease,
				      then uname(2) */
};

/* Copy of in (which may be NULL) with every NULL field set to its default. */
struct sys_paths sys_paths_resolve(const struct sys_paths *in);

/* snprintf(buf, "%s/%s", dir, rel); false when it does not fit. */
bool sys_path_join(char *buf, size_t size, const char *dir, const char *rel);

/* Reads a small text file whole (at most size-1 bytes) and strips trailing
 * whitespace.  Returns 0 or a negative errno (-ENOENT, -EACCES, ...). */
int sys_read_text(const char *path, char *buf, size_t size);

/* sys_read_text + one decimal integer (leading '-' allowed), nothing else on
 * the line.  -EINVAL when the content is not a number. */
int sys_read_long(const char *path, long *out);

/* dir/rel joined and read as text / as a number. */
int sys_read_text_at(const char *dir, const char *rel, char *buf, size_t size);
int sys_read_long_at(const char *dir, const char *rel, long *out);

/* Does dir/rel exist (any file type)? */
bool sys_exists_at(const char *dir, const char *rel);

/* Kernel release ("6.1.75-android14-11-g…"): the override, else
 * <proc>/sys/kernel/osrelease, else uname(2). */
int sys_kernel_release(const struct sys_paths *p, char *buf, size_t size);

/* Parses "major.minor[.patch][-anything]".  false when it does not start so. */
bool sys_kernel_version(const char *release, unsigned *major, unsigned *minor);

/* In the text of /proc/mounts, the mount point of the first filesystem of
 * type fstype ("tracefs", "bpf"), octal escapes (\040) decoded.  0, or
 * -ENOENT when there is none, -ERANGE when it does not fit mnt. */
int sys_find_mount(const char *text, size_t len, const char *fstype, char *mnt, size_t size);

#endif
