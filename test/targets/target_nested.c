/* target_nested — a nested call chain for the per-hit cost of entry and exit
 * probes (bench.py nested).
 *
 *   target_nested [--go-fifo PATH] COUNT
 *     COUNT calls of ups_nest_a(i): ups_nest_a calls ups_nest_b, which calls
 *     ups_nest_c; each adds to its callee's return value, ups_nest_b on one
 *     of two return paths (odd and even arguments), so a probe on every
 *     return site takes both.  Prints the sum of the return values. */
#include <stdio.h>
#include <stdlib.h>

#include "go_fifo.h"

__attribute__((noinline, used, visibility("default"))) long ups_nest_c(long x)
{
	__asm__ volatile("" : "+r"(x) : : "memory");
	return x * 3;
}

__attribute__((noinline, used, visibility("default"))) long ups_nest_b(long x)
{
	long r = ups_nest_c(x);

	__asm__ volatile("" : "+r"(r) : : "memory");
	if (x & 1) {
		__asm__ volatile("" : "+r"(r) : : "memory");
		return r + 1;
	}
	__asm__ volatile("" : "+r"(r) : : "memory");
	return r + 2;
}

__attribute__((noinline, used, visibility("default"))) long ups_nest_a(long x)
{
	long r = ups_nest_b(x + 1);

	__asm__ volatile("" : "+r"(r) : : "memory");
	return r + 5;
}

int main(int argc, char **argv)
{
	int argi = go_fifo_wait(argc, argv);
	long count, sum = 0;

	if (argc - argi != 1) {
		fprintf(stderr, "usage: target_nested [--go-fifo PATH] COUNT\n");
		return 2;
	}
	count = atol(argv[argi]);
	for (long i = 0; i < count; i++)
		sum += ups_nest_a(i);
	printf("%ld\n", sum);
	return 0;
}
