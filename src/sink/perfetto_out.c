#include "sink/perfetto_out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/grow.h"
#include "sink/stack_out.h"

/* Field numbers (protos/perfetto/trace/...). */
enum {
	TRACE_PACKET = 1,
	/* TracePacket */
	TP_TIMESTAMP = 8,
	TP_SEQ_ID = 10,
	TP_TRACK_EVENT = 11,
	TP_INTERNED_DATA = 12,
	TP_SEQUENCE_FLAGS = 13,
	TP_CLOCK_SNAPSHOT = 6,
	TP_DEFAULTS = 59,
	TP_TRACK_DESCRIPTOR = 60,
	DEFAULTS_CLOCK_ID = 58,
	SEQ_CLEARED = 1,
	SEQ_NEEDS_STATE = 2,
	/* ClockSnapshot */
	CS_CLOCKS = 1,
	CS_CLOCK_ID = 1,
	CS_CLOCK_TS = 2,
	/* TrackDescriptor */
	TD_UUID = 1,
	TD_NAME = 2,
	TD_PROCESS = 3,
	TD_THREAD = 4,
	TD_PARENT = 5,
	TD_COUNTER = 8,
	PD_PID = 1,
	PD_NAME = 6,
	THD_PID = 1,
	THD_TID = 2,
	THD_NAME = 5,
	/* TrackEvent */
	TE_DEBUG = 4,
	TE_TYPE = 9,
	TE_NAME_IID = 10,
	TE_TRACK = 11,
	TE_NAME = 23,
	TE_COUNTER_VALUE = 30,
	TE_CALLSTACK = 55,
	CALLSTACK_FRAMES = 1,
	FRAME_FUNCTION = 1,
	FRAME_SOURCE = 2,
	FRAME_LINE = 3,
	TYPE_BEGIN = 1,
	TYPE_END = 2,
	TYPE_INSTANT = 3,
	TYPE_COUNTER = 4,
	/* DebugAnnotation */
	DA_NAME_IID = 1,
	DA_BOOL = 2,
	DA_UINT = 3,
	DA_INT = 4,
	DA_DOUBLE = 5,
	DA_STRING = 6,
	DA_POINTER = 7,
	DA_NAME = 10,
	DA_ARRAY = 12,
	DA_STRING_IID = 17,
	/* InternedData */
	ID_EVENT_NAMES = 2,
	ID_ANN_NAMES = 3,
	ID_STRINGS = 29,
	IS_IID = 1,
	IS_NAME = 2,
};

#define SEQ_ID 1
#define PF_UUID_MASK ((1ull << 35) - 1)
/* String fields up to this long are interned (names, paths, method names
 * repeat); longer ones are written inline. */
#define PF_INTERN_STRING_MAX 128

enum track_kind { TK_TOOL = 1, TK_PROCESS, TK_THREAD, TK_ASYNC, TK_COUNTER };

struct pf_istr {
	uint64_t hash;
	uint64_t iid;            /* 0: empty slot */
	char *s;
	size_t n;
};

struct pf_track {
	uint64_t uuid;           /* 0: empty slot */
	uint32_t name_hash;
	uint32_t open_sections;  /* section slices begun and not ended (closed at exit) */
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static uint64_t hash_bytes(const void *p, size_t n, uint64_t h)
{
	const unsigned char *c = p;

	h ^= 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 1099511628211ull;
	return h;
}

/* ---- interning ---- */

static bool intern_grow(struct pf_intern *t)
{
	size_t cap;
	struct pf_istr *tab;

	if (grow_cap(t->cap, t->cap + 1, 256, sizeof(*tab), &cap) < 0 ||
	    !(tab = calloc(cap, sizeof(*tab))))
		return false;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->tab[i].iid)
			continue;
		size_t j = (size_t)t->tab[i].hash & (cap - 1);
		while (tab[j].iid)
			j = (j + 1) & (cap - 1);
		tab[j] = t->tab[i];
	}
	free(t->tab);
	t->tab = tab;
	t->cap = cap;
	return true;
}

static void intern_free(struct pf_intern *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->tab[i].s);
	free(t->tab);
	memset(t, 0, sizeof(*t));
}

/* The iid of s; a new one is added to p->interned under field `table`.
 * 0 when the table is full (or memory ran out): write the name inline. */
