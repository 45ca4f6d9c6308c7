/* The sections tracker (sink/sections.h): nesting per thread, async pairs
 * by (pid, name, cookie), counter values by width, unbegun ends and open
 * sections counted, one call seen at two layers merged only along the real
 * call chain. */
#include "ut.h"

#include <stdio.h>
#include <string.h>

#include "catalog/fields.h"
#include "sink/sections.h"

static const struct probe_desc j_begin = { .method = "void android.os.Trace.beginSection("
						     "java.lang.String)",
					   .section = SECTION_OP_BEGIN, .section_value_reg = -1 };
static const struct probe_desc j_end = { .method = "void android.os.Trace.endSection()",
					 .section = SECTION_OP_END, .section_value_reg = -1 };
static const struct probe_desc j_async = { .method = "void android.os.Trace.beginAsyncSection("
						     "java.lang.String, int)",
					   .section = SECTION_OP_ASYNC_BEGIN,
					   .section_value_reg = 2 };
static const struct probe_desc j_fw_async = { .method = "void android.os.Trace.asyncTraceBegin("
							"long, java.lang.String, int)",
					      .section = SECTION_OP_ASYNC_BEGIN,
					      .section_value_reg = 3 };
static const struct probe_desc c_begin = { .method = "atrace_begin_body",
					   .section = SECTION_OP_BEGIN, .section_value_reg = -1 };
static const struct probe_desc c_end = { .method = "atrace_end_body",
					 .section = SECTION_OP_END, .section_value_reg = -1 };
static const struct probe_desc c_async = { .method = "atrace_async_begin_body",
					   .section = SECTION_OP_ASYNC_BEGIN,
					   .section_value_reg = 1 };
static const struct probe_desc c_async_end = { .method = "atrace_async_end_body",
					       .section = SECTION_OP_ASYNC_END,
					       .section_value_reg = 1 };
static const struct probe_desc c_int = { .method = "atrace_int_body",
					 .section = SECTION_OP_COUNTER, .section_value_reg = 1 };
static const struct probe_desc c_int64 = { .method = "atrace_int64_body",
					   .section = SECTION_OP_COUNTER64,
					   .section_value_reg = 1 };
static const struct probe_desc n_end = { .method = "ATrace_endSection",
					 .section = SECTION_OP_END, .section_value_reg = -1 };

/* One call: a string field (the name, may be NULL) and registers r0..r3. */
static struct section_call call(struct sections *s, const struct probe_desc *p, uint32_t tid,
				const char *name, uint64_t r1, uint64_t r2, uint64_t r3)
{
	struct field f[5] = {
		{ .name = "r0", .type = FIELD_UINT64 },
		{ .name = "r1", .type = FIELD_UINT64, .v.u64 = r1 },
		{ .name = "r2", .type = FIELD_UINT64, .v.u64 = r2 },
		{ .name = "r3", .type = FIELD_UINT64, .v.u64 = r3 },
		{ .name = "arg0", .type = FIELD_STRING },
	};
	struct event ev = { .kind = EVENT_RECORD, .pid = 10, .tid = tid, .probe = p,
			    .fields = f, .n_fields = name ? 5 : 4 };
	struct section_call c;

	if (name) {
		f[4].v.str.ptr = name;
		f[4].v.str.len = (uint32_t)strlen(name);
	}
	sections_classify(s, &ev, &c);
	return c;
}

UT_TEST(sections_nesting_per_thread_and_unbegun_ends)
{
	struct sections *s = sections_new();
	struct sections_report r;
	struct section_call c;

	UT_ASSERT(s != NULL);
	c = call(s, &c_end, 1, NULL, 0, 0, 0);
	UT_EQ_INT(c.verdict, SECTION_END_UNBEGUN);
	call(s, &c_begin, 1, "a", 0, 0, 0);
	call(s, &c_begin, 2, "t2", 0, 0, 0);
	c = call(s, &c_begin, 1, "b", 0, 0, 0);
	UT_EQ_INT(c.depth, 2);
	c = call(s, &c_end, 1, NULL, 0, 0, 0);
	UT_EQ_INT(c.verdict, SECTION_OK);
	UT_EQ_INT(c.depth, 2);
	UT_ASSERT(c.name_len == 1 && !memcmp(c.name, "b", 1));
	c = call(s, &c_end, 1, NULL, 0, 0, 0);
	UT_ASSERT(c.name_len == 1 && !memcmp(c.name, "a", 1));
	sections_finish(s);
	sections_report(s, &r);
	UT_EQ_U64(r.begun, 3);
	UT_EQ_U64(r.ended, 2);
	UT_EQ_U64(r.end_unbegun, 1);
	UT_EQ_U64(r.open_at_exit, 1);
	UT_EQ_STR(r.first_open, "t2");
	sections_free(s);
}

