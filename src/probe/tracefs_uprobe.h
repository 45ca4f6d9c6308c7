/* tracefs_uprobe.h — uprobes through tracefs uprobe_events, for kernels
 * without the uprobe PMU (before 4.17) or when forced (--force-tracefs).
 *
 * Each probe is an event "uprobestats_<ourpid>_<ourstart>/p<N>" (or r<N>
 * for uretprobes; ourstart: our start time in clock ticks after boot)
 * created in uprobe_events, opened as a tracepoint perf event and removed
 * again on detach.  An attach creates all its events first, many lines a
 * write (the kernel walks every event for each one it creates, each write
 * costs a lock round of its own), then opens them.  Events left by a run that was killed are found by their
 * group name (no process with that pid and start time exists any more) and
 * removed at the next start; a live run's events, and other tools', never
 * are, so any number of runs can share the machine. */
#ifndef UPROBESTATS_PROBE_TRACEFS_UPROBE_H
#define UPROBESTATS_PROBE_TRACEFS_UPROBE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"

struct tracefs {
	char dir[256];        /* /sys/kernel/tracing or /sys/kernel/debug/tracing */
	unsigned next_id;     /* per run: event names p0, p1, … */
	pid_t owner;          /* our pid, part of the group name */
	uint64_t owner_start; /* our start time, the other part */
	char group[48];       /* "uprobestats_<pid>_<start>" */
	/* write(2), or a unit test's fake kernel. */
	ssize_t (*write)(int fd, const void *buf, size_t n);
};

/* Finds a mounted tracefs with uprobe_events; root "" means the real one. */
int tracefs_open(struct tracefs *t, const char *root, struct err *err);

/* Removes our events (groups uprobestats_*) whose "group/name" pick() chooses,
 * reading uprobe_events again until it shows none it has not removed: one
 * reading can miss lines when another process removes events meanwhile.  An
 * event the kernel refuses (EBUSY: a perf event still holds it) is tried
 * again for busy_wait_ms; with 0 it is not, nor is the rest of its group
 * (each write waits for the kernel's event_mutex: a closer holds it across
 * each of its closes).  Returns how many were removed, or -errno when
 * uprobe_events cannot be read or written. */
int tracefs_remove_where(const char *dir, bool (*pick)(const char *name, const void *ctx),
			 const void *ctx, long busy_wait_ms);

/* Removes the events of groups uprobestats_<pid>_<start> whose run is gone
 * (and of the older uprobestats_<pid> whose pid no longer runs uprobestats),
 * unless a live closer of the run still removes them: a process in proc_dir
 * whose argv[1] is closer_command and argv[4] the group (closer.h; NULL: no
 * closers looked for); the groups from events/ where it can be read, else
 * uprobe_events.  A group still busy otherwise is left at its first busy
 * event.  Returns how many were removed (or a negative error). */
int tracefs_remove_stale(struct tracefs *t, const char *proc_dir, const char *closer_command,
			 struct err *err);

/* Whether the run that named name ("uprobestats_<pid>_<start>/…": a group
 * and what follows it) is gone; false for names we do not write. */
bool tracefs_owner_gone(const char *proc_dir, const char *name);

/* Removes every event of group (the closer's last step, once none is open):
 * how many, or -errno when uprobe_events cannot be read or written. */
int tracefs_remove_group(const char *dir, const char *group);

/* One event to create: the caller fills path, offset and retprobe;
 * tracefs_create names it and reads its id. */
struct tracefs_event {
	const char *path;
	uint64_t offset;
	bool retprobe;
	const void *owner;    /* the caller's, untouched */
	char name[64];        /* "uprobestats_123_4567/p4" */
	int id;               /* its tracepoint id, for perf_event_open */
};

/* Creates events ev[0..n), many lines a write, and reads their ids.  All or
 * nothing: on failure every one it created is removed again, *failed is the
 * index of the event at fault and err says why (the kernel refuses a line
 * with an errno and stops there: the events before it exist, none after). */
int tracefs_create(struct tracefs *t, struct tracefs_event *ev, size_t n, size_t *failed,
		   struct err *err);

/* Removes events ev[0..n) (never opened, or closed), many lines a write. */
void tracefs_remove(const struct tracefs *t, const struct tracefs_event *ev, size_t n);

struct tracefs_probe {
	char name[64];        /* "uprobestats_123_4567/p4" */
	int perf_fd;          /* the perf event, or the perf link holding it */
};

/* Opens created event ev for pid (-1: every process), binds prog_fd
 * (perf_event_bind: cookie NULL, or the place's cookie through a perf link)
 * and enables it.  On failure the event is left to the caller to remove. */
int tracefs_open_event(const struct tracefs_event *ev, pid_t pid, int prog_fd,
		       const uint64_t *cookie, struct tracefs_probe *out, struct err *err);

/* Closes the perf event and removes the event from uprobe_events. */
void tracefs_detach(struct tracefs *t, struct tracefs_probe *p);

#endif
