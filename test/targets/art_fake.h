/* art_fake.h — a tiny fake ART world for the program targets: a heap below
 * 4 GiB (object references are 32 bits), java.lang.String objects in ART's
 * layout (count = length << 1 | flag at +8, flag 0 = compressed ASCII,
 * 1 = UTF-16; chars at +16), and a trampoline that calls a probed function
 * with chosen argument registers on a prepared stack whose managed out-args
 * area sits where ART puts it ([sp] on arm64, [rsp + 8] on x86_64 after the
 * call pushed the return address). */
#ifndef UPROBESTATS_TEST_ART_FAKE_H
#define UPROBESTATS_TEST_ART_FAKE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define HEAP_SIZE (1u << 20)
#define STACK_SIZE (512u << 10)
#define STACK_BELOW (256u << 10)   /* room for the callee's own frames */

static uint8_t *heap;
static size_t heap_used;
static uint8_t *stack_area;

static inline void die(const char *what)
{
	perror(what);
	exit(1);
}

static inline void heap_init(void)
{
#if defined(__x86_64__)
	heap = mmap(NULL, HEAP_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
#else
	heap = mmap((void *)0x20000000UL, HEAP_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
#endif
	if (heap == MAP_FAILED || (uintptr_t)heap + HEAP_SIZE > 0xFFFFFFFFu)
		die("mapping the fake heap below 4 GiB");
	heap_used = 64;   /* no object at reference 0 + small offsets */
	stack_area = aligned_alloc(16, STACK_SIZE);
	if (!stack_area)
		die("stack");
}

/* A zeroed object of size bytes; returns its 32-bit reference. */
static inline uint32_t jobj(size_t size)
{
	uint32_t ref;

	size = (size + 7) & ~(size_t)7;
	if (heap_used + size > HEAP_SIZE)
		die("fake heap full");
	ref = (uint32_t)(uintptr_t)(heap + heap_used);
	heap_used += size;
	return ref;
}

static inline void *at(uint32_t ref, uint32_t off)
{
	return (void *)(uintptr_t)(ref + off);
}

static inline void put32(uint32_t ref, uint32_t off, uint32_t v)
{
	memcpy(at(ref, off), &v, sizeof(v));
}

static inline void put64(uint32_t ref, uint32_t off, uint64_t v)
{
	memcpy(at(ref, off), &v, sizeof(v));
}

/* UTF-8 -> UTF-16 code units; returns the count. */
static inline size_t utf16_units(const char *s, uint16_t *u, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;

	while (*p && n + 2 <= max) {
		uint32_t cp;
		if (*p < 0x80) {
			cp = *p++;
		} else if ((*p & 0xE0) == 0xC0) {
			cp = (uint32_t)(*p & 0x1F) << 6 | (p[1] & 0x3F);
			p += 2;
		} else if ((*p & 0xF0) == 0xE0) {
			cp = (uint32_t)(*p & 0x0F) << 12 | (uint32_t)(p[1] & 0x3F) << 6 |
			     (p[2] & 0x3F);
			p += 3;
		} else {
			cp = (uint32_t)(*p & 0x07) << 18 | (uint32_t)(p[1] & 0x3F) << 12 |
			     (uint32_t)(p[2] & 0x3F) << 6 | (p[3] & 0x3F);
			p += 4;
		}
		if (cp >= 0x10000) {
			cp -= 0x10000;
			u[n++] = (uint16_t)(0xD800 | (cp >> 10));
			u[n++] = (uint16_t)(0xDC00 | (cp & 0x3FF));
		} else {
			u[n++] = (uint16_t)cp;
		}
	}
	return n;
}

/* A java.lang.String: compressed when every char is in 1..0x7f, as ART does. */
static inline uint32_t jstr(const char *s)
{
	uint16_t units[1024];
	size_t n = utf16_units(s, units, 1024);
	int compressed = 1;
	uint32_t ref;

	for (size_t i = 0; i < n; i++)
		compressed &= units[i] >= 1 && units[i] <= 0x7f;
	ref = jobj(16 + n * (compressed ? 1 : 2));
	put32(ref, 0, 0x70000001);   /* klass: any non-zero value */
	put32(ref, 8, (uint32_t)(n << 1) | (compressed ? 0 : 1));
	for (size_t i = 0; i < n; i++) {
		if (compressed)
			*(uint8_t *)at(ref, 16 + (uint32_t)i) = (uint8_t)units[i];
		else
			memcpy(at(ref, 16 + 2 * (uint32_t)i), &units[i], 2);
	}
	return ref;
}

/* ---- calling with ART's register and stack shapes ---- */

/* regs[0..7]: x0..x7 on arm64; rdi, rsi, rdx, rcx, r8, r9 on x86_64 (regs[6],
 * regs[7] are only in the out-args slots there).  base: the out-args area,
 * 16-byte aligned. */
void ups_tramp(void (*fn)(void), const uint64_t *regs, void *base);

#if defined(__x86_64__)
__asm__(".text\n"
	".globl ups_tramp\n"
	".type ups_tramp,@function\n"
	"ups_tramp:\n"
	"	pushq %rbp\n"
	"	movq %rsp, %rbp\n"
	"	pushq %rbx\n"
	"	pushq %r12\n"
	"	movq %rdi, %rax\n"
	"	movq %rsi, %rbx\n"
	"	movq %rdx, %rsp\n"
	"	movq 0(%rbx), %rdi\n"
	"	movq 8(%rbx), %rsi\n"
	"	movq 16(%rbx), %rdx\n"
	"	movq 24(%rbx), %rcx\n"
	"	movq 32(%rbx), %r8\n"
	"	movq 40(%rbx), %r9\n"
	"	callq *%rax\n"
	"	leaq -16(%rbp), %rsp\n"
	"	popq %r12\n"
	"	popq %rbx\n"
	"	popq %rbp\n"
	"	ret\n"
	".size ups_tramp, .-ups_tramp\n");
#elif defined(__aarch64__)
__asm__(".text\n"
	".globl ups_tramp\n"
	".type ups_tramp,%function\n"
	"ups_tramp:\n"
	"	stp x29, x30, [sp, #-32]!\n"
	"	str x19, [sp, #16]\n"
	"	mov x29, sp\n"
	"	mov x19, sp\n"
	"	mov x16, x0\n"
	"	mov x17, x1\n"
	"	mov sp, x2\n"
	"	ldp x0, x1, [x17]\n"
	"	ldp x2, x3, [x17, #16]\n"
	"	ldp x4, x5, [x17, #32]\n"
	"	ldp x6, x7, [x17, #48]\n"
	"	blr x16\n"
	"	mov sp, x19\n"
	"	ldr x19, [sp, #16]\n"
	"	ldp x29, x30, [sp], #32\n"
	"	ret\n"
	".size ups_tramp, .-ups_tramp\n");
#else
#error "x86_64 or aarch64 only"
#endif

/* A fresh out-args area (zeroed), for one call. */
static inline uint8_t *out_args(void)
{
	uint8_t *base = stack_area + STACK_BELOW;

	memset(base, 0, STACK_SIZE - STACK_BELOW);
	return base;
}

static inline void slot32(uint8_t *base, uint32_t off, uint32_t v)
{
	memcpy(base + off, &v, sizeof(v));
}

static inline void slot64(uint8_t *base, uint32_t off, uint64_t v)
{
	memcpy(base + off, &v, sizeof(v));
}

/* ---- expectations, one JSON line per call on stdout ---- */

static int exp_first;

static inline void exp_begin(const char *prog, const char *fn, int emit)
{
	printf("{\"prog\":\"%s\",\"fn\":\"%s\",\"emit\":%s,\"fields\":{", prog, fn,
	       emit ? "true" : "false");
	exp_first = 1;
}

static inline void exp_key(const char *k)
{
	printf("%s\"%s\":", exp_first ? "" : ",", k);
	exp_first = 0;
}

static inline void exp_int(const char *k, long long v)
{
	exp_key(k);
	printf("%lld", v);
}

static inline void exp_u64(const char *k, uint64_t v)
{
	exp_key(k);
	printf("%llu", (unsigned long long)v);
}

static inline void exp_bool(const char *k, int v)
{
	exp_key(k);
	printf("%s", v ? "true" : "false");
}

/* The test's strings hold no quote, backslash or control character. */
static inline void exp_str(const char *k, const char *v)
{
	exp_key(k);
	printf("\"%s\"", v);
}

/* A value the program takes from the clock: the test checks it is > 0. */
static inline void exp_positive(const char *k)
{
	exp_str(k, "<positive>");
}

static inline void exp_end(void)
{
	printf("}}\n");
}

#endif
