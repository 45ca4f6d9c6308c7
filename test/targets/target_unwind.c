/* target_unwind — calls left by a longjmp, then more calls of the same
 * functions, and its own account of every call (test_art_trace.py).
 *
 *   target_unwind [--go-fifo PATH] ROUNDS OUT
 *     ROUNDS times, on the main thread:
 *       ups_uw_outer(1) -> ups_uw_inner(1) -> ups_uw_jump(), which longjmps
 *         back to main (none of the three returns);
 *       ups_uw_outer(0) -> ups_uw_inner(0), both returning (the entries
 *         that reveal the calls left before);
 *       ups_uw_rec(3) -> ups_uw_rec(2) -> ups_uw_rec(1), which longjmps back
 *         into ups_uw_rec(3), which then returns (its exit reveals the two
 *         calls left below it);
 *       ups_uw_left(1), which longjmps back to main; ups_uw_beside(), another
 *         function, called from main after it; ups_uw_left(0), returning
 *         (its entry reveals the call left before).
 *     Then once more ups_uw_left(1) left by a longjmp and ups_uw_beside()
 *     after it, with no later ups_uw_left to reveal it (still pending at the
 *     end).  ups_uw_beside, entered at the sp ups_uw_left had, is beside the
 *     call left, never inside it.
 *     OUT gets the calls as the program itself saw them, one action a line:
 *     "ent NAME" at each entry, "xit NAME" at each return, "unr NAME" for
 *     each call a longjmp left (innermost first, where it landed).
 *   Prints the sum of the return values. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

#include "go_fifo.h"

#define OPAQUE(v) __asm__ volatile("" : "+r"(v) : : "memory")
#define PROBED __attribute__((noinline, used, visibility("default")))
#define MAX_LOG 4096
#define MAX_DEPTH 16

static const char *acts[MAX_LOG][2];
static int n_acts;
static const char *shadow[MAX_DEPTH];   /* the calls in flight, innermost last */
static int depth;
static jmp_buf back, rec_back;

static void act(const char *what, const char *name)
{
	if (n_acts < MAX_LOG) {
		acts[n_acts][0] = what;
		acts[n_acts][1] = name;
		n_acts++;
	}
}

static void enter(const char *name)
{
	act("ent", name);
	if (depth < MAX_DEPTH)
		shadow[depth] = name;
	depth++;
}

static void leave(const char *name)
{
	act("xit", name);
	depth--;
}

/* Where a longjmp landed with `keep` calls still in flight: the others were
 * left, innermost first. */
static void landed(int keep)
{
	while (depth > keep) {
		depth--;
		act("unr", depth < MAX_DEPTH ? shadow[depth] : "?");
	}
}

PROBED void ups_uw_jump(long x)
{
	enter("ups_uw_jump");
	OPAQUE(x);
	longjmp(back, 1);
}

PROBED long ups_uw_inner(long x)
{
	enter("ups_uw_inner");
	if (x)
		ups_uw_jump(x);
	OPAQUE(x);
	leave("ups_uw_inner");
	return x + 2;
}

PROBED long ups_uw_outer(long x)
{
	long r;

	enter("ups_uw_outer");
	r = ups_uw_inner(x);
	OPAQUE(r);
	leave("ups_uw_outer");
	return r + 1;
}

PROBED long ups_uw_rec(long n)
{
	volatile int keep;
	long r;

	enter("ups_uw_rec");
	keep = depth;
	if (n <= 1)
		longjmp(rec_back, 1);
	if (n == 3 && setjmp(rec_back)) {
		landed(keep);
		leave("ups_uw_rec");
		return 100;
	}
	r = ups_uw_rec(n - 1);
	OPAQUE(r);
	leave("ups_uw_rec");
	return r + 1;
}

PROBED long ups_uw_left(long x)
{
	enter("ups_uw_left");
	OPAQUE(x);
	if (x)
		longjmp(back, 1);
	leave("ups_uw_left");
	return x + 4;
}

PROBED long ups_uw_beside(long x)
{
	enter("ups_uw_beside");
	OPAQUE(x);
	leave("ups_uw_beside");
	return x + 5;
}

/* ups_uw_left left by a longjmp, then ups_uw_beside from the same frame
 * (so at the same sp). */
static __attribute__((noinline)) long left_then_beside(void)
{
	if (!setjmp(back))
		(void)ups_uw_left(1);   /* never returns */
	else
		landed(0);
	return ups_uw_beside(1);
}

int main(int argc, char **argv)
{
	int argi = go_fifo_wait(argc, argv);
	long rounds, sum = 0;
	FILE *out;

	if (argc - argi != 2) {
		fprintf(stderr, "usage: target_unwind [--go-fifo PATH] ROUNDS OUT\n");
		return 2;
	}
	rounds = atol(argv[argi]);
	for (long i = 0; i < rounds; i++) {
		if (!setjmp(back))
			sum += ups_uw_outer(1);
		else
			landed(0);
		sum += ups_uw_outer(0);
		sum += ups_uw_rec(3);
		sum += left_then_beside();
		sum += ups_uw_left(0);
	}
	sum += left_then_beside();
	out = fopen(argv[argi + 1], "w");
	if (!out)
		return 1;
	for (int i = 0; i < n_acts; i++)
		fprintf(out, "%s %s\n", acts[i][0], acts[i][1]);
	printf("%ld\n", sum);
	return fclose(out) ? 1 : 0;
}
