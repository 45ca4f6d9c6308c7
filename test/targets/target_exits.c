/* target_exits — functions whose exits the e2e suite probes, each reporting
 * what it saw into OUT (one JSON object per line) so the test can compare
 * the tool's records with the target's own view.
 *
 *   target_exits [--go-fifo PATH] ra COUNT OUT
 *     COUNT calls of ups_ra_check(i), which checks its own return address
 *     (__builtin_return_address(0)) lies inside its only caller,
 *     ups_ra_caller; a uretprobe replaces it with the kernel's trampoline.
 *     Returns 2 * i + 1.  OUT: {"calls": COUNT, "bad_ra": N}.
 *   target_exits [--go-fifo PATH] recurse COUNT OUT
 *     COUNT rounds of ups_recurse(round, 9): ten nested calls, the call at
 *     depth d returning round * 100 + d.  Each call measures itself (from its
 *     first statement to its last: "inner") and its caller measures the call
 *     ("outer"), CLOCK_MONOTONIC as bpf_ktime_get_ns(): per call a line
 *     {"ret": R, "inner": NS} and a line {"ret": R, "outer": NS}.
 *   target_exits [--go-fifo PATH] longjmp COUNT OUT
 *     COUNT rounds of ups_jump(round, depth = round % 4): depth + 1 nested
 *     calls; in rounds where round % 3 == 1 the innermost leaves them all
 *     through longjmp, in the others each returns round * 100 + its depth.
 *     The last round always returns.  Per returned call as for recurse; per
 *     round that jumped {"unwound": depth + 1}.
 * ups_tail_caller (never called) ends in a tail call: exit probes refuse it. */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "go_fifo.h"

static FILE *out;
static long bad_ra;
static jmp_buf jump_env;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Keeps a call from being turned into a jump or a loop. */
#define OPAQUE(v) __asm__ volatile("" : "+r"(v) : : "memory")

__attribute__((noinline, used, visibility("default"))) long ups_ra_caller(long i);

__attribute__((noinline, used, visibility("default"))) long ups_ra_check(long i)
{
	uintptr_t ra = (uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0));
	uintptr_t lo = (uintptr_t)ups_ra_caller;

	/* The call sits inside ups_ra_caller, a function of a few dozen bytes. */
	if (ra <= lo || ra >= lo + 256)
		bad_ra++;
	OPAQUE(i);
	return 2 * i + 1;
}

__attribute__((noinline, used, visibility("default"))) long ups_ra_caller(long i)
{
	long r = ups_ra_check(i);

	OPAQUE(r);
	return r;
}

/* The caller's measurement of the call that returned ret. */
static void emit_call(long ret, uint64_t outer)
{
	fprintf(out, "{\"ret\": %ld, \"outer\": %llu}\n", ret, (unsigned long long)outer);
}

__attribute__((noinline, used, visibility("default"))) long ups_recurse(long round, long depth)
{
	uint64_t t0 = now_ns(), c0, c1;
	long r = round * 100 + depth;

	if (depth > 0) {
		c0 = now_ns();
		long inner = ups_recurse(round, depth - 1);
		c1 = now_ns();
		OPAQUE(inner);
		/* The callee's own measurement is written when it returns: ours is
		 * only known here. */
		emit_call(inner, c1 - c0);
	}
	OPAQUE(r);
	fprintf(out, "{\"ret\": %ld, \"inner\": %llu}\n", r,
		(unsigned long long)(now_ns() - t0));
	return r;
}

__attribute__((noinline, used, visibility("default"))) long ups_jump(long round, long depth,
								      long jump)
{
	uint64_t t0 = now_ns(), c0, c1;
	long r = round * 100 + depth;

	if (depth > 0) {
		c0 = now_ns();
		long inner = ups_jump(round, depth - 1, jump);
		c1 = now_ns();
		OPAQUE(inner);
		emit_call(inner, c1 - c0);
	} else if (jump) {
		longjmp(jump_env, 1);
	}
	OPAQUE(r);
	fprintf(out, "{\"ret\": %ld, \"inner\": %llu}\n", r,
		(unsigned long long)(now_ns() - t0));
	return r;
}

/* Never called: a function that ends in a tail call, whose exits cannot be
 * proven (the refusal test). */
__attribute__((noinline, used, visibility("default"))) long ups_tail_callee(long i)
{
	OPAQUE(i);
	return i * 7;
}

__attribute__((noinline, used, visibility("default"))) long ups_tail_caller(long i)
{
	return ups_tail_callee(i + 1);
}

static void run_ra(long count)
{
	long sum = 0;

	for (long i = 0; i < count; i++)
		sum += ups_ra_caller(i);
	fprintf(out, "{\"calls\": %ld, \"bad_ra\": %ld, \"sum\": %ld}\n", count, bad_ra, sum);
}

static void run_recurse(long count)
{
	for (long round = 0; round < count; round++) {
		uint64_t c0 = now_ns();
		long r = ups_recurse(round, 9);
		emit_call(r, now_ns() - c0);
	}
}

static void run_longjmp(long count)
{
	for (volatile long round = 0; round < count; round++) {
		long depth = round % 4;
		long jump = round % 3 == 1 && round != count - 1;
		uint64_t c0 = now_ns();

		if (setjmp(jump_env)) {
			fprintf(out, "{\"unwound\": %ld}\n", round % 4 + 1);
			continue;
		}
		long r = ups_jump(round, depth, jump);
		if (jump)
			abort();
		emit_call(r, now_ns() - c0);
	}
}

int main(int argc, char **argv)
{
	int argi = go_fifo_wait(argc, argv);

	if (argc - argi != 3) {
		fprintf(stderr, "usage: target_exits [--go-fifo PATH] ra|recurse|longjmp COUNT OUT\n");
		return 2;
	}
	const char *mode = argv[argi];
	long count = atol(argv[argi + 1]);

	out = fopen(argv[argi + 2], "w");
	if (!out) {
		perror(argv[argi + 2]);
		return 1;
	}
	if (!strcmp(mode, "ra"))
		run_ra(count);
	else if (!strcmp(mode, "recurse"))
		run_recurse(count);
	else if (!strcmp(mode, "longjmp"))
		run_longjmp(count);
	else
		return 2;
	return fclose(out) ? 1 : 0;
}
