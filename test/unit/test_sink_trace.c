/* The trace writer: Trace Event Format structure and pairing, systrace lines
 * in the form Perfetto's line tokenizer accepts. */
#include "ut.h"

#include <regex.h>
#include <stdlib.h>

#include "sink/trace_out.h"
#include "sink_testutil.h"

static const struct probe_desc enter_p = { .program = "prog_enter", .method = "void a.B.run()",
					   .role = PROBE_ENTER, .slice = "B.run" };
static const struct probe_desc exit_p = { .program = "prog_exit", .method = "void a.B.run()",
					  .role = PROBE_EXIT, .slice = "B.run" };
static const struct probe_desc inner_enter = { .program = "p", .role = PROBE_ENTER,
					       .slice = "inner" };
static const struct probe_desc ret_p = { .program = "prog_ret",
					 .method = "int com.x.Y.work(long)" };
static const struct probe_desc plain = { .program = "prog_plain", .method = "malloc" };

static struct event ev_at(const struct probe_desc *p, uint64_t ns, uint32_t tid)
{
	static const struct field f[] = { { .name = "uid", .type = FIELD_INT32, .v.i32 = 5 } };
	return (struct event){ .kind = EVENT_RECORD, .boot_ns = ns, .pid = 100, .tid = tid,
			       .comm = tid == 100 ? "main" : "worker", .process = "com.x",
			       .probe = p, .fields = f, .n_fields = 1 };
}

/* Sequence: tid 101 enter/exit pair with a nested, never-exited inner slice;
 * a uretprobe; an instant; an orphan exit on tid 102; a drop; tid 100 left
 * open at exit. */
static void write_sequence(struct trace_out *t)
{
	struct event e;

	e = ev_at(&enter_p, 1000000, 101);
	trace_event(t, &e);
	e = ev_at(&inner_enter, 1500000, 101);
	trace_event(t, &e);
	e = ev_at(&exit_p, 3000000, 101); /* closes inner (unfinished) then B.run */
	trace_event(t, &e);
	e = ev_at(&ret_p, 5000000, 101);
	e.kind = EVENT_RETURN;
	e.duration_ns = 1500;
	trace_event(t, &e);
	e = ev_at(&plain, 6000000, 100);
	trace_event(t, &e);
	e = ev_at(&exit_p, 6500000, 102);
	trace_event(t, &e);
	e = (struct event){ .kind = EVENT_DROP, .boot_ns = 7000000, .n_lost = 4, .probe = &plain };
	trace_event(t, &e);
	e = ev_at(&enter_p, 8000000, 100);
	trace_event(t, &e);
}

static int count_ph(const struct jc_doc *d, int events, const char *ph)
{
	int n = 0;

	for (int c = d->nodes[events].child; c >= 0; c = d->nodes[c].next)
		n += jc_str_eq(d, jc_get(d, c, "ph"), ph);
	return n;
}

