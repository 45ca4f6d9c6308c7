/* propfile.h — the two binary formats bionic keeps under /dev/__properties__,
 * read from memory and treated as hostile (every offset bounds-checked, every
 * walk bounded).  Little-endian, as on every device we run on.
 *
 * property area ("u:object_r:build_prop:s0", "properties_serial", or the one
 * /dev/__properties__ file before Android 7):
 *   header (128 bytes): bytes_used, serial, magic "PROP", version 0xfc6ed0ab,
 *   reserved; then the data region whose offsets everything below uses.
 *   data+0: the root trie node; data+20: the 92-byte "dirty backup" value.
 *   trie node: namelen, prop, left, right, children (u32 each), name, NUL.
 *     A name is split at '.', each piece is a level; siblings form a binary
 *     tree ordered by (length, bytes).
 *   prop_info: serial (value length << 24 | flags; bit 0 dirty, bit 16 long),
 *     value[92] (or, for long values, a 56-byte legacy message and at +60 the
 *     offset of the value from the prop_info), name, NUL.
 *
 * property_info (Android 8+): which SELinux context, i.e. which area file,
 * holds a property.  Header of six u32 (current version, minimum supported
 * version, size, contexts offset, types offset, root offset); a trie of nodes
 * (entry, children, prefixes, exact matches) whose entries name a context
 * index. */
#ifndef UPROBESTATS_SYS_PROPFILE_H
#define UPROBESTATS_SYS_PROPFILE_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define PROP_VALUE_MAX 92
#define PROP_AREA_MAGIC 0x504f5250u     /* "PROP" */
#define PROP_AREA_VERSION 0xfc6ed0abu
#define PROP_AREA_HEADER_SIZE 128u

/* Value of property name in the area buf (label names it in errors).
 * Returns 0 with the value NUL-terminated in out; -ENOENT when the area does
 * not hold it; -ERANGE when out is too small; -EBADMSG when the area is
 * malformed (err says where); -EAGAIN when the value kept changing while read. */
int prop_area_get(const uint8_t *buf, size_t len, const char *label, const char *name,
		  char *out, size_t size, struct err *err);

/* Context (area file name) of property name in the property_info file buf.
 * Returns 0 with *ctx pointing at a NUL-terminated string inside buf;
 * -ENOENT when no rule matches; -EBADMSG when malformed.  A context that
 * could escape the directory ('/', "." or "..") counts as malformed. */
int prop_info_context(const uint8_t *buf, size_t len, const char *label, const char *name,
		      const char **ctx, struct err *err);

#endif
