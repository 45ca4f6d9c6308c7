/* The Perfetto writer (sink/perfetto_out.h) through the trace sink: the
 * packet structure trace processor needs, the pairing, the clock snapshots
 * (a suspend simulated by the clock hook), the nested-length encoder, and
 * choosing the format by name and by file name. */
#include "ut.h"

#include <stdlib.h>
#include <string.h>

#include "common/wire.h"
#include "vocab/frames.h"
#include "sink/perfetto_out.h"
#include "sink/perfetto_packet.h"
#include "sink/perfetto_proto.h"
#include "sink/sink_args.h"
#include "sink/trace_out.h"
#include "sink_testutil.h"

static const struct probe_desc enter_p = { .program = "prog_enter", .method = "void a.B.run()",
					   .role = PROBE_ENTER, .slice = "B.run" };
static const struct probe_desc exit_p = { .program = "prog_exit", .method = "void a.B.run()",
					  .role = PROBE_EXIT, .slice = "B.run" };
static const struct probe_desc ret_p = { .program = "prog_ret",
					 .method = "int com.x.Y.work(long)" };
static const struct probe_desc plain = { .program = "prog_plain", .method = "malloc",
					 .map = "map_plain" };
static const struct probe_desc counter_p = { .program = "p", .method = "ATrace_setCounter",
					     .section = SECTION_OP_COUNTER };

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

static size_t sub_fields(const uint8_t *b, size_t start, size_t len, uint32_t want)
{
	size_t pos = start, n = 0, s, l;
	uint64_t key;

	while (pos < start + len && wire_read_varint(b, start + len, &pos, &key) == WIRE_OK) {
		if (wire_skip_value(b, start + len, &pos, key & 7, &s, &l) != WIRE_OK)
			return 0;
		n += (key >> 3) == want;
	}
	return n;
}

/* A varint field of the message b[start, start+len). */
static bool sub_uint(const uint8_t *b, size_t start, size_t len, uint32_t num, uint64_t *v)
{
	size_t pos = start, s, l;
	uint64_t key;
	bool found = false;

	while (pos < start + len && wire_read_varint(b, start + len, &pos, &key) == WIRE_OK) {
		if ((key & 7) == WT_VARINT && (key >> 3) == num) {
			wire_read_varint(b, start + len, &pos, v);
			found = true;
		} else if (wire_skip_value(b, start + len, &pos, key & 7, &s, &l) != WIRE_OK) {
			return false;
		}
	}
	return found;
}

/* The first length-delimited field num of the message b[start, start+len):
 * its bytes at *s, *l. */
static bool sub_msg(const uint8_t *b, size_t start, size_t len, uint32_t num, size_t *s,
		    size_t *l)
{
	size_t pos = start;
	uint64_t key;

	while (pos < start + len && wire_read_varint(b, start + len, &pos, &key) == WIRE_OK) {
		if (wire_skip_value(b, start + len, &pos, key & 7, s, l) != WIRE_OK)
			return false;
		if ((key & 7) == WT_LEN && (key >> 3) == num)
			return true;
	}
	return false;
}

/* The clocks of a ClockSnapshot message. */
static void read_snapshot(const uint8_t *b, size_t start, size_t len, struct pkt *p)
{
	size_t pos = start, s, l;
	uint64_t key;

	while (pos < start + len && wire_read_varint(b, start + len, &pos, &key) == WIRE_OK) {
		if (wire_skip_value(b, start + len, &pos, key & 7, &s, &l) != WIRE_OK)
			return;
		uint64_t id = 0, ts = 0;
		if ((key >> 3) != 1 || !sub_uint(b, s, l, 1, &id) || !sub_uint(b, s, l, 2, &ts))
			continue;
		if (id == 3)
			p->cs_mono = ts;
		if (id == 6)
			p->cs_boot = ts;
		if (id >= 64 && id < 128) {
			p->cs_inc_id = id;
			p->cs_inc = ts;
			sub_uint(b, s, l, 3, &p->cs_inc_flag);
			p->has_inc_cs = true;
		}
	}
}

