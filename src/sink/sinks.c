#include "sink/sinks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/clock.h"
#include "sink/art_trace_out.h"
#include "sink/folded_out.h"
#include "sink/jsonl_out.h"
#include "sink/profile.h"
#include "sink/sections.h"
#include "sink/sink_ops.h"
#include "sink/speedscope_out.h"
#include "sink/statsd_sink.h"
#include "sink/statsd_socket.h"
#include "sink/text_out.h"

/* Every sink, in the order each operation visits them (statsd's loss report
 * and the trace footer before the summary; outputs' errors in this order).
 * A new sink: its file with its row (sink_ops.h), and one line here. */
static const struct sink_ops *const table[] = {
	&statsd_sink,
	&text_sink,
	&jsonl_sink,
	&trace_sink,
	&art_trace_sink,
	&speedscope_sink,
	&folded_sink,
	&profile_sink,
};

#define N_SINKS (sizeof(table) / sizeof(table[0]))

struct sinks {
	struct sinks_options opt;     /* after sinks_plan */
	void *st[N_SINKS];            /* each open sink's state; NULL: not open */
	bool finished;
	struct sink_report final;     /* frozen by sinks_finish */
	struct sections *sections;    /* the trace-marker calls' tracker (sections.h) */
	struct stack_mappings_report stack_mappings; /* the run's, for the summary */
};

/* for (each open sink i) — with its row table[i] and its state s->st[i] */
#define FOR_OPEN(s, i) for (size_t i = 0; i < N_SINKS; i++) if ((s)->st[i])

struct sinks_options sinks_plan(const struct sinks_options *in, bool statsd_socket_exists)
{
	struct sinks_options o = *in;

	if (!o.statsd_path)
		o.statsd_path = STATSD_SOCKET_PATH;
	if (o.statsd == SINKS_STATSD_AUTO)
		o.statsd = statsd_socket_exists ? SINKS_STATSD_ON : SINKS_STATSD_OFF;
	if (o.no_events)
		o.text = o.json = NULL;
	else if (!o.text && !o.json && o.statsd == SINKS_STATSD_OFF)
		o.text = o.default_text ? o.default_text : stdout;
	return o;
}

