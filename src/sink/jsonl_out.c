#include "sink/jsonl_out.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sink/fmt_fast.h"
#include "sink/sections.h"
#include "sink/sink_ops.h"
#include "sink/stack_out.h"

int jsonl_open(struct jsonl_out *s, FILE *f, struct err *e)
{
	int rc;

	memset(s->cache, 0, sizeof(s->cache));
	s->wall_sec = 0;
	s->wall_prefix_len = 0;
	rc = outbuf_init(&s->o, f, 0, "json", e);

	if (rc < 0)
		return rc;
	json_init(&s->j, &s->o);
	return 0;
}

void jsonl_probe(struct json_out *j, const struct probe_desc *p)
{
	if (!p) {
		json_null(j);
		return;
	}
	json_object_begin(j);
	json_key(j, "file");
	json_cstring(j, p->file);
	json_key(j, "method");
	json_cstring(j, p->method);
	json_key(j, "offset");
	json_hex(j, p->offset);
	json_object_end(j);
}

static void int32_list(struct json_out *j, const int32_t *v, uint32_t n)
{
	json_array_begin(j);
	for (uint32_t i = 0; i < n; i++)
		json_i64(j, v[i]);
	json_array_end(j);
}

static void int64_list(struct json_out *j, const int64_t *v, uint32_t n)
{
	json_array_begin(j);
	for (uint32_t i = 0; i < n; i++)
		json_i64(j, v[i]);
	json_array_end(j);
}

static void field_value(struct json_out *j, const struct field *f)
{
	switch (f->type) {
	case FIELD_INT32: json_i64(j, f->v.i32); break;
	case FIELD_INT64: json_i64(j, f->v.i64); break;
	case FIELD_UINT64: json_hex(j, f->v.u64); break;
	case FIELD_BOOL: json_bool(j, f->v.b); break;
	case FIELD_FLOAT: json_double(j, f->v.f); break;
	case FIELD_STRING:
		json_string(j, f->v.str.ptr ? f->v.str.ptr : "", f->v.str.ptr ? f->v.str.len : 0);
		break;
	case FIELD_BYTES:
		json_hexbytes(j, (const uint8_t *)f->v.str.ptr, f->v.str.ptr ? f->v.str.len : 0);
		break;
	case FIELD_INT32_LIST: int32_list(j, f->v.i32s.ptr, f->v.i32s.n); break;
	case FIELD_INT64_LIST: int64_list(j, f->v.i64s.ptr, f->v.i64s.n); break;
	default: json_null(j); break;
	}
}

void jsonl_field_members(struct json_out *j, const struct field *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		json_key(j, f[i].name ? f[i].name : "");
		field_value(j, &f[i]);
	}
}

void jsonl_fields(struct json_out *j, const struct field *f, size_t n)
{
	json_object_begin(j);
	jsonl_field_members(j, f, n);
	json_object_end(j);
}

void jsonl_wall(struct json_out *j, int64_t wall_ns)
{
	char tmp[64];
	struct tm tm;
	time_t sec = (time_t)(wall_ns / 1000000000);
	long ns = (long)(wall_ns % 1000000000);

	if (wall_ns <= 0 || !gmtime_r(&sec, &tm)) {
		json_null(j);
		return;
	}
	int n = snprintf(tmp, sizeof(tmp), "\"%04d-%02d-%02dT%02d:%02d:%02d.%09ldZ\"",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			 tm.tm_sec, ns);
	json_raw(j, tmp, (size_t)n);
}

static const char *kind_name(enum event_kind k)
{
	switch (k) {
	case EVENT_RETURN: return "return";
	case EVENT_DROP: return "drop";
	case EVENT_LOST: return "lost";
	default: return "event";
	}
}

/* "task_id" through "map" of probe p (NULL: nulls). */
static void probe_members(struct json_out *j, const struct probe_desc *p)
{
	json_key(j, "task_id");
	if (p)
		json_i64(j, p->task_id);
	else
		json_null(j);
	json_key(j, "task_index");
	if (p)
		json_u64(j, p->task_index);
	else
		json_null(j);
	json_key(j, "probe_index");
	if (p)
		json_u64(j, p->probe_index);
	else
		json_null(j);
	json_key(j, "probe");
	jsonl_probe(j, p);
	json_key(j, "program");
	json_cstring(j, p ? p->program : NULL);
	json_key(j, "map");
	json_cstring(j, p ? p->map : NULL);
}

