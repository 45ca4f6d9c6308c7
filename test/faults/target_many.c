/* target_many — 128 distinct probe points in one program, for configs with
 * many probes (attach and detach cost, signals during attach).
 *
 *   target_many [--go-fifo PATH] COUNT
 *
 * Waits (when --go-fifo is given) until a line can be read from the FIFO,
 * then calls each of ups_many_0 .. ups_many_127 COUNT times and exits.  Each
 * function is exported and never inlined, so each symbol is a probe point. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FN(n)                                                                       \
	__attribute__((noinline, used, visibility("default"))) long ups_many_##n(long x) \
	{                                                                           \
		__asm__ volatile("" ::"r"(x) : "memory");                           \
		return x + n;                                                       \
	}
#define FN8(n) FN(n##0) FN(n##1) FN(n##2) FN(n##3) FN(n##4) FN(n##5) FN(n##6) FN(n##7)
#define REF(n) ups_many_##n,
#define REF8(n) REF(n##0) REF(n##1) REF(n##2) REF(n##3) REF(n##4) REF(n##5) REF(n##6) REF(n##7)

/* Names are ups_many_<group><i>, group 1..16, i 0..7: ups_many_10 .. ups_many_167. */
FN8(1) FN8(2) FN8(3) FN8(4) FN8(5) FN8(6) FN8(7) FN8(8)
FN8(9) FN8(10) FN8(11) FN8(12) FN8(13) FN8(14) FN8(15) FN8(16)

static long (*const fns[])(long) = {
	REF8(1) REF8(2) REF8(3) REF8(4) REF8(5) REF8(6) REF8(7) REF8(8)
	REF8(9) REF8(10) REF8(11) REF8(12) REF8(13) REF8(14) REF8(15) REF8(16)
};

static int wait_go(const char *fifo)
{
	char line[16];
	FILE *f = fopen(fifo, "r");

	if (!f || !fgets(line, sizeof(line), f)) {
		perror(fifo);
		return -1;
	}
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	int argi = 1;
	long sum = 0;

	if (argc > 2 && !strcmp(argv[1], "--go-fifo")) {
		if (wait_go(argv[2]))
			return 1;
		argi = 3;
	}
	if (argc - argi != 1) {
		fprintf(stderr, "usage: target_many [--go-fifo PATH] COUNT\n");
		return 2;
	}
	long count = atol(argv[argi]);
	for (long i = 0; i < count; i++)
		for (size_t f = 0; f < sizeof(fns) / sizeof(fns[0]); f++)
			sum += fns[f](i);
	return sum == 0 && count > 0;
}
