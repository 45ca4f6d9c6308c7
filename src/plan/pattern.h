/* pattern.h — trace patterns: what `trace`, `methods --match` and `resolve`
 * accept instead of a config, parsed once and matched against oat/odex files
 * (Java) or ELF files (native).  Owns the pattern language, the matching and
 * the "left out and why" classification; plan building is the caller's.
 *
 * Syntax (docs/patterns.md has the full rules):
 *   Java:    [FILE:]CLASS.METHOD[(PARAM, ...)]
 *              FILE ends in .oat, .odex, .vdex, .jar or .apk (else the prefix is
 *              a native library); without FILE the files come from the target's
 *              maps, then the boot image and framework (oat_search's order).
 *   Native:  LIB_OR_PATH:SYMBOL
 *              LIB_OR_PATH: an absolute path, or a bare name ("libc.so") looked
 *              up in the target's maps (pattern_match_pid) or the system
 *              library directories (pattern_match_file with a bare name).
 *   The FILE/LIB part ends at the first ':' that is not part of "::".
 * Globs (in class, method, parameter and symbol parts):
 *   *      any run of characters except '.'  (Java: stays inside one package
 *          segment or class name; '$' is an ordinary character, so "Outer*"
 *          matches "Outer$Inner").  In native symbols '*' matches anything.
 *   **     any run of characters including '.' (Java).
 *   ?      one character (not '.' in Java); one code point of UTF-8 text.
 *   [abc] [a-z] [!a-z]  one character of (not of) the set ("[]" is literal: the
 *          brackets of an array type "int[]"; a ']' in a set is written "\]").
 *   \c     the character c literally.
 *   A CLASS glob without '.' is matched against the class's simple name (the
 *   part after the last '.', "$" parts included): "*Activity", "ActivityThread".
 *   With a '.', against the whole dotted name ("com.android.server.am.*").
 *   Parameter globs follow the same rule against Java type names ("int",
 *   "java.lang.String", "String", "byte[]"); a parameter "**" matches any number
 *   (zero or more) of parameters; no "(...)" matches every overload; "()" only
 *   methods without parameters.  No return type is written.
 *   Native symbols are matched against the raw (mangled) name, the demangled
 *   name (resolve/demangle.h, c++filt spelling) and the demangled qualified
 *   name alone, without return type and parameters: "android::Foo::bar" and
 *   "*Foo::bar(int)" both match _ZN7android3Foo3barEi.  A match's name is the
 *   demangled form when demangling succeeds, raw_name always the ELF symbol.
 *
 * For `trace` (plan building is the caller's): for each PATTERN, pattern_parse
 * (bad: print err, exit 2); pattern_match_pid for each -p PID (or
 * pattern_match_file / pattern_match_search) into ONE zeroed pattern_matches
 * with max = --max-probes (a second pattern's match of an offset already
 * probed is not added twice); if guardrail_active(): pattern_matches_guardrail;
 * if out.n == 0 for a pattern: pattern_explain_no_match -> exit 4.  Report
 * out.files[] (matched / ok per file) and out.by_reason[] before attaching;
 * probe exactly the v[i] with left_out == MATCH_OK: path + file_offset,
 * is_java / is_static / param_descs / ret_desc for argument registers (as
 * java_resolution gives them for configs), name for labels.  `methods --match`
 * (src/cli/cmd_match.c) is a worked example of the calls and of the summary.
 *
 * Lifetime: everything in struct pattern_matches is owned by it
 * (pattern_matches_free).  Nothing here prints; errors are one line in err. */
#ifndef UPROBESTATS_PLAN_PATTERN_H
#define UPROBESTATS_PLAN_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "resolve/oat_search.h"

#define PATTERN_DEFAULT_MAX 20000u

struct code_cache;

struct trace_pattern;               /* parsed; opaque */

/* -EINVAL with one line ("pattern 'X': unclosed '[' at column 7") for a bad
 * pattern; the caller exits 2. */
int pattern_parse(const char *text, struct trace_pattern **out, struct err *err);
void pattern_free(struct trace_pattern *p);
bool pattern_is_java(const struct trace_pattern *p);
const char *pattern_text(const struct trace_pattern *p);
/* The FILE: / LIB_OR_PATH: part, or NULL. */
const char *pattern_file(const struct trace_pattern *p);

/* Glob matching alone (tests, and callers with their own names).  java: '*'
 * and '?' stop at '.'. */
bool pattern_glob_match(const char *glob, const char *name, bool java);

enum match_left_out {
	MATCH_OK = 0,               /* probe it */
	MATCH_NOT_COMPILED,         /* Java: no AOT code (runs interpreted or JIT) */
	MATCH_SHARED_CODE,          /* code shared with a method outside the pattern;
				     * left_out_detail lists the group */
	MATCH_SAME_CODE,            /* same code as an earlier MATCH_OK match (both in the
				     * pattern): one probe fires for both; detail names it */
	MATCH_ABSTRACT_OR_NATIVE,   /* Java: abstract or native method */
	MATCH_UNPROBEABLE,          /* arm32 Thumb code; a GNU ifunc (the symbol is the
				     * resolver, not the function); detail says which */
	MATCH_GUARDRAIL,            /* refused by the user-build allowlist */
	MATCH_NO_EXITS,             /* trace --ret: returns not provable (set by trace) */
	MATCH_OVER_MAX,             /* beyond max (in match order) */
	MATCH_N_REASONS
};
const char *match_left_out_name(enum match_left_out r);   /* "not compiled", ... */

