/* parse_u32.h — the one parser of an integer option value: decimal digits, or
 * hex after 0x; no sign, no spaces, nothing after; within a range.  Its error
 * names the option, the range and the text found. */
#ifndef UPROBESTATS_COMMON_PARSE_U32_H
#define UPROBESTATS_COMMON_PARSE_U32_H

#include <stdint.h>

#include "common/err.h"

/* s as a number from lo to hi into *out: 0, or -EINVAL (*out untouched) with
 * "OPT takes WHAT from LO to HI, not 'S'" in e (e.g. "--flush-ms takes
 * milliseconds from 1 to 10000, not 'x'").  Leading zeros are decimal. */
int parse_u32_arg(const char *s, uint32_t lo, uint32_t hi, const char *opt, const char *what,
		  uint32_t *out, struct err *e);

/* The number alone: 0, or -EINVAL when s is not one or is outside [lo, hi]. */
int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out);

#endif
