/* The Perfetto writer's clocks (sink/perfetto_packet.c, perfetto_clock.c)
 * through the trace sink: timestamps on the sequences' incremental clocks,
 * the ClockSnapshots (periodic, and a suspend simulated by the clock hook and
 * the suspend source). */
#include "ut.h"

#include <string.h>

#include "sink/perfetto_out.h"
#include "sink/perfetto_packet.h"
#include "sink/trace_out.h"
#include "perfetto_testutil.h"
#include "sink_testutil.h"

/* A slice's begin earlier than the last timestamp written (a uretprobe's
 * slice comes at its return) gets a clock of its own, 65, tied to MONOTONIC
 * at that begin by a snapshot just before it; clock 64 is left where it was. */
UT_TEST(perfetto_earlier_timestamp_on_a_new_incremental_clock)
{
	struct capture c;
	struct trace_out t;
	struct fake_clock clk = { 1000, 5000, 9000 };
	struct pkt p[64];
	const struct pkt *te[4];
	struct event e;

	open_fake(&c, &t, &clk);
	e = ev_at(&plain, 10000, 100);
	trace_event(&t, &e);
	e = ev_at(&ret_p, 12000, 100);   /* a slice from 7000, before the 10000 written */
	e.kind = EVENT_RETURN;
	e.duration_ns = 5000;
	trace_event(&t, &e);
	e = ev_at(&plain, 13000, 100);
	trace_event(&t, &e);
	trace_close(&t);
	cap_text(&c);
	size_t n = 0;
	UT_EQ_INT(event_packets(&c, p, 64, te, 4, &n), 4);
	UT_EQ_INT(te[0]->ts_clock, 0);
	UT_EQ_INT(te[0]->raw_ts, 10000 - 1000);   /* from the clock's snapshot at 1000 */
	UT_EQ_INT(te[1]->te_type, 1);
	UT_EQ_INT(te[1]->ts_clock, 65);          /* the new clock, at its snapshot's value */
	UT_EQ_INT(te[1]->raw_ts, 0);
	UT_EQ_INT(te[1]->ts, 7000);
	UT_ASSERT(te[1][-1].has_inc_cs);          /* its snapshot, just before it */
	UT_EQ_INT(te[1][-1].cs_inc_id, 65);
	UT_EQ_INT(te[1][-1].cs_inc, 7000);
	UT_EQ_INT(te[1][-1].seq, te[1]->seq);
	UT_EQ_INT(te[2]->ts_clock, 0);
	UT_EQ_INT(te[2]->raw_ts, 2000);          /* from 10000: the begin did not move it */
	UT_EQ_INT(te[3]->raw_ts, 1000);
	UT_EQ_INT(te[3]->ts, 13000);
	cap_free(&c);
}

/* Nested uretprobe slices written as they return, call after call: each
 * depth's begins go on a clock of their own as deltas (one snapshot per
 * clock, never another), the ends on clock 64; past PF_SEQ_CLOCKS clocks a
 * begin that no clock can take is MONOTONIC itself.  Every timestamp reads
 * back as written. */
