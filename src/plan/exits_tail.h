/* exits_tail.h — plan/exits.c's use of exits_tail.c: a native function's
 * exits through its tail branches (see exits_tail.c for what is proven). */
#ifndef UPROBESTATS_PLAN_EXITS_TAIL_H
#define UPROBESTATS_PLAN_EXITS_TAIL_H

#include "formats/exit_sites.h"
#include "common/err.h"

struct code_file;

/* A native function's exit sites: its own returns and those of the functions
 * its tail branches reach. */
struct native_exits {
	uint32_t count;
	uint64_t *offsets;           /* file offsets of the exit sites, ascending */
	uint32_t n_funcs;
	uint64_t *funcs;             /* file offsets of the functions tail-branched to */
};
void native_exits_free(struct native_exits *x);

/* The exits of the function at file offset `offset` (size bytes) of f,
 * whose own scan is *scan: its returns and those of the functions its
 * branches out of it reach; 0, or a negative errno with err naming the
 * function's branch that cannot be followed. */
int exits_tail_follow(struct code_file *f, enum code_arch arch, uint64_t offset,
		      uint64_t size, const struct exit_scan *scan, struct native_exits *out,
		      struct err *err);

#endif
