/* kwalk.h — the table the BPF program walks compiled Java frames with
 * (--stack-mode kernel, records.h UPS_KWALK_MAP).
 *
 * Owns building it: every compiled method of the traced processes (their
 * oat/odex mappings at attach, through the session's code/codecache.h) as one
 * struct ups_kwalk_ent, sorted by (tgid, start), overlaps dropped, padded
 * with UPS_KWALK_NONE to a power of two so the program's binary search has
 * a fixed number of steps (bits). */
#ifndef UPROBESTATS_STACK_KWALK_H
#define UPROBESTATS_STACK_KWALK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "records.h"
#include "common/err.h"

struct kwalk_table {
	struct ups_kwalk_ent *v;
	size_t n;       /* entries in use (the rest, up to 1 << bits, is padding) */
	size_t cap;     /* allocated */
	uint32_t bits;  /* log2 of the padded size */
};

/* 0, or -ENOMEM. */
int kwalk_table_add(struct kwalk_table *t, uint32_t tgid, uint64_t start, uint64_t end,
		    uint32_t frame_size);

/* Sorts, drops entries that overlap the one before (never guess a frame
 * size) and pads.  -E2BIG past 1 << UPS_KWALK_MAX_BITS entries. */
int kwalk_table_finish(struct kwalk_table *t, struct err *err);

struct code_cache;

/* Adds every compiled method of pids (as the code cache sees them), then
 * finishes the table. */
int kwalk_table_build(struct kwalk_table *t, struct code_cache *code, const pid_t *pids,
		      size_t n, struct err *err);

/* The padded size: 1 << bits. */
static inline size_t kwalk_table_size(const struct kwalk_table *t)
{
	return (size_t)1 << t->bits;
}

void kwalk_table_free(struct kwalk_table *t);

#endif