struct pattern_match {
	char *path;                 /* file the code is in */
	uint64_t file_offset;       /* entry (uprobe offset); 0 when left out w/o code */
	uint64_t code_size;         /* 0 when unknown */
	char *name;                 /* Java: signature as `methods` prints it
				     * ("void a.B.c(int)"); native: demangled or raw name */
	char *raw_name;             /* native: symbol as in the ELF; Java: NULL */
	bool is_java, is_static;
	uint32_t access_flags;      /* Java: dex ACC_* */
	char isa[16];               /* Java: oat ISA ("arm64", "x86_64", ...); native: "" */
	uint16_t e_machine;         /* EM_* of the file */
	/* Java, as java_resolution provides them for configs: */
	char *ret_desc;             /* "V", "Ljava/lang/String;" */
	char **param_descs;         /* n_params descriptors */
	uint32_t n_params;
	uint32_t dex_method_idx;
	char *source_file;          /* Java: the class's source file ("Foo.java"), or NULL */
	enum match_left_out left_out;
	char *left_out_detail;      /* NULL or e.g. "shares code with: void a.B.d()" */
	uint64_t dev, ino;          /* the file's identity (two paths of one file are one) */
};

struct pattern_file_count {
	char *path;
	size_t matched;             /* all matches in the file, left out included */
	size_t ok;
};

struct pattern_matches {
	size_t n, cap;
	struct pattern_match *v;    /* in file order, then dex/class/method order */
	size_t n_files, cap_files;
	struct pattern_file_count *files;   /* files with at least one match */
	size_t by_reason[MATCH_N_REASONS];
	size_t n_searched;          /* files looked into */
	char **searched_paths;      /* their paths */
	size_t cap_searched;
	char searched[1024];        /* their names, comma-separated (truncated), for errors */
	size_t n_found;             /* every match found, a repeat of one already listed too */
	struct pattern_index *index;   /* file + offset (+ name) -> match, for repeats */
	/* The command's code cache (code/codecache.h; required, not owned),
	 * set by the caller before matching so that the plan and the session
	 * read each file once. */
	struct code_cache *code;
};

/* Matches against one file: an oat/odex for a Java pattern, an ELF for a native
 * one (path may be NULL: then the pattern's own FILE part is used).  max == 0
 * means PATTERN_DEFAULT_MAX; matches beyond it are kept with MATCH_OVER_MAX.
 * Appends to out (zero it first), so several patterns/files accumulate.  One
 * probe per call whatever the patterns and symbol tables say: a name already
 * listed at the same file (device/inode) and offset is not listed again (the
 * symbol in .dynsym and .symtab; a method two patterns match), and another
 * name there is left out as MATCH_SAME_CODE ("alias of X").  n_found counts
 * the repeats too (a pattern matched something even when all was listed).
 * 0 even when nothing matched (check out->n); negative on unreadable files
 * (whatever the kind: missing, not regular, empty, not ELF/oat, truncated),
 * -EDESTADDRREQ when neither path nor the pattern names a file (usage). */
int pattern_match_file(const struct trace_pattern *p, const char *path, size_t max,
		       struct pattern_matches *out, struct err *err);
/* Against what pid maps: Java without FILE: every oat/odex of its maps, then
 * the default roots (oat_search order); native: the library in its maps. */
int pattern_match_pid(const struct trace_pattern *p, int pid, size_t max,
		      struct pattern_matches *out, struct err *err);
/* The same with the files under root (a chroot the traced program will run
 * in: -c 'chroot ROOT …'): a pattern's absolute FILE is ROOT/FILE, a bare
 * library name is looked for in ROOT's library directories.  root NULL or
 * "": pattern_match_pid. */
int pattern_match_rooted(const struct trace_pattern *p, int pid, const char *root, size_t max,
			 struct pattern_matches *out, struct err *err);
/* A bare library name ("libc.so") in the system library directories, or
 * under root's (root NULL or "": this system's).  0, or -ENOENT with e set. */
int pattern_library_path(const char *root, const char *name, char *buf, size_t size,
			 struct err *e);
/* The same with full search options (roots, maps_path, isa, ...; tests). */
int pattern_match_search(const struct trace_pattern *p, const struct oat_search_opts *o,
			 size_t max, struct pattern_matches *out, struct err *err);
void pattern_matches_free(struct pattern_matches *m);

/* Marks every MATCH_OK Java match the allowlist refuses (guardrail_allows with
 * the list, as enum guardrail_list) as MATCH_GUARDRAIL, native ones too.
 * Call only when guardrail_active(). */
void pattern_matches_guardrail(struct pattern_matches *m, int guardrail_list);

/* When nothing matched: -ENOENT with one line naming the pattern, the files
 * searched and up to 5 nearest existing names (edit distance), e.g.
 *   "pattern 'a.B.strat*' matched nothing in boot.oat, x.odex; nearest: a.B.start,
 *    a.B.stop".  Reads the files named in m->searched through m->code. */
int pattern_explain_no_match(const struct trace_pattern *p, const struct pattern_matches *m,
			     struct err *err);

/* resolve: a pattern that must name exactly one method.  -ENOENT (nothing,
 * explained as above), -EINVAL "ambiguous: N methods match: sig1; sig2; ..."
 * (candidates listed), else 0 with *idx the index of the single MATCH_OK match. */
int pattern_single(const struct trace_pattern *p, const struct pattern_matches *m, size_t *idx,
		   struct err *err);

#endif
