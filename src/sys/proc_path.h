/* proc_path.h — a file path as a traced process sees it, turned into a path this
 * process can open that names the same file.
 *
 * A process in a chroot or in its own mount namespace (Android apps, an /apex bind
 * mount, a test chroot) sees its files under other paths than the tracer, or sees
 * another file under the same path.  Its view is /proc/PID/root/PATH (the kernel
 * resolves it with the process's root and mounts); the files it really mapped are
 * the device/inode pairs of /proc/PID/maps.  A uprobe goes on an inode, so the
 * path handed to the kernel must name the inode the process maps, never the
 * tracer's namesake. */
#ifndef UPROBESTATS_SYS_PROC_PATH_H
#define UPROBESTATS_SYS_PROC_PATH_H

#include <stddef.h>
#include <sys/types.h>

struct proc_mapping;

/* Writes to out the path under which this process opens the file that pid knows
 * as path:
 *  - pid maps that file (the device and inode of <proc_dir>/PID/root/PATH, or a
 *    mapping whose maps path is PATH): the maps path when it names the same file
 *    here, else <proc_dir>/PID/root/PATH (or the maps path under it) when that
 *    does, else <proc_dir>/PID/map_files/START-END (the mapping itself);
 *  - not mapped: <proc_dir>/PID/root/PATH when it exists and is another file than
 *    PATH here (a chroot, a bind mount), else PATH.
 * pid <= 0 or a path not starting with '/': PATH unchanged.
 * CONTAINER!/ENTRY (common/zip_path.h: a library in an APK): CONTAINER resolved
 * as above, "!/ENTRY" kept.
 * 0, or -ENAMETOOLONG when the result does not fit size. */
int proc_path_resolve(const char *proc_dir, pid_t pid, const char *path, char *out,
		      size_t size);

/* Writes to out the path under which this process opens the file of pm, one
 * file-backed mapping of pid's maps: the maps path when it names that file (its
 * device and inode) here, else <proc_dir>/PID/root/PATH when that does (a chroot),
 * else <proc_dir>/PID/map_files/START-END (a mount namespace's namesake: the
 * mapping itself).  0, or -ENAMETOOLONG when the result does not fit size. */
int proc_path_of_mapping(const char *proc_dir, pid_t pid, const struct proc_mapping *pm,
			 char *out, size_t size);

#endif
