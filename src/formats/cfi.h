/* cfi.h — DWARF call frame information (CFI) of one ELF file, for unwinding.
 *
 * Owns: reading .eh_frame (through .eh_frame_hdr's sorted search table when
 * the file has one and it is well formed, else by scanning every FDE once at
 * open) and .debug_frame (DWARF 1/3/4 CIE versions, 32-bit and 64-bit
 * lengths), and evaluating a CIE's initial instructions plus an FDE's
 * instructions up to a PC, giving the unwind row that applies there.
 *
 * Addresses are ELF virtual addresses of the file (what st_value and
 * p_vaddr use); the caller subtracts the load bias first.  Pointer
 * encodings: absptr, (s)uleb128, (s)data2/4/8, pcrel and datarel (relative
 * to .eh_frame_hdr), with or without "indirect" refused (only used for
 * personality routines, which this reader skips).
 *
 * A row says how to recover the caller's registers:
 *   CFA = value of register cfa_reg + cfa_off, or, when cfa_expr_len is
 *   not 0, the value of the DWARF expression cfa_expr[0..cfa_expr_len)
 *   (DW_CFA_def_cfa_expression: x86_64 PLT entries, ART's mterp handlers),
 *   copied into the row for the unwinder to evaluate (formats/dwexpr.h); one
 *   longer than CFI_MAX_EXPR bytes is refused with -ENOTSUP and a message
 *   naming the FDE.  For each register r a rule regs[r]:
 *     CFI_RULE_UNDEFINED  not recoverable (for the return-address column
 *                         this marks the outermost frame);
 *     CFI_RULE_SAME       unchanged from this frame;
 *     CFI_RULE_OFFSET     saved in memory at CFA + off;
 *     CFI_RULE_VAL_OFFSET its value is CFA + off;
 *     CFI_RULE_REGISTER   its value is in register `reg`;
 *     CFI_RULE_EXPR       a DWARF expression this reader does not evaluate:
 *                         treat the register as unknown;
 *     CFI_RULE_DEX_PC     ART's dex-pc marker on an interpreter's frame: a
 *                         DW_CFA_val_expression DW_OP_const4u "DEX1",
 *                         DW_OP_drop, DW_OP_breg<reg>/bregx reg off, the
 *                         only expression form evaluated: the value of
 *                         register `reg` in this frame plus off is the address
 *                         of the interpreted method's current dex instruction
 *                         (the register it is attached to stays unknown).
 * Register numbers are DWARF numbers:
 *   x86_64: rax 0, rdx 1, rcx 2, rbx 3, rsi 4, rdi 5, rbp 6, rsp 7, r8..r15
 *           8..15, return address 16;
 *   arm64:  x0..x30 0..30 (x29 = fp, x30 = lr, the usual return-address
 *           column), sp 31.
 * Rules are kept for registers 0..CFI_MAX_REGS-1 (all of the above);
 * rules for higher registers (vector registers) are parsed and dropped.
 * A register without an explicit rule is CFI_RULE_SAME for callee-saved
 * registers by the ABI; this reader reports what the CFI says and leaves
 * ABI defaults to the unwinder (kind CFI_RULE_SAME is the initial value).
 *
 * Every length, offset and instruction operand is bounds-checked; the
 * instruction evaluator caps the remember/restore state stack and the number
 * of instructions it runs. */
#ifndef UPROBESTATS_FORMATS_CFI_H
#define UPROBESTATS_FORMATS_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "formats/elf.h"

#define CFI_MAX_REGS 33
#define CFI_MAX_EXPR 32   /* bytes of a CFA expression kept in a row */

/* DWARF register numbers the unwinder uses. */
#define CFI_X86_64_RBX 3
#define CFI_X86_64_RBP 6
#define CFI_X86_64_RSP 7
#define CFI_X86_64_RA 16
#define CFI_ARM64_X19 19
#define CFI_ARM64_FP 29
#define CFI_ARM64_LR 30
#define CFI_ARM64_SP 31

enum cfi_rule_kind {
	CFI_RULE_SAME = 0,
	CFI_RULE_UNDEFINED,
	CFI_RULE_OFFSET,
	CFI_RULE_VAL_OFFSET,
	CFI_RULE_REGISTER,
	CFI_RULE_EXPR,
	CFI_RULE_DEX_PC,
};

struct cfi_rule {
	uint8_t kind;               /* enum cfi_rule_kind */
	uint16_t reg;               /* CFI_RULE_REGISTER, CFI_RULE_DEX_PC */
	int64_t off;                /* CFI_RULE_OFFSET / VAL_OFFSET / DEX_PC */
};

struct cfi_row {
	uint64_t fde_start, fde_end;    /* the FDE's PC range [start, end) */
	uint64_t row_start, row_end;    /* where this row applies, inside the FDE */
	uint32_t cfa_reg;
	int64_t cfa_off;
	uint8_t cfa_expr_len;           /* not 0: the CFA is this expression's value */
	uint8_t cfa_expr[CFI_MAX_EXPR];
	uint32_t ra_reg;                /* the CIE's return-address column */
	struct cfi_rule regs[CFI_MAX_REGS];
	bool signal_frame;              /* augmentation "S" */
	bool ra_signed;                 /* arm64 DW_CFA_AARCH64_negate_ra_state toggled on */
	bool from_debug_frame;          /* false: .eh_frame */
};

struct cfi_table;           /* opaque */

/* Reads .eh_frame(+_hdr) and .debug_frame of elf (which must outlive the
 * table).  -ENOENT when the file has neither section; -EINVAL when a
 * section's headers are malformed (err names the section and offset).
 * A damaged single FDE does not fail the open: it is skipped and counted
 * (cfi_bad_fdes()). */
int cfi_open(const struct elf_file *elf, struct cfi_table **out, struct err *err);
void cfi_close(struct cfi_table *t);

/* The row at vaddr.  0; -ENOENT when no FDE covers vaddr; -ENOTSUP when the
 * CFA there is a DWARF expression longer than CFI_MAX_EXPR (or another
 * construct this reader refuses: err says which); -EINVAL when the FDE's instructions are malformed.  An
 * .eh_frame FDE wins over a .debug_frame one for the same PC. */
int cfi_row_at(const struct cfi_table *t, uint64_t vaddr, struct cfi_row *row, struct err *err);

/* Every FDE, sorted by start address (for tests and tools). */
size_t cfi_fde_count(const struct cfi_table *t);
int cfi_fde_range(const struct cfi_table *t, size_t i, uint64_t *start, uint64_t *end);
size_t cfi_bad_fdes(const struct cfi_table *t);

/* "rsp", "x29", "r12", ... for messages; "r<N>" for others. */
const char *cfi_reg_name(uint16_t e_machine, uint32_t reg, char *buf, size_t size);

#endif