UT_TEST(trace_json_pairs_slices_and_loads)
{
	struct capture c;
	struct trace_out t;
	struct jc_doc d;

	cap_open(&c);
	UT_EQ_INT(trace_open(&t, c.f, TRACE_FORMAT_JSON, NULL), 0);
	write_sequence(&t);
	trace_close(&t);
	const char *text = cap_text(&c);
	if (jc_parse(&d, text, strlen(text)) < 0)
		ut_fail(__FILE__, __LINE__, "trace is not JSON: %s", d.why);
	int events = jc_get(&d, 0, "traceEvents");
	UT_ASSERT(events >= 0);
	UT_ASSERT(jc_str_eq(&d, jc_get(&d, 0, "displayTimeUnit"), "ns"));
	UT_EQ_INT(count_ph(&d, events, "B"), 3);  /* B.run, inner, B.run on tid 100 */
	UT_EQ_INT(count_ph(&d, events, "E"), 3);  /* inner (unfinished), B.run, close-time */
	UT_EQ_INT(count_ph(&d, events, "X"), 1);
	UT_EQ_INT(count_ph(&d, events, "i"), 3);  /* plain, orphan exit, drop */
	UT_EQ_INT(count_ph(&d, events, "M"), 4);  /* process + 3 thread names */
	UT_EQ_INT(t.unclosed, 2);
	UT_EQ_INT(t.orphan_exits, 1);
	/* exact renderings of the interesting elements */
	UT_CONTAINS(text, "{\"name\":\"B.run\",\"cat\":\"prog_enter\",\"ph\":\"B\",\"ts\":1000.000,"
			  "\"pid\":100,\"tid\":101,\"args\":{\"probe\":\"void a.B.run()\",\"uid\":5}}");
	UT_CONTAINS(text, "{\"name\":\"inner\",\"ph\":\"E\",\"ts\":3000.000,\"pid\":100,\"tid\":101,"
			  "\"args\":{\"unfinished\":true}}");
	UT_CONTAINS(text, "{\"name\":\"Y.work\",\"cat\":\"prog_ret\",\"ph\":\"X\",\"ts\":4998.500,"
			  "\"pid\":100,\"tid\":101,\"dur\":1.500,");
	UT_CONTAINS(text, "\"name\":\"malloc\",\"cat\":\"prog_plain\",\"ph\":\"i\",\"ts\":6000.000,"
			  "\"pid\":100,\"tid\":100,\"s\":\"t\"");
	UT_CONTAINS(text, "\"name\":\"B.run (exit without enter)\"");
	UT_CONTAINS(text, "\"name\":\"uprobestats: 4 records dropped\"");
	UT_CONTAINS(text, "{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0.000,\"pid\":100,"
			  "\"tid\":100,\"args\":{\"name\":\"com.x\"}}");
	UT_CONTAINS(text, "{\"name\":\"B.run\",\"ph\":\"E\",\"ts\":8000.000,\"pid\":100,\"tid\":100,"
			  "\"args\":{\"unfinished\":true}}");
	jc_free(&d);
	cap_free(&c);
}

/* Perfetto's SystraceLineTokenizer regex, in POSIX ERE. */
#define PERFETTO_LINE "-([0-9]+)[[:space:]]+\\(?[[:space:]]*([0-9]+|-+)?\\)?[[:space:]]?" \
	"\\[([0-9]+)\\][[:space:]]*[a-zA-Z0-9.]{0,4}[[:space:]]+([0-9]+\\.[0-9]+):" \
	"[[:space:]]+([^[:space:]]+):"

UT_TEST(trace_systrace_lines_parse_like_perfetto)
{
	struct capture c;
	struct trace_out t;
	regex_t re;
	int begins = 0, ends = 0, lines = 0;

	UT_EQ_INT(regcomp(&re, PERFETTO_LINE, REG_EXTENDED), 0);
	cap_open(&c);
	UT_EQ_INT(trace_open(&t, c.f, TRACE_FORMAT_SYSTRACE, NULL), 0);
	write_sequence(&t);
	trace_close(&t);
	const char *text = cap_text(&c);
	UT_ASSERT(!strncmp(text, "TRACE:\n# tracer: nop\n", 21));
	for (const char *l = text; *l;) {
		const char *nl = strchr(l, '\n');
		char line[512];
		size_t n = nl ? (size_t)(nl - l) : strlen(l);
		snprintf(line, sizeof(line), "%.*s", (int)n, l);
		l += n + (nl != NULL);
		if (line[0] == '#' || !strcmp(line, "TRACE:"))
			continue;
		regmatch_t m[6];
		if (regexec(&re, line, 6, m, 0) != 0) {
			ut_fail(__FILE__, __LINE__, "not a systrace line: %s", line);
			break;
		}
		UT_ASSERT(!strncmp(line + m[5].rm_so, "tracing_mark_write", 18));
		lines++;
		begins += strstr(line, ": B|") != NULL;
		ends += strstr(line, ": E|") != NULL;
	}
	regfree(&re);
	UT_EQ_INT(begins, ends); /* every slice ends, including those open at exit */
	UT_EQ_INT(begins, 7);    /* 3 enters, 1 return, 3 instants (plain, orphan, drop) */
	UT_EQ_INT(lines, 14);
	UT_CONTAINS(text, "          worker-101 (  100) [000] ...1 0.001000000: "
			  "tracing_mark_write: B|100|B.run\n");
	UT_CONTAINS(text, "          worker-101 (  100) [000] ...1 0.004998500: "
			  "tracing_mark_write: B|100|Y.work\n");
	UT_CONTAINS(text, "            main-100 (  100) [000] ...1 0.006000000: "
			  "tracing_mark_write: B|100|malloc uid=5\n");
	cap_free(&c);
}

