/* The sink set: default rule, statsd through sinks_atom, the exit summary in
 * text and JSON, write failures named, the polled atom. */
#include "ut.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "sink/sinks.h"
#include "sink/statsd_atoms.h"
#include "sink/statsd_socket.h"
#include "sink_testutil.h"
#include "statsd_decoder.h"
#include "statsd_testutil.h"

static const struct probe_desc pa = { .task_index = 0, .task_id = 11, .probe_index = 0,
				      .program = "prog_a", .map = "map_a", .file = "/x.odex",
				      .method = "void p.A.f(int)", .offset = 0x10 };
static const struct probe_desc pb = { .task_index = 0, .task_id = 11, .probe_index = 1,
				      .program = "prog_b", .map = "map_b", .file = "/x.odex",
				      .method = "void p.A.g()", .offset = 0x20 };
static const struct probe_desc pc = { .task_index = 1, .task_id = 0, .probe_index = 0,
				      .program = "prog_c", .map = "map_c", .file = "/lib.so",
				      .method = "malloc", .offset = 0x30 };

UT_TEST(sinks_default_rule)
{
	struct sinks_options in = { 0 }, o;
	FILE *j = (FILE *)&in; /* only compared, never used */

	o = sinks_plan(&in, true); /* Android: statsd only */
	UT_EQ_INT(o.statsd, SINKS_STATSD_ON);
	UT_ASSERT(o.text == NULL);
	UT_EQ_STR(o.statsd_path, "/dev/socket/statsdw");
	o = sinks_plan(&in, false); /* elsewhere: text on stdout */
	UT_EQ_INT(o.statsd, SINKS_STATSD_OFF);
	UT_ASSERT(o.text == stdout);
	in.json = j; /* JSON asked for: no default text */
	o = sinks_plan(&in, false);
	UT_ASSERT(o.text == NULL && o.json == j);
	in.json = NULL;
	in.statsd = SINKS_STATSD_OFF; /* --statsd=off on Android: text */
	o = sinks_plan(&in, true);
	UT_ASSERT(o.text == stdout);
	in.statsd = SINKS_STATSD_ON; /* explicit, with trace: trace is additive */
	in.trace = j;
	o = sinks_plan(&in, false);
	UT_EQ_INT(o.statsd, SINKS_STATSD_ON);
	UT_ASSERT(o.text == NULL && o.trace == j);
}

UT_TEST(sinks_explicit_statsd_without_socket_fails_clearly)
{
	struct sinks_options opt = { .statsd = SINKS_STATSD_ON,
				     .statsd_path = ut_tmpfile("absent-statsdw") };
	struct sinks *s;
	struct err e = { 0 };

	UT_EQ_INT(sinks_open(&s, &opt, &e), -ENOENT);
	UT_ASSERT(s == NULL);
	UT_CONTAINS(e.msg, "absent-statsdw: cannot connect");
}

