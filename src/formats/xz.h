/* xz.h — a small decoder for the .xz container with the LZMA2 filter, as
 * used by ELF .gnu_debugdata ("mini debug info").
 *
 * Supports: one or more concatenated streams (with stream padding), any
 * number of blocks per stream, the check types none, CRC32 and CRC64 (all
 * verified), SHA-256 (refused: -ENOTSUP), the LZMA2 filter alone (any
 * dictionary size up to 1.5 GiB in the header, but the output is capped by
 * the caller so memory use is bounded by max_out), block sizes in block
 * headers checked when present, and the index checked against the blocks
 * decoded.  Branch/call/jump filters (BCJ x86/ARM64...) and delta are
 * refused with -ENOTSUP naming the filter id.
 *
 * The input is hostile: every read is bounds-checked and every error is one
 * line naming the byte offset in the input and what was wrong. */
#ifndef UPROBESTATS_FORMATS_XZ_H
#define UPROBESTATS_FORMATS_XZ_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

/* Decodes in[0..in_len) into a malloc'ed buffer (*out, *out_len; free()).
 * At most max_out bytes are produced: a larger result is -EFBIG.
 * Errors: -EINVAL (not xz / corrupt / check mismatch), -ENOTSUP (filter or
 * check type not supported), -EFBIG, -ENOMEM.  name is used in messages. */
int xz_decode(const char *name, const uint8_t *in, size_t in_len, size_t max_out, uint8_t **out,
	      size_t *out_len, struct err *err);

#endif