static bool is_socket(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* An event lost at the text or JSON output (the event stream); a sink whose
 * losses are its own (the trace) reports them in its error line only. */
static void event_lost(void *ctx, const void *tag)
{
	const struct sinks *s = ctx;

	if (s->opt.stream_dropped)
		s->opt.stream_dropped(s->opt.statsd_dropped_ctx, tag);
	else if (s->opt.statsd_dropped)
		s->opt.statsd_dropped(s->opt.statsd_dropped_ctx, tag);
}

static struct outbuf *output_of(const struct sinks *s, size_t i)
{
	return s->st[i] && table[i]->output ? table[i]->output(s->st[i]) : NULL;
}

static int open_all(struct sinks *s, struct err *e)
{
	for (size_t i = 0; i < N_SINKS; i++) {
		void *st;
		int rc;

		if (!table[i]->wanted(&s->opt))
			continue;
		st = calloc(1, table[i]->state_size);
		if (!st)
			return err_set(e, -ENOMEM, "sinks: out of memory");
		rc = table[i]->open(st, &s->opt, e);
		if (rc < 0) {
			free(st);
			return rc;
		}
		s->st[i] = st;
		if (!output_of(s, i))
			continue;
		if (table[i]->own_losses)  /* a trace cannot skip a part of itself */
			outbuf_set_drop_events(output_of(s, i), false);
		else
			outbuf_on_lost(output_of(s, i), event_lost, s);
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
	FOR_OPEN(s, i) {
		if (table[i]->output && table[i]->output(s->st[i])->error)
			return table[i]->output(s->st[i])->error;
	}
	return 0;
}

/* A trace-marker call, classified once for every sink: false when it is
 * the same call seen one layer down (counted, not output). */
static bool section_event(struct sinks *s, const struct event **ev, struct event *copy,
			  struct section_call *call)
{
	if ((*ev)->kind != EVENT_RECORD || !(*ev)->probe || !(*ev)->probe->section)
		return true;
	if (!s->sections && !(s->sections = sections_new()))
		return true;    /* out of memory: the plain call_args event */
	sections_classify(s->sections, *ev, call);
	if (call->verdict == SECTION_MERGED)
		return false;
	*copy = **ev;
	copy->section = call;
	*ev = copy;
	return true;
}

int sinks_event(struct sinks *s, const struct event *ev)
{
	/* a lost drop record is no lost hit: counted by its output only */
	const void *tag = ev->kind == EVENT_DROP || ev->kind == EVENT_LOST ? NULL : ev->probe;
	struct section_call call;
	struct event copy;

	if (s->finished)
		return -EPIPE;
	if (!section_event(s, &ev, &copy, &call))
		return first_error(s);
	FOR_OPEN(s, i) {
		struct outbuf *o = output_of(s, i);
		if (!table[i]->event || (ev->kind == EVENT_UNWOUND && !table[i]->takes_unwound))
			continue;
		if (o)
			outbuf_event_begin(o);
		table[i]->event(s->st[i], ev);
		if (o)
			outbuf_event_end(o, tag);
	}
	return first_error(s);
}

bool sinks_congested(struct sinks *s)
{
	if (s->finished)
		return false;
	FOR_OPEN(s, i) {
		if (output_of(s, i) && outbuf_congested(output_of(s, i)))
			return true;
	}
	return false;
}

bool sinks_outputs_gone(const struct sinks *s)
{
	bool any = false;

	if (s->finished || sinks_statsd_on(s))
		return false;
	FOR_OPEN(s, i) {
		if (!output_of(s, i))
			continue;
		if (output_of(s, i)->error != -EPIPE)
			return false;
		any = true;
	}
	return any;
}

void sinks_settle(struct sinks *s, int wait_ms)
{
	if (s->finished)
		return;
	FOR_OPEN(s, i) {
		if (output_of(s, i))
			outbuf_finish(output_of(s, i), wait_ms);
	}
}

int sinks_atom(struct sinks *s, const struct atom *a)
{
	int rc = 0;

	if (s->finished)
		return 0;
	FOR_OPEN(s, i) {
		int r = table[i]->atom ? table[i]->atom(s->st[i], a) : 0;
		if (r < 0 && !rc)
			rc = r;
	}
	return rc;
}

void sinks_counter(struct sinks *s, const struct counter_sample *c)
{
	if (s->finished)
		return;
	FOR_OPEN(s, i) {
		if (table[i]->counter)
			table[i]->counter(s->st[i], c);
	}
}

bool sinks_statsd_on(const struct sinks *s)
{
	FOR_OPEN(s, i) {
		if (table[i] == &statsd_sink)
			return true;
	}
	return false;
}

void sinks_statsd_stop_waiting(struct sinks *s)
{
	FOR_OPEN(s, i) {
		if (table[i]->stop_waiting)
			table[i]->stop_waiting(s->st[i]);
	}
}

int sinks_flush(struct sinks *s, struct err *e)
{
	FOR_OPEN(s, i) {
		if (table[i]->flush)
			table[i]->flush(s->st[i]);
	}
	/* the first output error, a real failure before a reader gone (EPIPE) */
	for (int pass = 0; pass < 2; pass++)
		FOR_OPEN(s, i) {
			const struct outbuf *o = output_of(s, i);
			if (o && o->error && (pass || o->error != -EPIPE))
				return outbuf_check(o, e);
		}
	return 0;
}

static void add_error(struct sink_report *r, const struct outbuf *o)
{
	struct err e = { 0 };

	if (r->n_errors < SINK_REPORT_MAX_ERRORS && outbuf_check(o, &e) < 0) {
		r->error_codes[r->n_errors] = e.code;
		snprintf(r->errors[r->n_errors++], sizeof(r->errors[0]), "%s", e.msg);
	}
}

void sinks_report(const struct sinks *s, struct sink_report *r)
{
	if (s->finished) {
		*r = s->final;
		return;
	}
	memset(r, 0, sizeof(*r));
	r->statsd_path = s->opt.statsd_path;
	r->stack_mappings = s->stack_mappings;
	if (s->sections)
		sections_report(s->sections, &r->sections);
	FOR_OPEN(s, i) {
		if (table[i]->report)
			table[i]->report(s->st[i], r);
	}
	FOR_OPEN(s, i) {
		if (table[i]->output)
			add_error(r, output_of(s, i));
	}
}

/* Trace footer and statsd's last loss report come before the report is
 * taken, so the summary counts them. */
static void finish_outputs(struct sinks *s)
{
	FOR_OPEN(s, i) {
		if (table[i]->finish)
			table[i]->finish(s->st[i]);
	}
}

/* The summary in one write: stderr is unbuffered, and a row per probe of a
 * trace over thousands of methods was tens of thousands of writes. */
static void summary_text_once(FILE *to, const struct probe_stats *rows, size_t n,
			      const struct sink_report *r, uint64_t run_ns)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);

	if (!mem) {
		summary_text(to, rows, n, r, run_ns);
		return;
	}
	summary_text(mem, rows, n, r, run_ns);
	if (fclose(mem) == 0)
		fwrite(buf, 1, len, to);
	else
		summary_text(to, rows, n, r, run_ns);
	fflush(to);
	free(buf);
}


