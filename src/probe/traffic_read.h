/* traffic_read.h — the traffic program's map (bpf/records.h: struct
 * ups_traffic_key) read and cleared per generation, as probe/aggregate.h
 * does for agg_data, and turned into rows: the peer as text, the protocol,
 * the interface the route to the peer goes out of (/proc/net/route; loopback
 * addresses: lo). */
#ifndef UPROBESTATS_PROBE_TRAFFIC_READ_H
#define UPROBESTATS_PROBE_TRAFFIC_READ_H

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "plan/plan.h"
#include "probe/session.h"
#include "vocab/outbuf.h"

struct traffic_reader;

/* uid: only that uid's rows (-1: all).  NULL in *out when no probe runs
 * the traffic program. */
int traffic_reader_open(const struct plan *plan, const struct session *s, int64_t uid,
			struct traffic_reader **out, struct err *err);
/* Reads and deletes generation gen's keys (appending to what was read). */
void traffic_reader_collect(struct traffic_reader *r, uint32_t gen);
/* Prints what was collected as one interval and forgets it. */
void traffic_reader_print(struct traffic_reader *r, struct outbuf *o, bool json, uint64_t seq,
			  uint64_t ts_ns, uint64_t span_ns, bool final, uint64_t dropped);
void traffic_reader_close(struct traffic_reader *r);

#endif
