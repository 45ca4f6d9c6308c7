/* art_jit.h — the test libart.so's interface to its program (target_jit.c). */
#ifndef UPROBESTATS_TEST_ART_JIT_H
#define UPROBESTATS_TEST_ART_JIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jit_method {
	const char *name;        /* as ART's mini debug info names it */
	bool calls_write;        /* its code calls write(fd, buf, len); else the next in a chain */
	uint64_t addr, size;     /* set by art_jit_setup: where its code runs */
	uint64_t ret_off;        /* set: the offset of the instruction after its call */
};

/* Compiles m[0..n) into the JIT cache and publishes their symfiles (the
 * first n-1 repacked into one entry, the last alone, xz-compressed). */
int art_jit_setup(struct jit_method *m, size_t n);
/* Registers a dex file mapped at dex in __dex_debug_descriptor. */
void art_dex_register(const void *dex, size_t size);
/* Calls chain[0](chain + 1). */
void art_quick_invoke(const uint64_t *chain);
/* Runs chain[0](chain + 1) from an interpreter whose dex pc is dex_pc:
 * which 0: nterp-like (r12; x22 on arm64), 1: switch-like (rbx; x19). */
void art_interpret(int which, const void *dex_pc, const uint64_t *chain);

#endif
