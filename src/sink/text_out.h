/* text_out.h — the human-readable sink: one line per call, strace-like,
 * after the time, pid, tid and thread name columns:
 *
 *   #        BOOT_S     PID     TID COMM             CALL
 *     390.928469412   21705   21705 sh               write(fd=1, buf=0x55dff6343df0, count=2) = 2  <292.8µs>
 *
 * only the arguments asked for (trace --args, the config's statsd positions:
 * plan/plan_call_shape.c names and types them), decimal unless a pointer or
 * flags, strings quoted.  A call whose return is recorded too and comes in
 * the same batch (a flush) is printed whole on the call's line, the calls it made
 * indented under it; one whose return comes in a later batch prints open
 * (`f(…) ...`) and its return as `<... f resumed> = ret  <dur>`.  Entries
 * and returns come from separate buffers: they are paired by thread,
 * function and start time once per batch.  Other records, and every record with
 * --format text-raw, are one aligned line per event:
 *
 *   #        BOOT_S     PID     TID COMM             PROBE                                    …
 *   1234.567890123    1234    1240 system_server    OomAdjuster.setUidTempAllowlistStateLSP  …
 *   1234.567990000    1234    1240 system_server    Foo.bar                                  …
 *   1235.000000000       -       - -                DROP call_detail                         …
 * and then the FIELDS column, e.g. (one per line above):
 *   uid=10001 onAllowlist=true
 *   <- dur=1.234ms ret=0x0
 *   lost=12 (kernel ring buffer full)
 *
 * Columns are fixed width (longer values push the rest right by one space).
 * Strings are quoted with C-style escapes; invalid UTF-8 and control bytes
 * become \xNN; u64 values are hex.  Output goes through an outbuf. */
#ifndef UPROBESTATS_SINK_TEXT_OUT_H
#define UPROBESTATS_SINK_TEXT_OUT_H

#include <stdbool.h>
#include <stdio.h>

#include "common/err.h"
#include "vocab/event.h"
#include "vocab/outbuf.h"

/* A call's entry or return, kept until the batch ends (text_flush). */
#define TEXT_CALL_ARGS_MAX 320
#define TEXT_BATCH_MAX 4096      /* a batch is printed when it has this many */
struct text_item {
	const struct probe_desc *probe;
	uint64_t start_ns, end_ns, dur_ns;
	uint64_t key_ns;             /* printed in this order (then seq) */
	uint64_t seq;
	int64_t ret;
	bool has_ret;
	const struct call_shape *ret_shape; /* the return's: how its value prints */
	uint32_t pid, tid;
	int what;                    /* text_out.c's enum text_what */
	char comm[16];
	char args[TEXT_CALL_ARGS_MAX];
};

/* A call printed open (`f(args) ...`) whose return has not come yet. */
struct text_open_call {
	const struct probe_desc *probe;
	uint64_t start_ns;
	uint32_t tid;
};

/* A call around what comes next on its thread (end: UINT64_MAX when open). */
struct text_active {
	uint32_t tid;
	uint64_t end_ns;
};

struct text_out {
	struct outbuf o;
	bool raw;                    /* --format text-raw: every field, one line per event */
	struct text_item *batch;
	size_t n_batch, cap_batch;
	struct text_open_call *open;
	size_t n_open, cap_open;
	struct text_active *active;
	size_t n_active, cap_active;
	uint64_t seq;
};

/* Writes the column header line (raw: the old FIELDS layout). */
int text_open(struct text_out *t, FILE *f, bool raw, struct err *e);
void text_event(struct text_out *t, const struct event *ev);
/* Human duration: "850ns", "12.345us", "1.234567ms", "2.000000001s". */
void text_duration(struct outbuf *o, uint64_t ns);
/* Escaped string body (no quotes); returns the columns it takes. */
size_t text_escape(struct outbuf *o, const char *s, size_t n);
/* " name=value ..." as in a text line; no_pipe also escapes '|' (\x7c) for
 * systrace mark names. */
void text_fields(struct outbuf *o, const struct field *f, size_t n, bool no_pipe);
/* Escaped like text_escape, '|' as \x7c too. */
size_t text_escape_nopipe(struct outbuf *o, const char *s, size_t n);
int text_flush(struct text_out *t);
void text_close(struct text_out *t);

/* The sink's row in sinks.c's table (sink/sink_ops.h). */
struct sink_ops;
extern const struct sink_ops text_sink;

#endif