UT_TEST(sinks_all_at_once_with_summary)
{
	const char *path = ut_tmpfile("statsdw-sinks");
	int rx = st_receiver(path);
	struct capture text, json, trace, err;
	struct sinks *s;
	struct err e = { 0 };
	struct jc_doc schema;
	char why[512] = "";
	uint8_t buf[8192];
	struct sd_datagram d;

	UT_ASSERT(rx >= 0);
	cap_open(&text);
	cap_open(&json);
	cap_open(&trace);
	cap_open(&err);
	struct sinks_options opt = { .statsd = SINKS_STATSD_AUTO, .statsd_path = path,
				     .text = text.f, .json = json.f, .trace = trace.f };
	UT_EQ_INT(sinks_open(&s, &opt, &e), 0);
	UT_ASSERT(sinks_statsd_on(s)); /* AUTO found the socket */

	const struct field f[] = { { .name = "uid", .type = FIELD_INT32, .v.i32 = 10001 },
				   { .name = "on", .type = FIELD_BOOL, .v.b = true } };
	const bool is_uid[] = { true, false };
	struct event ev = { .kind = EVENT_RECORD, .boot_ns = 5000, .pid = 1, .tid = 2,
			    .comm = "t", .probe = &pa, .fields = f, .n_fields = 2 };
	struct atom a = { .atom_id = 926, .boot_ns = 5000, .fields = f, .n_fields = 2,
			  .is_uid = is_uid };
	UT_EQ_INT(sinks_event(s, &ev), 0);
	UT_EQ_INT(sinks_atom(s, &a), 0);
	UT_EQ_INT(st_recv(rx, buf, sizeof(buf)), -1); /* queued until the flush */
	UT_EQ_INT(sinks_flush(s, &e), 0);
	long n = st_recv(rx, buf, sizeof(buf));
	UT_ASSERT(st_bytes_eq_skip(buf, (size_t)n,
				   "05 0000 00000000 00000000 74617473 07 04 01 8813000000000000"
				   "00 9e030000 10 11270000 010501 0501",
				   ST_SKIP_HEADER, __FILE__, __LINE__));

	/* an atom over 4064 bytes goes out as the error event, and says so */
	static char big[5000];
	memset(big, 'z', sizeof(big));
	const struct field fb[] = { { .name = "s", .type = FIELD_STRING, .v.str = { big, 5000 } } };
	struct atom ab = { .atom_id = 940, .boot_ns = 1, .fields = fb, .n_fields = 1 };
	UT_EQ_INT(sinks_atom(s, &ab), -EMSGSIZE);
	UT_EQ_INT(sinks_flush(s, &e), 0);
	n = st_recv(rx, buf, sizeof(buf));
	UT_EQ_INT(n, 15 + 21);
	UT_EQ_INT(sd_decode_datagram(buf, (size_t)n, &d, why, sizeof(why)), -1);

	/* the polled atom */
	struct polled_atom p;
	UT_EQ_INT(sinks_atom(s, statsd_polled_atom(&p, 100001, 3, 60000, 42, 11, 9)), 0);
	UT_EQ_INT(sinks_flush(s, &e), 0);
	n = st_recv(rx, buf, sizeof(buf));
	UT_EQ_INT(sd_decode_datagram(buf, (size_t)n, &d, why, sizeof(why)), 0);
	UT_EQ_INT(d.atom_id, 100001);
	UT_EQ_INT(d.n_fields, 4);
	UT_EQ_INT(d.fields[0].type, 0);
	UT_EQ_INT(d.fields[0].i64, 3);
	UT_EQ_INT(d.fields[1].type, 1);
	UT_EQ_INT(d.fields[1].i64, 60000);
	UT_EQ_INT(d.fields[2].i64, 42);
	UT_EQ_INT(d.fields[3].i64, 11);
	UT_EQ_INT(sinks_flush(s, &e), 0);

	struct probe_stats rows[] = {
		{ .probe = &pa, .hits = 120, .delivered = 118, .dropped_kernel = 2,
		  .duration_ns = 60000000000ull },
		{ .probe = &pb, .hits = 5, .delivered = 5, .duration_ns = 60000000000ull },
		{ .probe = &pc, .hits = 1234567, .delivered = 1234000, .dropped_sink = 567,
		  .duration_ns = 59500000000ull },
	};
	UT_EQ_INT(sinks_finish(s, rows, 3, 60100000000ull, err.f, &e), 0);
	UT_EQ_INT(sinks_event(s, &ev), -EPIPE); /* after finish: refused, not crashed */
	sinks_close(s);

	const char *sum = cap_text(&err);
	UT_CONTAINS(sum, "uprobestats summary: 3 probes, ran 60.100s\n");
	UT_CONTAINS(sum, "TASK     HITS  DELIVERED  DROPPED_KERNEL  DROPPED_SINK  DURATION  PROBE\n"
			 "11        120        118               2             0   60.000s  A.f\n"
			 "11          5          5               0             0   60.000s  A.g\n"
			 "11        125        123               2             0   60.000s  (task total)\n"
			 "#1    1234567    1234000               0           567   59.500s  malloc\n"
			 "all   1234692    1234123               2           567   60.000s  (total)\n");
	UT_CONTAINS(sum, "atoms sent, 0 dropped");
	UT_CONTAINS(sum, "1 atoms could not be encoded (over 4064 bytes or invalid)");
	UT_CONTAINS(sum, "WARNING: 569 events lost (2 in the kernel, 567 at the sinks)");

	UT_EQ_INT(load_schema(&schema), 0);
	const char *lines = cap_text(&json);
	int k = validate_lines(&schema, lines, why, sizeof(why));
	if (k < 0)
		ut_fail(__FILE__, __LINE__, "%s", why);
	UT_EQ_INT(k, 2); /* the event and the summary */
	/* the summary's time (when written), as an event's, then its counts */
	UT_CONTAINS(lines, "{\"type\":\"summary\",\"boot_ns\":");
	UT_CONTAINS(lines, "Z\",\"schema_version\":1,\"duration_ns\":60100000000,");
	UT_CONTAINS(lines, "\"tasks\":[{\"task_id\":11,\"task_index\":0,\"hits\":125,\"delivered\":123,"
			   "\"dropped_kernel\":2,\"dropped_sink\":0,\"duration_ns\":60000000000},");
	UT_CONTAINS(lines, "\"statsd\":{\"path\":\"");
	UT_CONTAINS(lines, "\"sent\":3,\"dropped\":0,\"last_error\":null,");
	UT_CONTAINS(lines, "\"loss_atoms\":0,\"waited\":0,\"wait_ns\":0,");
	UT_CONTAINS(lines, "\"invalid\":1,");
	UT_CONTAINS(cap_text(&text), "A.f");
	struct jc_doc td;
	UT_EQ_INT(jc_parse(&td, cap_text(&trace), trace.len), 0);
	jc_free(&td);
	jc_free(&schema);
	cap_free(&text);
	cap_free(&json);
	cap_free(&trace);
	cap_free(&err);
	close(rx);
}

