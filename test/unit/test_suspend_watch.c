/* probe/suspend_watch: the suspend's place on MONOTONIC from the trace text
 * of the run's tracefs instance (mono trace clock: seconds.microseconds). */
#include "ut.h"

#include <string.h>

#include "probe/suspend_watch.h"

static const char trace_text[] =
	"# tracer: nop\n"
	"#\n"
	"# entries-in-buffer/entries-written: 6/6   #P:2\n"
	"#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
	"            bash-123     [001] .....   100.000001: suspend_resume: suspend_enter[1] begin\n"
	"            bash-123     [001] .....   100.000020: suspend_resume: sync_filesystems[0] begin\n"
	"            bash-123     [001] .....   100.200000: suspend_resume: freeze_processes[0] begin\n"
	"            bash-123     [000] d..1.   101.500000: suspend_resume: machine_suspend[1] begin\n"
	"          <idle>-0       [000] d..1.   101.500250: suspend_resume: machine_suspend[1] end\n"
	"            bash-123     [001] .....   101.600000: suspend_resume: thaw_processes[0] begin\n"
	"a line of no event\n"
	"     x-1 [000] ..... 99.5: suspend_resume: machine_suspend[3] begin\n"
	"     x-1 [000] .....  nodigits.000001: suspend_resume: machine_suspend[3] begin\n"
	"            bash-9       [001] .....   205.000003: suspend_resume: machine_suspend[3] end";

UT_TEST(suspend_watch_finds_the_latest_machine_suspend_in_a_window)
{
	uint64_t at = 0;
	size_t n = strlen(trace_text);

	UT_ASSERT(suspend_watch_parse(trace_text, n, 100000000000ull, 110000000000ull, &at));
	UT_EQ_U64(at, 101500250000ull);                 /* the end, the latest */
	UT_ASSERT(suspend_watch_parse(trace_text, n, 0, 101500000000ull, &at));
	UT_EQ_U64(at, 101500000000ull);                 /* (after, before]: before itself */
	UT_ASSERT(!suspend_watch_parse(trace_text, n, 101500250000ull, 200000000000ull, &at));
	/* the last line without its newline; a one-digit fraction is tenths */
	UT_ASSERT(suspend_watch_parse(trace_text, n, 110000000000ull, 300000000000ull, &at));
	UT_EQ_U64(at, 205000003000ull);
	UT_ASSERT(suspend_watch_parse(trace_text, n, 0, 100000000000ull, &at));
	UT_EQ_U64(at, 99500000000ull);
	UT_ASSERT(!suspend_watch_parse("", 0, 0, ~0ull, &at));
}

UT_TEST(suspend_watch_off_knows_no_suspend)
{
	struct suspend_watch w = { .dir = "" };
	uint64_t at = 7;

	UT_ASSERT(!suspend_watch_on(&w));
	UT_ASSERT(!suspend_watch_boundary(&w, 0, ~0ull, &at));
	UT_EQ_U64(at, 7);
	suspend_watch_close(&w);   /* nothing to undo */
}
