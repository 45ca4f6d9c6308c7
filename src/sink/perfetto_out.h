/* perfetto_out.h — the trace sink's Perfetto format (--trace-format perfetto,
 * FILE.pftrace): Perfetto's own protobuf, `Trace { repeated TracePacket
 * packet = 1; }`, written packet by packet into the trace's output buffer.
 * This module writes the track events (instants, slices, sections,
 * counters, drops, the summary) with their names and annotations; its parts:
 * perfetto_ann (annotations and call stacks), perfetto_enc.h (inline field
 * writers), perfetto_packet (one packet into the output), perfetto_clock (the clock
 * snapshots), perfetto_track (the tracks and their descriptors),
 * perfetto_intern (interned strings), perfetto_proto.h (field numbers).
 *
 * The tool's packet sequence (trusted_packet_sequence_id 1); its first packet clears
 * the incremental state, sets trace_packet_defaults.timestamp_clock_id =
 * MONOTONIC (3) — the records' own clock, bpf_ktime_get_ns — and carries the
 * first ClockSnapshot (MONOTONIC, BOOTTIME, REALTIME), so trace processor
 * puts every packet on BOOTTIME, the clock of an on-device system trace.
 * More snapshots follow: every second of the run, at the end, and whenever
 * BOOTTIME - MONOTONIC moved (a suspend; perfetto_clock.h).
 *
 * Slices join the threads of a system trace on their thread tracks; async
 * sections, counters, drops, losses and the summary have their own tracks
 * (perfetto_track.h).  Event names, annotation names, the probe's
 * signature and call stacks (callstack_iid: Callstacks, Frames, function
 * names, Mappings, mapping paths) are interned (InternedData in the packet that first
 * uses them, SEQ_NEEDS_INCREMENTAL_STATE on every packet after the first).
 * A busy track's events go on a sequence of their own, with its own
 * interned data and incremental clock, and its defaults naming the track
 * (perfetto_packet.h, perfetto_track.h). */
#ifndef UPROBESTATS_SINK_PERFETTO_OUT_H
#define UPROBESTATS_SINK_PERFETTO_OUT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "sink/perfetto_ann.h"
#include "sink/perfetto_clock.h"
#include "sink/perfetto_intern.h"
#include "sink/perfetto_packet.h"
#include "sink/perfetto_track.h"
#include "sink/probe_label.h"
#include "sink/summary.h"
#include "vocab/event.h"
#include "vocab/outbuf.h"

struct pf_out {
	struct pf_packet k;
	struct pf_ann a;                     /* annotations; a.w: the event's end */
	struct pf_tracks tracks;
	struct pf_clocks clk;
	uint8_t *eb;                         /* the track event being written */
	size_t eb_cap;
	bool in_batch;                       /* an event came since the last flush */
};

int pf_open(struct pf_out *p, struct outbuf *o, struct err *e);
/* For tests, before pf_open: the clocks (MONOTONIC, BOOTTIME, REALTIME)
 * from read; NULL: the real ones. */
/* Where a suspend during the run was (sink_types.h's suspend). */
void pf_set_suspend(struct pf_out *p, const struct suspend_source *s);
void pf_set_clocks(struct pf_out *p, void (*read)(void *ctx, uint64_t out[3]), void *ctx);
/* The event's MONOTONIC ns (its record's own clock). */
uint64_t pf_mono(const struct pf_out *p, const struct event *ev);
/* The latest timestamp written. */
uint64_t pf_last_mono(const struct pf_out *p);
/* The thread's (and its process's) track, described when new or renamed. */
void pf_thread(struct pf_out *p, const struct event *ev);
void pf_instant(struct pf_out *p, const struct event *ev, struct label l);
/* A call with both ends (a call_return record, a call unwound or still
 * running at exit): a slice from its entry to its return; mark (NULL: none),
 * an annotation `mark: true` on its end ("unwound", "running_at_exit"). */
void pf_complete(struct pf_out *p, const struct event *ev, struct label l, const char *mark);
void pf_begin(struct pf_out *p, const struct event *ev, struct label l);
/* Ends the thread's innermost slice at mono (unfinished: marked so). */
void pf_end(struct pf_out *p, uint32_t pid, uint32_t tid, uint64_t mono, bool unfinished);
void pf_drop(struct pf_out *p, const struct event *ev);
void pf_section(struct pf_out *p, const struct event *ev);
/* A counter of the run (aggregation, traffic) on its counter track. */
void pf_counter(struct pf_out *p, const struct counter_sample *c);
/* The summary, the trace's last event packets (on the tool's track). */
void pf_summary(struct pf_out *p, const struct probe_stats *rows, size_t n, uint64_t unclosed,
		uint64_t orphan_exits);
/* After each drain: the clocks are read (a snapshot when due). */
void pf_flush(struct pf_out *p);
/* The last snapshot; frees (the outbuf is the caller's). */
void pf_close(struct pf_out *p);

#endif