static int dropped;
static const struct probe_desc *dropped_probe;

static void count_drop(void *ctx, const struct probe_desc *probe)
{
	(void)ctx;
	dropped++;
	dropped_probe = probe;
}

/* statsd never reads: atoms until its queue is full, then one drop; returns
 * the summary printed at finish. */
static void stuck_statsd_run(int32_t wait_ms, bool stop_waiting, const char *name,
			     struct capture *err, struct sink_report *r)
{
	const char *path = ut_tmpfile(name);
	int rx = st_receiver(path);
	struct sinks *s;
	struct err e = { 0 };
	const struct field f[] = { { .name = "uid", .type = FIELD_INT32, .v.i32 = 1 } };
	struct atom a = { .atom_id = 926, .boot_ns = 1, .fields = f, .n_fields = 1,
			  .probe = &pa };
	struct sinks_options opt = { .statsd = SINKS_STATSD_ON, .statsd_path = path,
				     .statsd_wait_ms = wait_ms, .statsd_dropped = count_drop };

	UT_ASSERT(rx >= 0);
	cap_open(err);
	dropped = 0;
	dropped_probe = NULL;
	UT_EQ_INT(sinks_open(&s, &opt, &e), 0);
	if (stop_waiting)
		sinks_statsd_stop_waiting(s);
	/* one atom per flush: each one's fate is known at its flush */
	for (int i = 0; i < 100000 && !dropped; i++) {
		UT_EQ_INT(sinks_atom(s, &a), 0);
		UT_EQ_INT(sinks_flush(s, &e), 0);
	}
	UT_EQ_INT(dropped, 1);
	UT_EQ_INT(dropped_probe == &pa, true);
	UT_EQ_INT(sinks_finish(s, NULL, 0, 0, err->f, &e), 0);
	sinks_report(s, r);
	sinks_close(s);
	close(rx);
}

/* statsd_wait_ms: zeroed options wait (the default budget), NO_WAIT drops at
 * once, and so does sinks_statsd_stop_waiting; the summary says how many
 * datagrams waited. */
UT_TEST(sinks_statsd_wait_option_and_summary)
{
	struct capture err;
	struct sink_report r;

	stuck_statsd_run(0, false, "statsdw-wait-default", &err, &r);
	UT_EQ_U64(r.statsd.dropped, 1);
	UT_EQ_U64(r.statsd.waited, 1);
	UT_ASSERT(r.statsd.wait_ns >= STATSD_WAIT_DEFAULT_MS * 1000000ull);
	UT_CONTAINS(cap_text(&err), "statsd: 1 datagrams found the queue full and waited for room, ");
	cap_free(&err);

	stuck_statsd_run(SINKS_STATSD_NO_WAIT, false, "statsdw-wait-none", &err, &r);
	UT_EQ_U64(r.statsd.dropped, 1);
	UT_EQ_U64(r.statsd.waited, 0);
	UT_ASSERT(!strstr(cap_text(&err), "waited for room"));
	cap_free(&err);

	/* what the run does on SIGINT/SIGTERM */
	stuck_statsd_run(0, true, "statsdw-wait-stopped", &err, &r);
	UT_EQ_U64(r.statsd.dropped, 1);
	UT_EQ_U64(r.statsd.waited, 0);
	cap_free(&err);
}

/* A full disk is named, counted, and reported in the summary. */
UT_TEST(sinks_write_failure_is_reported)
{
	FILE *full = fopen("/dev/full", "w");
	struct capture err;
	struct sinks *s;
	struct err e = { 0 };
	struct event ev = { .kind = EVENT_RECORD, .boot_ns = 1, .probe = &pa };

	UT_ASSERT(full);
	cap_open(&err);
	struct sinks_options opt = { .statsd = SINKS_STATSD_OFF, .json = full };
	UT_EQ_INT(sinks_open(&s, &opt, &e), 0);
	UT_EQ_INT(sinks_event(s, &ev), 0); /* buffered: not yet known */
	UT_EQ_INT(sinks_flush(s, &e), -ENOSPC);
	UT_EQ_STR(e.msg, "json output: write failed: No space left on device (0 events "
		  "written, 1 lost)");
	UT_EQ_INT(sinks_event(s, &ev), -ENOSPC); /* now every event says it is lost */
	struct sink_report r;
	sinks_report(s, &r);
	UT_EQ_INT(r.n_errors, 1);
	UT_ASSERT(sinks_finish(s, NULL, 0, 0, err.f, &e) < 0);
	sinks_close(s);
	fclose(full);
	/* the caller (cmd_run) says each output error once, as an error line: the
	 * summary does not repeat it */
	UT_ASSERT(!strstr(cap_text(&err), "write failed"));
	cap_free(&err);
}

