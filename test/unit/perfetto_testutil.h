/* perfetto_testutil.h — reading back the Perfetto files the unit tests write
 * through the trace sink (test_sink_perfetto.c, test_perfetto_clock.c): the
 * packets as the tests look at them, a faked clock, events to write. */
#ifndef UPROBESTATS_TEST_PERFETTO_TESTUTIL_H
#define UPROBESTATS_TEST_PERFETTO_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sink/trace_out.h"
#include "sink_testutil.h"
#include "vocab/event.h"

extern const struct probe_desc enter_p, exit_p, ret_p, plain, counter_p;

/* One packet as the tests look at it. */
struct pkt {
	bool has_ts, has_te, has_td, has_cs, has_interned, has_inc_cs;
	uint64_t ts, flags, seq, te_type, te_track, td_uuid, name_iid, defaults_clock;
	uint64_t defaults_track;    /* trace_packet_defaults.track_event_defaults.track_uuid */
	uint64_t raw_ts, ts_clock;  /* as written: a delta on clock 64 (ts_clock 0) or on
				     * the one ts_clock names, or MONOTONIC itself (3) */
	uint64_t cs_mono, cs_boot, cs_inc, cs_inc_flag, cs_inc_id;
	size_t n_annotations, n_frames, n_event_names;
	uint64_t callstack_iid;
	size_t n_callstacks, n_frame_defs, n_function_names;  /* InternedData entries */
};

/* The packets of b[0, len) into out (at most max), *np of them; each
 * sequence's incremental clocks added up as trace processor does. */
void read_packets(const uint8_t *b, size_t len, struct pkt *out, size_t max, size_t *np);
/* The event packets of c, in file order, at most max (*n: every packet). */
size_t event_packets(const struct capture *c, struct pkt *p, size_t np, const struct pkt **te,
		     size_t max, size_t *n);
/* A snapshot lists clocks at one instant: the i-th one in the file. */
const struct pkt *nth_snapshot(const struct pkt *p, size_t n, size_t i);

struct fake_clock {
	uint64_t mono, boot, real;
};
void fake_read(void *ctx, uint64_t out[3]);
/* A Perfetto trace into c on clk. */
void open_fake(struct capture *c, struct trace_out *t, struct fake_clock *clk);
/* A record of p at MONOTONIC mono on thread tid (pid 100) with two fields. */
struct event ev_at(const struct probe_desc *p, uint64_t mono, uint32_t tid);

#endif
