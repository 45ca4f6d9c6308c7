/* sections.h — the trace-marker calls of `uprobestats sections`
 * (android.os.Trace, ATrace_*, libcutils' atrace_*_body) as sections: per
 * thread begin/end nesting, async sections by (process, name, cookie),
 * counters.  The sink set classifies each such event once here
 * (struct section_call in event.h) so that the text, JSON Lines and trace
 * outputs agree; the counts go to the summary.
 *
 * Nothing is invented: an end whose begin came before the attach is
 * SECTION_END_UNBEGUN (counted; the trace gets no "E" for it), and a
 * section still open at exit is counted, never closed.
 *
 * One call seen at two layers (Trace.beginSection, then the libcutils
 * atrace_begin_body it calls when the tag is enabled; beginAsyncSection,
 * then asyncTraceBegin) is one section: an event that repeats the previous
 * section event of its thread (same operation, name and cookie or value)
 * from a function the previous one calls (by the probed functions' names:
 * android.os.Trace's API -> its traceBegin/asyncTraceBegin/... -> libcutils;
 * the NDK's ATrace_* -> libcutils) is SECTION_MERGED. */
#ifndef UPROBESTATS_SINK_SECTIONS_H
#define UPROBESTATS_SINK_SECTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sink/event.h"
#include "sink/json_out.h"

/* Nesting deeper than this is counted (depth goes on) but the names of the
 * deeper sections are not kept. */
#define SECTIONS_MAX_DEPTH 256
/* Async sections open at once, at most (more: counted as untracked). */
#define SECTIONS_MAX_ASYNC 65536

struct sections_report {
	bool any;                 /* at least one section event */
	uint64_t begun, ended, end_unbegun, open_at_exit;
	uint64_t async_begun, async_ended, async_end_unbegun, async_open_at_exit;
	uint64_t async_untracked; /* over SECTIONS_MAX_ASYNC: neither paired nor counted open */
	uint64_t counters;
	uint64_t merged;          /* calls seen again one layer down */
	char first_open[128];     /* the name of one section still open at exit */
};

struct sections;

struct sections *sections_new(void);
void sections_free(struct sections *s);

/* Classifies ev (ev->probe->section != 0) into out; out's strings point
 * into ev or into s (valid until the next call). */
void sections_classify(struct sections *s, const struct event *ev, struct section_call *out);

/* At exit: counts what is still open. */
void sections_finish(struct sections *s);
void sections_report(const struct sections *s, struct sections_report *r);

/* The summary's lines (stderr) and its "sections" object. */
void sections_report_text(FILE *f, const struct sections_report *r);
void sections_report_json(struct json_out *j, const struct sections_report *r);

/* "begin", "end", "async_begin", "async_end", "counter" (COUNTER64 too). */
const char *section_op_name(uint8_t op);

#endif
