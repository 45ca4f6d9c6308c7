/* The run command's output options as table rows (sink/sink_args.c): each
 * row's getopt entry, what it sets, its error message, and the sink set's
 * options they make. */
#include <errno.h>
#include <getopt.h>
#include <string.h>

#include "sink/sink_args.h"
#include "ut.h"

static int opt_of(const struct option *opts, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(opts[i].name, name))
			return opts[i].val;
	return -1;
}

UT_TEST(sink_args_rows_parse_and_make_sink_options)
{
	struct option opts[16];
	struct sink_args a = { 0 };
	struct err e = { 0 };
	size_t n = 0;
	FILE *out = stdout, *trace = stderr;
	struct sinks_options so;

	UT_EQ_INT(sink_args_getopt(opts, &n, 16), 0);
	UT_EQ_INT(n, 9);
	UT_EQ_INT(sink_args_getopt(opts, &n, 10), -ENOSPC);
	UT_EQ_INT(sink_args_parse(&a, 'v', NULL, &e), 0);         /* not a sink option */
	UT_EQ_INT(sink_args_parse(&a, opt_of(opts, n, "format"), "xml", &e), -EINVAL);
	UT_EQ_STR(e.msg, "--format takes text or json, not 'xml'");
	UT_EQ_INT(sink_args_parse(&a, opt_of(opts, n, "format"), "json", &e), 1);
	UT_EQ_INT(sink_args_parse(&a, opt_of(opts, n, "statsd"), "/tmp/s", &e), 1);
	UT_EQ_INT(sink_args_parse(&a, opt_of(opts, n, "statsd-wait"), "0", &e), 1);
	UT_EQ_INT(a.statsd_wait_ms, SINKS_STATSD_NO_WAIT);
	UT_EQ_INT(sink_args_parse(&a, opt_of(opts, n, "statsd-wait"), "10001", &e), -EINVAL);
	UT_EQ_INT(sink_args_parse(&a, opt_of(opts, n, "trace-format"), "systrace", &e), 1);
	so = sink_args_options(&a, out, trace);
	UT_ASSERT(so.json == out && so.text == NULL && so.trace == trace);
	UT_ASSERT(so.statsd == SINKS_STATSD_ON && !strcmp(so.statsd_path, "/tmp/s"));
	UT_EQ_INT(so.trace_format, TRACE_FORMAT_SYSTRACE);
	UT_EQ_INT(sink_args_parse(&a, opt_of(opts, n, "no-statsd"), NULL, &e), 1);
	UT_EQ_INT(sink_args_parse(&a, opt_of(opts, n, "format"), "text", &e), 1);
	so = sink_args_options(&a, out, NULL);
	UT_ASSERT(so.text == out && so.json == NULL && so.statsd == SINKS_STATSD_OFF);
	UT_ASSERT(!so.profile_json);
	UT_EQ_INT(sink_args_parse(&a, opt_of(opts, n, "profile-format"), "xml", &e), -EINVAL);
	UT_EQ_STR(e.msg, "--profile-format takes text or json, not 'xml'");
	UT_EQ_INT(sink_args_parse(&a, opt_of(opts, n, "profile-format"), "json", &e), 1);
	UT_EQ_INT(sink_args_parse(&a, opt_of(opts, n, "profile"), "-", &e), 1);
	UT_EQ_STR(a.profile, "-");
	so = sink_args_options(&a, out, NULL);
	UT_ASSERT(so.profile_json && so.profile == NULL); /* the caller opens the file */
}
