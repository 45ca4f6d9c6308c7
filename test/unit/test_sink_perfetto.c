/* The Perfetto writer (sink/perfetto_out.h) through the trace sink: the
 * packet structure trace processor needs, the pairing, the sequences and
 * interning, the nested-length encoder, and choosing the format by name and
 * by file name (the clocks: test_perfetto_clock.c). */
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
#include "perfetto_testutil.h"
#include "sink_testutil.h"

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
