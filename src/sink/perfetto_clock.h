/* perfetto_clock.h — the Perfetto trace's ClockSnapshot packets: the clocks
 * read (MONOTONIC, BOOTTIME, REALTIME; a hook for tests), the first snapshot
 * (with the sequence's clear and its MONOTONIC default), one every
 * PF_SNAPSHOT_PERIOD_NS, one at the end, and two when BOOTTIME - MONOTONIC
 * moved (a suspend): the first at just after the last reading that still had
 * the old offset, so records made after the resume take the new one. */
#ifndef UPROBESTATS_SINK_PERFETTO_CLOCK_H
#define UPROBESTATS_SINK_PERFETTO_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "sink/perfetto_packet.h"

struct suspend_source;

/* Builtin clock ids (protos/perfetto/common/builtin_clock.proto). */
#define PF_CLOCK_REALTIME 1
#define PF_CLOCK_MONOTONIC 3
#define PF_CLOCK_BOOTTIME 6
/* A snapshot at least this often (MONOTONIC ns)… */
#define PF_SNAPSHOT_PERIOD_NS 1000000000ull
/* …and whenever BOOTTIME - MONOTONIC moved by more than this (a suspend;
 * reading the clocks alone jitters by well under a microsecond). */
#define PF_OFFSET_JUMP_NS 100000

/* Where the clocks were read last and what the last snapshot said. */
struct pf_clocks {
	int64_t snap_off;       /* BOOTTIME - MONOTONIC of the last snapshot */
	uint64_t snap_mono;     /* its MONOTONIC */
	uint64_t checked_mono;  /* the last reading (same offset as the snapshot) */
	uint64_t snapshots;     /* ClockSnapshot packets written */
	/* For tests: the clocks (MONOTONIC, BOOTTIME, REALTIME); NULL: the real ones. */
	void (*read)(void *ctx, uint64_t out[3]);
	void *read_ctx;
	const struct suspend_source *suspend;  /* where a suspend was; may be NULL */
};

/* MONOTONIC, BOOTTIME, REALTIME now (MONOTONIC the middle of two readings
 * around the others). */
void pf_clocks_read(const struct pf_clocks *c, uint64_t out[3]);
/* The sequence's first packet: it clears the incremental state, sets
 * MONOTONIC as the timestamps' clock and snapshots the clocks read in now. */
void pf_clocks_first(struct pf_clocks *c, struct pf_packet *k, const uint64_t now[3]);
/* Reads the clocks; a snapshot when the offset moved or one is due (force:
 * always). */
void pf_clocks_check(struct pf_clocks *c, struct pf_packet *k, bool force);

#endif
