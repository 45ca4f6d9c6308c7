/* cmd_run.c — `uprobestats run CONFIG` (and the bare `uprobestats CONFIG`):
 * config -> validation -> plan -> loaded programs -> sinks -> loop -> summary. */
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cmd_run.h"
#include "cli/self_atoms.h"
#include "code/codecache.h"
#include "config/guardrail.h"
#include "plan/plan.h"
#include "probe/accounting.h"
#include "probe/loop.h"
#include "probe/session.h"
#include "plan/aggregation.h"
#include "plan/exits.h"
#include "probe/aggregate.h"
#include "sink/histogram.h"
#include "sink/sink_args.h"
#include "stack/stack_args.h"
#include "sink/sinks.h"
#include "sink/statsd_atoms.h"
#include "sys/kfeatures.h"
#include "sys/privilege.h"
#include "sys/properties.h"

/* --flush-ms: the drain period bounds latency and the ring buffer must hold
 * a period's records; past 10 s neither makes sense. */
#define FLUSH_MAX_MS 10000

enum {
	OPT_DURATION = 256, OPT_PID, OPT_ALL_MATCHES, OPT_RINGBUF, OPT_FLUSH, OPT_BPF_PID_FILTER,
	OPT_QUIET, OPT_FORCE_PERFBUF, OPT_FORCE_RINGBUF, OPT_CONFIG_FORMAT, OPT_CONFIG_ERA,
	OPT_GUARDRAIL, OPT_GUARDRAIL_LIST, OPT_FORCE_TRACEFS, OPT_FORCE_PMU, OPT_POLLED_ATOM,
	OPT_ATOM_MAPPING, OPT_UNSAFE_ANY_SYMBOL, OPT_EXIT_PROBES, OPT_UNSAFE_URETPROBE,
	OPT_ATTACHED_ATOM, OPT_ERROR_ATOM, OPT_TARGET_KERNEL, OPT_INTERVAL,
};

/* --interval: an aggregation's flush period, up to a day. */
#define INTERVAL_MAX_S 86400

/* The run's own options; the output options (sink/sink_args.h) come first. */
static const struct option run_long_opts[] = {
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "all-matches", no_argument, NULL, OPT_ALL_MATCHES },
	{ "ringbuf-size", required_argument, NULL, OPT_RINGBUF },
	{ "flush-ms", required_argument, NULL, OPT_FLUSH },
	{ "bpf-pid-filter", no_argument, NULL, OPT_BPF_PID_FILTER },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "force-perfbuf", no_argument, NULL, OPT_FORCE_PERFBUF },
	{ "force-ringbuf", no_argument, NULL, OPT_FORCE_RINGBUF },
	{ "force-tracefs", no_argument, NULL, OPT_FORCE_TRACEFS },
	{ "force-pmu", no_argument, NULL, OPT_FORCE_PMU },
	{ "unsafe-any-symbol", no_argument, NULL, OPT_UNSAFE_ANY_SYMBOL },
	{ "exit-probes", no_argument, NULL, OPT_EXIT_PROBES },
	{ "unsafe-uretprobe", no_argument, NULL, OPT_UNSAFE_URETPROBE },
	{ "target-kernel", required_argument, NULL, OPT_TARGET_KERNEL },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "polled-atom", required_argument, NULL, OPT_POLLED_ATOM },
	{ "attached-atom", required_argument, NULL, OPT_ATTACHED_ATOM },
	{ "error-atom", required_argument, NULL, OPT_ERROR_ATOM },
	{ "atom-mapping", required_argument, NULL, OPT_ATOM_MAPPING },
	{ "config-format", required_argument, NULL, OPT_CONFIG_FORMAT },
	{ "config-era", required_argument, NULL, OPT_CONFIG_ERA },
	{ "guardrail", required_argument, NULL, OPT_GUARDRAIL },
	{ "guardrail-list", required_argument, NULL, OPT_GUARDRAIL_LIST },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* The same pid twice would attach twice and report every call twice. */
static int add_pid(struct run_opts *o, pid_t pid)
{
	for (size_t i = 0; i < o->n_pids; i++) {
		if (o->pids[i] != pid)
			continue;
		if (!(o->dup_pid_said++))
			p_warn("--pid %d is given more than once; it is traced once", (int)pid);
		return EXIT_OK;
	}
	if (o->n_pids == MAX_PIDS) {
		p_err("at most %d --pid options", MAX_PIDS);
		return EXIT_USAGE;
	}
	o->pids[o->n_pids++] = pid;
	return EXIT_OK;
}

