/* dex_debug.h — source positions of dex code: a method's debug_info_item
 * line-number program (dex pc -> source line) and a class's source file name.
 *
 * Works for every dex the dex reader opens: standard dex 035..041 (the
 * code_item's debug_info_off) and compact dex (cdex001: the code item's
 * packed fields and the debug-info offset table in the data section).
 * The line program is run on hostile input: bounded reads, a cap on the
 * number of entries, lines kept in 32 bits (the DEX spec's line is an
 * unsigned value that the program only moves by signed sleb deltas). */
#ifndef UPROBESTATS_FORMATS_DEX_DEBUG_H
#define UPROBESTATS_FORMATS_DEX_DEBUG_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "formats/dex.h"

/* One position entry: from dex_pc (in 16-bit code units) on, the source
 * line is `line`, until the next entry's dex_pc. */
struct dex_position {
	uint32_t dex_pc;
	uint32_t line;
};

/* The positions of method m (from dex_class_iter_next), in program order
 * (dex pcs non-decreasing).  *out is malloc'ed (free()), *n may be 0 when
 * the method has code but no debug info.  -ENOENT: abstract/native (no
 * code_item) or no debug info at all; -EINVAL: malformed. */
int dex_method_positions(const struct dex_file *d, const struct dex_method *m,
			 struct dex_position **out, size_t *n, struct err *err);

/* The line of dex_pc: the last position entry whose dex_pc <= dex_pc
 * (as ART's and dexdump's lookup does).  -ENOENT when none applies. */
int dex_method_line(const struct dex_file *d, const struct dex_method *m, uint32_t dex_pc,
		    uint32_t *line, struct err *err);

/* The class def's source_file ("Foo.java"), NULL when it has none. */
const char *dex_class_source_file(const struct dex_file *d, uint32_t cdi);

#endif
