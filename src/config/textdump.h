/* textdump.h — the model written back as textproto (for `check --to-text`
 * and for round-trip tests).  The output parses back to an equal model:
 * strings are quoted with C escapes, enums written by name (by number when
 * unknown), repeated scalars as [a, b] lists. */
#ifndef UPROBESTATS_CONFIG_TEXTDUMP_H
#define UPROBESTATS_CONFIG_TEXTDUMP_H

#include <stdio.h>

#include "config/config.h"

/* Returns 0, or -EIO when writing to out failed. */
int config_dump_text(const struct uprobestats_config *cfg, FILE *out);

#endif
