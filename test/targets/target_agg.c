/* target_agg — known calls for the in-kernel aggregation tests.  Each round
 * calls ups_agg_fn(k, i) for k = 1, 2, 3 and i = 0 .. 10*k - 1 (10, 20 and 30
 * calls), then sleeps PAUSE_MS.  ups_agg_fn returns 2*i, or -1 when k is 3;
 * ups_agg_slow(ms) sleeps ms milliseconds and returns ms (once a round, with
 * ms = 20).
 *
 *   target_agg [--go-fifo PATH] ROUNDS PAUSE_MS
 *   target_agg [--go-fifo PATH] --keys N
 *     once: ups_agg_fn(1000000 + j, j) for j = 0 .. N-1 (N distinct arg0 keys,
 *     for tables larger than any output buffer) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "go_fifo.h"

__attribute__((noinline, used, visibility("default"))) long ups_agg_fn(long k, long i)
{
	__asm__ volatile("" ::: "memory");
	return k == 3 ? -1 : 2 * i;
}

__attribute__((noinline, used, visibility("default"))) long ups_agg_slow(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
	__asm__ volatile("" ::: "memory");
	return ms;
}

int main(int argc, char **argv)
{
	int argi = go_fifo_wait(argc, argv);
	long total = 0;

	if (argc - argi == 2 && !strcmp(argv[argi], "--keys")) {
		long n = atol(argv[argi + 1]);
		for (long j = 0; j < n; j++)
			total += ups_agg_fn(1000000 + j, j);
		return total == n * (n - 1) ? 0 : 1;
	}
	if (argc - argi != 2) {
		fprintf(stderr, "usage: target_agg [--go-fifo PATH] ROUNDS PAUSE_MS\n");
		return 2;
	}
	long rounds = atol(argv[argi]), pause_ms = atol(argv[argi + 1]);
	for (long r = 0; r < rounds; r++) {
		for (long k = 1; k <= 3; k++)
			for (long i = 0; i < 10 * k; i++)
				total += ups_agg_fn(k, i);
		total += ups_agg_slow(20);
		if (r + 1 < rounds)
			ups_agg_slow(pause_ms);
	}
	return total == rounds * (90 + 380 - 30 + 20) ? 0 : 1;
}
