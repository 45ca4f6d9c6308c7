/* codeinfo.h — ART CodeInfo (the "vmap table" before each compiled method's
 * code) for oat 170..265 (Android 10-16): frame size, spill masks, stack-map
 * count and rows.
 *
 * Layouts by oat version (docs/oat-reader.md, "CodeInfo"):
 *   170        4 sequential varints (frame, core, fp, dex registers), then
 *              each bit table behind a "deduped" bit;
 *   173..190   6 interleaved varints (flags, frame, core, fp, dex registers,
 *              bit_table_flags), tables present/deduped per bit_table_flags;
 *   191..265   7 interleaved varints, with code_size second.
 * 171-172 were never released and are refused.  The stack-map table is the
 * first bit table; a deduped table is followed backwards from its position,
 * possibly to before the CodeInfo start, so the decoder takes the whole
 * buffer the CodeInfo lives in plus its offset inside it. */
#ifndef UPROBESTATS_FORMATS_CODEINFO_H
#define UPROBESTATS_FORMATS_CODEINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "formats/insn.h"
#include "formats/oat.h"
#include "formats/oat_code.h"

struct art_frame_info {
	uint32_t frame_size;        /* bytes (packed_frame_size * 16) */
	uint32_t core_spill_mask;   /* arm64: bit 30 = lr; x86_64: bit 16 = return address */
	uint32_t fp_spill_mask;
	uint32_t num_stack_maps;    /* rows of the StackMap table (0 if absent) */
	bool frameless_leaf;        /* frame size 0: no frame, return address stays in lr/[rsp] */
	uint32_t flags;             /* CodeInfo flags (0 at v170) */
	bool has_code_size;         /* v191+ */
	uint32_t code_size;
	uint32_t num_dex_registers;
};

/* One StackMap row.  kind: -1 Default, 0 Catch, 1 OSR, 2 Debug. */
struct art_stack_map {
	uint32_t native_pc;         /* offset from the code start, in bytes */
	uint32_t dex_pc;            /* 0xffffffff = none */
	int32_t kind;
};

/* Decodes the CodeInfo at buf[ci_off] (buf has len bytes; deduped tables may
 * point before ci_off but never outside buf).  Fills *out.  When rows != NULL
 * also returns the stack-map rows (malloc'ed, *n_rows of them; free()). */
int codeinfo_decode(unsigned oat_version, enum code_arch arch, const uint8_t *buf, size_t len,
		    size_t ci_off, struct art_frame_info *out, struct art_stack_map **rows,
		    uint32_t *n_rows, struct err *err);

/* The frame info of the compiled method whose code oat_code_at() decoded. */
int oat_code_frame_info(const struct oat_file *o, const struct oat_code *c,
			struct art_frame_info *out, struct art_stack_map **rows, uint32_t *n_rows,
			struct err *err);

/* The code architecture of an oat file; -ENOTSUP for arm/x86/riscv64. */
int oat_code_arch(const struct oat_file *o, enum code_arch *arch, struct err *err);

#endif
