/* perfetto_out.c — see perfetto_out.h: the track events. */
#include "sink/perfetto_out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sink/perfetto_proto.h"
#include "sink/stack_out.h"

/* String fields up to this long are interned (names, paths, method names
 * repeat); longer ones are written inline. */
#define PF_INTERN_STRING_MAX 128

static uint64_t intern(struct pf_out *p, struct pf_intern *t, uint32_t table, const char *s,
		       size_t n)
{
	return pf_intern(t, &p->k.interned, table, s, n);
}

static uint64_t intern_stable(struct pf_out *p, struct pf_intern *t, uint32_t table,
			      const char *s, size_t n)
{
	return pf_intern_stable(&p->ptr_cache, t, &p->k.interned, table, s, n);
}

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

static void ev_start(struct pf_out *p, unsigned type, uint64_t track)
{
	pf_packet_start(&p->k);
	wire_put_uint_field(&p->k.ev, TE_TYPE, type);
	wire_put_uint_field(&p->k.ev, TE_TRACK, track);
}

/* stable: s lives at its address as long as the sink (not a record's bytes) */
static void ev_name(struct pf_out *p, const char *s, size_t n, bool stable)
{
	uint64_t iid = stable ? intern_stable(p, &p->names, ID_EVENT_NAMES, s, n)
			      : intern(p, &p->names, ID_EVENT_NAMES, s, n);

	if (iid)
		wire_put_uint_field(&p->k.ev, TE_NAME_IID, iid);
	else
		wire_put_len_field(&p->k.ev, TE_NAME, s, n);
}

/* Opens a DebugAnnotation with its (interned) name; the caller writes one
 * value and closes it. */
static size_t ann_open(struct pf_out *p, struct wire_buf *w, const char *name)
{
	size_t n = strlen(name);
	size_t at = wire_open(w, TE_DEBUG);
	uint64_t iid = intern_stable(p, &p->ann_names, ID_ANN_NAMES, name, n);

	if (iid)
		wire_put_uint_field(w, DA_NAME_IID, iid);
	else
		wire_put_len_field(w, DA_NAME, name, n);
	return at;
}

static void ann_uint(struct pf_out *p, const char *name, uint64_t v)
{
	size_t at = ann_open(p, &p->k.ev, name);
	wire_put_uint_field(&p->k.ev, DA_UINT, v);
	wire_close(&p->k.ev, at);
}

static void ann_bool(struct pf_out *p, const char *name, bool v)
{
	size_t at = ann_open(p, &p->k.ev, name);
	wire_put_uint_field(&p->k.ev, DA_BOOL, v);
	wire_close(&p->k.ev, at);
}

static void ann_str(struct pf_out *p, const char *name, const char *s, size_t n, bool interned)
{
	size_t at = ann_open(p, &p->k.ev, name);
	uint64_t iid = interned ? intern_stable(p, &p->strings, ID_STRINGS, s, n) : 0;

	if (iid)
		wire_put_uint_field(&p->k.ev, DA_STRING_IID, iid);
	else
		wire_put_len_field(&p->k.ev, DA_STRING, s, n);
	wire_close(&p->k.ev, at);
}

static void put_hex(struct wire_buf *w, const char *s, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[128];
	size_t k = 0;

	wire_put_tag(w, DA_STRING, WT_LEN);
	wire_put_varint(w, n * 2);
	for (size_t i = 0; i < n; i++) {
		tmp[k++] = digits[(unsigned char)s[i] >> 4];
		tmp[k++] = digits[(unsigned char)s[i] & 15];
		if (k == sizeof(tmp) || i + 1 == n) {
			wire_put_bytes(w, tmp, k);
			k = 0;
		}
	}
}

