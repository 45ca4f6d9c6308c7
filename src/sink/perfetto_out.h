/* perfetto_out.h — the trace sink's Perfetto format (--trace-format perfetto,
 * FILE.pftrace): Perfetto's own protobuf, `Trace { repeated TracePacket
 * packet = 1; }`, written packet by packet into the trace's output buffer.
 *
 * One packet sequence (trusted_packet_sequence_id 1); its first packet clears
 * the incremental state, sets trace_packet_defaults.timestamp_clock_id =
 * MONOTONIC (3) — the records' own clock, bpf_ktime_get_ns — and carries the
 * first ClockSnapshot (MONOTONIC, BOOTTIME, REALTIME), so trace processor
 * puts every packet on BOOTTIME, the clock of an on-device system trace.
 * More snapshots follow: every second of the run, at the end, and whenever
 * BOOTTIME - MONOTONIC moved (a suspend): then first one at just after the
 * last clock reading that still had the old offset, so records made after
 * the resume take the new one.
 *
 * Tracks: a process track (ProcessDescriptor pid, name) and a thread track
 * per thread (ThreadDescriptor pid, tid, name; described again when the name
 * changes) so the slices join the threads of a system trace; async sections
 * on process-scoped tracks keyed by (pid, name, cookie); counters on counter
 * tracks keyed by (pid, name); drops, losses and the summary on the tool's
 * own track "uprobestats".  Every track is described before its first event.
 * Event names, annotation names and the probe's signature are interned
 * (InternedData in the packet that first uses them, SEQ_NEEDS_INCREMENTAL_STATE
 * on every packet after the first). */
#ifndef UPROBESTATS_SINK_PERFETTO_OUT_H
#define UPROBESTATS_SINK_PERFETTO_OUT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "common/wire.h"
#include "sink/probe_label.h"
#include "sink/summary.h"
#include "vocab/event.h"
#include "vocab/outbuf.h"

/* Builtin clock ids (protos/perfetto/common/builtin_clock.proto). */
#define PF_CLOCK_REALTIME 1
#define PF_CLOCK_MONOTONIC 3
#define PF_CLOCK_BOOTTIME 6
/* A snapshot at least this often (MONOTONIC ns)… */
#define PF_SNAPSHOT_PERIOD_NS 1000000000ull
/* …and whenever BOOTTIME - MONOTONIC moved by more than this (a suspend;
 * reading the clocks alone jitters by well under a microsecond). */
#define PF_OFFSET_JUMP_NS 100000

/* Names interned at most per table; past it, names are written inline. */
#define PF_MAX_INTERNED 65536u

struct pf_istr;
struct pf_track;

struct pf_intern {
	struct pf_istr *tab;
	size_t cap, used;
};

/* Where the clocks were read last and what the last snapshot said. */
struct pf_clocks {
	int64_t snap_off;       /* BOOTTIME - MONOTONIC of the last snapshot */
	uint64_t snap_mono;     /* its MONOTONIC */
	uint64_t checked_mono;  /* the last reading (same offset as the snapshot) */
};

/* iids of strings that live as long as the sink (probe labels, field
 * names, literals) by their address: no hashing per event. */
#define PF_PTR_CACHE 256
struct pf_ptr_iid {
	const void *ptr;
	size_t n;
	uint32_t table;
	uint64_t iid;
};

struct pf_out {
	struct outbuf *o;
	struct pf_ptr_iid ptr_cache[PF_PTR_CACHE];
	struct wire_buf pkt, ev, interned;   /* scratch: packet, track event, new names */
	struct pf_intern names, ann_names, strings;
	struct pf_track *tracks;             /* described tracks by uuid */
	size_t tcap, tused;
	uint64_t uuid_base;
	struct pf_clocks clk;
	bool in_batch;                       /* an event came since the last flush */
	uint64_t last_mono;                  /* latest timestamp written */
	uint64_t snapshots;                  /* ClockSnapshot packets written */
	/* For tests: the clocks (MONOTONIC, BOOTTIME, REALTIME); NULL: the real ones. */
	void (*read_clocks)(void *ctx, uint64_t out[3]);
	void *read_clocks_ctx;
};

int pf_open(struct pf_out *p, struct outbuf *o, struct err *e);
/* The event's MONOTONIC ns (its record's own clock). */
uint64_t pf_mono(const struct pf_out *p, const struct event *ev);
/* The thread's (and its process's) track, described when new or renamed. */
void pf_thread(struct pf_out *p, const struct event *ev);
void pf_instant(struct pf_out *p, const struct event *ev, struct label l);
/* A uretprobe record: a slice from its entry to its return. */
void pf_complete(struct pf_out *p, const struct event *ev, struct label l);
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
