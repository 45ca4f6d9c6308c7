/* tracefs_uprobe.h — uprobes through tracefs uprobe_events, for kernels
 * without the uprobe PMU (before 4.17) or when forced (--force-tracefs).
 *
 * Each probe is an event "uprobestats_<ourpid>/p<N>" (or r<N> for
 * uretprobes) created in uprobe_events, opened as a tracepoint perf event
 * and removed again on detach.  Events left by a run that was killed are
 * found by their group name (whose pid no longer runs uprobestats) and
 * removed at the next start. */
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
};

/* Finds a mounted tracefs with uprobe_events; root "" means the real one. */
int tracefs_open(struct tracefs *t, const char *root, struct err *err);

/* Removes events of groups uprobestats_<pid> whose pid is gone or is not a
 * uprobestats process; returns how many were removed (or a negative error). */
int tracefs_remove_stale(struct tracefs *t, const char *proc_dir, struct err *err);

struct tracefs_probe {
	char name[64];        /* "uprobestats_123/p4" */
	int perf_fd;
};

/* Creates the event, opens it for pid (-1: every process), binds prog_fd and
 * enables it.  On failure nothing is left in uprobe_events. */
int tracefs_attach(struct tracefs *t, const char *path, uint64_t offset, bool retprobe,
		   pid_t pid, int prog_fd, struct tracefs_probe *out, struct err *err);

/* Closes the perf event and removes the event from uprobe_events. */
void tracefs_detach(struct tracefs *t, struct tracefs_probe *p);

#endif
