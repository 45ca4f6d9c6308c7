/* cmd_trace.c — `uprobestats trace [options] PATTERN...`: patterns matched
 * (plan/pattern.h) into methods, what was left out and why printed, the
 * plan source (plan/trace_plan.h) turning them into the config model and
 * locations, then either --emit-config writing that config, or the same
 * validation, plan, session, loop and sinks as `run` (cmd_run.h), with the
 * flat profile on stderr at exit. */
#include <elf.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd_run.h"
#include "cli/held_cmd.h"
#include "cli/trace_match.h"
#include "code/codecache.h"
#include "common/parse_u32.h"
#include "config/encode.h"
#include "config/textdump.h"
#include "plan/aggregation.h"
#include "plan/exits.h"
#include "plan/pattern.h"
#include "plan/trace_plan.h"
#include "sys/proc.h"
#include "sys/properties.h"

#define DEFAULT_MAX_PROBES 20000

struct trace_opts {
	struct run_opts run;
	struct trace_spec spec;
	const char *emit;            /* --emit-config FILE */
	enum config_format emit_format;
	uint32_t max_probes;
	char **patterns;
	size_t n_patterns;
};

#define TRACE(ctx) ((struct trace_opts *)(ctx))

static int take_args(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	return trace_args_parse(arg, &TRACE(ctx)->spec, e);
}

static int take_atom(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	uint32_t v;

	if (parse_u32_arg(arg, 1, INT32_MAX, "--atom", "an atom id", &v, e) < 0)
		return -EINVAL;
	TRACE(ctx)->spec.atom_id = v;
	return 0;
}

static int take_max_probes(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	return parse_u32_arg(arg, 1, UINT32_MAX, "--max-probes", "a probe count",
			     &TRACE(ctx)->max_probes, e);
}

/* --count, --by, --sum, --hist, --agg-keys: in-kernel aggregation. */
static int take_by(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	TRACE(ctx)->spec.agg.on = true;
	return trace_agg_parse_by(arg, &TRACE(ctx)->spec.agg, e);
}

static int take_sum(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	struct trace_agg *g = &TRACE(ctx)->spec.agg;

	g->on = true;
	return trace_agg_parse_value(arg, "--sum", &g->sum, &g->sum_arg, e);
}

static int take_hist(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	struct trace_agg *g = &TRACE(ctx)->spec.agg;

	g->on = true;
	return trace_agg_parse_value(arg, "--hist", &g->hist, &g->hist_arg, e);
}

static int take_agg_keys(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	struct trace_agg *g = &TRACE(ctx)->spec.agg;

	g->on = true;
	return parse_u32_arg(arg, 1, AGG_MAX_KEYS_LIMIT, "--agg-keys", "a key count",
			     &g->max_keys, e);
}

#define KEEP_STR(member) OPT_STR(struct trace_opts, member)
#define SET_TRUE(member) OPT_TRUE(struct trace_opts, member)

static const struct opt_row trace_row_v[] = {
	{ "ret", 0, no_argument, SET_TRUE(spec.ret),
	  OPT_DOC(TRACE, "", "exit probes too: the return value and duration of each call (never a uretprobe on Java code)") },
	{ "args", 0, required_argument, take_args, 0,
	  OPT_DOC(TRACE, "LIST", "argument positions to record: 0,2; POS:str reads a String (Java) or char * (native), up to 127 bytes") },
	{ "atom", 0, required_argument, take_atom, 0,
	  OPT_DOC(ANDROID, "ID", "the atom id for --statsd (trace sends no atoms otherwise)") },
	{ "emit-config", 0, required_argument, KEEP_STR(emit),
	  OPT_DOC(OUTPUT, "FILE", "write the equivalent config (textproto; binary for .pb) and exit; `uprobestats run FILE` runs it") },
	{ "max-probes", 0, required_argument, take_max_probes, 0,
	  OPT_DOC(ADVANCED, "N", "trace at most N methods (default 20000)") },
	{ "name", 'n', required_argument, KEEP_STR(spec.process_name),
	  OPT_DOC(TRACE, "NAME", "trace the process named NAME (as ps and pidof name it)") },
	{ "count", 0, no_argument, SET_TRUE(spec.agg.on),
	  OPT_DOC(TRACE, "", "count calls in the kernel instead of a record per call") },
	{ "by", 0, required_argument, take_by, 0,
	  OPT_DOC(TRACE, "KEYS", "count per pid, tid, uid, comm (the calling thread's), process (its name, rows of one name merged), arg N or ret (comma-separated: process,arg0)") },
	{ "sum", 0, required_argument, take_sum, 0,
	  OPT_DOC(TRACE, "WHAT", "sum arg N, ret or latency per key, in the kernel") },
	{ "hist", 0, required_argument, take_hist, 0,
	  OPT_DOC(TRACE, "WHAT", "a log2 histogram of arg N, ret or latency per key, in the kernel") },
	{ "agg-keys", 0, required_argument, take_agg_keys, 0,
	  OPT_DOC(ADVANCED, "N", "the kernel's count table holds N keys (default 10240)") },
};

