/* zip.h — a minimal, hostile-input-safe zip (jar/apk) reader.
 *
 * Owns: finding the end-of-central-directory record, walking the central
 * directory, and reading one entry's bytes (stored: a view into the archive;
 * deflated: inflated with zlib into a malloc'ed buffer and checked against the
 * central directory's CRC32 and size).  Enough to find `classesN.dex` next to
 * an odex and to match it by the CRC32 an OatDexFile record carries, and the
 * stored entry a process maps straight from an APK (bionic loads a library
 * stored page-aligned in base.apk from its data offset): by name or by an
 * offset inside its data, the local header checked against the central one,
 * no entry overlapping another, names relative (common/zip_path.h).
 * ZIP64 archives (the ZIP64 end record and the entries' extra fields) too.
 * Not supported (clear errors): multi-disk, encryption, methods other than 0 and 8. */
#ifndef UPROBESTATS_FORMATS_ZIP_H
#define UPROBESTATS_FORMATS_ZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct zip_archive;         /* opaque */

struct zip_entry {
	const char *name;       /* NOT NUL-terminated: name_len bytes */
	size_t name_len;
	uint32_t crc32;
	uint16_t method;        /* 0 stored, 8 deflate */
	uint16_t flags;
	uint64_t comp_size, uncomp_size, local_off;
	uint64_t cd_pos;        /* archive offset of its central directory record */
};

int zip_open(const char *path, struct zip_archive **out, struct err *err);
/* buf must outlive the archive. */
int zip_open_mem(const char *name, const void *buf, size_t len, struct zip_archive **out,
		 struct err *err);
void zip_close(struct zip_archive *z);
const char *zip_name(const struct zip_archive *z);
size_t zip_entry_count(const struct zip_archive *z);

/* Iterate: set *cursor = 0 first; returns 1 with *out filled, 0 at the end,
 * or a negative code with err filled when the central directory is damaged. */
int zip_next(const struct zip_archive *z, uint64_t *cursor, struct zip_entry *out,
	     struct err *err);

/* Exact-name lookup; 0, -ENOENT, or another negative code (damage). */
int zip_find(const struct zip_archive *z, const char *name, struct zip_entry *out,
	     struct err *err);

/* The entry's uncompressed bytes.  *owned is NULL when *data points into the
 * archive (stored) and otherwise a buffer the caller frees.  max_size bounds
 * the uncompressed size (0 = 1 GiB). */
int zip_read(const struct zip_archive *z, const struct zip_entry *e, size_t max_size,
	     const uint8_t **data, size_t *len, void **owned, struct err *err);

/* The whole archive (for an entry's stored bytes at its data offset). */
const uint8_t *zip_bytes(const struct zip_archive *z, size_t *size);

/* A stored entry's data offset in the archive: its name relative and safe, the
 * local header there and naming it, method 0 in both headers, equal sizes, the
 * data inside the file and apart from the central directory.  -ENOTSUP for a
 * compressed or encrypted entry, -EINVAL for damage; err names the archive and
 * the offset. */
int zip_entry_data(const struct zip_archive *z, const struct zip_entry *e, uint64_t *data_off,
		   struct err *err);

/* The stored entry of that name, checked as zip_entry_data and against every
 * other entry (none overlaps it).  A name without '/' that no entry has is
 * also a file name, as tombstones name a library mapped from an APK
 * ("base.apk!libfoo.so"): the one entry whose last component it is
 * ("lib/arm64-v8a/libfoo.so").  -ENOENT "ARCHIVE: no entry NAME", or, when
 * several entries have that file name, the error lists them. */
int zip_stored_entry(const struct zip_archive *z, const char *name, struct zip_entry *out,
		     uint64_t *data_off, struct err *err);

/* The stored entry whose data holds archive offset off (a mapping's file
 * offset), checked as zip_stored_entry.  -ENOENT with what is at off (a local
 * header, the central directory, the end of the file, no entry's data). */
int zip_entry_holding(const struct zip_archive *z, uint64_t off, struct zip_entry *out,
		      uint64_t *data_off, struct err *err);

#endif
