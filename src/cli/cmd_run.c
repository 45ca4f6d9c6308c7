/* cmd_run.c — `uprobestats run CONFIG` (and the bare `uprobestats CONFIG`):
 * config -> validation -> plan -> loaded programs -> sinks -> loop -> summary. */
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
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
#include "cli/held_cmd.h"
#include "cli/self_atoms.h"
#include "code/codecache.h"
#include "common/arena.h"
#include "common/parse_u32.h"
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


/* --interval: an aggregation's flush period, up to a day. */
#define INTERVAL_MAX_S 86400

/* The same pid twice would attach twice and report every call twice. */
static int add_pid(struct run_opts *o, pid_t pid, struct err *e)
{
	for (size_t i = 0; i < o->n_pids; i++) {
		if (o->pids[i] != pid)
			continue;
		if (!(o->dup_pid_said++))
			p_warn("--pid %d is given more than once; it is traced once", (int)pid);
		return 0;
	}
	if (o->n_pids == MAX_PIDS)
		return err_set(e, -E2BIG, "at most %d --pid options", MAX_PIDS);
	o->pids[o->n_pids++] = pid;
	return 0;
}

#define RUN(ctx) ((struct run_opts *)(ctx))

static int take_pid(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	uint32_t v;

	if (parse_u32_arg(arg, 1, INT32_MAX, "--pid", "a process id", &v, e) < 0)
		return -EINVAL;
	return add_pid(ctx, (pid_t)v, e);
}

/* --duration 10 (seconds), 500ms, 10s, 5m, 1h. */
static int take_duration(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	static const struct { const char *unit; uint64_t ms; } units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 }, { "", 1000 },
	};
	size_t digits = strspn(arg, "0123456789");
	char num[16];
	uint32_t v;

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(arg + digits, units[i].unit))
			continue;
		uint64_t ms;
		if (!digits || digits >= sizeof(num))
			break;
		memcpy(num, arg, digits);
		num[digits] = '\0';
		if (parse_u32(num, 1, UINT32_MAX, &v) < 0)
			break;
		ms = v * units[i].ms;
		if (ms / 1000 >= INT32_MAX)
			break;
		RUN(ctx)->duration_ms = ms;
		RUN(ctx)->duration = (int32_t)((ms + 999) / 1000);
		return 0;
	}
	return err_set(e, -EINVAL, "--duration takes a time like 10 (seconds), 500ms, 10s, 5m "
		       "or 1h, not '%s'", arg);
}

/* A ring buffer's size is a power of two (the kernel's rule; a perf
 * buffer's pages too): anything else is refused, never rounded silently. */
static int take_ringbuf(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	uint32_t v, up = 4096;
	int rc = parse_u32_arg(arg, 4096, 1u << 30, "--ringbuf-size", "a power of two of bytes",
			       &v, e);

	if (rc < 0)
		return rc;
	if (v & (v - 1)) {
		while (up < v)
			up <<= 1;
		return err_set(e, -EINVAL, "--ringbuf-size takes a power of two of bytes from "
			       "4096 to 1073741824, not '%s' (the nearest above: %u)", arg, up);
	}
	RUN(ctx)->ringbuf_size = v;
	return 0;
}

static int take_flush(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	return parse_u32_arg(arg, 1, FLUSH_MAX_MS, "--flush-ms", "milliseconds",
			     &RUN(ctx)->flush_ms, e);
}

static int take_interval(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	return parse_u32_arg(arg, 1, INTERVAL_MAX_S, "--interval", "seconds",
			     &RUN(ctx)->agg_interval, e);
}

static int take_polled_atom(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	return parse_u32_arg(arg, 1, INT32_MAX, "--polled-atom", "an atom id",
			     &RUN(ctx)->polled_atom, e);
}

static int take_attached_atom(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	return parse_u32_arg(arg, 1, INT32_MAX, "--attached-atom", "an atom id",
			     &RUN(ctx)->attached_atom, e);
}

static int take_error_atom(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	return parse_u32_arg(arg, 1, INT32_MAX, "--error-atom", "an atom id",
			     &RUN(ctx)->error_atom, e);
}

static int take_target_kernel(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	if (kfeatures_parse_version(arg, &RUN(ctx)->target_kernel, e) < 0) {
		err_prefix(e, "--target-kernel");
		return -EINVAL;
	}
	return 0;
}

