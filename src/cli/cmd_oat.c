/* cmd_oat.c — `uprobestats methods FILE` and `uprobestats resolve FILE SIG`:
 * the built-in oat reader as a fast oatdump replacement. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd_match.h"
#include "plan/pattern.h"
#include "resolve/methods_cmd.h"

#define MAX_DEX_FILES 32

enum { OPT_FILTER = 256, OPT_JSON, OPT_DEX_FILE, OPT_RESOLVER, OPT_OATDUMP, OPT_NO_CACHE,
       OPT_CACHE_DIR, OPT_PID, OPT_MATCH };

static const struct option long_opts[] = {
	{ "filter", required_argument, NULL, OPT_FILTER },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "dex-file", required_argument, NULL, OPT_DEX_FILE },
	{ "resolver", required_argument, NULL, OPT_RESOLVER },
	{ "oatdump", required_argument, NULL, OPT_OATDUMP },
	{ "no-cache", no_argument, NULL, OPT_NO_CACHE },
	{ "cache-dir", required_argument, NULL, OPT_CACHE_DIR },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "match", required_argument, NULL, OPT_MATCH },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

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

static int parse(int argc, char **argv, struct oat_cli *o, int want_args)
{
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_FILTER: o->filter = optarg; break;
		case OPT_JSON: o->json = true; break;
		case OPT_DEX_FILE:
			if (o->n_dex_files == MAX_DEX_FILES) {
				p_err("at most %d --dex-file options", MAX_DEX_FILES);
				return EXIT_USAGE;
			}
			o->dex_files[o->n_dex_files++] = optarg;
			break;
		case OPT_RESOLVER:
			if (java_resolver_mode_parse(optarg, &o->mode) < 0) {
				p_err("--resolver takes auto, builtin or oatdump, not '%s'",
				      optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_OATDUMP: o->oatdump = optarg; break;
		case OPT_NO_CACHE: o->no_cache = true; break;
		case OPT_CACHE_DIR: o->cache_dir = optarg; break;
		case OPT_MATCH: o->match = optarg; break;
		case OPT_PID:
			if (!cli_parse_range(optarg, 0, INT32_MAX, &o->pid, "--pid", "a process id"))
				return EXIT_USAGE;
			break;
		case 'v': cli_set_verbose(true); break;
		case 'h': cmd_help(0, NULL); return -1;
		default: return EXIT_USAGE;
		}
	}
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
	rc = single ? resolve_pattern_cmd(&mo, stdout, &e) : methods_match_cmd(&mo, stdout, &e);
	fflush(stdout);
	return report(rc, &e);
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
	};
	rc = methods_cmd(&mo, stdout, &e);
	fflush(stdout);
	return report(rc, &e);
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
	};
	rc = resolve_cmd(&ro, stdout, &e);
	fflush(stdout);
	return report(rc, &e);
}
