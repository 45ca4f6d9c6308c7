/* perfetto_packet.c — see perfetto_packet.h. */
#include "sink/perfetto_packet.h"

#include <stdlib.h>

#include "sink/perfetto_enc.h"
#include "sink/perfetto_proto.h"

/* Larger packets take the checked path (outbuf_put writes one larger than
 * the buffer through). */
#define PF_FAST_PACKET_MAX 65536
#define PF_MONOTONIC 3  /* the builtin clock's id (perfetto_clock.h) */

void pf_packet_init(struct pf_packet *k, struct outbuf *o)
{
	k->o = o;
	k->main.id = PF_SEQ_ID;
	k->main.started = true;  /* its first packet is perfetto_clock's */
	pf_tables_init(&k->main.t, &k->interned_total);
	k->seq = &k->main;
}

void pf_packet_start(struct pf_packet *k)
{
	k->pkt.len = 0;
	k->ev.len = 0;
	k->interned.len = 0;
	k->seq = &k->main;
}

struct pf_seq *pf_seq_new(struct pf_packet *k, uint64_t track)
{
	struct pf_seq *s;

	if (k->n_own >= PF_MAX_SEQS || !(s = calloc(1, sizeof(*s))))
		return NULL;
	s->id = (uint32_t)(PF_SEQ_ID + 1 + k->n_own);
	s->track = track;
	pf_tables_init(&s->t, &k->interned_total);
	k->own[k->n_own++] = s;
	return s;
}

/* pkt as one Trace.packet: its tag and length, then its bytes. */
static void put_packet(struct pf_packet *k)
{
	struct wire_buf *w = &k->pkt;
	uint8_t head[11];
	size_t n = 1;

	head[0] = (TRACE_PACKET << 3) | WT_LEN;
	for (uint64_t v = w->len;; v >>= 7) {
		head[n++] = (uint8_t)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
		if (!(v >> 7))
			break;
	}
	outbuf_put(k->o, head, n);
	outbuf_put(k->o, w->p, w->len);
}

/* How one timestamp is written: as the delta from the last value of the
 * sequence's incremental clock 64 + clock, or (clock < 0) as MONOTONIC
 * itself. */
struct pf_stamp {
	int clock;
	uint64_t value;
};

#define TS_CLOCK_ID_LEN 3  /* timestamp_clock_id: a two-byte tag, a one-byte id */

static size_t stamp_len(struct pf_stamp st)
{
	return 1 + pe_varint_len(st.value) + (st.clock ? TS_CLOCK_ID_LEN : 0);
}

static uint8_t *put_stamp(uint8_t *w, struct pf_stamp st)
{
	w = pe_uint(w, TP_TIMESTAMP, st.value);
	if (st.clock < 0)
		return pe_uint(w, TP_CLOCK_ID, PF_MONOTONIC);
	if (st.clock > 0)
		return pe_uint(w, TP_CLOCK_ID, PF_CLOCK_INCREMENTAL + (uint32_t)st.clock);
	return w;  /* the sequence's default clock */
}

/* The sequence's cheapest way to write ts: the clock at or before it whose
 * delta (and clock id, if not the default) takes the fewest bytes, or
 * MONOTONIC itself when that takes fewer; *fits: some clock could. */
static struct pf_stamp cheapest_stamp(const struct pf_seq *s, uint64_t ts, bool *fits)
{
	struct pf_stamp best = { -1, ts };
	size_t best_len = stamp_len(best);

	*fits = false;
	for (int c = 0; c < s->n_clocks; c++) {
		struct pf_stamp st = { c, ts - s->clock_last[c] };

		if (s->clock_last[c] > ts)
			continue;
		*fits = true;
		if (stamp_len(st) < best_len) {
			best = st;
			best_len = stamp_len(st);
		}
	}
	return best;
}

/* Clock 64 + c of sequence s made at MONOTONIC ts: a ClockSnapshot packet of
 * it and MONOTONIC, both at ts (every length here is below 128 bytes). */
