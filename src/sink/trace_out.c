#include "sink/trace_out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/grow.h"
#include "sink/jsonl_out.h"
#include "sink/probe_label.h"
#include "sink/sections.h"
#include "sink/sink_ops.h"
#include "sink/stack_out.h"
#include "sink/summary.h"
#include "sink/text_out.h"

#define INITIAL_THREADS 256u
#define RECENT_SLICES 64u  /* a thread's latest call slices, that later ones nest among */

/* A call slice written on a thread's track, on the format's clock (own_ns),
 * and the stack pointer at its entry (0: unknown). */
struct trace_span {
	uint64_t begin, end, sp;
};

struct trace_thread {
	uint32_t tid, pid;
	bool used, thread_named, process_named;
	uint8_t depth;
	uint32_t comm_hash;
	const struct probe_desc *open[TRACE_MAX_DEPTH];
	struct trace_span *recent;   /* RECENT_SLICES (allocated at the first), a ring */
	uint32_t n_recent, next_recent;
};

/* The formats by name and by file name ending: a new format is a row in each. */
static const struct {
	const char *name;
	enum trace_format fmt;
} trace_formats[] = {
	{ "json", TRACE_FORMAT_JSON },
	{ "systrace", TRACE_FORMAT_SYSTRACE },
	{ "perfetto", TRACE_FORMAT_PERFETTO },
	{ "art", TRACE_FORMAT_ART },
	{ "speedscope", TRACE_FORMAT_SPEEDSCOPE },
};

static const struct {
	const char *ending;
	enum trace_format fmt;
} trace_endings[] = {
	{ ".json", TRACE_FORMAT_JSON },
	{ ".systrace", TRACE_FORMAT_SYSTRACE },
	{ ".txt", TRACE_FORMAT_SYSTRACE },
	{ ".pftrace", TRACE_FORMAT_PERFETTO },
	{ ".perfetto-trace", TRACE_FORMAT_PERFETTO },
	{ ".trace", TRACE_FORMAT_ART },
	{ ".speedscope.json", TRACE_FORMAT_SPEEDSCOPE },
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

int trace_parse_format(const char *name, enum trace_format *out, struct err *e)
{
	char list[160];
	size_t n = 0;

	for (size_t i = 0; i < N_OF(trace_formats); i++) {
		if (!strcmp(name, trace_formats[i].name)) {
			*out = trace_formats[i].fmt;
			return 0;
		}
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "",
				      trace_formats[i].name);
	}
	return err_set(e, -EINVAL, "--trace-format=%s: expected one of %s", name, list);
}

const char *trace_format_name(enum trace_format f)
{
	for (size_t i = 0; i < N_OF(trace_formats); i++)
		if (trace_formats[i].fmt == f)
			return trace_formats[i].name;
	return "?";
}

bool trace_format_of_path(const char *path, enum trace_format *out)
{
	size_t len = strlen(path), best = 0;

	for (size_t i = 0; i < N_OF(trace_endings); i++) {
		size_t n = strlen(trace_endings[i].ending);
		if (n <= best || n >= len || strcasecmp(path + len - n, trace_endings[i].ending))
			continue;
		best = n;
		*out = trace_endings[i].fmt;
	}
	return best > 0;
}

/* ---- per-thread table (grows only when a new thread appears) ---- */

static size_t slot_of(uint32_t tid, size_t cap)
{
	return (size_t)(tid * 2654435761u) & (cap - 1);
}

static struct trace_thread *probe_slot(struct trace_thread *tab, size_t cap, uint32_t tid)
{
	size_t i = slot_of(tid, cap);

	while (tab[i].used && tab[i].tid != tid)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static bool grow(struct trace_out *t)
{
	size_t cap;
	struct trace_thread *tab;

	if (grow_cap(t->cap, t->cap + 1, INITIAL_THREADS, sizeof(*tab), &cap) < 0 ||
	    !(tab = calloc(cap, sizeof(*tab))))
		return false;
	for (size_t i = 0; i < t->cap; i++)
		if (t->threads[i].used)
			*probe_slot(tab, cap, t->threads[i].tid) = t->threads[i];
	free(t->threads);
	t->threads = tab;
	t->cap = cap;
	return true;
}

/* The thread when seen before, else NULL. */
static struct trace_thread *known_thread(struct trace_out *t, uint32_t tid)
{
	struct trace_thread *th = t->cap ? probe_slot(t->threads, t->cap, tid) : NULL;