static void read_packets(const uint8_t *b, size_t len, struct pkt *out, size_t max, size_t *np)
{
	size_t pos = 0, n = 0;
	/* each sequence's incremental clocks' last values, as trace processor adds
	 * them up (clocks 64 to 127) */
	static uint64_t inc[256][64];

	memset(inc, 0, sizeof(inc));

	*np = 0;
	uint64_t key;

	while (pos < len && n < max) {
		size_t ps, pl, q;
		struct pkt *p = &out[n++];

		memset(p, 0, sizeof(*p));
		UT_EQ_INT(wire_read_varint(b, len, &pos, &key), WIRE_OK);
		UT_EQ_INT((int)key, (1 << 3) | WT_LEN);
		UT_EQ_INT(wire_read_len(b, len, &pos, &ps, &pl), WIRE_OK);
		q = ps;
		while (q < ps + pl) {
			size_t s = 0, l = 0;
			uint64_t v = 0;
			UT_EQ_INT(wire_read_varint(b, ps + pl, &q, &key), WIRE_OK);
			unsigned num = (unsigned)(key >> 3);
			if ((key & 7) == WT_VARINT) {
				UT_EQ_INT(wire_read_varint(b, ps + pl, &q, &v), WIRE_OK);
			} else {
				UT_EQ_INT(wire_skip_value(b, ps + pl, &q, key & 7, &s, &l), WIRE_OK);
			}
			switch (num) {
			case 8: p->has_ts = true; p->raw_ts = v; break;
			case 58: p->ts_clock = v; break;
			case 10: p->seq = v; break;
			case 13: p->flags = v; break;
			case 6: p->has_cs = true; read_snapshot(b, s, l, p); break;
			case 12:
				p->has_interned = true;
				p->n_event_names = sub_fields(b, s, l, 2);
				p->n_function_names = sub_fields(b, s, l, 5);
				p->n_frame_defs = sub_fields(b, s, l, 6);
				p->n_callstacks = sub_fields(b, s, l, 7);
				break;
			case 59: {
				size_t ds, dl;
				sub_uint(b, s, l, 58, &p->defaults_clock);
				if (sub_msg(b, s, l, 11, &ds, &dl))
					sub_uint(b, ds, dl, 11, &p->defaults_track);
				break;
			}
			case 60: p->has_td = true; sub_uint(b, s, l, 1, &p->td_uuid); break;
			case 11:
				p->has_te = true;
				sub_uint(b, s, l, 9, &p->te_type);
				sub_uint(b, s, l, 11, &p->te_track);
				sub_uint(b, s, l, 10, &p->name_iid);
				p->n_annotations = sub_fields(b, s, l, 4);
				p->n_frames = sub_fields(b, s, l, 55);
				sub_uint(b, s, l, 56, &p->callstack_iid);
				break;
			}
		}
		UT_EQ_INT(q, ps + pl);
		UT_ASSERT(p->seq < 256);
		if (p->has_inc_cs) {
			/* the incremental clock's own snapshot, not one of BOOTTIME */
			UT_EQ_INT(p->cs_inc_flag, 1);
			UT_EQ_INT(p->cs_inc, p->cs_mono);
			p->has_cs = false;
			inc[p->seq & 255][p->cs_inc_id - 64] = p->cs_inc;
		}
		if (p->has_ts && (p->ts_clock == 0 || (p->ts_clock >= 64 && p->ts_clock < 128))) {
			uint64_t *last = &inc[p->seq & 255][p->ts_clock ? p->ts_clock - 64 : 0];
			*last += p->raw_ts;
			p->ts = *last;
		} else if (p->has_ts) {
			UT_EQ_INT(p->ts_clock, 3);
			p->ts = p->raw_ts;
		}
	}
	UT_EQ_INT(pos, len);
	*np = n;
}

struct fake_clock {
	uint64_t mono, boot, real;
};

static void fake_read(void *ctx, uint64_t out[3])
{
	struct fake_clock *c = ctx;

	out[0] = c->mono;
	out[1] = c->boot;
	out[2] = c->real;
}

static struct event ev_at(const struct probe_desc *p, uint64_t mono, uint32_t tid)
{
	static const struct field f[] = {
		{ .name = "uid", .type = FIELD_INT32, .v.i32 = -5 },
		{ .name = "path", .type = FIELD_STRING, .v.str = { "/data/x", 7 } },
	};
	return (struct event){ .kind = EVENT_RECORD, .boot_ns = mono + 1000, .mono_ns = mono,
			       .pid = 100, .tid = tid, .comm = tid == 100 ? "main" : "worker",
			       .process = "com.x", .probe = p, .fields = f, .n_fields = 2 };
}

