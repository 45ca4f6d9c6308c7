/* legacy_str.h — turning the raw UTF-16 Strings of legacy objects into the
 * UTF-8 the normal objects deliver.
 *
 * A legacy object (kernels before 5.5) cannot run the UTF-16 -> UTF-8 loop,
 * so it copies the code units behind a 4-byte header (records.h,
 * UPS_RAW_UTF16_TAG).  Converting here gives the same text, truncated the
 * same way (on a character boundary to size - 1 bytes; unpaired surrogates
 * as U+FFFD), as long as the string fits the raw form: (size - 4) / 2 units.
 * The header is hostile input: every count is checked against the bytes that
 * are really there. */
#ifndef UPROBESTATS_PROBE_LEGACY_STR_H
#define UPROBESTATS_PROBE_LEGACY_STR_H

#include <stdbool.h>
#include <stddef.h>

#include "vocab/event.h"

/* Converts buf in place when it starts with a well-formed raw header whose
 * field fits in avail bytes (avail: what the record holds from buf on);
 * returns true then.  Anything else is left alone (and decodes as ""). */
bool legacy_str_fix(char *buf, size_t avail);

/* Fixes every string field of a decoded record (fields f[0..n)) whose bytes
 * lie in rec[0..size); returns how many were converted. */
size_t legacy_str_fix_record(char *rec, size_t size, const struct field *f, size_t n);

/* The bytes a legacy object writes into a size-byte field for the Java
 * String whose UTF-8 text is utf8 (Binder's filter keys): the raw form when
 * ART would store it as UTF-16 (a char outside 1..0x7f), zero-padded, the
 * units cut where the BPF side cuts them.  False when the String would be
 * compressed (the legacy bytes are then the UTF-8 text itself) or utf8 is
 * not valid UTF-8. */
bool legacy_str_raw_form(const char *utf8, char *out, size_t size);

#endif
