#include "sink/speedscope_out.h"

#include <string.h>

#include "sink/probe_label.h"
#include "sink/sink_ops.h"

int speedscope_open(struct speedscope_out *s, FILE *f, struct err *e)
{
	int rc;

	memset(s, 0, sizeof(*s));
	rc = outbuf_init(&s->o, f, 0, "trace", e);
	if (rc < 0)
		return rc;
	json_init(&s->j, &s->o);
	s->cur_thread = -1;
	return 0;
}

void speedscope_event(struct speedscope_out *s, const struct event *ev)
{
	(void)call_seq_add(&s->calls, ev);
}

/* A non-blocking output (a pipe) takes at most a buffer at a time. */
static void drain(struct outbuf *o)
{
	if (o->len > o->cap / 2)
		(void)outbuf_finish(o, OUTBUF_CLOSE_WAIT_MS);
}

static void frames(struct speedscope_out *s)
{
	struct json_out *j = &s->j;

	json_key(j, "shared");
	json_object_begin(j);
	json_key(j, "frames");
	json_array_begin(j);
	for (size_t i = 0; i < s->calls.n_methods; i++) {
		const struct probe_desc *p = s->calls.methods[i];
		struct label l = probe_label(p);

		json_object_begin(j);
		json_key(j, "name");
		json_string(j, l.s, l.n);
		if (p->file && *p->file) {
			json_key(j, "file");
			json_cstring(j, p->file);
		}
		json_object_end(j);
		drain(&s->o);
	}
	json_array_end(j);
	json_object_end(j);
}

static void end_profile(struct speedscope_out *s)
{
	if (s->cur_thread < 0)
		return;
	json_array_end(&s->j);
	json_key(&s->j, "endValue");
	json_u64(&s->j, s->cur_end);
	json_object_end(&s->j);
}

static void begin_profile(struct speedscope_out *s, uint32_t thread)
{
	const struct call_seq_thread *th = &s->calls.threads[thread];
	struct json_out *j = &s->j;
	char name[CALL_SEQ_NAME_MAX + 64];

	snprintf(name, sizeof(name), "%s (tid %u)", th->name[0] ? th->name : "thread", th->tid);
	s->cur_thread = thread;
	s->cur_end = 0;
	json_object_begin(j);
	json_key(j, "type");
	json_cstring(j, "evented");
	json_key(j, "name");
	json_cstring(j, name);
	json_key(j, "unit");
	json_cstring(j, "nanoseconds");
	json_key(j, "startValue");
	json_u64(j, 0);
	json_key(j, "events");
	json_array_begin(j);
}

static void action(void *ctx, const struct call_seq_call *c, enum call_action a, uint64_t ns)
{
	struct speedscope_out *s = ctx;
	struct json_out *j = &s->j;
	uint64_t at = ns - s->calls.first_ns;

	if (s->cur_thread != (int64_t)c->thread) {
		end_profile(s);
		begin_profile(s, c->thread);
	}
	if (at > s->cur_end)
		s->cur_end = at;
	json_object_begin(j);
	json_key(j, "type");
	json_cstring(j, a == CALL_ENTER ? "O" : "C");
	json_key(j, "frame");
	json_u64(j, c->method);
	json_key(j, "at");
	json_u64(j, at);
	json_object_end(j);
	drain(&s->o);
}

void speedscope_close(struct speedscope_out *s)
{
	struct json_out *j = &s->j;

	if (!s->o.buf)
		return;
	json_object_begin(j);
	json_key(j, "$schema");
	json_cstring(j, "https://www.speedscope.app/file-format-schema.json");
	frames(s);
	json_key(j, "profiles");
	json_array_begin(j);
	call_seq_replay(&s->calls, action, s);
	end_profile(s);
	json_array_end(j);
	json_key(j, "name");
	json_cstring(j, "uprobestats");
	json_key(j, "activeProfileIndex");
	json_u64(j, 0);
	json_key(j, "exporter");
	json_cstring(j, "uprobestats");
	json_object_end(j);
	json_newline(j);
	outbuf_finish(&s->o, OUTBUF_CLOSE_WAIT_MS);
	outbuf_free(&s->o);
	call_seq_free(&s->calls);
}

/* ---- the sink's row (sink_ops.h) ---- */

static bool speedscope_wanted(const struct sinks_options *o)
{
	return o->trace && o->trace_format == TRACE_FORMAT_SPEEDSCOPE;
}

static int speedscope_sink_open(void *st, const struct sinks_options *o, struct err *e)
{
	return speedscope_open(st, o->trace, e);
}

static void speedscope_sink_event(void *st, const struct event *ev)
{
	speedscope_event(st, ev);
}

static void speedscope_running(void *st, const struct running_call *c, size_t n, uint64_t end_ns)
{
	struct speedscope_out *t = st;

	for (size_t i = 0; i < n; i++)
		(void)call_seq_add_running(&t->calls, &c[i], end_ns);
}

static struct outbuf *speedscope_output(void *st)
{
	return &((struct speedscope_out *)st)->o;
}

static void speedscope_sink_finish(void *st)
{
	speedscope_close(st);
}

const struct sink_ops speedscope_sink = {
	.name = "trace",
	.state_size = sizeof(struct speedscope_out),
	.wanted = speedscope_wanted,
	.open = speedscope_sink_open,
	.event = speedscope_sink_event,
	.takes_unwound = true,
	.running = speedscope_running,
	.output = speedscope_output,
	.own_losses = true,
	.finish = speedscope_sink_finish,
};
