/* insn.h — instruction-level facts for x86_64 and arm64 code.
 *
 * Owns the x86_64 instruction length decoder (legacy prefixes, REX, the
 * one-, two- and three-byte opcode maps, VEX and EVEX in the 0f/0f38/0f3a
 * maps; anything else it does not know is refused with length 0, never
 * guessed) and the instruction
 * boundary check that refuses breakpoints placed inside an instruction.
 * arm64 instructions are all 4 bytes, so a boundary there is an aligned
 * offset inside the function. */
#ifndef UPROBESTATS_FORMATS_INSN_H
#define UPROBESTATS_FORMATS_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

enum code_arch { CODE_ARCH_X86_64, CODE_ARCH_ARM64 };

/* Length in bytes of the x86_64 instruction at p (avail bytes readable), 0 if it cannot be
 * decoded with certainty (invalid, unknown opcode, truncated). Fills *info when info != NULL. */
struct insn_x86_64 {
	unsigned len;
	bool is_ret;            /* c3 / c2 iw (not far returns) */
	bool is_call, is_jmp, is_jcc, is_indirect;
	bool has_rel_target;    /* rel8/rel32 branch: target = offset of next insn + disp */
	int64_t rel_disp;
	bool rip_relative;      /* a ModRM memory operand [rip+disp32] */
	int32_t rip_disp;
	/* Extra facts (beyond the published interface). */
	bool is_int3;           /* cc: padding between functions, or a trap */
	bool is_ud;             /* ud2 / ud1 / ud0: never returns */
	bool is_hlt;
	uint8_t opcode;         /* last opcode byte (after 0f / 0f 38 / 0f 3a escapes) */
	uint8_t map;            /* 0: one-byte map, 1: 0f, 2: 0f 38, 3: 0f 3a (VEX: mmmmm) */
	bool has_modrm;
	uint8_t modrm;
	uint8_t rex;            /* 0 when absent */
	int64_t imm;            /* the immediate, sign-extended (0 when none) */
};
unsigned insn_x86_64_decode(const uint8_t *p, size_t avail, struct insn_x86_64 *info);

/* 0 when off is the start of an instruction of the function [func, func+size), proven by
 * decoding linearly from func (x86_64) or by 4-byte alignment inside the function (arm64);
 * otherwise a negative errno and err saying what is there ("offset +0x3 is inside the
 * instruction at +0x0 (10 bytes)", "cannot decode at +0x12: …"). */
int insn_boundary_check(enum code_arch arch, const uint8_t *func, size_t size, size_t off,
			struct err *err);

/* arm64 helpers shared by exit_sites and the tests. */
#define A64_RET 0xd65f03c0u
static inline uint32_t a64_word(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#endif
