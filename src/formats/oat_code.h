/* oat_code.h — per-class and per-method data inside an oat file: OatClass
 * records (all/some/none compiled, before and after v194), code offsets, the
 * OatQuickMethodHeader before each method's code and the code size it leads
 * to (directly up to v191, through the CodeInfo bit stream from v192), and
 * the final file offset through the ELF program headers. */
#ifndef UPROBESTATS_FORMATS_OAT_CODE_H
#define UPROBESTATS_FORMATS_OAT_CODE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "formats/oat.h"

enum oat_class_type {
	OAT_CLASS_ALL_COMPILED = 0,
	OAT_CLASS_SOME_COMPILED = 1,
	OAT_CLASS_NONE_COMPILED = 2,
};

#define OAT_UNKNOWN_COUNT 0xffffffffu

struct oat_class {
	uint32_t offset;            /* oat offset of the OatClass record */
	uint16_t status, type;      /* ClassStatus, enum oat_class_type */
	bool has_num_methods;       /* v194+: the record stores its method count */
	uint32_t num_methods;       /* stored or (before v194) the caller's count */
	uint64_t bitmap_at;         /* SomeCompiled: oat offset of the bitmap */
	uint32_t bitmap_bytes;
	uint64_t methods_at;        /* oat offset of u32 code_offset[n_offsets] */
	uint32_t n_offsets;
};

/* Why a method has no code_offset. */
enum oat_miss {
	OAT_COMPILED = 0,
	OAT_MISS_CLASS_NONE,        /* the class is NoneCompiled */
	OAT_MISS_BITMAP,            /* SomeCompiled and the bitmap excludes it */
	OAT_MISS_ZERO,              /* a slot exists but holds 0 */
};

/* The OatClass of class_def cdi in dex dex_i.  n_methods is the class_data
 * method count (direct + virtual) from the dex, or OAT_UNKNOWN_COUNT when no
 * dex is available (then only v194+ records can be read).  A v194+ record
 * whose count disagrees with n_methods is reported as a layout mismatch. */
int oat_class_get(const struct oat_file *o, uint32_t dex_i, uint32_t cdi, uint32_t n_methods,
		  struct oat_class *out, struct err *err);

/* How far a SomeCompiled bitmap has been counted: slots_before is the number
 * of set bits in bytes [0, byte).  Callers that look up increasing method
 * indexes of one class pass one cursor (zeroed first) so each bitmap byte is
 * counted once per class, not once per method. */
struct oat_slot_cursor {
	uint32_t byte;
	uint32_t slots_before;
};

/* code_offset of the method at class_method_index idx (direct then virtual),
 * raw (Thumb bit kept); 0 with *why set when it has none.  cur may be NULL
 * (a single lookup). */
int oat_class_method(const struct oat_file *o, const struct oat_class *c, uint32_t idx,
		     struct oat_slot_cursor *cur, uint32_t *code_offset, enum oat_miss *why,
		     struct err *err);

/* The smallest class method index >= from that has a code slot (its bitmap
 * bit is set, or the class is AllCompiled), or c->num_methods when none has.
 * Runs of zero bitmap bytes are skipped a byte at a time. */
uint32_t oat_class_next_slotted(const struct oat_file *o, const struct oat_class *c,
				uint32_t from);

struct oat_code {
	uint32_t code_offset;       /* oat-relative, Thumb bit cleared */
	bool thumb;
	uint32_t code_size;
	uint64_t vaddr, file_offset;
	uint32_t seg_flags;         /* PF_* of the PT_LOAD holding the code */
	const char *header_kind;    /* which OatQuickMethodHeader decode applied */
	uint32_t codeinfo_offset;   /* oat-relative offset of the CodeInfo (0: none) */
};

/* Decodes the method header before raw_code_offset and maps the code to its
 * file offset.  Errors: the offset is outside .text, no header layout yields
 * a plausible size, or the code is not in an executable segment. */
int oat_code_at(const struct oat_file *o, uint32_t raw_code_offset, struct oat_code *out,
		struct err *err);

/* Size field of a CodeInfo bit stream at ci (v191+ encoding); false when the
 * stream runs past len. */
bool oat_codeinfo_code_size(const uint8_t *ci, uint64_t len, uint32_t *size);

#endif