/* "section": what a trace-marker call did (sink/sections.h). */
static void section_members(struct json_out *j, const struct section_call *c)
{
	json_key(j, "section");
	json_object_begin(j);
	json_key(j, "op");
	json_cstring(j, section_op_name(c->op));
	json_key(j, "name");
	json_string(j, c->name, c->name_len);
	if (c->op == SECTION_OP_BEGIN || c->op == SECTION_OP_END) {
		json_key(j, "depth");
		json_u64(j, c->depth);
	} else {
		json_key(j, c->op >= SECTION_OP_COUNTER ? "value" : "cookie");
		json_i64(j, c->value);
	}
	json_key(j, "begun");
	json_bool(j, c->verdict != SECTION_END_UNBEGUN);
	json_object_end(j);
}

void jsonl_event_generic(struct jsonl_out *s, const struct event *ev)
{
	struct json_out *j = &s->j;

	json_object_begin(j);
	json_key(j, "type");
	json_cstring(j, kind_name(ev->kind));
	json_key(j, "boot_ns");
	json_u64(j, ev->boot_ns);
	json_key(j, "wall_ns");
	json_i64(j, ev->wall_ns);
	json_key(j, "wall");
	jsonl_wall(j, ev->wall_ns);
	json_key(j, "pid");
	json_u64(j, ev->pid);
	json_key(j, "tid");
	json_u64(j, ev->tid);
	json_key(j, "comm");
	json_cstring(j, ev->comm);
	json_key(j, "process");
	json_cstring(j, ev->process);
	probe_members(j, ev->probe);
	if (ev->kind == EVENT_RETURN) {
		json_key(j, "duration_ns");
		json_u64(j, ev->duration_ns);
	}
	if (ev->kind == EVENT_DROP || ev->kind == EVENT_LOST) {
		json_key(j, "count");
		json_u64(j, ev->n_lost);
	}
	json_key(j, "fields");
	jsonl_fields(j, ev->fields, ev->n_fields);
	if (ev->section)
		section_members(j, ev->section);
	if (ev->stack)
		stack_json_members(j, ev->stack);
	json_object_end(j);
	json_newline(j);
}

/* ---- the per-event writer ----------------------------------------------
 * Writes a line with the fmt_fast functions into room reserved for its worst
 * case: the same bytes jsonl_event_generic writes, several times faster. */

static char *put_string(char *p, const char *str, size_t n)
{
	*p++ = '"';
	p = json_escape_into(p, str, n);
	*p++ = '"';
	return p;
}

static char *put_cstring(char *p, const char *str)
{
	return str ? put_string(p, str, strlen(str)) : FMT_LIT(p, "null");
}

static size_t cstring_bound(const char *str)
{
	return str ? 2 + JSON_ESCAPE_MAX(strlen(str)) : 4;
}

static char *put_hexbytes(char *p, const uint8_t *b, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	*p++ = '"';
	for (size_t i = 0; i < n; i++) {
		*p++ = hex[b[i] >> 4];
		*p++ = hex[b[i] & 0xf];
	}
	*p++ = '"';
	return p;
}

static char *put_float(char *p, float v)
{
	int n;

	if (!isfinite(v))
		return FMT_LIT(p, "null");
	n = snprintf(p, 32, "%.9g", (double)v);
	return p + (n > 0 && n < 32 ? n : 0);
}

static char *put_list(char *p, const void *v, uint32_t n, bool wide)
{
	*p++ = '[';
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			*p++ = ',';
		p = fmt_i64(p, wide ? ((const int64_t *)v)[i] : ((const int32_t *)v)[i]);
	}
	*p++ = ']';
	return p;
}

static size_t value_bound(const struct field *f)
{
	switch (f->type) {
	case FIELD_STRING: return 2 + JSON_ESCAPE_MAX(f->v.str.ptr ? f->v.str.len : 0);
	case FIELD_BYTES: return 2 + 2 * (size_t)(f->v.str.ptr ? f->v.str.len : 0);
	case FIELD_FLOAT: return 32;
	case FIELD_INT32_LIST: return 2 + (FMT_I64_MAX + 1) * (size_t)f->v.i32s.n;
	case FIELD_INT64_LIST: return 2 + (FMT_I64_MAX + 1) * (size_t)f->v.i64s.n;
	default: return FMT_HEX_MAX + 2; /* the longest of numbers, hex, bool, null */
	}
}

