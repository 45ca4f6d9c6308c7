/* cmd_check.c — `uprobestats check CONFIG`: parse, validate, guardrail and
 * (unless --no-resolve) resolve every probe; print the plan and every
 * problem; attach nothing.  Also converts configs (--to-binary, --to-text). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "config/encode.h"
#include "config/guardrail.h"
#include "config/plan_print.h"
#include "config/textdump.h"
#include "plan/exits.h"
#include "plan/aggregation.h"
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

#define CHECK(ctx) ((struct check_opts *)(ctx))

static int take_config_format(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	return cli_parse_config_format(arg, &CHECK(ctx)->load.format);
}

static int take_config_era(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	return cli_parse_config_era(arg, &CHECK(ctx)->load.era);
}

static int take_guardrail(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	if (guardrail_mode_parse(arg, &CHECK(ctx)->guardrail.mode) < 0)
		return err_set(e, -EINVAL, "--guardrail takes auto, off or user, not '%s'", arg);
	return 0;
}

#define SET_TRUE(member) OPT_TRUE(struct check_opts, member)

static const struct opt_row check_row_v[] = {
	{ "no-resolve", 0, no_argument, SET_TRUE(no_resolve),
	  OPT_DOC(TRACE, "", "do not open the probed files (check a phone's config anywhere)") },
	{ "unsafe-any-symbol", 0, no_argument, SET_TRUE(unsafe_any_symbol),
	  OPT_DOC(ADVANCED, "", "as for run: accept ELF symbols not proven to be functions") },
	{ "to-binary", 0, required_argument, OPT_STR(struct check_opts, to_binary),
	  OPT_DOC(OUTPUT, "FILE", "write the config as binary proto (what statsd pushes)") },
	{ "to-text", 0, no_argument, SET_TRUE(to_text),
	  OPT_DOC(OUTPUT, "", "print the config as textproto") },
	{ "config-format", 0, required_argument, take_config_format, 0,
	  OPT_DOC(ADVANCED, "text|binary|auto", "as for run") },
	{ "config-era", 0, required_argument, take_config_era, 0,
	  OPT_DOC(ADVANCED, "b|current|auto", "as for run") },
	{ "guardrail", 0, required_argument, take_guardrail, 0,
	  OPT_DOC(ANDROID, "auto|off|user", "the user-build method allowlist to check against") },
	{ "exit-probes", 0, no_argument, SET_TRUE(exit_probes),
	  OPT_DOC(ADVANCED, "", "as for run: the same probes are refused") },
	{ "unsafe-uretprobe", 0, no_argument, SET_TRUE(unsafe_uretprobe),
	  OPT_DOC(ADVANCED, "", "as for run") },
};

const struct opt_rows check_rows = OPT_ROWS(check_row_v);

static int parse_check_opts(int argc, char **argv, struct check_opts *o)
{
	const struct opt_use uses[] = {
		{ &check_rows, o }, { &cli_verbose_rows, NULL }, { &cli_help_rows, NULL },
	};
	int rc = cli_parse_rows(argc, argv, uses, sizeof(uses) / sizeof(uses[0]), CLI_SHORTS_CHECK);

	if (rc != EXIT_OK)
		return rc;
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
	/* the code cache run makes: the plan reads each file once, as run's does */
	if (vrc == EXIT_OK && !(po.code = cli_code_cache_new()))
		rc = EXIT_RUNTIME;
	else if (vrc == EXIT_OK && plan_build(cfg, &po, &plan, &e) < 0)
		rc = e.code == -ESRCH ? EXIT_NO_TARGET
		     : e.code == PLAN_REFUSED ? EXIT_CONFIG
		       : e.code == PLAN_BAD_POSITION ? EXIT_CONFIG : EXIT_RESOLVE;
	struct hook_ctx h = { .plan = plan };
	struct plan_print_opts pp = { .verbose = cli_verbose(), .probe_hook = probe_hook,
				      .hook_ctx = &h };
	config_print_plan(stdout, cfg, &pp);
	plan_free(plan);
	cli_code_cache_free(po.code);
	config_free(cfg);
	if (vrc != EXIT_OK)
		return vrc;
	return rc;
}
