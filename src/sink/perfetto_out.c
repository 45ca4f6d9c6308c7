/* perfetto_out.c — see perfetto_out.h: the track events. */
#include "sink/perfetto_out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/grow.h"
#include "sink/perfetto_enc.h"
#include "sink/perfetto_proto.h"


void pf_thread(struct pf_out *p, const struct event *ev)
{
	pf_tracks_thread(&p->tracks, &p->k, ev);
}

/* ---- track events ---- */

uint64_t pf_last_mono(const struct pf_out *p)
{
	return p->k.last_mono;
}

uint64_t pf_mono(const struct pf_out *p, const struct event *ev)
{
	if (ev->mono_ns)
		return ev->mono_ns;
	return ev->boot_ns > (uint64_t)p->clk.snap_off ? ev->boot_ns - (uint64_t)p->clk.snap_off
						      : 0;
}

/* Before the first event of a drain: the clocks (a suspend shows here, and
 * its snapshot must come before the packets it converts). */
static void batch(struct pf_out *p)
{
	if (!p->in_batch) {
		p->in_batch = true;
		pf_clocks_check(&p->clk, &p->k, false);
	}
}

/* The event's type and track and a little more. */
#define EV_BASE (4 * PE_FIELD_MAX)

/* Starts a packet and its track event in p->eb, with room for `room` bytes
 * after the type and the track; false (the event left out) without memory. */
static bool ev_start(struct pf_out *p, unsigned type, uint64_t track, size_t room)
{
	if (room > SIZE_MAX - EV_BASE || grow_array(&p->eb, &p->eb_cap, room + EV_BASE, 4096) < 0)
		return false;
	pf_packet_start(&p->k);
	struct pf_seq *s = pf_track_seq(&p->tracks, &p->k, track);
	p->k.seq = s;
	p->a.t = &s->t;
	p->a.w = pe_uint(p->eb, TE_TYPE, type);
	if (track != s->track)  /* else the sequence's default track */
		p->a.w = pe_uint(p->a.w, TE_TRACK, track);
	return true;
}

static void ev_emit(struct pf_out *p, bool has_ts, uint64_t ts)
{
	pf_packet_emit_event(&p->k, p->eb, (size_t)(p->a.w - p->eb), has_ts, ts);
}

/* stable: s lives at its address as long as the sink (not a record's bytes) */
static void ev_name(struct pf_out *p, const char *s, size_t n, bool stable)
{
	struct pf_tables *t = p->a.t;
	uint64_t iid = stable ? pf_intern_stable(&t->cache, &t->events, &p->k.interned,
						 ID_EVENT_NAMES, s, n)
			      : pf_intern(&t->events, &p->k.interned, ID_EVENT_NAMES, s, n);

	p->a.w = iid ? pe_uint(p->a.w, TE_NAME_IID, iid) : pe_str(p->a.w, TE_NAME, s, n);
}

/* The signature, when the name (a label cut from it) does not say it all:
 * its length, else 0. */
static size_t signature_len(const struct event *ev, struct label l)
{
	size_t n;

	if (!ev->probe || !ev->probe->method)
		return 0;
	n = strlen(ev->probe->method);
	return n != l.n || memcmp(ev->probe->method, l.s, l.n) ? n : 0;
}

#define DETAILS_FIELDS 64  /* fields whose name lengths are kept between the passes */

/* A track event with the name, the probe's signature, the record's fields
 * and its stack; false when left out (no memory). */
static bool ev_details(struct pf_out *p, unsigned type, uint64_t track, const struct event *ev,
		       struct label l)
{
	size_t sig = signature_len(ev, l), room = PE_FIELD_MAX + PE_NEST_MAX + PE_STR_ROOM(l.n);
	size_t names[DETAILS_FIELDS], nl;

	if (sig)
		room += pf_ann_str_room(sig);
	for (size_t i = 0; i < ev->n_fields; i++) {
		room += pf_field_room(&ev->fields[i], &nl);
		if (i < DETAILS_FIELDS)
			names[i] = nl;
	}
	if (ev->stack) {
		room += pf_callstack_room(ev->stack);
		if (ev->stack->end)
			room += pf_ann_str_room(strlen(ev->stack->end));
	}
	if (!ev_start(p, type, track, room))
		return false;
	ev_name(p, l.s, l.n, true);
	if (sig)
		pf_ann_str(&p->a, "probe", ev->probe->method, sig, true);
	for (size_t i = 0; i < ev->n_fields; i++) {
		const struct field *f = &ev->fields[i];
		pf_ann_field(&p->a, f, i < DETAILS_FIELDS ? names[i] : (f->name ? strlen(f->name) : 1));
	}
	if (ev->stack) {
		pf_callstack(&p->a, ev->stack);
		if (ev->stack->end)
			pf_ann_str(&p->a, "stack_end", ev->stack->end, strlen(ev->stack->end), true);
	}
	return true;
}

static uint64_t event_track(const struct pf_out *p, const struct event *ev)
{
	return ev->tid ? pf_thread_track(&p->tracks, ev->tid) : pf_tool_track(&p->tracks);
}

