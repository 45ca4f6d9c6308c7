/* In-kernel aggregation, user-space side: bucket labels and bars as
 * bpftrace prints them, the text table and JSON Lines of an interval (against
 * docs/event.schema.json), trace's --by/--sum/--hist parsers, and the plan's
 * checks of an Aggregation (sink/agg_out.h, plan/trace_plan.h,
 * plan/aggregation.h). */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "plan/aggregation.h"
#include "plan/trace_plan.h"
#include "records.h"
#include "sink/agg_out.h"
#include "vocab/outbuf.h"
#include "sink_testutil.h"
#include "ut.h"

UT_TEST(agg_bucket_labels_as_bpftrace)
{
	char b[48];

	UT_EQ_STR(agg_bucket_label(0, b, sizeof(b)), "[0]");
	UT_EQ_STR(agg_bucket_label(1, b, sizeof(b)), "[1]");
	UT_EQ_STR(agg_bucket_label(2, b, sizeof(b)), "[2, 4)");
	UT_EQ_STR(agg_bucket_label(10, b, sizeof(b)), "[512, 1K)");
	UT_EQ_STR(agg_bucket_label(11, b, sizeof(b)), "[1K, 2K)");
	UT_EQ_STR(agg_bucket_label(21, b, sizeof(b)), "[1M, 2M)");
	UT_EQ_STR(agg_bucket_label(64, b, sizeof(b)), "[8E, ...)");
}

static char *print(void (*fn)(struct outbuf *, const struct agg_interval *),
		   const struct agg_interval *iv)
{
	struct capture c;
	struct outbuf o;
	char *text;

	cap_open(&c);
	if (outbuf_init(&o, c.f, 0, "test", NULL) < 0)
		return NULL;
	fn(&o, iv);
	outbuf_finish(&o, 0);
	outbuf_free(&o);
	text = strdup(cap_text(&c));
	cap_free(&c);
	return text;
}

static const struct agg_view views[2] = {
	{ .method = "ups_agg_fn", .by = AGG_PART_PID | AGG_PART_ARG, .arg_name = "arg0",
	  .sum_name = "arg1", .hist_name = "arg1", .dropped = 3 },
	{ 0 },   /* probe 1 does not aggregate */
};

static void fill_rows(struct agg_row rows[2])
{
	memset(rows, 0, 2 * sizeof(*rows));
	rows[0] = (struct agg_row){ .probe_id = 0, .pid = 42, .arg = 1, .count = 10, .sum = 45 };
	rows[0].hist[0] = 1;
	rows[0].hist[1] = 1;
	rows[0].hist[2] = 2;
	rows[0].hist[3] = 4;
	rows[0].hist[4] = 2;
	rows[1] = (struct agg_row){ .probe_id = 0, .pid = 42, .arg = (uint64_t)-3, .count = 2,
				    .sum = -2, .hist_negative = 2 };
}

UT_TEST(agg_text_table_and_bars)
{
	struct agg_row rows[2];
	struct agg_interval iv = { .seq = 2, .ts_ns = 1700000000123456789ull,
				   .span_ns = 1500000000u, .rows = rows, .n_rows = 2,
				   .views = views, .n_views = 2 };
	char *out;

	fill_rows(rows);
	out = print(agg_print_text, &iv);
	UT_ASSERT(out);
	UT_CONTAINS(out, "=== aggregation interval 2 (1.500 s, ending at 1700000000.123)\n");
	UT_CONTAINS(out, "ups_agg_fn [probe 0]: count, sum of arg1, histogram of arg1\n");
	UT_CONTAINS(out, "  3 hit(s) not (fully) counted: the aggregation map was full");
	UT_CONTAINS(out, "  pid 42, arg0 1                           count         10  sum"
		    "             45\n");
	UT_CONTAINS(out, "[0]                     1 |@@@@@@@@@@@@@                     ");
	UT_CONTAINS(out, "[4, 8)                  4 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@"
		    "@@@@@@@@@@@@@@@@|\n");
	UT_CONTAINS(out, "[8, 16)                 2 |");
	UT_CONTAINS(out, "  pid 42, arg0 -3");
	UT_CONTAINS(out, "(..., 0)                2 |@@@@");
	UT_ASSERT(!strstr(out, "[16, 32)"));   /* only first to last used bucket */
	free(out);
}

