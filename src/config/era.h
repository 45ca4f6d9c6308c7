/* era.h — guessing the field numbering (era) of a binary config.
 *
 * Reference §1: Task field 3 is a varint (duration_seconds) in era B and a
 * string (target_process_name) now; Task field 2 is a process name in era B
 * and a map name now; Task field 4 and fields 6-7 exist only now; ProbeConfig
 * field 4 holds a "map_..." name in era B and a class name now; ProbeConfig
 * fields 5-7 exist only now. */
#ifndef UPROBESTATS_CONFIG_ERA_H
#define UPROBESTATS_CONFIG_ERA_H

#include <stddef.h>
#include <stdint.h>

#include "config/config.h"

/* The era with more evidence (ties and no evidence: CURRENT); reason gets
 * one line naming the deciding evidence and the counts. */
enum config_era protobuf_detect_era(const uint8_t *buf, size_t len, char *reason,
				    size_t reason_size);

#endif