const struct opt_rows trace_rows = OPT_ROWS(trace_row_v);

static int parse_trace_opts(int argc, char **argv, struct trace_opts *o)
{
	int rc = run_opts_parse_cmd(argc, argv, &trace_rows, o, CLI_SHORTS_PROCS, &o->run);

	if (rc != EXIT_OK)
		return rc;
	if (o->spec.agg.on && (o->spec.ret || o->spec.n_args || o->spec.atom_id)) {
		p_err("--count/--by/--sum/--hist count in the kernel; --ret, --args and --atom "
		      "record each call: give one or the other");
		return EXIT_USAGE;
	}
	if (optind >= argc) {
		p_err("missing PATTERN (e.g. 'com.android.server.am.*.start*' or "
		      "'libc.so:open*'; see uprobestats --help)");
		return EXIT_USAGE;
	}
	o->patterns = argv + optind;
	o->n_patterns = (size_t)(argc - optind);
	return EXIT_OK;
}

/* --ret: a method whose exits cannot be found is left out (named), not the
 * whole run. */
static bool exits_provable(const struct trace_method *m, const struct trace_opts *o,
			   char *why, size_t size)
{
	const struct exits_query q = {
		.path = m->path, .offset = m->offset, .code_size = m->code_size,
		.machine = m->machine, .java = m->java,
		.program = "call_return", .what = m->display && *m->display ? m->display : "?",
		.has_exit_probes = true, .exit_probes = true,
		.unsafe_uretprobe = o->run.unsafe_uretprobe, .code = o->run.code,
		.no_exits_advice = "--unsafe-uretprobe puts a uretprobe on it instead",
	};
	struct exits_choice c;
	struct err e = { 0 };
	int rc;

	bool ret = o->spec.ret || (o->spec.agg.on && trace_agg_needs_return(&o->spec.agg));

	if (!ret || (!m->java && o->spec.native_uretprobe))
		return true;
	rc = exits_choose(&q, &c, &e);
	if (rc == 0 && c.exit_probes && !c.n_exits)
		p_warn("%s: no return instruction found (it never returns, or leaves only by a "
		       "call that does not): only its entry is probed, and calls still running "
		       "at exit are listed then", m->display);
	if (rc < 0) {
		snprintf(why, size, "%s", e.msg);
		return false;
	}
	free(c.exit_offsets);
	return true;
}

/* Keeps the methods whose exits are provable (with --ret) and at most
 * --max-probes of them; the rest counted as left out, then the report. */
static void select_methods(struct trace_matches *tm, const struct trace_opts *o)
{
	char why[ERR_MSG_MAX];

	for (size_t i = 0; i < tm->n; i++)
		if (!exits_provable(&tm->methods[i], o, why, sizeof(why)))
			trace_match_leave_out(tm, i, MATCH_NO_EXITS, why);
	trace_match_compact(tm);
	for (size_t i = o->max_probes; i < tm->n; i++)
		trace_match_leave_out(tm, i, MATCH_OVER_MAX, NULL);
	trace_match_compact(tm);
	trace_match_report(tm);
}

