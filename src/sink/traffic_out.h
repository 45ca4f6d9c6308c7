/* traffic_out.h — printing `uprobestats traffic`'s intervals: a table of
 * the sockets by bytes (top peers first), or JSON Lines, one object per
 * process, socket and peer per interval. */
#ifndef UPROBESTATS_SINK_TRAFFIC_OUT_H
#define UPROBESTATS_SINK_TRAFFIC_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vocab/event.h"
#include "vocab/outbuf.h"

struct traffic_row {
	uint32_t pid, uid, fd;
	char comm[16];            /* the process's name (the kernel's comm); "": unknown */
	const char *proto;        /* "tcp", "udp", "unix", "inet" (type unknown), "?" */
	char peer[80];            /* "93.184.216.34:443", "[::1]:8080", "unix:/tmp/s",
				   * "?", "truncated" (the address came back cut short) */
	const char *host;         /* learned from the process's lookups; NULL: none */
	const char *iface;        /* the route's interface; NULL: unknown */
	uint64_t tx_bytes, rx_bytes, tx_calls, rx_calls;
};

struct traffic_interval {
	uint64_t seq;
	uint64_t ts_ns;           /* CLOCK_REALTIME at its end */
	uint64_t boot_ns;         /* CLOCK_BOOTTIME at its end */
	uint64_t span_ns;
	bool final;
	const struct traffic_row *rows;   /* sorted by bytes, most first */
	size_t n_rows;
	uint64_t dropped;         /* calls not counted: the map was full */
	/* sendmmsg/recvmmsg calls (counted in their rows) with messages whose
	 * bytes are in no row (their msg_len not read), and those messages */
	uint64_t uncounted_calls, uncounted_msgs;
};

/* One row as a statsd atom (traffic --atom ID): pid, uid (IS_UID), fd,
 * proto, peer, host ("" when none), iface ("" when none) as int32 and
 * strings, then tx_bytes, rx_bytes, tx_calls, rx_calls as int64, then comm
 * ("" when unknown) as a string.  The strings are not copied. */
#define TRAFFIC_ATOM_FIELDS 12
struct traffic_atom {
	struct field fields[TRAFFIC_ATOM_FIELDS];
	struct atom atom;
};

const struct atom *traffic_row_atom(struct traffic_atom *ta, int32_t atom_id,
				    const struct traffic_row *r, uint64_t boot_ns);

void traffic_print_text(struct outbuf *o, const struct traffic_interval *iv);
void traffic_print_jsonl(struct outbuf *o, const struct traffic_interval *iv);

#endif
