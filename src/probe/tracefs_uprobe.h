/* tracefs_uprobe.h — uprobes through tracefs uprobe_events, for kernels
 * without the uprobe PMU (before 4.17) or when forced (--force-tracefs).
 *
 * Each probe is an event "uprobestats_<ourpid>_<ourstart>/p<N>" (or r<N>
 * for uretprobes; ourstart: our start time in clock ticks after boot)
 * created in uprobe_events, opened as a tracepoint perf event and removed
 * again on detach.  Events left by a run that was killed are found by their
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
};

/* Finds a mounted tracefs with uprobe_events; root "" means the real one. */
int tracefs_open(struct tracefs *t, const char *root, struct err *err);

/* Removes our events (groups uprobestats_*) whose "group/name" pick() chooses,
 * reading uprobe_events again until it shows none it has not removed: one
 * reading can miss lines when another process removes events meanwhile.  An
 * event the kernel refuses (EBUSY: a perf event still holds it) is tried
 * again for busy_wait_ms.  Returns how many were removed, or -errno when
 * uprobe_events cannot be read or written. */
int tracefs_remove_where(const char *dir, bool (*pick)(const char *name, const void *ctx),
			 const void *ctx, long busy_wait_ms);

/* Removes the events of groups uprobestats_<pid>_<start> whose run is gone
 * (and of the older uprobestats_<pid> whose pid no longer runs uprobestats);
 * returns how many were removed (or a negative error). */
int tracefs_remove_stale(struct tracefs *t, const char *proc_dir, struct err *err);

/* Removes every event of group (the closer's last step, once none is open):
 * how many, or -errno when uprobe_events cannot be read. */
int tracefs_remove_group(const char *dir, const char *group);

struct tracefs_probe {
	char name[64];        /* "uprobestats_123_4567/p4" */
	int perf_fd;          /* the perf event, or the perf link holding it */
};

/* Creates the event, opens it for pid (-1: every process), binds prog_fd
 * (perf_event_bind: cookie NULL, or the place's cookie through a perf link)
 * and enables it.  On failure nothing is left in uprobe_events. */
int tracefs_attach(struct tracefs *t, const char *path, uint64_t offset, bool retprobe,
		   pid_t pid, int prog_fd, const uint64_t *cookie, struct tracefs_probe *out,
		   struct err *err);

/* Closes the perf event and removes the event from uprobe_events. */
void tracefs_detach(struct tracefs *t, struct tracefs_probe *p);

#endif
