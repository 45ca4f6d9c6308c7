/* `uprobestats traffic`'s interval output (sink/traffic_out.h): the text
 * table's COMM column, the JSON Lines rows ("type":"traffic" first, the
 * interval's end as ts, boot_ns and wall_ns, the comm) against
 * docs/event.schema.json, and the statsd atom (comm the last field). */
#include <stdlib.h>
#include <string.h>

#include "sink/traffic_out.h"
#include "vocab/outbuf.h"
#include "sink_testutil.h"
#include "ut.h"

static char *print(void (*fn)(struct outbuf *, const struct traffic_interval *),
		   const struct traffic_interval *iv)
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

static void fill_rows(struct traffic_row rows[2])
{
	memset(rows, 0, 2 * sizeof(*rows));
	rows[0] = (struct traffic_row){ .pid = 42, .uid = 1000, .fd = 7, .comm = "nc",
					.proto = "tcp", .peer = "127.0.0.1:8080",
					.host = "example.test", .iface = "lo", .tx_bytes = 2100,
					.rx_bytes = 700, .tx_calls = 6, .rx_calls = 1 };
	rows[1] = (struct traffic_row){ .pid = 43, .fd = 3, .proto = "unix", .peer = "unix:",
					.rx_bytes = 55, .rx_calls = 1 };   /* comm unknown */
}

static struct traffic_interval interval(const struct traffic_row *rows)
{
	return (struct traffic_interval){ .seq = 1, .ts_ns = 1700000000123456789ull,
					  .boot_ns = 5000000001ull, .span_ns = 1500000000u,
					  .final = true, .rows = rows, .n_rows = 2, .dropped = 3 };
}

UT_TEST(traffic_text_table_has_comm)
{
	struct traffic_row rows[2];
	struct traffic_interval iv;
	char *out;

	fill_rows(rows);
	iv = interval(rows);
	out = print(traffic_print_text, &iv);
	UT_ASSERT(out);
	UT_CONTAINS(out, "     PID COMM               UID   FD PROTO PEER");
	UT_CONTAINS(out, "      42 nc                1000    7 tcp   127.0.0.1:8080");
	UT_CONTAINS(out, "      43 -                    0    3 unix  unix:");
	free(out);
}

UT_TEST(traffic_jsonl_rows_typed_timed_and_follow_the_schema)
{
	struct traffic_row rows[2];
	struct traffic_interval iv;
	struct jc_doc schema;
	char why[256] = "", *out;

	fill_rows(rows);
	iv = interval(rows);
	out = print(traffic_print_jsonl, &iv);
	UT_ASSERT(out);
	UT_CONTAINS(out, "{\"type\":\"traffic\",\"ts\":1700000000.123,\"boot_ns\":5000000001,"
		    "\"wall_ns\":1700000000123456789,\"pid\":42,\"comm\":\"nc\",\"uid\":1000,"
		    "\"fd\":7,\"proto\":\"tcp\",\"peer\":\"127.0.0.1:8080\","
		    "\"host\":\"example.test\",\"iface\":\"lo\",\"tx_bytes\":2100,"
		    "\"rx_bytes\":700,\"tx_calls\":6,\"rx_calls\":1}\n");
	UT_CONTAINS(out, "\"pid\":43,\"comm\":null,");
	UT_CONTAINS(out, "{\"type\":\"traffic\",\"ts\":1700000000.123,\"boot_ns\":5000000001,"
		    "\"wall_ns\":1700000000123456789,\"dropped_map_full\":3}\n");
	UT_EQ_INT(load_schema(&schema), 0);
	UT_EQ_INT(validate_lines(&schema, out, why, sizeof(why)), 3);
	jc_free(&schema);
	free(out);
}

/* sendmmsg/recvmmsg messages whose bytes are in no row: one summary line in
 * each output, none when there are none. */
UT_TEST(traffic_uncounted_mmsg_messages_summarised_in_text_and_json)
{
	struct traffic_row rows[2];
	struct traffic_interval iv;
	struct jc_doc schema;
	char why[256] = "", *out;

	fill_rows(rows);
	iv = interval(rows);
	out = print(traffic_print_text, &iv);
	UT_ASSERT(out);
	UT_ASSERT(!strstr(out, "msg_len"));
	free(out);
	iv.uncounted_calls = 2;
	iv.uncounted_msgs = 48;
	out = print(traffic_print_text, &iv);
	UT_ASSERT(out);
	UT_CONTAINS(out, "  48 message(s) of 2 sendmmsg/recvmmsg call(s) not in the bytes: "
		    "their msg_len or the peer they named was not read\n");
	free(out);
	out = print(traffic_print_jsonl, &iv);
	UT_ASSERT(out);
	UT_CONTAINS(out, "{\"type\":\"traffic\",\"ts\":1700000000.123,\"boot_ns\":5000000001,"
		    "\"wall_ns\":1700000000123456789,\"uncounted_mmsg_calls\":2,"
		    "\"uncounted_mmsg_messages\":48}\n");
	UT_EQ_INT(load_schema(&schema), 0);
	UT_EQ_INT(validate_lines(&schema, out, why, sizeof(why)), 4);
	jc_free(&schema);
	free(out);
}

UT_TEST(traffic_atom_ends_with_comm)
{
	struct traffic_row rows[2];
	struct traffic_atom ta;
	const struct atom *a;

	fill_rows(rows);
	a = traffic_row_atom(&ta, 100023, &rows[0], 77);
	UT_EQ_INT(a->n_fields, 12);
	UT_EQ_STR(a->fields[10].name, "rx_calls");
	UT_EQ_STR(a->fields[11].name, "comm");
	UT_EQ_INT(a->fields[11].type, FIELD_STRING);
	UT_EQ_INT(a->fields[11].v.str.len, 2);
	UT_ASSERT(!memcmp(a->fields[11].v.str.ptr, "nc", 2));
	a = traffic_row_atom(&ta, 100023, &rows[1], 77);
	UT_EQ_INT(a->fields[11].v.str.len, 0);   /* unknown: "" */
}
