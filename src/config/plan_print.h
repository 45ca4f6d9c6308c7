/* plan_print.h — the config as a readable plan, for `uprobestats check`:
 * task -> probes -> method, files, program, maps, target selection, atom.
 * The resolve stage adds each probe's file and offset through a hook. */
#ifndef UPROBESTATS_CONFIG_PLAN_PRINT_H
#define UPROBESTATS_CONFIG_PLAN_PRINT_H

#include <stdbool.h>
#include <stdio.h>

#include "config/config.h"

/* Called after a probe's own lines; print lines indented by 4 spaces, e.g.
 * "    offset: /system/framework/oat/arm64/services.odex +0x1a2b3c (oat)". */
typedef void (*plan_probe_hook)(FILE *out, const struct uprobestats_config *cfg, size_t task,
				size_t probe, void *ctx);

struct plan_print_opts {
	bool verbose;               /* add the format, the era and why it was chosen */
	plan_probe_hook probe_hook; /* may be NULL */
	void *hook_ctx;
};

void config_print_plan(FILE *out, const struct uprobestats_config *cfg,
		       const struct plan_print_opts *opts);

#endif
