/* exit_sites.h — the return instructions of one method's or function's code.
 *
 * ART methods (CODE_ART_METHOD): every `ret` of the compiled code, where a
 * plain uprobe can stand in for a uretprobe without touching the return
 * address.  arm64: aligned words are scanned; literal pools (marker
 * `ldr xzr, #n`) and packed-switch jump tables (the `adr` target after
 * `cmp/b.hs`) are skipped, and each `ret` (0xd65f03c0) must follow its
 * epilogue (`add sp, sp, #F` or `ldp xzr|xN, xM, [sp], #F` restoring lr, or
 * a frameless method with no stack adjustment at all).  x86_64: decoded
 * linearly from the code start with insn_x86_64_decode and stopped at the
 * lowest RIP-relative target inside the method (ART's constant area); each
 * `ret` must follow pops and an optional `add rsp, N` that remove the frame.
 *
 * Frameless leaf methods with no stack maps cannot reach a safepoint, so
 * ART never walks through them; either kind of exit probe would be safe.
 * uprobestats uses exit sites for them as well (one mechanism for all Java
 * code, and no uretprobe ever goes on ART code).
 *
 * Native functions (CODE_NATIVE_FUNCTION): the set of exits is returned only
 * when it is proven: every byte decodes, every branch stays inside the
 * function, there is no tail call or unbounded indirect jump; otherwise the
 * function is refused with the reason and offset. */
#ifndef UPROBESTATS_FORMATS_EXIT_SITES_H
#define UPROBESTATS_FORMATS_EXIT_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "formats/insn.h"

enum code_kind { CODE_ART_METHOD, CODE_NATIVE_FUNCTION };

struct exit_sites {
	uint32_t count;
	/* offsets of each return instruction from the code start, ascending */
	uint32_t *offsets;
};

/* Every return of the code [code, code+size). ART methods: skip arm64 literal pools and jump
 * tables, stop at the x86_64 constant area; arm64 `ret` must be confirmed by its epilogue.
 * Native functions: refuse (negative errno, err naming the reason and offset, e.g. "tail call
 * at +0x1c", "jump out of the function at +0x40", "cannot decode at +0x12") whenever the set of
 * exits cannot be proven; never guess. */
int exit_sites_find(enum code_arch arch, enum code_kind kind, const uint8_t *code, size_t size,
		    struct exit_sites *out, struct err *err);
void exit_sites_free(struct exit_sites *s);

/* A direct branch out of a native function (arm64 `b`, `b.cond`, `cbz`, `tbz`, ...):
 * a tail call, or a conditional branch to code elsewhere. */
struct exit_tail {
	uint32_t at;                /* offset of the branch from the function start */
	int64_t target;             /* its destination, from the function start */
	bool conditional;
};

/* A native function's own exits, and where its exits may go on: the direct
 * branches out of it and whether it ever moves sp (plan/exits_tail.c proves
 * the rest: a branch taken with sp at its entry value, to a function start). */
struct exit_scan {
	struct exit_sites sites;    /* its own return instructions */
	struct exit_tail *tails;    /* in code order; arm64 only (x86_64 refuses them) */
	uint32_t n_tails;
	bool moves_sp;              /* an instruction writes sp (arm64) */
	uint32_t sp_write_at;       /* the first one */
	bool calls;                 /* it calls (bl, blr, ...; arm64) */
	uint32_t call_at;           /* the first call */
	size_t tails_cap;
};

/* As exit_sites_find(CODE_NATIVE_FUNCTION), except that on arm64 a direct
 * branch out of the function is kept in out->tails instead of refused.  x86_64:
 * as exit_sites_find (its decoder cannot prove rsp at a `jmp`).  Free with
 * exit_scan_free(). */
int exit_sites_scan_native(enum code_arch arch, const uint8_t *code, size_t size,
			   struct exit_scan *out, struct err *err);
void exit_scan_free(struct exit_scan *s);

/* As exit_sites_find(CODE_ART_METHOD), with the frame size from CodeInfo: each
 * epilogue (arm64 and x86_64) must remove exactly `frame` bytes (exit_sites_find
 * takes the size the method's own prologue allocates instead). */
int exit_sites_find_art(enum code_arch arch, const uint8_t *code, size_t size, uint32_t frame,
			struct exit_sites *out, struct err *err);

/* The frame size an ART method's own prologue allocates, independently of
 * CodeInfo: arm64 `sub sp, sp, #N` / `stp xA, xB, [sp, #-N]!` / `str x0,
 * [sp, #-N]!` (the first sp decrement before any `ret`); x86_64 the pushes
 * before `sub rsp, N`, plus N, plus the return address.  0 = frameless. */
int exit_sites_prologue_frame(enum code_arch arch, const uint8_t *code, size_t size,
			      uint32_t *frame, struct err *err);

/* 0 when a breakpoint at code + off (code of one ART method) starts an
 * instruction and is not data: on arm64 aligned and outside literal pools and
 * jump tables, on x86_64 an instruction start before the constant area, proven
 * by decoding the whole method.  Otherwise a negative errno and err saying what
 * is at off. */
int exit_sites_art_boundary_check(enum code_arch arch, const uint8_t *code, size_t size,
				  size_t off, struct err *err);

#endif
