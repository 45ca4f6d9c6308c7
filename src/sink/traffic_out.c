#include "sink/traffic_out.h"

#include <inttypes.h>

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
	if (!iv->n_rows) {
		outbuf_puts(o, "  (no socket traffic)\n");
		outbuf_event_end(o, NULL);
		return;
	}
	outbuf_printf(o, "%8s %6s %4s %-5s %-28s %-20s %-8s %10s %10s %8s %8s\n", "PID", "UID",
		      "FD", "PROTO", "PEER", "HOST", "IFACE", "TX_BYTES", "RX_BYTES", "TX_CALLS",
		      "RX_CALLS");
	for (size_t i = 0; i < iv->n_rows; i++) {
		const struct traffic_row *r = &iv->rows[i];
		outbuf_printf(o, "%8" PRIu32 " %6" PRIu32 " %4" PRIu32 " %-5s %-28s %-20s %-8s "
			      "%10" PRIu64 " %10" PRIu64 " %8" PRIu64 " %8" PRIu64 "\n", r->pid,
			      r->uid, r->fd, r->proto, r->peer, r->host ? r->host : "-",
			      r->iface ? r->iface : "-", r->tx_bytes, r->rx_bytes, r->tx_calls,
			      r->rx_calls);
	}
	outbuf_event_end(o, NULL);
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

void traffic_print_jsonl(struct outbuf *o, const struct traffic_interval *iv)
{
	struct json_out j;
	char ts[32];
	int n = snprintf(ts, sizeof(ts), "%" PRIu64 ".%03u", iv->ts_ns / 1000000000u,
			 (unsigned)(iv->ts_ns % 1000000000u / 1000000u));

	json_init(&j, o);
	for (size_t i = 0; i < iv->n_rows; i++) {
		const struct traffic_row *r = &iv->rows[i];
		outbuf_event_begin(o);
		json_object_begin(&j);
		json_key(&j, "ts");
		json_raw(&j, ts, (size_t)n);
		u64_field(&j, "pid", r->pid);
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
		outbuf_event_end(o, NULL);
	}
	if (iv->dropped) {
		outbuf_event_begin(o);
		json_object_begin(&j);
		json_key(&j, "ts");
		json_raw(&j, ts, (size_t)n);
		u64_field(&j, "dropped_map_full", iv->dropped);
		json_object_end(&j);
		json_newline(&j);
		outbuf_event_end(o, NULL);
	}
}