int trace_emit_config(const struct uprobestats_config *cfg, const char *path,
		      enum config_format format)
{
	size_t len = strlen(path);
	bool binary = format == CONFIG_FORMAT_BINARY ||
		      (format == CONFIG_FORMAT_AUTO && len > 3 && !strcmp(path + len - 3, ".pb"));
	FILE *f = fopen(path, binary ? "wbe" : "we");
	struct err e = { 0 };
	int rc = 0;

	if (!f) {
		p_err("--emit-config %s: cannot open for writing: %s", path, strerror(errno));
		return EXIT_RUNTIME;
	}
	errno = 0;
	if (binary) {
		uint8_t *buf = NULL;
		size_t n = 0;
		rc = config_encode_binary(cfg, CONFIG_ERA_CURRENT, &buf, &n, NULL, &e);
		if (rc == 0 && (fwrite(buf, 1, n, f) != n || fflush(f) != 0))
			rc = err_set(&e, -EIO, "--emit-config %s: write failed: %s", path,
				     strerror(errno ? errno : EIO));
		free(buf);
	} else if (config_dump_text(cfg, f) < 0 || fflush(f) != 0) {
		rc = err_set(&e, -EIO, "--emit-config %s: write failed: %s", path,
			     strerror(errno ? errno : EIO));
	}
	if (fclose(f) != 0 && rc == 0)
		rc = err_set(&e, -EIO, "--emit-config %s: write failed: %s", path, strerror(errno));
	if (rc < 0) {
		p_err("%s", e.msg);
		return EXIT_RUNTIME;
	}
	p_info("wrote %s (%zu task(s), %zu probe(s) each); run it with `uprobestats run %s`",
	       path, cfg->n_tasks, cfg->tasks[0].n_probes, path);
	return EXIT_OK;
}

static int emit_config(const struct uprobestats_config *cfg, const struct trace_opts *o)
{
	if (o->spec.n_args && !o->spec.atom_id)
		p_warn("--emit-config: --args without --atom: atom_id %d is a placeholder; set "
		       "--atom ID before statsd gets these atoms", TRACE_PLACEHOLDER_ATOM);
	return trace_emit_config(cfg, o->emit, o->emit_format);
}

int trace_build_and_run(struct run_opts *run, const struct trace_source *src,
			struct android_info *android)
{
	struct plan_opts po = { .pids = run->pids, .n_pids = run->n_pids,
				.held = run->held != NULL,
				.root = run->held ? run->held->root : NULL,
				.all_matches = run->all_matches,
				.duration_override = run->duration,
				.duration_override_ms = run->duration_ms,
				.atom_int32_args = run->atom_int32_args,
				.exit_probes = run->exit_probes,
				.unsafe_uretprobe = run->unsafe_uretprobe,
				.unsafe_any_symbol = run->unsafe_any_symbol,
				.located = src->located, .n_located = src->n_located,
				.code = run->code };
	struct plan *plan;
	struct err e = { 0 };
	int rc;

	run_opts_plan_stacks(&run->stacks, &po);
	rc = plan_build(src->cfg, &po, &plan, &e);
	if (rc < 0) {
		p_err("%s", e.msg);
		return e.code == -ESRCH ? EXIT_NO_TARGET
		       : e.code == PLAN_REFUSED ? EXIT_CONFIG
		       : e.code == PLAN_BAD_POSITION ? EXIT_USAGE : EXIT_RESOLVE;
	}
	run_warn_unmapped(plan);
	rc = run_check_privileges(android);
	if (rc == EXIT_OK)
		rc = run_plan(plan, run);
	plan_free(plan);
	return rc;
}

static int check_spec(const struct trace_opts *o, const struct trace_method *m, size_t n)
{
	struct err e = { 0 };

	for (size_t i = 0; i < n; i++)
		if (trace_check_args(&o->spec, &m[i], &e) < 0) {
			p_err("%s", e.msg);
			return EXIT_USAGE;
		}
	return EXIT_OK;
}

static int trace_methods(struct trace_opts *o, struct trace_matches *tm,
			 struct android_info *android)
{
	struct trace_source src;
	struct err e = { 0 };
	struct trace_method *m = tm->methods;
	size_t n;
	int rc;

