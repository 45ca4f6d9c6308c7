/* perfetto_packet.h — one TracePacket at a time into the trace's output
 * buffer: the packet's own fields in `pkt`, the InternedData its track event
 * first uses in `interned`, the TrackEvent in `ev`; emitted as one
 * `Trace.packet` (length-prefixed), or left out whole when memory ran out. */
#ifndef UPROBESTATS_SINK_PERFETTO_PACKET_H
#define UPROBESTATS_SINK_PERFETTO_PACKET_H

#include <stdbool.h>
#include <stdint.h>

#include "common/wire.h"
#include "sink/perfetto_intern.h"
#include "vocab/outbuf.h"

/* One packet sequence (trusted_packet_sequence_id) and the incremental
 * state trace processor keeps for it alone: its interned data, its
 * incremental clock and its TracePacketDefaults.  Sequence 1, the tool's,
 * carries the clock snapshots, the track descriptors and the events of
 * tracks without a sequence of their own; a busy track (perfetto_track.h)
 * gets its own, whose defaults name it (track_event_defaults.track_uuid),
 * so its events leave their track_uuid out.  A sequence's first packet
 * clears its state, sets its defaults and ties its incremental clock to
 * MONOTONIC; it is written before the sequence's first event. */
/* Incremental clocks a sequence defines at most: 64 (its default) and up to
 * seven more (65 to 71), each made when a timestamp comes that none of the
 * others can take (see PF_CLOCK_INCREMENTAL). */
#define PF_SEQ_CLOCKS 8

struct pf_seq {
	uint32_t id;
	bool started;            /* its first packet written */
	uint8_t n_clocks;        /* incremental clocks defined: 64 to 64 + n_clocks - 1 */
	uint64_t track;          /* its default track (0: none, sequence 1) */
	uint64_t clock_last[PF_SEQ_CLOCKS]; /* MONOTONIC of each clock's last value */
	struct pf_tables t;      /* its interned data */
};

/* Sequences of their own at most (ids 2 to PF_MAX_SEQS + 1: one byte each);
 * the tracks past it stay on sequence 1. */
#define PF_MAX_SEQS 126

struct pf_packet {
	struct outbuf *o;
	struct wire_buf pkt, ev, interned;   /* scratch: packet, track event, new names */
	uint64_t last_mono;                  /* latest timestamp written */
	struct pf_seq *seq;                  /* the packet's sequence (main, unless an event's) */
	struct pf_seq main;                  /* sequence 1 */
	struct pf_seq *own[PF_MAX_SEQS];     /* the others, by id - 2 */
	size_t n_own;
	size_t interned_total;               /* entries in every sequence's tables */
};

/* Sequence 1 (before the first packet). */
void pf_packet_init(struct pf_packet *k, struct outbuf *o);
/* Empties the scratch buffers for the next packet, on sequence 1. */
void pf_packet_start(struct pf_packet *k);
/* A new sequence whose default track is track; NULL when there are
 * PF_MAX_SEQS already or memory ran out. */
struct pf_seq *pf_seq_new(struct pf_packet *k, uint64_t track);
/* A timestamp (MONOTONIC ns) is written as the delta from the last value of
 * one of the sequence's incremental clocks: the default one
 * (PF_CLOCK_INCREMENTAL) when it can, else another named by the packet's
 * timestamp_clock_id, whichever takes the fewest bytes.  A timestamp earlier
 * than every clock's last value (a uretprobe's slice is written when it
 * returns, so an enclosing call's begin comes after the ends of the calls it
 * made) gets a new clock, tied to MONOTONIC at that timestamp by a
 * ClockSnapshot of its own on the sequence: calls at one depth of a thread
 * then each find the clock the one before them moved.  With PF_SEQ_CLOCKS
 * made, such a timestamp is written as itself with timestamp_clock_id
 * MONOTONIC, which leaves every incremental clock where it was.  Trace
 * processor keeps one last value per clock (ClockSynchronizer's
 * ClockDomain), and a snapshot's clocks are checked for going back only
 * against snapshots of the same clock set, so each new clock's single
 * snapshot may name any MONOTONIC time. */
#define PF_CLOCK_INCREMENTAL 64

/* The packet with its timestamp (has_ts), its sequence's id, the
 * NEEDS_INCREMENTAL_STATE flag when it has interned data or a track event,
 * the interned data and the track event, into the output. */
void pf_packet_emit(struct pf_packet *k, bool has_ts, uint64_t ts);
/* The same for a track event encoded by the caller (te[0, te_len)), written
 * straight into the output's buffer: the fast path of every event. */
void pf_packet_emit_event(struct pf_packet *k, const uint8_t *te, size_t te_len, bool has_ts,
			  uint64_t ts);
/* The packet's fields as they are (the sequence's first packet). */
void pf_packet_emit_plain(struct pf_packet *k);
/* Frees every sequence (the outbuf is the caller's). */
void pf_packet_free(struct pf_packet *k);

#endif