static uint64_t intern(struct pf_out *p, struct pf_intern *t, uint32_t table, const char *s,
		       size_t n)
{
	uint64_t h = hash_bytes(s, n, table);
	size_t i;

	if (t->cap) {
		for (i = (size_t)h & (t->cap - 1); t->tab[i].iid; i = (i + 1) & (t->cap - 1))
			if (t->tab[i].hash == h && t->tab[i].n == n && !memcmp(t->tab[i].s, s, n))
				return t->tab[i].iid;
	}
	if (t->used >= PF_MAX_INTERNED || ((t->used + 1) * 2 > t->cap && !intern_grow(t)))
		return 0;
	char *copy = malloc(n ? n : 1);
	if (!copy)
		return 0;
	memcpy(copy, s, n);
	for (i = (size_t)h & (t->cap - 1); t->tab[i].iid; i = (i + 1) & (t->cap - 1))
		;
	t->tab[i] = (struct pf_istr){ .hash = h, .iid = ++t->used, .s = copy, .n = n };
	size_t at = wire_open(&p->interned, table);
	wire_put_uint_field(&p->interned, IS_IID, t->tab[i].iid);
	wire_put_len_field(&p->interned, IS_NAME, s, n);
	wire_close(&p->interned, at);
	return t->tab[i].iid;
}

/* intern() for a string that never changes at its address. */
static uint64_t intern_stable(struct pf_out *p, struct pf_intern *t, uint32_t table,
			      const char *s, size_t n)
{
	struct pf_ptr_iid *c = &p->ptr_cache[((uintptr_t)s >> 3) % PF_PTR_CACHE];

	if (c->ptr == s && c->n == n && c->table == table)
		return c->iid;
	uint64_t iid = intern(p, t, table, s, n);
	if (iid)
		*c = (struct pf_ptr_iid){ .ptr = s, .n = n, .table = table, .iid = iid };
	return iid;
}

/* ---- packets ---- */

static void packet_start(struct pf_out *p)
{
	p->pkt.len = 0;
	p->ev.len = 0;
	p->interned.len = 0;
}

/* The packet (with what was interned for it and its track event, if any)
 * as one Trace.packet into the output. */
static void packet_emit(struct pf_out *p, bool has_ts, uint64_t ts)
{
	struct wire_buf *w = &p->pkt;
	uint8_t head[11];
	size_t n = 1;

	if (has_ts) {
		wire_put_uint_field(w, TP_TIMESTAMP, ts);
		if (ts > p->last_mono)
			p->last_mono = ts;
	}
	wire_put_uint_field(w, TP_SEQ_ID, SEQ_ID);
	if (p->ev.len || p->interned.len)
		wire_put_uint_field(w, TP_SEQUENCE_FLAGS, SEQ_NEEDS_STATE);
	if (p->interned.len)
		wire_put_len_field(w, TP_INTERNED_DATA, p->interned.p, p->interned.len);
	if (p->ev.len)
		wire_put_len_field(w, TP_TRACK_EVENT, p->ev.p, p->ev.len);
	if (w->oom || p->ev.oom || p->interned.oom) {
		/* memory ran out: the packet is left out whole (never half of one) */
		w->oom = p->ev.oom = p->interned.oom = false;
		return;
	}
	head[0] = (TRACE_PACKET << 3) | WT_LEN;
	for (uint64_t v = w->len;; v >>= 7) {
		head[n++] = (uint8_t)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
		if (!(v >> 7))
			break;
	}
	outbuf_put(p->o, head, n);
	outbuf_put(p->o, w->p, w->len);
}

static void read_clocks(struct pf_out *p, uint64_t c[3])
{
	if (p->read_clocks) {
		p->read_clocks(p->read_clocks_ctx, c);
		return;
	}
	int64_t m1 = clock_ns(CLOCK_MONOTONIC);
	int64_t b = clock_ns(CLOCK_BOOTTIME);
	int64_t r = clock_ns(CLOCK_REALTIME);
	int64_t m2 = clock_ns(CLOCK_MONOTONIC);

	c[0] = (uint64_t)(m1 + (m2 - m1) / 2);
	c[1] = (uint64_t)b;
	c[2] = (uint64_t)r;
}

static void put_clock(struct wire_buf *w, uint32_t id, uint64_t ts)
{
	size_t at = wire_open(w, CS_CLOCKS);

	wire_put_uint_field(w, CS_CLOCK_ID, id);
	wire_put_uint_field(w, CS_CLOCK_TS, ts);
	wire_close(w, at);
}

