#include "sink/art_trace_out.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/grow.h"
#include "sink/sink_ops.h"
#include "sink/summary.h"

#define ART_VERSION 2
#define ART_HEADER_LEN 32
#define ART_RECORD_LEN 10

struct art_action {
	uint64_t ns;
	uint32_t seq;                /* replay order: keeps a thread's order on equal ns */
	uint32_t thread;             /* call_seq thread index */
	uint32_t method_action;      /* method id | action */
};

static int64_t clock_ns_of(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int art_trace_open(struct art_trace_out *t, FILE *f, struct err *e)
{
	int64_t m, b;

	memset(t, 0, sizeof(*t));
	m = clock_ns_of(CLOCK_MONOTONIC);
	b = clock_ns_of(CLOCK_BOOTTIME);
	t->mono_to_boot = b - m;
	t->warn = stderr;
	return outbuf_init(&t->o, f, 0, "trace", e);
}

void art_trace_event(struct art_trace_out *t, const struct event *ev)
{
	(void)call_seq_add(&t->calls, ev);
}

/* ---- the key section ---- */

/* Method ids: ART's low two bits hold the action, so ids step by 4. */
static uint32_t method_id(uint32_t index)
{
	return (index + 1) << 2;
}

/* Text for a key line field: no line breaks, and (fields) no tabs. */
static void put_clean(struct outbuf *o, const char *s, size_t n, bool tabs_ok)
{
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if ((unsigned char)c < 0x20 && !(tabs_ok && c == '\t'))
			c = ' ';
		outbuf_putc(o, c);
	}
}

static size_t count_tabs(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\t';
	return n;
}

/* "0x<id>\t<key>": the plan's key, or one from the probe's file and method. */
static void method_line(struct outbuf *o, uint32_t index, const struct probe_desc *p)
{
	outbuf_printf(o, "0x%" PRIx32 "\t", method_id(index));
	if (p->method_key && count_tabs(p->method_key) == 3) {
		put_clean(o, p->method_key, strlen(p->method_key), true);
	} else {
		const char *file = p->file ? strrchr(p->file, '/') : NULL;
		const char *lib = file ? file + 1 : p->file && *p->file ? p->file : "?";
		const char *name = p->method && *p->method ? p->method
				   : p->program ? p->program : "?";
		put_clean(o, lib, strlen(lib), false);
		outbuf_putc(o, '\t');
		put_clean(o, name, strlen(name), false);
		outbuf_puts(o, "\t()\t");
	}
	outbuf_putc(o, '\n');
}

/* Thread ids below 32768 are kept; the others get the lowest ids no kept
 * thread has.  Returns how many were renumbered (0 also when memory ran
 * out: thread_ids NULL, every id then written as its low 15 bits). */
static uint32_t number_threads(struct art_trace_out *t)
{
	const struct call_seq *s = &t->calls;
	uint8_t *used = calloc(ART_TRACE_MAX_TID + 1, 1);
	uint32_t next = 1, n = 0;

	t->thread_ids = calloc(s->n_threads ? s->n_threads : 1, sizeof(*t->thread_ids));
	if (!used || !t->thread_ids) {
		free(used);
		free(t->thread_ids);
		t->thread_ids = NULL;
		return 0;
	}
	for (size_t i = 0; i < s->n_threads; i++)
		if (s->threads[i].tid && s->threads[i].tid <= ART_TRACE_MAX_TID) {
			used[s->threads[i].tid] = 1;
			t->thread_ids[i] = (uint16_t)s->threads[i].tid;
		}
	for (size_t i = 0; i < s->n_threads; i++) {
		if (t->thread_ids[i])
			continue;
		while (next <= ART_TRACE_MAX_TID && used[next])
			next++;
		if (next > ART_TRACE_MAX_TID)
			break;     /* more than 32767 threads: the rest keep 0 */
		used[next] = 1;
		t->thread_ids[i] = (uint16_t)next;
		n++;
	}
	free(used);
	return n;
}