UT_TEST(trace_format_names)
{
	enum trace_format f;
	struct err e = { 0 };

	UT_EQ_INT(trace_parse_format("systrace", &f, &e), 0);
	UT_EQ_INT(f, TRACE_FORMAT_SYSTRACE);
	UT_EQ_INT(trace_parse_format("json", &f, &e), 0);
	UT_EQ_INT(f, TRACE_FORMAT_JSON);
	UT_ASSERT(trace_parse_format("pftrace", &f, &e) < 0);
	UT_CONTAINS(e.msg, "--trace-format=pftrace: expected one of json, systrace, perfetto, art, "
		    "speedscope");
}

/* Many threads: the table grows without losing open slices. */
UT_TEST(trace_thread_table_grows)
{
	struct capture c;
	struct trace_out t;

	cap_open(&c);
	UT_EQ_INT(trace_open(&t, c.f, TRACE_FORMAT_JSON, NULL), 0);
	for (uint32_t tid = 1; tid <= 3000; tid++) {
		struct event e = ev_at(&enter_p, tid * 1000ull, tid);
		trace_event(&t, &e);
	}
	for (uint32_t tid = 1; tid <= 3000; tid++) {
		struct event e = ev_at(&exit_p, 10000000ull + tid, tid);
		trace_event(&t, &e);
	}
	UT_EQ_INT(t.orphan_exits, 0);
	trace_close(&t);
	UT_EQ_INT(t.unclosed, 0);
	struct jc_doc d;
	UT_EQ_INT(jc_parse(&d, cap_text(&c), c.len), 0);
	jc_free(&d);
	cap_free(&c);
}

/* sections: the markers atrace writes, Perfetto-parsable lines; the Chrome
 * JSON events; an unbegun end writes nothing. */
static void write_sections(struct trace_out *t)
{
	static const struct probe_desc p = { .program = "prog_args", .method = "atrace_x" };
	static const struct section_call calls[] = {
		{ .op = SECTION_OP_BEGIN, .name = "a|b", .name_len = 3, .depth = 1 },
		{ .op = SECTION_OP_END, .name = "a|b", .name_len = 3, .depth = 1 },
		{ .op = SECTION_OP_END, .verdict = SECTION_END_UNBEGUN, .name = "", .depth = 0 },
		{ .op = SECTION_OP_ASYNC_BEGIN, .name = "load", .name_len = 4, .value = 7 },
		{ .op = SECTION_OP_ASYNC_END, .name = "load", .name_len = 4, .value = 7 },
		{ .op = SECTION_OP_COUNTER64, .name = "bytes", .name_len = 5,
		  .value = 5000000000ll },
	};

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		struct event e = ev_at(&p, 1000000 * (i + 1), 101);
		e.section = &calls[i];
		trace_event(t, &e);
	}
}

