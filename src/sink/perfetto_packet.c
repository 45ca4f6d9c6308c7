/* perfetto_packet.c — see perfetto_packet.h. */
#include "sink/perfetto_packet.h"

#include "sink/perfetto_proto.h"

void pf_packet_start(struct pf_packet *k)
{
	k->pkt.len = 0;
	k->ev.len = 0;
	k->interned.len = 0;
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

void pf_packet_emit(struct pf_packet *k, bool has_ts, uint64_t ts)
{
	struct wire_buf *w = &k->pkt;

	if (has_ts) {
		wire_put_uint_field(w, TP_TIMESTAMP, ts);
		if (ts > k->last_mono)
			k->last_mono = ts;
	}
	wire_put_uint_field(w, TP_SEQ_ID, PF_SEQ_ID);
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
}