/* A ClockSnapshot packet: MONOTONIC and BOOTTIME, and REALTIME when known. */
static void snapshot(struct pf_out *p, uint64_t mono, uint64_t boot, const uint64_t *real,
		     bool first)
{
	struct wire_buf *w = &p->pkt;

	packet_start(p);
	if (first) {
		size_t d;
		wire_put_uint_field(w, TP_SEQ_ID, SEQ_ID);
		wire_put_uint_field(w, TP_SEQUENCE_FLAGS, SEQ_CLEARED);
		d = wire_open(w, TP_DEFAULTS);
		wire_put_uint_field(w, DEFAULTS_CLOCK_ID, PF_CLOCK_MONOTONIC);
		wire_close(w, d);
	}
	size_t at = wire_open(w, TP_CLOCK_SNAPSHOT);
	put_clock(w, PF_CLOCK_MONOTONIC, mono);
	put_clock(w, PF_CLOCK_BOOTTIME, boot);
	if (real)
		put_clock(w, PF_CLOCK_REALTIME, *real);
	wire_close(w, at);
	if (first) {
		/* the sequence's first packet is written as is (no ts, no NEEDS flag) */
		uint8_t head[11];
		size_t n = 1;
		head[0] = (TRACE_PACKET << 3) | WT_LEN;
		for (uint64_t v = w->len;; v >>= 7) {
			head[n++] = (uint8_t)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
			if (!(v >> 7))
				break;
		}
		outbuf_put(p->o, head, n);
		outbuf_put(p->o, w->p, w->len);
	} else {
		packet_emit(p, false, 0);
	}
	p->clk.snap_off = (int64_t)(boot - mono);
	p->clk.snap_mono = mono;
	p->snapshots++;
}

/* Reads the clocks; a snapshot when the offset moved or one is due. */
static void check_clocks(struct pf_out *p, bool force)
{
	uint64_t c[3];
	int64_t off;

	read_clocks(p, c);
	off = (int64_t)(c[1] - c[0]);
	if (off - p->clk.snap_off > PF_OFFSET_JUMP_NS) {
		/* BOOTTIME ran on while MONOTONIC stood still (a suspend) since the last
		 * reading: the new offset holds from just after it. */
		uint64_t m = p->clk.checked_mono + 1;
		snapshot(p, m, m + (uint64_t)off, NULL, false);
		snapshot(p, c[0], c[1], &c[2], false);
	} else if (force || p->clk.snap_off - off > PF_OFFSET_JUMP_NS ||
		   c[0] - p->clk.snap_mono >= PF_SNAPSHOT_PERIOD_NS) {
		snapshot(p, c[0], c[1], &c[2], false);
	}
	p->clk.checked_mono = c[0];
}

/* ---- tracks ---- */

static uint64_t track_uuid(const struct pf_out *p, enum track_kind k, uint64_t key)
{
	/* 35 bits: 5 bytes in every event, and still unlike another run's
	 * tracks in a merged timeline but by a 1 in 2^35 chance */
	uint64_t u = mix64(p->uuid_base ^ mix64(((uint64_t)k << 56) ^ key)) & PF_UUID_MASK;
	return u ? u : 1;
}

static bool tracks_grow(struct pf_out *p)
{
	size_t cap;
	struct pf_track *tab;

	if (grow_cap(p->tcap, p->tcap + 1, 256, sizeof(*tab), &cap) < 0 ||
	    !(tab = calloc(cap, sizeof(*tab))))
		return false;
	for (size_t i = 0; i < p->tcap; i++) {
		if (!p->tracks[i].uuid)
			continue;
		size_t j = (size_t)p->tracks[i].uuid & (cap - 1);
		while (tab[j].uuid)
			j = (j + 1) & (cap - 1);
		tab[j] = p->tracks[i];
	}
	free(p->tracks);
	p->tracks = tab;
	p->tcap = cap;
	return true;
}

/* True when uuid needs describing (new, or its name hash changed); records
 * it.  Without memory every use describes it again (correct, larger). */
