/* fuzz_protobuf.c — the binary wire reader on arbitrary bytes, with era
 * detection and with each era forced.
 *
 * Whatever decodes must validate, print, and re-encode (with the era it was
 * read in) to bytes that decode back to an equal model. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "config/config.h"
#include "config/encode.h"
#include "config/guardrail.h"
#include "config/load.h"
#include "config/plan_print.h"
#include "config/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void round_trip(const struct uprobestats_config *cfg)
{
	struct config_load_opts o = { .format = CONFIG_FORMAT_BINARY, .era = cfg->era };
	struct uprobestats_config *again = NULL;
	uint8_t *bin = NULL;
	size_t len = 0;
	char why[256];
	struct err e;

	if (config_encode_binary(cfg, cfg->era, &bin, &len, NULL, &e)) {
		fprintf(stderr, "decoded model does not encode: %s\n", e.msg);
		abort();
	}
	if (config_load_buffer("bin", bin, len, &o, &again, &e)) {
		fprintf(stderr, "re-encoding does not decode: %s\n", e.msg);
		abort();
	}
	if (!config_equal(cfg, again, why, sizeof(why))) {
		fprintf(stderr, "re-encoding decodes differently: %s\n", why);
		abort();
	}
	config_free(again);
	free(bin);
}

static void one(const uint8_t *data, size_t size, enum config_era era, FILE *sink)
{
	struct config_load_opts o = { .format = CONFIG_FORMAT_BINARY, .era = era };
	struct uprobestats_config *cfg = NULL;
	struct config_problems pr = { 0 };
	struct guardrail_opts g = { .mode = GUARDRAIL_USER };
	struct err e;

	if (config_load_buffer("fuzz", data, size, &o, &cfg, &e))
		return;
	config_validate(cfg, NULL, &pr);
	config_guardrail_check(cfg, &g, &pr);
	if (sink) {
		config_print_problems(sink, cfg, &pr);
		config_print_plan(sink, cfg, &(struct plan_print_opts){ .verbose = true });
	}
	round_trip(cfg);
	config_free(cfg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *sink = fopen("/dev/null", "w");

	one(data, size, CONFIG_ERA_AUTO, sink);
	one(data, size, CONFIG_ERA_B, sink);
	one(data, size, CONFIG_ERA_CURRENT, sink);
	if (sink)
		fclose(sink);
	return 0;
}
