/* session.h — the Attachments stage: the plan's probes loaded and attached.
 *
 * Each probe gets its own instance of its program object (so the program
 * knows its probe id, for per-probe counters and event attribution); all
 * instances of one object share its maps (ring buffers, counters).  Loading
 * and attaching are separate steps, each all or nothing, and errors name the
 * probe. */
#ifndef UPROBESTATS_PROBE_SESSION_H
#define UPROBESTATS_PROBE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"
#include "plan/plan.h"
#include "records.h"

enum output_mode {
	OUTPUT_AUTO = 0,          /* ring buffer when the kernel has it (5.8+) */
	OUTPUT_RINGBUF,
	OUTPUT_PERFBUF,           /* perf event array (any kernel); --force-perfbuf */
};

struct session_opts {
	uint32_t ringbuf_bytes;   /* per output; rounded up to a power of two */
	uint32_t wakeup_bytes;    /* 0: a quarter of the buffer */
	bool bpf_pid_filter;      /* also filter by tgid inside the program */
	enum output_mode output;
	bool force_tracefs;       /* tracefs uprobe_events even where the uprobe PMU exists */
	bool force_pmu;           /* uprobe PMU perf events even where uprobe_multi links exist */
	bool legacy;              /* the legacy objects (kernels before 5.5): perf buffer only */
	bool no_perf_link;        /* never BPF perf links (--target-kernel before 5.15) */
	const char *tracefs_root; /* prefix for the tracefs paths (tests); NULL: "/" */
	const char *proc_dir;     /* "/proc" unless testing */
	/* The run's code cache (code/codecache.h), which planning read the
	 * files through: the unwinder and the kernel walk's table use it (not
	 * owned; it must outlive the session).  Required when a probe records
	 * stacks. */
	struct code_cache *code;
	/* Asked between probes while attaching: true stops the attach (a signal
	 * is pending), which then detaches what it did and fails with -EINTR. */
	bool (*interrupted)(void);
	/* Given the whole verifier log of a program the kernel refused (the
	 * error quotes only its reason); may be NULL. */
	void (*verifier_log)(const char *prog, const char *log);
};

/* One output buffer the loop should consume: a ring buffer, or a perf event
 * array carrying the same records. */
struct session_ring {
	int map_fd;
	bool perf;                /* map_fd is a PERF_EVENT_ARRAY */
	bool legacy;              /* records from legacy objects (raw UTF-16 Strings) */
	uint32_t bytes;           /* requested buffer size */
	uint32_t wakeup_bytes;
	const struct catalog_object *obj;
	const char *map;          /* "call_detail_buf" */
};

struct session;

/* Loads every probe's program (nothing is attached yet). */
int session_open(const struct plan *plan, const struct session_opts *opts,
		 struct session **out, struct err *err);
/* Attaches every probe, or none: on failure what was attached is detached.
 * Call it once the consumers of the output buffers exist, so no early
 * record finds its buffer missing. */
int session_attach(struct session *s, struct err *err);
/* Attaches task task_index's probes to one more process (a task waiting for
 * its process to start), all or nothing. */
int session_attach_task_pid(struct session *s, uint32_t task_index, pid_t pid, struct err *err);
/* Stops every program at once: a flag in each object's ups_stop map, then a
 * wait until no program that started before it still runs.  The counters
 * are final from here; the probes stay attached (a hit costs the traced
 * process its trap) until session_detach_all or session_close. */
void session_stop(struct session *s);
/* Detaches every probe.  Where that would take the kernel long (more than a
 * few perf events, torn down one after the other: closer.h), hands them to
 * a detached process that tears them down after we return, and returns its
 * pid; 0 when all was detached here. */
pid_t session_detach_all(struct session *s);
/* Detaches every probe of task task_index (its duration ended). */
void session_detach_task(struct session *s, uint32_t task_index);
void session_close(struct session *s);

/* The run's code cache (code/codecache.h): one view of the traced code for
 * the kernel walk's table and the unwinder; NULL when no probe records
 * stacks. */
struct code_cache *session_code_cache(const struct session *s);

size_t session_ring_count(const struct session *s);
const struct session_ring *session_ring_at(const struct session *s, size_t i);

/* Sum of the per-CPU counters of one probe. */
int session_probe_counters(const struct session *s, uint32_t probe_id,
			   struct ups_probe_counters *out);
/* The descriptor of map `name` of obj's primary instance (every instance
 * shares it); -ENOENT when no probe loaded obj or it has no such map. */
int session_map_fd(const struct session *s, const struct catalog_object *obj, const char *name);
/* Every probe's counters (out: one per probe id), in one look per object
 * where the kernel has batch lookups. */
int session_all_counters(const struct session *s, struct ups_probe_counters *out);
/* The log2 latency histogram of a call_latency probe: slots[i] counts calls
 * that took [2^i, 2^(i+1)) ns. */
int session_probe_histogram(const struct session *s, uint32_t probe_id,
			    uint64_t slots[UPS_HIST_SLOTS]);

/* Exit probes: the calls entered and not yet left, per probe (running[id]
 * counts them, oldest_ns[id] the earliest entry, CLOCK_MONOTONIC), read from
 * the pending-call stacks; both arrays have plan->n_probes entries, zeroed
 * here.  0, or negative when there is no such map. */
int session_pending_calls(const struct session *s, uint64_t *running, uint64_t *oldest_ns);
/* The same calls one by one: fn(ctx, tid, probe id, entry CLOCK_MONOTONIC ns,
 * the sp at the entry), each thread's calls of one probe outermost first. */
typedef void (*session_pending_fn)(void *ctx, uint32_t tid, uint32_t probe_id,
				   uint64_t entry_ns, uint64_t entry_sp);
int session_pending_each(const struct session *s, session_pending_fn fn, void *ctx);

/* "uprobe_multi links", "uprobe PMU" or "tracefs uprobe_events". */
const char *session_attach_mode(const struct session *s);

/* True when the legacy objects (kernels before 5.5) are loaded. */
bool session_legacy(const struct session *s);

/* The output mode in use (never OUTPUT_AUTO after session_open). */
enum output_mode session_output_mode(const struct session *s);
const char *output_mode_name(enum output_mode m);

/* Number of uprobes attached (probe sites x processes). */
size_t session_attachment_count(const struct session *s);
/* Number of links or perf events holding them (fewer where one
 * uprobe_multi link holds many). */
size_t session_link_count(const struct session *s);

#endif
