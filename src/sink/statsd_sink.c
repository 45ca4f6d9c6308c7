#include "sink/statsd_sink.h"

#include <errno.h>

#include "sink/sink_ops.h"
#include "sink/statsd_encode.h"
#include "sink/statsd_socket.h"
#include "sink/summary.h"

struct statsd_sink_state {
	struct statsd_writer w;
	struct statsd_event ev;       /* encode scratch: one atom at a time */
	uint64_t invalid;             /* atoms that could not be encoded */
	void (*dropped)(void *ctx, const struct probe_desc *probe);
	void *dropped_ctx;
};

static bool wanted(const struct sinks_options *o)
{
	return o->statsd == SINKS_STATSD_ON;
}

static void on_drop(void *ctx, int32_t atom_id, const void *tag, int error)
{
	const struct statsd_sink_state *s = ctx;

	(void)atom_id;
	(void)error;
	if (s->dropped)
		s->dropped(s->dropped_ctx, tag);
}

static int open_sink(void *st, const struct sinks_options *o, struct err *e)
{
	struct statsd_sink_state *s = st;
	int rc = statsd_writer_open(&s->w, o->statsd_path, e);

	if (rc < 0)
		return rc;
	if (o->statsd_wait_ms)
		statsd_writer_set_wait(&s->w, o->statsd_wait_ms < 0 ? 0
				       : (uint32_t)o->statsd_wait_ms);
	s->dropped = o->statsd_dropped;
	s->dropped_ctx = o->statsd_dropped_ctx;
	statsd_writer_on_drop(&s->w, on_drop, s);
	return 0;
}

static int atom(void *st, const struct atom *a)
{
	struct statsd_sink_state *s = st;
	uint32_t errors = statsd_encode_atom(&s->ev, a);

	/* the tag comes back to on_drop if the atom is dropped */
	statsd_writer_send_tagged(&s->w, s->ev.buf, s->ev.len, a->atom_id, a->probe);
	if (errors) {
		s->invalid++;
		return errors & STATSD_ERR_OVERFLOW ? -EMSGSIZE : -EINVAL;
	}
	return 0;
}

/* statsd drops are counted and reported, never a write error here */
static void flush(void *st)
{
	struct statsd_sink_state *s = st;

	(void)statsd_writer_flush(&s->w);
}

static void stop_waiting(void *st)
{
	struct statsd_sink_state *s = st;

	statsd_writer_set_wait(&s->w, 0);
}

/* The last loss report goes before the summary is taken, so it counts. */
static void finish(void *st)
{
	struct statsd_sink_state *s = st;

	statsd_writer_close(&s->w);
}

static void report(const void *st, struct sink_report *r)
{
	const struct statsd_sink_state *s = st;

	r->statsd_on = true;
	r->statsd = s->w.stats;
	r->statsd_unreported = statsd_writer_unreported(&s->w);
	r->statsd_invalid = s->invalid;
}

const struct sink_ops statsd_sink = {
	.name = "statsd",
	.state_size = sizeof(struct statsd_sink_state),
	.wanted = wanted,
	.open = open_sink,
	.atom = atom,
	.flush = flush,
	.stop_waiting = stop_waiting,
	.finish = finish,
	.report = report,
};