void pf_instant(struct pf_out *p, const struct event *ev, struct label l)
{
	uint64_t ts = pf_mono(p, ev);

	batch(p);
	if (ev_details(p, TYPE_INSTANT, event_track(p, ev), ev, l))
		ev_emit(p, true, ts);
}

void pf_complete(struct pf_out *p, const struct event *ev, struct label l, const char *mark)
{
	uint64_t end = pf_mono(p, ev);
	uint64_t dur = ev->duration_ns <= end ? ev->duration_ns : end;
	uint64_t track = event_track(p, ev);

	batch(p);
	if (!ev_details(p, TYPE_BEGIN, track, ev, l))
		return;  /* neither half */
	ev_emit(p, true, end - dur);
	if (!ev_start(p, TYPE_END, track, mark ? PF_ANN_FIXED : 0))
		return;
	/* on the end, like "unfinished": how the call ended (trace processor
	 * adds an end's annotations to its slice's args) */
	if (mark)
		pf_ann_bool(&p->a, mark, true);
	ev_emit(p, true, end);
}

void pf_begin(struct pf_out *p, const struct event *ev, struct label l)
{
	uint64_t ts = pf_mono(p, ev);

	batch(p);
	if (ev_details(p, TYPE_BEGIN, event_track(p, ev), ev, l))
		ev_emit(p, true, ts);
}

void pf_end(struct pf_out *p, uint32_t pid, uint32_t tid, uint64_t mono, bool unfinished)
{
	(void)pid;
	batch(p);
	if (!ev_start(p, TYPE_END, tid ? pf_thread_track(&p->tracks, tid) : pf_tool_track(&p->tracks),
		      PF_ANN_FIXED))
		return;
	if (unfinished)
		pf_ann_bool(&p->a, "unfinished", true);
	ev_emit(p, true, mono);
}

void pf_drop(struct pf_out *p, const struct event *ev)
{
	static const char dropped[] = "records dropped", lost[] = "records lost";
	uint64_t ts = pf_mono(p, ev);
	const char *map = ev->probe ? ev->probe->map : NULL;
	const char *method = ev->probe ? ev->probe->method : NULL;
	size_t map_n = map ? strlen(map) : 0, method_n = method ? strlen(method) : 0;

	batch(p);
	if (!ev_start(p, TYPE_INSTANT, pf_tool_track(&p->tracks),
		      PE_FIELD_MAX + PE_NEST_MAX + sizeof(dropped) + PF_ANN_FIXED +
		      pf_ann_str_room(map_n) + pf_ann_str_room(method_n)))
		return;
	if (ev->kind == EVENT_DROP)
		ev_name(p, dropped, sizeof(dropped) - 1, true);
	else
		ev_name(p, lost, sizeof(lost) - 1, true);
	pf_ann_uint(&p->a, "count", ev->n_lost);
	if (map)
		pf_ann_str(&p->a, "map", map, map_n, true);
	if (method)
		pf_ann_str(&p->a, "probe", method, method_n, true);
	ev_emit(p, true, ts);
}

/* A counter event of value on track. */
static void counter_event(struct pf_out *p, uint64_t track, int64_t value, uint64_t ts)
{
	if (!ev_start(p, TYPE_COUNTER, track, PE_FIELD_MAX))
		return;
	p->a.w = pe_uint(p->a.w, TE_COUNTER_VALUE, (uint64_t)value);
	ev_emit(p, true, ts);
}

void pf_counter(struct pf_out *p, const struct counter_sample *c)
{
	uint64_t track = pf_counter_track(&p->tracks, &p->k, c->pid, c->process, c->name,
					  strlen(c->name));

	batch(p);
	counter_event(p, track, c->value, c->mono_ns);
}

/* A section's slice begins (with its name) or ends on track, unless it is
 * an end that nothing begun on the track waits for. */
static void section_slice(struct pf_out *p, uint64_t track, const struct section_call *c,
			  bool begin, bool cookie, uint64_t ts)
{
	struct pf_track *tr = pf_track_find(&p->tracks, track);

	if (!begin && tr && !tr->open_sections)
		return; /* never begun here (the section tracker leaves these out) */
	if (tr)
		tr->open_sections += begin ? 1 : -1;
	if (!ev_start(p, begin ? TYPE_BEGIN : TYPE_END, track,
		      PE_FIELD_MAX + PE_NEST_MAX + PE_STR_ROOM(c->name_len) + PF_ANN_FIXED))
		return;
	if (begin)
		ev_name(p, c->name, c->name_len, false);
	if (begin && cookie)
		pf_ann_uint(&p->a, "cookie", (uint64_t)c->value);
	ev_emit(p, true, ts);
}

