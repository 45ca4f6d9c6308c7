/* dwexpr.h — DWARF expressions (DWARF 5 section 2.5), evaluated for the unwinder:
 * a CFA given by DW_CFA_def_cfa_expression (ART's mterp handlers on x86_64 define
 * theirs as `DW_OP_bregx r15 -8; DW_OP_deref; DW_OP_plus_uconst 88`: the caller's sp
 * saved in the interpreter's frame).
 *
 * Owns: a stack machine over the expression bytes, hostile-input safe: every
 * operand bounds-checked, a stack of DWEXPR_MAX_STACK entries, at most
 * DWEXPR_MAX_OPS operations run (branches may loop), 64-bit arithmetic wrapping,
 * division by zero refused.  Registers and memory come only through the caller's
 * functions: memory is read, never written.
 *
 * Evaluated: DW_OP_addr, deref, deref_size, const1u..const8s, constu, consts,
 * lit0..lit31, dup, drop, over, pick, swap, rot, abs, and, div, minus, mod, mul,
 * neg, not, or, plus, plus_uconst, shl, shr, shra, xor, bra, skip, eq, ge, gt, le,
 * lt, ne, breg0..breg31, bregx, nop.  Refused (-ENOTSUP): the location operators
 * (reg0..31, regx, piece, implicit_value, stack_value ...), call/TLS/frame-base/
 * entry-value/typed operators and vendor extensions: what they would need is not
 * the value of a frame's register. */
#ifndef UPROBESTATS_FORMATS_DWEXPR_H
#define UPROBESTATS_FORMATS_DWEXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DWEXPR_MAX_STACK 64
#define DWEXPR_MAX_OPS 1024

struct dwexpr_env {
	void *ctx;
	/* The value of DWARF register reg in the frame; false when unknown. */
	bool (*reg)(void *ctx, uint32_t reg, uint64_t *val);
	/* size (1, 2, 4 or 8) bytes at addr, little-endian, zero-extended; false when
	 * unreadable. */
	bool (*mem)(void *ctx, uint64_t addr, unsigned size, uint64_t *val);
};

/* Evaluates ops[0..len) with *initial pushed first when initial is not NULL.
 * 0 and *out = the value on top of the stack at the end; -EINVAL malformed (an
 * operand or branch outside the expression, stack under/overflow, division by
 * zero, an empty result), -ENOTSUP an operator not evaluated, -EFAULT a register
 * unknown or memory unreadable, -E2BIG more than DWEXPR_MAX_OPS operations.
 * *why (when not NULL) says which, statically allocated. */
int dwexpr_eval(const uint8_t *ops, size_t len, const struct dwexpr_env *env,
		const uint64_t *initial, uint64_t *out, const char **why);

#endif
