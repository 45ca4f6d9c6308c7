/* closer.h — tearing the probes down after the command has returned.
 *
 * The kernel tears a uprobe perf event down (uprobe PMU or tracefs) with a
 * wait for RCU grace periods while it holds the mutex every other teardown
 * takes (perf_trace_destroy holds event_mutex across
 * tracepoint_synchronize_unregister): 50-100 ms per event, one after the
 * other, whichever thread closes it (measured: 14 events closed from 14
 * threads at once completed 55 ms apart).  1,000 probes would hold the shell
 * for about 100 s after Ctrl-C.  So a run that stops first stops its
 * programs (session_stop: a hit then costs only the trap), writes its
 * summary, and hands the descriptors to a detached process that closes them
 * and removes the tracefs events after the command has returned.
 *
 * The closer is this binary exec'd again from a vfork (closer_main, the
 * hidden subcommand CLOSER_COMMAND): a process of 1 MB in a session of its
 * own, stdio on /dev/null, holding only the descriptors it closes (passed by
 * inheritance, their numbers through a pipe), so the shell and pipes reading
 * our output see the command end at once and the run's own exit frees its
 * memory without a forked copy sharing it.  It starts closing once this
 * process has let go of its own copies (so its closes are the last
 * references, which do the teardown), or has died: a killed run is still
 * cleaned up.  Then it removes every event of the run's tracefs group.  If
 * the closer itself is killed the kernel closes its descriptors, and a
 * tracefs event it had not removed yet is removed by the next run (its owner
 * is gone). */
#ifndef UPROBESTATS_PROBE_CLOSER_H
#define UPROBESTATS_PROBE_CLOSER_H

#include <stddef.h>
#include <sys/types.h>

/* main.c's command table names it too. */
#define CLOSER_COMMAND "__closer"

struct closer_job {
	const int *fds;             /* links and perf events, closed in this order */
	size_t n_fds;
	const char *tracefs_dir;    /* where uprobe_events is; NULL: no events */
	const char *group;          /* the run's tracefs group, removed after */
};

/* Starts the closer with copies of job's descriptors.  Returns its pid and
 * sets *release to a descriptor to close once this process has closed its
 * own copies of job->fds (the closer waits for that); or returns -errno with
 * nothing started. */
pid_t closer_start(const struct closer_job *job, int *release);

/* The closer's process: argv = { CLOSER_COMMAND, gate fd, tracefs dir or "",
 * group or "" }.  Returns its exit code. */
int closer_main(int argc, char **argv);

#endif
