/* art_trace_out.h — `--trace-format art`: ART's method-trace file (what
 * Debug.startMethodTracing writes), format V1 non-streaming, version 2 with
 * clock=wall, which Android Studio's CPU profiler, Perfetto and dmtracedump
 * all read:
 *
 *   *version / 2 / key=value lines / *threads / "<tid>\t<name>" /
 *   *methods / "0x<id>\t<class>\t<method>\t<signature>\t<source file>" / *end
 *   then the 32-byte data header ("SLOW", version 2, offset 32, the start
 *   time in CLOCK_MONOTONIC µs, zeros) and 10-byte records: u2 thread id,
 *   u4 method id | action (0 enter, 1 exit, 2 unroll), u4 µs since start.
 *
 * Calls come from return events (call_return: `trace --ret`), kept per
 * thread (sink/call_seq.h) and written at the end, when the key section is
 * known, in time order across threads.  A call an exception or a longjmp
 * left (EVENT_UNWOUND) is entered and then unrolled (action 2) where the
 * later hit that revealed it was, before that hit's own record; a call
 * still running at the end is unrolled there; either earlier, at the entry
 * of a later call whose entry sp shows its frame was gone (call_seq.h), so
 * that call is beside it, at its depth.  There is no thread CPU time to
 * write (the probes do not read it), so never version 3 / clock=dual.
 * Method lines come from probe_desc.method_key.  A tid the readers cannot
 * take (dmtracedump indexes an array of 32768 by it, Android Studio reads a
 * signed 16-bit id) is given a free number below 32768, its real tid kept
 * in its name ("binder:1234_2 (tid 40000)"), and said once on stderr. */
#ifndef UPROBESTATS_SINK_ART_TRACE_OUT_H
#define UPROBESTATS_SINK_ART_TRACE_OUT_H

#include <stdint.h>
#include <stdio.h>

#include "common/err.h"
#include "sink/call_seq.h"
#include "vocab/event.h"
#include "vocab/outbuf.h"

#define ART_TRACE_MAX_TID 32767u   /* the largest thread id every reader takes */

struct art_trace_out {
	struct outbuf o;
	struct call_seq calls;
	int64_t mono_to_boot;        /* CLOCK_BOOTTIME - CLOCK_MONOTONIC at open */
	FILE *warn;                  /* where the renumbering is said (stderr) */
	struct art_action *acts;     /* the records, gathered at the end */
	size_t n_acts, cap_acts;
	uint16_t *thread_ids;        /* per call_seq thread: the id written */
	uint32_t renumbered;         /* threads given another id */
	uint64_t written;            /* records written */
	uint64_t unwound;            /* calls the exit probes saw left (the summary's count;
				      * those whose records came are in the file as unrolls) */
};

int art_trace_open(struct art_trace_out *t, FILE *f, struct err *e);
void art_trace_event(struct art_trace_out *t, const struct event *ev);
/* Writes the whole file, flushes and frees (not the FILE*). */
void art_trace_close(struct art_trace_out *t);

struct sink_ops;
extern const struct sink_ops art_trace_sink;

#endif