void pf_section(struct pf_out *p, const struct event *ev)
{
	const struct section_call *c = ev->section;
	uint64_t ts = pf_mono(p, ev);

	batch(p);
	switch (c->op) {
	case SECTION_OP_BEGIN:
	case SECTION_OP_END:
		section_slice(p, event_track(p, ev), c, c->op == SECTION_OP_BEGIN, false, ts);
		break;
	case SECTION_OP_ASYNC_BEGIN:
	case SECTION_OP_ASYNC_END:
		section_slice(p, pf_async_track(&p->tracks, &p->k, ev, c), c,
			      c->op == SECTION_OP_ASYNC_BEGIN, true, ts);
		break;
	case SECTION_OP_COUNTER:
	case SECTION_OP_COUNTER64:
		counter_event(p, pf_counter_track(&p->tracks, &p->k, ev->pid, ev->process, c->name,
						  c->name_len),
			      c->value, ts);
		break;
	default:
		return;
	}
}

/* Sections still open at exit end at the last timestamp, marked. */
static void close_sections(struct pf_out *p)
{
	size_t i = 0;

	for (struct pf_track *tr; (tr = pf_tracks_next_open(&p->tracks, &i));) {
		for (; tr->open_sections; tr->open_sections--) {
			if (!ev_start(p, TYPE_END, tr->uuid, PF_ANN_FIXED))
				continue;
			pf_ann_bool(&p->a, "unfinished", true);
			ev_emit(p, true, p->k.last_mono);
		}
	}
}

static void summary_row(struct pf_out *p, const struct probe_stats *r, uint64_t ts)
{
	static const char name[] = "uprobestats summary";
	struct label l = probe_label(r->probe);
	const char *method = r->probe ? r->probe->method : NULL;
	size_t method_n = method ? strlen(method) : 0;

	if (!ev_start(p, TYPE_INSTANT, pf_tool_track(&p->tracks),
		      PE_FIELD_MAX + PE_NEST_MAX + PE_STR_ROOM(sizeof(name)) + pf_ann_str_room(l.n) +
		      pf_ann_str_room(method_n) + 9 * PF_ANN_FIXED))
		return;
	ev_name(p, name, sizeof(name) - 1, true);
	pf_ann_str(&p->a, "label", l.s, l.n, true);
	if (method)
		pf_ann_str(&p->a, "probe", method, method_n, true);
	pf_ann_uint(&p->a, "hits", r->hits);
	pf_ann_uint(&p->a, "delivered", r->delivered);
	pf_ann_uint(&p->a, "dropped_kernel", r->dropped_kernel);
	pf_ann_uint(&p->a, "dropped_sink", r->dropped_sink);
	if (r->exit_probes) {
		pf_ann_uint(&p->a, "unwound", r->unwound);
		pf_ann_uint(&p->a, "untracked", r->untracked);
		pf_ann_uint(&p->a, "running_at_exit", r->running);
		pf_ann_uint(&p->a, "longest_running_ns", r->running_ns);
	}
	if (r->uretprobe)
		pf_ann_uint(&p->a, "unpaired", r->unpaired);
	ev_emit(p, true, ts);
}

void pf_summary(struct pf_out *p, const struct probe_stats *rows, size_t n, uint64_t unclosed,
		uint64_t orphan_exits)
{
	static const char name[] = "uprobestats summary";
	uint64_t ts;

	close_sections(p);
	ts = p->k.last_mono;
	for (size_t i = 0; i < n; i++)
		summary_row(p, &rows[i], ts);
	if (!ev_start(p, TYPE_INSTANT, pf_tool_track(&p->tracks),
		      PE_FIELD_MAX + PE_NEST_MAX + sizeof(name) + 2 * PF_ANN_FIXED))
		return;
	ev_name(p, name, sizeof(name) - 1, true);
	pf_ann_uint(&p->a, "slices_unfinished", unclosed);
	pf_ann_uint(&p->a, "exits_without_enter", orphan_exits);
	ev_emit(p, true, ts);
}

void pf_flush(struct pf_out *p)
{
	if (p->in_batch) {
		pf_clocks_check(&p->clk, &p->k, false);
		p->in_batch = false;
	}
}

void pf_set_suspend(struct pf_out *p, const struct suspend_source *s)
{
	p->clk.suspend = s;
}

void pf_set_clocks(struct pf_out *p, void (*read)(void *ctx, uint64_t out[3]), void *ctx)
{
	p->clk.read = read;
	p->clk.read_ctx = ctx;
}

int pf_open(struct pf_out *p, struct outbuf *o, struct err *e)
{
	uint64_t c[3];

	pf_packet_init(&p->k, o);
	p->a.defs = &p->k.interned;
	p->a.t = &p->k.main.t;
	pf_clocks_read(&p->clk, c);
	pf_clocks_first(&p->clk, &p->k, c);
	/* track uuids of this run, unlike those of other files of one timeline */
	pf_tracks_open(&p->tracks, &p->k, pf_mix64(((uint64_t)getpid() << 32) ^ c[0] ^ c[2]));
	if (p->k.pkt.oom)
		return err_set(e, -ENOMEM, "trace: out of memory");
	return 0;
}

void pf_close(struct pf_out *p)
{
	pf_clocks_check(&p->clk, &p->k, true);
	pf_packet_free(&p->k);
	p->a.t = &p->k.main.t;
	pf_tracks_free(&p->tracks);
	free(p->eb);
	p->eb = NULL;
	p->eb_cap = 0;
}
