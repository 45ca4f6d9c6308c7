/* traffic_read.h — the traffic program's map (bpf/records.h: struct
 * ups_traffic_key) read and cleared per generation, as probe/aggregate.h
 * does for agg_data, and turned into rows: the peer as text, the protocol,
 * the interface the route to the peer goes out of (/proc/net/route; loopback
 * addresses: lo), the host name the process looked up for it (the
 * traffic_hosts map its getaddrinfo probe fills). */
#ifndef UPROBESTATS_PROBE_TRAFFIC_READ_H
#define UPROBESTATS_PROBE_TRAFFIC_READ_H

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "plan/plan.h"
#include "probe/session.h"
#include "sink/sinks.h"
#include "vocab/outbuf.h"

struct traffic_reader;

/* uid: only that uid's rows (-1: all); atom_id (0: none): each row of
 * each interval also goes to sinks as that atom (sink/traffic_out.h).
 * NULL in *out when no probe runs the traffic program. */
int traffic_reader_open(const struct plan *plan, const struct session *s, int64_t uid,
			struct sinks *sinks, int32_t atom_id, struct traffic_reader **out,
			struct err *err);
/* Right after the attach: the sockets the traced processes (every process
 * when a task traces all) have open already, from /proc (sys/proc_socks.h),
 * made known to the programs as if socket()/connect() had been seen.  A
 * socket a probe saw meanwhile is left as it is.  Returns how many. */
size_t traffic_reader_known_sockets(struct traffic_reader *r, const struct plan *plan,
				    const char *proc_dir);
/* Reads and deletes generation gen's keys (appending to what was read). */
void traffic_reader_collect(struct traffic_reader *r, uint32_t gen);
/* Prints what was collected as one interval (ending at REALTIME ts_ns,
 * MONOTONIC mono_ns) and forgets it; its bytes per process and per peer go
 * to the sinks as counters (sinks_counter). */
void traffic_reader_print(struct traffic_reader *r, struct outbuf *o, bool json, uint64_t seq,
			  uint64_t ts_ns, uint64_t mono_ns, uint64_t span_ns, bool final,
			  uint64_t dropped);
void traffic_reader_close(struct traffic_reader *r);

#endif