static void open_fake(struct capture *c, struct trace_out *t, struct fake_clock *clk)
{
	cap_open(c);
	UT_EQ_INT(trace_open_clocked(t, c->f, TRACE_FORMAT_PERFETTO, fake_read, clk, NULL), 0);
}

UT_TEST(perfetto_packets_follow_trace_processor_rules)
{
	struct capture c;
	struct trace_out t;
	struct fake_clock clk = { 1000, 5000, 9000 };
	struct pkt p[128];
	struct event e;
	struct stack_trace st = { .n = 2 };
	struct section_call counter = { .op = SECTION_OP_COUNTER, .name = "queue",
					.name_len = 5, .value = -3 };

	open_fake(&c, &t, &clk);
	e = ev_at(&enter_p, 2000, 101);
	trace_event(&t, &e);
	e = ev_at(&ret_p, 5000, 101);
	e.kind = EVENT_RETURN;
	e.duration_ns = 1500;
	st.frames[0] = (struct stack_frame){ .kind = FRAME_NATIVE, .symbol = "inner", .file = "/l.so" };
	st.frames[1] = (struct stack_frame){ .kind = FRAME_NATIVE, .symbol = "outer", .file = "/l.so" };
	e.stack = &st;
	trace_event(&t, &e);
	e = ev_at(&exit_p, 6000, 101);
	trace_event(&t, &e);
	e = ev_at(&plain, 6500, 100);
	trace_event(&t, &e);
	e = ev_at(&plain, 6600, 100); /* same names again: no new interned data */
	trace_event(&t, &e);
	e = ev_at(&counter_p, 6700, 100);
	e.section = &counter;
	trace_event(&t, &e);
	e = (struct event){ .kind = EVENT_DROP, .mono_ns = 7000, .n_lost = 4, .probe = &plain };
	trace_event(&t, &e);
	e = ev_at(&enter_p, 8000, 100); /* left open: ended at close, unfinished */
	trace_event(&t, &e);
	trace_close(&t);
	cap_text(&c);
	size_t n = 0;
	read_packets((const uint8_t *)c.buf, c.len, p, 128, &n);
	UT_ASSERT(n > 0);

	/* the first packet clears the state, sets the incremental clock and
	 * snapshots the clocks; the second ties the incremental clock to MONOTONIC */
	UT_EQ_INT(p[0].flags, 1);
	UT_EQ_INT(p[0].seq, 1);
	UT_EQ_INT(p[0].defaults_clock, 64);
	UT_ASSERT(p[0].has_cs);
	UT_EQ_INT(p[0].cs_mono, 1000);
	UT_EQ_INT(p[0].cs_boot, 5000);
	UT_ASSERT(p[1].has_inc_cs && p[1].cs_inc == 1000);
	/* timestamps as deltas on it, in file order: these come in order */
	{
		uint64_t want[] = { 2000, 3500, 5000, 6000, 6500, 6600, 6700, 7000, 8000 };
		size_t k = 0;
		for (size_t i = 0; i < n && k < sizeof(want) / sizeof(want[0]); i++) {
			if (!p[i].has_te)
				continue;
			UT_EQ_INT(p[i].ts, want[k]);
			UT_EQ_INT(p[i].ts_clock, 0);
			k++;
		}
		UT_EQ_INT(k, sizeof(want) / sizeof(want[0]));
	}
	/* every track described before its first event; begins and ends balance
	 * per track; interned names before use */
	uint64_t described[32];
	size_t nd = 0, begins = 0, ends = 0, instants = 0, counters = 0, names = 0;
	size_t with_frames = 0;
	for (size_t i = 1; i < n; i++) {
		UT_EQ_INT(p[i].seq, 1);
		if (p[i].has_td) {
			UT_ASSERT(nd < 32);
			described[nd++] = p[i].td_uuid;
		}
		if (!p[i].has_te)
			continue;
		UT_EQ_INT(p[i].flags, 2);
		UT_ASSERT(p[i].has_ts);
		bool known = false;
		for (size_t k = 0; k < nd; k++)
			known |= described[k] == p[i].te_track;
		UT_ASSERT(known);
		names += p[i].n_event_names;
		if (p[i].name_iid)
			UT_ASSERT(p[i].name_iid <= names);
		begins += p[i].te_type == 1;
		ends += p[i].te_type == 2;
		instants += p[i].te_type == 3;
		counters += p[i].te_type == 4;
		with_frames += p[i].n_frames + (p[i].callstack_iid != 0);
	}
	UT_EQ_INT(begins, 3);       /* B.run, work, B.run (open at exit) */
	UT_EQ_INT(ends, 3);
	UT_EQ_INT(counters, 1);
	UT_EQ_INT(with_frames, 1);   /* the stack: interned, not inline */
	for (size_t i = 0; i < n; i++)
		UT_EQ_INT(p[i].n_frames, 0);
	/* malloc twice, the drop, two summary instants (the probe rows are none
	 * here: the trace-level one) */
	UT_EQ_INT(instants, 2 + 1 + 1);
	/* B.run, work, malloc, records dropped, queue is a track name, summary */
	UT_EQ_INT(names, 5);
	UT_EQ_INT(t.unclosed, 1);
	/* the summary is the last event packet; a final snapshot closes the file */
	UT_ASSERT(p[n - 1].has_cs);
	UT_ASSERT(p[n - 2].has_te && p[n - 2].te_type == 3);
	cap_free(&c);
}

