/* sink_ops.h — what a sink is to the sink set: one row of operations.
 *
 * A sink is one file that defines its row (text_out.c: text_sink) and one
 * entry in sinks.c's table; sinks.c calls the rows of the open sinks in
 * table order and knows nothing else about them.  Every operation gets the
 * sink's own state (state_size bytes, zeroed, owned by sinks.c).  Optional
 * operations are NULL. */
#ifndef UPROBESTATS_SINK_SINK_OPS_H
#define UPROBESTATS_SINK_SINK_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "sink/sink_types.h"
#include "vocab/event.h"

struct json_out;
struct outbuf;
struct sink_report;
struct probe_stats;

struct sink_ops {
	const char *name;
	size_t state_size;
	/* Whether the options (after sinks_plan) ask for this sink. */
	bool (*wanted)(const struct sinks_options *o);
	int (*open)(void *st, const struct sinks_options *o, struct err *e);
	void (*event)(void *st, const struct event *ev);       /* decoded records */
	/* It takes EVENT_UNWOUND events too (the others never see them). */
	bool takes_unwound;
	int (*atom)(void *st, const struct atom *a);           /* statsd atoms (sinks_atom) */
	void (*counter)(void *st, const struct counter_sample *c); /* sinks_counter */
	void (*flush)(void *st);                               /* push buffered output out */
	/* Its output buffer, whose write errors sinks_event/flush/report name;
	 * sinks.c brackets each event in it and counts what it loses. */
	struct outbuf *(*output)(void *st);
	/* Its lost events are its own (the trace: not a probe's dropped_sink),
	 * and a full queue fails it rather than drop one event. */
	bool own_losses;
	void (*stop_waiting)(void *st);                        /* a signal ended the run */
	/* At exit, first: the per-probe counters (hits, unwound, …). */
	void (*probe_rows)(void *st, const struct probe_stats *rows, size_t n);
	/* At exit, before finish: the calls still running (end_ns: now, BOOTTIME). */
	void (*running)(void *st, const struct running_call *c, size_t n, uint64_t end_ns);
	/* At exit, before the report is taken: footers, last loss reports. */
	void (*finish)(void *st);
	void (*report)(const void *st, struct sink_report *r); /* its counters */
	/* A JSON Lines stream that gets the "summary" line at exit. */
	struct json_out *(*summary_stream)(void *st);
	void (*close)(void *st);                               /* release (after finish) */
};

#endif