static uint16_t thread_id(const struct art_trace_out *t, uint32_t i)
{
	return t->thread_ids ? t->thread_ids[i] : (uint16_t)(t->calls.threads[i].tid & 0x7fff);
}

static void thread_line(struct art_trace_out *t, uint32_t i)
{
	const struct call_seq_thread *th = &t->calls.threads[i];
	const char *name = th->name[0] ? th->name : "thread";

	outbuf_printf(&t->o, "%u\t", thread_id(t, i));
	put_clean(&t->o, name, strlen(name), false);
	if (thread_id(t, i) != th->tid)
		outbuf_printf(&t->o, " (tid %u)", th->tid);
	outbuf_putc(&t->o, '\n');
}

static uint64_t elapsed_us(const struct call_seq *s)
{
	return s->n_calls ? (s->last_ns - s->first_ns) / 1000 : 0;
}

static void key_section(struct art_trace_out *t, bool overflow)
{
	struct outbuf *o = &t->o;
	const struct call_seq *s = &t->calls;
	uint32_t pid = s->n_threads ? s->threads[0].pid : 0;
	bool one_pid = true;

	for (size_t i = 1; i < s->n_threads; i++)
		one_pid &= s->threads[i].pid == pid;
	outbuf_printf(o, "*version\n%d\ndata-file-overflow=%s\nclock=wall\n"
			 "elapsed-time-usec=%" PRIu64 "\nnum-method-calls=%zu\n"
			 "clock-call-overhead-nsec=0\nvm=uprobestats\n",
		      ART_VERSION, overflow ? "true" : "false", elapsed_us(s), t->n_acts);
	if (one_pid && pid)
		outbuf_printf(o, "pid=%u\n", pid);
	outbuf_puts(o, "*threads\n");
	for (uint32_t i = 0; i < s->n_threads; i++)
		thread_line(t, i);
	outbuf_puts(o, "*methods\n");
	for (uint32_t i = 0; i < s->n_methods; i++)
		method_line(o, i, s->methods[i]);
	outbuf_puts(o, "*end\n");
}

/* ---- the records ---- */

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void data_header(struct art_trace_out *t)
{
	uint8_t h[ART_HEADER_LEN] = { 'S', 'L', 'O', 'W' };
	uint64_t start_mono_ns = t->calls.first_ns - (uint64_t)t->mono_to_boot;

	if (!t->calls.n_calls)
		start_mono_ns = (uint64_t)clock_ns_of(CLOCK_MONOTONIC);
	put_le(h + 4, ART_VERSION, 2);
	put_le(h + 6, ART_HEADER_LEN, 2);
	put_le(h + 8, start_mono_ns / 1000, 8);
	outbuf_put(&t->o, h, sizeof(h));
}

static void gather(void *ctx, const struct call_seq_call *c, enum call_action a, uint64_t ns)
{
	struct art_trace_out *t = ctx;

	if (grow_array(&t->acts, &t->cap_acts, t->n_acts + 1, 4096) < 0)
		return;    /* counted below: n_acts short of twice the calls */
	t->acts[t->n_acts] = (struct art_action){
		.ns = ns, .seq = (uint32_t)t->n_acts, .thread = c->thread,
		.method_action = method_id(c->method) | (uint32_t)a,
	};
	t->n_acts++;
}

