/* test_text_calls.c — the text output's one line per call (sink/text_out.h):
 * the arguments asked for, named and printed by kind, the return and the
 * duration on the call's line, nesting by indentation per thread, entries
 * and returns paired whatever order the buffers hand them over in. */
#include "ut.h"

#include <string.h>

#include "sink/text_out.h"
#include "sink_testutil.h"

/* write(fd, buf, count), with --args 0,1,2 and --ret: the entry probe
 * and the return probe of one function. */
static const struct call_shape write_entry = {
	.entry = true, .paired = true, .n_args = 3,
	.args = { { "fd", 0, 0, CALL_ARG_I32 }, { "buf", 1, 1, CALL_ARG_HEX },
		  { "count", 2, 2, CALL_ARG_U64 } },
};
static const struct call_shape write_ret = { .ret = true, .ret_kind = CALL_ARG_I64 };
static const struct probe_desc write_in = { .file = "/lib/libc.so", .method = "write",
					    .offset = 0x100, .call = &write_entry };
static const struct probe_desc write_out = { .file = "/lib/libc.so", .method = "write",
					     .offset = 0x100, .call = &write_ret };

/* inner(s) with a string argument, entry only. */
static const struct call_shape str_entry = {
	.entry = true, .n_args = 2,
	.args = { { "arg0", -1, 0, CALL_ARG_STR }, { "arg1", 2, 1, CALL_ARG_I64 } },
};
static const struct probe_desc str_in = { .file = "/t", .method = "void a.b.C.log(java.lang.String, long)",
					  .offset = 0x200, .call = &str_entry };

static struct field regs[11];

static struct event entry(const struct probe_desc *p, uint64_t t, uint32_t tid, uint64_t r0,
			  uint64_t r1, uint64_t r2)
{
	static const char *const names[11] = { "pc", "r0", "r1", "r2", "r3", "r4", "r5",
						"r6", "r7", "r8", "r9" };
	uint64_t v[11] = { 0x1000, r0, r1, r2 };

	for (int i = 0; i < 11; i++)
		regs[i] = (struct field){ .name = names[i], .type = FIELD_UINT64, .v.u64 = v[i] };
	return (struct event){ .kind = EVENT_RECORD, .boot_ns = t, .pid = 7, .tid = tid,
			       .comm = "sh", .probe = p, .fields = regs, .n_fields = 11 };
}

static struct field ret_fields[2];

static struct event ret(const struct probe_desc *p, uint64_t end, uint64_t dur, uint32_t tid,
			int64_t value)
{
	ret_fields[0] = (struct field){ .name = "return_value", .type = FIELD_INT64,
					.v.i64 = value };
	ret_fields[1] = (struct field){ .name = "duration_ns", .type = FIELD_INT64,
					.v.i64 = (int64_t)dur };
	return (struct event){ .kind = EVENT_RETURN, .boot_ns = end, .pid = 7, .tid = tid,
			       .comm = "sh", .probe = p, .duration_ns = dur,
			       .fields = ret_fields, .n_fields = 2 };
}


static const char *run_events(struct capture *c, const struct event *evs, size_t n,
			      int flush_after)
{
	struct text_out t;

	cap_open(c);
	if (text_open(&t, c->f, false, NULL) != 0)
		return "text_open failed";
	for (size_t i = 0; i < n; i++) {
		text_event(&t, &evs[i]);
		if ((int)i == flush_after)
			text_flush(&t);
	}
	text_close(&t);
	return cap_text(c);
}

UT_TEST(text_call_is_one_line_with_its_return)
{
	struct capture c;
	struct event evs[2];

	evs[0] = entry(&write_in, 5000000000ull, 9, 1, 0x7ffd1000, 3);
	evs[1] = ret(&write_out, 5000185943ull, 185943, 9, 3);
	UT_EQ_STR(run_events(&c, evs, 2, -1),
		  "#         BOOT_S     PID     TID COMM             CALL\n"
		  "     5.000000000       7       9 sh               "
		  "write(fd=1, buf=0x7ffd1000, count=3) = 3  <185.9\xc2\xb5s>\n");
	cap_free(&c);
}