	return th && th->used ? th : NULL;
}

/* NULL only when memory ran out: that thread then gets no pairing/metadata. */
static struct trace_thread *thread_of(struct trace_out *t, uint32_t tid, uint32_t pid)
{
	struct trace_thread *th;

	if (t->cap) {
		th = probe_slot(t->threads, t->cap, tid);
		if (th->used)
			return th;
	}
	if ((t->used + 1) * 2 > t->cap && !grow(t))
		return NULL;
	th = probe_slot(t->threads, t->cap, tid);
	memset(th, 0, sizeof(*th));
	th->used = true;
	th->tid = tid;
	th->pid = pid;
	t->used++;
	return th;
}

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h | 1; /* never 0: 0 means "no name yet" */
}

/* ---- JSON (Trace Event Format) ---- */

static void ts_us(struct json_out *j, uint64_t ns)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%llu.%03llu", (unsigned long long)(ns / 1000),
			 (unsigned long long)(ns % 1000));
	json_raw(j, tmp, (size_t)n);
}

/* Opens one element of traceEvents: name, cat, ph, ts, pid, tid. */
static void j_begin(struct trace_out *t, const char *ph, struct label name, const char *cat,
		    uint64_t ns, uint32_t pid, uint32_t tid)
{
	struct json_out *j = &t->j;

	if (t->n_events++)
		outbuf_puts(&t->o, ",\n");
	json_object_begin(j);
	json_key(j, "name");
	json_string(j, name.s, name.n);
	if (cat) {
		json_key(j, "cat");
		json_cstring(j, cat);
	}
	json_key(j, "ph");
	json_cstring(j, ph);
	json_key(j, "ts");
	ts_us(j, ns);
	json_key(j, "pid");
	json_u64(j, pid);
	json_key(j, "tid");
	json_u64(j, tid);
}

/* Closes the element; resets the writer so the next one needs no comma logic. */
static void j_end(struct trace_out *t)
{
	json_object_end(&t->j);
	t->j.need_comma[0] = false;
}

/* mark (NULL: none): `mark: true` last, how a call ended ("unwound", …). */
static void j_args(struct trace_out *t, const struct event *ev, const char *mark)
{
	struct json_out *j = &t->j;

	json_key(j, "args");
	json_object_begin(j);
	if (ev->probe && ev->probe->method) {
		json_key(j, "probe");
		json_cstring(j, ev->probe->method);
	}
	jsonl_field_members(j, ev->fields, ev->n_fields);
	if (ev->stack)
		stack_trace_args(j, ev->stack);
	if (mark) {
		json_key(j, mark);
		json_bool(j, true);
	}
	json_object_end(j);
}

static void j_meta(struct trace_out *t, const char *what, uint32_t pid, uint32_t tid,
		   const char *name)
{
	struct label l = { what, strlen(what) };

	j_begin(t, "M", l, NULL, 0, pid, tid);
	json_key(&t->j, "args");
	json_object_begin(&t->j);
	json_key(&t->j, "name");
	json_cstring(&t->j, name);
	json_object_end(&t->j);
	j_end(t);
}

/* ---- systrace (atrace text) ---- */