void sinks_running_calls(struct sinks *s, const struct running_call *c, size_t n,
			 uint64_t end_ns)
{
	FOR_OPEN(s, i) {
		if (table[i]->running)
			table[i]->running(s->st[i], c, n, end_ns);
	}
}

void sinks_set_stack_mappings(struct sinks *s, const struct stack_mappings_report *m)
{
	if (!s->finished)
		s->stack_mappings = *m;
}

int sinks_finish(struct sinks *s, const struct probe_stats *rows, size_t n, uint64_t run_ns,
		 FILE *err, struct err *e)
{
	struct sink_report r;
	int rc;

	if (s->finished)
		return 0;
	FOR_OPEN(s, i) {
		if (table[i]->probe_rows)
			table[i]->probe_rows(s->st[i], rows, n);
	}
	if (s->sections)
		sections_finish(s->sections);
	finish_outputs(s);
	sinks_report(s, &r);
	int64_t boot_ns = clock_ns(CLOCK_BOOTTIME), wall_ns = clock_ns(CLOCK_REALTIME);
	FOR_OPEN(s, i) {
		struct json_out *j = table[i]->summary_stream
				     ? table[i]->summary_stream(s->st[i]) : NULL;
		struct outbuf *o = output_of(s, i);
		if (!j)
			continue;
		if (o)
			outbuf_event_begin(o);
		summary_json(j, rows, n, &r, run_ns, (uint64_t)boot_ns, wall_ns);
		json_newline(j);
		if (o) {
			if (!outbuf_event_end(o, NULL) && !o->error)  /* never in silence */
				fprintf(err ? err : stderr, "WARNING: %s output: the summary line "
					"was lost (out of memory for it)\n", o->name);
			/* a slow reader: a bounded wait, then lost */
			outbuf_finish(o, OUTBUF_CLOSE_WAIT_MS);
		}
	}
	rc = sinks_flush(s, e);
	if (rc < 0)
		sinks_report(s, &r); /* the summary line itself may have failed */
	summary_text_once(err ? err : stderr, rows, n, &r, run_ns);
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
	FOR_OPEN(s, i) {
		if (table[i]->close)
			table[i]->close(s->st[i]);
		free(s->st[i]);
	}
	sections_free(s->sections);
	free(s);
}
