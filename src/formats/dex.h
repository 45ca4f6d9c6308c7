/* dex.h — a read-only, hostile-input-safe view of one dex file.
 *
 * Owns: the dex header (standard 035..041 and compact "cdex001"), the id
 * tables (strings, types, protos, methods, class defs), class_data iteration
 * (direct methods first, then virtual: the OatClass method index), lookups
 * by descriptor (binary search on the sorted string and type ids), method
 * matching against descriptors, and Java-style pretty printing.
 *
 * Offsets and their bases, which differ by format:
 *   standard 035-040: everything relative to the dex header;
 *   041 container:    everything relative to the container start
 *                     (header - header_offset);
 *   compact dex:      id tables relative to the header, data (strings,
 *                     class data, type lists) relative to header + data_off,
 *                     which in a vdex points at shared data after all dex files.
 * So a dex is opened over its containing buffer (the whole vdex, or a zip
 * entry) at a header offset, and every read is checked against that buffer. */
#ifndef UPROBESTATS_FORMATS_DEX_H
#define UPROBESTATS_FORMATS_DEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define DEX_ACC_PUBLIC 0x1
#define DEX_ACC_PRIVATE 0x2
#define DEX_ACC_STATIC 0x8
#define DEX_ACC_BRIDGE 0x40
#define DEX_ACC_VARARGS 0x80
#define DEX_ACC_NATIVE 0x100
#define DEX_ACC_INTERFACE 0x200
#define DEX_ACC_ABSTRACT 0x400
#define DEX_ACC_SYNTHETIC 0x1000
#define DEX_ACC_CONSTRUCTOR 0x10000
#define DEX_NO_INDEX 0xffffffffu

struct dex_file;            /* opaque */

struct dex_class_def {
	uint32_t class_idx, access_flags, superclass_idx, class_data_off;
	uint32_t source_file_idx;   /* string index, DEX_NO_INDEX when none */
};

struct dex_method_id {
	uint32_t class_idx, proto_idx, name_idx;
};

struct dex_proto {
	uint32_t shorty_idx, return_type_idx;
	uint32_t n_params;
	uint64_t params_at;     /* absolute offset of the first u16 type index */
};

/* One method of a class's class_data, in OatClass order. */
struct dex_method {
	uint32_t method_idx, access_flags, code_off;
	uint32_t index_in_class;  /* direct methods first, then virtual */
	bool is_direct;
};

struct dex_class_iter {
	const struct dex_file *d;
	uint64_t pos;
	uint32_t n_direct, n_virtual, i, midx;
};

/* Opens the dex whose header is at hdr_off in base[0..base_len).  The buffer
 * must outlive the dex.  Errors name the dex and the offending field. */
int dex_open(const char *name, const uint8_t *base, size_t base_len, uint64_t hdr_off,
	     struct dex_file **out, struct err *err);
void dex_close(struct dex_file *d);

const char *dex_name(const struct dex_file *d);
bool dex_is_compact(const struct dex_file *d);
const char *dex_magic(const struct dex_file *d);   /* "dex\n039", "cdex001", ... (7 chars) */
uint32_t dex_checksum(const struct dex_file *d);   /* header adler32 */
uint32_t dex_file_size(const struct dex_file *d);
uint32_t dex_class_def_count(const struct dex_file *d);
uint32_t dex_method_id_count(const struct dex_file *d);

/* NUL-terminated MUTF-8, or NULL when idx or the string is invalid. */
const char *dex_string(const struct dex_file *d, uint32_t idx);
const char *dex_type_descriptor(const struct dex_file *d, uint32_t type_idx);

/* Binary searches (string ids are sorted by UTF-16 code units, type ids by
 * string index).  Accepts UTF-8 or MUTF-8 input.  0 or -ENOENT. */
int dex_find_string(const struct dex_file *d, const char *s, uint32_t *idx);
int dex_find_type(const struct dex_file *d, const char *descriptor, uint32_t *type_idx);
/* The class_def defining descriptor ("Lcom/foo/Bar;"); 0 or -ENOENT. */
int dex_find_class_def(const struct dex_file *d, const char *descriptor, uint32_t *cdi);

int dex_class_def_at(const struct dex_file *d, uint32_t i, struct dex_class_def *out);
int dex_method_id_at(const struct dex_file *d, uint32_t idx, struct dex_method_id *out);
int dex_proto_at(const struct dex_file *d, uint32_t idx, struct dex_proto *out);
/* Type index of parameter i; DEX_NO_INDEX when out of range. */
uint32_t dex_proto_param(const struct dex_file *d, const struct dex_proto *p, uint32_t i);

/* Class data iteration.  init leaves n_direct/n_virtual set (0/0 for a class
 * without class_data).  next returns 1 with *m filled, 0 at the end, or
 * -EINVAL with err filled when the class data is malformed. */
int dex_class_iter_init(const struct dex_file *d, uint32_t cdi, struct dex_class_iter *it,
			struct err *err);
int dex_class_iter_next(struct dex_class_iter *it, struct dex_method *m, struct err *err);

/* True when method_idx is named name, returns ret (NULL = any return type)
 * and takes exactly params[0..n) (descriptors). */
bool dex_method_matches(const struct dex_file *d, uint32_t method_idx, const char *name,
			const char *ret, const char *const *params, size_t n);

/* The first method of class cdi that dex_method_matches(); 0 with *out
 * filled (index_in_class is the OatClass index), -ENOENT, or -EINVAL when the
 * class data is damaged. */
int dex_find_method(const struct dex_file *d, uint32_t cdi, const char *name, const char *ret,
		    const char *const *params, size_t n, struct dex_method *out);

/* "void com.foo.Bar$Baz.qux(int[], java.lang.String)", as ART's PrettyMethod.
 * Returns the length it needed (snprintf semantics) or -EINVAL. */
int dex_pretty_method(const struct dex_file *d, uint32_t method_idx, char *buf, size_t size);
/* "[Ljava/lang/String;" -> "java.lang.String[]" (snprintf semantics). */
int dex_pretty_descriptor(const char *desc, char *buf, size_t size);

/* Raw layout for the sibling readers in formats/ (dex_debug.c): the buffer and
 * its read limit, the header offset and the base of data offsets (dex.h's
 * comment above says which base applies to which layout). */
struct dex_raw {
	const uint8_t *b;
	size_t lim;
	uint64_t hdr, data_base;
	bool compact;
};
void dex_raw(const struct dex_file *d, struct dex_raw *out);

#endif
