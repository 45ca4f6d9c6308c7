/* The run command's output options as table rows (sink/sink_args.c), parsed
 * as a command parses them (common/optrows.h): what each row sets, its error
 * message, and the sink set's options they make. */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "sink/sink_args.h"
#include "ut.h"

/* argv "cmd" + the n - 1 arguments, through the sink rows alone. */
static int parse(struct sink_args *a, struct err *e, int argc, ...)
{
	char *argv[8] = { "cmd" };
	const struct opt_use use = { &sink_args_rows, a };
	va_list ap;

	va_start(ap, argc);
	for (int i = 1; i < argc; i++)
		argv[i] = va_arg(ap, char *);
	va_end(ap);
	return opt_rows_parse(argc, argv, &use, 1, "", e);
}

UT_TEST(sink_args_rows_parse_and_make_sink_options)
{
	struct sink_args a = { 0 };
	struct err e = { 0 };
	FILE *out = stdout, *trace = stderr;
	struct sinks_options so;

	UT_EQ_INT(sink_args_rows.n, 10);
	UT_EQ_INT(parse(&a, &e, 2, "--format=xml"), -EINVAL);
	UT_EQ_STR(e.msg, "--format takes text, json or text-raw, not 'xml'");
	UT_EQ_INT(parse(&a, &e, 5, "--format", "json", "--statsd=/tmp/s", "--statsd-wait=0"), 0);
	UT_EQ_INT(a.statsd_wait_ms, SINKS_STATSD_NO_WAIT);
	UT_EQ_INT(parse(&a, &e, 2, "--statsd-wait=10001"), -EINVAL);
	UT_EQ_INT(parse(&a, &e, 2, "--trace-format=systrace"), 0);
	so = sink_args_options(&a, out, trace);
	UT_ASSERT(so.json == out && so.text == NULL && so.trace == trace);
	UT_ASSERT(so.statsd == SINKS_STATSD_ON && !strcmp(so.statsd_path, "/tmp/s"));
	UT_EQ_INT(so.trace_format, TRACE_FORMAT_SYSTRACE);
	UT_EQ_INT(parse(&a, &e, 3, "--no-statsd", "--format=text"), 0);
	so = sink_args_options(&a, out, NULL);
	UT_ASSERT(so.text == out && so.json == NULL && so.statsd == SINKS_STATSD_OFF);
	UT_ASSERT(!so.profile_json);
	UT_EQ_INT(parse(&a, &e, 2, "--profile-format=xml"), -EINVAL);
	UT_EQ_STR(e.msg, "--profile-format takes text or json, not 'xml'");
	UT_EQ_INT(parse(&a, &e, 4, "--profile-format=json", "--profile", "-"), 0);
	UT_EQ_STR(a.profile, "-");
	so = sink_args_options(&a, out, NULL);
	UT_ASSERT(so.profile_json && so.profile == NULL); /* the caller opens the file */
	UT_EQ_INT(parse(&a, &e, 3, "--output", "o.txt"), 0);
	UT_EQ_STR(a.output, "o.txt");
	/* --json is --format json; text-raw is text with every field */
	UT_EQ_INT(parse(&a, &e, 2, "--json"), 0);
	so = sink_args_options(&a, out, NULL);
	UT_ASSERT(so.json == out && so.text == NULL && !so.text_raw);
	UT_EQ_INT(parse(&a, &e, 2, "--format=text-raw"), 0);
	so = sink_args_options(&a, out, NULL);
	UT_ASSERT(so.text == out && so.json == NULL && so.text_raw);
}
