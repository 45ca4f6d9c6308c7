/* perfetto_clock.c — see perfetto_clock.h. */
#include "sink/perfetto_clock.h"

#include "common/clock.h"
#include "vocab/event.h"
#include "sink/perfetto_proto.h"

void pf_clocks_read(const struct pf_clocks *c, uint64_t out[3])
{
	if (c->read) {
		c->read(c->read_ctx, out);
		return;
	}
	int64_t m1 = clock_ns(CLOCK_MONOTONIC);
	int64_t b = clock_ns(CLOCK_BOOTTIME);
	int64_t r = clock_ns(CLOCK_REALTIME);
	int64_t m2 = clock_ns(CLOCK_MONOTONIC);

	out[0] = (uint64_t)(m1 + (m2 - m1) / 2);
	out[1] = (uint64_t)b;
	out[2] = (uint64_t)r;
}

static void put_clock(struct wire_buf *w, uint32_t id, uint64_t ts)
{
	size_t at = wire_open(w, CS_CLOCKS);

	wire_put_uint_field(w, CS_CLOCK_ID, id);
	wire_put_uint_field(w, CS_CLOCK_TS, ts);
	wire_close(w, at);
}

/* A ClockSnapshot packet: MONOTONIC and BOOTTIME, and REALTIME when known. */
static void snapshot(struct pf_clocks *c, struct pf_packet *k, uint64_t mono, uint64_t boot,
		     const uint64_t *real, bool first)
{
	struct wire_buf *w = &k->pkt;

	pf_packet_start(k);
	if (first) {
		size_t d;
		wire_put_uint_field(w, TP_SEQ_ID, PF_SEQ_ID);
		wire_put_uint_field(w, TP_SEQUENCE_FLAGS, SEQ_CLEARED);
		d = wire_open(w, TP_DEFAULTS);
		wire_put_uint_field(w, DEFAULTS_CLOCK_ID, PF_CLOCK_INCREMENTAL);
		wire_close(w, d);
	}
	size_t at = wire_open(w, TP_CLOCK_SNAPSHOT);
	put_clock(w, PF_CLOCK_MONOTONIC, mono);
	put_clock(w, PF_CLOCK_BOOTTIME, boot);
	if (real)
		put_clock(w, PF_CLOCK_REALTIME, *real);
	wire_close(w, at);
	if (first)
		pf_packet_emit_plain(k);  /* as is: no ts, no NEEDS flag */
	else
		pf_packet_emit(k, false, 0);
	c->snap_off = (int64_t)(boot - mono);
	c->snap_mono = mono;
	c->snapshots++;
}

/* The sequence's incremental clock: at MONOTONIC mono, a snapshot of its
 * own (in one with the others, trace processor could convert MONOTONIC to
 * BOOTTIME through that snapshot alone, whatever a suspend did later). */
static void incremental_clock(struct pf_packet *k, uint64_t mono)
{
	struct wire_buf *w = &k->pkt;

	pf_packet_start(k);
	size_t at = wire_open(w, TP_CLOCK_SNAPSHOT);
	size_t cl = wire_open(w, CS_CLOCKS);
	wire_put_uint_field(w, CS_CLOCK_ID, PF_CLOCK_INCREMENTAL);
	wire_put_uint_field(w, CS_CLOCK_TS, mono);
	wire_put_uint_field(w, CS_CLOCK_INCREMENTAL, 1);
	wire_close(w, cl);
	put_clock(w, PF_CLOCK_MONOTONIC, mono);
	wire_close(w, at);
	pf_packet_emit(k, false, 0);
	k->seq->clock_last[0] = mono;
	k->seq->n_clocks = 1;
}

void pf_clocks_first(struct pf_clocks *c, struct pf_packet *k, const uint64_t now[3])
{
	snapshot(c, k, now[0], now[1], &now[2], true);
	incremental_clock(k, now[0]);
	c->checked_mono = now[0];
}

/* BOOTTIME ran on while MONOTONIC stood still since the last reading: a
 * suspend, whose new offset holds from *from: the suspend's own place where
 * it is known (a record made before it may still have been in a buffer at
 * that reading), else from just after that reading.  False when the watch
 * saw no suspend then: the offset moved by a reading's own noise, which
 * takes an ordinary snapshot. */
static bool suspended(const struct pf_clocks *c, uint64_t now, uint64_t *from)
{
	int where = c->suspend ? c->suspend->at(c->suspend->ctx, c->checked_mono, now, from) : -1;

	if (where < 0)
		*from = c->checked_mono + 1;
	return where != 0;
}

void pf_clocks_check(struct pf_clocks *c, struct pf_packet *k, bool force)
{
	uint64_t r[3], m;
	int64_t off;

	pf_clocks_read(c, r);
	off = (int64_t)(r[1] - r[0]);
	if (off - c->snap_off > PF_OFFSET_JUMP_NS && suspended(c, r[0], &m)) {
		snapshot(c, k, m, m + (uint64_t)off, NULL, false);
		snapshot(c, k, r[0], r[1], &r[2], false);
	} else if (force || off - c->snap_off > PF_OFFSET_JUMP_NS ||
		   c->snap_off - off > PF_OFFSET_JUMP_NS ||
		   r[0] - c->snap_mono >= PF_SNAPSHOT_PERIOD_NS) {
		snapshot(c, k, r[0], r[1], &r[2], false);
	}
	c->checked_mono = r[0];
}
