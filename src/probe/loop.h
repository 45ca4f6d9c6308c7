/* loop.h — the event loop: one thread, epoll over the ring buffers, a
 * periodic timerfd (drain, deadlines, target liveness) and a signalfd.
 * Records are checked, decoded and handed to the output callbacks by
 * probe/intake.h. */
#ifndef UPROBESTATS_PROBE_LOOP_H
#define UPROBESTATS_PROBE_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "plan/plan.h"
#include "probe/session.h"
#include "vocab/event.h"

struct suspend_watch;

struct loop_output {
	void (*event)(void *ctx, const struct event *ev);
	void (*atom)(void *ctx, const struct atom *atom);
	void (*flush)(void *ctx);  /* after each drained batch: push output out */
	/* The run has ended and the last records are about to be drained; sig is
	 * the signal that ended it, 0 otherwise.  May be NULL. */
	void (*ending)(void *ctx, int sig);
	/* After each flush: true when no output is left to write to (the only
	 * one's reader has gone, EPIPE), which ends the run.  May be NULL. */
	bool (*outputs_gone)(void *ctx);
	/* An output does not keep up: records stay in the kernel's buffer (which
	 * drops and counts what it cannot hold) until it does.  May be NULL. */
	bool (*congested)(void *ctx);
	/* At the end, when an output does not keep up: let it take what it holds,
	 * waiting a bounded time for a reader that takes nothing.  May be NULL. */
	void (*settle)(void *ctx);
	void *ctx;
};

struct loop_opts {
	uint32_t flush_ms;        /* drain period; bounds event latency (default 100); the
				   * duration and the targets are checked every 100 ms
				   * however long it is */
	const char *proc_dir;     /* "/proc" */
	void (*notice)(void *ctx, const char *msg); /* task ended, target exited … */
	void *notice_ctx;
	/* Called once the output buffers are being consumed and before waiting:
	 * attach the probes here.  A negative return ends the run with err. */
	int (*start)(void *ctx, struct err *err);
	void *start_ctx;
	/* Called on every timer tick (100 ms at most apart) with CLOCK_MONOTONIC
	 * ns: the in-kernel aggregations' intervals.  May be NULL. */
	void (*tick)(void *ctx, uint64_t now_ns);
	void *tick_ctx;
	bool android;             /* ANY_APP_PROCESS_ON_START means uid >= 10000 */
	/* Where a suspend during the run was (probe/suspend_watch.h), so that
	 * records made before it keep the clock offsets of before it; NULL or
	 * off: the last clock reading before it bounds it. */
	const struct suspend_watch *suspend;
	uint32_t watch_ms;        /* how often waiting tasks look for their process (10) */
};

enum task_end {
	TASK_RUNNING = 0,
	TASK_END_DURATION,
	TASK_END_TARGETS_EXITED,
	TASK_END_SIGNAL,
	TASK_END_NEVER_STARTED,   /* *_ON_START: no matching process within the duration */
	TASK_END_ERROR,           /* attaching to the started process failed */
	TASK_END_OUTPUT_GONE,     /* the only output's reader went away (EPIPE) */
};

struct loop_task_stats {
	uint64_t start_boot_ns, end_boot_ns;
	enum task_end end;
	bool waiting;             /* *_ON_START and its process has not started yet */
	pid_t started_pid;        /* the process it attached to once it started */
};

struct loop_stats {
	uint64_t *delivered;      /* per probe id */
	uint64_t malformed;       /* records of the wrong size or unknown kind/probe */
	uint64_t lost;            /* perf buffer: samples the kernel could not store */
	/* call stacks' mapping records (probe/intake.h): lost by the kernel,
	 * malformed, not kept (over the bound), files gone with their process */
	uint64_t mmap_lost, mmap_malformed, mmap_not_kept, mmap_files_unopened;
	struct loop_task_stats *tasks;
	int signal;               /* the signal that ended the run, 0 if none */
};

/* Runs until every task has ended or a signal arrives.  SIGINT, SIGTERM and
 * SIGHUP must be blocked by the caller (they are read from a signalfd).
 * stats arrays are allocated here; free with loop_stats_free(). */
int loop_run(const struct plan *plan, struct session *s, const struct loop_opts *opts,
	     const struct loop_output *out, struct loop_stats *stats, struct err *err);
void loop_stats_free(struct loop_stats *stats);
const char *task_end_name(enum task_end e);

#endif
