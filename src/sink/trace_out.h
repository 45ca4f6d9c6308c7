/* trace_out.h — the trace sink: a file Perfetto UI, chrome://tracing,
 * speedscope (JSON) and systrace/Perfetto (ftrace text) open.
 *
 * TRACE_FORMAT_JSON writes the Trace Event Format (JSON object form) with
 * CLOCK_BOOTTIME timestamps in microseconds (ns precision, 3 decimals):
 *   - EVENT_RETURN with duration_ns: a complete slice ("ph":"X") that ends at
 *     boot_ns, on the event's thread;
 *   - EVENT_UNWOUND (a call an exception or longjmp left) and the calls still
 *     running at exit (trace_running): "X" from the entry, args {"unwound":
 *     true} / {"running_at_exit": true}, ending where it was found (or at
 *     exit), or earlier where it nests among the thread's latest call slices
 *     (trace_out.c, nested_end; docs/sinks.md);
 *   - PROBE_ENTER / PROBE_EXIT probes: "B" at the enter, "E" at the matching
 *     exit on the same thread (the writer keeps a per-thread stack of open
 *     slices; an exit closes the innermost open slice of the same name, and
 *     any slices opened above it, which are marked unfinished);
 *   - other records: thread-scoped instant events ("ph":"i") with the fields
 *     as args; drops/lost records: global instants with their count;
 *   - process_name / thread_name metadata ("ph":"M") the first time a pid or
 *     tid is seen and whenever a thread's name changes.
 * At close, slices still open are ended at the last timestamp seen with
 * args {"unfinished": true}.
 *
 * TRACE_FORMAT_SYSTRACE writes the atrace text form: a "TRACE:" line, the
 * ftrace "# tracer: nop" header, then one line per mark
 *   <comm>-<tid> (<pid>) [000] ...1 <s.ns>: tracing_mark_write: B|<pid>|<name>
 * and "E|<pid>" to end.  Instants become zero-length slices named
 * "<label> k=v ...".  Lines of a uretprobe slice are written when it returns,
 * so the file is not in time order; Perfetto and systrace sort on import.
 *
 * TRACE_FORMAT_PERFETTO writes Perfetto's own protobuf (sink/perfetto_out.h)
 * with the same pairing of enters and exits as the JSON, and the same slices
 * of left calls (the marks as annotations on their ends).
 *
 * Which format: --trace-format NAME, else the file's name (trace_formats
 * table in trace_out.c: .pftrace/.perfetto-trace, .json, .systrace/.txt;
 * the longest matching ending wins), else json. */
#ifndef UPROBESTATS_SINK_TRACE_OUT_H
#define UPROBESTATS_SINK_TRACE_OUT_H

#include <stdint.h>
#include <stdio.h>

#include "common/err.h"
#include "sink/perfetto_out.h"
#include "sink/sink_types.h"
#include "vocab/event.h"
#include "vocab/json_out.h"
#include "vocab/outbuf.h"

#define TRACE_MAX_DEPTH 32  /* open enter slices per thread */

struct trace_thread;

struct trace_out {
	struct outbuf o;
	struct json_out j;
	enum trace_format fmt;
	struct trace_thread *threads; /* open-addressing table keyed by tid */
	size_t cap, used;
	size_t n_events;              /* JSON elements written (comma handling) */
	uint64_t last_ns;             /* latest timestamp seen */
	uint64_t unclosed;            /* slices ended at close */
	uint64_t orphan_exits;        /* exits with no matching open enter */
	uint64_t too_deep;            /* enters past TRACE_MAX_DEPTH (written as instants) */
	struct pf_out pf;             /* TRACE_FORMAT_PERFETTO's writer */
	const struct probe_stats *rows; /* the summary's rows (probe_rows, at exit) */
	size_t n_rows;
};

/* A --trace-format name: one of trace_format_names(); else -EINVAL and the list. */
int trace_parse_format(const char *name, enum trace_format *out, struct err *e);
const char *trace_format_name(enum trace_format f);
/* The format a trace file's name says (its ending, case-insensitive), or
 * false when it says none. */
bool trace_format_of_path(const char *path, enum trace_format *out);
int trace_open(struct trace_out *t, FILE *f, enum trace_format fmt, struct err *e);
/* The same with the clocks the Perfetto writer reads (MONOTONIC, BOOTTIME,
 * REALTIME) from read_clocks (tests); NULL: the real ones. */
int trace_open_clocked(struct trace_out *t, FILE *f, enum trace_format fmt,
		       void (*read_clocks)(void *ctx, uint64_t out[3]), void *ctx, struct err *e);
void trace_event(struct trace_out *t, const struct event *ev);
/* At exit, before close: the calls still running (end_ns: now, BOOTTIME),
 * each a slice ending at end_ns (or where it nests), marked running_at_exit. */
void trace_running(struct trace_out *t, const struct running_call *c, size_t n,
		   uint64_t end_ns);
int trace_flush(struct trace_out *t);
/* Ends open slices, writes the footer, flushes and frees (not the FILE*). */
void trace_close(struct trace_out *t);

/* The sink's row in sinks.c's table (sink/sink_ops.h). */
struct sink_ops;
extern const struct sink_ops trace_sink;

#endif