UT_TEST(agg_jsonl_lines_follow_the_schema)
{
	struct agg_row rows[2];
	struct agg_interval iv = { .seq = 1, .ts_ns = 1700000000123456789ull,
				   .boot_ns = 5000000042ull, .span_ns = 1,
				   .final = true, .rows = rows, .n_rows = 2, .views = views,
				   .n_views = 2 };
	struct jc_doc schema;
	char why[256] = "", *out;

	fill_rows(rows);
	out = print(agg_print_jsonl, &iv);
	UT_ASSERT(out);
	/* an event's time keys, then ts as before */
	UT_CONTAINS(out, "{\"type\":\"aggregate\",\"boot_ns\":5000000042,"
		    "\"wall_ns\":1700000000123456789,\"wall\":\"2023-11-14T22:13:20.123456789Z\","
		    "\"ts\":1700000000.123,\"interval\":1,"
		    "\"probe\":0,\"method\":\"ups_agg_fn\",\"dropped_map_full\":3}\n");
	UT_CONTAINS(out, "\"pid\":42,\"arg0\":1,\"count\":10,\"sum\":45,\"sum_of\":\"arg1\","
		    "\"hist_of\":\"arg1\",\"hist\":[{\"min\":0,\"max\":0,\"count\":1},"
		    "{\"min\":1,\"max\":1,\"count\":1},{\"min\":2,\"max\":3,\"count\":2},");
	UT_CONTAINS(out, "\"arg0\":-3,\"count\":2,\"sum\":-2,");
	UT_CONTAINS(out, "\"hist\":[{\"max\":-1,\"count\":2}]}\n");
	UT_EQ_INT(load_schema(&schema), 0);
	UT_EQ_INT(validate_lines(&schema, out, why, sizeof(why)), 3);
	jc_free(&schema);
	free(out);
}

static const struct agg_view name_views[1] = {
	{ .method = "ups_agg_fn", .by = AGG_PART_PROCESS | AGG_PART_COMM | AGG_PART_ARG,
	  .arg_name = "arg0" },
};

/* --by process,comm,arg0: the names, not the pid, in the text and JSON;
 * a row whose process has no name keeps its pid. */
UT_TEST(agg_by_comm_and_process_print_names)
{
	struct agg_row rows[2];
	struct agg_interval iv = { .seq = 1, .ts_ns = 1700000000123456789ull, .boot_ns = 7,
				   .span_ns = 1, .rows = rows, .n_rows = 2,
				   .views = name_views, .n_views = 1 };
	struct jc_doc schema;
	char why[256] = "", *out;

	memset(rows, 0, sizeof(rows));
	rows[0] = (struct agg_row){ .probe_id = 0, .arg = 1, .count = 3 };
	snprintf(rows[0].process, sizeof(rows[0].process), "com.example.app");
	memcpy(rows[0].comm, "RenderThread\0\0\0\0", AGG_COMM_LEN);
	rows[1] = (struct agg_row){ .probe_id = 0, .pid = 14182, .arg = 2, .count = 1 };
	memcpy(rows[1].comm, "0123456789abcde", AGG_COMM_LEN);   /* 15 bytes and its NUL */
	out = print(agg_print_text, &iv);
	UT_ASSERT(out);
	UT_CONTAINS(out, "  process com.example.app, comm RenderThread, arg0 1 count          3\n");
	UT_CONTAINS(out, "  process ? (pid 14182), comm 0123456789abcde, arg0 2 count          1\n");
	UT_ASSERT(!strstr(out, "pid 0"));
	free(out);
	out = print(agg_print_jsonl, &iv);
	UT_ASSERT(out);
	UT_CONTAINS(out, "\"method\":\"ups_agg_fn\",\"process\":\"com.example.app\","
		    "\"comm\":\"RenderThread\",\"arg0\":1,\"count\":3}\n");
	UT_CONTAINS(out, "\"process\":null,\"pid\":14182,\"comm\":\"0123456789abcde\","
		    "\"arg0\":2,");
	UT_EQ_INT(load_schema(&schema), 0);
	UT_EQ_INT(validate_lines(&schema, out, why, sizeof(why)), 2);
	jc_free(&schema);
	free(out);
}

