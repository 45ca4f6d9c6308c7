/* codecache.h — the one view of the code the tool traces: the files the
 * planners read (pattern matching, Java resolution, oat search, exit sites:
 * code_cache_file) and what is at a PC of a traced process, for the
 * unwinder (stack/unwind.h's lookup), the frames it prints and the kernel
 * walk's table (stack/kwalk.h).  One instance per run, made by the command
 * (cli_code_cache_new) before matching or planning and handed to them and
 * the session, so every file is opened and parsed once for the whole run.
 *
 * Two layers, both kept for the run:
 *   per file (code/codefile.h; keyed by device, inode and mtime, not by path;
 *     a file that cannot be read is cached as a failure too): the ELF, its
 *     oat header, dex files and method list; an ELF's function symbols
 *     (.symtab, .dynsym and .gnu_debugdata's merged and sorted; STT_FUNC and
 *     STT_GNU_IFUNC; the Thumb bit cleared on 32-bit ARM), its CFI (.eh_frame,
 *     .debug_frame, then .gnu_debugdata's .debug_frame; read on first use)
 *     and libart's interpreter ranges; an oat/odex file's compiled methods
 *     sorted by code address, with their CodeInfo (frame info, stack maps),
 *     names and dex line tables decoded on first use; and each method's or
 *     function's exit analysis, by code offset (code_file_exits).
 *   per process: its executable mappings from <proc_dir>/PID/maps
 *     (sys/maps.h), read once, and then as the kernel makes them: the
 *     mapping, exec, fork and exit records of sys/perf_mmap.h that the loop
 *     hands in (code_cache_note) before the records they could explain, each
 *     mapping with the times it was there, so a PC is looked up in the
 *     mappings of the record's time and a process that exited right after
 *     its hit reads as one still running (its files are opened by device and
 *     inode when the mapping is noted: through /proc/PID while it lives, else
 *     a file already open, or the path under a chroot's root already seen).
 *     A process no record speaks of is read again when a PC falls outside
 *     all of its mappings (a library loaded since).  Kept after the process
 *     exits (its records may still be waiting to be drained) until
 *     code_cache_forget_before; at most 1,024 processes and 131,072
 *     mappings, what does not fit counted (code_cache_get_track_stats).  And
 *     the answers already given, so that a repeated PC costs a hash and a
 *     copy.
 *
 * Kinds of code (enum frame_kind): compiled Java methods of oat/odex
 * mappings FRAME_JAVA, with the dex pc of an exact Default or OSR stack map
 * at the PC (ART's rule, art-frames.md §6.5); the JIT code cache
 * ("jit-cache", "jit-code-cache", "jit-zygote-cache" mappings) FRAME_JIT,
 * named and with a CFI row when a symfile of libart's __jit_debug_descriptor
 * covers the PC (code/artdebug.h: read with process_vm_readv, read-only;
 * code in anonymous memory is looked for there too);
 * nterp/mterp and art::interpreter FRAME_INTERPRETED; anonymous or
 * unreadable code FRAME_UNKNOWN with the reason.  Strings it returns live as
 * long as the cache. */
#ifndef UPROBESTATS_CODE_CODECACHE_H
#define UPROBESTATS_CODE_CODECACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "code/code_types.h"
#include "sys/perf_mmap.h"

struct code_cache;

/* proc_dir: NULL for "/proc" (tests point it at a directory of PID/maps). */
struct code_cache *code_cache_new(const char *proc_dir);
void code_cache_free(struct code_cache *c);

/* Reads pid's mappings now, again if they were read before (a process known
 * at attach may have exited by the time its records are drained; its cached
 * mappings then still serve, and a failed read keeps them), and ART's
 * debugger interface when the process maps libart (code/artdebug.h). */
void code_cache_prime(struct code_cache *c, uint32_t pid);

/* What is at pc in pid.  is_return: pc is a return address (symbols, methods
 * and CFI are looked up at pc-1, Java stack maps at pc itself: ART records
 * the return address as the stack map's native pc).  Always fills *out
 * (FRAME_UNKNOWN at worst) and returns 0. */
int code_cache_lookup(struct code_cache *c, uint32_t pid, uint64_t pc, bool is_return,
		      struct code_info *out);
/* The same in the mappings pid had at time_ns (CLOCK_MONOTONIC: a record's
 * bpf_ktime_get_ns()); code_cache_lookup is the latest. */
int code_cache_lookup_at(struct code_cache *c, uint32_t pid, uint64_t time_ns, uint64_t pc,
			 bool is_return, struct code_info *out);

/* Which processes the records are kept for: every one, or pid (its maps read
 * now, its forks followed too). */
void code_cache_follow_all(struct code_cache *c);
void code_cache_follow(struct code_cache *c, uint32_t pid);
/* One record of the kernel's, in time order. */
void code_cache_note(struct code_cache *c, const struct perf_mmap_rec *r);
/* Drops what no record can need any more: mappings that ended before t and
 * processes that exited before t (a process no record speaks of is kept). */
void code_cache_forget_before(struct code_cache *c, uint64_t t);

struct code_cache_track_stats {
	uint64_t mappings;         /* mapping records of followed processes */
	uint64_t execs, forks;
	uint64_t files_unopened;   /* mapped files gone with their process, not found */
	uint64_t mappings_not_kept; /* over the bound (or out of memory) */
	uint64_t procs_forgotten;  /* followed processes dropped for room */
};
void code_cache_get_track_stats(const struct code_cache *c, struct code_cache_track_stats *out);

/* The method an interpreter runs at dex address addr of pid (the value of
 * ART's DEX1 CFI rule): 0 with out's kind FRAME_INTERPRETED, symbol, dex pc
 * and line, from the dex files in ART's __dex_debug_descriptor
 * (code/artdebug.h); -ENOENT when none holds it (no libart, no such dex). */
int code_cache_dex(struct code_cache *c, uint32_t pid, uint64_t addr, struct code_info *out);

/* What reading ART's debugger interfaces did, over every process. */
struct art_debug_stats;
void code_cache_art_stats(const struct code_cache *c, struct art_debug_stats *out);

/* Calls cb for every compiled Java method pid maps now (oat/odex code in
 * its executable mappings): the method's code range in the process and its
 * CodeInfo frame size (0 for a frameless leaf; methods without readable
 * CodeInfo are left out).  Stops at cb's first non-zero return and returns
 * it; else 0. */
int code_cache_java_ranges(struct code_cache *c, uint32_t pid, code_cache_java_fn cb, void *ctx);

/* The per-file entry of path (code/codefile.h), for the planners: opened
 * now if it is not yet.  NULL only when out of memory. */
struct code_file;
struct code_file *code_cache_file(struct code_cache *c, const char *path);

/* The entry of the file mapped at file offset map_off of path (one this
 * process opens, sys/proc_path.h; shown: the maps path): for a zip, the ELF
 * stored in the entry whose data holds map_off (code_file_get_mapped).  NULL
 * only when out of memory. */
struct code_file *code_cache_file_mapped(struct code_cache *c, const char *path,
					 const char *shown, uint64_t map_off);

void code_cache_get_stats(const struct code_cache *c, struct code_cache_stats *out);

#endif
