/* textproto.h — the protobuf text format reader for UprobestatsConfig.
 *
 * Accepts the format as upstream configs use it and a bit beyond: '#'
 * comments, "name: value", "name { ... }", "name: { ... }", "<...>"
 * delimiters, repeated fields as repeated entries or "[a, b]" lists,
 * single/double-quoted strings with C escapes and adjacent-string
 * concatenation, integers in decimal/hex/octal with a sign, bools
 * (true/false/t/f/True/False/1/0), enum values by name or number, and
 * optional ',' or ';' after each field.  Field names of every era are
 * accepted (they are unambiguous in text). */
#ifndef UPROBESTATS_CONFIG_TEXTPROTO_H
#define UPROBESTATS_CONFIG_TEXTPROTO_H

#include <stddef.h>

#include "common/err.h"
#include "config/config.h"

/* Parse buf into cfg (empty on entry; strings go to cfg->arena).  Sets
 * cfg->era to B when only era-B fields (probe-level bpf_map) are used and
 * to CURRENT otherwise.  Errors: "name:line:col: ..." with a CONFIG_E* code. */
int textproto_parse(struct uprobestats_config *cfg, const char *buf, size_t len,
		    struct err *err);

#endif
