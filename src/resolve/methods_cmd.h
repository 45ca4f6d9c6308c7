/* methods_cmd.h — the `methods` and `resolve` subcommands (main.c parses argv
 * and calls these; they print results to `out` and return errors for main.c
 * to print).
 *
 *   uprobestats methods FILE [--filter TEXT] [--json] [--dex-file JAR]...
 *     every method with compiled code: file offset, code size, dex method
 *     index, signature, de-dup group.  Text: a '#' header line, then
 *       <file_off> <size> <dex_idx> <signature>[  (shares code with N: #first)]
 *     JSON: one object per method:
 *       {"signature","dex_method_idx","dex_index","class_def_idx",
 *        "class_method_index","code_offset","file_offset","code_size","isa",
 *        "thumb","access_flags","dedup_group","dedup_count"}
 *     (signature/dex_method_idx/access_flags are null without a dex).
 *
 *   uprobestats resolve FILE 'SIGNATURE' [--json] [--resolver auto|builtin|oatdump]
 *     one line: "<file_off> <path> <isa> size=<n> <static|instance> <signature>",
 *     or one JSON object; warnings follow as "# warning: ..." lines (text) or
 *     a "warning" member (JSON).  With verbose, notes follow as "# " lines.
 *
 * `resolve --json` writes one shape, whether SIGNATURE or a pattern
 * (cli/cmd_match.c) named the method, and on failure: every key always
 * present, null when unknown or not of its kind (docs/json-schema.md,
 * "resolve"): the head (type .. access_flags), "params", the tail
 * (found_by .. notes), the frame and exit-site keys, "error".  These
 * writers are its parts, in that order. */
#ifndef UPROBESTATS_RESOLVE_METHODS_CMD_H
#define UPROBESTATS_RESOLVE_METHODS_CMD_H

#include <stdbool.h>
#include <stdio.h>

#include "common/err.h"
#include "resolve/java_resolve.h"

struct methods_cmd_opts {
	const char *file;               /* oat/odex */
	const char *filter;             /* substring of the signature; NULL = all */
	bool json;
	bool verbose;                   /* text: '#' lines with layouts and notes */
	const char *const *dex_files;   /* extra jar/apk paths for finding dex files */
	size_t n_dex_files;
	/* The command's code cache (code/codecache.h; required): the file is
	 * opened and parsed there, once. */
	struct code_cache *code;
};

struct resolve_cmd_opts {
	const char *file;               /* NULL: find it with `search` */
	const char *signature;          /* method_signature text */
	bool json;
	bool verbose;
	enum java_resolver_mode mode;
	const char *oatdump_path;       /* NULL: "oatdump" on PATH */
	int oatdump_timeout_ms;         /* 0: default */
	const char *const *dex_files;
	size_t n_dex_files;
	struct oat_search_opts search;  /* used when file is NULL */
	/* The command's code cache (code/codecache.h; required): the oat file
	 * (and the search's class indexes) read once for the resolution and
	 * the JSON's frame and exit sites. */
	struct code_cache *code;
};

struct resolve_json_head {
	const char *path;
	uint64_t file_offset, code_size;
	const char *isa;                /* NULL or "": null */
	int thumb;                      /* -1: null */
	bool java;
	const char *name;               /* Java: the signature; native: the demangled name */
	const char *raw_name;           /* native: the ELF symbol */
	int is_static;                  /* -1: static and access_flags null */
	uint32_t access_flags;
};

struct resolve_json_tail {
	const char *found_by;           /* "builtin", "oatdump", "pattern" */
	bool searched;                  /* the file was searched for, not named */
	const char *left_out, *detail;  /* a pattern's match that would not be probed */
	const char *warning, *notes;    /* NULL or "": null */
};

void resolve_json_head(FILE *out, const struct resolve_json_head *h);
void resolve_json_tail(FILE *out, const struct resolve_json_tail *t);
/* The frame keys (frame_size .. frame_error) and exit_sites,
 * exit_sites_error of the compiled method at file_offset of the oat file at
 * path, from the code cache. */
void resolve_json_oat_frame(FILE *out, struct code_cache *code, const char *path,
			    uint64_t file_offset);
/* The frame keys, all null (native code has no CodeInfo frame). */
void resolve_json_no_frame(FILE *out);
/* ,"error":null} and the newline. */
void resolve_json_end(FILE *out);
/* The whole object of a failure: every key null but "error". */
void resolve_json_error(FILE *out, const char *msg);

int methods_cmd(const struct methods_cmd_opts *o, FILE *out, struct err *err);
int resolve_cmd(const struct resolve_cmd_opts *o, FILE *out, struct err *err);

#endif
