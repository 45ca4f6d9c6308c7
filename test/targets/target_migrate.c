/* target_migrate — one thread that changes CPU while it calls a probed
 * function, so its consecutive calls' records land in different CPUs' perf
 * buffers (the legacy objects' output).
 *
 *   target_migrate [--go-fifo PATH] COUNT
 *     COUNT calls of ups_mig_fn(i) (returns i), moving itself to the next
 *     CPU it may run on every 7 calls (sched_setaffinity).  Prints the sum. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "go_fifo.h"

__attribute__((noinline, used, visibility("default"))) long ups_mig_fn(long i)
{
	__asm__ volatile("" : "+r"(i) : : "memory");
	return i;
}

/* The CPUs the thread may run on, in order. */
static int allowed_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 0;
	for (int c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n;
}

int main(int argc, char **argv)
{
	int first = go_fifo_wait(argc, argv), cpus[64], n;
	long count, sum = 0;

	if (argc - first != 1) {
		fprintf(stderr, "usage: target_migrate [--go-fifo PATH] COUNT\n");
		return 2;
	}
	count = strtol(argv[first], NULL, 10);
	n = allowed_cpus(cpus, 64);
	for (long i = 0; i < count; i++) {
		if (n > 1 && i % 7 == 0) {
			cpu_set_t one;
			CPU_ZERO(&one);
			CPU_SET(cpus[(i / 7) % n], &one);
			sched_setaffinity(0, sizeof(one), &one);
		}
		sum += ups_mig_fn(i);
	}
	printf("%ld\n", sum);
	return 0;
}
