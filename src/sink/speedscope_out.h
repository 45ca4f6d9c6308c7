/* speedscope_out.h — `--trace-format speedscope`: speedscope's own file
 * format (https://www.speedscope.app/file-format-schema.json), so that its
 * Left Heavy and Sandwich views sum the calls of a method:
 *
 *   {"$schema": …, "shared": {"frames": [{"name", "file"}, …]},
 *    "profiles": [{"type": "evented", "name": "<thread> (tid N)",
 *                  "unit": "nanoseconds", "startValue", "endValue",
 *                  "events": [{"type": "O"|"C", "frame", "at"}, …]}, …],
 *    "name", "activeProfileIndex": 0, "exporter": "uprobestats"}
 *
 * One frame per probe (its label, sink/probe_label.h: the function alone,
 * never an event's arguments), one evented profile per thread, times in ns
 * since the run's first call (every profile on one time line).  Calls come
 * from return events, kept per thread and written at the end as properly
 * nested open/close pairs (sink/call_seq.h). */
#ifndef UPROBESTATS_SINK_SPEEDSCOPE_OUT_H
#define UPROBESTATS_SINK_SPEEDSCOPE_OUT_H

#include <stdint.h>
#include <stdio.h>

#include "common/err.h"
#include "sink/call_seq.h"
#include "vocab/event.h"
#include "vocab/json_out.h"
#include "vocab/outbuf.h"

struct speedscope_out {
	struct outbuf o;
	struct json_out j;
	struct call_seq calls;
	int64_t cur_thread;          /* the profile being written (-1: none yet) */
	uint64_t cur_end;            /* its latest time */
	size_t n_events;             /* events in it (comma handling) */
};

int speedscope_open(struct speedscope_out *s, FILE *f, struct err *e);
void speedscope_event(struct speedscope_out *s, const struct event *ev);
/* Writes the whole file, flushes and frees (not the FILE*). */
void speedscope_close(struct speedscope_out *s);

struct sink_ops;
extern const struct sink_ops speedscope_sink;

#endif
