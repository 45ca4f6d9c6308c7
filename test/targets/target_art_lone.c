/* target_art_lone — calls a real ART-compiled method that is a lone `ret`
 * (an empty method: its first instruction returns).
 *
 *   target_art_lone [--go-fifo PATH] ODEX OFF COUNT
 *
 * Maps the odex executable and COUNT times calls the compiled code at OFF
 * (e.g. void FusedProvider.<init>(): x86_64 `c3`, arm64 `d65f03c0`) with
 * ART's managed convention: ArtMethod* in rdi / x0, `this` in rsi / x1.
 * Call i leaves RET_BASE + i in the return register (rax on x86_64; x0 on
 * arm64, where it is the ArtMethod* too), which a return probe reports as
 * the return value, and checks the method handed it back unchanged. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "go_fifo.h"

#define RET_BASE 0x7a7a0000u
#define THIS_REF 0x12345678u

/* fn(ArtMethod*, this) with ret in the return register; returns what the
 * return register holds after the call. */
uint64_t ups_lone_call(const void *fn, uint64_t ret, uint64_t self);

#if defined(__x86_64__)
__asm__(".text\n"
	".globl ups_lone_call\n"
	".type ups_lone_call,@function\n"
	"ups_lone_call:\n"
	"	subq $8, %rsp\n"          /* the callee's entry sees rsp + 8 aligned */
	"	movq %rdi, %r11\n"
	"	movq %rsi, %rax\n"
	"	movq $0x7a7a7a70, %rdi\n" /* the ArtMethod* stand-in */
	"	movq %rdx, %rsi\n"
	"	callq *%r11\n"
	"	addq $8, %rsp\n"
	"	ret\n"
	".size ups_lone_call, .-ups_lone_call\n");
#elif defined(__aarch64__)
__asm__(".text\n"
	".globl ups_lone_call\n"
	".type ups_lone_call,%function\n"
	"ups_lone_call:\n"
	"	stp x29, x30, [sp, #-16]!\n"
	"	mov x29, sp\n"
	"	mov x16, x0\n"
	"	mov x0, x1\n"             /* ArtMethod* and the return register */
	"	mov x1, x2\n"
	"	blr x16\n"
	"	ldp x29, x30, [sp], #16\n"
	"	ret\n"
	".size ups_lone_call, .-ups_lone_call\n");
#else
#error "x86_64 or aarch64 only"
#endif

int main(int argc, char **argv)
{
	struct stat st;
	/* The odex is mapped before the go line: the tool sees it mapped. */
	int argi = argc >= 3 && !strcmp(argv[1], "--go-fifo") ? 3 : 1;

	if (argc - argi != 3) {
		fprintf(stderr, "usage: target_art_lone [--go-fifo PATH] ODEX OFF COUNT\n");
		return 2;
	}
	const char *odex = argv[argi];
	unsigned long off = strtoul(argv[argi + 1], NULL, 0);
	long count = atol(argv[argi + 2]);
	int fd = open(odex, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0 || off >= (unsigned long)st.st_size) {
		perror(odex);
		return 1;
	}
	uint8_t *base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	go_fifo_wait(argc, argv);
	for (long i = 0; i < count; i++) {
		uint64_t want = RET_BASE + (uint64_t)i;
		uint64_t got = ups_lone_call(base + off, want, THIS_REF);

		if (got != want) {
			fprintf(stderr, "target_art_lone: call %ld returned 0x%llx\n", i,
				(unsigned long long)got);
			return 1;
		}
	}
	printf("target_art_lone: %ld calls ok\n", count);
	return 0;
}