static int parse_value_opt(int c, struct run_opts *o)
{
	uint32_t v;
	struct err e = { 0 };
	int taken = sink_args_parse(&o->sinks, c, optarg, &e);

	if (!taken)
		taken = stack_args_parse(&o->stacks, c, optarg, &e);

	if (taken) {
		if (taken < 0)
			p_err("%s", e.msg);
		return taken < 0 ? EXIT_USAGE : EXIT_OK;
	}
	switch (c) {
	case OPT_TARGET_KERNEL:
		if (kfeatures_parse_version(optarg, &o->target_kernel, &e) < 0) {
			p_err("--target-kernel: %s", e.msg);
			return EXIT_USAGE;
		}
		return EXIT_OK;
	case OPT_DURATION:
		if (!cli_parse_range(optarg, 1, INT32_MAX, &v, "--duration", "seconds"))
			return EXIT_USAGE;
		o->duration = (int32_t)v;
		return EXIT_OK;
	case OPT_PID:
		if (!cli_parse_range(optarg, 1, INT32_MAX, &v, "--pid", "a process id"))
			return EXIT_USAGE;
		return add_pid(o, (pid_t)v);
	case OPT_RINGBUF:
		return cli_parse_u32(optarg, &o->ringbuf_size, "bytes") ? EXIT_OK : EXIT_USAGE;
	case OPT_ATOM_MAPPING:
		if (strcmp(optarg, "newest") && strcmp(optarg, "cpp")) {
			p_err("--atom-mapping takes newest or cpp, not '%s'", optarg);
			return EXIT_USAGE;
		}
		o->atom_int32_args = !strcmp(optarg, "cpp");
		return EXIT_OK;
	case OPT_POLLED_ATOM:
		return cli_parse_range(optarg, 1, INT32_MAX, &o->polled_atom, "--polled-atom",
				       "an atom id") ? EXIT_OK : EXIT_USAGE;
	case OPT_ATTACHED_ATOM:
	case OPT_ERROR_ATOM: {
		uint32_t *id = c == OPT_ATTACHED_ATOM ? &o->attached_atom : &o->error_atom;
		return cli_parse_range(optarg, 1, INT32_MAX, id, c == OPT_ATTACHED_ATOM
				       ? "--attached-atom" : "--error-atom", "an atom id")
		       ? EXIT_OK : EXIT_USAGE;
	}
	case OPT_INTERVAL:
		return cli_parse_range(optarg, 1, INTERVAL_MAX_S, &o->agg_interval, "--interval",
				       "seconds") ? EXIT_OK : EXIT_USAGE;
	case OPT_FLUSH:
		return cli_parse_range(optarg, 1, FLUSH_MAX_MS, &o->flush_ms, "--flush-ms",
				       "milliseconds") ? EXIT_OK : EXIT_USAGE;
	case OPT_CONFIG_FORMAT:
		return cli_parse_config_format(optarg, &o->load.format) ? EXIT_USAGE : EXIT_OK;
	case OPT_CONFIG_ERA:
		return cli_parse_config_era(optarg, &o->load.era) ? EXIT_USAGE : EXIT_OK;
	case OPT_GUARDRAIL:
		if (guardrail_mode_parse(optarg, &o->guardrail.mode) < 0) {
			p_err("--guardrail takes auto, off or user, not '%s'", optarg);
			return EXIT_USAGE;
		}
		return EXIT_OK;
	case OPT_GUARDRAIL_LIST:
		if (guardrail_list_parse(optarg, &o->guardrail.list) < 0) {
			p_err("--guardrail-list takes newest, cpp-v1, cpp-v2 or rust, not '%s'",
			      optarg);
			return EXIT_USAGE;
		}
		return EXIT_OK;
	}
	return RUN_OPT_NOT_MINE;
}

int run_opts_getopt(struct option *opts, size_t *n, size_t max)
{
	if (sink_args_getopt(opts, n, max) < 0 || stack_args_getopt(opts, n, max) < 0)
		return -ENOSPC;
	for (size_t i = 0; run_long_opts[i].name; i++) {
		if (*n + 1 >= max)
			return -ENOSPC;
		opts[(*n)++] = run_long_opts[i];
	}
	opts[*n] = (struct option){ 0 };
	return 0;
}

