/* oat.h — the oat/odex container: ELF symbols, OatHeader, key/value store and
 * OatDexFile records, for oat versions 170..265 (Android 10-16).
 *
 * The version number alone is not trusted (mainline ART branches numbered
 * 236/238 lack fields AOSP master added at 232/233): the header and record
 * layouts are chosen by checking candidate layouts against the data, the
 * version's own layout first, and oat_info() says which one was used.
 * OatClass records and method headers live in oat_code.h. */
#ifndef UPROBESTATS_FORMATS_OAT_H
#define UPROBESTATS_FORMATS_OAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "formats/elf.h"

struct oat_file;            /* opaque */

struct oat_info {
	unsigned version;           /* the 3 digits after "oat\n" */
	uint16_t e_machine;         /* EM_* of the ELF */
	const char *isa;            /* "arm64", "arm", "x86", "x86_64", "riscv64" */
	uint32_t isa_enum;          /* OatHeader instruction_set (numbering changed at 229) */
	uint32_t oat_checksum;
	uint32_t dex_count, oat_dex_files_offset, executable_offset, kv_size, header_size;
	uint64_t oatdata_vaddr;     /* st_value of oatdata */
	uint64_t oatdata_off;       /* its file offset, via the program headers */
	uint64_t oat_size;          /* oatlastword + 4 - oatdata: the whole oat region */
	bool has_oatexec;           /* false when nothing is compiled */
	/* Human-readable layout choices, e.g. "OatHeader v222/224-254 layout (68 bytes)". */
	char header_layout[96];
	char record_layout[96];
};

/* One OatDexFile record. */
struct oat_dex {
	const char *location;       /* NUL-terminated copy */
	uint32_t checksum;          /* zip CRC32 of classesN.dex (or the dex adler32) */
	uint32_t dex_file_offset;   /* into the .vdex; 0 = dex lives in the jar/apk */
	uint32_t class_offsets_offset;
	bool has_magic, has_sha1;
	char magic[8];
};

/* Maps the file.  Errors name the file and the first inconsistency found. */
int oat_open(const char *path, struct oat_file **out, struct err *err);
/* Over a caller-owned buffer. */
int oat_open_mem(const char *name, const void *buf, size_t len, struct oat_file **out,
		 struct err *err);
/* Over an ELF the caller opened: on success the oat file owns it (oat_close
 * closes it); on failure it stays the caller's.  One open of the file for
 * readers that look at its symbols first (code/codecache.h). */
int oat_open_elf(struct elf_file *elf, struct oat_file **out, struct err *err);
void oat_close(struct oat_file *o);

const char *oat_name(const struct oat_file *o);
const struct oat_info *oat_info(const struct oat_file *o);
const struct elf_file *oat_elf(const struct oat_file *o);
/* The oat region [oatdata, oatdata + oat_size) within the file. */
const uint8_t *oat_region(const struct oat_file *o, uint64_t *size);

uint32_t oat_dex_count(const struct oat_file *o);
const struct oat_dex *oat_dex_at(const struct oat_file *o, uint32_t i);

/* A key/value store entry ("compiler-filter", "compilation-reason", ...), or NULL. */
const char *oat_kv_get(const struct oat_file *o, const char *key);

/* "arm64", "arm", "x86", "x86_64", "riscv64" for an ELF e_machine, or NULL. */
const char *oat_isa_name(uint16_t e_machine);

/* Number of class_offsets entries of dex i when its dex file is not at hand:
 * the array runs until the first OatClass record it points at. */
uint32_t oat_guess_class_count(const struct oat_file *o, uint32_t dex_i);

#endif
