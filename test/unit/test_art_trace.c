/* The method-trace writers: ART's V1 file (key section text, 32-byte header,
 * 10-byte records decoded here byte by byte), speedscope's evented profiles,
 * the replay order they share, and the method keys of the plan. */
#include "ut.h"

#include <stdlib.h>

#include "plan/method_key.h"
#include "sink/art_trace_out.h"
#include "sink/sink_ops.h"
#include "sink/speedscope_out.h"
#include "sink/summary.h"
#include "sink_testutil.h"

static const struct probe_desc rec_p = {
	.program = "p", .file = "/data/app/lib/libwork.so", .method = "_Z3recl",
	.method_key = "libwork.so\trec\t(long)\t",
};
static const struct probe_desc leaf_p = { .program = "p", .file = "/system/lib64/libc.so",
					  .method = "write" };
static const struct probe_desc java_p = {
	.program = "p", .method = "int com.x.Y.work(long)",
	.method_key = "com.x.Y\twork\t(J)I\tY.java",
};

/* A call on tid that entered at enter and returned at ret (ns). */
static struct event ret_at(const struct probe_desc *p, uint32_t tid, uint64_t enter,
			   uint64_t ret, const char *comm)
{
	return (struct event){ .kind = EVENT_RETURN, .boot_ns = ret, .duration_ns = ret - enter,
			       .pid = 100, .tid = tid, .comm = comm, .probe = p };
}

/* Return events in return order: rec(rec(leaf)) on 100; java on 40000 (a tid
 * the readers cannot take); a call of rec still running on 100 at the end. */
static void feed(void (*fn)(void *, const struct event *), void *st)
{
	struct event e[] = {
		ret_at(&leaf_p, 100, 3000, 4000, "main"),
		ret_at(&java_p, 40000, 3500, 9000, "binder:100_2"),
		ret_at(&rec_p, 100, 2000, 5000, "main"),
		ret_at(&rec_p, 100, 1000, 6000, "main"),
		ret_at(&leaf_p, 100, 7000, 7500, "main"), /* inside the running call */
	};
	for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++)
		fn(st, &e[i]);
}

static void art_feed(void *st, const struct event *ev)
{
	art_trace_event(st, ev);
}

