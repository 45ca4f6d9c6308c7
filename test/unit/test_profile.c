/* test_profile.c — the flat profile sink: self time by nesting per thread
 * (two threads interleaved, a recursion, siblings), calls from entry events
 * or returns + unwound, nearest-rank percentiles, sort order, JSON and text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sink/profile.h"
#include "sink/summary.h"
#include "sink_testutil.h"
#include "ut.h"

static struct probe_desc desc_a = { .method = "A", .file = "/f" };
static struct probe_desc desc_b = { .method = "B", .file = "/f" };
static struct probe_desc desc_e = { .method = "E", .file = "/g" };

/* A return of d on tid: [entry, entry + dur). */
static void ret(void *st, const struct probe_desc *d, uint32_t tid, uint64_t entry,
		uint64_t dur)
{
	struct event ev = { .kind = EVENT_RETURN, .boot_ns = entry + dur, .pid = 7, .tid = tid,
			    .process = "proc", .probe = d, .duration_ns = dur };

	profile_sink.event(st, &ev);
}

static char *run_profile(bool json, void (*feed)(void *st))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct sinks_options o = { .profile = f, .profile_json = json };
	void *st = calloc(1, profile_sink.state_size);
	struct err e = { 0 };
	struct probe_stats rows[] = { { .probe = &desc_b, .unwound = 2, .exit_probes = true } };

	if (!f || !st || profile_sink.open(st, &o, &e) < 0) {
		fprintf(stderr, "profile_sink.open: %s\n", e.msg);
		abort();
	}
	feed(st);
	profile_sink.probe_rows(st, rows, 1);
	profile_sink.finish(st);
	profile_sink.close(st);
	free(st);
	fclose(f);
	return buf;
}

static void feed_nested(void *st)
{
	struct event entry = { .kind = EVENT_RECORD, .pid = 7, .tid = 3, .probe = &desc_e };

	/* tid 1: A [0,100) holds B [10,30) and B [40,60) which holds A [45,50)
	 * tid 2, interleaved: A [5,25) with B [6,8) */
	ret(st, &desc_b, 1, 10, 20);
	ret(st, &desc_b, 2, 6, 2);
	ret(st, &desc_a, 1, 45, 5);
	ret(st, &desc_a, 2, 5, 20);
	ret(st, &desc_b, 1, 40, 20);
	ret(st, &desc_a, 1, 0, 100);
	for (int i = 0; i < 3; i++)
		profile_sink.event(st, &entry);
}

UT_TEST(profile_self_time_by_nesting_per_thread_json)
{
	char *out = run_profile(true, feed_nested);

	/* A: total 100 + 5 + 20 = 125; self (100 - 20 - 20) + 5 + (20 - 2) = 83
	 * B: total 20 + 2 + 20 = 42; self 20 + 2 + (20 - 5) = 37; unwound 2 */
	UT_CONTAINS(out, "{\"method\":\"A\",\"file\":\"/f\",\"pid\":7,\"process\":\"proc\","
		    "\"calls\":3,\"returns\":3,\"total_ns\":125,\"self_ns\":83,\"mean_ns\":41,"
		    "\"p50_ns\":20,\"p99_ns\":100,\"max_ns\":100,\"unwound\":0");
	UT_CONTAINS(out, "{\"method\":\"B\",\"file\":\"/f\",\"pid\":7,\"process\":\"proc\","
		    "\"calls\":5,\"returns\":3,\"total_ns\":42,\"self_ns\":37,\"mean_ns\":14,"
		    "\"p50_ns\":20,\"p99_ns\":20,\"max_ns\":20,\"unwound\":2");
	UT_CONTAINS(out, "\"method\":\"E\",\"file\":\"/g\",\"pid\":7,\"process\":null,"
		    "\"calls\":3,\"returns\":0,\"total_ns\":0");
	/* sorted by total time: A, B, then E */
	UT_ASSERT(strstr(out, "\"A\"") < strstr(out, "\"B\"") &&
		  strstr(out, "\"B\"") < strstr(out, "\"E\""));
	UT_CONTAINS(out, "{\"type\":\"profile\",\"complete\":true,\"methods\":[");
	/* one object of docs/event.schema.json's "profile" type */
	struct jc_doc schema;
	char why[512] = "";
	UT_EQ_INT(load_schema(&schema), 0);
	if (validate_lines(&schema, out, why, sizeof(why)) != 1)
		ut_fail(__FILE__, __LINE__, "the JSON profile breaks the schema: %s", why);
	jc_free(&schema);
	free(out);
}

UT_TEST(profile_text_table)
{
	char *out = run_profile(false, feed_nested);

	UT_CONTAINS(out, "profile: 3 method(s), by total time\n");
	UT_CONTAINS(out, "CALLS     TOTAL_MS      SELF_MS");
	UT_CONTAINS(out, "         3        0.000        0.000        0.0        0.0        0.1"
		    "        0.1        0  7       proc            A\n");
	free(out);
}

static void feed_many_siblings(void *st)
{
	/* 10,000 top-level calls of B (the pending stack folds past 4,096),
	 * then one A enclosing only the last one. */
	for (uint64_t i = 0; i < 10000; i++)
		ret(st, &desc_b, 1, 1000 + i * 10, 5);
	ret(st, &desc_a, 1, 1000 + 9999 * 10 - 1, 7);
}

UT_TEST(profile_long_runs_of_siblings_fold_without_losing_nesting)
{
	char *out = run_profile(true, feed_many_siblings);

	UT_CONTAINS(out, "\"method\":\"A\",\"file\":\"/f\",\"pid\":7,\"process\":\"proc\","
		    "\"calls\":1,\"returns\":1,\"total_ns\":7,\"self_ns\":2");
	UT_CONTAINS(out, "\"calls\":10002,\"returns\":10000,\"total_ns\":50000,\"self_ns\":50000");
	free(out);
}