static void s_line(struct trace_out *t, const struct event *ev, uint64_t ns, char mark)
{
	struct outbuf *o = &t->o;
	char ts[32];
	size_t n = fmt_seconds(ts, ns, 9);
	const char *comm = ev->comm && ev->comm[0] ? ev->comm : "<...>";
	size_t w = 0;

	/* the task column: right-aligned to 16 like ftrace, no control chars */
	for (const char *c = comm; *c && w < 16; c++, w++)
		;
	outbuf_pad(o, w, 16);
	for (const char *c = comm; *c && c < comm + 16; c++)
		outbuf_putc(o, (unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c);
	outbuf_printf(o, "-%u (%5u) [000] ...1 ", ev->tid, ev->pid);
	outbuf_put(o, ts, n);
	outbuf_printf(o, ": tracing_mark_write: %c|%u", mark, ev->pid);
}

static void s_begin(struct trace_out *t, const struct event *ev, uint64_t ns, struct label l,
		    bool with_fields)
{
	s_line(t, ev, ns, 'B');
	outbuf_putc(&t->o, '|');
	text_escape_nopipe(&t->o, l.s, l.n);
	if (with_fields)
		text_fields(&t->o, ev->fields, ev->n_fields, true);
	outbuf_putc(&t->o, '\n');
}

static void s_end(struct trace_out *t, const struct event *ev, uint64_t ns)
{
	s_line(t, ev, ns, 'E');
	outbuf_putc(&t->o, '\n');
}

/* ---- the record kinds, in either format ---- */

static bool is_json(const struct trace_out *t)
{
	return t->fmt == TRACE_FORMAT_JSON;
}

static bool is_pf(const struct trace_out *t)
{
	return t->fmt == TRACE_FORMAT_PERFETTO;
}

static const char *cat_of(const struct event *ev)
{
	return ev->probe && ev->probe->program ? ev->probe->program : "uprobestats";
}

/* Metadata: a process's name once, a thread's name when first seen or changed. */
static void process_name(struct trace_out *t, const struct event *ev)
{
	if (!is_json(t) || !ev->process || !ev->process[0])
		return;
	struct trace_thread *leader = thread_of(t, ev->pid, ev->pid);
	if (leader && !leader->process_named) {
		leader->process_named = true;
		j_meta(t, "process_name", ev->pid, ev->pid, ev->process);
	}
}

static void thread_name(struct trace_out *t, const struct event *ev, struct trace_thread *th)
{
	if (!is_json(t) || !th || !ev->comm || !ev->comm[0])
		return;
	uint32_t h = hash_str(ev->comm);
	if (th->comm_hash != h) {
		th->comm_hash = h;
		j_meta(t, "thread_name", ev->pid, ev->tid, ev->comm);
	}
}

static void instant(struct trace_out *t, const struct event *ev, struct label l)
{
	if (is_pf(t)) {
		pf_instant(&t->pf, ev, l);
	} else if (is_json(t)) {
		j_begin(t, "i", l, cat_of(ev), ev->boot_ns, ev->pid, ev->tid);
		json_key(&t->j, "s");
		json_cstring(&t->j, "t");
		j_args(t, ev, NULL);
		j_end(t);
	} else {
		s_begin(t, ev, ev->boot_ns, l, true);
		s_end(t, ev, ev->boot_ns);
	}
}

/* ---- call slices (a call_return record, a call unwound or running at exit) ---- */

/* The event's time on the clock the format writes: Perfetto's MONOTONIC
 * (the records' own), the others' BOOTTIME (each drain converts by the
 * offset of its own clock reading: slices of two drains nest only as
 * written). */
static uint64_t own_ns(const struct trace_out *t, const struct event *ev)
{
	return is_pf(t) ? pf_mono(&t->pf, ev) : ev->boot_ns;
}

static void remember_span(struct trace_thread *th, uint64_t begin, uint64_t end, uint64_t sp)
{
	if (!th->recent && !(th->recent = malloc(RECENT_SLICES * sizeof(*th->recent))))
		return;  /* no nesting of later ones against this thread's slices */
	th->recent[th->next_recent] = (struct trace_span){ begin, end, sp };
	th->next_recent = (th->next_recent + 1) % RECENT_SLICES;
	if (th->n_recent < RECENT_SLICES)
		th->n_recent++;
}

/* The end a call left without an exit (unwound, or still running at exit)
 * gets: its own (when a later hit found it left, or now) is only a bound, so
 * it is brought down until the slice nests among the thread's slices
 * written before it.  A slice s open at its begin (s->begin <= begin <
 * s->end) encloses it: it ends before s does.  A slice beginning inside it
 * and ending after it began after it was left: it ends before s begins; so
 * does one entered at or above its entry sp (the stack grows down: its frame
 * was gone then, as call_seq.h has it for the method traces).  Strictly
 * before: viewers order equal timestamps by file order, and s was written
 * first.  Each span moves the end at most once (down, never below begin), so
 * this ends. */
static uint64_t nested_end(const struct trace_thread *th, uint64_t begin, uint64_t end,
			   uint64_t sp)
{
	bool moved = th && th->recent;

	while (moved) {
		moved = false;
		for (uint32_t i = 0; i < th->n_recent; i++) {
			const struct trace_span *s = &th->recent[i];

			if (s->begin <= begin && begin < s->end && end >= s->end) {
				end = s->end - 1;
				moved = true;
			} else if (begin < s->begin && s->begin <= end &&
				   (s->end > end || (sp && s->sp >= sp))) {
				end = s->begin - 1;
				moved = true;
			}
		}
	}
	return end;
}

static void complete(struct trace_out *t, const struct event *ev, struct trace_thread *th,
		     struct label l, const char *mark)
{
	uint64_t dur = ev->duration_ns <= ev->boot_ns ? ev->duration_ns : ev->boot_ns;
	uint64_t start = ev->boot_ns - dur;

	if (th && own_ns(t, ev) >= dur)
		remember_span(th, own_ns(t, ev) - dur, own_ns(t, ev), ev->entry_sp);
	if (is_pf(t)) {
		pf_complete(&t->pf, ev, l, mark);
	} else if (is_json(t)) {
		j_begin(t, "X", l, cat_of(ev), start, ev->pid, ev->tid);
		json_key(&t->j, "dur");
		ts_us(&t->j, dur);
		j_args(t, ev, mark);
		j_end(t);
	} else {
		s_begin(t, ev, start, l, false);
		s_end(t, ev, ev->boot_ns);
	}
}

/* A call left without an exit, ending at ev's time (marked so): a slice
 * from its entry, ending where it nests (nested_end). */
static void left_call(struct trace_out *t, const struct event *ev, struct trace_thread *th,
		      struct label l, const char *mark)
{
	struct event c = *ev;
	uint64_t end = own_ns(t, ev);
	uint64_t dur = ev->duration_ns <= end ? ev->duration_ns : end;
	uint64_t cut = end - nested_end(th, end - dur, end, ev->entry_sp);

	if (cut > ev->boot_ns)
		cut = ev->boot_ns;
	c.duration_ns = dur - cut;
	c.boot_ns -= cut;
	if (c.mono_ns)
		c.mono_ns -= cut;
	complete(t, &c, th, l, mark);
}

static void drop(struct trace_out *t, const struct event *ev)
{
	char name[96];
	int n = snprintf(name, sizeof(name), "uprobestats: %llu records %s",
			 (unsigned long long)ev->n_lost,
			 ev->kind == EVENT_DROP ? "dropped" : "lost");
	struct label l = { name, (size_t)n };

	if (is_pf(t)) {
		pf_drop(&t->pf, ev);
	} else if (is_json(t)) {
		j_begin(t, "i", l, cat_of(ev), ev->boot_ns, ev->pid, ev->tid);
		json_key(&t->j, "s");
		json_cstring(&t->j, "g");
		json_key(&t->j, "args");
		json_object_begin(&t->j);
		json_key(&t->j, "count");
		json_u64(&t->j, ev->n_lost);
		json_key(&t->j, "map");
		json_cstring(&t->j, ev->probe ? ev->probe->map : NULL);
		json_object_end(&t->j);
		j_end(t);
	} else {
		s_begin(t, ev, ev->boot_ns, l, false);
		s_end(t, ev, ev->boot_ns);
	}
}

static void enter(struct trace_out *t, const struct event *ev, struct trace_thread *th,
		  struct label l)
{
	if (!th || th->depth == TRACE_MAX_DEPTH) {
		t->too_deep++;
		instant(t, ev, l);
		return;
	}
	th->open[th->depth++] = ev->probe;
	if (is_pf(t)) {
		pf_begin(&t->pf, ev, l);
	} else if (is_json(t)) {
		j_begin(t, "B", l, cat_of(ev), ev->boot_ns, ev->pid, ev->tid);
		j_args(t, ev, NULL);
		j_end(t);
	} else {
		s_begin(t, ev, ev->boot_ns, l, false);
	}
}

static bool label_eq(struct label a, struct label b)
{
	return a.n == b.n && memcmp(a.s, b.s, a.n) == 0;
}

/* Viewers (speedscope, catapult) match an "E" to its "B" by name: repeat it.
 * speedscope also folds a slice's args into that name, so an "E" carries no
 * args of its own (the exit's fields stay in the JSON Lines output). */
static void end_slice(struct trace_out *t, const struct event *ev, struct label name, uint64_t ns,
		      bool unfinished)
{
	if (is_pf(t)) {
		/* at close (no time of its own): the last timestamp written */
		uint64_t mono = ev->mono_ns || ev->boot_ns ? pf_mono(&t->pf, ev) : pf_last_mono(&t->pf);
		pf_end(&t->pf, ev->pid, ev->tid, mono, unfinished);
	} else if (is_json(t)) {
		j_begin(t, "E", name, NULL, ns, ev->pid, ev->tid);
		if (unfinished) {
			json_key(&t->j, "args");
			json_object_begin(&t->j);
			json_key(&t->j, "unfinished");
			json_bool(&t->j, true);
			json_object_end(&t->j);
		}
		j_end(t);
	} else {
		s_end(t, ev, ns);
	}
}

static void leave(struct trace_out *t, const struct event *ev, struct trace_thread *th,
		  struct label l)
{
	int k = th ? (int)th->depth - 1 : -1;

	while (k >= 0 && !label_eq(probe_label(th->open[k]), l))
		k--;
	if (k < 0) {
		char name[300];
		int n = snprintf(name, sizeof(name), "%.*s (exit without enter)", (int)l.n, l.s);
		t->orphan_exits++;
		instant(t, ev, (struct label){ name, (size_t)n });
		return;
	}
	/* slices opened above the match lost their exit: end them here */
	while ((int)th->depth - 1 > k) {
		th->depth--;
		t->unclosed++;
		end_slice(t, ev, probe_label(th->open[th->depth]), ev->boot_ns, true);
	}
	th->depth--;
	end_slice(t, ev, l, ev->boot_ns, false);
}

/* ---- trace-marker calls (sections): what atrace itself would write ---- */

static void s_marker(struct trace_out *t, const struct event *ev, char mark,
		     const struct section_call *c, bool with_value)
{
	s_line(t, ev, ev->boot_ns, mark);
	if (mark != 'E') {
		outbuf_putc(&t->o, '|');
		text_escape_nopipe(&t->o, c->name, c->name_len);
	}
	if (with_value)
		outbuf_printf(&t->o, "|%lld", (long long)c->value);
	outbuf_putc(&t->o, '\n');
}

static void j_section(struct trace_out *t, const struct event *ev, const char *ph,
		      const struct section_call *c)
{
	struct json_out *j = &t->j;
	bool async = c->op == SECTION_OP_ASYNC_BEGIN || c->op == SECTION_OP_ASYNC_END;
	bool counter = c->op == SECTION_OP_COUNTER || c->op == SECTION_OP_COUNTER64;

	j_begin(t, ph, (struct label){ c->name, c->name_len }, async ? "async" : "section",
		ev->boot_ns, ev->pid, ev->tid);
	if (async) {
		json_key(j, "id");
		json_i64(j, c->value);
	}
	if (counter || (c->op == SECTION_OP_BEGIN && ev->probe && ev->probe->method)) {
		json_key(j, "args");
		json_object_begin(j);
		if (counter) {
			json_key(j, "value");
			json_i64(j, c->value);
		} else {
			json_key(j, "probe");
			json_cstring(j, ev->probe->method);
		}
		json_object_end(j);
	}
	j_end(t);
}

/* An end without its begin, or an async end without a begin, is left out:
 * the summary counts it (sinks/sections.h). */
static void section(struct trace_out *t, const struct event *ev)
{
	static const char sys[] = { 0, 'B', 'E', 'S', 'F', 'C', 'C' };
	static const char *const json[] = { NULL, "B", "E", "b", "e", "C", "C" };
	const struct section_call *c = ev->section;

	if (c->verdict != SECTION_OK || c->op > SECTION_OP_COUNTER64 || !c->op)
		return;
	if (is_pf(t))
		pf_section(&t->pf, ev);
	else if (is_json(t))
		j_section(t, ev, json[c->op], c);
	else
		s_marker(t, ev, sys[c->op], c, c->op >= SECTION_OP_ASYNC_BEGIN);
}

void trace_event(struct trace_out *t, const struct event *ev)
{
	struct label l = probe_label(ev->probe);
	enum probe_role role = ev->probe ? ev->probe->role : PROBE_PLAIN;

	if (ev->boot_ns > t->last_ns)
		t->last_ns = ev->boot_ns;
	process_name(t, ev); /* may grow the table: before taking th */
	struct trace_thread *th = thread_of(t, ev->tid, ev->pid);
	thread_name(t, ev, th);
	if (is_pf(t))
		pf_thread(&t->pf, ev);
	if (ev->kind == EVENT_DROP || ev->kind == EVENT_LOST)
		drop(t, ev);
	else if (ev->section)
		section(t, ev);
	else if (ev->kind == EVENT_UNWOUND)
		left_call(t, ev, th, l, "unwound");
	else if (ev->kind == EVENT_RETURN)
		complete(t, ev, th, l, NULL);
	else if (role == PROBE_ENTER)
		enter(t, ev, th, l);
	else if (role == PROBE_EXIT)
		leave(t, ev, th, l);
	else
		instant(t, ev, l);
}

int trace_open(struct trace_out *t, FILE *f, enum trace_format fmt, struct err *e)
{
	return trace_open_clocked(t, f, fmt, NULL, NULL, e);
}

int trace_open_clocked(struct trace_out *t, FILE *f, enum trace_format fmt,
		       void (*read_clocks)(void *ctx, uint64_t out[3]), void *ctx, struct err *e)
{
	int rc;

	memset(t, 0, sizeof(*t));
	pf_set_clocks(&t->pf, read_clocks, ctx);
	rc = outbuf_init(&t->o, f, 0, "trace", e);
	if (rc < 0)
		return rc;
	json_init(&t->j, &t->o);
	t->fmt = fmt;
	if (!grow(t)) {
		outbuf_free(&t->o);
		return err_set(e, -ENOMEM, "trace: cannot allocate the thread table");
	}
	if (is_pf(t)) {
		rc = pf_open(&t->pf, &t->o, e);
		if (rc < 0) {
			pf_close(&t->pf);
			free(t->threads);
			outbuf_free(&t->o);
			return rc;
		}
	} else if (is_json(t)) {
		outbuf_puts(&t->o, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":"
				   "\"uprobestats\",\"clock\":\"CLOCK_BOOTTIME\"},\"traceEvents\":["
				   "\n");
	} else {
		outbuf_puts(&t->o, "TRACE:\n# tracer: nop\n#\n"
				   "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  "
				   "FUNCTION\n"
				   "#              | |        |      |   ||||       |         |\n");
	}
	return 0;
}

int trace_flush(struct trace_out *t)
{
	if (is_pf(t))
		pf_flush(&t->pf);
	return outbuf_flush(&t->o);
}

/* End what is still open, at the last timestamp seen, marked unfinished. */
static void close_open_slices(struct trace_out *t)
{
	for (size_t i = 0; i < t->cap; i++) {
		struct trace_thread *th = &t->threads[i];
		struct event ev = { .pid = th->pid, .tid = th->tid };

		for (; th->used && th->depth > 0; th->depth--) {
			t->unclosed++;
			end_slice(t, &ev, probe_label(th->open[th->depth - 1]), t->last_ns, true);
		}
	}
}

/* A call still running at exit (sink_ops.h's running): a slice from its
 * entry to end_ns (BOOTTIME, now), marked. */
static void running_call(struct trace_out *t, const struct running_call *c, uint64_t end_ns)
{
	struct trace_thread *th = known_thread(t, c->tid);
	/* a thread without a record: its process and names as the run's end
	 * found them (else taken for a main thread, unnamed) */
	struct event ev = { .kind = EVENT_RETURN, .boot_ns = end_ns, .tid = c->tid,
			    .pid = th ? th->pid : c->pid ? c->pid : c->tid, .probe = c->probe,
			    .entry_sp = c->entry_sp, .comm = c->comm[0] ? c->comm : NULL,
			    .process = c->process[0] ? c->process : NULL };

	if (!c->probe || !c->tid || c->enter_boot_ns > end_ns)
		return;
	ev.duration_ns = end_ns - c->enter_boot_ns;
	if (c->enter_mono_ns)
		ev.mono_ns = c->enter_mono_ns + ev.duration_ns;
	if (!th) {
		process_name(t, &ev); /* may grow the table: before taking th */
		th = thread_of(t, c->tid, ev.pid);
		thread_name(t, &ev, th);
		if (is_pf(t))
			pf_thread(&t->pf, &ev);
	}
	if (end_ns > t->last_ns)
		t->last_ns = end_ns;
	left_call(t, &ev, th, probe_label(c->probe), "running_at_exit");
}

static uint64_t entry_of(const struct running_call *c)
{
	return c->enter_mono_ns ? c->enter_mono_ns : c->enter_boot_ns;
}

/* By thread, the latest entry first: a callee's end is written before its
 * caller's at the same time (viewers keep file order there). */
static int by_thread_latest_first(const void *a, const void *b)
{
	const struct running_call *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (entry_of(x) != entry_of(y))
		return entry_of(x) > entry_of(y) ? -1 : 1;
	return 0;
}

void trace_running(struct trace_out *t, const struct running_call *c, size_t n,
		   uint64_t end_ns)
{
	struct running_call *v = n ? malloc(n * sizeof(*v)) : NULL;

	if (!t->o.buf || !n)
		goto out;
	if (v) {
		memcpy(v, c, n * sizeof(*v));
		qsort(v, n, sizeof(*v), by_thread_latest_first);
		c = v;
	}
	for (size_t i = 0; i < n; i++)
		running_call(t, &c[i], end_ns);
out:
	free(v);
}

void trace_close(struct trace_out *t)
{
	if (!t->o.buf)
		return;
	close_open_slices(t);
	if (is_json(t))
		outbuf_puts(&t->o, "\n]}\n");
	if (is_pf(t)) {
		pf_summary(&t->pf, t->rows, t->n_rows, t->unclosed, t->orphan_exits);
		pf_close(&t->pf);
	}
	outbuf_finish(&t->o, OUTBUF_CLOSE_WAIT_MS);
	outbuf_free(&t->o);
	for (size_t i = 0; i < t->cap; i++)
		free(t->threads[i].recent);
	free(t->threads);
	t->threads = NULL;
	t->cap = t->used = 0;
}

/* ---- the sink's row (sink_ops.h) ---- */

static bool trace_wanted(const struct sinks_options *o)
{
	return o->trace && (o->trace_format == TRACE_FORMAT_JSON ||
			    o->trace_format == TRACE_FORMAT_SYSTRACE ||
			    o->trace_format == TRACE_FORMAT_PERFETTO);
}

static int trace_sink_open(void *st, const struct sinks_options *o, struct err *e)
{
	int rc = trace_open(st, o->trace, o->trace_format, e);

	if (rc == 0)
		pf_set_suspend(&((struct trace_out *)st)->pf, o->suspend);
	return rc;
}

static void trace_sink_event(void *st, const struct event *ev)
{
	trace_event(st, ev);
}

static void trace_probe_rows(void *st, const struct probe_stats *rows, size_t n)
{
	struct trace_out *t = st;

	t->rows = rows;
	t->n_rows = n;
}

static void trace_sink_running(void *st, const struct running_call *c, size_t n,
			       uint64_t end_ns)
{
	trace_running(st, c, n, end_ns);
}

static void trace_sink_counter(void *st, const struct counter_sample *c)
{
	struct trace_out *t = st;

	if (is_pf(t))
		pf_counter(&t->pf, c);
}

static void trace_sink_flush(void *st)
{
	trace_flush(st);
}

static struct outbuf *trace_output(void *st)
{
	return &((struct trace_out *)st)->o;
}

/* The footer goes before the report is taken; trace_close keeps its
 * counters and its error for the report. */
static void trace_sink_finish(void *st)
{
	trace_close(st);
}

static void trace_report(const void *st, struct sink_report *r)
{
	const struct trace_out *t = st;

	r->trace_unclosed = t->unclosed;
	r->trace_orphan_exits = t->orphan_exits;
}

const struct sink_ops trace_sink = {
	.name = "trace",
	.state_size = sizeof(struct trace_out),
	.wanted = trace_wanted,
	.open = trace_sink_open,
	.event = trace_sink_event,
	.takes_unwound = true,
	.flush = trace_sink_flush,
	.output = trace_output,
	.own_losses = true,
	.probe_rows = trace_probe_rows,
	.running = trace_sink_running,
	.counter = trace_sink_counter,
	.finish = trace_sink_finish,
	.report = trace_report,
};
