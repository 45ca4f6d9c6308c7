/* protobuf.h — the binary (wire-format) reader for UprobestatsConfig, and
 * the era detection that picks which field numbering to decode with.
 *
 * Varint, zigzag and fixed32/64 integers per the schema's encoding, packed
 * and unpacked repeated scalars, nested messages; unknown fields (of any
 * wire type, groups included) are skipped and counted.  Truncated or
 * malformed input, a wire type that does not fit the field, or a string
 * holding a NUL byte is an error naming the byte offset ("name+0x1c: ..."). */
#ifndef UPROBESTATS_CONFIG_PROTOBUF_H
#define UPROBESTATS_CONFIG_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "config/config.h"
#include "config/schema.h"

/* Decode buf into cfg (empty on entry).  era AUTO detects the era from the
 * content; cfg->era and cfg->era_reason say which was used and why. */
int protobuf_decode(struct uprobestats_config *cfg, const uint8_t *buf, size_t len,
		    enum config_era era, struct err *err);

/* Decode one message of schema m into obj from buf[start, end), with the
 * field numbering of era (B or CURRENT).  Exposed for tests of schemas
 * other than the config's. */
int protobuf_decode_message(struct uprobestats_config *cfg, const struct msg_desc *m,
			    void *obj, const uint8_t *buf, size_t len, enum config_era era,
			    struct err *err);

#endif