static bool track_needs(struct pf_out *p, uint64_t uuid, uint32_t name_hash)
{
	size_t i;

	if ((p->tused + 1) * 2 > p->tcap && !tracks_grow(p))
		return true;
	for (i = (size_t)uuid & (p->tcap - 1); p->tracks[i].uuid; i = (i + 1) & (p->tcap - 1)) {
		if (p->tracks[i].uuid != uuid)
			continue;
		if (p->tracks[i].name_hash == name_hash)
			return false;
		p->tracks[i].name_hash = name_hash;
		return true;
	}
	p->tracks[i] = (struct pf_track){ .uuid = uuid, .name_hash = name_hash };
	p->tused++;
	return true;
}

static struct pf_track *track_find(struct pf_out *p, uint64_t uuid)
{
	if (!p->tcap)
		return NULL;
	for (size_t i = (size_t)uuid & (p->tcap - 1); p->tracks[i].uuid;
	     i = (i + 1) & (p->tcap - 1))
		if (p->tracks[i].uuid == uuid)
			return &p->tracks[i];
	return NULL;
}

/* Writes one TrackDescriptor packet; the caller fills the fields after
 * descriptor_open and calls descriptor_emit. */
static size_t descriptor_open(struct pf_out *p, uint64_t uuid, uint64_t parent)
{
	size_t at;

	packet_start(p);
	at = wire_open(&p->pkt, TP_TRACK_DESCRIPTOR);
	wire_put_uint_field(&p->pkt, TD_UUID, uuid);
	if (parent)
		wire_put_uint_field(&p->pkt, TD_PARENT, parent);
	return at;
}

static void descriptor_emit(struct pf_out *p, size_t at)
{
	wire_close(&p->pkt, at);
	packet_emit(p, false, 0);
}

static uint64_t tool_track(const struct pf_out *p)
{
	return track_uuid(p, TK_TOOL, 0);
}

static uint64_t process_track(struct pf_out *p, uint32_t pid, const char *name)
{
	uint64_t uuid = track_uuid(p, TK_PROCESS, pid);
	size_t n = name ? strlen(name) : 0;
	uint32_t h = (uint32_t)hash_bytes(name, n, 0) | 1;

	/* a name learnt later describes it again; a lost name keeps the old one */
	if (!n && track_find(p, uuid))
		return uuid;
	if (track_needs(p, uuid, h)) {
		size_t at = descriptor_open(p, uuid, 0);
		size_t pd = wire_open(&p->pkt, TD_PROCESS);
		wire_put_uint_field(&p->pkt, PD_PID, pid);
		if (n)
			wire_put_len_field(&p->pkt, PD_NAME, name, n);
		wire_close(&p->pkt, pd);
		descriptor_emit(p, at);
	}
	return uuid;
}

static uint64_t thread_track(const struct pf_out *p, uint32_t tid)
{
	return track_uuid(p, TK_THREAD, tid);
}

void pf_thread(struct pf_out *p, const struct event *ev)
{
	if (!ev->tid)
		return;
	uint64_t uuid = thread_track(p, ev->tid);
	size_t n = ev->comm ? strlen(ev->comm) : 0;
	uint32_t h = (uint32_t)hash_bytes(ev->comm, n, (uint64_t)ev->pid << 32) | 1;
	const struct pf_track *known = track_find(p, uuid);

	/* the usual case, per event: a thread seen before under the same name */
	if (known && known->name_hash == h)
		return;
	uint64_t proc = process_track(p, ev->pid, ev->process);
	if (!track_needs(p, uuid, h))
		return;
	size_t at = descriptor_open(p, uuid, proc);
	size_t td = wire_open(&p->pkt, TD_THREAD);
	wire_put_uint_field(&p->pkt, THD_PID, ev->pid);
	wire_put_uint_field(&p->pkt, THD_TID, ev->tid);
	if (n)
		wire_put_len_field(&p->pkt, THD_NAME, ev->comm, n);
	wire_close(&p->pkt, td);
	descriptor_emit(p, at);
}

/* ---- track events ---- */

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
		check_clocks(p, false);
	}
}

static void ev_start(struct pf_out *p, unsigned type, uint64_t track)
{
	packet_start(p);
	wire_put_uint_field(&p->ev, TE_TYPE, type);
	wire_put_uint_field(&p->ev, TE_TRACK, track);
}

