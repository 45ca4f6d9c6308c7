/* target_cxx_throw — a C++ program whose probed functions an exception
 * passes through, as issue 32 found a config's uretprobe killing it.
 *
 *   target_cxx_throw [--go-fifo PATH] COUNT OUT
 *     main calls ex_mid(i) for i in 0..COUNT-1 inside try/catch; ex_mid(n)
 *     returns ex_thrower(n) + 1; ex_thrower(n) throws std::runtime_error
 *     when n % 3 == 0, else returns 2 * n.  So the calls with n % 3 == 0
 *     leave both functions by the exception (unwound), the others return
 *     2 * n + 1 from ex_mid.  OUT gets one JSON line:
 *     {"calls": COUNT, "thrown": T, "returned": R, "sum": S}, S the sum of
 *     ex_mid's return values.  A uretprobe on either function makes the
 *     unwinder find the kernel's trampoline as a return address: the
 *     program aborts (std::terminate, exit 134) at the first throw.
 * ex_cold_thrower (never called) is what g++ -O2 makes of a throwing
 * function: its throw in a separate .cold block. */
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

extern "C" {
#include "go_fifo.h"
}

#define OPAQUE(v) __asm__ volatile("" : "+r"(v) : : "memory")

/* g++ -O2 moves a throw into a separate .cold block, whose jump out of the
 * function the exit analysis cannot prove (the probe is then refused, with
 * the reason: ex_cold_thrower below); these two stay in one piece. */
#define ONE_PIECE __attribute__((noinline, used, visibility("default"), \
				 optimize("no-reorder-blocks-and-partition")))

extern "C" ONE_PIECE long ex_thrower(long n)
{
	OPAQUE(n);
	if (n % 3 == 0)
		throw std::runtime_error("thrown by ex_thrower");
	return 2 * n;
}

extern "C" ONE_PIECE long ex_mid(long n)
{
	long r = ex_thrower(n);

	OPAQUE(r);
	return r + 1;
}

/* Never called: its throw is split off into ex_cold_thrower.cold. */
extern "C" __attribute__((noinline, used, visibility("default"))) long ex_cold_thrower(long n)
{
	OPAQUE(n);
	if (n % 3 == 0)
		throw std::runtime_error("thrown by ex_cold_thrower");
	return 2 * n;
}

int main(int argc, char **argv)
{
	int first = go_fifo_wait(argc, argv);
	long count, thrown = 0, returned = 0, sum = 0;
	FILE *out;

	if (argc - first != 2) {
		fprintf(stderr, "usage: target_cxx_throw [--go-fifo PATH] COUNT OUT\n");
		return 2;
	}
	count = strtol(argv[first], nullptr, 10);
	for (long i = 0; i < count; i++) {
		try {
			sum += ex_mid(i);
			returned++;
		} catch (const std::runtime_error &) {
			thrown++;
		}
	}
	out = fopen(argv[first + 1], "w");
	if (!out)
		return 1;
	fprintf(out, "{\"calls\": %ld, \"thrown\": %ld, \"returned\": %ld, \"sum\": %ld}\n",
		count, thrown, returned, sum);
	return fclose(out) ? 1 : 0;
}
