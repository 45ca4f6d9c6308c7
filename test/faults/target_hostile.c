/* target_hostile — a target that checks it is not disturbed by a probe put
 * where no instruction starts.
 *
 *   target_hostile SECONDS
 *
 * For SECONDS, calls its functions through pointers and reads its constant,
 * checking every value; exits 0 when all were right, 3 (with a line on stderr)
 * at the first wrong one, and dies by the signal a corrupted instruction
 * raises.  Linked with -z noseparate-code, so .rodata shares the executable
 * segment with .text (as on older toolchains).  Symbols to aim at:
 *   rodata_const   an object in .rodata (0x1111111111111111)
 *   rodata_label   an untyped label on it
 *   movabs_fn      returns 0x1122334455667788 with one 10-byte movabs
 *   movabs_mid     a function symbol 3 bytes into that movabs
 *   plain_fn       returns its argument + 1
 *   plain_fn_plus1 a function symbol one byte into plain_fn
 *   int3_fn        starts with int3, which the kernel refuses to uprobe
 *                  (ENOTSUPP); never called */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((used, visibility("default"))) const uint64_t rodata_const =
	0x1111111111111111ull;

long movabs_fn(void);
long plain_fn(long x);

__asm__(".text\n"
	".globl movabs_fn\n.type movabs_fn, @function\n"
	"movabs_fn:\n"
	"	movabs $0x1122334455667788, %rax\n"
	"	ret\n"
	".size movabs_fn, .-movabs_fn\n"
	".globl movabs_mid\n.type movabs_mid, @function\n"
	".set movabs_mid, movabs_fn + 3\n"
	".size movabs_mid, 8\n"
	".globl plain_fn\n.type plain_fn, @function\n"
	"plain_fn:\n"
	"	mov %rdi, %rax\n"
	"	add $1, %rax\n"
	"	ret\n"
	".size plain_fn, .-plain_fn\n"
	".globl plain_fn_plus1\n.type plain_fn_plus1, @function\n"
	".set plain_fn_plus1, plain_fn + 1\n"
	".size plain_fn_plus1, 7\n"
	".globl int3_fn\n.type int3_fn, @function\n"
	"int3_fn:\n"
	"	int3\n"
	"	ret\n"
	".size int3_fn, .-int3_fn\n"
	".section .rodata\n"
	".globl rodata_label\n"
	"rodata_label: .quad 0x2222222222222222\n"
	".text\n");

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long (*volatile m)(void) = movabs_fn;
	long (*volatile p)(long) = plain_fn;
	double end = now() + (argc > 1 ? atof(argv[1]) : 1.0);
	unsigned long n = 0;

	do {
		uint64_t c = *(const volatile uint64_t *)&rodata_const;
		long arg = (long)n | (1L << 40); /* a high half a 32-bit move would lose */
		long mv = m(), pv = p(arg);
		if (c != 0x1111111111111111ull || mv != 0x1122334455667788L || pv != arg + 1) {
			fprintf(stderr, "target_hostile: disturbed after %lu rounds: rodata_const "
				"0x%llx, movabs_fn 0x%lx, plain_fn(0x%lx) 0x%lx\n", n,
				(unsigned long long)c, mv, arg, pv);
			return 3;
		}
		n++;
		if (!(n % 16)) /* ~100k calls a second: few enough events to read */
			nanosleep(&(struct timespec){ .tv_nsec = 100000 }, NULL);
	} while (now() < end);
	printf("target_hostile: %lu rounds, all values right\n", n);
	return 0;
}