	select_methods(tm, o);
	n = tm->n;
	rc = check_spec(o, m, n);
	if (rc == EXIT_OK && !n) {
		p_err("no method left to trace");
		rc = EXIT_RESOLVE;
	}
	if (rc == EXIT_OK && trace_source_build(&o->spec, m, n, &src, &e) < 0) {
		p_err("%s", e.msg);
		rc = EXIT_RUNTIME;
	} else if (rc == EXIT_OK) {
		rc = cli_validate(src.cfg, &o->run.guardrail, true);
		if (rc == EXIT_OK)
			rc = o->emit ? emit_config(src.cfg, o)
				     : trace_build_and_run(&o->run, &src, android);
		trace_source_free(&src);
	}
	return rc;
}

/* The process whose maps Java patterns without FILE (and bare library
 * names) are looked up in: the first -p, else the first process -n names. */
static int find_pid(const struct trace_opts *o, pid_t *pid)
{
	struct err e = { 0 };
	pid_t *found = NULL;
	size_t n = 0;

	*pid = o->run.n_pids ? o->run.pids[0] : 0;
	if (*pid || !o->spec.process_name)
		return EXIT_OK;
	if (proc_find_by_name("/proc", o->spec.process_name, &found, &n, &e) < 0) {
		p_err("%s", e.msg);
		return EXIT_RUNTIME;
	}
	if (!n && !o->emit) {
		char near[256];
		free(found);
		proc_nearest_name("/proc", o->spec.process_name, near, sizeof(near));
		p_err("no running process named '%s' (argv[0], or its last path component)%s%s",
		      o->spec.process_name, *near ? "; nearest: " : "", near);
		return EXIT_NO_TARGET;
	}
	*pid = n ? found[0] : 0;
	free(found);
	return EXIT_OK;
}

int cmd_trace(int argc, char **argv)
{
	struct trace_opts o = { .max_probes = DEFAULT_MAX_PROBES, .spec.agg.by_arg = -1 };
	struct trace_matches tm = { 0 };
	struct android_info android;
	pid_t pid = 0;
	int rc = parse_trace_opts(argc, argv, &o);

	if (rc != EXIT_OK)
		return rc < 0 ? EXIT_OK : rc;
	if (o.run.sinks.statsd == SINKS_STATSD_ON && !o.spec.atom_id) {
		p_err("--statsd needs --atom ID: the atom the calls are written as");
		return EXIT_USAGE;
	}
	o.spec.duration = o.run.duration;
	o.spec.agg.interval_s = o.run.agg_interval;
	o.spec.native_uretprobe = o.run.unsafe_uretprobe;
	o.emit_format = o.run.load.format;
	/* The profile is the answer to "how often, how long": on stderr unless
	 * asked elsewhere.  statsd only when asked (--statsd with --atom). */
	if (!o.run.sinks.profile && !o.spec.agg.on)
		o.run.sinks.profile = "-";
	if (o.run.sinks.statsd == SINKS_STATSD_AUTO)
		o.run.sinks.statsd = SINKS_STATSD_OFF;
	cli_android_guardrail(&android, &o.run.guardrail);
	o.run.on_android = android.on_android;
	struct held_cmd held;
	rc = run_start_command(&o.run, o.spec.process_name, &held);
	if (rc == EXIT_OK && !o.run.held)
		rc = find_pid(&o, &pid);
	/* one code cache for the matching, the plan and the session: each file
	 * parsed once for the run */
	if (rc == EXIT_OK && !(o.run.code = cli_code_cache_new()))
		rc = EXIT_RUNTIME;
	if (rc == EXIT_OK)
		rc = trace_match_rooted(o.patterns, o.n_patterns, pid,
					o.run.held ? o.run.held->root : NULL, o.max_probes,
					&o.run.guardrail, o.run.code, &tm);
	if (rc == EXIT_OK)
		rc = trace_methods(&o, &tm, &android);
	trace_matches_free(&tm);
	cli_code_cache_free(o.run.code);
	return held_cmd_finish(o.run.held, rc);
}