static uint32_t le(const unsigned char *p, int n)
{
	uint32_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

UT_TEST(art_trace_key_section_header_and_records)
{
	struct capture c;
	struct art_trace_out t;
	struct err e = { 0 };
	const struct running_call run = { .tid = 100, .probe = &rec_p, .enter_boot_ns = 6500 };
	FILE *warn = tmpfile();
	char said[512] = "";

	cap_open(&c);
	UT_EQ_INT(art_trace_open(&t, c.f, &e), 0);
	t.warn = warn;
	feed(art_feed, &t);
	call_seq_add_running(&t.calls, &run, 10000);
	art_trace_close(&t);
	const char *text = cap_text(&c);
	const char *key =
		"*version\n2\ndata-file-overflow=false\nclock=wall\nelapsed-time-usec=9\n"
		"num-method-calls=12\nclock-call-overhead-nsec=0\nvm=uprobestats\npid=100\n"
		"*threads\n100\tmain\n1\tbinder:100_2 (tid 40000)\n"
		"*methods\n0x4\tlibc.so\twrite\t()\t\n0x8\tcom.x.Y\twork\t(J)I\tY.java\n"
		"0xc\tlibwork.so\trec\t(long)\t\n*end\n";
	size_t klen = strlen(key);
	UT_ASSERT(c.len >= klen + 32);
	UT_ASSERT(memcmp(text, key, klen) == 0);
	const unsigned char *h = (const unsigned char *)text + klen;
	UT_ASSERT(memcmp(h, "SLOW", 4) == 0);
	UT_EQ_INT(le(h + 4, 2), 2);
	UT_EQ_INT(le(h + 6, 2), 32);
	UT_EQ_INT(c.len, klen + 32 + 12 * 10);
	/* thread, method | action, µs since the first entry (1000 ns) */
	static const uint32_t want[12][3] = {
		{ 100, 0xc, 0 }, { 100, 0xc, 1 }, { 100, 0x4, 2 }, { 1, 0x8, 2 },
		{ 100, 0x5, 3 }, { 100, 0xd, 4 }, { 100, 0xd, 5 }, { 100, 0xc, 5 },
		{ 100, 0x4, 6 }, { 100, 0x5, 6 }, { 1, 0x9, 8 }, { 100, 0xe, 9 },
	};
	for (int i = 0; i < 12; i++) {
		const unsigned char *r = h + 32 + 10 * i;
		UT_EQ_INT(le(r, 2), want[i][0]);
		UT_EQ_U64(le(r + 2, 4), want[i][1]);
		UT_EQ_INT(le(r + 6, 4), want[i][2]);
	}
	rewind(warn);
	UT_ASSERT(fread(said, 1, sizeof(said) - 1, warn) > 0);
	UT_CONTAINS(said, "1 thread(s) have an id above 32767");
	UT_CONTAINS(said, "tid 40000 as 1");
	fclose(warn);
	cap_free(&c);
}

UT_TEST(art_trace_empty_run_is_a_valid_header)
{
	struct capture c;
	struct art_trace_out t;
	struct err e = { 0 };

	cap_open(&c);
	UT_EQ_INT(art_trace_open(&t, c.f, &e), 0);
	art_trace_close(&t);
	const char *text = cap_text(&c);
	UT_CONTAINS(text, "*threads\n*methods\n*end\nSLOW");
	UT_EQ_INT(c.len, strstr(text, "SLOW") - text + 32);
	cap_free(&c);
}

static void ss_feed(void *st, const struct event *ev)
{
	speedscope_event(st, ev);
}

static int member(const struct jc_doc *d, int obj, const char *k)
{
	return jc_get(d, obj, k);
}

UT_TEST(speedscope_evented_profiles_per_thread)
{
	struct capture c;
	struct speedscope_out s;
	struct err e = { 0 };
	struct jc_doc d = { 0 };
	const struct running_call run = { .tid = 100, .probe = &rec_p, .enter_boot_ns = 6500 };

	cap_open(&c);
	UT_EQ_INT(speedscope_open(&s, c.f, &e), 0);
	feed(ss_feed, &s);
	call_seq_add_running(&s.calls, &run, 10000);
	speedscope_close(&s);
	const char *text = cap_text(&c);
	UT_EQ_INT(jc_parse(&d, text, c.len), 0);
	UT_ASSERT(jc_str_eq(&d, member(&d, 0, "$schema"),
			    "https://www.speedscope.app/file-format-schema.json"));
	int frames = member(&d, member(&d, 0, "shared"), "frames");
	UT_EQ_INT(jc_count(&d, frames), 3);
	int f0 = d.nodes[frames].child, f1 = d.nodes[f0].next, f2 = d.nodes[f1].next;
	UT_ASSERT(jc_str_eq(&d, member(&d, f0, "name"), "write"));
	UT_ASSERT(jc_str_eq(&d, member(&d, f0, "file"), "/system/lib64/libc.so"));
	UT_ASSERT(jc_str_eq(&d, member(&d, f1, "name"), "Y.work"));
	UT_ASSERT(jc_str_eq(&d, member(&d, f2, "name"), "_Z3recl"));
	int profiles = member(&d, 0, "profiles");
	UT_EQ_INT(jc_count(&d, profiles), 2);
	int p0 = d.nodes[profiles].child, p1 = d.nodes[p0].next;
	UT_ASSERT(jc_str_eq(&d, member(&d, p0, "type"), "evented"));
	UT_ASSERT(jc_str_eq(&d, member(&d, p0, "name"), "main (tid 100)"));
	UT_ASSERT(jc_str_eq(&d, member(&d, p0, "unit"), "nanoseconds"));
	UT_EQ_INT(d.nodes[member(&d, p0, "endValue")].num, 9000);
	UT_ASSERT(jc_str_eq(&d, member(&d, p1, "name"), "binder:100_2 (tid 40000)"));
	/* main: O rec@0, O rec@1000, O write@2000, C write@3000, C rec@4000,
	 * C rec@5000, O rec@5500, O write@6000, C write@6500, C rec@9000 */
	static const struct { char type; int frame, at; } want[] = {
		{ 'O', 2, 0 }, { 'O', 2, 1000 }, { 'O', 0, 2000 }, { 'C', 0, 3000 },
		{ 'C', 2, 4000 }, { 'C', 2, 5000 }, { 'O', 2, 5500 }, { 'O', 0, 6000 },
		{ 'C', 0, 6500 }, { 'C', 2, 9000 },
	};
	int evs = member(&d, p0, "events");
	UT_EQ_INT(jc_count(&d, evs), 10);
	int k = 0;
	for (int ev = d.nodes[evs].child; ev >= 0; ev = d.nodes[ev].next, k++) {
		char type[2] = { want[k].type, 0 };
		UT_ASSERT(jc_str_eq(&d, member(&d, ev, "type"), type));
		UT_EQ_INT(d.nodes[member(&d, ev, "frame")].num, want[k].frame);
		UT_EQ_INT(d.nodes[member(&d, ev, "at")].num, want[k].at);
	}
	jc_free(&d);
	cap_free(&c);
}

/* Replay order: outer before inner at the same entry; a call that ends
 * after its encloser is ended with it (counted). */
static void count_actions(void *ctx, const struct call_seq_call *c, enum call_action a,
			  uint64_t ns)
{
	char *log = ctx;
	size_t n = strlen(log);

	snprintf(log + n, 256 - n, "%c%u@%llu ", a == CALL_ENTER ? 'O' : a == CALL_EXIT ? 'C' : 'U',
		 c->method, (unsigned long long)ns);
}

UT_TEST(call_seq_same_entry_and_clamping)
{
	struct call_seq s = { 0 };
	char log[256] = "";
	struct event a = ret_at(&leaf_p, 7, 100, 200, "t"), b = ret_at(&rec_p, 7, 100, 300, "t"),
		     x = ret_at(&java_p, 7, 250, 400, "t");

	UT_ASSERT(call_seq_add(&s, &a));
	UT_ASSERT(call_seq_add(&s, &b));
	UT_ASSERT(call_seq_add(&s, &x));
	struct event rec = { .kind = EVENT_RECORD, .probe = &rec_p };
	UT_ASSERT(!call_seq_add(&s, &rec));
	call_seq_replay(&s, count_actions, log);
	UT_EQ_STR(log, "O1@100 O0@100 C0@200 O2@250 C2@300 C1@300 ");
	UT_EQ_INT(s.clamped, 1);
	call_seq_free(&s);
}

/* A call on tid that an exception or a longjmp left, found (by a later hit
 * of its probe) at found: the loop's EVENT_UNWOUND, both clocks set, the
 * monotonic one `off` behind. */
static struct event unwound_at(const struct probe_desc *p, uint32_t tid, uint64_t enter,
			       uint64_t found, uint64_t off)
{
	return (struct event){ .kind = EVENT_UNWOUND, .boot_ns = found, .mono_ns = found - off,
			       .duration_ns = found - enter, .pid = 100, .tid = tid,
			       .comm = "t", .probe = p };
}

/* main: a(1000) -> b(1100) -> longjmp; a again at 2000 reveals the old a
 * there, then b at 2100 the old b (ended with the a it was in: clamped),
 * both returning; records as they come (the unwound ones first). */
UT_TEST(call_seq_unwound_calls_are_unrolled_before_the_hit_that_found_them)
{
	struct call_seq s = { 0 };
	char log[256] = "";
	struct event e[] = {
		unwound_at(&rec_p, 7, 1000, 2000, 500),
		unwound_at(&leaf_p, 7, 1100, 2100, 500),
		ret_at(&leaf_p, 7, 2100, 2200, "t"),
		ret_at(&rec_p, 7, 2000, 2300, "t"),
	};

	for (size_t i = 0; i < 4; i++) {
		e[i].mono_ns = e[i].boot_ns - 500;
		UT_ASSERT(call_seq_add(&s, &e[i]));
	}
	call_seq_replay(&s, count_actions, log);
	/* rec_p is method 0, leaf_p 1 */
	UT_EQ_STR(log, "O0@1000 O1@1100 U1@2000 U0@2000 O0@2000 O1@2100 C1@2200 C0@2300 ");
	UT_EQ_INT(s.unwound, 2);
	UT_EQ_INT(s.clamped, 1);
	call_seq_free(&s);
}

/* The loop measures BOOTTIME - MONOTONIC anew at each tick: a call unwound at
 * an entry ends at that entry's ns even when the two records came with
 * offsets a few ns apart (read from their own clock by the first offset). */
UT_TEST(call_seq_times_from_the_records_own_clock)
{
	struct call_seq s = { 0 };
	char log[256] = "";
	struct event gone = unwound_at(&rec_p, 7, 1000, 2000, 500);
	struct event next = ret_at(&rec_p, 7, 2000, 3000, "t");

	next.mono_ns = 3000 - 500;
	next.boot_ns += 40;     /* a later drain's offset */
	next.duration_ns = 1000;
	UT_ASSERT(call_seq_add(&s, &gone));
	UT_ASSERT(call_seq_add(&s, &next));
	call_seq_replay(&s, count_actions, log);
	UT_EQ_STR(log, "O0@1000 U0@2000 O0@2000 C0@3000 ");
	call_seq_free(&s);

	/* the same for a call still running at the end: its entry by its
	 * monotonic time, whatever BOOTTIME the end read gave it */
	struct call_seq r = { 0 };
	const struct running_call run = { .tid = 7, .probe = &rec_p, .enter_boot_ns = 2070,
					  .enter_mono_ns = 2000 - 500 };
	log[0] = '\0';
	UT_ASSERT(call_seq_add(&r, &gone));
	UT_ASSERT(call_seq_add_running(&r, &run, 9000));
	call_seq_replay(&r, count_actions, log);
	UT_EQ_STR(log, "O0@1000 U0@2000 O0@2000 U0@9000 ");
	call_seq_free(&r);
}

/* ---- the entry sp: an unrolled call ends where a later call's entry shows
 * its frame gone ---- */

static struct event with_sp(struct event e, uint64_t sp)
{
	e.entry_sp = sp;
	e.mono_ns = e.boot_ns;
	return e;
}

/* rec(sp 1000) left by a longjmp at about 1500; leaf (another function)
 * entered at 2000 from the same frame (sp 1000: rec's frame was gone) and
 * returning; rec again at 3000, whose entry revealed the old one.  Without
 * the sp, leaf is drawn inside the old rec (until 3000); with it, the old
 * rec is unrolled at leaf's entry and leaf is beside it. */
UT_TEST(call_seq_a_later_call_at_or_above_the_sp_ends_the_unrolled_call)
{
	struct call_seq s = { 0 };
	char log[256] = "";
	struct event e[] = {
		with_sp(unwound_at(&rec_p, 7, 1000, 3000, 0), 1000),
		with_sp(ret_at(&leaf_p, 7, 2000, 2500, "t"), 1000),
		with_sp(ret_at(&rec_p, 7, 3000, 3500, "t"), 1000),
	};

	for (size_t i = 0; i < 3; i++)
		UT_ASSERT(call_seq_add(&s, &e[i]));
	call_seq_replay(&s, count_actions, log);
	UT_EQ_STR(log, "O0@1000 U0@2000 O1@2000 C1@2500 O0@3000 C0@3500 ");
	UT_EQ_INT(s.gone, 1);
	UT_EQ_INT(s.clamped, 0);
	call_seq_free(&s);

	/* the same calls with no sp known (0): nested as before */
	struct call_seq o = { 0 };
	log[0] = '\0';
	for (size_t i = 0; i < 3; i++) {
		e[i].entry_sp = 0;
		UT_ASSERT(call_seq_add(&o, &e[i]));
	}
	call_seq_replay(&o, count_actions, log);
	UT_EQ_STR(log, "O0@1000 O1@2000 C1@2500 U0@3000 O0@3000 C0@3500 ");
	UT_EQ_INT(o.gone, 0);
	call_seq_free(&o);
}

/* A call entered below the unrolled call's sp is taken as inside it (the sp
 * cannot tell it from one made after the longjmp from a deeper frame); a
 * returned call is never cut, whatever the sp of a call entered while it
 * ran (a signal handler on another stack); above it the rule goes on. */
UT_TEST(call_seq_below_the_sp_and_returned_calls_stay_nested)
{
	struct call_seq s = { 0 };
	char log[256] = "";
	struct event e[] = {
		with_sp(unwound_at(&rec_p, 7, 1000, 5000, 0), 1000),
		with_sp(ret_at(&leaf_p, 7, 1500, 1600, "t"), 900),     /* below: inside */
		with_sp(ret_at(&java_p, 7, 2000, 3000, "t"), 900),     /* below: inside */
		with_sp(ret_at(&leaf_p, 7, 2100, 2200, "t"), 4000),    /* inside java (returned) */
	};

	for (size_t i = 0; i < 4; i++)
		UT_ASSERT(call_seq_add(&s, &e[i]));
	call_seq_replay(&s, count_actions, log);
	UT_EQ_STR(log, "O0@1000 O1@1500 C1@1600 O2@2000 O1@2100 C1@2200 C2@3000 U0@5000 ");
	UT_EQ_INT(s.gone, 0);
	call_seq_free(&s);
}

/* rec(sp 1000) -> leaf(sp 900), both left by one longjmp; each revealed
 * late by its own probe (rec at 6000, leaf at 5000).  java entered at 2000
 * at sp 1000 ends both there, innermost first; a call still running at the
 * end (a longjmp no later call of its probe revealed) the same way. */
UT_TEST(call_seq_the_sp_ends_nested_unrolled_and_running_calls)
{
	struct call_seq s = { 0 };
	char log[256] = "";
	struct event e[] = {
		with_sp(unwound_at(&leaf_p, 7, 1100, 5000, 0), 900),
		with_sp(unwound_at(&rec_p, 7, 1000, 6000, 0), 1000),
		with_sp(ret_at(&java_p, 7, 2000, 2500, "t"), 1000),
	};

	for (size_t i = 0; i < 3; i++)
		UT_ASSERT(call_seq_add(&s, &e[i]));
	call_seq_replay(&s, count_actions, log);
	/* leaf_p is method 0, rec_p 1, java_p 2 */
	UT_EQ_STR(log, "O1@1000 O0@1100 U0@2000 U1@2000 O2@2000 C2@2500 ");
	UT_EQ_INT(s.gone, 2);
	call_seq_free(&s);

	struct call_seq r = { 0 };
	const struct running_call run = { .tid = 7, .probe = &rec_p, .enter_boot_ns = 1000,
					  .entry_sp = 1000 };
	struct event after = with_sp(ret_at(&leaf_p, 7, 2000, 2500, "t"), 1000);
	log[0] = '\0';
	UT_ASSERT(call_seq_add(&r, &after));
	UT_ASSERT(call_seq_add_running(&r, &run, 9000));
	call_seq_replay(&r, count_actions, log);
	/* leaf_p is method 0, rec_p 1 */
	UT_EQ_STR(log, "O1@1000 U1@2000 O0@2000 C0@2500 ");
	UT_EQ_INT(r.gone, 1);
	call_seq_free(&r);
}

/* The ART file: the unwound call entered, then unrolled (action 2) before
 * the entry that found it, at that entry's µs; the summary's count of
 * unwound calls matches what came, so nothing is said. */
UT_TEST(art_trace_unrolls_unwound_calls)
{
	struct capture c;
	struct art_trace_out t;
	struct err e = { 0 };
	FILE *warn = tmpfile();
	struct event gone = unwound_at(&rec_p, 100, 1000, 4000, 0);
	struct event next = ret_at(&rec_p, 100, 4000, 6000, "main");
	const struct probe_stats row = { .unwound = 1 };

	next.mono_ns = next.boot_ns;
	cap_open(&c);
	UT_EQ_INT(art_trace_open(&t, c.f, &e), 0);
	t.warn = warn;
	art_trace_event(&t, &next);
	art_trace_event(&t, &gone);
	art_trace_sink.probe_rows(&t, &row, 1);
	art_trace_close(&t);
	const char *text = cap_text(&c);
	const char *end = strstr(text, "*end\n");
	UT_ASSERT(end != NULL);
	const unsigned char *h = (const unsigned char *)end + 5;
	UT_EQ_INT(c.len, (size_t)((const char *)h - text) + 32 + 4 * 10);
	static const uint32_t want[4][2] = { { 0x4, 0 }, { 0x6, 3 }, { 0x4, 3 }, { 0x5, 5 } };
	for (int i = 0; i < 4; i++) {
		const unsigned char *r = h + 32 + 10 * i;
		UT_EQ_INT(le(r, 2), 100);
		UT_EQ_U64(le(r + 2, 4), want[i][0]);
		UT_EQ_INT(le(r + 6, 4), want[i][1]);
	}
	UT_EQ_INT(ftell(warn), 0);
	fclose(warn);
	cap_free(&c);
}

UT_TEST(method_keys_java_and_native)
{
	char *k = method_key_java("void com.a.B$C.run(int[], java.lang.String)", "B.java");
	UT_EQ_STR(k, "com.a.B$C\trun\t([ILjava/lang/String;)V\tB.java");
	free(k);
	k = method_key_native("/system/lib64/libbinder.so", "_ZN7android6Parcel10writeInt32Ei");
	UT_EQ_STR(k, "libbinder.so\tandroid::Parcel::writeInt32\t(int)\t");
	free(k);
	k = method_key_native("/system/lib64/libc.so", "write");
	UT_EQ_STR(k, "libc.so\twrite\t()\t");
	free(k);
	UT_ASSERT(!method_key_java("not a signature(", ""));
}
