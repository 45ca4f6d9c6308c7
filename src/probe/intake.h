/* intake.h — what the event loop does with the records it consumes: each
 * record's length checked against its kind (a wrong one counted as
 * malformed, never decoded), a legacy object's raw Strings made UTF-8, a
 * stack record unwound, the fields decoded into an event and an atom for the
 * outputs; perf buffer framing and lost samples; the kernel's per-probe drop
 * counts turned into drop events.  The loop (loop.h) owns the buffers, the
 * timers and the signals, and hands each record in here. */
#ifndef UPROBESTATS_PROBE_INTAKE_H
#define UPROBESTATS_PROBE_INTAKE_H

#include <bpf/libbpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "plan/plan.h"
#include "probe/reorder.h"
#include "probe/session.h"
#include "vocab/event.h"

struct perf_event_header;

/* Where decoded records go (the loop's outputs). */
struct intake_output {
	void (*event)(void *ctx, const struct event *ev);
	void (*atom)(void *ctx, const struct atom *atom);
	/* An output does not keep up: the drain stops.  May be NULL. */
	bool (*congested)(void *ctx);
	void *ctx;
};

/* BOOTTIME - MONOTONIC grown by more than this between two readings: a
 * suspend (NTP never slews BOOTTIME apart from MONOTONIC). */
#define INTAKE_SUSPEND_JUMP_NS 100000

struct suspend_watch;

struct intake {
	const struct plan *plan;
	struct session *session;
	struct intake_output out;
	uint64_t *delivered;      /* per probe id (the loop's stats) */
	uint64_t *malformed;      /* records of the wrong size or unknown kind/probe */
	uint64_t *lost;           /* perf buffer: samples the kernel could not store */
	struct name_cache *names; /* pid -> process name for events */
	struct stacks *stacks;    /* when a probe records stacks: the unwinder's caches */
	struct perf_mmap *mmaps;  /* with stacks: the kernel's mapping records */
	struct code_cache *code;  /* the session's, which they feed */
	uint64_t mmaps_upto;      /* CLOCK_MONOTONIC: the mappings made before it are read */
	char mmap_error[320];     /* why there are none ("" when there are) */
	struct stack_trace *trace; /* the frames of the record being delivered */
	int64_t mono_to_boot;     /* CLOCK_BOOTTIME - CLOCK_MONOTONIC */
	int64_t mono_to_wall;     /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	/* Across a suspend (BOOTTIME - MONOTONIC grew): records stamped before
	 * resumed_mono were made before it and keep the offsets read before it
	 * (a record can wait in a buffer through the suspend). */
	const struct suspend_watch *suspend;  /* where the suspend was (NULL: unknown) */
	int64_t before_boot, before_wall;     /* the offsets before the last suspend */
	uint64_t resumed_mono;                /* 0: no suspend seen */
	uint64_t clocks_mono;                 /* MONOTONIC of the last reading */
	int64_t drain_until;      /* CLOCK_MONOTONIC_COARSE end of this drain's slice; 0: none */
	bool congested;           /* an output does not keep up: records wait in the kernel */
	bool perf_cut;            /* a perf buffer's drain stopped at the slice's end */
	bool reorder_on;          /* perf buffers: records go through held, in time order */
	struct reorder held;      /* records read from the perf buffers, not yet delivered */
	uint64_t *drops_seen;     /* per probe: kernel drops already written as drop records */
	int64_t drops_checked;    /* CLOCK_MONOTONIC of the last look at the counters */
};

/* Sets up in (plan, session, out and the counters filled in by the caller):
 * the process-name cache with the known targets, the unwinder when a probe
 * records stacks, the clock offsets. */
int intake_open(struct intake *in, const char *proc_dir, struct err *err);
void intake_close(struct intake *in);

/* bpf_ktime_get_ns() is CLOCK_MONOTONIC; statsd and traces want boot time.
 * The offsets only move across suspend, so refreshing them per tick is enough. */
void intake_refresh_clocks(struct intake *in);

/* The known targets' mappings for the unwinder (nothing without stacks). */
void intake_prime_stacks(struct intake *in);

/* The mapping records' descriptors to poll (none without stacks). */
size_t intake_mmap_fds(const struct intake *in, const int **fds);
/* Reads the mapping records so far into the code cache: before the records
 * that could need them. */
void intake_drain_mmaps(struct intake *in);
/* After a drain that read every buffer to its end, begun at CLOCK_MONOTONIC
 * began_ns: what no record still to come can need is dropped. */
void intake_drained(struct intake *in, int64_t began_ns);

/* What the mapping records lost or could not keep (all 0 without stacks). */
struct intake_mmap_losses {
	uint64_t lost;             /* the kernel's PERF_RECORD_LOST counts */
	uint64_t malformed;
	uint64_t not_kept;         /* mappings over the bound, processes forgotten */
	uint64_t files_unopened;   /* files gone with their process */
};
void intake_mmap_losses(const struct intake *in, struct intake_mmap_losses *out);

/* A ring buffer's record (ctx: the intake): 0, or -EAGAIN when the drain
 * should stop (its slice is over, or an output does not keep up). */
int intake_record(void *ctx, void *data, size_t size);

/* A perf buffer's raw event (ctx: the intake).  With reorder_on a sample is
 * held (probe/reorder.h) until intake_release hands it out. */
enum bpf_perf_event_ret intake_perf_event(void *ctx, int cpu, struct perf_event_header *h);

/* Delivers the held records stamped before watermark (CLOCK_MONOTONIC), in
 * time order: 0, or -EAGAIN when the drain should stop (its slice is over,
 * or an output does not keep up); the rest stay held. */
int intake_release(struct intake *in, uint64_t watermark);

/* New kernel drops become drop events: at most once a second, or now. */
void intake_report_drops(struct intake *in, bool now);

#endif