/* stable: s lives at its address as long as the sink (not a record's bytes) */
static void ev_name(struct pf_out *p, const char *s, size_t n, bool stable)
{
	uint64_t iid = stable ? intern_stable(p, &p->names, ID_EVENT_NAMES, s, n)
			      : intern(p, &p->names, ID_EVENT_NAMES, s, n);

	if (iid)
		wire_put_uint_field(&p->ev, TE_NAME_IID, iid);
	else
		wire_put_len_field(&p->ev, TE_NAME, s, n);
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
	size_t at = ann_open(p, &p->ev, name);
	wire_put_uint_field(&p->ev, DA_UINT, v);
	wire_close(&p->ev, at);
}

static void ann_bool(struct pf_out *p, const char *name, bool v)
{
	size_t at = ann_open(p, &p->ev, name);
	wire_put_uint_field(&p->ev, DA_BOOL, v);
	wire_close(&p->ev, at);
}

static void ann_str(struct pf_out *p, const char *name, const char *s, size_t n, bool interned)
{
	size_t at = ann_open(p, &p->ev, name);
	uint64_t iid = interned ? intern_stable(p, &p->strings, ID_STRINGS, s, n) : 0;

	if (iid)
		wire_put_uint_field(&p->ev, DA_STRING_IID, iid);
	else
		wire_put_len_field(&p->ev, DA_STRING, s, n);
	wire_close(&p->ev, at);
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
	struct wire_buf *w = &p->ev;
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
	struct wire_buf *w = &p->ev;
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
	return ev->tid ? thread_track(p, ev->tid) : tool_track(p);
}

void pf_instant(struct pf_out *p, const struct event *ev, struct label l)
{
	uint64_t ts = pf_mono(p, ev);

	batch(p);
	ev_start(p, TYPE_INSTANT, event_track(p, ev));
	ev_details(p, ev, l);
	packet_emit(p, true, ts);
}

void pf_complete(struct pf_out *p, const struct event *ev, struct label l)
{
	uint64_t end = pf_mono(p, ev);
	uint64_t dur = ev->duration_ns <= end ? ev->duration_ns : end;
	uint64_t track = event_track(p, ev);

	batch(p);
	ev_start(p, TYPE_BEGIN, track);
	ev_details(p, ev, l);
	packet_emit(p, true, end - dur);
	ev_start(p, TYPE_END, track);
	packet_emit(p, true, end);
}

void pf_begin(struct pf_out *p, const struct event *ev, struct label l)
{
	uint64_t ts = pf_mono(p, ev);

	batch(p);
	ev_start(p, TYPE_BEGIN, event_track(p, ev));
	ev_details(p, ev, l);
	packet_emit(p, true, ts);
}

void pf_end(struct pf_out *p, uint32_t pid, uint32_t tid, uint64_t mono, bool unfinished)
{
	(void)pid;
	batch(p);
	ev_start(p, TYPE_END, tid ? thread_track(p, tid) : tool_track(p));
	if (unfinished)
		ann_bool(p, "unfinished", true);
	packet_emit(p, true, mono);
}

void pf_drop(struct pf_out *p, const struct event *ev)
{
	static const char dropped[] = "records dropped", lost[] = "records lost";
	uint64_t ts = pf_mono(p, ev);

	batch(p);
	ev_start(p, TYPE_INSTANT, tool_track(p));
	if (ev->kind == EVENT_DROP)
		ev_name(p, dropped, sizeof(dropped) - 1, true);
	else
		ev_name(p, lost, sizeof(lost) - 1, true);
	ann_uint(p, "count", ev->n_lost);
	if (ev->probe && ev->probe->map)
		ann_str(p, "map", ev->probe->map, strlen(ev->probe->map), true);
	if (ev->probe && ev->probe->method)
		ann_str(p, "probe", ev->probe->method, strlen(ev->probe->method), true);
	packet_emit(p, true, ts);
}

/* A counter track `name` of process pid, or of the tool (pid 0). */
static uint64_t counter_track(struct pf_out *p, uint32_t pid, const char *process,
			      const char *name, size_t n)
{
	uint64_t uuid = track_uuid(p, TK_COUNTER, hash_bytes(name, n, pid));

	if (track_needs(p, uuid, 1)) {
		uint64_t parent = pid ? process_track(p, pid, process) : tool_track(p);
		size_t at = descriptor_open(p, uuid, parent);
		wire_put_len_field(&p->pkt, TD_NAME, name, n);
		size_t cd = wire_open(&p->pkt, TD_COUNTER);
		wire_close(&p->pkt, cd);
		descriptor_emit(p, at);
	}
	return uuid;
}