static int take_atom_mapping(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	if (strcmp(arg, "newest") && strcmp(arg, "cpp"))
		return err_set(e, -EINVAL, "--atom-mapping takes newest or cpp, not '%s'", arg);
	RUN(ctx)->atom_int32_args = !strcmp(arg, "cpp");
	return 0;
}

static int take_config_format(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	return cli_parse_config_format(arg, &RUN(ctx)->load.format);
}

static int take_config_era(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	return cli_parse_config_era(arg, &RUN(ctx)->load.era);
}

static int take_guardrail(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	if (guardrail_mode_parse(arg, &RUN(ctx)->guardrail.mode) < 0)
		return err_set(e, -EINVAL, "--guardrail takes auto, off or user, not '%s'", arg);
	return 0;
}

static int take_guardrail_list(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	if (guardrail_list_parse(arg, &RUN(ctx)->guardrail.list) < 0)
		return err_set(e, -EINVAL, "--guardrail-list takes newest, cpp-v1, cpp-v2 or rust, "
			       "not '%s'", arg);
	return 0;
}

static int take_force_perfbuf(void *ctx, const struct opt_row *row, const char *arg,
			      struct err *e)
{
	RUN(ctx)->output_mode = OUTPUT_PERFBUF;
	return 0;
}

#define SET_TRUE(member) OPT_TRUE(struct run_opts, member)

/* The run's own options; the output and stack options (sink/sink_args.h,
 * stack/stack_args.h) come before them.  -p is --pid where a command
 * lists it (trace, sections, traffic). */
static const struct opt_row run_row_v[] = {
	{ "duration", 0, required_argument, take_duration, 0,
	  OPT_DOC(TRACE, "T", "run T from attach: seconds, or 500ms, 10s, 5m, 1h (overrides the config's duration_seconds)") },
	{ "pid", 'p', required_argument, take_pid, 0,
	  OPT_DOC(TRACE, "N", "probe this process (repeatable; overrides target_process_name)") },
	{ "command", 'c', required_argument, OPT_STR(struct run_opts, command),
	  OPT_DOC(TRACE, "'CMD ARGS'", "start CMD, held before its exec until every probe is attached for it; the run ends when it exits, with its exit status") },
	{ "all-matches", 0, no_argument, SET_TRUE(all_matches),
	  OPT_DOC(TRACE, "", "every process whose name matches, not just the first") },
	{ "ringbuf-size", 0, required_argument, take_ringbuf, 0,
	  OPT_DOC(ADVANCED, "BYTES", "per output buffer, a power of two (default 4 MiB, 16 MiB with stacks)") },
	{ "flush-ms", 0, required_argument, take_flush, 0,
	  OPT_DOC(ADVANCED, "MS", "drain period: bounds event latency (1..10000, default 100)") },
	{ "bpf-pid-filter", 0, no_argument, SET_TRUE(bpf_pid_filter),
	  OPT_DOC(ADVANCED, "", "also filter by pid inside the BPF program") },
	{ "quiet", 0, no_argument, SET_TRUE(quiet), OPT_DOC(OUTPUT, "", "no summary on stderr") },
	{ "force-perfbuf", 0, no_argument, take_force_perfbuf, 0,
	  OPT_DOC(ADVANCED, "", "perf event array output even where ring buffers exist") },
	{ "force-ringbuf", 0, no_argument, SET_TRUE(forced_ringbuf),
	  OPT_DOC(ADVANCED, "", "ring buffer output or fail (kernels before 5.8 have none)") },
	{ "force-tracefs", 0, no_argument, SET_TRUE(force_tracefs),
	  OPT_DOC(ADVANCED, "", "attach through tracefs uprobe_events, not the uprobe PMU (the path before 4.17)") },
	{ "force-pmu", 0, no_argument, SET_TRUE(force_pmu),
	  OPT_DOC(ADVANCED, "", "attach through uprobe PMU perf events, not uprobe_multi links (the path before 6.6; slower to detach)") },
	{ "unsafe-any-symbol", 0, no_argument, SET_TRUE(unsafe_any_symbol),
	  OPT_DOC(ADVANCED, "", "probe ELF symbols that are not functions, or not proven instruction starts: may corrupt the target") },
	{ "exit-probes", 0, no_argument, SET_TRUE(exit_probes),
	  OPT_DOC(ADVANCED, "", "the default: returns by plain uprobes at the entry and every return instruction, Java and native; with it, exits that cannot be proven are refused even behind --unsafe-uretprobe") },
	{ "unsafe-uretprobe", 0, no_argument, SET_TRUE(unsafe_uretprobe),
	  OPT_DOC(ADVANCED, "", "use a uretprobe where a probe sets exit_probes: false or its exits cannot be proven. DANGEROUS: it rewrites the return address: a C++ exception or longjmp through the function aborts the program, and ART, which walks its stack by it, aborts or visits wrong GC roots (in system_server: a phone restart)") },
	{ "target-kernel", 0, required_argument, take_target_kernel, 0,
	  OPT_DOC(ADVANCED, "VERSION", "load only what a kernel of VERSION (like 4.19) accepts: its objects (legacy before 5.5), output and attach path") },
	{ "interval", 0, required_argument, take_interval, 0,
	  OPT_DOC(OUTPUT, "S", "print and clear the counts every S seconds (and at exit)") },
	{ "polled-atom", 0, required_argument, take_polled_atom, 0,
	  OPT_DOC(ANDROID, "ID", "at exit, one \"map polled\" atom per task and map, like upstream's self-metric") },
	{ "attached-atom", 0, required_argument, take_attached_atom, 0,
	  OPT_DOC(ANDROID, "ID", "after attaching, one \"probe attached\" atom per probe") },
	{ "error-atom", 0, required_argument, take_error_atom, 0,
	  OPT_DOC(ANDROID, "ID", "an \"internal error\" atom per task when attaching or polling fails") },
	{ "atom-mapping", 0, required_argument, take_atom_mapping, 0,
	  OPT_DOC(ANDROID, "newest|cpp", "call_detail atom fields as Int64 (newest, Rust) or Int32 (the C++ handlers)") },
	{ "config-format", 0, required_argument, take_config_format, 0,
	  OPT_DOC(ADVANCED, "text|binary|auto", "how CONFIG is read (default auto)") },
	{ "config-era", 0, required_argument, take_config_era, 0,
	  OPT_DOC(ADVANCED, "b|current|auto", "the field numbering of an old binary CONFIG: b (target_process_name 2, duration_seconds 3) or current (default: detected)") },
	{ "guardrail", 0, required_argument, take_guardrail, 0,
	  OPT_DOC(ANDROID, "auto|off|user", "the user-build method allowlist (auto: on on Android user builds)") },
	{ "guardrail-list", 0, required_argument, take_guardrail_list, 0,
	  OPT_DOC(ANDROID, "newest|cpp-v1|cpp-v2|rust", "which release's allowlist") },
};