int run_opts_take(int c, struct run_opts *o)
{
	switch (c) {
	case OPT_ALL_MATCHES: o->all_matches = true; return EXIT_OK;
	case OPT_BPF_PID_FILTER: o->bpf_pid_filter = true; return EXIT_OK;
	case OPT_QUIET: o->quiet = true; return EXIT_OK;
	case OPT_FORCE_PERFBUF: o->output_mode = OUTPUT_PERFBUF; return EXIT_OK;
	case OPT_FORCE_RINGBUF: o->forced_ringbuf = true; return EXIT_OK;
	case OPT_FORCE_TRACEFS: o->force_tracefs = true; return EXIT_OK;
	case OPT_FORCE_PMU: o->force_pmu = true; return EXIT_OK;
	case OPT_UNSAFE_ANY_SYMBOL: o->unsafe_any_symbol = true; return EXIT_OK;
	case OPT_EXIT_PROBES: o->exit_probes = true; return EXIT_OK;
	case OPT_UNSAFE_URETPROBE: o->unsafe_uretprobe = true; return EXIT_OK;
	case 'v': cli_set_verbose(true); return EXIT_OK;
	case 'h': return RUN_OPT_HELP;
	case '?': return EXIT_USAGE;
	}
	return parse_value_opt(c, o);
}

int run_opts_check(struct run_opts *o)
{
	if (o->output_mode == OUTPUT_PERFBUF && o->forced_ringbuf) {
		p_err("--force-perfbuf and --force-ringbuf contradict each other: give one");
		return EXIT_USAGE;
	}
	if (o->forced_ringbuf)
		o->output_mode = OUTPUT_RINGBUF;
	if (o->force_tracefs && o->force_pmu) {
		p_err("--force-tracefs and --force-pmu contradict each other: give one");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

void run_opts_plan_stacks(const struct stack_args *a, struct plan_opts *po)
{
	po->stack_frames = a->frames;
	po->stack_mode = a->mode;
	po->stack_bytes = a->bytes;
}

static int parse_run_opts(int argc, char **argv, struct run_opts *o)
{
	struct option long_opts[96];
	size_t n = 0;
	int c, rc;

	if (run_opts_getopt(long_opts, &n, sizeof(long_opts) / sizeof(long_opts[0])) < 0)
		return EXIT_USAGE;
	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", long_opts, NULL)) != -1) {
		rc = run_opts_take(c, o);
		if (rc == RUN_OPT_HELP) {
			cmd_help(0, NULL);
			return -1;
		}
		if (rc != EXIT_OK)
			return rc == RUN_OPT_NOT_MINE ? EXIT_USAGE : rc;
	}
	rc = run_opts_check(o);
	if (rc != EXIT_OK)
		return rc;
	if (optind != argc - 1) {
		if (optind >= argc)
			p_err("missing CONFIG (see uprobestats --help)");
		else
			p_err("unexpected argument '%s'", argv[optind + 1]);
		return EXIT_USAGE;
	}
	o->config = argv[optind];
	return EXIT_OK;
}

int run_opts_parse_with(int argc, char **argv, const struct option *own,
			int (*take)(int c, void *ctx), void *ctx, struct run_opts *o)
{
	struct option opts[96];
	size_t n = 0, n_own = 0;
	int c, rc;

	while (own[n_own].name)
		n_own++;
	if (run_opts_getopt(opts, &n, sizeof(opts) / sizeof(opts[0]) - n_own) < 0)
		return EXIT_USAGE;
	for (size_t i = 0; i <= n_own; i++)    /* with the zero row */
		opts[n++] = own[i];
	optind = 1;
	while ((c = getopt_long(argc, argv, "p:n:vh", opts, NULL)) != -1) {
		if (c == 'p') /* -p PID is run's --pid */
			for (size_t i = 0; opts[i].name; i++)
				if (!strcmp(opts[i].name, "pid"))
					c = opts[i].val;
		rc = run_opts_take(c, o);
		if (rc == RUN_OPT_HELP) {
			cmd_help(0, NULL);
			return -1;
		}
		if (rc == RUN_OPT_NOT_MINE)
			rc = take(c, ctx);
		if (rc != EXIT_OK)
			return rc;
	}
	return run_opts_check(o);
}

/* path's canonical form, also when the file does not exist yet (its
 * directory's, plus its name); false when even the directory is not there. */
static bool canonical_path(const char *path, char out[PATH_MAX])
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *slash = strrchr(path, '/');

	if (realpath(path, out))
		return true;
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path + (slash == path)), path);
	if (!realpath(dir, real))
		return false;
	return (size_t)snprintf(out, PATH_MAX, "%s/%s", real, slash ? slash + 1 : path) <
	       PATH_MAX;
}