/* The event packets of c, in file order, at most max (*n: every packet). */
static size_t event_packets(const struct capture *c, struct pkt *p, size_t np,
			    const struct pkt **te, size_t max, size_t *n)
{
	size_t k = 0;

	read_packets((const uint8_t *)c->buf, c->len, p, np, n);
	for (size_t i = 0; i < *n && k < max; i++)
		if (p[i].has_te)
			te[k++] = &p[i];
	return k;
}

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

/* A thread's events go on sequence 1, track_uuid in each, until it had
 * PF_SEQ_BUSY; then on a sequence of its own: its first packet clears it,
 * names the thread's track as the default one (the events leave theirs out),
 * sets the incremental clock and ties it to MONOTONIC at the next event;
 * the names are interned again there, from iid 1.  A quiet thread stays on
 * sequence 1. */
UT_TEST(perfetto_busy_thread_gets_its_own_sequence)
{
	struct capture c;
	struct trace_out t;
	struct fake_clock clk = { 1000, 5000, 9000 };
	enum { N = PF_SEQ_BUSY + 8 };
	static struct pkt p[4 * N];
	struct event e;
	uint64_t busy_track = 0, quiet_track = 0;
	size_t n = 0, on1 = 0, on2 = 0, first2 = 0, quiet = 0;

	open_fake(&c, &t, &clk);
	for (unsigned i = 0; i < N; i++) {
		e = ev_at(&plain, 2000 + 100 * i, 101);
		trace_event(&t, &e);
		if (i % 8 == 0) {
			e = ev_at(&plain, 2050 + 100 * i, 100);
			trace_event(&t, &e);
		}
	}
	trace_close(&t);
	cap_text(&c);
	read_packets((const uint8_t *)c.buf, c.len, p, 4 * N, &n);
	UT_ASSERT(n < 4 * N);
	for (size_t i = 0; i < n; i++) {
		if (!p[i].has_te || p[i].te_type != 3 || p[i].name_iid != 1)  /* malloc */
			continue;
		if (p[i].seq == 1 && !busy_track)
			busy_track = p[i].te_track;   /* tid 101 comes first */
		if (p[i].seq == 1 && p[i].te_track != busy_track) {
			quiet_track = p[i].te_track;
			quiet++;
			continue;
		}
		if (p[i].seq == 1) {
			UT_ASSERT(p[i].te_track == busy_track);
			on1++;
			continue;
		}
		UT_EQ_INT(p[i].seq, 2);
		UT_EQ_INT(p[i].te_track, 0);   /* the sequence's default */
		UT_EQ_INT(p[i].flags, 2);
		UT_EQ_INT(p[i].name_iid, 1);
		if (!on2++) {
			first2 = i;
			UT_EQ_INT(p[i].n_event_names, 1);   /* "malloc" again, on this sequence */
		} else {
			UT_EQ_INT(p[i].n_event_names, 0);
		}
		UT_EQ_INT(p[i].ts, 2000 + 100 * (PF_SEQ_BUSY + on2 - 1));
	}
	UT_ASSERT(busy_track && quiet_track && quiet_track != busy_track);
	UT_EQ_INT(on1, PF_SEQ_BUSY);
	UT_EQ_INT(on2, N - PF_SEQ_BUSY);
	UT_EQ_INT(quiet, (N + 7) / 8);
	/* the sequence's first packet, just before its first event */
	UT_ASSERT(first2 > 0);
	const struct pkt *h = &p[first2 - 1];
	UT_EQ_INT(h->seq, 2);
	UT_EQ_INT(h->flags, 1);
	UT_EQ_INT(h->defaults_clock, 64);
	UT_EQ_INT(h->defaults_track, busy_track);
	UT_ASSERT(h->has_inc_cs);
	UT_EQ_INT(h->cs_inc, 2000 + 100 * PF_SEQ_BUSY);
	UT_ASSERT(!h->has_te && !h->has_interned);
	/* its first delta is 0: from the snapshot at its own timestamp */
	UT_EQ_INT(p[first2].raw_ts, 0);
	cap_free(&c);
}

