/* cmd_oat.c — `uprobestats methods FILE` and `uprobestats resolve FILE SIG`:
 * the built-in oat reader as a fast oatdump replacement.  Each form, with a
 * pattern or not, reads the files through the command's one code cache. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd_match.h"
#include "common/parse_u32.h"
#include "plan/pattern.h"
#include "resolve/methods_cmd.h"

#define MAX_DEX_FILES 32

struct oat_cli {
	const char *filter;
	bool json;
	const char *dex_files[MAX_DEX_FILES];
	size_t n_dex_files;
	enum java_resolver_mode mode;
	const char *oatdump;
	bool no_cache;
	const char *cache_dir;
	uint32_t pid;
	const char *match;
};

#define OAT(ctx) ((struct oat_cli *)(ctx))

static int take_dex_file(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	struct oat_cli *o = ctx;

	if (o->n_dex_files == MAX_DEX_FILES)
		return err_set(e, -E2BIG, "at most %d --dex-file options", MAX_DEX_FILES);
	o->dex_files[o->n_dex_files++] = arg;
	return 0;
}

static int take_resolver(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	if (java_resolver_mode_parse(arg, &OAT(ctx)->mode) < 0)
		return err_set(e, -EINVAL, "--resolver takes auto, builtin or oatdump, not '%s'",
			       arg);
	return 0;
}

static int take_pid(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	return parse_u32_arg(arg, 0, INT32_MAX, "--pid", "a process id", &OAT(ctx)->pid, e);
}

/* --format json|text, as the commands that write events take it. */
static int take_format(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	if (strcmp(arg, "json") && strcmp(arg, "text"))
		return err_set(e, -EINVAL, "--format takes text or json, not '%s'", arg);
	OAT(ctx)->json = !strcmp(arg, "json");
	return 0;
}

#define KEEP_STR(member) OPT_STR(struct oat_cli, member)
#define SET_TRUE(member) OPT_TRUE(struct oat_cli, member)

static const struct opt_row oat_row_v[] = {
	{ "filter", 0, required_argument, KEEP_STR(filter),
	  OPT_DOC(TRACE, "TEXT", "methods: only the methods whose signature contains TEXT") },
	{ "json", 0, no_argument, SET_TRUE(json),
	  OPT_DOC(OUTPUT, "", "JSON instead of text (with each method's frame and exit sites)") },
	{ "format", 0, required_argument, take_format, 0,
	  OPT_DOC(OUTPUT, "text|json", "text (the default) or JSON (as --json)") },
	{ "dex-file", 0, required_argument, take_dex_file, 0,
	  OPT_DOC(ADVANCED, "JAR", "where to find the dex when it is not next to the oat") },
	{ "resolver", 0, required_argument, take_resolver, 0,
	  OPT_DOC(ADVANCED, "auto|builtin|oatdump", "the built-in reader, oatdump, or built-in first") },
	{ "oatdump", 0, required_argument, KEEP_STR(oatdump),
	  OPT_DOC(ADVANCED, "PATH", "the oatdump binary (default: oatdump on PATH)") },
	{ "no-cache", 0, no_argument, SET_TRUE(no_cache),
	  OPT_DOC(ADVANCED, "", "do not use the class -> file index cache of the search") },
	{ "cache-dir", 0, required_argument, KEEP_STR(cache_dir),
	  OPT_DOC(ADVANCED, "DIR", "where that cache lives") },
	{ "pid", 0, required_argument, take_pid, 0,
	  OPT_DOC(TRACE, "N", "search what process N has mapped (with FILE '-', or no FILE)") },
	{ "match", 0, required_argument, KEEP_STR(match),
	  OPT_DOC(TRACE, "PATTERN", "methods: what PATTERN matches, and what it leaves out and why") },
};

const struct opt_rows oat_rows = OPT_ROWS(oat_row_v);

