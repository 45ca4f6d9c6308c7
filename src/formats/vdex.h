/* vdex.h — the .vdex file next to an oat/odex: header, checksums, dex section.
 *
 * Owns the two layouts of Android 10-16:
 *   021 (verifier deps) + 002/000 (dex section), Android 10-11: a fixed header,
 *       D location checksums, then (002 only) a DexSectionHeader and each dex
 *       preceded by a 4-byte quickening-table offset, then shared compact-dex
 *       data;
 *   027, Android 12+: a section table {kind, offset, size} (0 checksums,
 *       1 dex files, 2 verifier deps, 3 type lookup tables).
 * Most vdex files carry no dex at all (the dex stays in the jar/apk); the
 * OatDexFile record's dex_file_offset says where a dex is when there is one. */
#ifndef UPROBESTATS_FORMATS_VDEX_H
#define UPROBESTATS_FORMATS_VDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "formats/dex.h"

struct vdex_file;           /* opaque */

int vdex_open(const char *path, struct vdex_file **out, struct err *err);
/* buf must outlive the vdex. */
int vdex_open_mem(const char *name, const void *buf, size_t len, struct vdex_file **out,
		  struct err *err);
void vdex_close(struct vdex_file *v);

const char *vdex_name(const struct vdex_file *v);
int vdex_version(const struct vdex_file *v);          /* 21 or 27 */
bool vdex_invalidated(const struct vdex_file *v);     /* "wdex" magic */
uint32_t vdex_dex_count(const struct vdex_file *v);   /* from the checksum table */
uint32_t vdex_checksum(const struct vdex_file *v, uint32_t i);
bool vdex_has_dex_section(const struct vdex_file *v);

/* The dex whose header is at dex_file_offset (an OatDexFile field, relative
 * to the vdex start).  It must lie in the dex section.  Close with dex_close. */
int vdex_open_dex(const struct vdex_file *v, uint32_t dex_file_offset, struct dex_file **out,
		  struct err *err);

/* The header offsets of the dex files in the dex section, in order: set
 * *cursor = 0 first; returns 1 with *off set, 0 at the end, negative on damage. */
int vdex_next_dex(const struct vdex_file *v, uint64_t *cursor, uint32_t *off, struct err *err);

#endif