static int by_time(const void *a, const void *b)
{
	const struct art_action *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A non-blocking output (a pipe) takes at most a buffer at a time. */
static void drain(struct outbuf *o)
{
	if (o->len > o->cap / 2)
		(void)outbuf_finish(o, OUTBUF_CLOSE_WAIT_MS);
}

static void records(struct art_trace_out *t, uint64_t first_ns)
{
	for (size_t i = 0; i < t->n_acts && !t->o.error; i++) {
		const struct art_action *a = &t->acts[i];
		uint64_t us = (a->ns - first_ns) / 1000;
		uint8_t r[ART_RECORD_LEN];

		put_le(r, thread_id(t, a->thread), 2);
		put_le(r + 2, a->method_action, 4);
		put_le(r + 6, us > UINT32_MAX ? UINT32_MAX : us, 4);
		outbuf_put(&t->o, r, sizeof(r));
		t->written++;
		drain(&t->o);
	}
}

static void say_renumbered(const struct art_trace_out *t)
{
	const struct call_seq *s = &t->calls;

	for (size_t i = 0; i < s->n_threads && t->warn; i++) {
		if (thread_id(t, (uint32_t)i) == s->threads[i].tid)
			continue;
		fprintf(t->warn, "uprobestats: warning: trace: %u thread(s) have an id above %u, "
			"which ART method-trace readers cannot take (dmtracedump, Android "
			"Studio): written under other ids, the real tid in the thread's name "
			"(first: tid %u as %u)\n", t->renumbered, ART_TRACE_MAX_TID,
			s->threads[i].tid, thread_id(t, (uint32_t)i));
		return;
	}
}

void art_trace_close(struct art_trace_out *t)
{
	bool overflow;

	if (!t->o.buf)
		return;
	t->renumbered = number_threads(t);
	call_seq_replay(&t->calls, gather, t);
	if (t->n_acts)
		qsort(t->acts, t->n_acts, sizeof(*t->acts), by_time);
	overflow = t->calls.lost || t->n_acts < 2 * t->calls.n_calls ||
		   elapsed_us(&t->calls) > UINT32_MAX;
	key_section(t, overflow);
	data_header(t);
	records(t, t->calls.first_ns);
	if (t->renumbered)
		say_renumbered(t);
	if (t->unwound > t->calls.unwound && t->warn)
		fprintf(t->warn, "uprobestats: warning: trace: %" PRIu64 " call(s) left by an "
			"exception or a longjmp, which a later call of the same function on its "
			"thread revealed, are not in the method trace (their records were not "
			"delivered: see the summary)\n", t->unwound - t->calls.unwound);
	outbuf_finish(&t->o, OUTBUF_CLOSE_WAIT_MS);
	outbuf_free(&t->o);
	free(t->acts);
	free(t->thread_ids);
	t->acts = NULL;
	t->thread_ids = NULL;
	call_seq_free(&t->calls);
}

/* ---- the sink's row (sink_ops.h) ---- */

static bool art_wanted(const struct sinks_options *o)
{
	return o->trace && o->trace_format == TRACE_FORMAT_ART;
}

static int art_sink_open(void *st, const struct sinks_options *o, struct err *e)
{
	return art_trace_open(st, o->trace, e);
}

static void art_sink_event(void *st, const struct event *ev)
{
	art_trace_event(st, ev);
}

static void art_running(void *st, const struct running_call *c, size_t n, uint64_t end_ns)
{
	struct art_trace_out *t = st;

	for (size_t i = 0; i < n; i++)
		(void)call_seq_add_running(&t->calls, &c[i], end_ns);
}

static void art_probe_rows(void *st, const struct probe_stats *rows, size_t n)
{
	struct art_trace_out *t = st;

	for (size_t i = 0; i < n; i++)
		t->unwound += rows[i].unwound;
}

static struct outbuf *art_output(void *st)
{
	return &((struct art_trace_out *)st)->o;
}

static void art_sink_finish(void *st)
{
	art_trace_close(st);
}

const struct sink_ops art_trace_sink = {
	.name = "trace",
	.state_size = sizeof(struct art_trace_out),
	.wanted = art_wanted,
	.open = art_sink_open,
	.event = art_sink_event,
	.takes_unwound = true,
	.running = art_running,
	.output = art_output,
	.own_losses = true,
	.probe_rows = art_probe_rows,
	.finish = art_sink_finish,
};
