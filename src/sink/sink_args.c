#include "sink/sink_args.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse_u32.h"
#include "sink/statsd_socket.h"
#include "sink/trace_out.h"

static int parse_format(struct sink_args *a, const char *arg, struct err *e)
{
	if (strcmp(arg, "text") && strcmp(arg, "json"))
		return err_set(e, -EINVAL, "--format takes text or json, not '%s'", arg);
	a->format = arg;
	return 0;
}

static int parse_output(struct sink_args *a, const char *arg, struct err *e)
{
	a->output = arg;
	return 0;
}

static int parse_trace(struct sink_args *a, const char *arg, struct err *e)
{
	a->trace = arg;
	return 0;
}

static int parse_trace_format(struct sink_args *a, const char *arg, struct err *e)
{
	return trace_parse_format(arg, &a->trace_format, e);
}

static int parse_statsd(struct sink_args *a, const char *arg, struct err *e)
{
	a->statsd = SINKS_STATSD_ON;
	a->statsd_path = arg;
	return 0;
}

static int parse_no_statsd(struct sink_args *a, const char *arg, struct err *e)
{
	a->statsd = SINKS_STATSD_OFF;
	return 0;
}

/* --statsd-wait MS: 0 keeps libstatssocket's drop-at-once; the cap keeps a
 * stuck statsd from holding the loop (and SIGINT) for long. */
static int parse_statsd_wait(struct sink_args *a, const char *arg, struct err *e)
{
	uint32_t v;

	if (parse_u32_arg(arg, 0, STATSD_WAIT_MAX_MS, "--statsd-wait", "milliseconds", &v, e) < 0)
		return -EINVAL;
	a->statsd_wait_ms = v ? (int32_t)v : SINKS_STATSD_NO_WAIT;
	return 0;
}

static int parse_profile(struct sink_args *a, const char *arg, struct err *e)
{
	a->profile = arg;
	return 0;
}

static int parse_profile_format(struct sink_args *a, const char *arg, struct err *e)
{
	if (strcmp(arg, "text") && strcmp(arg, "json"))
		return err_set(e, -EINVAL, "--profile-format takes text or json, not '%s'", arg);
	a->profile_json = !strcmp(arg, "json");
	return 0;
}

static const struct {
	const char *name;
	int has_arg;
	int (*parse)(struct sink_args *a, const char *arg, struct err *e);
} rows[] = {
	{ "format", required_argument, parse_format },
	{ "output", required_argument, parse_output },
	{ "trace", required_argument, parse_trace },
	{ "trace-format", required_argument, parse_trace_format },
	{ "statsd", optional_argument, parse_statsd },
	{ "no-statsd", no_argument, parse_no_statsd },
	{ "statsd-wait", required_argument, parse_statsd_wait },
	{ "profile", required_argument, parse_profile },
	{ "profile-format", required_argument, parse_profile_format },
};

#define N_ROWS (sizeof(rows) / sizeof(rows[0]))

int sink_args_getopt(struct option *opts, size_t *n, size_t max)
{
	if (*n > max || max - *n < N_ROWS)
		return -ENOSPC;
	for (size_t i = 0; i < N_ROWS; i++)
		opts[(*n)++] = (struct option){ rows[i].name, rows[i].has_arg, NULL,
						SINK_ARGS_FIRST_OPT + (int)i };
	return 0;
}

int sink_args_parse(struct sink_args *a, int opt, const char *arg, struct err *e)
{
	int rc;

	if (opt < SINK_ARGS_FIRST_OPT || opt >= SINK_ARGS_FIRST_OPT + (int)N_ROWS)
		return 0;
	rc = rows[opt - SINK_ARGS_FIRST_OPT].parse(a, arg, e);
	return rc < 0 ? rc : 1;
}

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
	return so;
}