static int parse(int argc, char **argv, struct oat_cli *o, int want_args)
{
	const struct opt_use uses[] = {
		{ &oat_rows, o }, { &cli_verbose_rows, NULL }, { &cli_help_rows, NULL },
	};
	int rc = cli_parse_rows(argc, argv, uses, sizeof(uses) / sizeof(uses[0]), CLI_SHORTS_OAT);

	if (rc != EXIT_OK)
		return rc;
	if (o->match && want_args == 1 && argc - optind == 0)
		return EXIT_OK;   /* methods --match PATTERN [--pid N] without FILE */
	if (argc - optind != want_args) {
		p_err("expected %d argument%s, found %d (see uprobestats --help)", want_args,
		      want_args == 1 ? "" : "s", argc - optind);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

static int report(int rc, const struct err *e)
{
	if (rc == 0)
		return EXIT_OK;
	p_err("%s", e->msg);
	return EXIT_RESOLVE;
}

/* The output flushed, the code cache let go (-v: what it did), the error said. */
static int done(int rc, struct code_cache *code, const struct err *e)
{
	fflush(stdout);
	cli_code_cache_free(code);
	return report(rc, e);
}

/* A pattern that does not parse is a usage error (exit 2), one line. */
static bool pattern_ok(const char *text)
{
	struct trace_pattern *p;
	struct err e = { 0 };

	if (pattern_parse(text, &p, &e)) {
		p_err("%s", e.msg);
		return false;
	}
	pattern_free(p);
	return true;
}

static int match_cmd(const struct oat_cli *o, const char *pattern, const char *file,
		     bool single)
{
	struct err e = { 0 };
	struct match_cmd_opts mo = {
		.pattern = pattern, .file = file, .pid = (int)o->pid, .json = o->json,
		.cache_dir = o->cache_dir, .no_cache = o->no_cache,
	};
	int rc;

	if (!pattern_ok(pattern))
		return EXIT_USAGE;
	/* one code cache for the matching and the exit sites it prints */
	if (!(mo.code = cli_code_cache_new()))
		return EXIT_RUNTIME;
	rc = single ? resolve_pattern_cmd(&mo, stdout, &e) : methods_match_cmd(&mo, stdout, &e);
	return done(rc, mo.code, &e);
}

int cmd_methods(int argc, char **argv)
{
	struct oat_cli o = { 0 };
	struct err e = { 0 };
	int rc = parse(argc, argv, &o, 1);

	if (rc != EXIT_OK)
		return rc < 0 ? EXIT_OK : rc;
	if (o.match)
		return match_cmd(&o, o.match, optind < argc ? argv[optind] : NULL, false);
	struct methods_cmd_opts mo = {
		.file = argv[optind], .filter = o.filter, .json = o.json, .verbose = cli_verbose(),
		.dex_files = o.dex_files, .n_dex_files = o.n_dex_files,
		.code = cli_code_cache_new(),
	};
	if (!mo.code)
		return EXIT_RUNTIME;
	return done(methods_cmd(&mo, stdout, &e), mo.code, &e);
}

/* resolve FILE SIG, or resolve SIG with --pid/search (FILE "-" also searches). */
int cmd_resolve(int argc, char **argv)
{
	struct oat_cli o = { 0 };
	struct err e = { 0 };
	int rc = parse(argc, argv, &o, 2);

	if (rc != EXIT_OK)
		return rc < 0 ? EXIT_OK : rc;
	if (resolve_arg_is_pattern(argv[optind + 1]))
		return match_cmd(&o, argv[optind + 1],
				 strcmp(argv[optind], "-") ? argv[optind] : NULL, true);
	struct resolve_cmd_opts ro = {
		.file = strcmp(argv[optind], "-") ? argv[optind] : NULL,
		.signature = argv[optind + 1], .json = o.json, .verbose = cli_verbose(),
		.mode = o.mode, .oatdump_path = o.oatdump,
		.dex_files = o.dex_files, .n_dex_files = o.n_dex_files,
		.search = { .pid = (int)o.pid, .cache_dir = o.cache_dir, .no_cache = o.no_cache,
			    .dex_files = o.dex_files, .n_dex_files = o.n_dex_files },
		.code = cli_code_cache_new(),
	};
	if (!ro.code)
		return EXIT_RUNTIME;
	return done(resolve_cmd(&ro, stdout, &e), ro.code, &e);
}
