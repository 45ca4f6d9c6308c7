/* target_gen — 10,000 generated functions, ups_gen_0000 … ups_gen_9999, for
 * tracing many probes with one glob (trace 'target_gen:ups_gen_[01]*' takes
 * 2,000 of them, 'ups_gen_[0-9]*' all; bench.py's attach/detach timings).
 *
 *   target_gen [--go-fifo PATH] COUNT OUT
 *     COUNT rounds; each round calls ups_gen_I for every I % 4 == 0, and
 *     ups_gen_I calls ups_gen_I+1 unless I % 4 == 3: chains of four nested
 *     calls, so every function is called exactly COUNT times, and the
 *     profile's self time of a caller is its total minus its callee's.
 *     Each function spins a little before and after its call.  Each returns
 *     I + its callee's return.  Each round also calls
 *     ups_gen_str("round-R", R), a native char * argument for --args 0:str.
 *     OUT: {"calls": COUNT, "functions": 2000, "sum": …}. */
#include <stdio.h>
#include <stdlib.h>

#include "go_fifo.h"

#define OPAQUE(v) __asm__ volatile("" : "+r"(v) : : "memory")
#define N_FUNCS 10000

typedef long (*gen_fn)(long);
static const gen_fn tab[N_FUNCS];

static inline __attribute__((always_inline)) long body(int i, long x)
{
	long r = i;

	for (volatile int k = 0; k < 20; k++)
		OPAQUE(r);
	if (i % 4 != 3)
		r += tab[i + 1](x);
	for (volatile int k = 0; k < 20; k++)
		OPAQUE(r);
	return r;
}

#define F(a, b, c, d)                                                              \
	__attribute__((noinline, used, visibility("default"))) long                \
	ups_gen_##a##b##c##d(long x)                                               \
	{                                                                          \
		return body(a * 1000 + b * 100 + c * 10 + d, x);                   \
	}
#define D10(M, a, b, c) M(a, b, c, 0) M(a, b, c, 1) M(a, b, c, 2) M(a, b, c, 3) \
	M(a, b, c, 4) M(a, b, c, 5) M(a, b, c, 6) M(a, b, c, 7) M(a, b, c, 8) M(a, b, c, 9)
#define D100(M, a, b) D10(M, a, b, 0) D10(M, a, b, 1) D10(M, a, b, 2) D10(M, a, b, 3) \
	D10(M, a, b, 4) D10(M, a, b, 5) D10(M, a, b, 6) D10(M, a, b, 7) D10(M, a, b, 8) \
	D10(M, a, b, 9)
#define D1000(M, a) D100(M, a, 0) D100(M, a, 1) D100(M, a, 2) D100(M, a, 3) \
	D100(M, a, 4) D100(M, a, 5) D100(M, a, 6) D100(M, a, 7) D100(M, a, 8) D100(M, a, 9)

#define D10000(M) D1000(M, 0) D1000(M, 1) D1000(M, 2) D1000(M, 3) D1000(M, 4) \
	D1000(M, 5) D1000(M, 6) D1000(M, 7) D1000(M, 8) D1000(M, 9)

D10000(F)

#define T(a, b, c, d) ups_gen_##a##b##c##d,
static const gen_fn tab[N_FUNCS] = { D10000(T) };

__attribute__((noinline, used, visibility("default"))) long ups_gen_str(const char *s, long n)
{
	long r = n;

	OPAQUE(r);
	return r + (s[0] == 'r');
}

int main(int argc, char **argv)
{
	int a = go_fifo_wait(argc, argv);
	long count, sum = 0;
	FILE *out;

	if (argc - a != 2)
		return 2;
	count = atol(argv[a]);
	for (long r = 0; r < count; r++) {
		char name[32];

		for (int i = 0; i < N_FUNCS; i += 4)
			sum += tab[i](r);
		snprintf(name, sizeof(name), "round-%ld", r);
		sum += ups_gen_str(name, r);
	}
	out = fopen(argv[a + 1], "w");
	if (!out)
		return 1;
	fprintf(out, "{\"calls\": %ld, \"functions\": %d, \"sum\": %ld}\n", count, N_FUNCS, sum);
	fclose(out);
	return 0;
}
