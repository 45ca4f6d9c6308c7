/* pattern_impl.h — internals shared by pattern.c (parsing, globs) and
 * pattern_match.c (matching files); not for other modules. */
#ifndef UPROBESTATS_PLAN_PATTERN_IMPL_H
#define UPROBESTATS_PLAN_PATTERN_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

enum glob_kind { GT_LIT, GT_ANY, GT_STAR, GT_DSTAR, GT_SET };

struct glob_tok {
	enum glob_kind kind;
	uint32_t cp;                /* GT_LIT */
	const char *set;            /* GT_SET: the text between '[' (and '!') and ']' */
	size_t set_len;
	bool negate;
};

struct glob {
	struct glob_tok *tok;
	size_t n;
	bool java;                  /* '*', '?' and sets do not match '.' */
	bool has_wild;
	bool simple;                /* Java: no '.', matched against the simple name */
	bool any_params;            /* a parameter glob "**" */
};

struct trace_pattern {
	char *text;
	char *file;                 /* FILE / LIB part or NULL */
	bool java;
	struct glob cls, method;    /* Java */
	char *cls_text, *method_text;
	bool params_given;
	struct glob *params;
	size_t n_params;
	struct glob sym;            /* native */
};

/* col0: the column of s[0] in the whole pattern (0-based), for messages. */
int glob_compile(const char *what, const char *s, size_t n, size_t col0, bool java,
		 struct glob *g, struct err *err);
void glob_free(struct glob *g);
bool glob_match(const struct glob *g, const char *name, size_t len);
uint32_t pat_cp(const char *s, size_t n, size_t *len);

struct pattern_matches;
/* A bare library name ("libc.so", "libc") to a path: pid > 0: the file of that
 * name the process maps, or the entry of that name in a zip it maps a library
 * from ("MAPS_PATH!/lib/x86_64/libfoo.so", code: the command's cache); else
 * the system library directories. */
struct code_cache;
int pattern_find_library(const char *proc_dir, struct code_cache *code, const char *name, int pid,
			 char *buf, size_t size, struct err *err);
/* A bare library name in root's system library directories (ROOT/system/
 * lib64, ROOT/lib/x86_64-linux-gnu, …): the first found, into buf. */
int pattern_find_library_under(const char *root, const char *name, char *buf, size_t size,
			       struct err *err);
int pattern_native_file(const struct trace_pattern *p, const char *path, size_t max,
			struct pattern_matches *out, struct err *err);
/* Shared with pattern_native.c: appends a match / records a searched file. */
struct pattern_match;
int pattern_push(struct pattern_matches *m, struct pattern_match *x, size_t max);
void pattern_match_clear(struct pattern_match *x);
/* pattern_dedup.c: x's dev/ino from its path; 1 when x (same file, offset and
 * name) is listed already, else 0 after marking an alias of a listed OK match
 * MATCH_SAME_CODE; then pattern_dedup_add indexes the pushed match m->v[idx]. */
void pattern_identify(struct pattern_match *x);
int pattern_dedup_check(struct pattern_matches *m, struct pattern_match *x);
int pattern_dedup_add(struct pattern_matches *m, size_t idx);
void pattern_dedup_free(struct pattern_matches *m);
int pattern_note_searched(struct pattern_matches *m, const char *path);

#endif
