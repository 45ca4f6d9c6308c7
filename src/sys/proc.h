/* proc.h — finding processes through /proc (or a fixture directory laid out
 * like it, for tests). */
#ifndef UPROBESTATS_SYS_PROC_H
#define UPROBESTATS_SYS_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"

/* Reads argv[0] of pid (the cmdline up to its first NUL) into buf.
 * Returns 0, or -ENOENT when the process is gone, or -ENODATA for kernel
 * threads and zombies (empty cmdline). */
int proc_argv0(const char *proc_dir, pid_t pid, char *buf, size_t size);
/* The kernel's name of pid (/proc/PID/comm, at most 15 characters, without
 * its newline); false when the process is gone. */
bool proc_comm(const char *proc_dir, pid_t pid, char *buf, size_t size);

/* Whether a process whose argv[0] is argv0 is the one called name, as Android
 * names processes (toybox ps NAME, pidof): argv[0] exactly, or, for a name
 * without '/', argv[0]'s last path component ("/system/bin/surfaceflinger" is
 * "surfaceflinger"; "/system/bin/cat", a symlink to toybox, is "cat", not
 * "toybox"). */
bool proc_name_matches(const char *argv0, const char *name);

/* Every pid proc_name_matches() name, in ascending pid order.
 * *out is malloc'ed (free it); *n may be 0. */
int proc_find_by_name(const char *proc_dir, const char *name, pid_t **out, size_t *n,
		      struct err *err);

/* The running process name (argv[0]'s basename or comm) closest to name by
 * edit distance, into buf; "" when none is close. */
void proc_nearest_name(const char *proc_dir, const char *name, char *buf, size_t size);

/* 1 when pid maps the file at path (same device and inode, or the same path),
 * 0 when not, negative errno when either cannot be read (-ESRCH: it maps
 * nothing, a zombie or a process gone). */
int proc_maps_file(const char *proc_dir, pid_t pid, const char *path);

bool proc_alive(const char *proc_dir, pid_t pid);

/* Whether pid can be traced: 0 for a live user process; -ESRCH with err
 * saying what it is instead (gone, a zombie, a kernel thread). */
int proc_check_traceable(const char *proc_dir, pid_t pid, struct err *err);

/* pid's start time (clock ticks after boot, /proc/PID/stat field 22): with
 * the pid, it names one process for good (a reused pid starts later).  As
 * the initial time namespace sees it, whatever ours: the kernel shows it
 * shifted by the reader's CLOCK_BOOTTIME offset (proc_boottime_offset_ticks).
 * Returns 0, -ENOENT without a stat file (the process is gone, or a test
 * fixture has none), -ESRCH for a zombie, -EINVAL for a stat line it cannot
 * read. */
int proc_start_time(const char *proc_dir, pid_t pid, uint64_t *start);

/* Our time namespace's CLOCK_BOOTTIME offset in clock ticks, from
 * timens_offsets (a file of that format; NULL: /proc/self's); 0 without one
 * (no time namespace, or a kernel before 5.6). */
int64_t proc_boottime_offset_ticks(const char *timens_offsets);

/* Real uid of pid from /proc/PID/status, or -1. */
long proc_uid(const char *proc_dir, pid_t pid);
/* The process (thread group) of thread tid from /proc/TID/status (any
 * thread's directory can be opened there, listed or not), or -1 when it is
 * gone. */
long proc_tgid(const char *proc_dir, pid_t tid);

/* Waiting for a process to start (target_process_selection *_ON_START).
 * proc_watch_init() remembers every process that exists now; each
 * proc_watch_poll() looks only at processes that appeared since and returns
 * the first whose argv[0] is `name` (or, with name NULL, the first app
 * process: uid >= 10000 on Android, any process elsewhere).  A new process
 * may not have its final name yet — caught between fork and exec, or an
 * Android app between zygote's fork and taking its package name — so a new
 * process that does not match is looked at again on every poll for
 * PROC_WATCH_SETTLE_NS after it was first seen (longer while its name is
 * zygote's or "<pre-initialized>"). */
#define PROC_WATCH_SETTLE_NS (2ull * 1000000000ull)
#define PROC_WATCH_UNNAMED_NS (20ull * 1000000000ull)

struct proc_watch_candidate {
	pid_t pid;
	uint64_t first_seen_ns;
};

struct proc_watch {
	const char *proc_dir;
	const char *name;         /* NULL: any app process */
	bool android;             /* app = uid >= 10000 */
	pid_t *known;             /* sorted: processes that are not candidates */
	size_t n_known, cap_known;
	struct proc_watch_candidate *cands; /* new, not (yet) matching */
	size_t n_cands, cap_cands;
};

int proc_watch_init(struct proc_watch *w, const char *proc_dir, const char *name, bool android,
		    struct err *err);
/* Returns the pid found, 0 when none yet, or a negative error. */
pid_t proc_watch_poll(struct proc_watch *w);
/* The same with the caller's clock (tests). */
pid_t proc_watch_poll_at(struct proc_watch *w, uint64_t now_ns);
void proc_watch_free(struct proc_watch *w);

#define ANDROID_FIRST_APP_UID 10000

#endif