UT_TEST(perfetto_nested_begins_reuse_their_clocks)
{
	enum { DEPTH = 3, ROUNDS = 4, DEEP = PF_SEQ_CLOCKS + 2, WARM = 40 };
	const uint64_t T0 = 1000000000000ull;  /* MONOTONIC as on a device up for 17 min */
	struct capture c;
	struct trace_out t;
	struct fake_clock clk = { 1000, 5000, 9000 };
	static struct pkt p[512];
	const struct pkt *te[256];
	uint64_t want[256];
	size_t nw = 0, k, n = 0, snaps = 0, absolute = 0, on_new = 0;
	struct event e;

	open_fake(&c, &t, &clk);
	/* the thread on a sequence of its own first (its clocks made there) */
	for (uint64_t i = 0; i < WARM; i++) {
		e = ev_at(&plain, T0 + 10000 + i * 100, 100);
		trace_event(&t, &e);
		want[nw++] = e.mono_ns;
	}
	for (uint64_t r = 0; r < ROUNDS; r++) {
		uint64_t base = T0 + 100000 + r * 10000;
		/* innermost first: depth d from base + d*100 to base + 1000 - d*100 */
		for (int d = DEPTH - 1; d >= 0; d--) {
			e = ev_at(&ret_p, base + 1000 - (uint64_t)d * 100, 100);
			e.kind = EVENT_RETURN;
			e.duration_ns = 1000 - (uint64_t)d * 200;
			trace_event(&t, &e);
			want[nw++] = e.mono_ns - e.duration_ns;
			want[nw++] = e.mono_ns;
		}
	}
	/* a recursion deeper than the clocks: DEEP slices, each enclosing the last */
	for (int d = DEEP - 1; d >= 0; d--) {
		e = ev_at(&ret_p, T0 + 200000 + 1000 - (uint64_t)d * 10, 100);
		e.kind = EVENT_RETURN;
		e.duration_ns = 1000 - (uint64_t)d * 20;
		trace_event(&t, &e);
		want[nw++] = e.mono_ns - e.duration_ns;
		want[nw++] = e.mono_ns;
	}
	trace_close(&t);
	cap_text(&c);
	k = event_packets(&c, p, 512, te, 256, &n);
	UT_EQ_INT(k, nw + 1);                       /* and the summary */
	for (size_t i = 0; i < nw; i++) {
		UT_EQ_INT(te[i]->ts, want[i]);
		absolute += te[i]->ts_clock == 3;
		on_new += te[i]->ts_clock > 64;
		if (te[i]->te_type == 2)
			UT_EQ_INT(te[i]->ts_clock, 0);  /* ends in order: clock 64 */
	}
	for (size_t i = 0; i < n; i++)
		snaps += p[i].has_inc_cs && p[i].cs_inc_id > 64;
	UT_EQ_INT(snaps, PF_SEQ_CLOCKS - 1);          /* one per clock made */
	/* each round's two enclosing begins on the clocks made in round 0; the
	 * recursion uses those and the rest, then runs out */
	UT_ASSERT(on_new >= (size_t)(ROUNDS * (DEPTH - 1)));
	UT_EQ_INT(absolute, (size_t)(DEEP - 1) - (PF_SEQ_CLOCKS - 1));
	cap_free(&c);
}

UT_TEST(perfetto_suspend_gets_a_snapshot_before_the_records_after_it)
{
	struct capture c;
	struct trace_out t;
	struct fake_clock clk = { 1000000, 5000000, 9000000 };
	struct pkt p[64];
	struct event e;

	open_fake(&c, &t, &clk);
	clk.mono = 2000000;
	clk.boot = 6000000;
	e = ev_at(&plain, 1500000, 100);
	trace_event(&t, &e);           /* batch start: same offset, not due: no snapshot */
	clk.mono = 3000000;
	clk.boot = 7000000;
	trace_flush(&t);               /* last reading with the old offset at mono 3000000 */
	/* suspended 10 s: BOOTTIME jumps, MONOTONIC does not */
	clk.mono = 3500000;
	clk.boot = 7500000 + 10000000000ull;
	e = ev_at(&plain, 3400000, 100);
	trace_event(&t, &e);
	trace_close(&t);
	cap_text(&c);
	size_t n = 0;
	read_packets((const uint8_t *)c.buf, c.len, p, 64, &n);
	UT_ASSERT(n > 0);
	const struct pkt *s0 = nth_snapshot(p, n, 0), *s1 = nth_snapshot(p, n, 1),
			 *s2 = nth_snapshot(p, n, 2);

	UT_ASSERT(s0 && s1 && s2);
	UT_EQ_INT(s0->cs_mono, 1000000);
	/* the new offset from just after the last reading that had the old one */
	UT_EQ_INT(s1->cs_mono, 3000001);
	UT_EQ_INT(s1->cs_boot, 3000001 + 4000000 + 10000000000ull);
	UT_EQ_INT(s2->cs_mono, 3500000);
	UT_EQ_INT(s2->cs_boot, 7500000 + 10000000000ull);
	/* both come before the record made after the resume */
	size_t last_ev = 0, s2_at = 0;
	for (size_t k = 0; k < n; k++) {
		if (p[k].has_te && p[k].ts == 3400000)
			last_ev = k;
		if (&p[k] == s2)
			s2_at = k;
	}
	UT_ASSERT(last_ev > s2_at);
	cap_free(&c);
}