const struct opt_rows run_rows = OPT_ROWS(run_row_v);

/* `run`'s own: -n NAME for the config's target_process_name (trace,
 * sections and traffic have their own -n). */
static const struct opt_row run_only_row_v[] = {
	{ "name", 'n', required_argument, OPT_STR(struct run_opts, process_name),
	  OPT_DOC(TRACE, "NAME", "probe the process of this name (overrides target_process_name)") },
};

const struct opt_rows run_only_rows = OPT_ROWS(run_only_row_v);

int run_start_command(struct run_opts *o, const char *name, struct held_cmd *h)
{
	int rc;

	if (!o->command)
		return EXIT_OK;
	if (o->n_pids || name) {
		p_err("-c starts the process to trace: give it without -p/--pid and -n/--name");
		return EXIT_USAGE;
	}
	if ((rc = held_cmd_start(o->command, h)) != EXIT_OK)
		return rc;
	o->held = h;
	o->pids[0] = h->pid;
	o->n_pids = 1;
	return EXIT_OK;
}

int run_opts_check(struct run_opts *o)
{
	char warning[PATH_MAX + 128];

	if (sink_args_settle(&o->sinks, warning, sizeof(warning)))
		p_warn("%s", warning);
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
	if (o->stacks.folded_merge && !o->stacks.folded) {
		p_err("--stacks-merge merges the stacks --stacks FILE writes: give --stacks FILE");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

void run_opts_plan_stacks(const struct stack_args *a, struct plan_opts *po)
{
	po->stack_frames = a->frames;
	po->stack_mode = a->mode;
	po->stack_bytes = a->bytes;
	po->stack_art_frames = a->art_frames;
}

/* Where in o a table of RUN_TABLES puts its values (NULL: it keeps none). */
static void *run_table_ctx(const struct opt_rows *t, struct run_opts *o)
{
	if (t == &sink_args_rows)
		return &o->sinks;
	if (t == &stack_args_rows)
		return &o->stacks;
	if (t == &run_rows)
		return o;
	return NULL;
}

size_t run_opts_uses(struct run_opts *o, const struct opt_rows *own, void *ctx,
		     struct opt_use uses[CLI_MAX_TABLES])
{
	static const struct opt_rows *const tables[] = { RUN_TABLES };
	size_t n = 0;

	_Static_assert(sizeof(tables) / sizeof(tables[0]) < CLI_MAX_TABLES, "too many tables");
	for (; n < sizeof(tables) / sizeof(tables[0]); n++)
		uses[n] = (struct opt_use){ tables[n], run_table_ctx(tables[n], o) };
	uses[n++] = (struct opt_use){ own ? own : &cli_no_rows, ctx };
	return n;
}

int run_opts_parse_cmd(int argc, char **argv, const struct opt_rows *own, void *ctx,
		       const char *shorts, struct run_opts *o)
{
	struct opt_use uses[CLI_MAX_TABLES];
	size_t n = run_opts_uses(o, own, ctx, uses);
	int rc = cli_parse_rows(argc, argv, uses, n, shorts);

	return rc == EXIT_OK ? run_opts_check(o) : rc;
}

static int parse_run_opts(int argc, char **argv, struct run_opts *o)
{
	int rc = run_opts_parse_cmd(argc, argv, &run_only_rows, o, CLI_SHORTS_RUN, o);

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

/* -p, -n and -c replace every task's process selection: said once. */
static int override_processes(struct uprobestats_config *cfg, struct run_opts *o,
			      struct held_cmd *held)
{
	int rc = run_start_command(o, o->process_name, held);

	if (rc != EXIT_OK)
		return rc;
	if (!o->n_pids && !o->process_name)
		return EXIT_OK;
	for (size_t i = 0; i < cfg->n_tasks && o->process_name; i++) {
		cfg->tasks[i].target_process_name = arena_strdup(cfg->arena, o->process_name);
		if (!cfg->tasks[i].target_process_name) {
			p_err("out of memory");
			return EXIT_RUNTIME;
		}
	}
	if (cfg->n_tasks)
		p_info("%s%s replaces the config's process selection (%s)",
		       o->held ? "-c" : o->process_name ? "-n " : "-p",
		       o->held || !o->process_name ? "" : o->process_name,
		       cfg->tasks[0].target_process_name ? cfg->tasks[0].target_process_name
		       : "no target_process_name");
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
	struct held_cmd held;
	cli_android_guardrail(&android, &o.guardrail);
	o.on_android = android.on_android;
	rc = override_processes(cfg, &o, &held);
	if (rc == EXIT_OK)
		rc = cli_validate(cfg, &o.guardrail, o.n_pids > 0);
	if (rc != EXIT_OK) {
		config_free(cfg);
		return held_cmd_finish(o.held, rc);
	}
	struct plan_opts po = { .pids = o.pids, .n_pids = o.n_pids, .all_matches = o.all_matches,
				.held = o.held != NULL, .root = o.held ? o.held->root : NULL,
				.unsafe_any_symbol = o.unsafe_any_symbol,
				.duration_override = o.duration,
				.duration_override_ms = o.duration_ms,
				.atom_int32_args = o.atom_int32_args, .exit_probes = o.exit_probes,
				.unsafe_uretprobe = o.unsafe_uretprobe };
	run_opts_plan_stacks(&o.stacks, &po);
	/* one code cache for the plan and the session: each file parsed once */
	if (!(po.code = o.code = cli_code_cache_new())) {
		config_free(cfg);
		return held_cmd_finish(o.held, EXIT_RUNTIME);
	}
	if (plan_build(cfg, &po, &plan, &e) < 0) {
		p_err("%s", e.msg);
		cli_code_cache_free(o.code);
		config_free(cfg);
		return held_cmd_finish(o.held, e.code == -ESRCH ? EXIT_NO_TARGET
				       : e.code == PLAN_REFUSED ? EXIT_CONFIG
				       : e.code == PLAN_BAD_POSITION ? EXIT_CONFIG : EXIT_RESOLVE);
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
	cli_code_cache_free(o.code);
	config_free(cfg);
	return held_cmd_finish(o.held, rc);
}
