/* sink_args.h — the run command's output options, as rows (common/optrows.h):
 * one per long option (--format, --output, --trace, --trace-format, --statsd,
 * --no-statsd, --statsd-wait, --profile, --profile-format) saying how it sets
 * struct sink_args.  The command parses them with its other rows and opens
 * the sink set with sink_args_options.  A new sink's option is one more row
 * here (and its line in `--help`, which test_help checks). */
#ifndef UPROBESTATS_SINK_SINK_ARGS_H
#define UPROBESTATS_SINK_SINK_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/optrows.h"
#include "sink/sink_types.h"

struct sink_args {
	const char *format;          /* "text" | "json" | "text-raw" on stdout (or --output) */
	const char *output;          /* --output: a file instead of stdout */
	const char *trace;           /* --trace file */
	enum trace_format trace_format;
	bool trace_format_given;     /* --trace-format was given (else the file name says) */
	enum sinks_statsd_mode statsd;
	const char *statsd_path;
	int32_t statsd_wait_ms;      /* as sinks_options: 0 default, SINKS_STATSD_NO_WAIT */
	const char *profile;         /* --profile FILE ("-": stderr): the flat profile */
	bool profile_json;           /* --profile-format json */
};

/* The rows; their context is a struct sink_args. */
extern const struct opt_rows sink_args_rows;

/* After parsing: the trace's format from its file name when --trace-format
 * was not given (.pftrace: perfetto, …; trace_out.h); when it was and the
 * name says another, the one warning line (into warning), else NULL. */
const char *sink_args_settle(struct sink_args *a, char *warning, size_t size);

/* The sink set's options: out is where --format's events go (the opened
 * --output file, or stdout), trace the opened --trace file or NULL. */
struct sinks_options sink_args_options(const struct sink_args *a, FILE *out, FILE *trace);

#endif
