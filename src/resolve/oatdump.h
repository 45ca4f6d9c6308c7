/* oatdump.h — the oatdump fallback: run ART's oatdump and parse its output.
 *
 * Two output forms:
 *   JSON lines (oatdump v241+, --dump-method-and-offset-as-json):
 *     {"method":"void a.B.c(int)","offset":"0x00001020"}   (no size, no index)
 *   classic text: "  N: <sig> (dex_method_idx=N)" method lines, then
 *     "    CODE: (code_offset=0x… [size_offset=0x… ]size=N)...", anchored on
 *     indentation so that dex-code and type-table lines never change state.
 * Printed offsets are oatdata-relative before oat v247 and ELF-relative
 * (== file offset for ART files) from v247; the Thumb bit is still set. */
#ifndef UPROBESTATS_RESOLVE_OATDUMP_H
#define UPROBESTATS_RESOLVE_OATDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/err.h"

struct oatdump_method {
	char *signature;            /* PrettyMethod text as printed */
	int64_t dex_method_idx;     /* -1 when not printed (JSON) */
	uint32_t code_offset;       /* as printed; 0 = no code */
	uint32_t code_size;
	bool has_size;
};

struct oatdump_output {
	struct oatdump_method *v;
	size_t n;
	unsigned version;           /* from the MAGIC block (text); 0 when unknown */
	bool has_exec_offset;
	uint32_t exec_offset;       /* EXECUTABLE OFFSET as printed */
	bool json;
	struct arena *a;
};

int oatdump_parse_json(const char *buf, size_t len, struct oatdump_output *out, struct err *err);
int oatdump_parse_text(const char *buf, size_t len, struct oatdump_output *out, struct err *err);
void oatdump_output_free(struct oatdump_output *o);

/* The method whose signature equals sig, comparing with spacing normalized
 * ("a.B.c(int,long)" == "a.B.c(int, long)"); NULL when absent. */
const struct oatdump_method *oatdump_find(const struct oatdump_output *o, const char *sig);

/* File offset of a printed code offset: Thumb bit cleared, plus the oatdata
 * file offset when the printing oatdump predates v247. */
uint64_t oatdump_file_offset(unsigned oat_version, uint64_t oatdata_off, uint32_t printed);

struct oatdump_run_opts {
	const char *oatdump;        /* binary; NULL = "oatdump" on PATH */
	const char *oat_path;
	const char *dex_file;       /* --dex-file, optional */
	const char *class_filter;   /* dotted class name, optional */
	const char *method_filter;  /* method name, optional */
	unsigned oat_version;       /* picks JSON (>= 241) or text; 0 = try JSON first */
	int timeout_ms;             /* 0 = 60000 */
};

/* Runs oatdump and parses what it prints.  On failure err names the
 * command, the exit status or the timeout, and the end of its stderr. */
int oatdump_run(const struct oatdump_run_opts *opts, struct oatdump_output *out, struct err *err);

#endif
