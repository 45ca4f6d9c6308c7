/* encode.h — the model back to the binary wire format (what statsd pushes
 * to /data/misc/uprobestats-configs/config), for `check --to-binary` and for
 * round-trip tests.
 *
 * Fields are written in field-number order, repeated scalars unpacked (the
 * proto2 default, as protoc writes this schema) unless the schema row says
 * packed.  An empty repeated field is not written. */
#ifndef UPROBESTATS_CONFIG_ENCODE_H
#define UPROBESTATS_CONFIG_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "config/config.h"

/* Encode cfg with the numbering of era.  AUTO picks era B when the model
 * uses an era-B-only field (probe-level bpf_map) and no current-only field,
 * and the current numbering otherwise; a model mixing both, or a field the
 * chosen era has no number for, is an error (CONFIG_EERA) naming the field.
 * On success *out is a malloc()ed buffer the caller free()s (NULL when
 * *out_len is 0) and *used_era (if non-NULL) says which numbering was used. */
int config_encode_binary(const struct uprobestats_config *cfg, enum config_era era,
			 uint8_t **out, size_t *out_len, enum config_era *used_era,
			 struct err *err);

struct msg_desc;

/* Encode one message of schema m from obj (the generic core of the above,
 * for schemas other than the config's, e.g. in tests).  cfg names the source
 * in messages. */
int config_encode_message(const struct uprobestats_config *cfg, const struct msg_desc *m,
			  const void *obj, enum config_era era, uint8_t **out, size_t *out_len,
			  struct err *err);

#endif
