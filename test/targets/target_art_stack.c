/* target_art_stack — a Java frame of real ART code in the middle of a stack.
 *
 *   target_art_stack [--go-fifo PATH] ODEX A_OFF RET_OFF FRAME_SIZE COUNT
 *
 * Maps the odex (x86_64) and COUNT times builds exactly the stack ART's
 * calling convention builds when compiled method A (code at file offset
 * A_OFF, frame size FRAME_SIZE) calls a method B from its call site whose
 * return address is A + RET_OFF:
 *   stk_art_harness: call → pushes R (a return address into the harness),
 *   "A's prologue":  rsp -= FRAME_SIZE - 8, so [A's sp + FRAME_SIZE - 8] = R,
 *   "A calls B":     push A + RET_OFF, jump to B = stk_java_callee.
 * B is a native stub here (uprobes there are the probe point): real compiled
 * code for B would have to run and return into A, which needs a full ART
 * runtime.  The stub never returns into A: it drops the return address and
 * A's frame and returns to R.  A's code is never executed; its CodeInfo
 * (frame size, stack maps) is what the unwinder must use to step from B
 * through A back to the harness.  x86_64 (the e2e host) and arm64 (the VM: its
 * stack.art_frame scenario).
 *
 * --return-into-a: B is stk_java_callee_ret, which does return into A (so a
 * uretprobe on it fires with the PC at A + RET_OFF): the instruction there is
 * patched, in this process's private copy of the page only, to jump to
 * stk_art_resume, which drops A's frame and returns to R.  The odex file and
 * its CodeInfo are unchanged; A's own code still never runs. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "go_fifo.h"

#if defined(__x86_64__)
void stk_art_harness(uint64_t ret_into_a, uint64_t frame_size, void (*b)(void));
void stk_java_callee(void);
void stk_java_callee_ret(void);
/* at A + RET_OFF with --return-into-a: jmp *%rax */
static const uint8_t resume_jump[] = { 0xff, 0xe0 };

__asm__(".text\n"
	".globl stk_art_harness\n"
	".type stk_art_harness, @function\n"
	"stk_art_harness:\n"
	"	.cfi_startproc\n"
	"	sub $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call 1f\n"                       /* R: the return address A keeps */
	"	add $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	"1:\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	lea -8(%rsi), %rax\n"             /* A's prologue: a frame of FRAME_SIZE */
	"	sub %rax, %rsp\n"
	"	push %rdi\n"                      /* A calls B: return address into A */
	"	jmp *%rdx\n"
	"	.cfi_endproc\n"
	".size stk_art_harness, .-stk_art_harness\n"
	".globl stk_java_callee\n"
	".type stk_java_callee, @function\n"
	"stk_java_callee:\n"
	"	.cfi_startproc\n"
	"	nop\n"                            /* the probe */
	"	pop %rax\n"                       /* drop the return address into A */
	"	lea -8(%rsp,%rsi), %rsp\n"        /* and A's frame: [rsp] = R */
	"	ret\n"
	"	.cfi_endproc\n"
	".size stk_java_callee, .-stk_java_callee\n"
	".globl stk_java_callee_ret\n"
	".type stk_java_callee_ret, @function\n"
	"stk_java_callee_ret:\n"
	"	.cfi_startproc\n"
	"	nop\n"                            /* the probe */
	"	lea stk_art_resume(%rip), %rax\n"
	"	ret\n"                            /* into A: its patched jmp *%rax */
	"	.cfi_endproc\n"
	".size stk_java_callee_ret, .-stk_java_callee_ret\n"
	"stk_art_resume:\n"                   /* rsp: A's sp; rsi: FRAME_SIZE */
	"	lea -8(%rsp,%rsi), %rsp\n"
	"	ret\n");
#elif defined(__aarch64__)
/* arm64 (the VM): "A's prologue" keeps R at [A's sp + FRAME_SIZE - 8], where ART's
 * arm64 frames keep the saved lr, and "A calls B" leaves the return address into A in
 * x30, as `blr x30` does.  B drops A's frame and returns to R. */
void stk_art_harness(uint64_t ret_into_a, uint64_t frame_size, void (*b)(void));
void stk_java_callee(void);
void stk_java_callee_ret(void);
/* at A + RET_OFF with --return-into-a: br x16 */
static const uint8_t resume_jump[] = { 0x00, 0x02, 0x1f, 0xd6 };

