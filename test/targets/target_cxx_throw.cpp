/* target_cxx_throw — a C++ program whose probed functions an exception
 * passes through, as issue 32 found a config's uretprobe killing it.
 *
 *   target_cxx_throw [--go-fifo PATH] COUNT OUT [ACCOUNT]
 *     main calls ex_mid(i) for i in 0..COUNT-1 inside try/catch; ex_mid(n)
 *     returns ex_thrower(n) + 1; ex_thrower(n) throws std::runtime_error
 *     when n % 3 == 0, else returns 2 * n.  So the calls with n % 3 == 0
 *     leave both functions by the exception (unwound), the others return
 *     2 * n + 1 from ex_mid.  The catch then calls ex_after(i), another
 *     function, from main's frame (beside the calls the exception left).
 *     OUT gets one JSON line:
 *     {"calls": COUNT, "thrown": T, "returned": R, "sum": S}, S the sum of
 *     ex_mid's return values.  ACCOUNT gets the calls as main saw them
 *     returned or caught, one action a line: "ent NAME" at each entry, "xit
 *     NAME" at each return, "unr NAME" for each call the exception left
 *     (innermost first, where it was caught).  A uretprobe on either function makes the
 *     unwinder find the kernel's trampoline as a return address: the
 *     program aborts (std::terminate, exit 134) at the first throw.
 * ex_cold_thrower (never called) is what g++ -O2 makes of a throwing
 * function: its throw in a separate .cold block. */
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

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

/* Called by the catch, after an exception left ex_mid and ex_thrower. */
extern "C" ONE_PIECE long ex_after(long n)
{
	OPAQUE(n);
	return n + 1;
}

/* Never called: its throw is split off into ex_cold_thrower.cold. */
extern "C" __attribute__((noinline, used, visibility("default"))) long ex_cold_thrower(long n)
{
	OPAQUE(n);
	if (n % 3 == 0)
		throw std::runtime_error("thrown by ex_cold_thrower");
	return 2 * n;
}

/* The account: what main saw of each call (ACCOUNT). */
static std::string account;

static void act(const char *what, const char *name)
{
	account += what;
	account += ' ';
	account += name;
	account += '\n';
}

int main(int argc, char **argv)
{
	int first = go_fifo_wait(argc, argv);
	long count, thrown = 0, returned = 0, sum = 0;
	FILE *out;

	if (argc - first != 2 && argc - first != 3) {
		fprintf(stderr, "usage: target_cxx_throw [--go-fifo PATH] COUNT OUT [ACCOUNT]\n");
		return 2;
	}
	count = strtol(argv[first], nullptr, 10);
	for (long i = 0; i < count; i++) {
		act("ent", "ex_mid");
		act("ent", "ex_thrower");
		try {
			sum += ex_mid(i);
			returned++;
			act("xit", "ex_thrower");
			act("xit", "ex_mid");
		} catch (const std::runtime_error &) {
			thrown++;
			act("unr", "ex_thrower");
			act("unr", "ex_mid");
			act("ent", "ex_after");
			long a = ex_after(i);
			OPAQUE(a);
			act("xit", "ex_after");
		}
	}
	if (argc - first == 3) {
		FILE *acc = fopen(argv[first + 2], "w");
		if (!acc || fputs(account.c_str(), acc) < 0 || fclose(acc))
			return 1;
	}
	out = fopen(argv[first + 1], "w");
	if (!out)
		return 1;
	fprintf(out, "{\"calls\": %ld, \"thrown\": %ld, \"returned\": %ld, \"sum\": %ld}\n",
		count, thrown, returned, sum);
	return fclose(out) ? 1 : 0;
}
