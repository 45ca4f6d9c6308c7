/* statsd_sink.h — the statsd sink's row (sink_ops.h): each atom encoded
 * (statsd_encode) and queued on the socket writer (statsd_socket), which
 * sends a batch per flush; atoms that cannot be encoded are counted and go
 * out as statsd's error event, atoms statsd does not take are told to
 * sinks_options.statsd_dropped. */
#ifndef UPROBESTATS_SINK_STATSD_SINK_H
#define UPROBESTATS_SINK_STATSD_SINK_H

struct sink_ops;

extern const struct sink_ops statsd_sink;

#endif