void pf_counter(struct pf_out *p, const struct counter_sample *c)
{
	uint64_t track = counter_track(p, c->pid, c->process, c->name, strlen(c->name));

	batch(p);
	ev_start(p, TYPE_COUNTER, track);
	wire_put_tag(&p->ev, TE_COUNTER_VALUE, WT_VARINT);
	wire_put_varint(&p->ev, (uint64_t)c->value);
	packet_emit(p, true, c->mono_ns);
}

/* An async section's process-scoped track, keyed by (pid, name, cookie),
 * described at its first use. */
static uint64_t async_track(struct pf_out *p, enum track_kind k, const struct event *ev,
			    const struct section_call *c)
{
	uint64_t key = mix64(hash_bytes(c->name, c->name_len, ev->pid) ^ (uint64_t)c->value);
	uint64_t uuid = track_uuid(p, k, key);

	if (track_needs(p, uuid, 1)) {
		uint64_t proc = process_track(p, ev->pid, ev->process);
		size_t at = descriptor_open(p, uuid, proc);
		wire_put_len_field(&p->pkt, TD_NAME, c->name, c->name_len);
		descriptor_emit(p, at);
	}
	return uuid;
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
		tr = track_find(p, track);
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
		track = async_track(p, TK_ASYNC, ev, c);
		tr = track_find(p, track);
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
		track = counter_track(p, ev->pid, ev->process, c->name, c->name_len);
		ev_start(p, TYPE_COUNTER, track);
		wire_put_tag(&p->ev, TE_COUNTER_VALUE, WT_VARINT);
		wire_put_varint(&p->ev, (uint64_t)c->value);
		break;
	default:
		return;
	}
	packet_emit(p, true, ts);
}

/* Sections still open at exit end at the last timestamp, marked. */
static void close_sections(struct pf_out *p)
{
	for (size_t i = 0; i < p->tcap; i++) {
		for (; p->tracks[i].uuid && p->tracks[i].open_sections;
		     p->tracks[i].open_sections--) {
			ev_start(p, TYPE_END, p->tracks[i].uuid);
			ann_bool(p, "unfinished", true);
			packet_emit(p, true, p->last_mono);
		}
	}
}

void pf_summary(struct pf_out *p, const struct probe_stats *rows, size_t n, uint64_t unclosed,
		uint64_t orphan_exits)
{
	static const char name[] = "uprobestats summary";
	uint64_t ts;

	close_sections(p);
	ts = p->last_mono;

	for (size_t i = 0; i < n; i++) {
		const struct probe_stats *r = &rows[i];
		struct label l = probe_label(r->probe);

		ev_start(p, TYPE_INSTANT, tool_track(p));
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
		packet_emit(p, true, ts);
	}
	ev_start(p, TYPE_INSTANT, tool_track(p));
	ev_name(p, name, sizeof(name) - 1, true);
	ann_uint(p, "slices_unfinished", unclosed);
	ann_uint(p, "exits_without_enter", orphan_exits);
	packet_emit(p, true, ts);
}

void pf_flush(struct pf_out *p)
{
	if (p->in_batch) {
		check_clocks(p, false);
		p->in_batch = false;
	}
}

int pf_open(struct pf_out *p, struct outbuf *o, struct err *e)
{
	uint64_t c[3];
	static const char tool[] = "uprobestats";

	p->o = o;
	read_clocks(p, c);
	/* track uuids of this run, unlike those of other files of one timeline */
	p->uuid_base = mix64(((uint64_t)getpid() << 32) ^ c[0] ^ c[2]);
	snapshot(p, c[0], c[1], &c[2], true);
	p->clk.checked_mono = c[0];
	size_t at = descriptor_open(p, tool_track(p), 0);
	wire_put_len_field(&p->pkt, TD_NAME, tool, sizeof(tool) - 1);
	descriptor_emit(p, at);
	if (p->pkt.oom)
		return err_set(e, -ENOMEM, "trace: out of memory");
	return 0;
}

void pf_close(struct pf_out *p)
{
	check_clocks(p, true);
	wire_buf_free(&p->pkt);
	wire_buf_free(&p->ev);
	wire_buf_free(&p->interned);
	intern_free(&p->names);
	intern_free(&p->ann_names);
	intern_free(&p->strings);
	free(p->tracks);
	p->tracks = NULL;
	p->tcap = p->tused = 0;
}
