/* fuzz_textproto.c — the textproto reader on arbitrary bytes.
 *
 * Beyond "no crash": whatever parses must validate, print, dump as text that
 * parses back to an equal model, and (when one era holds it) encode to
 * binary that decodes back to an equal model. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "config/config.h"
#include "config/encode.h"
#include "config/guardrail.h"
#include "config/load.h"
#include "config/plan_print.h"
#include "config/textdump.h"
#include "config/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_text_round_trip(const struct uprobestats_config *cfg)
{
	struct config_load_opts text = { .format = CONFIG_FORMAT_TEXT };
	struct uprobestats_config *again = NULL;
	char *dump = NULL, why[256];
	size_t len = 0;
	struct err e;
	FILE *f = open_memstream(&dump, &len);

	if (!f)
		return;
	config_dump_text(cfg, f);
	fclose(f);
	if (config_load_buffer("dump", dump, len, &text, &again, &e)) {
		fprintf(stderr, "dump does not parse: %s\n%s\n", e.msg, dump);
		abort();
	}
	if (!config_equal(cfg, again, why, sizeof(why))) {
		fprintf(stderr, "dump parses differently: %s\n", why);
		abort();
	}
	config_free(again);
	free(dump);
}

static void check_binary_round_trip(const struct uprobestats_config *cfg)
{
	struct uprobestats_config *again = NULL;
	enum config_era era;
	uint8_t *bin = NULL;
	size_t len = 0;
	char why[256];
	struct err e;

	if (config_encode_binary(cfg, CONFIG_ERA_AUTO, &bin, &len, &era, &e))
		return;   /* a model mixing both eras has no encoding */
	struct config_load_opts o = { .format = CONFIG_FORMAT_BINARY, .era = era };
	if (config_load_buffer("bin", bin, len, &o, &again, &e)) {
		fprintf(stderr, "encoding does not decode: %s\n", e.msg);
		abort();
	}
	if (!config_equal(cfg, again, why, sizeof(why))) {
		fprintf(stderr, "encoding decodes differently: %s\n", why);
		abort();
	}
	config_free(again);
	free(bin);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config_load_opts o = { .format = CONFIG_FORMAT_TEXT };
	struct uprobestats_config *cfg = NULL;
	struct config_problems pr = { 0 };
	struct guardrail_opts g = { .mode = GUARDRAIL_USER };
	struct err e;
	FILE *sink = fopen("/dev/null", "w");

	if (config_load_buffer("fuzz", data, size, &o, &cfg, &e) == 0) {
		config_validate(cfg, NULL, &pr);
		config_guardrail_check(cfg, &g, &pr);
		if (sink) {
			config_print_problems(sink, cfg, &pr);
			config_print_plan(sink, cfg, &(struct plan_print_opts){ .verbose = true });
		}
		check_text_round_trip(cfg);
		check_binary_round_trip(cfg);
		config_free(cfg);
	}
	if (sink)
		fclose(sink);
	return 0;
}