UT_TEST(sections_async_pairs_and_counter_widths)
{
	struct sections *s = sections_new();
	struct sections_report r;
	struct section_call c;

	c = call(s, &c_async, 1, "load", 7, 0, 0);
	UT_EQ_INT(c.value, 7);
	call(s, &c_async, 2, "load", 8, 0, 0);
	c = call(s, &c_async_end, 3, "load", 8, 0, 0);   /* ended on another thread */
	UT_EQ_INT(c.verdict, SECTION_OK);
	c = call(s, &c_async_end, 1, "load", 9, 0, 0);
	UT_EQ_INT(c.verdict, SECTION_END_UNBEGUN);
	c = call(s, &c_int, 1, "n", 0xdead0000fffffffbull, 0, 0);
	UT_ASSERT(c.value == -5);
	c = call(s, &c_int64, 1, "n", 5000000000ull, 0, 0);
	UT_ASSERT(c.value == 5000000000ll);
	/* many async sections: the table grows, all still paired */
	for (int i = 0; i < 1000; i++)
		call(s, &c_async, 4, "many", (uint64_t)i, 0, 0);
	for (int i = 0; i < 1000; i++) {
		c = call(s, &c_async_end, 4, "many", (uint64_t)i, 0, 0);
		UT_EQ_INT(c.verdict, SECTION_OK);
	}
	sections_finish(s);
	sections_report(s, &r);
	UT_EQ_U64(r.async_begun, 1002);
	UT_EQ_U64(r.async_ended, 1001);
	UT_EQ_U64(r.async_end_unbegun, 1);
	UT_EQ_U64(r.async_open_at_exit, 1);
	UT_EQ_U64(r.counters, 2);
	sections_free(s);
}

UT_TEST(sections_one_call_at_two_layers_merges_along_the_call_chain_only)
{
	struct sections *s = sections_new();
	struct sections_report r;
	struct section_call c;

	/* Trace.beginSection -> atrace_begin_body (tag on): one section */
	call(s, &j_begin, 1, "a", 0, 0, 0);
	c = call(s, &c_begin, 1, "a", 0, 0, 0);
	UT_EQ_INT(c.verdict, SECTION_MERGED);
	/* beginAsyncSection -> asyncTraceBegin -> atrace_async_begin_body */
	call(s, &j_async, 1, "x", 0, 5, 0);
	c = call(s, &j_fw_async, 1, "x", 0, 0, 5);
	UT_EQ_INT(c.verdict, SECTION_MERGED);
	c = call(s, &c_async, 1, "x", 5, 0, 0);
	UT_EQ_INT(c.verdict, SECTION_MERGED);
	/* endSection -> atrace_end_body; then the NDK's own end: not merged
	 * (ATrace_endSection is not called by the Java method) */
	call(s, &j_end, 1, NULL, 0, 0, 0);
	c = call(s, &c_end, 1, NULL, 0, 0, 0);
	UT_EQ_INT(c.verdict, SECTION_MERGED);
	c = call(s, &n_end, 1, NULL, 0, 0, 0);
	UT_EQ_INT(c.verdict, SECTION_END_UNBEGUN);
	/* two calls of one function are two calls */
	call(s, &c_begin, 2, "same", 0, 0, 0);
	c = call(s, &c_begin, 2, "same", 0, 0, 0);
	UT_EQ_INT(c.verdict, SECTION_OK);
	UT_EQ_INT(c.depth, 2);
	sections_finish(s);
	sections_report(s, &r);
	UT_EQ_U64(r.merged, 4);
	UT_EQ_U64(r.begun, 3);
	UT_EQ_U64(r.ended, 1);
	sections_free(s);
}

/* The same (pid, name, cookie) begun twice before its ends: both begins
 * are open, the two ends pair with them (last begun first), nothing is
 * counted unbegun; a third begin left open is counted open at exit. */
UT_TEST(sections_async_begun_twice_every_begin_ended_open_or_counted)
{
	struct sections *s = sections_new();
	struct sections_report r;
	struct section_call c;

	call(s, &c_async, 1, "dup", 1, 0, 0);
	call(s, &c_async, 1, "dup", 1, 0, 0);
	c = call(s, &c_async_end, 1, "dup", 1, 0, 0);
	UT_EQ_INT(c.verdict, SECTION_OK);
	c = call(s, &c_async_end, 1, "dup", 1, 0, 0);
	UT_EQ_INT(c.verdict, SECTION_OK);
	c = call(s, &c_async_end, 1, "dup", 1, 0, 0);   /* one end too many */
	UT_EQ_INT(c.verdict, SECTION_END_UNBEGUN);
	call(s, &c_async, 2, "dup", 1, 0, 0);
	call(s, &c_async, 2, "dup", 1, 0, 0);
	call(s, &c_async_end, 2, "dup", 1, 0, 0);
	sections_finish(s);
	sections_report(s, &r);
	UT_EQ_U64(r.async_begun, 4);
	UT_EQ_U64(r.async_ended, 3);
	UT_EQ_U64(r.async_end_unbegun, 1);
	UT_EQ_U64(r.async_open_at_exit, 1);
	UT_EQ_U64(r.async_begun, r.async_ended + r.async_open_at_exit + r.async_untracked);
	sections_free(s);
}

/* Names that differ only in bytes that are not UTF-8 stay distinct (the
 * decoder keeps those bytes): "bad\xff\xfeutf8" is not "bad". */
UT_TEST(sections_names_differing_in_invalid_utf8_stay_distinct)
{
	struct sections *s = sections_new();
	struct sections_report r;
	struct section_call c;
	char raw[16] = "bad\xff\xfeutf8";
	const char *name = raw;
	size_t len = fields_str_len(raw, sizeof(raw));

	UT_EQ_INT(len, 9);
	raw[len] = 0;
	call(s, &c_async, 1, name, 1, 0, 0);
	c = call(s, &c_async_end, 1, "bad", 1, 0, 0);
	UT_EQ_INT(c.verdict, SECTION_END_UNBEGUN);
	c = call(s, &c_async_end, 1, name, 1, 0, 0);
	UT_EQ_INT(c.verdict, SECTION_OK);
	sections_finish(s);
	sections_report(s, &r);
	UT_EQ_U64(r.async_ended, 1);
	sections_free(s);
}
