/* perfetto_testutil.c — see perfetto_testutil.h. */
#include "perfetto_testutil.h"

#include <string.h>

#include "common/wire.h"
#include "sink/perfetto_proto.h"
#include "ut.h"

const struct probe_desc enter_p = { .program = "prog_enter", .method = "void a.B.run()",
					   .role = PROBE_ENTER, .slice = "B.run" };
const struct probe_desc exit_p = { .program = "prog_exit", .method = "void a.B.run()",
					  .role = PROBE_EXIT, .slice = "B.run" };
const struct probe_desc ret_p = { .program = "prog_ret",
					 .method = "int com.x.Y.work(long)" };
const struct probe_desc plain = { .program = "prog_plain", .method = "malloc",
					 .map = "map_plain" };
const struct probe_desc counter_p = { .program = "p", .method = "ATrace_setCounter",
					     .section = SECTION_OP_COUNTER };


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

void read_packets(const uint8_t *b, size_t len, struct pkt *out, size_t max, size_t *np)
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


void fake_read(void *ctx, uint64_t out[3])
{
	struct fake_clock *c = ctx;

	out[0] = c->mono;
	out[1] = c->boot;
	out[2] = c->real;
}

struct event ev_at(const struct probe_desc *p, uint64_t mono, uint32_t tid)
{
	static const struct field f[] = {
		{ .name = "uid", .type = FIELD_INT32, .v.i32 = -5 },
		{ .name = "path", .type = FIELD_STRING, .v.str = { "/data/x", 7 } },
	};
	return (struct event){ .kind = EVENT_RECORD, .boot_ns = mono + 1000, .mono_ns = mono,
			       .pid = 100, .tid = tid, .comm = tid == 100 ? "main" : "worker",
			       .process = "com.x", .probe = p, .fields = f, .n_fields = 2 };
}

void open_fake(struct capture *c, struct trace_out *t, struct fake_clock *clk)
{
	cap_open(c);
	UT_EQ_INT(trace_open_clocked(t, c->f, TRACE_FORMAT_PERFETTO, fake_read, clk, NULL), 0);
}

/* The event packets of c, in file order, at most max (*n: every packet). */
size_t event_packets(const struct capture *c, struct pkt *p, size_t np,
			    const struct pkt **te, size_t max, size_t *n)
{
	size_t k = 0;

	read_packets((const uint8_t *)c->buf, c->len, p, np, n);
	for (size_t i = 0; i < *n && k < max; i++)
		if (p[i].has_te)
			te[k++] = &p[i];
	return k;
}

/* A snapshot lists clocks at one instant: the i-th one in the file. */
const struct pkt *nth_snapshot(const struct pkt *p, size_t n, size_t i)
{
	for (size_t k = 0; k < n; k++)
		if (p[k].has_cs && i-- == 0)
			return &p[k];
	return NULL;
}
