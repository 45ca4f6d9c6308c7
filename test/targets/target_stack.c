/* target_stack — a known call chain for the --stack tests.
 *
 *   target_stack [--go-fifo PATH] [--exec] COUNT
 *
 * --exec: once released, exec itself again (target_stack COUNT): the calls come
 * from an image mapped after the release.
 *
 * Calls, COUNT times:
 *   main -> stk_level1 (this program) -> stk_a2 (libstk_a.so, frame pointers)
 *   -> stk_b3 (libstk_b.so, no frame pointers, rbp/x29 clobbered)
 *   -> stk_a4 (libstk_a.so) -> stk_b5 (libstk_b.so, the probed leaf)
 * so a stack taken at stk_b5's entry is exactly
 *   stk_b5, stk_a4, stk_b3, stk_a2, stk_level1, main, (libc start code).
 * Built by mk/e2e.mk against the two libraries (rpath $ORIGIN). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "go_fifo.h"

long stk_a2(long x);

__attribute__((noinline)) static long stk_level1(long x)
{
	long r = stk_a2(x);

	__asm__ volatile("" : "+r"(r)::"memory");
	return r + 1;
}

int main(int argc, char **argv)
{
	int argi = go_fifo_wait(argc, argv);
	long n, sum = 0;

	if (argc - argi == 2 && !strcmp(argv[argi], "--exec")) {
		char *args[] = { argv[0], argv[argi + 1], NULL };
		execv("/proc/self/exe", args);
		perror("execv");
		return 1;
	}
	if (argc - argi != 1) {
		fprintf(stderr, "usage: target_stack [--go-fifo PATH] [--exec] COUNT\n");
		return 2;
	}
	n = atol(argv[argi]);
	for (long i = 0; i < n; i++)
		sum += stk_level1(i);
	printf("%ld\n", sum);
	return 0;
}
