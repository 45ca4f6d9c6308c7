/* java_resolve.h — the public Java-method resolver: a config's Java method to
 * the file offset of its AOT-compiled code.
 *
 * Input: the method (method_signature text, or class + method + parameter
 * types), optional file paths (oat/odex; the first file whose dex defines
 * the class is used), the resolver mode, and for configs without paths the
 * search options (process maps, roots, cache).
 * Output: path, file offset, ISA, code size, dex access flags (is_static:
 * static methods have no `this` register in the ART calling convention),
 * parameter/return descriptors, how it was found, verbose notes and a
 * warning text (de-duplicated code, arm32 Thumb code).
 *
 * Errors (negative, err filled with one line):
 *   -ENOENT   class/method not found (in the files given, or by the search);
 *   -ENODATA  found, but the method has no AOT code (abstract, native without
 *             stub, excluded by the bitmap, a verify/quicken filter, ...);
 *             the message says which and how to get it compiled;
 *   -EINVAL   bad signature text, ambiguous overloads, or a damaged file;
 *   -ENOTSUP  a file the built-in reader cannot handle (mode builtin);
 *   -ETIMEDOUT / -EIO  the oatdump fallback timed out / failed. */
#ifndef UPROBESTATS_RESOLVE_JAVA_RESOLVE_H
#define UPROBESTATS_RESOLVE_JAVA_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "resolve/oat_search.h"

enum java_resolver_mode {
	JAVA_RESOLVER_AUTO = 0,     /* built-in reader; oatdump only where it cannot cope */
	JAVA_RESOLVER_BUILTIN,
	JAVA_RESOLVER_OATDUMP,
};

enum java_found_by {
	JAVA_FOUND_BUILTIN = 0,
	JAVA_FOUND_OATDUMP,
};

struct java_resolve_opts {
	/* The method: method_signature, or class_name + method_name (+ params). */
	const char *method_signature;
	const char *class_name;         /* "com.foo.Bar$Baz" */
	const char *method_name;
	const char *const *params;      /* Java type names */
	size_t n_params;
	bool params_given;              /* false: any overload (must be unique) */

	const char *const *file_paths;  /* oat/odex files to look in; n == 0: search */
	size_t n_file_paths;
	const char *const *dex_files;   /* extra jar/apk paths for finding dex files */
	size_t n_dex_files;

	enum java_resolver_mode mode;
	const char *oatdump_path;       /* NULL: "oatdump" on PATH */
	int oatdump_timeout_ms;         /* 0: 60 s */

	struct oat_search_opts search;  /* used when n_file_paths == 0 */
	/* The command's parsed files (code/codecache.h; required): the oat file
	 * and its dex files come from there, and the search's class indexes. */
	struct code_cache *code;
};

struct java_resolution {
	char path[4096];
	uint64_t file_offset;
	char isa[16];                   /* "arm64", "arm", "x86", "x86_64", "riscv64" */
	uint16_t e_machine;
	uint32_t code_size;             /* 0 when unknown (oatdump JSON) */
	bool thumb;                     /* arm32 Thumb-2 code: not uprobe-able */
	bool flags_known;               /* false only via oatdump without a dex */
	uint32_t access_flags;          /* dex ACC_* */
	bool is_static;
	uint32_t dex_method_idx;        /* 0xffffffff when unknown */
	char signature[1024];           /* as resolved, PrettyMethod form */
	char ret_desc[256];
	char params[1024];              /* parameter descriptors, NUL-separated */
	uint32_t n_params;
	enum java_found_by found_by;
	bool searched;                  /* the file was found by oat_search */
	uint32_t n_sharers;             /* other methods sharing this code */
	char notes[2048];               /* verbose: file choice, header/record layouts, ... */
	char warning[1536];             /* empty, or de-dup / Thumb warnings */
	char source_file[256];          /* the class's source file, "" when none or unknown */
};

int java_resolve(const struct java_resolve_opts *opts, struct java_resolution *out,
		 struct err *err);

/* The i-th parameter descriptor of r, or NULL. */
const char *java_resolution_param(const struct java_resolution *r, uint32_t i);

const char *java_resolver_mode_name(enum java_resolver_mode m);
/* "auto", "builtin", "oatdump" -> mode; -EINVAL otherwise. */
int java_resolver_mode_parse(const char *s, enum java_resolver_mode *out);

#endif
