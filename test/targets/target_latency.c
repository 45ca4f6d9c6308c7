/* target_latency — calls ups_sleep_fn(MS) COUNT times after an optional go
 * FIFO; the function sleeps MS milliseconds and returns MS * 3.
 *
 *   target_latency [--go-fifo PATH] COUNT MS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "go_fifo.h"

__attribute__((noinline, used, visibility("default"))) long ups_sleep_fn(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
	__asm__ volatile("" ::: "memory");
	return ms * 3;
}

/* Called before each ups_sleep_fn: the entry point of a traced iteration. */
__attribute__((noinline, used, visibility("default"))) void ups_iteration_begin(long i)
{
	__asm__ volatile("" ::"r"(i) : "memory");
}

/* Called after each ups_sleep_fn: the exit point of the traced iteration. */
__attribute__((noinline, used, visibility("default"))) void ups_sleep_done(long ms)
{
	__asm__ volatile("" ::"r"(ms) : "memory");
}

int main(int argc, char **argv)
{
	long total = 0;
	int argi = go_fifo_wait(argc, argv);

	if (argc - argi != 2) {
		fprintf(stderr, "usage: target_latency [--go-fifo PATH] COUNT MS\n");
		return 2;
	}
	long count = atol(argv[argi]), ms = atol(argv[argi + 1]);
	for (long i = 0; i < count; i++) {
		ups_iteration_begin(i);
		total += ups_sleep_fn(ms);
		ups_sleep_done(ms);
	}
	return total == count * ms * 3 ? 0 : 1;
}