static void put_new_clock(struct pf_packet *k, const struct pf_seq *s, unsigned c, uint64_t ts)
{
	uint8_t b[64], *p = b, *pkt, *cs, *clk;

	p = pe_open(p, TRACE_PACKET, &pkt);
	p = pe_uint(p, TP_SEQ_ID, s->id);
	p = pe_open(p, TP_CLOCK_SNAPSHOT, &cs);
	p = pe_open(p, CS_CLOCKS, &clk);
	p = pe_uint(p, CS_CLOCK_ID, PF_CLOCK_INCREMENTAL + c);
	p = pe_uint(p, CS_CLOCK_TS, ts);
	p = pe_uint(p, CS_CLOCK_INCREMENTAL, 1);
	p = pe_close(clk, p);
	p = pe_open(p, CS_CLOCKS, &clk);
	p = pe_uint(p, CS_CLOCK_ID, PF_MONOTONIC);
	p = pe_uint(p, CS_CLOCK_TS, ts);
	p = pe_close(clk, p);
	p = pe_close(cs, p);
	p = pe_close(pkt, p);
	outbuf_put(k->o, b, (size_t)(p - b));
}

/* How the packet about to be written stamps ts on its sequence: a clock
 * made for it (its snapshot written first) when no clock is at or before
 * ts and the sequence may make one more. */
static struct pf_stamp stamp_for(struct pf_packet *k, uint64_t ts)
{
	struct pf_seq *s = k->seq;
	bool fits;
	struct pf_stamp st = cheapest_stamp(s, ts, &fits);

	if (!fits && s->n_clocks < PF_SEQ_CLOCKS) {
		put_new_clock(k, s, s->n_clocks, ts);
		s->clock_last[s->n_clocks] = ts;
		st = (struct pf_stamp){ s->n_clocks++, 0 };
	}
	return st;
}

/* A timestamp written: the clocks move on. */
static void stamp_written(struct pf_packet *k, struct pf_stamp st, uint64_t ts)
{
	if (ts > k->last_mono)
		k->last_mono = ts;
	if (st.clock >= 0)
		k->seq->clock_last[st.clock] = ts;
}

/* A new sequence's first packet, before its first event (at MONOTONIC
 * mono): it clears the sequence's incremental state, sets its defaults
 * (the incremental clock, the default track) and ties the incremental
 * clock to MONOTONIC at mono — in one packet: trace processor reads a
 * packet's clear, then its defaults, then its snapshot.  pkt is the
 * scratch (empty before an event's packet; the event's own are left
 * alone). */
static void seq_first_packet(struct pf_packet *k, struct pf_seq *s, uint64_t mono)
{
	struct wire_buf *w = &k->pkt;
	size_t def, ted, cs, c;

	wire_put_uint_field(w, TP_SEQ_ID, s->id);
	wire_put_uint_field(w, TP_SEQUENCE_FLAGS, SEQ_CLEARED);
	def = wire_open(w, TP_DEFAULTS);
	wire_put_uint_field(w, DEFAULTS_CLOCK_ID, PF_CLOCK_INCREMENTAL);
	ted = wire_open(w, DEFAULTS_TRACK_EVENT);
	wire_put_uint_field(w, TED_TRACK_UUID, s->track);
	wire_close(w, ted);
	wire_close(w, def);
	cs = wire_open(w, TP_CLOCK_SNAPSHOT);
	for (unsigned i = 0; i < 2; i++) {
		c = wire_open(w, CS_CLOCKS);
		wire_put_uint_field(w, CS_CLOCK_ID, i ? PF_MONOTONIC : PF_CLOCK_INCREMENTAL);
		wire_put_uint_field(w, CS_CLOCK_TS, mono);
		if (!i)
			wire_put_uint_field(w, CS_CLOCK_INCREMENTAL, 1);
		wire_close(w, c);
	}
	wire_close(w, cs);
	if (!w->oom)
		put_packet(k);
	w->len = 0;
	w->oom = false;
	s->clock_last[0] = mono;
	s->n_clocks = 1;
	s->started = true;
}