UT_TEST(trace_agg_options_parse)
{
	struct trace_agg g = { .by_arg = -1 };
	struct err e = { 0 };
	int32_t v = -1, arg = -1;

	UT_EQ_INT(trace_agg_parse_by("pid,arg 2,ret", &g, &e), 0);
	UT_EQ_INT(g.n_by, 3);
	UT_EQ_INT(g.by[0], AGG_KEY_PID);
	UT_EQ_INT(g.by[1], AGG_KEY_ARG);
	UT_EQ_INT(g.by[2], AGG_KEY_RET);
	UT_EQ_INT(g.by_arg, 2);
	UT_ASSERT(trace_agg_needs_return(&g));
	UT_EQ_INT(trace_agg_parse_by("process,comm,tid", &g, &e), 0);
	UT_EQ_INT(g.n_by, 3);
	UT_EQ_INT(g.by[0], AGG_KEY_PROCESS);
	UT_EQ_INT(g.by[1], AGG_KEY_COMM);
	UT_EQ_INT(g.by[2], AGG_KEY_TID);
	UT_EQ_INT(trace_agg_parse_by("pid,tid,uid,comm,process,arg2,ret", &g, &e), 0);
	UT_EQ_INT(g.n_by, 7);
	UT_EQ_INT(trace_agg_parse_by("name", &g, &e), -EINVAL);
	UT_EQ_STR(e.msg, "--by name: 'name' is not pid, tid, uid, comm, process, arg N or ret");
	UT_EQ_INT(trace_agg_parse_by("tid,tid", &g, &e), -EINVAL);
	UT_EQ_STR(e.msg, "--by tid,tid: 'tid' twice");
	UT_EQ_INT(trace_agg_parse_by("pid,", &g, &e), -EINVAL);
	UT_EQ_STR(e.msg, "--by pid,: a key after the last ','");
	UT_EQ_INT(trace_agg_parse_by("arg1,arg2", &g, &e), -EINVAL);
	UT_EQ_STR(e.msg, "--by arg1,arg2: one argument key at most");
	UT_EQ_INT(trace_agg_parse_by("argx", &g, &e), -EINVAL);
	UT_EQ_INT(trace_agg_parse_by("", &g, &e), -EINVAL);
	UT_EQ_INT(trace_agg_parse_value("arg:3", "--sum", &v, &arg, &e), 0);
	UT_EQ_INT(v, AGG_VALUE_ARG);
	UT_EQ_INT(arg, 3);
	UT_EQ_INT(trace_agg_parse_value("latency", "--hist", &v, &arg, &e), 0);
	UT_EQ_INT(v, AGG_VALUE_LATENCY);
	UT_EQ_INT(trace_agg_parse_value("arg999", "--hist", &v, &arg, &e), -EINVAL);
	UT_EQ_STR(e.msg, "--hist takes arg N, ret or latency, not 'arg999'");
}

static int plan_one(const char *prog_name, struct probe_config *pc, enum arg_abi abi,
		    struct plan_probe *p, struct err *e)
{
	memset(p, 0, sizeof(*p));
	if (catalog_find_program(prog_name, &p->obj, &p->prog) < 0)
		return -ENOENT;
	snprintf(p->program_name, sizeof(p->program_name), "%s", prog_name);
	p->cfg = pc;
	p->abi = abi;
	p->machine = EM_X86_64;
	return plan_aggregation(p, e);
}

