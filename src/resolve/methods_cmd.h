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
 *     a "warning" member (JSON).  With verbose, notes follow as "# " lines. */
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

int methods_cmd(const struct methods_cmd_opts *o, FILE *out, struct err *err);
int resolve_cmd(const struct resolve_cmd_opts *o, FILE *out, struct err *err);

#endif
