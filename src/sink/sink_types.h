/* sink_types.h — the sink set's options (which sinks, where, how), shared by
 * the set (sinks.h) and the sinks' rows (sink_ops.h) without either
 * importing the other. */
#ifndef UPROBESTATS_SINK_SINK_TYPES_H
#define UPROBESTATS_SINK_SINK_TYPES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "vocab/event.h"

/* The trace file's format (sink/trace_out.h). */
enum trace_format {
	TRACE_FORMAT_JSON,
	TRACE_FORMAT_SYSTRACE,
	TRACE_FORMAT_ART,        /* ART's method-trace file (sink/art_trace_out.h) */
	TRACE_FORMAT_SPEEDSCOPE, /* speedscope's own format (sink/speedscope_out.h) */
	TRACE_FORMAT_PERFETTO,   /* Perfetto's protobuf (sink/perfetto_out.h) */
};

enum sinks_statsd_mode {
	SINKS_STATSD_AUTO = 0, /* on when statsd_path is a socket */
	SINKS_STATSD_OFF,
	SINKS_STATSD_ON,       /* --statsd[=PATH]: failing to connect is an error */
};

/* statsd_wait_ms for libstatssocket's behaviour: drop as soon as the queue is full. */
#define SINKS_STATSD_NO_WAIT (-1)

struct sinks_options {
	enum sinks_statsd_mode statsd;
	const char *statsd_path;      /* NULL: /dev/socket/statsdw */
	int32_t statsd_wait_ms;       /* per-datagram wait for room in statsd's queue:
				       * 0 (zeroed options) STATSD_WAIT_DEFAULT_MS,
				       * SINKS_STATSD_NO_WAIT drop at once */
	FILE *text;                   /* human lines (NULL: only by the default rule) */
	bool text_raw;                /* --format text-raw: every field (registers in hex)
				       * instead of one line per call */
	FILE *json;                   /* JSON Lines */
	FILE *trace;                  /* trace file (the caller opens and closes it) */
	/* where a suspend during the run was: the Perfetto trace's new clock
	 * offset holds from there (NULL: from its last clock reading before) */
	const struct suspend_source *suspend;
	enum trace_format trace_format;
	FILE *default_text;           /* where the default text goes; NULL: stdout */
	bool no_events;               /* no probe writes records (in-kernel aggregation
				       * only): no event stream, not even the default */
	FILE *profile;                /* the flat profile at exit (sink/profile.h); NULL: none */
	bool profile_json;            /* as one JSON line instead of a table */
	FILE *folded_stacks;          /* --stacks FILE: aggregated stacks, folded, at exit
				       * (the caller opens and closes it) */
	bool folded_merge;            /* --stacks-merge: no process root frame */
	/* Told of each statsd atom dropped (probe: the atom's, may be NULL), when
	 * its batch is flushed: drops are known only then. */
	void (*statsd_dropped)(void *ctx, const struct probe_desc *probe);
	void *statsd_dropped_ctx;
	/* Told of each event the text or JSON output lost (a full queue, a
	 * failed write), with statsd_dropped_ctx; NULL: told to statsd_dropped.
	 * The trace's losses are counted in its own error line, not here. */
	void (*stream_dropped)(void *ctx, const struct probe_desc *probe);
};

#endif