/* pf_packet_emit with the timestamp's way chosen (st, when has_ts). */
static void emit_stamped(struct pf_packet *k, bool has_ts, struct pf_stamp st, uint64_t ts)
{
	struct wire_buf *w = &k->pkt;

	if (has_ts) {
		uint8_t b[2 * PE_FIELD_MAX];
		wire_put_bytes(w, b, (size_t)(put_stamp(b, st) - b));
	}
	wire_put_uint_field(w, TP_SEQ_ID, k->seq->id);
	if (k->ev.len || k->interned.len)
		wire_put_uint_field(w, TP_SEQUENCE_FLAGS, SEQ_NEEDS_STATE);
	if (k->interned.len)
		wire_put_len_field(w, TP_INTERNED_DATA, k->interned.p, k->interned.len);
	if (k->ev.len)
		wire_put_len_field(w, TP_TRACK_EVENT, k->ev.p, k->ev.len);
	if (w->oom || k->ev.oom || k->interned.oom) {
		/* memory ran out: the packet is left out whole (never half of one) */
		w->oom = k->ev.oom = k->interned.oom = false;
		return;
	}
	put_packet(k);
	if (has_ts)
		stamp_written(k, st, ts);
}

void pf_packet_emit(struct pf_packet *k, bool has_ts, uint64_t ts)
{
	struct pf_stamp st = { 0, 0 };

	if (has_ts)
		st = stamp_for(k, ts);
	emit_stamped(k, has_ts, st, ts);
}

void pf_packet_emit_event(struct pf_packet *k, const uint8_t *te, size_t te_len, bool has_ts,
			  uint64_t ts)
{
	const struct wire_buf *in = &k->interned;
	size_t body = 1 + pe_varint_len(k->seq->id) + 2 + 1 + pe_varint_len(te_len) + te_len;
	struct pf_stamp st = { 0, 0 };
	uint8_t *w;

	if (!k->seq->started)
		seq_first_packet(k, k->seq, has_ts ? ts : k->last_mono);
	if (has_ts) {
		st = stamp_for(k, ts);
		body += stamp_len(st);
	}
	if (in->len)
		body += 1 + pe_varint_len(in->len) + in->len;
	if (in->oom || body > PF_FAST_PACKET_MAX ||
	    !(w = (uint8_t *)outbuf_reserve(k->o, 1 + PE_VARINT_MAX + body))) {
		/* no memory for a name, or a packet the buffer cannot hold now: the
		 * checked path (which grows the buffer, or leaves the packet out) */
		wire_put_bytes(&k->ev, te, te_len);
		emit_stamped(k, has_ts, st, ts);
		return;
	}
	*w++ = (TRACE_PACKET << 3) | WT_LEN;
	w = pe_varint(w, body);
	if (has_ts)
		w = put_stamp(w, st);
	w = pe_uint(w, TP_SEQ_ID, k->seq->id);
	w = pe_uint(w, TP_SEQUENCE_FLAGS, SEQ_NEEDS_STATE);
	if (in->len)
		w = pe_bytes(w, TP_INTERNED_DATA, in->p, in->len);
	w = pe_bytes(w, TP_TRACK_EVENT, te, te_len);
	outbuf_commit(k->o, (char *)w);
	if (has_ts)
		stamp_written(k, st, ts);
}

void pf_packet_emit_plain(struct pf_packet *k)
{
	put_packet(k);
}

void pf_packet_free(struct pf_packet *k)
{
	wire_buf_free(&k->pkt);
	wire_buf_free(&k->ev);
	wire_buf_free(&k->interned);
	pf_tables_free(&k->main.t);
	for (size_t i = 0; i < k->n_own; i++) {
		pf_tables_free(&k->own[i]->t);
		free(k->own[i]);
		k->own[i] = NULL;
	}
	k->n_own = 0;
	k->seq = &k->main;
}