/* Two paths naming one file: the same inode, or the same canonical path. */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	char ca[PATH_MAX], cb[PATH_MAX];

	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino &&
		       !S_ISCHR(sa.st_mode); /* /dev/null twice is fine */
	return canonical_path(a, ca) && canonical_path(b, cb) && !strcmp(ca, cb);
}

/* --output and --trace would interleave in one file; either one naming the
 * config would overwrite it before it is read. */
static int check_output_paths(const struct run_opts *o)
{
	char buf[4096];
	const char *cfg = cli_config_path(o->config, buf, sizeof(buf));

	if (o->sinks.output && o->sinks.trace && same_file(o->sinks.output, o->sinks.trace)) {
		p_err("--output and --trace both name %s: give each its own file", o->sinks.output);
		return EXIT_USAGE;
	}
	if (o->sinks.output && same_file(o->sinks.output, cfg)) {
		p_err("--output %s is the config file: writing events there would overwrite it",
		      o->sinks.output);
		return EXIT_USAGE;
	}
	if (o->sinks.trace && same_file(o->sinks.trace, cfg)) {
		p_err("--trace %s is the config file: writing the trace there would overwrite it",
		      o->sinks.trace);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int cmd_run(int argc, char **argv)
{
	struct run_opts o = { 0 };
	struct uprobestats_config *cfg;
	struct plan *plan;
	struct err e = { 0 };
	int rc = parse_run_opts(argc, argv, &o);

	if (rc != EXIT_OK)
		return rc < 0 ? EXIT_OK : rc;
	rc = check_output_paths(&o);
	if (rc != EXIT_OK)
		return rc;
	rc = cli_load_config(o.config, &o.load, &cfg);
	if (rc != EXIT_OK)
		return rc;
	struct android_info android;
	cli_android_guardrail(&android, &o.guardrail);
	o.on_android = android.on_android;
	rc = cli_validate(cfg, &o.guardrail, o.n_pids > 0);
	if (rc != EXIT_OK) {
		config_free(cfg);
		return rc;
	}
	struct plan_opts po = { .pids = o.pids, .n_pids = o.n_pids, .all_matches = o.all_matches,
				.unsafe_any_symbol = o.unsafe_any_symbol,
				.duration_override = o.duration,
				.atom_int32_args = o.atom_int32_args, .exit_probes = o.exit_probes,
				.unsafe_uretprobe = o.unsafe_uretprobe };
	run_opts_plan_stacks(&o.stacks, &po);
	/* one code cache for the plan and the session: each file parsed once */
	if (!(po.code = o.code = code_cache_new(NULL))) {
		p_err("out of memory");
		config_free(cfg);
		return EXIT_RUNTIME;
	}
	if (plan_build(cfg, &po, &plan, &e) < 0) {
		p_err("%s", e.msg);
		code_cache_free(o.code);
		config_free(cfg);
		return e.code == -ESRCH ? EXIT_NO_TARGET
		       : e.code == PLAN_REFUSED ? EXIT_CONFIG : EXIT_RESOLVE;
	}
	run_warn_unmapped(plan);
	for (size_t i = 0; i < plan->n_probes; i++)
		p_debug("probe %zu: %s +0x%" PRIx64 " (%s; %s)", i, plan->probe_by_id[i]->path,
			plan->probe_by_id[i]->offset, resolve_how_name(plan->probe_by_id[i]->how),
			plan->probe_by_id[i]->note);
	rc = run_check_privileges(&android);
	if (rc == EXIT_OK)
		rc = run_plan(plan, &o);
	plan_free(plan);
	code_cache_free(o.code);
	config_free(cfg);
	return rc;
}