/* Every sequence interns its own names, from one budget for all their
 * tables: past it a new name is not interned (written inline), known ones
 * keep their iids, and a freed table gives its entries back. */
UT_TEST(perfetto_interned_entries_share_one_budget)
{
	struct pf_tables a = { 0 }, b = { 0 };
	struct wire_buf d = { 0 };
	size_t total = PF_MAX_INTERNED_TOTAL - 1;

	pf_tables_init(&a, &total);
	pf_tables_init(&b, &total);
	UT_EQ_INT(pf_intern(&a.events, &d, ID_EVENT_NAMES, "x", 1), 1);
	UT_EQ_INT(total, PF_MAX_INTERNED_TOTAL);
	UT_EQ_INT(pf_intern(&b.strings, &d, ID_STRINGS, "y", 1), 0);
	UT_EQ_INT(pf_intern(&a.events, &d, ID_EVENT_NAMES, "x", 1), 1);
	pf_tables_free(&a);
	UT_EQ_INT(total, PF_MAX_INTERNED_TOTAL - 1);
	UT_EQ_INT(pf_intern(&b.strings, &d, ID_STRINGS, "y", 1), 1);
	pf_tables_free(&b);
	UT_EQ_INT(total, PF_MAX_INTERNED_TOTAL - 1);
	wire_buf_free(&d);
}

