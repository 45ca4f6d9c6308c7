/* target_vmstack — a known call chain in one static program, for the arm64 VM's
 * --stack scenarios (test/vm/vmtest_stack.c), beside target_vmlibs' chain across two
 * shared libraries (test/targets/vmlibs/): the static musl build, where no PLT or loader
 * is involved.
 *
 *   target_vmstack [--go-fifo PATH] COUNT OUT
 *
 * Calls, COUNT times:
 *   main -> vstk_1 -> vstk_2 -> vstk_3 (no frame pointer, x29/rbp clobbered)
 *   -> vstk_4 -> vstk_5 (the probed leaf)
 * so a stack taken at vstk_5's entry is exactly vstk_5, vstk_4, vstk_3, vstk_2,
 * vstk_1, main.  Each function records its own return address
 * (__builtin_return_address), which is the pc the unwinder must report for its
 * caller's frame; at exit OUT gets one line:
 *   {"leaf": ADDR, "ra": [RA5, RA4, RA3, RA2, RA1]}
 * ADDR being vstk_5's address (frame 0's pc) and RAn what vstk_n returned to. */
#include <stdio.h>
#include <stdlib.h>

#include "go_fifo.h"

#define DEPTH 5

static void *ra[DEPTH + 1];

#define KEEP(v) __asm__ volatile("" : "+r"(v)::"memory")

__attribute__((noinline)) long vstk_5(long x)
{
	ra[5] = __builtin_return_address(0);
	KEEP(x);
	return x * 3;
}

__attribute__((noinline)) long vstk_4(long x)
{
	long r = vstk_5(x + 1);

	ra[4] = __builtin_return_address(0);
	KEEP(r);
	return r + 4;
}

/* Uses the frame-pointer register as an ordinary register around its call: a
 * frame-pointer walk through it would go wrong, only the CFI unwinds it. */
__attribute__((noinline, optimize("omit-frame-pointer"))) long vstk_3(long x)
{
	long r;

#if defined(__x86_64__)
	__asm__ volatile("mov %0, %%rbp" ::"r"(x ^ 0x5a5a) : "rbp");
#elif defined(__aarch64__)
	__asm__ volatile("mov x29, %0" ::"r"(x ^ 0x5a5a) : "x29");
#endif
	r = vstk_4(x + 1);
	ra[3] = __builtin_return_address(0);
	KEEP(r);
	return r + 3;
}

__attribute__((noinline)) long vstk_2(long x)
{
	long r = vstk_3(x + 1);

	ra[2] = __builtin_return_address(0);
	KEEP(r);
	return r + 2;
}

__attribute__((noinline)) long vstk_1(long x)
{
	long r = vstk_2(x + 1);

	ra[1] = __builtin_return_address(0);
	KEEP(r);
	return r + 1;
}

int main(int argc, char **argv)
{
	int argi = go_fifo_wait(argc, argv);
	long n, sum = 0;
	FILE *f;

	if (argc - argi != 2) {
		fprintf(stderr, "usage: target_vmstack [--go-fifo PATH] COUNT OUT\n");
		return 2;
	}
	n = atol(argv[argi]);
	for (long i = 0; i < n; i++)
		sum += vstk_1(i);
	f = fopen(argv[argi + 1], "w");
	if (!f) {
		perror(argv[argi + 1]);
		return 1;
	}
	fprintf(f, "{\"leaf\": %lu, \"ra\": [%lu, %lu, %lu, %lu, %lu]}\n",
		(unsigned long)&vstk_5, (unsigned long)ra[5], (unsigned long)ra[4],
		(unsigned long)ra[3], (unsigned long)ra[2], (unsigned long)ra[1]);
	printf("%ld\n", sum);
	return fclose(f) ? 1 : 0;
}