static void ann_field(struct pf_out *p, const struct field *f)
{
	struct wire_buf *w = &p->k.ev;
	size_t at = ann_open(p, w, f->name ? f->name : "?");

	switch (f->type) {
	case FIELD_INT32:
		wire_put_tag(w, DA_INT, WT_VARINT);
		wire_put_varint(w, (uint64_t)(int64_t)f->v.i32);
		break;
	case FIELD_INT64:
		wire_put_tag(w, DA_INT, WT_VARINT);
		wire_put_varint(w, (uint64_t)f->v.i64);
		break;
	case FIELD_UINT64:
		wire_put_uint_field(w, DA_POINTER, f->v.u64);
		break;
	case FIELD_BOOL:
		wire_put_uint_field(w, DA_BOOL, f->v.b);
		break;
	case FIELD_STRING: {
		uint64_t iid = f->v.str.len <= PF_INTERN_STRING_MAX
			       ? intern(p, &p->strings, ID_STRINGS, f->v.str.ptr, f->v.str.len) : 0;
		if (iid)
			wire_put_uint_field(w, DA_STRING_IID, iid);
		else
			wire_put_len_field(w, DA_STRING, f->v.str.ptr, f->v.str.len);
		break;
	}
	case FIELD_BYTES:
		put_hex(w, f->v.str.ptr, f->v.str.len);
		break;
	case FIELD_FLOAT:
		wire_put_tag(w, DA_DOUBLE, WT_I64);
		{
			double d = f->v.f;
			uint64_t bits;
			memcpy(&bits, &d, sizeof(bits));
			wire_put_fixed64(w, bits);
		}
		break;
	case FIELD_INT32_LIST:
	case FIELD_INT64_LIST: {
		uint32_t n = f->type == FIELD_INT32_LIST ? f->v.i32s.n : f->v.i64s.n;
		for (uint32_t i = 0; i < n; i++) {
			size_t e = wire_open(w, DA_ARRAY);
			int64_t v = f->type == FIELD_INT32_LIST ? f->v.i32s.ptr[i]
								: f->v.i64s.ptr[i];
			wire_put_tag(w, DA_INT, WT_VARINT);
			wire_put_varint(w, (uint64_t)v);
			wire_close(w, e);
		}
		break;
	}
	}
	wire_close(w, at);
}

static void ev_callstack(struct pf_out *p, const struct stack_trace *st)
{
	struct wire_buf *w = &p->k.ev;
	size_t at = wire_open(w, TE_CALLSTACK);
	char buf[512];

	/* outermost first, as InlineCallstack orders them */
	for (size_t i = st->n; i-- > 0;) {
		const struct stack_frame *f = &st->frames[i];
		size_t fr = wire_open(w, CALLSTACK_FRAMES);
		size_t n = stack_frame_label(f, buf, sizeof(buf));
		wire_put_len_field(w, FRAME_FUNCTION, buf, n);
		if (f->file)
			wire_put_len_field(w, FRAME_SOURCE, f->file, strlen(f->file));
		if (f->line > 0)
			wire_put_uint_field(w, FRAME_LINE, (uint64_t)f->line);
		wire_close(w, fr);
	}
	wire_close(w, at);
}

/* Name, the probe's signature, the record's fields and its stack. */
static void ev_details(struct pf_out *p, const struct event *ev, struct label l)
{
	ev_name(p, l.s, l.n, true);
	/* the signature, when the name (a label cut from it) does not say it all */
	if (ev->probe && ev->probe->method &&
	    (strlen(ev->probe->method) != l.n || memcmp(ev->probe->method, l.s, l.n)))
		ann_str(p, "probe", ev->probe->method, strlen(ev->probe->method), true);
	for (size_t i = 0; i < ev->n_fields; i++)
		ann_field(p, &ev->fields[i]);
	if (ev->stack) {
		ev_callstack(p, ev->stack);
		if (ev->stack->end)
			ann_str(p, "stack_end", ev->stack->end, strlen(ev->stack->end), true);
	}
}

static uint64_t event_track(const struct pf_out *p, const struct event *ev)
{
	return ev->tid ? pf_thread_track(&p->tracks, ev->tid) : pf_tool_track(&p->tracks);
}

