/* aggregate.h — reading and clearing the in-kernel aggregations
 * (bpf/records.h: struct ups_agg_key) once per interval and at exit.
 *
 * Race-free by generations: programs count into the generation agg_gen[0]
 * says.  At an interval's end the reader flips it; one loop tick later
 * (100 ms: a program that read the old generation before the flip has long
 * finished: they run in microseconds, never sleeping) it reads and deletes
 * every key of the old generation.  Should a program still write an old key
 * after that (preempted longer than a tick), its hit lands in a key of that
 * generation, which the next drain of it (two intervals on, or at exit)
 * collects: late, never lost.  At exit, after detaching, both generations
 * are drained.  Hits that found the map full are counted per probe
 * (ups_probe_counters.agg_full) and reported with the interval they fell
 * in. */
#ifndef UPROBESTATS_PROBE_AGGREGATE_H
#define UPROBESTATS_PROBE_AGGREGATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/err.h"
#include "plan/plan.h"
#include "probe/session.h"
#include "sink/sinks.h"

struct agg_reader;

struct agg_reader_opts {
	FILE *out;                /* where the tables (or JSON Lines) go */
	bool json;
	uint32_t interval_s;      /* 0: at exit only */
	int64_t uid;              /* traffic: only this uid's rows (-1: every uid) */
	struct sinks *sinks;      /* traffic: where its atoms go, with traffic_atom */
	int32_t traffic_atom;     /* traffic --atom ID (0: none) */
};

/* NULL in *out (and 0) when no probe of the plan aggregates. */
int agg_reader_open(const struct plan *plan, const struct session *s,
		    const struct agg_reader_opts *o, struct agg_reader **out, struct err *err);
/* Right after the probes are attached: traffic's sockets that were open
 * before (probe/traffic_read.h); returns how many were learned. */
size_t agg_reader_attached(struct agg_reader *r, const char *proc_dir);
/* Each loop tick (monotonic now_ns): flips at an interval's end, drains and
 * prints the previous generation one tick after a flip. */
void agg_reader_tick(struct agg_reader *r, uint64_t now_ns);
/* At exit, probes detached: the pending and the last interval.  Returns
 * the hits lost to a full map over the whole run. */
uint64_t agg_reader_final(struct agg_reader *r, uint64_t now_ns);
/* Bytes-out failures (0 or a negative errno, e said). */
int agg_reader_close(struct agg_reader *r, struct err *e);

#endif
