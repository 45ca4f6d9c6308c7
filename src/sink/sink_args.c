#include "sink/sink_args.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "common/parse_u32.h"
#include "sink/statsd_socket.h"
#include "sink/trace_out.h"

static int parse_format(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	struct sink_args *a = ctx;

	if (strcmp(arg, "text") && strcmp(arg, "json") && strcmp(arg, "text-raw"))
		return err_set(e, -EINVAL, "--format takes text, json or text-raw, not '%s'", arg);
	a->format = arg;
	return 0;
}

/* --json: the same as --format json, as methods, resolve and doctor take it. */
static int take_json(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	((struct sink_args *)ctx)->format = "json";
	return 0;
}

static int parse_trace_format(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	struct sink_args *a = ctx;

	a->trace_format_given = true;
	return trace_parse_format(arg, &a->trace_format, e);
}

const char *sink_args_settle(struct sink_args *a, char *warning, size_t size)
{
	enum trace_format named;

	if (!a->trace || !trace_format_of_path(a->trace, &named))
		return NULL;
	if (!a->trace_format_given) {
		a->trace_format = named;
		return NULL;
	}
	if (named == a->trace_format)
		return NULL;
	snprintf(warning, size, "--trace %s: writing it as --trace-format %s, although its name "
		 "says %s", a->trace, trace_format_name(a->trace_format), trace_format_name(named));
	return warning;
}

static int parse_statsd(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	struct sink_args *a = ctx;

	a->statsd = SINKS_STATSD_ON;
	a->statsd_path = arg;
	return 0;
}

static int parse_no_statsd(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	struct sink_args *a = ctx;

	a->statsd = SINKS_STATSD_OFF;
	return 0;
}

/* --statsd-wait MS: 0 keeps libstatssocket's drop-at-once; the cap keeps a
 * stuck statsd from holding the loop (and SIGINT) for long. */
static int parse_statsd_wait(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	struct sink_args *a = ctx;

	uint32_t v;

	if (parse_u32_arg(arg, 0, STATSD_WAIT_MAX_MS, "--statsd-wait", "milliseconds", &v, e) < 0)
		return -EINVAL;
	a->statsd_wait_ms = v ? (int32_t)v : SINKS_STATSD_NO_WAIT;
	return 0;
}

static int parse_profile_format(void *ctx, const struct opt_row *row, const char *arg,
				struct err *e)
{
	struct sink_args *a = ctx;

	if (strcmp(arg, "text") && strcmp(arg, "json"))
		return err_set(e, -EINVAL, "--profile-format takes text or json, not '%s'", arg);
	a->profile_json = !strcmp(arg, "json");
	return 0;
}

#define KEEP_STR(member) OPT_STR(struct sink_args, member)
#define SET_TRUE(member) OPT_TRUE(struct sink_args, member)

static const struct opt_row rows[] = {
	{ "format", 0, required_argument, parse_format, 0,
	  OPT_DOC(OUTPUT, "text|json|text-raw", "events on stdout: one readable line per call (text), JSON Lines, or every register (text-raw); default text, unless statsd takes the events") },
	{ "json", 0, no_argument, take_json, 0, OPT_DOC(OUTPUT, "", "the same as --format json") },
	{ "output", 0, required_argument, KEEP_STR(output),
	  OPT_DOC(OUTPUT, "FILE", "write those events to FILE instead of stdout") },
	{ "trace", 0, required_argument, KEEP_STR(trace),
	  OPT_DOC(OUTPUT, "FILE", "also write a trace to FILE (open it in Perfetto UI or chrome://tracing)") },
	{ "trace-format", 0, required_argument, parse_trace_format, 0,
	  OPT_DOC(OUTPUT, "F", "the --trace file's format: json (Chrome JSON), systrace, perfetto (Perfetto's protobuf), art (ART's method trace: Android Studio, dmtracedump) or speedscope (a profile per thread); art and speedscope need probes that record returns (call_return). Default: what the file name says (.json, .systrace/.txt, .pftrace/.perfetto-trace, .trace, .speedscope.json), else json") },
	{ "statsd", 0, optional_argument, parse_statsd, 0,
	  OPT_DOC(ANDROID, "PATH", "send atoms to statsd (default when /dev/socket/statsdw exists)") },
	{ "no-statsd", 0, no_argument, parse_no_statsd, 0, OPT_DOC(ANDROID, "", "never send atoms") },
	{ "statsd-wait", 0, required_argument, parse_statsd_wait, 0,
	  OPT_DOC(ANDROID, "MS", "when statsd's queue is full, wait up to MS (0..10000, default 100) per atom for room instead of dropping it; 0: drop at once, like libstatssocket") },
	{ "profile", 0, required_argument, KEEP_STR(profile),
	  OPT_DOC(OUTPUT, "FILE|-", "at exit, the flat profile per method (calls, total, self, mean, p50, p99, max) to FILE ('-': stderr)") },
	{ "profile-format", 0, required_argument, parse_profile_format, 0,
	  OPT_DOC(OUTPUT, "text|json", "the profile's format") },
};

const struct opt_rows sink_args_rows = OPT_ROWS(rows);

struct sinks_options sink_args_options(const struct sink_args *a, FILE *out, FILE *trace)
{
	struct sinks_options so = {
		.statsd = a->statsd,
		.statsd_path = a->statsd_path,
		.statsd_wait_ms = a->statsd_wait_ms,
		.trace = trace,
		.trace_format = a->trace_format,
		.default_text = out,
		.profile_json = a->profile_json,
	};

	if (a->format && !strcmp(a->format, "json"))
		so.json = out;
	else if (a->format)
		so.text = out;
	so.text_raw = a->format && !strcmp(a->format, "text-raw");
	return so;
}
