#include "sink/sinks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sink/jsonl_out.h"
#include "sink/statsd_encode.h"
#include "sink/statsd_socket.h"
#include "sink/text_out.h"

struct sinks {
	struct sinks_options opt;     /* after sinks_plan */
	bool statsd_on, text_on, json_on, trace_on, finished;
	struct statsd_writer statsd;
	struct statsd_event ev;       /* encode scratch: one atom at a time */
	uint64_t statsd_invalid;
	struct text_out text;
	struct jsonl_out json;
	struct trace_out trace;
	struct sink_report final;     /* frozen by sinks_finish */
};

struct sinks_options sinks_plan(const struct sinks_options *in, bool statsd_socket_exists)
{
	struct sinks_options o = *in;

	if (!o.statsd_path)
		o.statsd_path = STATSD_SOCKET_PATH;
	if (o.statsd == SINKS_STATSD_AUTO)
		o.statsd = statsd_socket_exists ? SINKS_STATSD_ON : SINKS_STATSD_OFF;
	if (!o.text && !o.json && o.statsd == SINKS_STATSD_OFF)
		o.text = o.default_text ? o.default_text : stdout;
	return o;
}

static bool is_socket(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

static void statsd_dropped(void *ctx, int32_t atom_id, const void *tag, int error)
{
	const struct sinks *s = ctx;

	(void)atom_id;
	(void)error;
	if (s->opt.statsd_dropped)
		s->opt.statsd_dropped(s->opt.statsd_dropped_ctx, tag);
}

/* An event lost at the text or JSON output (the event stream); the trace's
 * losses are its own, reported with its error. */
static void event_lost(void *ctx, const void *tag)
{
	const struct sinks *s = ctx;

	if (s->opt.stream_dropped)
		s->opt.stream_dropped(s->opt.statsd_dropped_ctx, tag);
	else if (s->opt.statsd_dropped)
		s->opt.statsd_dropped(s->opt.statsd_dropped_ctx, tag);
}

static int open_all(struct sinks *s, struct err *e)
{
	int rc = 0;

	if (s->opt.statsd == SINKS_STATSD_ON) {
		rc = statsd_writer_open(&s->statsd, s->opt.statsd_path, e);
		if (rc < 0)
			return rc;
		if (s->opt.statsd_wait_ms)
			statsd_writer_set_wait(&s->statsd, s->opt.statsd_wait_ms < 0 ? 0
					       : (uint32_t)s->opt.statsd_wait_ms);
		statsd_writer_on_drop(&s->statsd, statsd_dropped, s);
		s->statsd_on = true;
	}
	if (s->opt.text) {
		if ((rc = text_open(&s->text, s->opt.text, e)) < 0)
			return rc;
		outbuf_on_lost(&s->text.o, event_lost, s);
		s->text_on = true;
	}
	if (s->opt.json) {
		if ((rc = jsonl_open(&s->json, s->opt.json, e)) < 0)
			return rc;
		outbuf_on_lost(&s->json.o, event_lost, s);
		s->json_on = true;
	}
	if (s->opt.trace) {
		if ((rc = trace_open(&s->trace, s->opt.trace, s->opt.trace_format, e)) < 0)
			return rc;
		outbuf_set_drop_events(&s->trace.o, false);
		s->trace_on = true;
	}
	return 0;
}

int sinks_open(struct sinks **out, const struct sinks_options *opt, struct err *e)
{
	const char *path = opt->statsd_path ? opt->statsd_path : STATSD_SOCKET_PATH;
	struct sinks *s = calloc(1, sizeof(*s));
	int rc;

	*out = NULL;
	if (!s)
		return err_set(e, -ENOMEM, "sinks: out of memory");
	s->opt = sinks_plan(opt, opt->statsd == SINKS_STATSD_AUTO && is_socket(path));
	rc = open_all(s, e);
	if (rc < 0) {
		sinks_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

static int first_error(const struct sinks *s)
{
	if (s->text_on && s->text.o.error)
		return s->text.o.error;
	if (s->json_on && s->json.o.error)
		return s->json.o.error;
	if (s->trace_on && s->trace.o.error)
		return s->trace.o.error;
	return 0;
}

int sinks_event(struct sinks *s, const struct event *ev)
{
	if (s->finished)
		return -EPIPE;
	if (s->text_on) {
		outbuf_event_begin(&s->text.o);
		text_event(&s->text, ev);
		outbuf_event_end(&s->text.o, ev->probe);
	}
	if (s->json_on) {
		outbuf_event_begin(&s->json.o);
		jsonl_event(&s->json, ev);
		outbuf_event_end(&s->json.o, ev->probe);
	}
	if (s->trace_on) {
		outbuf_event_begin(&s->trace.o);
		trace_event(&s->trace, ev);
		outbuf_event_end(&s->trace.o, ev->probe);
	}
	return first_error(s);
}

bool sinks_congested(struct sinks *s)
{
	if (s->finished)
		return false;
	return (s->text_on && outbuf_congested(&s->text.o)) ||
	       (s->json_on && outbuf_congested(&s->json.o)) ||
	       (s->trace_on && outbuf_congested(&s->trace.o));
}

bool sinks_outputs_gone(const struct sinks *s)
{
	const struct outbuf *outs[3] = { s->text_on ? &s->text.o : NULL,
					 s->json_on ? &s->json.o : NULL,
					 s->trace_on ? &s->trace.o : NULL };
	bool any = false;

	if (s->statsd_on || s->finished)
		return false;
	for (size_t i = 0; i < 3; i++) {
		if (!outs[i])
			continue;
		if (outs[i]->error != -EPIPE)
			return false;
		any = true;
	}
	return any;
}

int sinks_atom(struct sinks *s, const struct atom *a)
{
	uint32_t errors;

	if (!s->statsd_on || s->finished)
		return 0;
	errors = statsd_encode_atom(&s->ev, a);
	/* the tag comes back to statsd_dropped if the atom is dropped */
	statsd_writer_send_tagged(&s->statsd, s->ev.buf, s->ev.len, a->atom_id, a->probe);
	if (errors) {
		s->statsd_invalid++;
		return errors & STATSD_ERR_OVERFLOW ? -EMSGSIZE : -EINVAL;
	}
	return 0;
}

bool sinks_statsd_on(const struct sinks *s)
{
	return s->statsd_on;
}

void sinks_statsd_stop_waiting(struct sinks *s)
{
	if (s->statsd_on)
		statsd_writer_set_wait(&s->statsd, 0);
}

/* The first output error, a real failure before a reader gone (EPIPE). */
static int outputs_error(const struct sinks *s, struct err *e)
{
	const struct outbuf *outs[3] = { s->text_on ? &s->text.o : NULL,
					 s->json_on ? &s->json.o : NULL,
					 s->trace_on ? &s->trace.o : NULL };

	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < 3; i++)
			if (outs[i] && outs[i]->error && (pass || outs[i]->error != -EPIPE))
				return outbuf_check(outs[i], e);
	return 0;
}

int sinks_flush(struct sinks *s, struct err *e)
{
	/* statsd drops are counted and reported, never a write error here */
	if (s->statsd_on)
		(void)statsd_writer_flush(&s->statsd);
	if (s->text_on)
		text_flush(&s->text);
	if (s->json_on)
		jsonl_flush(&s->json);
	if (s->trace_on)
		trace_flush(&s->trace);
	return outputs_error(s, e);
}

void sinks_settle(struct sinks *s, int wait_ms)
{
	if (s->finished)
		return;
	if (s->text_on)
		outbuf_finish(&s->text.o, wait_ms);
	if (s->json_on)
		outbuf_finish(&s->json.o, wait_ms);
	if (s->trace_on)
		outbuf_finish(&s->trace.o, wait_ms);
}

static void add_error(struct sink_report *r, const struct outbuf *o)
{
	struct err e = { 0 };

	if (r->n_errors < SINK_REPORT_MAX_ERRORS && outbuf_check(o, &e) < 0)
		snprintf(r->errors[r->n_errors++], sizeof(r->errors[0]), "%s", e.msg);
}

void sinks_report(const struct sinks *s, struct sink_report *r)
{
	if (s->finished) {
		*r = s->final;
		return;
	}
	memset(r, 0, sizeof(*r));
	r->statsd_on = s->statsd_on;
	r->statsd_path = s->opt.statsd_path;
	if (s->statsd_on) {
		r->statsd = s->statsd.stats;
		r->statsd_unreported = statsd_writer_unreported(&s->statsd);
	}
	r->statsd_invalid = s->statsd_invalid;
	if (s->trace_on) {
		r->trace_unclosed = s->trace.unclosed;
		r->trace_orphan_exits = s->trace.orphan_exits;
	}
	if (s->text_on)
		add_error(r, &s->text.o);
	if (s->json_on)
		add_error(r, &s->json.o);
	if (s->trace_on)
		add_error(r, &s->trace.o);
}

/* Trace footer and statsd's last loss report come before the report is
 * taken, so the summary counts them. */
static void finish_outputs(struct sinks *s)
{
	if (s->statsd_on)
		statsd_writer_close(&s->statsd);
	if (s->trace_on)
		trace_close(&s->trace); /* keeps its counters and error for the report */
}

int sinks_finish(struct sinks *s, const struct probe_stats *rows, size_t n, uint64_t run_ns,
		 FILE *err, struct err *e)
{
	struct sink_report r;
	int rc;

	if (s->finished)
		return 0;
	finish_outputs(s);
	sinks_report(s, &r);
	if (s->json_on) {
		outbuf_event_begin(&s->json.o);
		summary_json(&s->json.j, rows, n, &r, run_ns);
		json_newline(&s->json.j);
		outbuf_event_end(&s->json.o, NULL);
	}
	/* what a slow reader has not taken yet: a bounded wait, then lost */
	if (s->json_on)
		outbuf_finish(&s->json.o, OUTBUF_CLOSE_WAIT_MS);
	rc = sinks_flush(s, e);
	if (rc < 0)
		sinks_report(s, &r); /* the summary line itself may have failed */
	summary_text(err ? err : stderr, rows, n, &r, run_ns);
	s->final = r;
	s->finished = true;
	return rc;
}

void sinks_close(struct sinks *s)
{
	if (!s)
		return;
	if (!s->finished)
		finish_outputs(s);
	if (s->text_on)
		text_close(&s->text);
	if (s->json_on)
		jsonl_close(&s->json);
	free(s);
}