__asm__(".text\n"
	".globl stk_art_harness\n"
	".type stk_art_harness, %function\n"
	"stk_art_harness:\n"
	"	.cfi_startproc\n"
	"	stp x29, x30, [sp, #-16]!\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset 29, -16\n"
	"	.cfi_offset 30, -8\n"
	"	bl 1f\n"                          /* R: the return address A keeps */
	"	ldp x29, x30, [sp], #16\n"
	"	.cfi_def_cfa_offset 0\n"
	"	.cfi_restore 29\n"
	"	.cfi_restore 30\n"
	"	ret\n"
	"1:\n"
	"	sub sp, sp, x1\n"                 /* A's prologue: a frame of FRAME_SIZE */
	"	add x9, sp, x1\n"
	"	stur x30, [x9, #-8]\n"
	"	mov x30, x0\n"                    /* A calls B: return address into A */
	"	br x2\n"
	"	.cfi_endproc\n"
	".size stk_art_harness, .-stk_art_harness\n"
	".globl stk_java_callee\n"
	".type stk_java_callee, %function\n"
	"stk_java_callee:\n"
	"	.cfi_startproc\n"
	"	nop\n"                            /* the probe */
	"	add x9, sp, x1\n"                 /* drop A's frame; lr = R */
	"	ldur x30, [x9, #-8]\n"
	"	mov sp, x9\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size stk_java_callee, .-stk_java_callee\n"
	".globl stk_java_callee_ret\n"
	".type stk_java_callee_ret, %function\n"
	"stk_java_callee_ret:\n"
	"	.cfi_startproc\n"
	"	nop\n"                            /* the probe */
	"	adr x16, stk_art_resume\n"
	"	ret\n"                            /* into A: its patched br x16 */
	"	.cfi_endproc\n"
	".size stk_java_callee_ret, .-stk_java_callee_ret\n"
	"stk_art_resume:\n"                   /* sp: A's sp; x1: FRAME_SIZE */
	"	add x9, sp, x1\n"
	"	ldur x30, [x9, #-8]\n"
	"	mov sp, x9\n"
	"	ret\n");
#endif

#if defined(__x86_64__) || defined(__aarch64__)
/* Writes resume_jump at p in this process's private copy of its page. */
static int patch_return_into_a(uint8_t *p)
{
	uintptr_t page = (uintptr_t)p & ~(uintptr_t)4095;
	size_t len = (uintptr_t)p + sizeof(resume_jump) - page;

	if (mprotect((void *)page, len, PROT_READ | PROT_WRITE | PROT_EXEC) < 0)
		return -1;
	memcpy(p, resume_jump, sizeof(resume_jump));
	__builtin___clear_cache((char *)p, (char *)p + sizeof(resume_jump));
	return mprotect((void *)page, len, PROT_READ | PROT_EXEC);
}
#endif

int main(int argc, char **argv)
{
	int argi = argc >= 3 && !strcmp(argv[1], "--go-fifo") ? 3 : 1;
	bool into_a = argc > argi && !strcmp(argv[argi], "--return-into-a");
	struct stat st;

	argi += into_a;
	if (argc - argi != 5) {
		fprintf(stderr, "usage: target_art_stack [--go-fifo PATH] [--return-into-a] ODEX "
			"A_OFF RET_OFF FRAME_SIZE COUNT\n");
		return 2;
	}
	unsigned long a_off = strtoul(argv[argi + 1], NULL, 0);
	unsigned long ret_off = strtoul(argv[argi + 2], NULL, 0);
	unsigned long frame = strtoul(argv[argi + 3], NULL, 0);
	long count = atol(argv[argi + 4]);
	int fd = open(argv[argi], O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0 || a_off + ret_off >= (unsigned long)st.st_size ||
	    frame < 16 || frame % 16 || frame > 4096) {
		fprintf(stderr, "target_art_stack: bad arguments\n");
		return 1;
	}
	uint8_t *base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
#if defined(__x86_64__) || defined(__aarch64__)
	if (into_a && patch_return_into_a(base + a_off + ret_off) < 0) {
		perror("mprotect");
		return 1;
	}
	go_fifo_wait(argc, argv);
	for (long i = 0; i < count; i++)
		stk_art_harness((uint64_t)(uintptr_t)(base + a_off + ret_off), frame,
				into_a ? stk_java_callee_ret : stk_java_callee);
#else
	(void)count;
	fprintf(stderr, "target_art_stack: x86_64 and arm64 only\n");
	return 1;
#endif
	printf("target_art_stack: %ld calls ok\n", count);
	return 0;
}
