#include "sink/jsonl_out.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int jsonl_open(struct jsonl_out *s, FILE *f, struct err *e)
{
	int rc;

	memset(s->cache, 0, sizeof(s->cache));
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

/* Writes probe_members(p) from the cache, rendering it there the first time. */
static void cached_probe_members(struct jsonl_out *s, const struct probe_desc *p)
{
	struct jsonl_probe_text *c = &s->cache[((uintptr_t)p >> 4) % JSONL_PROBE_CACHE];
	size_t start;

	if (p && c->probe == p) {
		outbuf_put(&s->o, c->text, c->len);
		return;
	}
	/* Render in place with room to spare, so the bytes stay in the buffer. */
	if (s->o.cap - s->o.len < 8192)
		outbuf_flush(&s->o);
	start = s->o.len;
	probe_members(&s->j, p);
	if (!p || s->o.error || s->o.len <= start || s->o.len - start > 8192)
		return;
	char *text = malloc(s->o.len - start);
	if (!text)
		return;
	free(c->text);
	memcpy(text, s->o.buf + start, s->o.len - start);
	*c = (struct jsonl_probe_text){ .probe = p, .text = text, .len = s->o.len - start };
}

void jsonl_event(struct jsonl_out *s, const struct event *ev)
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
	cached_probe_members(s, ev->probe);
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
	json_object_end(j);
	json_newline(j);
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
