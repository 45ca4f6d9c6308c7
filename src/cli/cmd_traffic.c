/* cmd_traffic.c — `uprobestats traffic [-p PID]... [-n NAME] [--uid U]
 * [--lib PATH] [--interval S]`: bytes and calls per process, socket, peer and
 * direction, counted in the kernel (the traffic program, bpf/records.h) at
 * exit probes on libc's socket calls, printed per interval and at exit.
 * The probes form a config in memory (one task, a probe per function the
 * library has), then run's plan, session and loop do the rest. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd_run.h"
#include "cli/held_cmd.h"
#include "common/arena.h"
#include "common/parse_u32.h"
#include "config/model.h"
#include "formats/exit_sites.h"
#include "plan/aggregation.h"
#include "plan/exits.h"
#include "plan/pattern.h"
#include "resolve/native.h"
#include "sys/maps.h"
#include "sys/proc.h"
#include "sys/proc_path.h"

#define PROG_TRAFFIC "prog_Uprobestats_uretprobe_traffic"

static const char *const FUNCS[] = {
	"socket", "socketpair", "connect", "accept", "accept4", "close", "send", "sendto",
	"sendmsg", "sendmmsg", "write", "writev", "sendfile", "splice", "recv", "recvfrom",
	"recvmsg", "recvmmsg", "read", "readv",
};

/* The name lookup whose results give the host names: bionic's (the one its
 * getaddrinfo tail-calls, whose addrinfo is BSD's), else getaddrinfo. */
static const char *const LOOKUPS[] = { "android_getaddrinfofornet", "getaddrinfo" };

struct traffic_opts {
	struct run_opts run;
	const char *name;            /* -n */
	const char *lib;             /* --lib */
	uint32_t max_keys;           /* --agg-keys */
};

#define TRAFFIC(ctx) ((struct traffic_opts *)(ctx))

static int take_uid(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	TRAFFIC(ctx)->run.has_traffic_uid = true;
	return parse_u32_arg(arg, 0, UINT32_MAX - 1, "--uid", "a uid",
			     &TRAFFIC(ctx)->run.traffic_uid, e);
}

static int take_atom(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	uint32_t v;
	int rc = parse_u32_arg(arg, 1, INT32_MAX, "--atom", "an atom id", &v, e);

	if (rc == 0)
		TRAFFIC(ctx)->run.traffic_atom = (int32_t)v;
	return rc;
}

static int take_agg_keys(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	return parse_u32_arg(arg, 1, AGG_MAX_KEYS_LIMIT, "--agg-keys", "a key count",
			     &TRAFFIC(ctx)->max_keys, e);
}

#define KEEP_STR(member) OPT_STR(struct traffic_opts, member)

static const struct opt_row traffic_row_v[] = {
	{ "uid", 0, required_argument, take_uid, 0,
	  OPT_DOC(TRACE, "U", "only the sockets of uid U") },
	{ "lib", 0, required_argument, KEEP_STR(lib),
	  OPT_DOC(TRACE, "PATH", "the libc to probe (default: the one the process maps)") },
	{ "agg-keys", 0, required_argument, take_agg_keys, 0,
	  OPT_DOC(ADVANCED, "N", "the kernel's table holds N sockets (default 10240)") },
	{ "atom", 0, required_argument, take_atom, 0,
	  OPT_DOC(ANDROID, "ID", "each row of each interval also as statsd atom ID") },
	{ "name", 'n', required_argument, KEEP_STR(name),
	  OPT_DOC(TRACE, "NAME", "the process named NAME (none: every process that maps the library)") },
};

const struct opt_rows traffic_rows = OPT_ROWS(traffic_row_v);

