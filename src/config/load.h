/* load.h — reading a UprobestatsConfig from a file or memory, text or binary
 * (detected by content unless forced), into the model of config/config.h.
 * This module dispatches to the two parsers (config/textproto.h,
 * config/protobuf.h), which know only the model, not each other or this. */
#ifndef UPROBESTATS_CONFIG_LOAD_H
#define UPROBESTATS_CONFIG_LOAD_H

#include <stddef.h>

#include "common/err.h"
#include "config/config.h"

/* Read and parse a config file (text or binary).  On failure *out is NULL and
 * err holds one line: "<file>:<line>:<col>: ..." or "<file>+0x<off>: ...";
 * err->code is one of config.h's error classes or an errno of reading. */
int config_load_file(const char *path, const struct config_load_opts *opts,
		     struct uprobestats_config **out, struct err *err);

/* Parse from memory; name is used in messages. */
int config_load_buffer(const char *name, const void *buf, size_t len,
		       const struct config_load_opts *opts,
		       struct uprobestats_config **out, struct err *err);

#endif