static char *put_value(char *p, const struct field *f)
{
	switch (f->type) {
	case FIELD_INT32: return fmt_i64(p, f->v.i32);
	case FIELD_INT64: return fmt_i64(p, f->v.i64);
	case FIELD_UINT64:
		*p++ = '"';
		p = fmt_hex(p, f->v.u64);
		*p++ = '"';
		return p;
	case FIELD_BOOL: return f->v.b ? FMT_LIT(p, "true") : FMT_LIT(p, "false");
	case FIELD_FLOAT: return put_float(p, f->v.f);
	case FIELD_STRING:
		return put_string(p, f->v.str.ptr ? f->v.str.ptr : "",
				  f->v.str.ptr ? f->v.str.len : 0);
	case FIELD_BYTES:
		return put_hexbytes(p, (const uint8_t *)f->v.str.ptr,
				    f->v.str.ptr ? f->v.str.len : 0);
	case FIELD_INT32_LIST: return put_list(p, f->v.i32s.ptr, f->v.i32s.n, false);
	case FIELD_INT64_LIST: return put_list(p, f->v.i64s.ptr, f->v.i64s.n, true);
	default: return FMT_LIT(p, "null");
	}
}

static size_t fields_bound(const struct field *f, size_t n)
{
	size_t b = 2;

	for (size_t i = 0; i < n; i++)
		b += 4 + JSON_ESCAPE_MAX(f[i].name ? strlen(f[i].name) : 0) + value_bound(&f[i]);
	return b;
}

static char *put_fields(char *p, const struct field *f, size_t n)
{
	*p++ = '{';
	for (size_t i = 0; i < n; i++) {
		if (i)
			*p++ = ',';
		p = put_cstring(p, f[i].name ? f[i].name : "");
		*p++ = ':';
		p = put_value(p, &f[i]);
	}
	*p++ = '}';
	return p;
}

/* ,"task_id":…,"map":… of probe p, rendered once per probe and kept. */
static const struct jsonl_probe_text *probe_text(struct jsonl_out *s, const struct probe_desc *p)
{
	static const char none[] = ",\"task_id\":null,\"task_index\":null,\"probe_index\":null,"
				   "\"probe\":null,\"program\":null,\"map\":null";
	static const struct jsonl_probe_text null_text = { NULL, (char *)none, sizeof(none) - 1 };
	struct jsonl_probe_text *c = &s->cache[((uintptr_t)p >> 4) % JSONL_PROBE_CACHE];
	size_t bound;
	char *text, *e;

	if (!p)
		return &null_text;
	if (c->probe == p)
		return c;
	bound = 160 + 3 * FMT_U64_MAX + FMT_HEX_MAX + cstring_bound(p->file) +
		cstring_bound(p->method) + cstring_bound(p->program) + cstring_bound(p->map);
	if (!(text = malloc(bound)))
		return NULL;
	e = FMT_LIT(text, ",\"task_id\":");
	e = fmt_i64(e, p->task_id);
	e = FMT_LIT(e, ",\"task_index\":");
	e = fmt_u64(e, p->task_index);
	e = FMT_LIT(e, ",\"probe_index\":");
	e = fmt_u64(e, p->probe_index);
	e = FMT_LIT(e, ",\"probe\":{\"file\":");
	e = put_cstring(e, p->file);
	e = FMT_LIT(e, ",\"method\":");
	e = put_cstring(e, p->method);
	e = FMT_LIT(e, ",\"offset\":\"");
	e = fmt_hex(e, p->offset);
	e = FMT_LIT(e, "\"},\"program\":");
	e = put_cstring(e, p->program);
	e = FMT_LIT(e, ",\"map\":");
	e = put_cstring(e, p->map);
	free(c->text);
	*c = (struct jsonl_probe_text){ .probe = p, .text = text, .len = (size_t)(e - text) };
	return c;
}

/* "2025-03-01T12:00:00.123456789Z": the part up to the seconds is formatted
 * once per second. */
