/* target_clocks — calls whose BOOTTIME the target reads itself, for the
 * Perfetto trace's clock test: round i calls ups_clk_outer(i), which calls
 * ups_clk_inner(i) twice (nested slices), sleeping SLEEP_US between rounds so
 * the run spans several of the writer's clock readings.  Around each call of
 * ups_clk_outer it reads CLOCK_BOOTTIME (before, after) and writes one line
 * {"i": I, "boot_before": NS, "boot_after": NS} to OUT.  With PAUSE_AT and
 * PAUSE_FIFO, before round PAUSE_AT it waits for a line from PAUSE_FIFO as at its
 * start (test/vm/vmtest_suspend.c suspends the machine meanwhile: the runner's open
 * of the FIFO for writing succeeds once the target is waiting there).
 *
 *   target_clocks [--go-fifo PATH] COUNT SLEEP_US OUT [PAUSE_AT PAUSE_FIFO] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "go_fifo.h"

#define OPAQUE(v) __asm__ volatile("" : "+r"(v) : : "memory")

static uint64_t boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline, used, visibility("default"))) long ups_clk_inner(long i)
{
	OPAQUE(i);
	return i * 2;
}

__attribute__((noinline, used, visibility("default"))) long ups_clk_outer(long i)
{
	long r = ups_clk_inner(i);

	r += ups_clk_inner(i + 1);
	OPAQUE(r);
	return r;
}

/* Waits for a line from the FIFO PATH. */
static int pause_here(const char *path)
{
	char line[16];
	FILE *f = fopen(path, "r");
	int ok = f && fgets(line, sizeof(line), f);

	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	int argi = go_fifo_wait(argc, argv);

	if (argc - argi != 3 && argc - argi != 5) {
		fprintf(stderr, "usage: target_clocks [--go-fifo PATH] COUNT SLEEP_US OUT "
				"[PAUSE_AT PAUSE_FIFO]\n");
		return 2;
	}
	long count = atol(argv[argi]), sleep_us = atol(argv[argi + 1]);
	long pause_at = argc - argi == 5 ? atol(argv[argi + 3]) : -1;
	FILE *out = fopen(argv[argi + 2], "w");
	if (!out)
		return 1;
	for (long i = 0; i < count; i++) {
		if (i == pause_at && pause_here(argv[argi + 4]) < 0) {
			perror(argv[argi + 4]);
			return 1;
		}
		uint64_t before = boot_ns();
		long r = ups_clk_outer(i);
		uint64_t after = boot_ns();
		if (r != 4 * i + 2)
			return 1;
		fprintf(out, "{\"i\": %ld, \"boot_before\": %llu, \"boot_after\": %llu}\n", i,
			(unsigned long long)before, (unsigned long long)after);
		struct timespec ts = { sleep_us / 1000000, (sleep_us % 1000000) * 1000 };
		nanosleep(&ts, NULL);
	}
	return fclose(out) == 0 ? 0 : 1;
}
