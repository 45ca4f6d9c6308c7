/* unwind.h — the call-stack walk of one hit, from the registers and the slice
 * of the user stack the BPF program copied (records.h, UPS_STACK_COPY).
 *
 * Owns the stepping rules, nothing about files: what code is at a PC (a
 * compiled Java method and its frame size, a native function and its CFI
 * row, the interpreter, JIT code, an unreadable file) comes from the
 * caller's lookup (code/codecache.h in the tool, fakes in the unit tests).
 *
 *   compiled Java  return PC at sp+F-8, caller sp = sp+F (art-frames.md §1);
 *                  at the method's first instruction, or in a frameless leaf,
 *                  return PC = [sp] (x86_64) / lr (arm64).  A return PC into
 *                  Java code is accepted only on an exact Default/OSR stack
 *                  map (§6.5); otherwise the walk stops with that frame marked.
 *   native         the CFI row at the PC (PC-1 for a return address); without
 *                  CFI, at the symbol's first instruction [sp]/lr, elsewhere
 *                  the frame-pointer chain (rbp/x29), checked to move up.
 *   JIT code       by the CFI of ART's symfile for it (code/artdebug.h), as
 *                  native code; without one [jit] and the walk stops.
 *   interpreter    libart's interpreter code is native code stepped by its
 *                  CFI; a row with ART's DEX1 rule (formats/cfi.h
 *                  CFI_RULE_DEX_PC) gives the dex address of the method it
 *                  runs, which `dex` names: an interpreted frame is added
 *                  after the interpreter's own.  Without CFI [interpreted]
 *                  and the walk stops.
 *   anything else  [unknown in FILE], and the walk stops: a frame is never
 *                  guessed.
 * Memory is only what the slice holds: a read outside it ends the walk
 * ("stack slice ends"); a register not known exactly (not in the probe's
 * registers, not restored from a spill slot or by the CFI) is unknown, and
 * a step that needs it ends the walk with the reason.
 *
 * --stack-mode kernel: the PCs the BPF program walked (pcs) are the first
 * frames.  Each but the last is stepped by the same rules, except that its
 * return PC is the next walked PC rather than a read of the slice (whose
 * reads, e.g. of a Java frame's spill slots, still decide what registers
 * are known); the last is stepped from the slice when the kernel walk ended
 * at a PC outside compiled Java code (pcs_continue), so the native frames
 * above the Java ones unwind as in copy mode. */
#ifndef UPROBESTATS_STACK_UNWIND_H
#define UPROBESTATS_STACK_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "code/code_types.h"
#include "vocab/frames.h"

#define UNWIND_NREGS 33

enum unwind_arch { UNWIND_X86_64, UNWIND_ARM64 };

/* pc: the address looked up (a return address is looked up at pc-1 for CFI
 * and symbol purposes by the lookup itself when is_return is set). */
typedef int (*unwind_lookup_fn)(void *ctx, uint64_t pc, bool is_return, struct code_info *out);
/* The interpreted method at a dex address (a DEX1 CFI rule's value): 0 with
 * out filled (FRAME_INTERPRETED), or negative. */
typedef int (*unwind_dex_fn)(void *ctx, uint64_t addr, struct code_info *out);

struct unwind_input {
	enum unwind_arch arch;
	uint64_t regs[UNWIND_NREGS]; /* DWARF numbering (records.h) */
	uint64_t stack_base;         /* the address of stack[0] (sp at the hit) */
	const uint8_t *stack;
	size_t stack_len;
	uint32_t max_frames;         /* <= UNWIND_MAX_FRAMES */
	bool first_is_return;        /* the first PC is a return address (a uretprobe) */
	const uint64_t *pcs;         /* kernel walk (unaligned: read with memcpy) */
	uint32_t n_pcs;
	bool pcs_continue;           /* unwind on from the last walked PC; else the walk
				      * ends there with UNWIND_END_KWALK */
	unwind_dex_fn dex;           /* NULL: DEX1 rules are not followed */
};

#define UNWIND_END_KWALK "end of the kernel walk"

void unwind_walk(const struct unwind_input *in, unwind_lookup_fn lookup, void *ctx,
		 struct stack_trace *out);

#endif