UT_TEST(trace_sections_markers_and_chrome_events)
{
	struct capture c;
	struct trace_out t;
	regex_t re;
	const char *text;

	UT_EQ_INT(regcomp(&re, PERFETTO_LINE, REG_EXTENDED), 0);
	cap_open(&c);
	UT_EQ_INT(trace_open(&t, c.f, TRACE_FORMAT_SYSTRACE, NULL), 0);
	write_sections(&t);
	trace_close(&t);
	text = cap_text(&c);
	UT_CONTAINS(text, "          worker-101 (  100) [000] ...1 0.001000000: "
			  "tracing_mark_write: B|100|a\\x7cb\n"
			  "          worker-101 (  100) [000] ...1 0.002000000: "
			  "tracing_mark_write: E|100\n"
			  "          worker-101 (  100) [000] ...1 0.004000000: "
			  "tracing_mark_write: S|100|load|7\n"
			  "          worker-101 (  100) [000] ...1 0.005000000: "
			  "tracing_mark_write: F|100|load|7\n"
			  "          worker-101 (  100) [000] ...1 0.006000000: "
			  "tracing_mark_write: C|100|bytes|5000000000\n");
	UT_ASSERT(strstr(text, "0.003000000") == NULL);   /* the unbegun end */
	UT_EQ_INT(regexec(&re, strstr(text, "          worker-101"), 0, NULL, 0), 0);
	regfree(&re);
	cap_free(&c);

	cap_open(&c);
	UT_EQ_INT(trace_open(&t, c.f, TRACE_FORMAT_JSON, NULL), 0);
	write_sections(&t);
	trace_close(&t);
	text = cap_text(&c);
	UT_CONTAINS(text, "{\"name\":\"a|b\",\"cat\":\"section\",\"ph\":\"B\",\"ts\":1000.000,"
			  "\"pid\":100,\"tid\":101,\"args\":{\"probe\":\"atrace_x\"}}");
	UT_CONTAINS(text, "{\"name\":\"a|b\",\"cat\":\"section\",\"ph\":\"E\",\"ts\":2000.000");
	UT_CONTAINS(text, "{\"name\":\"load\",\"cat\":\"async\",\"ph\":\"b\",\"ts\":4000.000,"
			  "\"pid\":100,\"tid\":101,\"id\":7}");
	UT_CONTAINS(text, "\"ph\":\"e\",\"ts\":5000.000,\"pid\":100,\"tid\":101,\"id\":7}");
	UT_CONTAINS(text, "{\"name\":\"bytes\",\"cat\":\"section\",\"ph\":\"C\",\"ts\":6000.000,"
			  "\"pid\":100,\"tid\":101,\"args\":{\"value\":5000000000}}");
	UT_ASSERT(strstr(text, "3000.000") == NULL);
	cap_free(&c);
}

/* Calls left without an exit (issue 34): an unwound call is a slice from its
 * entry to where it was found, brought down to nest in the slices written
 * before it; calls running at exit end at the end given, innermost first. */
static const struct probe_desc left_outer = { .program = "p", .method = "outer", .slice = "outer" };
static const struct probe_desc left_inner = { .program = "p", .method = "inner", .slice = "inner" };
static const struct probe_desc left_jump = { .program = "p", .method = "jump", .slice = "jump" };

static struct event left_ev(const struct probe_desc *p, enum event_kind k, uint64_t entry,
			    uint64_t end)
{
	return (struct event){ .kind = k, .boot_ns = end, .mono_ns = end, .pid = 100, .tid = 100,
			       .comm = "main", .probe = p, .duration_ns = end - entry };
}

