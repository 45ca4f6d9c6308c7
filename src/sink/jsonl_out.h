/* jsonl_out.h — the JSON Lines sink: one JSON object per line, schema in
 * docs/json-schema.md and docs/event.schema.json (record types "event",
 * "return", "drop", "lost", "summary").
 *
 * Also exports the pieces the trace writer reuses: a probe object and a
 * "fields" object (decoded record fields by name). */
#ifndef UPROBESTATS_SINK_JSONL_OUT_H
#define UPROBESTATS_SINK_JSONL_OUT_H

#include <stdio.h>

#include "common/err.h"
#include "vocab/event.h"
#include "vocab/json_out.h"
#include "vocab/outbuf.h"

#define JSONL_SCHEMA_VERSION 1

/* Per probe, the event members that never change ("task_id" … "map"),
 * rendered once and copied afterwards: they are half of every line. */
#define JSONL_PROBE_CACHE 64

struct jsonl_probe_text {
	const struct probe_desc *probe;
	char *text;
	size_t len;
};

struct jsonl_out {
	struct outbuf o;
	struct json_out j;
	struct jsonl_probe_text cache[JSONL_PROBE_CACHE];
	int64_t wall_sec;           /* the second wall_prefix was formatted for */
	char wall_prefix[48];       /* "\"YYYY-MM-DDTHH:MM:SS." */
	size_t wall_prefix_len;
};

int jsonl_open(struct jsonl_out *s, FILE *f, struct err *e);
void jsonl_event(struct jsonl_out *s, const struct event *ev);
/* The same line through the streaming json_out writer: used for lines that
 * could exceed half the buffer, and by tests as the reference jsonl_event
 * must match byte for byte. */
void jsonl_event_generic(struct jsonl_out *s, const struct event *ev);
int jsonl_flush(struct jsonl_out *s);
void jsonl_close(struct jsonl_out *s);

/* {"file":..,"method":..,"offset":"0x.."} or null. */
void jsonl_probe(struct json_out *j, const struct probe_desc *p);
/* {"name": value, ...}: INT32/INT64 numbers, UINT64 "0x.." strings, BOOL,
 * STRING escaped, BYTES lowercase hex string, FLOAT number (null when not
 * finite), lists arrays of numbers. */
void jsonl_fields(struct json_out *j, const struct field *f, size_t n);
/* The same members without the braces (to merge into another object). */
void jsonl_field_members(struct json_out *j, const struct field *f, size_t n);
/* "2025-03-01T12:00:00.123456789Z", or null when wall_ns is 0. */
void jsonl_wall(struct json_out *j, int64_t wall_ns);

/* The sink's row in sinks.c's table (sink/sink_ops.h). */
struct sink_ops;
extern const struct sink_ops jsonl_sink;

#endif