UT_TEST(plan_aggregation_maps_positions_and_refuses)
{
	int32_t by[] = { AGG_KEY_TID, AGG_KEY_ARG };
	struct probe_config pc = { .has_aggregation = true, .agg_by = { by, 2, NULL },
				   .has_agg_by_arg = true, .agg_by_arg = 0,
				   .has_agg_sum = true, .agg_sum = AGG_VALUE_ARG,
				   .has_agg_sum_arg = true, .agg_sum_arg = 1,
				   .has_agg_hist = true, .agg_hist = AGG_VALUE_LATENCY };
	struct plan_probe p;
	struct err e = { 0 };

	/* Java instance method: position 0 is the third register (ArtMethod*, this) */
	UT_EQ_INT(plan_one("prog_Uprobestats_uretprobe_aggregate_return", &pc,
			   ARG_ABI_ART_INSTANCE, &p, &e), 0);
	UT_EQ_INT(p.agg_by, UPS_AGG_BY_TID | UPS_AGG_BY_ARG);
	UT_EQ_INT(p.agg_sum, UPS_AGG_VAL_ARG);
	UT_EQ_INT(p.agg_hist, UPS_AGG_VAL_LATENCY);
	UT_EQ_U64(p.agg_regs, 2u | 3u << 8 | (uint32_t)UPS_AGG_NO_REG << 16);
	UT_EQ_INT(plan_one("prog_Uprobestats_uprobe_aggregate", &pc, ARG_ABI_NATIVE, &p, &e),
		  -EINVAL);
	UT_CONTAINS(e.msg, "use prog_Uprobestats_uretprobe_aggregate_return");
	pc.agg_hist = AGG_VALUE_NONE;
	pc.agg_sum_arg = 6;   /* x86_64: the seventh argument is on the stack */
	UT_EQ_INT(plan_one("prog_Uprobestats_uprobe_aggregate", &pc, ARG_ABI_NATIVE, &p, &e),
		  PLAN_BAD_POSITION);  /* a bad value (exit 2/3), not a resolution failure */
	UT_CONTAINS(e.msg, "sum argument 6 is not in a register");
	pc.agg_sum_arg = 1;
	UT_EQ_INT(plan_one("prog_GenericInstrumentation_uprobe_call_detail", &pc,
			   ARG_ABI_NATIVE, &p, &e), -EINVAL);
	UT_CONTAINS(e.msg, "an aggregation needs prog_Uprobestats_uprobe_aggregate");
	pc.has_agg_by_arg = false;
	UT_EQ_INT(plan_one("prog_Uprobestats_uprobe_aggregate", &pc, ARG_ABI_NATIVE, &p, &e),
		  -EINVAL);
	UT_CONTAINS(e.msg, "by: ARG needs by_arg");
}

/* by: [COMM, PROCESS] reach the program as their bits. */
UT_TEST(plan_aggregation_by_comm_and_process)
{
	int32_t by[] = { AGG_KEY_COMM, AGG_KEY_PROCESS };
	struct probe_config pc = { .has_aggregation = true, .agg_by = { by, 2, NULL } };
	struct plan_probe p;
	struct err e = { 0 };

	UT_EQ_INT(plan_one("prog_Uprobestats_uprobe_aggregate", &pc, ARG_ABI_NATIVE, &p, &e), 0);
	UT_EQ_INT(p.agg_by, UPS_AGG_BY_COMM | UPS_AGG_BY_PROCESS);
	UT_EQ_INT(AGG_PART_COMM, UPS_AGG_BY_COMM);
	UT_EQ_INT(AGG_PART_PROCESS, UPS_AGG_BY_PROCESS);
}

/* traffic's entry half keeps what its return reads: recvfrom's addrlen pointer
 * (register 5) beside its fd and address, accept's (register 2) beside its
 * sockaddr, so the address counts only as far as the kernel's addrlen covers it;
 * sendmsg's and recvmsg's msghdr (register 1), whose msg_name the entry reads */
UT_TEST(plan_traffic_keeps_the_addrlen_registers)
{
	static const struct { const char *sym; uint32_t op; uint64_t regs; } want[] = {
		{ "recvfrom", UPS_TRAFFIC_RX_ADDR, 0u | 5u << 8 | 4u << 16 },
		{ "sendto@@GLIBC_2.2.5", UPS_TRAFFIC_TX_ADDR, 0u | 5u << 8 | 4u << 16 },
		{ "accept4", UPS_TRAFFIC_ACCEPT, 0u | 1u << 8 | 2u << 16 },
		{ "__connect", UPS_TRAFFIC_CONNECT, 0u | 1u << 8 | 2u << 16 },
		{ "recv", UPS_TRAFFIC_RX, 0u | 1u << 8 | 4u << 16 },
		{ "sendmsg", UPS_TRAFFIC_TX_MSG, 0u | 1u << 8 | 0xffu << 16 },
		{ "__sendmsg", UPS_TRAFFIC_TX_MSG, 0u | 1u << 8 | 0xffu << 16 },
		{ "recvmsg@@GLIBC_2.2.5", UPS_TRAFFIC_RX_MSG, 0u | 1u << 8 | 0xffu << 16 },
	};
	struct plan_probe p;
	struct err e = { 0 };

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct probe_config pc = { .method_signature = (char *)want[i].sym };

		UT_EQ_INT(plan_one("prog_Uprobestats_uretprobe_traffic", &pc, ARG_ABI_NATIVE,
				   &p, &e), 0);
		UT_EQ_INT(p.traffic_op, want[i].op);
		UT_EQ_U64(p.agg_regs, want[i].regs);
	}
}
