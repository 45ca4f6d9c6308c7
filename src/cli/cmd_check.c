/* cmd_check.c — `uprobestats check CONFIG`: parse, validate, guardrail and
 * (unless --no-resolve) resolve every probe; print the plan and every
 * problem; attach nothing.  Also converts configs (--to-binary, --to-text). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "config/encode.h"
#include "config/guardrail.h"
#include "config/plan_print.h"
#include "config/textdump.h"
#include "plan/exits.h"
#include "plan/plan.h"
#include "sys/properties.h"

struct check_opts {
	const char *config;
	bool no_resolve;
	const char *to_binary;
	bool to_text;
	bool exit_probes;            /* as run's --exit-probes / --unsafe-uretprobe */
	bool unsafe_uretprobe;
	struct config_load_opts load;
	struct guardrail_opts guardrail;
	bool unsafe_any_symbol;
};

enum { OPT_NO_RESOLVE = 256, OPT_TO_BINARY, OPT_TO_TEXT, OPT_CONFIG_FORMAT, OPT_CONFIG_ERA,
       OPT_GUARDRAIL, OPT_UNSAFE_ANY_SYMBOL, OPT_EXIT_PROBES, OPT_UNSAFE_URETPROBE };

static const struct option long_opts[] = {
	{ "no-resolve", no_argument, NULL, OPT_NO_RESOLVE },
	{ "unsafe-any-symbol", no_argument, NULL, OPT_UNSAFE_ANY_SYMBOL },
	{ "to-binary", required_argument, NULL, OPT_TO_BINARY },
	{ "to-text", no_argument, NULL, OPT_TO_TEXT },
	{ "config-format", required_argument, NULL, OPT_CONFIG_FORMAT },
	{ "config-era", required_argument, NULL, OPT_CONFIG_ERA },
	{ "guardrail", required_argument, NULL, OPT_GUARDRAIL },
	{ "exit-probes", no_argument, NULL, OPT_EXIT_PROBES },
	{ "unsafe-uretprobe", no_argument, NULL, OPT_UNSAFE_URETPROBE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

static int parse_check_opts(int argc, char **argv, struct check_opts *o)
{
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_NO_RESOLVE: o->no_resolve = true; break;
		case OPT_UNSAFE_ANY_SYMBOL: o->unsafe_any_symbol = true; break;
		case OPT_TO_BINARY: o->to_binary = optarg; break;
		case OPT_TO_TEXT: o->to_text = true; break;
		case OPT_EXIT_PROBES: o->exit_probes = true; break;
		case OPT_UNSAFE_URETPROBE: o->unsafe_uretprobe = true; break;
		case OPT_CONFIG_FORMAT:
			if (cli_parse_config_format(optarg, &o->load.format))
				return EXIT_USAGE;
			break;
		case OPT_CONFIG_ERA:
			if (cli_parse_config_era(optarg, &o->load.era))
				return EXIT_USAGE;
			break;
		case OPT_GUARDRAIL:
			if (guardrail_mode_parse(optarg, &o->guardrail.mode) < 0) {
				p_err("--guardrail takes auto, off or user, not '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'v': cli_set_verbose(true); break;
		case 'h': cmd_help(0, NULL); return -1;
		default: return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		p_err(optind >= argc ? "check: missing CONFIG" : "check: unexpected argument");
		return EXIT_USAGE;
	}
	o->config = argv[optind];
	return EXIT_OK;
}

static int write_binary(const struct uprobestats_config *cfg, const char *path)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	struct err e = { 0 };
	enum config_era used;
	FILE *f;
	int rc = EXIT_OK;

	if (config_encode_binary(cfg, CONFIG_ERA_AUTO, &buf, &len, &used, &e) < 0) {
		p_err("%s", e.msg);
		return EXIT_CONFIG;
	}
	f = strcmp(path, "-") ? fopen(path, "we") : stdout;
	if (!f || fwrite(buf, 1, len, f) != len || (f != stdout && fclose(f) != 0)) {
		p_err("--to-binary %s: %s", path, strerror(errno));
		rc = EXIT_RUNTIME;
	} else {
		p_info("wrote %zu bytes (%s numbering) to %s", len, config_era_name(used), path);
	}
	free(buf);
	return rc;
}

struct hook_ctx {
	const struct plan *plan;
};

/* Adds the resolved file and offset under each probe of the printed plan. */
static void probe_hook(FILE *out, const struct uprobestats_config *cfg, size_t task,
		       size_t probe, void *ctx)
{
	const struct hook_ctx *h = ctx;
	const struct plan_probe *p;

	if (!h->plan || task >= h->plan->n_tasks || probe >= h->plan->tasks[task].n_probes)
		return;
	p = &h->plan->tasks[task].probes[probe];
	if (!p->path[0])
		return;
	fprintf(out, "    resolved: %s +0x%" PRIx64 " (%s, %s arguments)\n", p->path, p->offset,
		resolve_how_name(p->how), arg_abi_name(p->abi));
	if (p->note[0])
		fprintf(out, "    note: %s\n", p->note);
}

static void print_problem(void *ctx, const char *msg)
{
	fprintf(stderr, "%s: error: %s [resolve]\n", (const char *)ctx, msg);
}

int cmd_check(int argc, char **argv)
{
	struct check_opts o = { 0 };
	struct uprobestats_config *cfg;
	struct plan *plan = NULL;
	struct err e = { 0 };
	int rc = parse_check_opts(argc, argv, &o), vrc;

	if (rc != EXIT_OK)
		return rc < 0 ? EXIT_OK : rc;
	rc = cli_load_config(o.config, &o.load, &cfg);
	if (rc != EXIT_OK)
		return rc;
	if (o.to_text) {
		rc = config_dump_text(cfg, stdout) < 0 ? EXIT_RUNTIME : EXIT_OK;
		config_free(cfg);
		return rc;
	}
	struct android_info android;
	cli_android_guardrail(&android, &o.guardrail);
	vrc = cli_validate(cfg, &o.guardrail, false);
	if (o.to_binary) {
		rc = vrc == EXIT_OK ? write_binary(cfg, o.to_binary) : vrc;
		config_free(cfg);
		return rc;
	}
	struct plan_opts po = { .no_resolve = o.no_resolve, .problem = print_problem,
				.unsafe_any_symbol = o.unsafe_any_symbol,
				.problem_ctx = (void *)o.config, .duration_override = 0,
				.exit_probes = o.exit_probes,
				.unsafe_uretprobe = o.unsafe_uretprobe };
	if (vrc == EXIT_OK && plan_build(cfg, &po, &plan, &e) < 0)
		rc = e.code == -ESRCH ? EXIT_NO_TARGET
		     : e.code == PLAN_REFUSED ? EXIT_CONFIG : EXIT_RESOLVE;
	struct hook_ctx h = { .plan = plan };
	struct plan_print_opts pp = { .verbose = cli_verbose(), .probe_hook = probe_hook,
				      .hook_ctx = &h };
	config_print_plan(stdout, cfg, &pp);
	plan_free(plan);
	config_free(cfg);
	if (vrc != EXIT_OK)
		return vrc;
	return rc;
}
