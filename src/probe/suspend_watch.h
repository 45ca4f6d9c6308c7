/* suspend_watch.h — when the machine suspended, on CLOCK_MONOTONIC.
 *
 * Records carry CLOCK_MONOTONIC (bpf_ktime_get_ns, every kernel); BOOTTIME
 * is MONOTONIC plus an offset that grows by the time spent suspended.  The
 * run reads both clocks when it drains the buffers, so a record made before
 * a suspend but drained after it (the buffers wake the run on a byte
 * threshold or at the next --flush-ms tick, not on every record) would take
 * the offset after the suspend: seconds late.  What tells the two apart is
 * the suspend's own place on MONOTONIC: user tasks are frozen from
 * "freeze_processes" to "thaw_processes", so every record made before the
 * suspend is earlier than the kernel's "machine_suspend" event and every one
 * after it later.
 *
 * A tracefs instance of the run's own (instances/uprobestats_<pid>_<start>,
 * as Perfetto's traced makes its own) records power:suspend_resume on the
 * "mono" trace clock (ktime_get_mono_fast_ns: CLOCK_MONOTONIC, as the
 * records' stamps): a few pages, a few dozen events a suspend, nothing on
 * the traced processes.  Best effort: without tracefs, the event or the
 * mono clock, the run goes on without it (suspend_watch_on false) and a
 * suspend's boundary is the run's last clock reading before it. */
#ifndef UPROBESTATS_PROBE_SUSPEND_WATCH_H
#define UPROBESTATS_PROBE_SUSPEND_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct suspend_watch {
	char dir[512];        /* the instance's directory; "" when off */
};

/* Makes the instance in the mounted tracefs under root ("" or NULL: the
 * real one: /sys/kernel/tracing, else /sys/kernel/debug/tracing), named as
 * the run's tracefs group is (tracefs_uprobe.h: our pid and start time),
 * first removing instances of gone runs (the same naming, no live owner).
 * Returns 0, or a negative errno with err saying what is missing; the watch
 * is then off and nothing is left behind. */
int suspend_watch_open(struct suspend_watch *w, const char *root, const char *proc_dir,
		       struct err *err);
bool suspend_watch_on(const struct suspend_watch *w);
/* The latest "machine_suspend" event's MONOTONIC ns in (after, before]:
 * true with *at, false when there is none (no suspend then, or the watch is
 * off). */
bool suspend_watch_boundary(const struct suspend_watch *w, uint64_t after, uint64_t before,
			    uint64_t *at);
/* Stops the event and removes the instance. */
void suspend_watch_close(struct suspend_watch *w);

/* The same search in the text of an instance's `trace` file (lines like
 * "  <idle>-0  [000] d..1.  1234.567890: suspend_resume: machine_suspend[1]
 * begin"), for tests. */
bool suspend_watch_parse(const char *text, size_t n, uint64_t after, uint64_t before,
			 uint64_t *at);

#endif