UT_TEST(trace_json_left_calls_nest_and_are_marked)
{
	struct capture c;
	struct trace_out t;
	struct event e;
	const struct running_call running[] = {
		{ .tid = 100, .probe = &left_jump, .enter_boot_ns = 3000, .enter_mono_ns = 3000 },
		{ .tid = 100, .probe = &left_outer, .enter_boot_ns = 7000, .enter_mono_ns = 7000 },
		{ .tid = 100, .probe = &left_inner, .enter_boot_ns = 8000, .enter_mono_ns = 8000 },
	};

	cap_open(&c);
	UT_EQ_INT(trace_open(&t, c.f, TRACE_FORMAT_JSON, NULL), 0);
	e = left_ev(&left_outer, EVENT_UNWOUND, 1000, 5000);  /* nothing around it */
	trace_event(&t, &e);
	e = left_ev(&left_inner, EVENT_UNWOUND, 2000, 6000);  /* ends before outer */
	trace_event(&t, &e);
	e = left_ev(&left_outer, EVENT_RETURN, 5000, 6500);   /* the call that revealed it */
	trace_event(&t, &e);
	trace_running(&t, running, 3, 9000);
	trace_close(&t);
	const char *text = cap_text(&c);
	UT_CONTAINS(text, "{\"name\":\"outer\",\"cat\":\"p\",\"ph\":\"X\",\"ts\":1.000,\"pid\":100,"
			  "\"tid\":100,\"dur\":4.000,\"args\":{\"probe\":\"outer\",\"unwound\":true}}");
	UT_CONTAINS(text, "{\"name\":\"inner\",\"cat\":\"p\",\"ph\":\"X\",\"ts\":2.000,\"pid\":100,"
			  "\"tid\":100,\"dur\":2.999,\"args\":{\"probe\":\"inner\",\"unwound\":true}}");
	UT_CONTAINS(text, "\"ph\":\"X\",\"ts\":5.000,\"pid\":100,\"tid\":100,\"dur\":1.500,"
			  "\"args\":{\"probe\":\"outer\"}}");
	/* never revealed: inside inner, which ended before outer did */
	UT_CONTAINS(text, "{\"name\":\"jump\",\"cat\":\"p\",\"ph\":\"X\",\"ts\":3.000,\"pid\":100,"
			  "\"tid\":100,\"dur\":1.998,\"args\":{\"probe\":\"jump\","
			  "\"running_at_exit\":true}}");
	/* the callee first: viewers keep file order at the equal end */
	const char *in = strstr(text, "\"ts\":8.000,\"pid\":100,\"tid\":100,\"dur\":1.000,"
				      "\"args\":{\"probe\":\"inner\",\"running_at_exit\":true}}");
	const char *out = strstr(text, "\"ts\":7.000,\"pid\":100,\"tid\":100,\"dur\":2.000,"
				       "\"args\":{\"probe\":\"outer\",\"running_at_exit\":true}}");
	UT_ASSERT(in && out && in < out);
	cap_free(&c);
}

/* A call entered after the left one at or above its entry sp was made when
 * its frame was gone: the left call ends before it (beside, not around it);
 * one entered below the sp stays inside. */
UT_TEST(trace_json_left_call_ends_before_a_call_at_its_sp)
{
	static const struct probe_desc beside = { .program = "p", .method = "beside",
						  .slice = "beside" };
	static const struct probe_desc deeper = { .program = "p", .method = "deeper",
						  .slice = "deeper" };
	struct capture c;
	struct trace_out t;
	struct event e;
	const struct running_call run = { .tid = 100, .probe = &left_jump, .enter_boot_ns = 10000,
					  .enter_mono_ns = 10000, .entry_sp = 0x7000 };

	cap_open(&c);
	UT_EQ_INT(trace_open(&t, c.f, TRACE_FORMAT_JSON, NULL), 0);
	e = left_ev(&deeper, EVENT_RETURN, 2000, 2500);   /* below the left call's sp: inside */
	e.entry_sp = 0x6f00;
	trace_event(&t, &e);
	e = left_ev(&beside, EVENT_RETURN, 3000, 3500);   /* at its sp: after it was left */
	e.entry_sp = 0x7000;
	trace_event(&t, &e);
	e = left_ev(&left_outer, EVENT_UNWOUND, 1000, 4000);
	e.entry_sp = 0x7000;
	trace_event(&t, &e);
	e = left_ev(&beside, EVENT_RETURN, 11000, 11500); /* above the running call's sp */
	e.entry_sp = 0x7100;
	trace_event(&t, &e);
	trace_running(&t, &run, 1, 20000);
	trace_close(&t);
	const char *text = cap_text(&c);
	UT_CONTAINS(text, "\"ts\":1.000,\"pid\":100,\"tid\":100,\"dur\":1.999,"
			  "\"args\":{\"probe\":\"outer\",\"unwound\":true}}");
	UT_CONTAINS(text, "\"ts\":10.000,\"pid\":100,\"tid\":100,\"dur\":0.999,"
			  "\"args\":{\"probe\":\"jump\",\"running_at_exit\":true}}");
	cap_free(&c);
}
