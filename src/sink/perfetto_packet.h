/* perfetto_packet.h — one TracePacket at a time into the trace's output
 * buffer: the packet's own fields in `pkt`, the InternedData its track event
 * first uses in `interned`, the TrackEvent in `ev`; emitted as one
 * `Trace.packet` (length-prefixed), or left out whole when memory ran out. */
#ifndef UPROBESTATS_SINK_PERFETTO_PACKET_H
#define UPROBESTATS_SINK_PERFETTO_PACKET_H

#include <stdbool.h>
#include <stdint.h>

#include "common/wire.h"
#include "vocab/outbuf.h"

struct pf_packet {
	struct outbuf *o;
	struct wire_buf pkt, ev, interned;   /* scratch: packet, track event, new names */
	uint64_t last_mono;                  /* latest timestamp written */
	uint64_t inc_last;                   /* MONOTONIC of the incremental clock's last one */
};

/* Empties the scratch buffers for the next packet. */
void pf_packet_start(struct pf_packet *k);
/* A timestamp (MONOTONIC ns) is written as the delta from the last one on
 * the sequence's incremental clock (PF_CLOCK_INCREMENTAL, the default), or,
 * when it is earlier than that one (a slice's begin written at its end), as
 * itself with timestamp_clock_id MONOTONIC (which leaves the incremental
 * clock where it was). */
#define PF_CLOCK_INCREMENTAL 64

/* The packet with its timestamp (has_ts), the sequence id, the
 * NEEDS_INCREMENTAL_STATE flag when it has interned data or a track event,
 * the interned data and the track event, into the output. */
void pf_packet_emit(struct pf_packet *k, bool has_ts, uint64_t ts);
/* The same for a track event encoded by the caller (te[0, te_len)), written
 * straight into the output's buffer: the fast path of every event. */
void pf_packet_emit_event(struct pf_packet *k, const uint8_t *te, size_t te_len, bool has_ts,
			  uint64_t ts);
/* The packet's fields as they are (the sequence's first packet). */
void pf_packet_emit_plain(struct pf_packet *k);
void pf_packet_free(struct pf_packet *k);

#endif