/* A call an exit probe found unwound goes only to the sinks that take it
 * (the call-tree writers): the text and JSON Lines outputs never show it. */
UT_TEST(sinks_unwound_events_only_to_the_sinks_that_take_them)
{
	struct capture text, json;
	struct sinks *s;
	struct err e = { 0 };
	struct event gone = { .kind = EVENT_UNWOUND, .boot_ns = 9000, .mono_ns = 8000,
			      .duration_ns = 500, .pid = 1, .tid = 2, .comm = "t", .probe = &pa };
	struct event ret = gone;
	size_t t0, j0;

	ret.kind = EVENT_RETURN;
	cap_open(&text);
	cap_open(&json);
	struct sinks_options opt = { .statsd = SINKS_STATSD_OFF, .text = text.f, .json = json.f };
	UT_EQ_INT(sinks_open(&s, &opt, &e), 0);
	UT_EQ_INT(sinks_flush(s, &e), 0);
	fflush(text.f);
	fflush(json.f);
	t0 = text.len;
	j0 = json.len;
	UT_EQ_INT(sinks_event(s, &gone), 0);
	UT_EQ_INT(sinks_flush(s, &e), 0);
	fflush(text.f);
	fflush(json.f);
	UT_EQ_INT(text.len, t0);
	UT_EQ_INT(json.len, j0);
	UT_EQ_INT(sinks_event(s, &ret), 0);   /* the same call as a return is shown */
	UT_EQ_INT(sinks_flush(s, &e), 0);
	fflush(text.f);
	fflush(json.f);
	UT_ASSERT(text.len > t0);
	UT_ASSERT(json.len > j0);
	sinks_close(s);
	cap_free(&text);
	cap_free(&json);
}

/* The summary of a run with call stacks carries what the mapping records
 * lost (text and JSON's "stack_mappings", schema-checked); 0s when none was,
 * and no such key at all without stacks. */
static void stack_mappings_run(const struct stack_mappings_report *m, struct capture *json,
			       struct capture *err)
{
	struct sinks *s;
	struct err e = { 0 };
	struct probe_stats rows[] = { { .probe = &pa, .hits = 1, .delivered = 1 } };

	cap_open(json);
	cap_open(err);
	struct sinks_options opt = { .statsd = SINKS_STATSD_OFF, .json = json->f };
	UT_EQ_INT(sinks_open(&s, &opt, &e), 0);
	if (m)
		sinks_set_stack_mappings(s, m);
	UT_EQ_INT(sinks_finish(s, rows, 1, 1000, err->f, &e), 0);
	sinks_close(s);
}

UT_TEST(sinks_summary_says_the_stack_mapping_losses)
{
	struct capture json, err;
	struct jc_doc schema;
	char why[512] = "";

	UT_EQ_INT(load_schema(&schema), 0);
	stack_mappings_run(&(struct stack_mappings_report){ .on = true, .lost = 3, .not_kept = 1,
							    .files_unopened = 2 }, &json, &err);
	if (validate_lines(&schema, cap_text(&json), why, sizeof(why)) < 0)
		ut_fail(__FILE__, __LINE__, "%s", why);
	UT_CONTAINS(cap_text(&json), "\"stack_mappings\":{\"lost\":3,\"malformed\":0,"
				     "\"not_kept\":1,\"files_unopened\":2}");
	UT_CONTAINS(cap_text(&err), "WARNING: call stacks: 3 mapping records lost by the kernel, "
				    "0 malformed, 1 mappings or processes not kept");
	UT_CONTAINS(cap_text(&err), "WARNING: call stacks: 2 mapped files could not be opened");
	cap_free(&json);
	cap_free(&err);

	stack_mappings_run(&(struct stack_mappings_report){ .on = true }, &json, &err);
	if (validate_lines(&schema, cap_text(&json), why, sizeof(why)) < 0)
		ut_fail(__FILE__, __LINE__, "%s", why);
	UT_CONTAINS(cap_text(&json), "\"stack_mappings\":{\"lost\":0,\"malformed\":0,"
				     "\"not_kept\":0,\"files_unopened\":0}");
	UT_ASSERT(!strstr(cap_text(&err), "call stacks"));
	cap_free(&json);
	cap_free(&err);

	stack_mappings_run(NULL, &json, &err);
	UT_ASSERT(!strstr(cap_text(&json), "stack_mappings"));
	cap_free(&json);
	cap_free(&err);
	jc_free(&schema);
}
