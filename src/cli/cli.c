#include "cli/cli.h"

#include "code/artdebug.h"
#include "code/codecache.h"
#include "config/guardrail.h"
#include "config/load.h"
#include "config/problems.h"
#include "config/validate.h"
#include "catalog/catalog.h"
#include "sys/log.h"
#include "sys/properties.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The process-wide CLI state (-v, the logger): the one mutable global of
 * the tool that CONTRIBUTING allows, set before a subcommand runs. */
static struct {
	bool verbose;
	struct logger *logger;
	const struct code_cache *code_said;   /* whose -v line is printed already */
} state;

void cli_set_logger(struct logger *lg)
{
	state.logger = lg;
}

void cli_set_verbose(bool v)
{
	state.verbose = v;
}

bool cli_verbose(void)
{
	return state.verbose;
}

static void vprint(enum log_level level, const char *prefix, const char *fmt, va_list ap)
{
	struct logger *lg = state.logger;

	if (lg) {
		log_vmsg(lg, level, fmt, ap);
		return;
	}
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void p_err(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprint(LOG_LVL_ERROR, "uprobestats: error: ", fmt, ap);
	va_end(ap);
}

void p_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprint(LOG_LVL_WARN, "uprobestats: warning: ", fmt, ap);
	va_end(ap);
}

void p_info(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprint(LOG_LVL_INFO, "uprobestats: ", fmt, ap);
	va_end(ap);
}

void p_debug(const char *fmt, ...)
{
	va_list ap;
	if (!cli_verbose())
		return;
	va_start(ap, fmt);
	vprint(LOG_LVL_DEBUG, "uprobestats: debug: ", fmt, ap);
	va_end(ap);
}

static int take_verbose(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	cli_set_verbose(true);
	return 0;
}

static int take_help(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	return OPT_ROW_STOP;
}

static const struct opt_row verbose_row[] = { { "verbose", 'v', no_argument, take_verbose, 0,
	    OPT_DOC(OUTPUT, "", "debug logging on stderr (libbpf, verifier, resolution)") } };
static const struct opt_row help_row[] = { { "help", 'h', no_argument, take_help, 0,
	    OPT_DOC(OUTPUT, "", "this help") } };
const struct opt_rows cli_verbose_rows = OPT_ROWS(verbose_row);
const struct opt_rows cli_help_rows = OPT_ROWS(help_row);
const struct opt_rows cli_no_rows = { NULL, 0 };

