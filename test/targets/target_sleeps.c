/* target_sleeps — known sleeps in three nested functions, each measuring
 * itself with CLOCK_MONOTONIC (bpf_ktime_get_ns's clock), for the accuracy
 * of trace's profile.
 *
 *   target_sleeps [--go-fifo PATH] COUNT OUT
 *     COUNT calls of ups_sl_outer: sleeps 2 ms, calls ups_sl_mid, sleeps
 *     1 ms; ups_sl_mid sleeps 1 ms, calls ups_sl_inner, sleeps 1 ms;
 *     ups_sl_inner sleeps 3 ms.  Each call writes {"fn": NAME, "total": NS,
 *     "self": NS} (self: total minus the call to its callee, as it measured
 *     that call) to OUT. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "go_fifo.h"

static FILE *out;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

static void emit(const char *fn, uint64_t total, uint64_t self)
{
	fprintf(out, "{\"fn\": \"%s\", \"total\": %llu, \"self\": %llu}\n", fn,
		(unsigned long long)total, (unsigned long long)self);
}

__attribute__((noinline, used, visibility("default"))) long ups_sl_inner(long x)
{
	uint64_t t0 = now_ns();

	sleep_ms(3);
	emit("ups_sl_inner", now_ns() - t0, now_ns() - t0);
	__asm__ volatile("" : "+r"(x) : : "memory");
	return x + 1;
}

__attribute__((noinline, used, visibility("default"))) long ups_sl_mid(long x)
{
	uint64_t t0 = now_ns(), c0, c1, t1;
	long r;

	sleep_ms(1);
	c0 = now_ns();
	r = ups_sl_inner(x);
	c1 = now_ns();
	sleep_ms(1);
	t1 = now_ns();
	emit("ups_sl_mid", t1 - t0, (t1 - t0) - (c1 - c0));
	__asm__ volatile("" : "+r"(r) : : "memory");
	return r + 1;
}

__attribute__((noinline, used, visibility("default"))) long ups_sl_outer(long x)
{
	uint64_t t0 = now_ns(), c0, c1, t1;
	long r;

	sleep_ms(2);
	c0 = now_ns();
	r = ups_sl_mid(x);
	c1 = now_ns();
	sleep_ms(1);
	t1 = now_ns();
	emit("ups_sl_outer", t1 - t0, (t1 - t0) - (c1 - c0));
	__asm__ volatile("" : "+r"(r) : : "memory");
	return r + 1;
}

int main(int argc, char **argv)
{
	int a = go_fifo_wait(argc, argv);
	long count, sum = 0;

	if (argc - a != 2)
		return 2;
	count = atol(argv[a]);
	out = fopen(argv[a + 1], "w");
	if (!out)
		return 1;
	for (long i = 0; i < count; i++)
		sum += ups_sl_outer(i);
	fprintf(out, "{\"sum\": %ld}\n", sum);
	fclose(out);
	return 0;
}