/* A snapshot lists clocks at one instant: the i-th one in the file. */
static const struct pkt *nth_snapshot(const struct pkt *p, size_t n, size_t i)
{
	for (size_t k = 0; k < n; k++)
		if (p[k].has_cs && i-- == 0)
			return &p[k];
	return NULL;
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

UT_TEST(wire_nested_lengths_of_any_size)
{
	static const size_t sizes[] = { 0, 1, 126, 127, 128, 300, 16383, 16384, 70000 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct wire_buf w = { 0 };
		char *body = calloc(1, sizes[i] + 1);
		size_t outer = wire_open(&w, 1);
		size_t inner = wire_open(&w, 2);

		memset(body, 'x', sizes[i]);
		wire_put_bytes(&w, body, sizes[i]);
		wire_close(&w, inner);
		wire_put_uint_field(&w, 3, 7);
		wire_close(&w, outer);
		UT_ASSERT(!w.oom);

		size_t pos = 0, s, l, s2, l2;
		uint64_t key, v;
		UT_EQ_INT(wire_read_varint(w.p, w.len, &pos, &key), WIRE_OK);
		UT_EQ_INT((int)key, (1 << 3) | WT_LEN);
		UT_EQ_INT(wire_read_len(w.p, w.len, &pos, &s, &l), WIRE_OK);
		UT_EQ_INT(pos, w.len);
		pos = s;
		UT_EQ_INT(wire_read_varint(w.p, s + l, &pos, &key), WIRE_OK);
		UT_EQ_INT(wire_read_len(w.p, s + l, &pos, &s2, &l2), WIRE_OK);
		UT_EQ_INT(l2, sizes[i]);
		UT_ASSERT(!memcmp(w.p + s2, body, sizes[i]));
		UT_EQ_INT(wire_read_varint(w.p, s + l, &pos, &key), WIRE_OK);
		UT_EQ_INT(wire_read_varint(w.p, s + l, &pos, &v), WIRE_OK);
		UT_EQ_INT(v, 7);
		UT_EQ_INT(pos, s + l);
		free(body);
		wire_buf_free(&w);
	}
}

UT_TEST(trace_format_by_name_and_file_name)
{
	enum trace_format f;
	struct err e = { 0 };

	UT_EQ_INT(trace_parse_format("perfetto", &f, &e), 0);
	UT_EQ_INT(f, TRACE_FORMAT_PERFETTO);
	/* the aliases that hid the JSON are gone */
	UT_ASSERT(trace_parse_format("chrome", &f, &e) < 0);
	UT_CONTAINS(e.msg, "--trace-format=chrome: expected one of json, systrace, perfetto");
	UT_ASSERT(trace_format_of_path("/d/out.pftrace", &f) && f == TRACE_FORMAT_PERFETTO);
	UT_ASSERT(trace_format_of_path("out.PERFETTO-TRACE", &f) && f == TRACE_FORMAT_PERFETTO);
	UT_ASSERT(trace_format_of_path("out.json", &f) && f == TRACE_FORMAT_JSON);
	UT_ASSERT(trace_format_of_path("out.systrace", &f) && f == TRACE_FORMAT_SYSTRACE);
	UT_ASSERT(trace_format_of_path("out.txt", &f) && f == TRACE_FORMAT_SYSTRACE);
	UT_ASSERT(!trace_format_of_path("out", &f));
	UT_ASSERT(!trace_format_of_path(".json", &f));  /* a name that is only an ending */
	UT_ASSERT(!trace_format_of_path("out.pftrace.gz", &f));
}

UT_TEST(trace_format_settled_from_the_file_name_one_warning)
{
	char w[256];
	struct sink_args a = { .trace = "x.pftrace" };

	UT_ASSERT(sink_args_settle(&a, w, sizeof(w)) == NULL);
	UT_EQ_INT(a.trace_format, TRACE_FORMAT_PERFETTO);
	a = (struct sink_args){ .trace = "x.pftrace", .trace_format = TRACE_FORMAT_PERFETTO,
				.trace_format_given = true };
	UT_ASSERT(sink_args_settle(&a, w, sizeof(w)) == NULL);
	a = (struct sink_args){ .trace = "x.systrace", .trace_format = TRACE_FORMAT_JSON,
				.trace_format_given = true };
	UT_ASSERT(sink_args_settle(&a, w, sizeof(w)) != NULL);
	UT_EQ_INT(a.trace_format, TRACE_FORMAT_JSON);
	UT_CONTAINS(w, "--trace x.systrace: writing it as --trace-format json, although its "
		       "name says systrace");
	a = (struct sink_args){ .trace = "x.out" };
	UT_ASSERT(sink_args_settle(&a, w, sizeof(w)) == NULL);
	UT_EQ_INT(a.trace_format, TRACE_FORMAT_JSON);
}

/* The same stack on three events: one Callstack, its two Frames and two
 * function names defined once, in the packet of the first event, and every
 * event's callstack_iid that one; a stack sharing a frame adds one
 * Callstack and one Frame. */
UT_TEST(perfetto_repeated_stack_interned_once)
{
	struct capture c;
	struct trace_out t;
	struct fake_clock clk = { 1000, 5000, 9000 };
	struct pkt p[64];
	struct event e;
	struct stack_trace st = { .n = 2 }, st2 = { .n = 2 };
	uint64_t iids[4];
	size_t n = 0, k = 0, stacks = 0, frames = 0, funcs = 0;

	st.frames[0] = (struct stack_frame){ .kind = FRAME_NATIVE, .symbol = "inner", .file = "/l.so" };
	st.frames[1] = (struct stack_frame){ .kind = FRAME_NATIVE, .symbol = "outer", .file = "/l.so",
					      .line = 7 };
	st2.frames[0] = (struct stack_frame){ .kind = FRAME_NATIVE, .symbol = "other", .file = "/l.so" };
	st2.frames[1] = st.frames[1];
	open_fake(&c, &t, &clk);
	for (unsigned i = 0; i < 4; i++) {
		e = ev_at(&plain, 2000 + 100 * i, 100);
		e.stack = i == 2 ? &st2 : &st;
		trace_event(&t, &e);
	}
	trace_close(&t);
	cap_text(&c);
	read_packets((const uint8_t *)c.buf, c.len, p, 64, &n);
	for (size_t i = 0; i < n; i++) {
		stacks += p[i].n_callstacks;
		frames += p[i].n_frame_defs;
		funcs += p[i].n_function_names;
		if (!p[i].has_te || !p[i].callstack_iid)
			continue;
		UT_ASSERT(k < 4);
		UT_ASSERT(p[i].callstack_iid <= stacks);   /* defined before (or with) its use */
		UT_EQ_INT(p[i].n_frames, 0);
		if (k == 0) {
			UT_EQ_INT(p[i].n_callstacks, 1);
			UT_EQ_INT(p[i].n_frame_defs, 2);
			UT_EQ_INT(p[i].n_function_names, 2);
		}
		iids[k++] = p[i].callstack_iid;
	}
	UT_EQ_INT(k, 4);
	UT_EQ_INT(iids[0], 1);
	UT_EQ_INT(iids[1], 1);
	UT_EQ_INT(iids[2], 2);
	UT_EQ_INT(iids[3], 1);
	UT_EQ_INT(stacks, 2);
	UT_EQ_INT(frames, 3);   /* inner, outer, other */
	UT_EQ_INT(funcs, 3);
	cap_free(&c);
}

/* Calls left without an exit: an unwound call's slice begins at its entry
 * and ends where it nests (before the end of the slice open at its entry),
 * a running one at the end given; each END carries one annotation (the mark),
 * a returned call's none. */
UT_TEST(perfetto_left_calls_slices_marked_on_their_end)
{
	static const struct probe_desc outer = { .program = "p", .method = "outer", .slice = "outer" };
	static const struct probe_desc inner = { .program = "p", .method = "inner", .slice = "inner" };
	struct capture c;
	struct trace_out t;
	struct fake_clock clk = { 1000, 5000, 9000 };
	struct pkt p[64];
	struct event e;
	const struct running_call run = { .tid = 100, .probe = &inner, .enter_boot_ns = 15000,
					  .enter_mono_ns = 11000 };

	open_fake(&c, &t, &clk);
	e = ev_at(&outer, 5000, 100);
	e.kind = EVENT_UNWOUND;          /* entered at 2000, found at 5000 */
	e.duration_ns = 3000;
	e.n_fields = 0;
	trace_event(&t, &e);
	e = ev_at(&inner, 6000, 100);
	e.kind = EVENT_UNWOUND;          /* entered at 3000: ends before outer, at 4999 */
	e.duration_ns = 3000;
	e.n_fields = 0;
	trace_event(&t, &e);
	e = ev_at(&outer, 7000, 100);    /* returned: 5000..7000 */
	e.kind = EVENT_RETURN;
	e.duration_ns = 2000;
	e.n_fields = 0;
	trace_event(&t, &e);
	trace_running(&t, &run, 1, 20000);  /* BOOTTIME 15000..20000: MONOTONIC 11000..16000 */
	trace_close(&t);
	cap_text(&c);
	size_t n = 0, k = 0;
	read_packets((const uint8_t *)c.buf, c.len, p, 64, &n);
	const struct pkt *te[8];
	for (size_t i = 0; i < n && k < 8; i++)
		if (p[i].has_te && p[i].te_type != 3)  /* the summary's instants left out */
			te[k++] = &p[i];
	UT_EQ_INT(k, 8);
	uint64_t want_ts[] = { 2000, 5000, 3000, 4999, 5000, 7000, 11000, 16000 };
	for (size_t i = 0; i < 8; i++) {
		UT_EQ_INT(te[i]->te_type, i % 2 ? 2 : 1);
		UT_EQ_INT(te[i]->ts, want_ts[i]);
	}
	UT_EQ_INT(te[1]->n_annotations, 1);  /* unwound */
	UT_EQ_INT(te[3]->n_annotations, 1);  /* unwound */
	UT_EQ_INT(te[5]->n_annotations, 0);  /* returned */
	UT_EQ_INT(te[7]->n_annotations, 1);  /* running_at_exit */
	UT_ASSERT(memmem(c.buf, c.len, "unwound", 7));
	UT_ASSERT(memmem(c.buf, c.len, "running_at_exit", 15));
	cap_free(&c);
}
