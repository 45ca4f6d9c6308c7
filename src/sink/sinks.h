/* sinks.h — the set of sinks the event loop writes every event to.
 *
 * One call per decoded record (sinks_event) and per statsd atom
 * (sinks_atom), from a single thread; sinks_flush after each batch (each
 * wake-up of the loop) so people watching the text see it promptly;
 * sinks_finish once at exit with the per-probe counters, which prints the
 * summary; sinks_close to free.  Per event: no allocation, a few memcpys into
 * each sink's buffer.
 *
 * Default rule (sinks_plan): statsd is on when its socket exists
 * (SINKS_STATSD_AUTO, i.e. on Android) and text goes to stdout when neither
 * statsd nor JSON is on.  A trace file is additive.  Any combination may be
 * asked for explicitly. */
#ifndef UPROBESTATS_SINK_SINKS_H
#define UPROBESTATS_SINK_SINKS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/err.h"
#include "sink/sink_types.h"
#include "sink/summary.h"
#include "sink/trace_out.h"
#include "vocab/event.h"

struct sinks;

/* Apply the default rule: returns the options sinks_open will use.
 * statsd_socket_exists is what the caller found at statsd_path. */
struct sinks_options sinks_plan(const struct sinks_options *in, bool statsd_socket_exists);

/* Plan (checking whether the statsd socket exists) and open every sink. */
int sinks_open(struct sinks **out, const struct sinks_options *opt, struct err *e);

/* Text, JSON and trace.  Never waits for an output.  Returns 0, or the
 * negative errno of an output that has failed; the events lost are told to
 * statsd_dropped (text, JSON) one by one, never guessed here. */
int sinks_event(struct sinks *s, const struct event *ev);
/* An output does not keep up with the events (outbuf_congested): the loop
 * should leave records in the kernel's buffer for now. */
bool sinks_congested(struct sinks *s);
/* No output is left: statsd is off and every other output's reader has
 * gone (EPIPE).  The run should detach and end. */
bool sinks_outputs_gone(const struct sinks *s);

/* statsd: the atom is queued, and sent with its batch (by sinks_flush, or
 * sooner when the batch is full).  Returns 0 (also when statsd is off), or
 * -EMSGSIZE (or -EINVAL) when the atom could not be encoded and goes out as
 * statsd's error event.  An atom statsd does not take (-EAGAIN, -ENOENT, ...)
 * is dropped, counted, told to statsd_dropped and reported to statsd once it
 * reads again. */
int sinks_atom(struct sinks *s, const struct atom *a);
/* A counter's value (aggregation intervals, traffic bytes) to the sinks that
 * draw counters (the Perfetto trace). */
void sinks_counter(struct sinks *s, const struct counter_sample *c);
bool sinks_statsd_on(const struct sinks *s);
/* From now on, statsd atoms are dropped (and counted) at once when its queue
 * is full instead of waiting for room, as with SINKS_STATSD_NO_WAIT. */
void sinks_statsd_stop_waiting(struct sinks *s);

/* Send queued statsd atoms and write what the outputs take now (never waits
 * for a reader).  Returns 0 or the first write error (an output whose reader
 * has gone, -EPIPE, only when no other failed), with e naming the output
 * ("json output: write failed: No space left on device (115 events written,
 * 19885 lost)"). */
int sinks_flush(struct sinks *s, struct err *e);

/* Before the counts are taken at exit: write what the outputs hold, waiting
 * up to wait_ms each for a reader that does not read; the rest is lost and
 * counted. */
void sinks_settle(struct sinks *s, int wait_ms);

/* Before sinks_finish: what --stack's mapping records lost, for the summary
 * (text and JSON's "stack_mappings"). */
void sinks_set_stack_mappings(struct sinks *s, const struct stack_mappings_report *m);

/* What the sinks saw (statsd counters, trace pairing, write errors). */
void sinks_report(const struct sinks *s, struct sink_report *r);

/* At exit: ends open trace slices, sends statsd's last loss report, prints
 * the summary table on `err` (stderr) and a "summary" line to the JSON
 * stream, flushes everything.  Returns 0 or the first write error. */
/* At exit, before sinks_finish: the calls still running, for the sinks
 * that write them (method traces: an unroll at end_ns). */
void sinks_running_calls(struct sinks *s, const struct running_call *c, size_t n,
			 uint64_t end_ns);
int sinks_finish(struct sinks *s, const struct probe_stats *rows, size_t n, uint64_t run_ns,
		 FILE *err, struct err *e);

/* Free (after sinks_finish, or alone on an error path). */
void sinks_close(struct sinks *s);

#endif
