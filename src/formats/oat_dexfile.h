/* oat_dexfile.h — finding the dex file behind each OatDexFile record.
 *
 * A record's dex is either inside the .vdex next to the oat
 * (dex_file_offset != 0), or — the common case for framework code — a
 * classesN.dex entry of the jar/apk named by the record's location, matched
 * by zip CRC32 == the record's checksum.  On a device the location is the
 * real path; in copies (test data, pulled files) the archive sits next to the
 * oat, so the archive is looked for, in order, at:
 *   each caller-given extra path;  <oat dir>/<location base name>;
 *   <oat dir>/../<base>  (boot images: framework/<isa>/boot-x.oat);
 *   <oat dir>/../../<base>  (apps: <pkg>/oat/<isa>/base.odex);
 *   the location itself when absolute;  <oat dir>/<oat stem>.{jar,apk}
 *   (the stem of "system@framework@x.jar@classes.odex" is x.jar, and
 *   boot-x.oat also tries x.jar).
 * Dex files are opened lazily and cached per record. */
#ifndef UPROBESTATS_FORMATS_OAT_DEXFILE_H
#define UPROBESTATS_FORMATS_OAT_DEXFILE_H

#include <stdint.h>

#include "common/err.h"
#include "formats/dex.h"
#include "formats/oat.h"

struct oat_dexset;          /* opaque */

/* oat_path locates the .vdex and the archives; extra (n_extra entries, may
 * be NULL) are archive paths to try first (e.g. a --dex-file option). */
int oat_dexset_new(const struct oat_file *o, const char *oat_path, const char *const *extra,
		   size_t n_extra, struct oat_dexset **out, struct err *err);
void oat_dexset_free(struct oat_dexset *s);

/* The dex of record i, opened on first use.  -ENOENT when it cannot be found
 * (err says where it looked and why each candidate was rejected); other
 * negative codes when it was found but is damaged. */
int oat_dexset_get(struct oat_dexset *s, uint32_t i, const struct dex_file **out,
		   struct err *err);

/* Where record i's dex came from ("x.jar!classes2.dex", "x.vdex@0x30"), or
 * NULL when it has not been opened. */
const char *oat_dexset_source(const struct oat_dexset *s, uint32_t i);

/* The .vdex path derived from an oat path (caller frees), NULL on OOM. */
char *oat_vdex_path(const char *oat_path);

#endif
