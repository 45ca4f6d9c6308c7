/* oat_lookup.h — one Java method in one oat file, with the built-in reader.
 *
 * Finds the class through the dex type/class-def tables (binary search on
 * the sorted string ids; no class is parsed but the one asked for), the
 * method in that class's class_data (its position there is the OatClass
 * index), then the code offset, method header and file offset.  Methods
 * without code get an error that names the reason; de-duplicated code gets
 * the list of the other methods sharing it. */
#ifndef UPROBESTATS_RESOLVE_OAT_LOOKUP_H
#define UPROBESTATS_RESOLVE_OAT_LOOKUP_H

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "resolve/java_sig.h"
#include "formats/oat.h"
#include "formats/oat_code.h"
#include "formats/oat_dexfile.h"

enum oat_lookup_kind {
	OAT_LOOKUP_FOUND = 0,
	OAT_LOOKUP_NO_CLASS,        /* -ENOENT: no dex of this oat defines the class */
	OAT_LOOKUP_NO_METHOD,       /* -ENOENT: the class lacks the method (inherited?) */
	OAT_LOOKUP_AMBIGUOUS,       /* -EINVAL: no parameter list and several overloads */
	OAT_LOOKUP_NOT_COMPILED,    /* -ENODATA: found, but no AOT code (reason in err) */
	OAT_LOOKUP_DEX_MISSING,     /* -ENOENT: class not found and some dex unreadable */
	OAT_LOOKUP_BROKEN,          /* other: the file is damaged or not understood */
};

struct oat_lookup_result {
	enum oat_lookup_kind kind;
	uint32_t dex_i, cdi, index_in_class, method_idx, access_flags;
	uint32_t raw_code_offset;
	struct oat_code code;
	char signature[1024];       /* PrettyMethod form, from the dex */
	char ret_desc[256];
	char params[1024];          /* parameter descriptors, NUL-separated */
	uint32_t n_params;
	uint32_t n_sharers;         /* other methods sharing the code (de-duplication) */
	char sharers[1024];         /* their signatures, "; "-separated (truncated) */
	char source_file[256];      /* the class's source file ("Foo.java"), "" when none */
};

/* err always says what happened when the result is not FOUND. */
int oat_lookup_method(const struct oat_file *o, struct oat_dexset *ds, const struct java_sig *sig,
		      struct oat_lookup_result *out, struct err *err);

#endif
