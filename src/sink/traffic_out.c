#include "sink/traffic_out.h"

#include <inttypes.h>
#include <string.h>

#include "vocab/json_out.h"

void traffic_print_text(struct outbuf *o, const struct traffic_interval *iv)
{
	outbuf_event_begin(o);
	outbuf_printf(o, "=== traffic %s %" PRIu64 " (%" PRIu64 ".%03u s)\n",
		      iv->final ? "at exit, interval" : "interval", iv->seq,
		      iv->span_ns / 1000000000u, (unsigned)(iv->span_ns % 1000000000u / 1000000u));
	if (iv->dropped)
		outbuf_printf(o, "  %" PRIu64 " call(s) not counted: the map was full (raise "
			      "--agg-keys)\n", iv->dropped);
	if (iv->uncounted_msgs)
		outbuf_printf(o, "  %" PRIu64 " message(s) of %" PRIu64 " sendmmsg/recvmmsg call(s) "
			      "not in the bytes: their msg_len or the peer they named was not "
			      "read\n", iv->uncounted_msgs, iv->uncounted_calls);
	if (!iv->n_rows) {
		outbuf_puts(o, "  (no socket traffic)\n");
		outbuf_event_end(o, NULL);
		return;
	}
	outbuf_printf(o, "%8s %-15s %6s %4s %-5s %-28s %-20s %-8s %10s %10s %8s %8s\n", "PID",
		      "COMM", "UID", "FD", "PROTO", "PEER", "HOST", "IFACE", "TX_BYTES", "RX_BYTES",
		      "TX_CALLS", "RX_CALLS");
	for (size_t i = 0; i < iv->n_rows; i++) {
		const struct traffic_row *r = &iv->rows[i];
		outbuf_printf(o, "%8" PRIu32 " %-15s %6" PRIu32 " %4" PRIu32 " %-5s %-28s %-20s %-8s "
			      "%10" PRIu64 " %10" PRIu64 " %8" PRIu64 " %8" PRIu64 "\n", r->pid,
			      r->comm[0] ? r->comm : "-", r->uid, r->fd, r->proto, r->peer,
			      r->host ? r->host : "-",
			      r->iface ? r->iface : "-", r->tx_bytes, r->rx_bytes, r->tx_calls,
			      r->rx_calls);
	}
	outbuf_event_end(o, NULL);
}

static struct field atom_str(const char *name, const char *s)
{
	s = s ? s : "";
	return (struct field){ .name = name, .type = FIELD_STRING,
			       .v.str = { .ptr = s, .len = (uint32_t)strlen(s) } };
}

static struct field atom_i64(const char *name, uint64_t v)
{
	return (struct field){ .name = name, .type = FIELD_INT64, .v.i64 = (int64_t)v };
}

static struct field atom_i32(const char *name, uint32_t v)
{
	return (struct field){ .name = name, .type = FIELD_INT32, .v.i32 = (int32_t)v };
}

const struct atom *traffic_row_atom(struct traffic_atom *ta, int32_t atom_id,
				    const struct traffic_row *r, uint64_t boot_ns)
{
	static const bool is_uid[TRAFFIC_ATOM_FIELDS] = { [1] = true };
	struct field *f = ta->fields;

	f[0] = atom_i32("pid", r->pid);
	f[1] = atom_i32("uid", r->uid);
	f[2] = atom_i32("fd", r->fd);
	f[3] = atom_str("proto", r->proto);
	f[4] = atom_str("peer", r->peer);
	f[5] = atom_str("host", r->host);
	f[6] = atom_str("iface", r->iface);
	f[7] = atom_i64("tx_bytes", r->tx_bytes);
	f[8] = atom_i64("rx_bytes", r->rx_bytes);
	f[9] = atom_i64("tx_calls", r->tx_calls);
	f[10] = atom_i64("rx_calls", r->rx_calls);
	f[11] = atom_str("comm", r->comm);
	ta->atom = (struct atom){ .atom_id = atom_id, .boot_ns = boot_ns, .fields = f,
				  .n_fields = TRAFFIC_ATOM_FIELDS, .is_uid = is_uid };
	return &ta->atom;
}

static void u64_field(struct json_out *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_u64(j, v);
}

static void str_field(struct json_out *j, const char *key, const char *v)
{
	json_key(j, key);
	json_cstring(j, v);
}

/* "type", then the interval's end: "ts" (REALTIME s, ms), "boot_ns",
 * "wall_ns" (as an event's). */
static void row_head(struct json_out *j, const struct traffic_interval *iv, const char *ts,
		     size_t n)
{
	json_object_begin(j);
	str_field(j, "type", "traffic");
	json_key(j, "ts");
	json_raw(j, ts, n);
	u64_field(j, "boot_ns", iv->boot_ns);
	json_key(j, "wall_ns");
	json_i64(j, (int64_t)iv->ts_ns);
}

void traffic_print_jsonl(struct outbuf *o, const struct traffic_interval *iv)
{
	struct json_out j;
	char ts[32];
	int n = snprintf(ts, sizeof(ts), "%" PRIu64 ".%03u", iv->ts_ns / 1000000000u,
			 (unsigned)(iv->ts_ns % 1000000000u / 1000000u));

	json_init(&j, o);
	/* The interval's lines are one event: written whole or lost whole
	 * (counted), never cut at a queue that a table printed at once fills. */
	outbuf_event_begin(o);
	for (size_t i = 0; i < iv->n_rows; i++) {
		const struct traffic_row *r = &iv->rows[i];
		row_head(&j, iv, ts, (size_t)n);
		u64_field(&j, "pid", r->pid);
		str_field(&j, "comm", r->comm[0] ? r->comm : NULL);
		u64_field(&j, "uid", r->uid);
		u64_field(&j, "fd", r->fd);
		str_field(&j, "proto", r->proto);
		str_field(&j, "peer", r->peer);
		str_field(&j, "host", r->host);
		str_field(&j, "iface", r->iface);
		u64_field(&j, "tx_bytes", r->tx_bytes);
		u64_field(&j, "rx_bytes", r->rx_bytes);
		u64_field(&j, "tx_calls", r->tx_calls);
		u64_field(&j, "rx_calls", r->rx_calls);
		json_object_end(&j);
		json_newline(&j);
	}
	if (iv->dropped) {
		row_head(&j, iv, ts, (size_t)n);
		u64_field(&j, "dropped_map_full", iv->dropped);
		json_object_end(&j);
		json_newline(&j);
	}
	if (iv->uncounted_msgs) {
		row_head(&j, iv, ts, (size_t)n);
		u64_field(&j, "uncounted_mmsg_calls", iv->uncounted_calls);
		u64_field(&j, "uncounted_mmsg_messages", iv->uncounted_msgs);
		json_object_end(&j);
		json_newline(&j);
	}
	outbuf_event_end(o, NULL);
}