static int parse_traffic_opts(int argc, char **argv, struct traffic_opts *o)
{
	int rc = run_opts_parse_cmd(argc, argv, &traffic_rows, o, CLI_SHORTS_PROCS, &o->run);

	if (rc != EXIT_OK)
		return rc;
	if (optind < argc) {
		p_err("traffic takes no arguments ('%s'); name processes with -p PID or -n NAME",
		      argv[optind]);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

struct libc_find {
	pid_t pid;
	char *out;
	size_t size;
};

static int libc_mapping(void *ctx, const struct proc_mapping *m)
{
	struct libc_find *f = ctx;
	const char *base = memrchr(m->path, '/', m->path_len);

	if (!base++ || (strncmp(base, "libc.so", 7) && strncmp(base, "libc-", 5)))
		return 0;
	return proc_path_of_mapping(NULL, f->pid, m, f->out, f->size) == 0 ? 1 : 0;
}

/* The libc pid maps, as a path this process can open that names the file it
 * maps (sys/proc_path.h: a chroot's or a container's libc is the one it runs;
 * maps paths are relative to the reader's root, not the process's). */
static bool mapped_libc(pid_t pid, char *out, size_t size)
{
	struct libc_find f = { .pid = pid, .out = out, .size = size };
	struct err e = { 0 };

	return proc_maps_read(NULL, pid, libc_mapping, &f, &e) == 1;
}

/* The library to probe: --lib, else the one the first target maps, else the
 * one init maps (every process that maps it is traced). */
static int pick_lib(const struct traffic_opts *o, char *lib, size_t size)
{
	pid_t first = o->run.n_pids ? o->run.pids[0] : 0;
	pid_t *found = NULL;
	size_t n = 0;
	struct err e = { 0 };

	/* --lib as the first target sees it (its chroot's libc, an APK's library:
	 * sys/proc_path.h), as a config's file_paths are */
	if (o->lib) {
		if (proc_path_resolve("/proc", first, o->lib, lib, size) < 0)
			snprintf(lib, size, "%s", o->lib);
		return EXIT_OK;
	}
	if (o->run.held) {   /* -c: the libc the command will map (not yet) */
		if (pattern_library_path(o->run.held->root, "libc.so", lib, size, &e) == 0)
			return EXIT_OK;
		p_err("-c: %s; give --lib PATH", e.msg);
		return EXIT_RESOLVE;
	}
	if (!first && o->name) {
		if (proc_find_by_name("/proc", o->name, &found, &n, &e) < 0) {
			p_err("%s", e.msg);
			return EXIT_RUNTIME;
		}
		first = n ? found[0] : 0;
		free(found);
		if (!n) {
			p_err("no running process named '%s' (matched against /proc/*/cmdline "
			      "argv[0])", o->name);
			return EXIT_NO_TARGET;
		}
	}
	/* gone, a zombie or a kernel thread: as trace says it, exit 6 */
	for (size_t i = 0; i < o->run.n_pids; i++)
		if (proc_check_traceable("/proc", o->run.pids[i], &e) < 0) {
			p_err("%s", e.msg);
			return EXIT_NO_TARGET;
		}
	if (first && proc_check_traceable("/proc", first, &e) < 0) {
		p_err("%s", e.msg);
		return EXIT_NO_TARGET;
	}
	if (mapped_libc(first ? first : 1, lib, size))
		return EXIT_OK;
	/* every process: init may be static (no libc mapped); the system's */
	if (!first && pattern_library_path(NULL, "libc.so", lib, size, &e) == 0)
		return EXIT_OK;
	if (first)
		p_err("process %d maps no libc (libc.so*, libc-*.so): a static program's calls "
		      "cannot be probed in a library; give --lib PATH for another one", (int)first);
	else
		p_err("init maps no libc: give --lib PATH");
	return EXIT_RESOLVE;
}

static int add_probe(struct arena *a, struct task_config *t, const char *lib,
		     const char *func, const struct traffic_opts *o)
{
	struct probe_config *pc = &t->probes[t->n_probes++];
	char *path = arena_strdup(a, lib);

	pc->bpf_name = arena_strdup(a, PROG_TRAFFIC);
	pc->method_signature = arena_strdup(a, func);
	if (!pc->bpf_name || !pc->method_signature || !path ||
	    model_push_string(a, &pc->file_paths, path, NULL) < 0)
		return -ENOMEM;
	pc->has_exit_probes = true;
	pc->exit_probes = true;
	pc->has_aggregation = o->run.agg_interval || o->max_keys;
	pc->has_agg_interval = o->run.agg_interval > 0;
	pc->agg_interval_seconds = (int32_t)o->run.agg_interval;
	pc->has_agg_max_keys = o->max_keys > 0;
	pc->agg_max_keys = (int32_t)o->max_keys;
	return 0;
}

/* Where a probe's exits are (sites counting from base). */
struct exits_of {
	const struct exit_sites *sites;
	uint64_t base;
};

/* 0 when lib defines sym and its returns are proven (an exit probe needs
 * them); else a negative errno, e saying why.  x (may be NULL) gets the exits. */
static int probeable(struct native_cache *nc, struct code_cache *code, const char *lib,
		     const char *sym, struct exits_of *x, struct err *e)
{
	struct native_location loc;
	struct exits_of own;
	int rc = native_resolve(nc, lib, sym, 0, &loc, e);

	if (!x)
		x = &own;
	if (rc == 0)
		rc = plan_native_exit_sites(code, lib, loc.offset, loc.size, loc.machine, &x->sites,
					    &x->base, e);
	return rc;
}

/* The lookup probe, when the library has one whose returns are proven;
 * else host names stay unknown, said once. */
static const char *lookup_func(struct native_cache *nc, struct code_cache *code,
				const char *lib)
{
	struct err e = { 0 };

	for (size_t i = 0; i < sizeof(LOOKUPS) / sizeof(LOOKUPS[0]); i++) {
		if (probeable(nc, code, lib, LOOKUPS[i], NULL, &e) == 0)
			return LOOKUPS[i];
		if (e.code != -ENOENT) {
			p_warn("traffic: no host names: %s", e.msg);
			return NULL;
		}
	}
	p_warn("traffic: no host names: %s has no getaddrinfo", lib);
	return NULL;
}

/* func, or where its returns are not proven bionic's system call behind it
 * (connect and sendmsg branch through __netdClientDispatch to __connect and
 * __sendmsg); NULL when neither.  x gets the chosen one's exits. */
static const char *socket_func(struct native_cache *nc, struct code_cache *code,
			       const char *lib, const char *func, char *raw, size_t size,
			       struct exits_of *x, char *skipped, size_t skipped_size)
{
	struct err e = { 0 };
	size_t used = strlen(skipped);

	if (probeable(nc, code, lib, func, x, &e) == 0)
		return func;
	if (e.code == -ENOENT)
		return NULL;     /* not in this libc */
	snprintf(raw, size, "__%s", func);
	if (probeable(nc, code, lib, raw, x, &e) == 0)
		return raw;
	p_debug("traffic: %s: %s", func, e.msg);
	snprintf(skipped + used, skipped_size - used, "%s%s", used ? ", " : "", func);
	return NULL;
}

/* Whether func's exits lie in another function of FUNCS (its tail branches
 * reach that one, whose probe counts the call: a probe here would count it
 * twice). */
static bool reaches_probed(struct native_cache *nc, const char *lib, const char *func,
			   const struct exits_of *x)
{
	for (size_t i = 0; i < sizeof(FUNCS) / sizeof(FUNCS[0]); i++) {
		struct native_location g;
		struct err e = { 0 };
		if (!strcmp(FUNCS[i], func) || native_resolve(nc, lib, FUNCS[i], 0, &g, &e) < 0)
			continue;
		for (uint32_t k = 0; k < x->sites->count; k++) {
			uint64_t at = x->base + x->sites->offsets[k];
			if (at >= g.offset && at - g.offset < g.size) {
				p_debug("traffic: %s: not probed, it branches to %s (counted there)",
					func, FUNCS[i]);
				return true;
			}
		}
	}
	return false;
}

/* One task: a probe per function of FUNCS the library defines, and one on
 * its name lookup. */
static int build_config(const struct traffic_opts *o, const char *lib,
			struct uprobestats_config **out)
{
	struct uprobestats_config *cfg = model_new("traffic");
	struct native_cache *nc = native_cache_new(o->run.code);
	struct task_config *t;
	char skipped[256] = "";
	const char *lookup;
	int rc = EXIT_OK;

	*out = cfg;
	if (!cfg || !nc || !(cfg->tasks = arena_alloc(cfg->arena, sizeof(*cfg->tasks))) ||
	    !(cfg->tasks->probes = arena_alloc(cfg->arena, (sizeof(FUNCS) / sizeof(FUNCS[0]) + 1) *
								 sizeof(*cfg->tasks->probes)))) {
		native_cache_free(nc);
		p_err("out of memory");
		return EXIT_RUNTIME;
	}
	cfg->n_tasks = 1;
	t = cfg->tasks;
	if (o->name && !(t->target_process_name = arena_strdup(cfg->arena, o->name)))
		rc = EXIT_RUNTIME;
	for (size_t i = 0; rc == EXIT_OK && i < sizeof(FUNCS) / sizeof(FUNCS[0]); i++) {
		char raw[32];
		struct exits_of x;
		const char *f = socket_func(nc, o->run.code, lib, FUNCS[i], raw, sizeof(raw), &x,
					    skipped, sizeof(skipped));
		if (f && !reaches_probed(nc, lib, f, &x) && add_probe(cfg->arena, t, lib, f, o) < 0)
			rc = EXIT_RUNTIME;
	}
	if (*skipped)
		p_info("traffic: not probed, their returns not proven (a tail call; -v says "
		       "more): %s", skipped);
	if (rc == EXIT_OK && t->n_probes < 3) {
		p_err("%s: not a libc with send/recv/connect (%zu of the socket functions found)",
		      lib, t->n_probes);
		rc = EXIT_RESOLVE;
	}
	if (rc == EXIT_OK && (lookup = lookup_func(nc, o->run.code, lib)) &&
	    add_probe(cfg->arena, t, lib, lookup, o) < 0)
		rc = EXIT_RUNTIME;
	native_cache_free(nc);
	return rc;
}

int cmd_traffic(int argc, char **argv)
{
	struct traffic_opts o = { 0 };
	struct uprobestats_config *cfg = NULL;
	struct plan *plan = NULL;
	struct err e = { 0 };
	char lib[PATH_MAX + 32];
	int rc = parse_traffic_opts(argc, argv, &o);

	if (rc != EXIT_OK)
		return rc < 0 ? EXIT_OK : rc;
	if (o.run.n_pids && o.name) {
		p_err("-p and -n both name the processes: give one");
		return EXIT_USAGE;
	}
	if (o.run.sinks.statsd == SINKS_STATSD_ON && !o.run.traffic_atom) {
		p_err("--statsd needs --atom ID: the atom each row is written as");
		return EXIT_USAGE;
	}
	struct held_cmd held;
	rc = run_start_command(&o.run, o.name, &held);
	if (rc == EXIT_OK)
		rc = pick_lib(&o, lib, sizeof(lib));
	/* one code cache for the checks below, the plan and the session */
	if (rc == EXIT_OK && !(o.run.code = cli_code_cache_new()))
		rc = EXIT_RUNTIME;
	if (rc == EXIT_OK)
		rc = build_config(&o, lib, &cfg);
	if (rc == EXIT_OK) {
		struct plan_opts po = { .pids = o.run.pids, .n_pids = o.run.n_pids,
					.all_matches = o.run.all_matches,
					.held = o.run.held != NULL,
					.duration_override = o.run.duration,
					.duration_override_ms = o.run.duration_ms,
					.unsafe_uretprobe = o.run.unsafe_uretprobe,
					.code = o.run.code };
		if (plan_build(cfg, &po, &plan, &e) < 0) {
			p_err("%s", e.msg);
			rc = e.code == -ESRCH ? EXIT_NO_TARGET : EXIT_RESOLVE;
		}
	}
	if (rc == EXIT_OK)
		rc = run_check_privileges(NULL);
	if (rc == EXIT_OK) {
		p_info("traffic: %zu probe(s) on %s", plan->n_probes, lib);
		rc = run_plan(plan, &o.run);
	}
	plan_free(plan);
	config_free(cfg);
	cli_code_cache_free(o.run.code);
	return held_cmd_finish(o.run.held, rc);
}
