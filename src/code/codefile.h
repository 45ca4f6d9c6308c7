/* codefile.h — the per-file layer of the code cache (code/codecache.h):
 * one entry per file (device, inode, mtime), opened once, what the lookups
 * need from it decoded on first use, the exit analyses memoized.  Used by
 * codecache.c and the planners holding a code_cache_file() entry. */
#ifndef UPROBESTATS_CODE_CODEFILE_H
#define UPROBESTATS_CODE_CODEFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "code/code_types.h"
#include "common/err.h"
#include "formats/exit_sites.h"

struct elf_file;
struct oat_file;
struct oat_dexset;
struct oat_method_list;

struct code_file;
struct code_files;

struct code_files *code_files_new(void);
void code_files_free(struct code_files *fs);

/* The entry for the file at path (which the messages call shown: the maps path when
 * path is the process's view of it, /proc/PID/root/... or /proc/PID/map_files/...),
 * or NULL when out of memory.  A file that cannot be read gets an entry too
 * (code_file_why() says why), tried once. */
struct code_file *code_file_get(struct code_files *fs, const char *path, const char *shown);

/* The entry of the file mapped at file offset map_off of path (shown: as
 * code_file_get): path's own when it is an ELF (or anything but a zip), else,
 * for a zip (an APK a library is mapped from), the ELF stored in the entry
 * whose data holds map_off, as code_file_get("PATH!/ENTRY") gives it.  A
 * mapping offset that is no stored entry's data gets a failed entry saying
 * what is there.  NULL when out of memory. */
struct code_file *code_file_get_mapped(struct code_files *fs, const char *path, const char *shown,
				       uint64_t map_off);

/* An ELF inside a zip: "PATH!/ENTRY" (common/zip_path.h) in code_file_get.
 * Every offset the code_file_* functions take or give counts from the ELF's
 * start, as for a plain file; the file offset in the archive (where a uprobe
 * goes, what the maps show) is code_file_base() plus that.  base is 0 and
 * member NULL for a plain file. */
uint64_t code_file_base(const struct code_file *f);
const char *code_file_member(const struct code_file *f);
/* Whether archive offset off is in the member's entry data (always true for
 * a plain file). */
bool code_file_holds(const struct code_file *f, uint64_t off);

/* A readable file already opened with this device and inode (any mtime: the
 * newest opened; never an ELF inside a zip), or NULL. */
struct code_file *code_files_find(struct code_files *fs, dev_t dev, uint64_t ino);
/* The path it was opened at. */
const char *code_file_path(const struct code_file *f);

/* NULL when the file is readable, else "unknown in SHOWN". */
const char *code_file_why(const struct code_file *f);

/* The file as an ELF; NULL with err set as elf_open() said when it is not
 * readable as one. */
const struct elf_file *code_file_elf(const struct code_file *f, struct err *err);
/* Its .gnu_debugdata ELF (formats/minidebug.h); NULL when none decodes. */
const struct elf_file *code_file_minidebug(struct code_file *f);
/* Whether the ELF has an oatdata symbol (ART code). */
bool code_file_is_oat(const struct code_file *f);
/* size bytes at file offset off, pointing into the mapped file; -EIO when the
 * file is shorter. */
int code_file_bytes(const struct code_file *f, uint64_t off, uint64_t size, const uint8_t **out,
		    struct err *err);
/* The oat layers, each parsed once (a failure is kept and told again, with
 * err as the reader set it): the oat file (formats/oat.h), its dex files
 * (oat_dexset_new without extra archives) and every compiled method
 * (oat_list_methods). */
int code_file_oat(struct code_file *f, const struct oat_file **o, struct err *err);
int code_file_dexset(struct code_file *f, struct oat_dexset **ds, struct err *err);
int code_file_methods(struct code_file *f, const struct oat_method_list **l, struct err *err);

/* A file offset -> ELF vaddr through the PT_LOAD headers. */
bool code_file_vaddr(const struct code_file *f, uint64_t off, uint64_t *vaddr);

/* The size of the sized function symbol (the larger of two names) that
 * starts exactly at file offset off, in an executable PT_LOAD segment it
 * fits in; 0 when none does. */
uint64_t code_file_function_at(struct code_file *f, uint64_t off);

/* Fills out's kind and its Java or native fields for code at vaddr (where to
 * look: pc-1 for a return address) whose PC is at pc_vaddr. */
void code_file_describe(struct code_file *f, uint64_t vaddr, uint64_t pc_vaddr,
			struct code_info *out);

/* Every compiled method of f mapped by [start, end) at file offset off: its
 * process range and frame size (see code_cache_java_ranges). */
int code_file_java_ranges(struct code_file *f, uint64_t start, uint64_t end, uint64_t off,
			  code_cache_java_fn cb, void *ctx);

/* One exit analysis (plan/exits.c's) of the code at a file offset, as the
 * cache keeps it for the run: the proven exit sites, or why there are none. */
struct code_exits {
	int rc;                  /* 0, or the refusal's negative errno */
	const char *why;         /* rc < 0: the refusal, one line */
	uint64_t base;           /* the file offset the sites count from */
	struct exit_sites sites;
};

/* The analysis itself: the sites (offsets from *base), or a negative errno
 * with err set. */
typedef int (*code_exits_fn)(void *ctx, struct code_file *f, uint64_t *base,
			     struct exit_sites *sites, struct err *err);

/* The exit analysis of the code at file offset off (size bytes; java: an
 * ART method), memoized: analyse runs on the first ask only, its answer (the
 * sites or the refusal) kept for the run, so each method's exits are worked
 * out once however many commands, patterns and plan steps ask.  NULL only
 * when out of memory. */
const struct code_exits *code_file_exits(struct code_file *f, uint64_t off, uint64_t size,
					 bool java, code_exits_fn analyse, void *ctx);

void code_files_stats(const struct code_files *fs, struct code_cache_stats *out);

#endif
