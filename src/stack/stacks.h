/* stacks.h — from a UPS_REC_STACK record to the frames of its call stack.
 *
 * Owns the record's validation (the exact length: header + wrapped record
 * padded to 8 + the PCs + the stack bytes it states, each part bounded) and
 * the walk over it: the unwinder (stack/unwind.h) with the code cache
 * (code/codecache.h) goes over the registers and the slice, and over the
 * PCs a kernel walk (UPS_STACK_KERNEL) gives first, on from their end when
 * it stopped at native code.  One struct stacks per run, over the session's
 * code cache. */
#ifndef UPROBESTATS_STACK_STACKS_H
#define UPROBESTATS_STACK_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "records.h"
#include "stack/unwind.h"

struct stacks;

/* The parts of a stack record; pointers into the record. */
struct stack_record {
	struct ups_stack_hdr hdr;
	const void *inner;         /* the wrapped record, hdr.inner_len bytes */
	const uint64_t *pcs;       /* hdr.n_pcs (unaligned: read with memcpy) */
	const uint8_t *stack;      /* hdr.stack_len bytes from hdr.stack_addr */
};

/* 0, or -EINVAL when the length is not exactly what the header states or a
 * part is over its bound. */
int stack_record_parse(const void *data, size_t size, struct stack_record *out);

struct code_cache;

/* code: the run's code cache, which must outlive s. */
struct stacks *stacks_new(struct code_cache *code);
void stacks_free(struct stacks *s);

/* Reads pid's mappings now (see code_cache_prime). */
void stacks_prime(struct stacks *s, uint32_t pid);

/* Unwinds (or symbolizes) up to max_frames frames of the record.  Unless
 * art_frames, libart's own native frames (the interpreter, its invoke
 * stubs: stack_frame.art) are left out of a stack that has Java frames
 * (compiled, JIT or interpreted), as simpleperf does without
 * --show-art-frames; the first frame and a frame the walk marked stay. */
void stacks_walk(struct stacks *s, const struct stack_record *r, uint32_t max_frames, bool art_frames,
		 struct stack_trace *out);

#endif
