/* oat_methods.h — every compiled method of an oat file, with its code range.
 *
 * Walks each dex's class_defs and class_data alongside the OatClass records
 * (so class_method_index and dex method index line up) and decodes every
 * method header.  When a dex cannot be found, v194+ files are still listed
 * by class_def index and class method index alone (OatClass stores the
 * method count), with no signatures.  Methods sharing one code offset
 * (de-duplicated code) are grouped.  Used by the `methods` command and the
 * tests that check every method against recorded expectations. */
#ifndef UPROBESTATS_FORMATS_OAT_METHODS_H
#define UPROBESTATS_FORMATS_OAT_METHODS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "formats/oat.h"
#include "formats/oat_code.h"
#include "formats/oat_dexfile.h"

struct oat_method {
	uint32_t dex_i, cdi, index_in_class;
	bool has_dex;
	uint32_t method_idx;        /* DEX_NO_INDEX without a dex */
	uint32_t access_flags;      /* 0 without a dex */
	uint32_t raw_code_offset;   /* as stored (Thumb bit kept) */
	struct oat_code code;
	size_t dedup_first;         /* list index of the first method with this code */
	uint32_t dedup_n;           /* methods sharing this code (1 = unique) */
};

struct oat_method_list {
	struct oat_method *v;
	size_t n;
	char notes[1024];           /* e.g. which dex files were missing */
	uint32_t dex_skipped;       /* dex files that could not be listed at all */
	char first_skip[256];       /* why the first of them was skipped */
};

int oat_list_methods(const struct oat_file *o, struct oat_dexset *ds, struct oat_method_list *out,
		     struct err *err);
void oat_method_list_free(struct oat_method_list *l);

/* m's signature as the `methods` command prints it ("void a.B.c(int)",
 * dex_pretty_method), or when its dex cannot be read (ds may be NULL)
 * "<dex #D class_def C method I>".  Returns the length the signature needed
 * (>= size: cut), or -1 for the placeholder. */
int oat_method_signature(struct oat_dexset *ds, const struct oat_method *m, char *buf,
			 size_t size);

/* Calls fn for every method slot whose code offset (Thumb bit cleared) is
 * code_offset: a scan of the OatClass code-offset arrays only (class_data
 * headers give the method counts before v194).  Dex files that cannot be
 * opened are skipped before v194.  fn returns non-zero to stop. */
typedef int (*oat_sharer_fn)(void *ctx, uint32_t dex_i, uint32_t cdi, uint32_t index_in_class);
int oat_for_each_code_user(const struct oat_file *o, struct oat_dexset *ds, uint32_t code_offset,
			   oat_sharer_fn fn, void *ctx, struct err *err);

#endif
