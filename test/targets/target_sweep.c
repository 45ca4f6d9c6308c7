/* target_sweep — the hostile sweep's cases (issue 26).
 *
 *   target_sweep [--go-fifo PATH] alias COUNT
 *     COUNT calls of ups_alias_fn, which has a second name at the same
 *     address (ups_alias_other): one probe and one event per call, whatever
 *     the patterns name.
 *   target_sweep [--go-fifo PATH] forever
 *     one call of ups_forever, which never returns (it waits for signals):
 *     --ret finds no return instruction and lists the call as running.
 *   target_sweep [--go-fifo PATH] forever-thread
 *     the same call on a second thread, named "ups-blocker", which makes no
 *     other call; the main thread waits for it (never). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "go_fifo.h"

__attribute__((noinline, used, visibility("default"))) long ups_alias_fn(long a)
{
	__asm__ volatile("" ::"r"(a) : "memory");
	return a * 3;
}

/* the same code under a second name */
extern long ups_alias_other(long a) __attribute__((alias("ups_alias_fn"), used));

__attribute__((noinline, used, noreturn, visibility("default"))) void ups_forever(long a)
{
	for (;;) {
		__asm__ volatile("" ::"r"(a) : "memory");
		pause();
	}
}

static void *blocker(void *arg)
{
	ups_forever((long)arg);
}

int main(int argc, char **argv)
{
	int argi = go_fifo_wait(argc, argv);
	long sum = 0;

	if (argc - argi == 2 && !strcmp(argv[argi], "alias")) {
		long count = atol(argv[argi + 1]);
		for (long i = 0; i < count; i++)
			sum += ups_alias_fn(i);
		printf("%ld\n", sum);
		return 0;
	}
	if (argc - argi == 1 && !strcmp(argv[argi], "forever"))
		ups_forever(argc);
	if (argc - argi == 1 && !strcmp(argv[argi], "forever-thread")) {
		pthread_t t;
		if (pthread_create(&t, NULL, blocker, (void *)(long)argc) ||
		    pthread_setname_np(t, "ups-blocker"))
			return 1;
		pthread_join(t, NULL);
		return 0;
	}
	fprintf(stderr, "usage: target_sweep [--go-fifo PATH] alias COUNT | forever | "
		"forever-thread\n");
	return 2;
}
