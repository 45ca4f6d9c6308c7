/* demo_app — the bundled program `make demo` probes: a tiny order processor
 * that handles one order every 100 ms for a few seconds. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline, used, visibility("default"))) int
process_order(long order_id, int amount_cents, int priority)
{
	__asm__ volatile("" ::"r"(order_id), "r"(amount_cents), "r"(priority) : "memory");
	return amount_cents > 5000 ? 1 : 0;
}

int main(int argc, char **argv)
{
	int orders = argc > 1 ? atoi(argv[1]) : 30;
	struct timespec tick = { 0, 100 * 1000 * 1000 };
	struct timespec warmup = { 1, 0 };
	int big = 0;

	/* Open for business after a second: time for the tracer to attach. */
	nanosleep(&warmup, NULL);
	for (int i = 0; i < orders; i++) {
		big += process_order(1000 + i, 250 * (i % 40), i % 3);
		nanosleep(&tick, NULL);
	}
	printf("demo_app: processed %d orders, %d large\n", orders, big);
	return 0;
}
