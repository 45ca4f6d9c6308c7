#include "sink/sink_args.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
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

	return trace_parse_format(arg, &a->trace_format, e);
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
	{ "format", 0, required_argument, parse_format, 0 },
	{ "json", 0, no_argument, take_json, 0 },
	{ "output", 0, required_argument, KEEP_STR(output) },
	{ "trace", 0, required_argument, KEEP_STR(trace) },
	{ "trace-format", 0, required_argument, parse_trace_format, 0 },
	{ "statsd", 0, optional_argument, parse_statsd, 0 },
	{ "no-statsd", 0, no_argument, parse_no_statsd, 0 },
	{ "statsd-wait", 0, required_argument, parse_statsd_wait, 0 },
	{ "profile", 0, required_argument, KEEP_STR(profile) },
	{ "profile-format", 0, required_argument, parse_profile_format, 0 },
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
