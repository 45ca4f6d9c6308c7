/* sink_args.h — the run command's output options, as a table: one row per
 * long option (--format, --output, --trace, --trace-format, --statsd,
 * --no-statsd, --statsd-wait, --profile, --profile-format) saying how it sets struct sink_args.  The
 * command adds the rows to its getopt table, hands each value to
 * sink_args_parse, and opens the sink set with sink_args_options.  A new
 * sink's option is one more row here. */
#ifndef UPROBESTATS_SINK_SINK_ARGS_H
#define UPROBESTATS_SINK_SINK_ARGS_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/err.h"
#include "sink/sink_types.h"

struct sink_args {
	const char *format;          /* "text" | "json" on stdout (or the --output file) */
	const char *output;          /* --output: a file instead of stdout */
	const char *trace;           /* --trace file */
	enum trace_format trace_format;
	enum sinks_statsd_mode statsd;
	const char *statsd_path;
	int32_t statsd_wait_ms;      /* as sinks_options: 0 default, SINKS_STATSD_NO_WAIT */
	const char *profile;         /* --profile FILE ("-": stderr): the flat profile */
	bool profile_json;           /* --profile-format json */
};

/* getopt values of the rows: SINK_ARGS_FIRST_OPT + row (clear of characters
 * and of a command's own option values below it). */
#define SINK_ARGS_FIRST_OPT 0x1000

/* Appends the rows' getopt entries at opts[*n], up to max; -ENOSPC when
 * they do not fit. */
int sink_args_getopt(struct option *opts, size_t *n, size_t max);

/* opt, arg: what getopt_long returned.  0 when opt is no sink option, 1 when
 * it was taken, negative with e saying what is wrong with arg. */
int sink_args_parse(struct sink_args *a, int opt, const char *arg, struct err *e);

/* The sink set's options: out is where --format's events go (the opened
 * --output file, or stdout), trace the opened --trace file or NULL. */
struct sinks_options sink_args_options(const struct sink_args *a, FILE *out, FILE *trace);

#endif