void pf_instant(struct pf_out *p, const struct event *ev, struct label l)
{
	uint64_t ts = pf_mono(p, ev);

	batch(p);
	ev_start(p, TYPE_INSTANT, event_track(p, ev));
	ev_details(p, ev, l);
	pf_packet_emit(&p->k, true, ts);
}

void pf_complete(struct pf_out *p, const struct event *ev, struct label l)
{
	uint64_t end = pf_mono(p, ev);
	uint64_t dur = ev->duration_ns <= end ? ev->duration_ns : end;
	uint64_t track = event_track(p, ev);

	batch(p);
	ev_start(p, TYPE_BEGIN, track);
	ev_details(p, ev, l);
	pf_packet_emit(&p->k, true, end - dur);
	ev_start(p, TYPE_END, track);
	pf_packet_emit(&p->k, true, end);
}

void pf_begin(struct pf_out *p, const struct event *ev, struct label l)
{
	uint64_t ts = pf_mono(p, ev);

	batch(p);
	ev_start(p, TYPE_BEGIN, event_track(p, ev));
	ev_details(p, ev, l);
	pf_packet_emit(&p->k, true, ts);
}

void pf_end(struct pf_out *p, uint32_t pid, uint32_t tid, uint64_t mono, bool unfinished)
{
	(void)pid;
	batch(p);
	ev_start(p, TYPE_END, tid ? pf_thread_track(&p->tracks, tid) : pf_tool_track(&p->tracks));
	if (unfinished)
		ann_bool(p, "unfinished", true);
	pf_packet_emit(&p->k, true, mono);
}

void pf_drop(struct pf_out *p, const struct event *ev)
{
	static const char dropped[] = "records dropped", lost[] = "records lost";
	uint64_t ts = pf_mono(p, ev);

	batch(p);
	ev_start(p, TYPE_INSTANT, pf_tool_track(&p->tracks));
	if (ev->kind == EVENT_DROP)
		ev_name(p, dropped, sizeof(dropped) - 1, true);
	else
		ev_name(p, lost, sizeof(lost) - 1, true);
	ann_uint(p, "count", ev->n_lost);
	if (ev->probe && ev->probe->map)
		ann_str(p, "map", ev->probe->map, strlen(ev->probe->map), true);
	if (ev->probe && ev->probe->method)
		ann_str(p, "probe", ev->probe->method, strlen(ev->probe->method), true);
	pf_packet_emit(&p->k, true, ts);
}

void pf_counter(struct pf_out *p, const struct counter_sample *c)
{
	uint64_t track = pf_counter_track(&p->tracks, &p->k, c->pid, c->process, c->name, strlen(c->name));

	batch(p);
	ev_start(p, TYPE_COUNTER, track);
	wire_put_tag(&p->k.ev, TE_COUNTER_VALUE, WT_VARINT);
	wire_put_varint(&p->k.ev, (uint64_t)c->value);
	pf_packet_emit(&p->k, true, c->mono_ns);
}

void pf_section(struct pf_out *p, const struct event *ev)
{
	const struct section_call *c = ev->section;
	uint64_t ts = pf_mono(p, ev);
	uint64_t track;
	struct pf_track *tr;

	batch(p);
	switch (c->op) {
	case SECTION_OP_BEGIN:
	case SECTION_OP_END:
		track = event_track(p, ev);
		tr = pf_track_find(&p->tracks, track);
		if (c->op == SECTION_OP_END && tr && !tr->open_sections)
			return; /* never begun here (the section tracker leaves these out) */
		if (tr)
			tr->open_sections += c->op == SECTION_OP_BEGIN ? 1 : -1;
		ev_start(p, c->op == SECTION_OP_BEGIN ? TYPE_BEGIN : TYPE_END, track);
		if (c->op == SECTION_OP_BEGIN)
			ev_name(p, c->name, c->name_len, false);
		break;
	case SECTION_OP_ASYNC_BEGIN:
	case SECTION_OP_ASYNC_END:
		track = pf_async_track(&p->tracks, &p->k, ev, c);
		tr = pf_track_find(&p->tracks, track);
		if (c->op == SECTION_OP_ASYNC_END && tr && !tr->open_sections)
			return;
		if (tr)
			tr->open_sections += c->op == SECTION_OP_ASYNC_BEGIN ? 1 : -1;
		if (c->op == SECTION_OP_ASYNC_BEGIN) {
			ev_start(p, TYPE_BEGIN, track);
			ev_name(p, c->name, c->name_len, false);
			ann_uint(p, "cookie", (uint64_t)c->value);
		} else {
			ev_start(p, TYPE_END, track);
		}
		break;
	case SECTION_OP_COUNTER:
	case SECTION_OP_COUNTER64:
		track = pf_counter_track(&p->tracks, &p->k, ev->pid, ev->process, c->name, c->name_len);
		ev_start(p, TYPE_COUNTER, track);
		wire_put_tag(&p->k.ev, TE_COUNTER_VALUE, WT_VARINT);
		wire_put_varint(&p->k.ev, (uint64_t)c->value);
		break;
	default:
		return;
	}
	pf_packet_emit(&p->k, true, ts);
}

