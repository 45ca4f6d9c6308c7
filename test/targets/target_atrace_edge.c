/* target_atrace_edge — a host program that defines libcutils' trace-marker
 * functions itself (atrace_*_body, the symbols `uprobestats sections`
 * probes; the test names this executable with --libcutils) and calls them in
 * the edge cases of the sections test:
 *
 *   target_atrace_edge [--go-fifo PATH] utf8|dup
 *
 * utf8: names with invalid UTF-8 bytes, differing only after them:
 *   begin "bad\xff\xfeA" / begin "bad\xff\xfeB" / end / end,
 *   async begin "bad\xff\xfeA" 1 / async begin "bad\xff\xfeB" 1 /
 *   async end "bad\xff\xfeA" 1 / async end "bad\xff\xfeB" 1,
 *   counter "bad\xff\xfeutf8" 5
 * dup: async begin "dup" 1 twice, then async end "dup" 1 twice (the same
 *   process, name and cookie). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "go_fifo.h"

#define MARKER __attribute__((noinline, noipa, used, visibility("default")))

MARKER void atrace_begin_body(const char *name)
{
	__asm__ volatile("" : : "r"(name) : "memory");
}

MARKER void atrace_end_body(void)
{
	__asm__ volatile("" : : : "memory");
}

MARKER void atrace_async_begin_body(const char *name, int32_t cookie)
{
	__asm__ volatile("" : : "r"(name), "r"(cookie) : "memory");
}

MARKER void atrace_async_end_body(const char *name, int32_t cookie)
{
	__asm__ volatile("" : : "r"(name), "r"(cookie) : "memory");
}

MARKER void atrace_int_body(const char *name, int32_t value)
{
	__asm__ volatile("" : : "r"(name), "r"(value) : "memory");
}

MARKER void atrace_int64_body(const char *name, int64_t value)
{
	__asm__ volatile("" : : "r"(name), "r"(value) : "memory");
}

static void utf8(void)
{
	atrace_begin_body("bad\xff\xfe" "A");
	atrace_begin_body("bad\xff\xfe" "B");
	atrace_end_body();
	atrace_end_body();
	atrace_async_begin_body("bad\xff\xfe" "A", 1);
	atrace_async_begin_body("bad\xff\xfe" "B", 1);
	atrace_async_end_body("bad\xff\xfe" "A", 1);
	atrace_async_end_body("bad\xff\xfe" "B", 1);
	atrace_int_body("bad\xff\xfe" "utf8", 5);
}

static void dup(void)
{
	atrace_async_begin_body("dup", 1);
	atrace_async_begin_body("dup", 1);
	atrace_async_end_body("dup", 1);
	atrace_async_end_body("dup", 1);
}

int main(int argc, char **argv)
{
	int argi = go_fifo_wait(argc, argv);

	if (argi != argc - 1 || (strcmp(argv[argi], "utf8") && strcmp(argv[argi], "dup"))) {
		fprintf(stderr, "usage: target_atrace_edge [--go-fifo PATH] utf8|dup\n");
		return 2;
	}
	if (!strcmp(argv[argi], "utf8"))
		utf8();
	else
		dup();
	printf("target_atrace_edge: done\n");
	return 0;
}
