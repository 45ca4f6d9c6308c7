/* profile.h — the flat profile sink: at exit, one row per method and
 * process with calls, total and self time, mean, p50, p99, max and unwound
 * calls, sorted by total time, as an aligned table or one JSON line
 * ({"type":"profile","methods":[…]}).
 *
 * Times come from return events (call_return: entry time and duration).
 * Self time is found by nesting on each thread: a call's children are the
 * calls of the same thread that returned before it and entered after it, so
 * a per-thread stack of finished calls, popped by each call that encloses
 * them, gives every call its direct children's total.  Calls left by an
 * exception (unwound) have no duration: their time stays in the caller's
 * self time; their count comes from the probe counters at exit.  Calls are
 * the entry events when the method has an entry probe, else its returns
 * plus unwound calls.  p50/p99 are exact up to 1,048,576 calls per row, then
 * from a uniform sample of that many.  The per-thread stack keeps at most
 * 4,096 finished calls that no traced caller has claimed yet; past that the
 * oldest half is merged into one entry (a still running caller that entered
 * in the middle of them would then count too little child time). */
#ifndef UPROBESTATS_SINK_PROFILE_H
#define UPROBESTATS_SINK_PROFILE_H

#include "sink/sink_ops.h"

extern const struct sink_ops profile_sink;

#endif
