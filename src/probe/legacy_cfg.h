/* legacy_cfg.h — giving a legacy object (kernels before 5.5, no global data)
 * its per-probe config: every 64-bit immediate load whose upper half is
 * UPS_IMM_MAGIC (records.h) is rewritten into a load of the probe's value
 * before the object is loaded, so the verifier sees the constant the
 * .rodata config gives the normal objects. */
#ifndef UPROBESTATS_PROBE_LEGACY_CFG_H
#define UPROBESTATS_PROBE_LEGACY_CFG_H

#include <linux/bpf.h>
#include <stddef.h>

#include "common/err.h"
#include "records.h"

struct bpf_object;

/* Patches insns[0..n) in place; *patched counts the loads rewritten.  Fails
 * on a config immediate this build does not know (an object from another
 * build) or a truncated 64-bit load. */
int legacy_patch_insns(struct bpf_insn *insns, size_t n, const struct ups_prog_config *cfg,
		       size_t *patched, struct err *err);

/* Patches every program of an opened, not yet loaded object. */
int legacy_patch_object(struct bpf_object *obj, const struct ups_prog_config *cfg,
			struct err *err);

#endif