/* A suspend source for the tests: the suspend at *ctx (0: watched, none). */
static int fake_suspend_at(const void *ctx, uint64_t after, uint64_t before, uint64_t *mono)
{
	uint64_t at = *(const uint64_t *)ctx;

	if (!at || at <= after || at > before)
		return 0;
	*mono = at;
	return 1;
}

/* A run with the suspend source saying the suspend was at suspend_at (0:
 * none): a record at 1500000, the last reading before the suspend at
 * 3000000, then BOOTTIME ahead by boot_ahead at the reading 3500000, when a
 * record made at late_ns is drained.  The packets into p[64]; how many. */
static size_t suspend_run(uint64_t suspend_at, uint64_t boot_ahead, uint64_t late_ns,
			  struct pkt *p)
{
	struct capture c;
	struct trace_out t;
	struct fake_clock clk = { 1000000, 5000000, 9000000 };
	const struct suspend_source src = { fake_suspend_at, &suspend_at };
	struct event e;
	size_t n = 0;

	open_fake(&c, &t, &clk);
	pf_set_suspend(&t.pf, &src);
	clk.mono = 3000000;
	clk.boot = 7000000;
	e = ev_at(&plain, 1500000, 100);
	trace_event(&t, &e);
	trace_flush(&t);               /* the last reading before the suspend: 3000000 */
	clk.mono = 3500000;
	clk.boot = 7500000 + boot_ahead;
	e = ev_at(&plain, late_ns, 100);
	trace_event(&t, &e);
	trace_close(&t);
	cap_text(&c);
	read_packets((const uint8_t *)c.buf, c.len, p, 64, &n);
	cap_free(&c);
	return n;
}

/* With the suspend's own place known (the watch's machine_suspend event), the
 * new offset holds from there: a record made after the last reading but
 * before the suspend, drained after it, keeps the old offset. */
UT_TEST(perfetto_suspend_from_its_own_place_when_watched)
{
	struct pkt p[64];
	size_t n = suspend_run(3200000, 10000000000ull, 3100000, p);
	const struct pkt *s1 = NULL;

	for (size_t i = 0, k = 0; i < n; i++)
		if (p[i].has_cs && p[i].cs_boot - p[i].cs_mono > 5000000000ull && !k++)
			s1 = &p[i];
	UT_ASSERT(s1);
	UT_EQ_INT(s1->cs_mono, 3200000);             /* from the suspend itself */
	UT_EQ_INT(s1->cs_boot, 3200000 + 4000000 + 10000000000ull);
}

/* Watched, and no suspend: BOOTTIME - MONOTONIC moved by a reading's noise;
 * an ordinary snapshot at the reading, never one back-dated. */
UT_TEST(perfetto_offset_moved_without_a_suspend_is_not_back_dated)
{
	struct pkt p[64];
	size_t n = suspend_run(0, 300000, 3400000, p);   /* +300 us of noise */

	for (size_t i = 0; i < n; i++)
		if (p[i].has_cs)
			UT_ASSERT(p[i].cs_mono == 1000000 || p[i].cs_mono >= 3000000);
	const struct pkt *s1 = nth_snapshot(p, n, 1);
	UT_ASSERT(s1);
	UT_EQ_INT(s1->cs_mono, 3500000);             /* at the reading itself */
}

UT_TEST(perfetto_periodic_snapshot)
{
	struct capture c;
	struct trace_out t;
	struct fake_clock clk = { 1000, 5000, 9000 };
	struct pkt p[64];
	struct event e;

	open_fake(&c, &t, &clk);
	e = ev_at(&plain, 1500, 100);
	trace_event(&t, &e);
	clk.mono += PF_SNAPSHOT_PERIOD_NS;
	clk.boot += PF_SNAPSHOT_PERIOD_NS;
	trace_flush(&t);  /* a second passed: due */
	trace_close(&t);  /* the final one */
	cap_text(&c);
	size_t n = 0;
	read_packets((const uint8_t *)c.buf, c.len, p, 64, &n);
	UT_ASSERT(n > 0);
	size_t snaps = 0;
	for (size_t k = 0; k < n; k++)
		snaps += p[k].has_cs;
	UT_EQ_INT(snaps, 3);
	cap_free(&c);
}