/* A call inside another on one thread: the outer first, the inner indented,
 * whichever order the two buffers delivered the four records in. */
UT_TEST(text_nested_calls_indent_in_either_order)
{
	static const char want[] =
		"#         BOOT_S     PID     TID COMM             CALL\n"
		"     1.000000000       7       9 sh               "
		"write(fd=1, buf=0x10, count=1) = 1  <3.00ms>\n"
		"     1.001000000       7       9 sh                 "
		"write(fd=-2, buf=0x20, count=2) = 2  <1.00ms>\n"
		"     1.001500000       7      10 sh               "
		"write(fd=5, buf=0x30, count=3) = 3  <850ns>\n";
	struct capture c;
	struct event in_order[6], returns_first[6];
	struct field f[6][11];   /* entry() and ret() reuse their fields: a copy each */

#define KEEP(i, ev)                                                              \
	do {                                                                     \
		in_order[i] = (ev);                                              \
		memcpy(f[i], in_order[i].fields,                                 \
		       in_order[i].n_fields * sizeof(f[i][0]));                  \
		in_order[i].fields = f[i];                                       \
	} while (0)
	KEEP(0, entry(&write_in, 1000000000ull, 9, 1, 0x10, 1));
	KEEP(1, entry(&write_in, 1001000000ull, 9, (uint32_t)-2, 0x20, 2));
	KEEP(2, entry(&write_in, 1001500000ull, 10, 5, 0x30, 3));
	KEEP(3, ret(&write_out, 1002000000ull, 1000000, 9, 2));
	KEEP(4, ret(&write_out, 1001500850ull, 850, 10, 3));
	KEEP(5, ret(&write_out, 1003000000ull, 3000000, 9, 1));
#undef KEEP
	UT_EQ_STR(run_events(&c, in_order, 6, -1), want);
	cap_free(&c);
	for (int i = 0; i < 6; i++)
		returns_first[i] = in_order[(i + 3) % 6];
	UT_EQ_STR(run_events(&c, returns_first, 6, -1), want);
	cap_free(&c);
}

/* A return that comes after the batch its entry was printed in. */
UT_TEST(text_call_resumed_across_batches)
{
	struct capture c;
	struct event evs[2];

	evs[0] = entry(&write_in, 2000000000ull, 9, 1, 0x10, 1);
	evs[1] = ret(&write_out, 4000000000ull, 2000000000ull, 9, -11);
	UT_EQ_STR(run_events(&c, evs, 2, 0),
		  "#         BOOT_S     PID     TID COMM             CALL\n"
		  "     2.000000000       7       9 sh               "
		  "write(fd=1, buf=0x10, count=1) ...\n"
		  "     4.000000000       7       9 sh               "
		  "<... write resumed> = -11  <2.000s>\n");
	cap_free(&c);
}

/* Entry only: the arguments asked for, a string quoted, a Java name short;
 * a return with no entry recorded says so with (...). */
UT_TEST(text_entry_only_and_return_only_calls)
{
	struct capture c;
	struct event evs[2];
	struct field f[12];

	evs[0] = entry(&str_in, 3000000000ull, 9, 0, 0, (uint64_t)-5);
	memcpy(f, regs, sizeof(regs));
	f[11] = (struct field){ .name = "arg0", .type = FIELD_STRING,
				.v.str = { "hi \"x\"\n", 7 } };
	evs[0].fields = f;
	evs[0].n_fields = 12;
	evs[1] = ret(&write_out, 3500000000ull, 1500, 9, 4);
	UT_EQ_STR(run_events(&c, evs, 2, -1),
		  "#         BOOT_S     PID     TID COMM             CALL\n"
		  "     3.000000000       7       9 sh               "
		  "C.log(arg0=\"hi \\\"x\\\"\\n\", arg1=-5)\n"
		  "     3.499998500       7       9 sh               "
		  "write(...) = 4  <1.5\xc2\xb5s>\n");
	cap_free(&c);
}
