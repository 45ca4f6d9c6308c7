/* target_native — a program for uprobestats to probe.
 *
 *   target_native [--go-fifo PATH] [--threads T] [--pin CPU|each] COUNT BASE
 *
 * Waits (when --go-fifo comes first) until a line can be read from the FIFO,
 * then calls ups_target_fn(i, BASE + i, -i, 0x1122334455667788, BASE, 7)
 * COUNT times per thread, for i = 0..COUNT-1, and exits.  The function is
 * exported and never inlined, so its symbol is a probe point.  --pin runs
 * every thread on CPU (or thread t on CPU t, with "each"): a burst of
 * records lands in one CPU's perf buffer, or in each at once. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "go_fifo.h"

__attribute__((noinline, used, visibility("default"))) long
ups_target_fn(long a, long b, long c, long d, long e, long f)
{
	/* Keep the call and its arguments observable to the compiler. */
	__asm__ volatile("" ::"r"(a), "r"(b), "r"(c), "r"(d), "r"(e), "r"(f) : "memory");
	return a + b;
}

__attribute__((noinline, used, visibility("default"))) int ups_target_second(int x)
{
	__asm__ volatile("" ::"r"(x) : "memory");
	return x * 2;
}

static long count, base;
static int pin = -2;   /* -2: no pinning, -1: each thread on its own CPU */

static void *worker(void *arg)
{
	long sum = 0;
	int cpu = pin == -1 ? (int)(intptr_t)arg : pin;

	if (cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) != 0) {
			perror("sched_setaffinity");
			exit(1);
		}
	}
	for (long i = 0; i < count; i++)
		sum += ups_target_fn(i, base + i, -i, 0x1122334455667788L, base, 7);
	ups_target_second((int)base);
	return (void *)sum;
}

int main(int argc, char **argv)
{
	int threads = 1, argi = go_fifo_wait(argc, argv);

	if (argi + 1 < argc && !strcmp(argv[argi], "--threads")) {
		threads = atoi(argv[argi + 1]);
		argi += 2;
	}
	if (argi + 1 < argc && !strcmp(argv[argi], "--pin")) {
		pin = !strcmp(argv[argi + 1], "each") ? -1 : atoi(argv[argi + 1]);
		argi += 2;
	}
	if (argc - argi != 2 || threads < 1 || threads > 64 || pin < -2) {
		fprintf(stderr, "usage: target_native [--go-fifo PATH] [--threads T] "
			"[--pin CPU|each] COUNT BASE\n");
		return 2;
	}
	count = atol(argv[argi]);
	base = atol(argv[argi + 1]);
	pthread_t tids[64];
	for (int t = 0; t < threads; t++)
		pthread_create(&tids[t], NULL, worker, (void *)(intptr_t)t);
	for (int t = 0; t < threads; t++)
		pthread_join(tids[t], NULL);
	return 0;
}
