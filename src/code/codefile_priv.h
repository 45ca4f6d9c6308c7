/* codefile_priv.h — what the two halves of the per-file layer share:
 * codefile.c (each file's parts, read on first use: symbols, oat methods,
 * CFI, exit memo) and codefile_set.c (the set of files: finding, opening and
 * keying each, plain or stored in a zip).  Not for other modules. */
#ifndef UPROBESTATS_CODE_CODEFILE_PRIV_H
#define UPROBESTATS_CODE_CODEFILE_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "code/codefile.h"
#include "formats/cfi.h"
#include "formats/codeinfo.h"
#include "formats/dex.h"
#include "formats/minidebug.h"
#include "formats/oat_methods.h"

struct zip_archive;

struct sym {
	uint64_t start, size;
	const char *name;             /* points into the ELF or the minidebug buffer */
};

struct range {
	uint64_t start, end;
};

/* One compiled Java method; CodeInfo, name and dex method on first use. */
struct jmethod {
	uint64_t start;               /* code vaddr */
	uint32_t size;
	uint32_t list_i;              /* in methods.v */
	bool named, frame_decoded, frame_ok, has_dm;
	const struct dex_file *dex;   /* for line numbers, when has_dm */
	struct dex_method dm;
	struct art_frame_info fi;
	struct art_stack_map *rows;
	uint32_t n_rows;
	char *name;
};

/* One memoized exit analysis (code_file_exits), in a hash chain. */
struct exits_memo {
	struct exits_memo *next;
	uint64_t off, size;
	bool java;
	struct code_exits x;
};

#define EXITS_BUCKETS 256u

struct code_file {
	struct code_files *fs;        /* whose counters */
	char *path;
	dev_t dev;
	ino_t ino;
	int64_t mtime_ns;
	bool bad;                     /* could not be read */
	char why[160];
	int open_rc;                  /* elf_open's error when bad */
	char *open_msg;
	struct elf_file *own_elf;     /* NULL when the oat file owns it */
	const struct elf_file *elf;
	bool is_oat;                  /* has an oatdata symbol */
	bool md_tried, syms_tried, oat_tried, dexes_tried, methods_tried;
	int oat_rc, dexes_rc, methods_rc;
	struct err *oat_err;          /* why oat, dexes or methods failed (the first) */
	struct minidebug md;          /* .gnu_debugdata's ELF (md.elf NULL: none) */
	bool cfi_tried, has_cfi;      /* has_cfi: CFI sections exist (maybe unreadable) */
	struct cfi_table *cfi, *md_cfi;
	struct sym *syms;
	size_t n_syms;
	struct range interp[4];
	size_t n_interp;
	struct oat_file *oat;
	struct oat_dexset *dexes;
	struct oat_method_list methods;
	struct jmethod *jm;           /* sorted by start */
	size_t n_jm;
	struct exits_memo **exits;    /* EXITS_BUCKETS chains by offset; on first use */
	/* An ELF stored in a zip (an APK's library, mapped from it): the archive
	 * kept open (the ELF's bytes are its), the entry's data offset and size
	 * in it, the entry's name.  Every offset of this file counts from base. */
	struct zip_archive *zip;
	uint64_t base, member_size;
	char *member;
	char *asked;                  /* the entry as named, when that was its file name
					 * only ("base.apk!libfoo.so"), else NULL */
	struct code_file *next;
};

struct code_files {
	struct code_file *head;
	struct code_cache_stats st;
};

/* Frees one file's entry and everything read from it (codefile.c). */
void code_file_release(struct code_file *f);

#endif