int cli_parse_rows(int argc, char **argv, const struct opt_use *uses, size_t n,
		   const char *shorts)
{
	struct err e = { 0 };
	int rc = opt_rows_parse(argc, argv, uses, n, shorts, &e);

	if (rc == OPT_ROW_STOP) {
		/* argv[0]: the command, or the program for `uprobestats [options] CONFIG` */
		cli_print_command_help(stdout, cli_command_find(argv[0]));
		return -1;
	}
	if (rc < 0) {
		if (e.msg[0])
			p_err("%s", e.msg);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

const char *cli_config_path(const char *arg, char *buf, size_t size)
{
	if (strchr(arg, '/') || access(arg, F_OK) == 0)
		return arg;
	snprintf(buf, size, "%s%s", ANDROID_CONFIG_DIR, arg);
	return buf;
}

int cli_parse_config_format(const char *s, enum config_format *out)
{
	if (!strcmp(s, "text"))
		*out = CONFIG_FORMAT_TEXT;
	else if (!strcmp(s, "binary"))
		*out = CONFIG_FORMAT_BINARY;
	else if (!strcmp(s, "auto"))
		*out = CONFIG_FORMAT_AUTO;
	else {
		p_err("--config-format takes text, binary or auto, not '%s'", s);
		return -EINVAL;
	}
	return 0;
}

int cli_parse_config_era(const char *s, enum config_era *out)
{
	if (!strcmp(s, "b") || !strcmp(s, "B"))
		*out = CONFIG_ERA_B;
	else if (!strcmp(s, "current"))
		*out = CONFIG_ERA_CURRENT;
	else if (!strcmp(s, "auto"))
		*out = CONFIG_ERA_AUTO;
	else {
		p_err("--config-era takes b, current or auto, not '%s'", s);
		return -EINVAL;
	}
	return 0;
}

int cli_load_config(const char *arg, const struct config_load_opts *lo,
		    struct uprobestats_config **cfg)
{
	struct err e = { 0 };
	char buf[4096];

	if (config_load_file(cli_config_path(arg, buf, sizeof(buf)), lo, cfg, &e) < 0) {
		if (!cli_config_missing(arg, e.code))
			p_err("%s", e.msg);
		return EXIT_CONFIG;
	}
	p_debug("config %s: %s format, %s era", (*cfg)->source_name ? (*cfg)->source_name : arg,
		config_format_name((*cfg)->format), config_era_name((*cfg)->era));
	return EXIT_OK;
}

struct code_cache *cli_code_cache_new(void)
{
	struct code_cache *c = code_cache_new(NULL);

	if (!c)
		p_err("out of memory");
	return c;
}

void cli_code_cache_report(const struct code_cache *c)
{
	struct code_cache_stats st;
	struct art_debug_stats art;

	if (!c || c == state.code_said)
		return;
	state.code_said = c;
	code_cache_get_stats(c, &st);
	p_debug("code cache: %llu file(s) opened, %llu oat method table(s), %llu exit "
		"analyses", (unsigned long long)st.files_opened,
		(unsigned long long)st.oat_parsed, (unsigned long long)st.exits_analysed);
	code_cache_art_stats(c, &art);
	if (art.reads)
		p_debug("ART debugger interface: %llu read(s) (%llu raced and retried, %llu given "
			"up), %llu entries, %llu left out (unreadable, oversized, not ELF/dex), "
			"%llu list(s) cut (a loop or over %u entries)",
			(unsigned long long)art.reads, (unsigned long long)art.races,
			(unsigned long long)art.gave_up, (unsigned long long)art.entries,
			(unsigned long long)art.bad, (unsigned long long)art.loops,
			ART_MAX_ENTRIES);
	struct code_cache_track_stats ts;
	code_cache_get_track_stats(c, &ts);
	if (ts.mappings || ts.execs || ts.forks)
		p_debug("code cache: mapping records: %llu mapping(s), %llu exec(s), %llu fork(s)",
			(unsigned long long)ts.mappings, (unsigned long long)ts.execs,
			(unsigned long long)ts.forks);
}

void cli_code_cache_free(struct code_cache *c)
{
	cli_code_cache_report(c);
	state.code_said = NULL;
	code_cache_free(c);
}

#define HINT_SIZE 4096

static const char *known_programs(void *ctx)
{
	char *buf = ctx;
	if (!buf[0])
		catalog_program_names(buf, HINT_SIZE);
	return buf;
}

int cli_validate(const struct uprobestats_config *cfg, const struct guardrail_opts *g,
		 bool pid_given)
{
	char hint[HINT_SIZE] = "";
	struct config_catalog cat = {
		.has_program = catalog_has_program,
		.has_map = catalog_has_map,
		.known_programs_hint = known_programs,
		.ctx = hint,
	};
	struct config_validate_opts vo = { .catalog = &cat, .pid_given = pid_given };
	struct config_problems problems = { 0 };

	if (config_validate(cfg, &vo, &problems) < 0 ||
	    config_guardrail_check(cfg, g, &problems) < 0) {
		p_err("out of memory validating the config");
		return EXIT_CONFIG;
	}
	if (problems.n)
		config_print_problems(stderr, cfg, &problems);
	return problems.n_errors ? EXIT_CONFIG : EXIT_OK;
}

void cli_android_guardrail(struct android_info *info, struct guardrail_opts *g)
{
	android_info_read(NULL, info);
	g->on_android = info->on_android;
	g->build_type = info->build_type[0] ? info->build_type : NULL;
	if (info->on_android)
		p_debug("Android sdk %s, build type %s, abi %s (properties from %s)",
			info->sdk[0] ? info->sdk : "?",
			info->build_type[0] ? info->build_type : "?",
			info->abi[0] ? info->abi : "?", props_source_name(info->source));
	if (info->problem[0])
		p_debug("properties: %s", info->problem);
}
