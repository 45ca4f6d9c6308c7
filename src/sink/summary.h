/* summary.h — the exit summary: per task and probe, what was seen, delivered
 * and lost, and what each sink could not do.
 *
 * The event loop owns the per-probe counters (it sees the BPF hit counters
 * and the ring-buffer drop records) and passes them in as struct
 * probe_stats; the sink set adds what it knows (statsd delivery, loss
 * reports, write errors) as struct sink_report.  Printed as an aligned table
 * on stderr, and as one "summary" object in the JSON Lines stream. */
#ifndef UPROBESTATS_SINK_SUMMARY_H
#define UPROBESTATS_SINK_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sink/sections.h"
#include "sink/statsd_socket.h"
#include "vocab/event.h"
#include "vocab/json_out.h"

/* One row per attached probe, filled by the event loop. */
struct probe_stats {
	const struct probe_desc *probe;
	uint64_t hits;            /* probe hits counted in the kernel */
	uint64_t delivered;       /* events handed to the sinks */
	uint64_t dropped_kernel;  /* records lost before user space (ring full, perf lost) */
	uint64_t dropped_sink;    /* events or atoms a sink could not deliver */
	uint64_t duration_ns;     /* time the probe was attached and polled */
	bool exit_probes;         /* the probe uses exit probes: the two counters below
				   * are shown (and only then, so other rows stay as
				   * they were) */
	uint64_t unwound;         /* exit probes: calls left without an exit (exception,
				   * longjmp), never given a duration */
	uint64_t untracked;       /* exit probes: entries not kept (pending stack full) */
	uint64_t running;         /* exit probes: calls entered and not left at exit */
	uint64_t running_ns;      /* the longest of them had run this long */
	bool uretprobe;           /* a return program on the uretprobe path: unpaired shown */
	bool in_kernel;           /* counted in the kernel (aggregate, traffic): it
				   * delivers no event, and DELIVERED says so */
	uint64_t unpaired;        /* uretprobe path: returns without an entry time (a
				   * recursive call overwrote it, evicted, began before
				   * attach): no record */
};

/* Call stacks' mapping records (--stack: the kernel's mapping records the
 * unwinder reads, sys/perf_mmap, as the code cache kept them). */
struct stack_mappings_report {
	bool on;                  /* a probe takes call stacks: the summary has them */
	uint64_t lost;            /* records the kernel dropped (its ring was full) */
	uint64_t malformed;       /* read but not of a record's shape, or no memory for them */
	uint64_t not_kept;        /* mappings or processes over the code cache's bound */
	uint64_t files_unopened;  /* mapped files gone with their process before opened */
};

#define SINK_REPORT_MAX_ERRORS 4

/* What the sinks themselves observed (sinks_report() fills it). */
struct sink_report {
	bool statsd_on;
	const char *statsd_path;
	struct statsd_writer_stats statsd;
	uint64_t statsd_invalid;   /* atoms sent as the error event (too large, ...) */
	int32_t statsd_unreported; /* drops statsd was never told about */
	uint64_t trace_unclosed;   /* enter slices still open at exit (closed at the end) */
	uint64_t trace_orphan_exits; /* exits with no open enter on their thread */
	struct sections_report sections; /* trace-marker calls (sections) */
	struct stack_mappings_report stack_mappings; /* set by sinks_set_stack_mappings */
	size_t n_errors;
	char errors[SINK_REPORT_MAX_ERRORS][ERR_MSG_MAX]; /* write failures, one line each */
	int error_codes[SINK_REPORT_MAX_ERRORS];          /* their negative errnos */
};

/* The aligned table and the sink lines, on f (stderr in the tool). */
void summary_text(FILE *f, const struct probe_stats *rows, size_t n,
		  const struct sink_report *r, uint64_t run_ns);
/* {"type":"summary", ...} without the trailing newline; boot_ns and wall_ns:
 * when it is written (the run's end), on CLOCK_BOOTTIME and CLOCK_REALTIME, as
 * an event's time. */
void summary_json(struct json_out *j, const struct probe_stats *rows, size_t n,
		  const struct sink_report *r, uint64_t run_ns, uint64_t boot_ns,
		  int64_t wall_ns);

#endif