/* Sections still open at exit end at the last timestamp, marked. */
static void close_sections(struct pf_out *p)
{
	size_t i = 0;

	for (struct pf_track *tr; (tr = pf_tracks_next_open(&p->tracks, &i));) {
		for (; tr->open_sections; tr->open_sections--) {
			ev_start(p, TYPE_END, tr->uuid);
			ann_bool(p, "unfinished", true);
			pf_packet_emit(&p->k, true, p->k.last_mono);
		}
	}
}

void pf_summary(struct pf_out *p, const struct probe_stats *rows, size_t n, uint64_t unclosed,
		uint64_t orphan_exits)
{
	static const char name[] = "uprobestats summary";
	uint64_t ts;

	close_sections(p);
	ts = p->k.last_mono;

	for (size_t i = 0; i < n; i++) {
		const struct probe_stats *r = &rows[i];
		struct label l = probe_label(r->probe);

		ev_start(p, TYPE_INSTANT, pf_tool_track(&p->tracks));
		ev_name(p, name, sizeof(name) - 1, true);
		ann_str(p, "label", l.s, l.n, true);
		if (r->probe && r->probe->method)
			ann_str(p, "probe", r->probe->method, strlen(r->probe->method), true);
		ann_uint(p, "hits", r->hits);
		ann_uint(p, "delivered", r->delivered);
		ann_uint(p, "dropped_kernel", r->dropped_kernel);
		ann_uint(p, "dropped_sink", r->dropped_sink);
		if (r->exit_probes) {
			ann_uint(p, "unwound", r->unwound);
			ann_uint(p, "untracked", r->untracked);
			ann_uint(p, "running_at_exit", r->running);
			ann_uint(p, "longest_running_ns", r->running_ns);
		}
		if (r->uretprobe)
			ann_uint(p, "unpaired", r->unpaired);
		pf_packet_emit(&p->k, true, ts);
	}
	ev_start(p, TYPE_INSTANT, pf_tool_track(&p->tracks));
	ev_name(p, name, sizeof(name) - 1, true);
	ann_uint(p, "slices_unfinished", unclosed);
	ann_uint(p, "exits_without_enter", orphan_exits);
	pf_packet_emit(&p->k, true, ts);
}

void pf_flush(struct pf_out *p)
{
	if (p->in_batch) {
		pf_clocks_check(&p->clk, &p->k, false);
		p->in_batch = false;
	}
}

void pf_set_clocks(struct pf_out *p, void (*read)(void *ctx, uint64_t out[3]), void *ctx)
{
	p->clk.read = read;
	p->clk.read_ctx = ctx;
}

int pf_open(struct pf_out *p, struct outbuf *o, struct err *e)
{
	uint64_t c[3];

	p->k.o = o;
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
	pf_intern_free(&p->names);
	pf_intern_free(&p->ann_names);
	pf_intern_free(&p->strings);
	pf_tracks_free(&p->tracks);
}
