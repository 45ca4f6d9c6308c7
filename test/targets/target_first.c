/* target_first — calls the probed function as its very first act, for
 * `-c` (cli/held_cmd.h): a tool that attaches after the command has started
 * misses the first calls, one that holds it before exec sees every one.
 *
 *   target_first COUNT STATUS
 *     ups_first(0) from a constructor (before main), then ups_first(1..COUNT-1)
 *     from main; exits with STATUS. */
#include <stdlib.h>

__attribute__((noinline, used, visibility("default"))) long ups_first(long i)
{
	__asm__ volatile("" : "+r"(i) : : "memory");
	return i * 2;
}

__attribute__((constructor)) static void first_act(void)
{
	ups_first(0);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;

	for (long i = 1; i < n; i++)
		ups_first(i);
	return argc > 2 ? atoi(argv[2]) : 0;
}
