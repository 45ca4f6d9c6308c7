/* oat_exits.h — frame information and exit sites of one compiled method of an
 * oat file: the CodeInfo frame (codeinfo.h) checked against the frame the
 * method's own prologue allocates, and every return instruction
 * (exit_sites.h) with each arm64 epilogue checked against that frame.  Used
 * by `methods --json`, `resolve --json` and the exit probes of Java methods.
 *
 * Frameless leaf methods without stack maps get exit sites too (never a
 * uretprobe): one mechanism for all Java code. */
#ifndef UPROBESTATS_FORMATS_OAT_EXITS_H
#define UPROBESTATS_FORMATS_OAT_EXITS_H

#include <stdint.h>

#include "common/err.h"
#include "formats/codeinfo.h"
#include "formats/exit_sites.h"
#include "formats/oat.h"
#include "formats/oat_code.h"

struct oat_method_exits {
	int frame_rc;                   /* 0, or why the frame is unknown (frame_err) */
	struct art_frame_info frame;
	struct err frame_err;
	int exits_rc;                   /* 0, or why exits are refused (exits_err) */
	struct err exits_err;
	struct exit_sites sites;        /* offsets from the code start */
	uint64_t code_file_offset;      /* add to each site for a file offset */
};

/* Fills *out for the method whose code c is (from oat_code_at / oat_list_methods).
 * Never fails as a whole: each half carries its own status.  Exits are refused
 * whenever the frame is unknown or the prologue disagrees with CodeInfo. */
void oat_method_exits_get(const struct oat_file *o, const struct oat_code *c,
			  struct oat_method_exits *out);
void oat_method_exits_free(struct oat_method_exits *m);

/* The same for the compiled method whose code starts at file_offset of the oat/odex
 * file o (as resolve / java_resolve report it; the tool's callers take o from the
 * command's code cache).  Fails (negative errno, err) only when no method header
 * precedes that offset; the frame and exits then carry their own status as above.
 * Each site's file offset is out->code_file_offset + out->sites.offsets[i]. */
int oat_method_exits_in(const struct oat_file *o, uint64_t file_offset,
			struct oat_method_exits *out, struct err *err);

#endif