static char *put_wall(struct jsonl_out *s, char *p, int64_t wall_ns)
{
	int64_t sec = wall_ns / 1000000000;

	if (wall_ns <= 0)
		return FMT_LIT(p, "null");
	if (sec != s->wall_sec || !s->wall_prefix_len) {
		struct tm tm;
		time_t t = (time_t)sec;
		int n;
		if (!gmtime_r(&t, &tm))
			return FMT_LIT(p, "null");
		n = snprintf(s->wall_prefix, sizeof(s->wall_prefix),
			     "\"%04d-%02d-%02dT%02d:%02d:%02d.", tm.tm_year + 1900, tm.tm_mon + 1,
			     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
		if (n <= 0 || (size_t)n >= sizeof(s->wall_prefix))
			return FMT_LIT(p, "null");
		s->wall_sec = sec;
		s->wall_prefix_len = (size_t)n;
	}
	p = fmt_copy(p, s->wall_prefix, s->wall_prefix_len);
	p = fmt_fixed(p, (uint64_t)(wall_ns % 1000000000), 9);
	return FMT_LIT(p, "Z\"");
}

void jsonl_event(struct jsonl_out *s, const struct event *ev)
{
	const struct jsonl_probe_text *pt = probe_text(s, ev->probe);
	size_t bound;
	char *p;

	if (!pt || ev->section) { /* out of memory for the cache; a section */
		jsonl_event_generic(s, ev);
		return;
	}
	bound = 200 + 4 * FMT_U64_MAX + sizeof(s->wall_prefix) + 12 + cstring_bound(ev->comm) +
		cstring_bound(ev->process) + pt->len + fields_bound(ev->fields, ev->n_fields) +
		(ev->stack ? stack_json_bound(ev->stack) : 0);
	/* A line that could take half the buffer (long strings): the generic
	 * writer streams it through. */
	if (bound > s->o.cap / 2 || !(p = outbuf_reserve(&s->o, bound))) {
		jsonl_event_generic(s, ev);
		return;
	}
	p = FMT_LIT(p, "{\"type\":\"");
	p = fmt_copy(p, kind_name(ev->kind), strlen(kind_name(ev->kind)));
	p = FMT_LIT(p, "\",\"boot_ns\":");
	p = fmt_u64(p, ev->boot_ns);
	p = FMT_LIT(p, ",\"wall_ns\":");
	p = fmt_i64(p, ev->wall_ns);
	p = FMT_LIT(p, ",\"wall\":");
	p = put_wall(s, p, ev->wall_ns);
	p = FMT_LIT(p, ",\"pid\":");
	p = fmt_u64(p, ev->pid);
	p = FMT_LIT(p, ",\"tid\":");
	p = fmt_u64(p, ev->tid);
	p = FMT_LIT(p, ",\"comm\":");
	p = put_cstring(p, ev->comm);
	p = FMT_LIT(p, ",\"process\":");
	p = put_cstring(p, ev->process);
	p = fmt_copy(p, pt->text, pt->len);
	if (ev->kind == EVENT_RETURN) {
		p = FMT_LIT(p, ",\"duration_ns\":");
		p = fmt_u64(p, ev->duration_ns);
	}
	if (ev->kind == EVENT_DROP || ev->kind == EVENT_LOST) {
		p = FMT_LIT(p, ",\"count\":");
		p = fmt_u64(p, ev->n_lost);
	}
	p = FMT_LIT(p, ",\"fields\":");
	p = put_fields(p, ev->fields, ev->n_fields);
	if (ev->stack)
		p = stack_json_put(p, ev->stack);
	p = FMT_LIT(p, "}\n");
	outbuf_commit(&s->o, p);
}

int jsonl_flush(struct jsonl_out *s)
{
	return outbuf_flush(&s->o);
}

void jsonl_close(struct jsonl_out *s)
{
	outbuf_flush(&s->o);
	outbuf_free(&s->o);
	for (size_t i = 0; i < JSONL_PROBE_CACHE; i++) {
		free(s->cache[i].text);
		s->cache[i] = (struct jsonl_probe_text){ 0 };
	}
}

/* ---- the sink's row (sink_ops.h) ---- */

static bool jsonl_wanted(const struct sinks_options *o)
{
	return o->json != NULL;
}

static int jsonl_sink_open(void *st, const struct sinks_options *o, struct err *e)
{
	return jsonl_open(st, o->json, e);
}

static void jsonl_sink_event(void *st, const struct event *ev)
{
	jsonl_event(st, ev);
}

static void jsonl_sink_flush(void *st)
{
	jsonl_flush(st);
}

static struct outbuf *jsonl_output(void *st)
{
	return &((struct jsonl_out *)st)->o;
}

static struct json_out *jsonl_summary_stream(void *st)
{
	return &((struct jsonl_out *)st)->j;
}

static void jsonl_sink_close(void *st)
{
	jsonl_close(st);
}

const struct sink_ops jsonl_sink = {
	.name = "json",
	.state_size = sizeof(struct jsonl_out),
	.wanted = jsonl_wanted,
	.open = jsonl_sink_open,
	.event = jsonl_sink_event,
	.flush = jsonl_sink_flush,
	.output = jsonl_output,
	.summary_stream = jsonl_summary_stream,
	.close = jsonl_sink_close,
};
