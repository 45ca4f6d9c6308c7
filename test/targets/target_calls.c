/* target_calls — a known call tree for method-trace writers (test_art_trace.py).
 *
 *   target_calls [--go-fifo PATH] DEPTH ROUNDS [JUMP]
 *     ROUNDS times, on the main thread: ups_calls_rec(DEPTH), which recurses
 *     down to 1 and calls ups_calls_leaf at the bottom; then one thread
 *     named "calls-worker" does ups_calls_rec(2) once while main waits for
 *     it; then ups_calls_jump(), whose callee ups_calls_leaf2 leaves it by
 *     longjmp (neither returns: their calls are left unwound); JUMP times
 *     (default 1).
 *   Prints the sum of the return values. */
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>

#include "go_fifo.h"

static jmp_buf back;

__attribute__((noinline, used, visibility("default"))) long ups_calls_leaf(long x)
{
	__asm__ volatile("" : "+r"(x) : : "memory");
	return x + 1;
}

__attribute__((noinline, used, visibility("default"))) long ups_calls_rec(long n)
{
	long r = n <= 1 ? ups_calls_leaf(n) : ups_calls_rec(n - 1) + 1;

	__asm__ volatile("" : "+r"(r) : : "memory");
	return r;
}

__attribute__((noinline, used, visibility("default"))) void ups_calls_leaf2(long x)
{
	__asm__ volatile("" : "+r"(x) : : "memory");
	longjmp(back, 1);
}

__attribute__((noinline, used, visibility("default"))) long ups_calls_jump(long x)
{
	ups_calls_leaf2(x);
	__asm__ volatile("" : "+r"(x) : : "memory");
	return x;
}

static void *worker(void *arg)
{
	long *out = arg;

	prctl(PR_SET_NAME, "calls-worker");
	*out = ups_calls_rec(2);
	return NULL;
}

int main(int argc, char **argv)
{
	int argi = go_fifo_wait(argc, argv);
	long depth, rounds, sum = 0, w = 0;
	pthread_t t;

	if (argc - argi != 2 && argc - argi != 3) {
		fprintf(stderr, "usage: target_calls [--go-fifo PATH] DEPTH ROUNDS [JUMP]\n");
		return 2;
	}
	depth = atol(argv[argi]);
	rounds = atol(argv[argi + 1]);
	for (long i = 0; i < rounds; i++)
		sum += ups_calls_rec(depth);
	if (pthread_create(&t, NULL, worker, &w) != 0 || pthread_join(t, NULL) != 0)
		return 1;
	sum += w;
	for (long k = argc - argi == 2 ? 1 : atol(argv[argi + 2]); k > 0; k--)
		if (!setjmp(back))
			sum += ups_calls_jump(7);
	printf("%ld\n", sum);
	return 0;
}
