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
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cmd_run.h"
#include "cli/self_atoms.h"
#include "config/guardrail.h"
#include "plan/plan.h"
#include "probe/accounting.h"
#include "probe/loop.h"
#include "probe/session.h"
#include "plan/exits.h"
#include "sink/histogram.h"
#include "sink/sink_args.h"
#include "sink/sinks.h"
#include "sys/privilege.h"
#include "sys/properties.h"

enum {
	OPT_DURATION = 256, OPT_PID, OPT_ALL_MATCHES, OPT_RINGBUF, OPT_FLUSH, OPT_BPF_PID_FILTER,
	OPT_QUIET, OPT_FORCE_PERFBUF, OPT_FORCE_RINGBUF, OPT_CONFIG_FORMAT, OPT_CONFIG_ERA,
	OPT_GUARDRAIL, OPT_GUARDRAIL_LIST, OPT_FORCE_TRACEFS, OPT_FORCE_PMU, OPT_POLLED_ATOM,
	OPT_ATOM_MAPPING, OPT_EXIT_PROBES, OPT_UNSAFE_URETPROBE, OPT_ATTACHED_ATOM, OPT_ERROR_ATOM,
};

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
	{ "exit-probes", no_argument, NULL, OPT_EXIT_PROBES },
	{ "unsafe-uretprobe", no_argument, NULL, OPT_UNSAFE_URETPROBE },
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

static int parse_value_opt(int c, struct run_opts *o)
{
	uint32_t v;
	struct err e = { 0 };
	int taken = sink_args_parse(&o->sinks, c, optarg, &e);

	if (taken) {
		if (taken < 0)
			p_err("%s", e.msg);
		return taken < 0 ? EXIT_USAGE : EXIT_OK;
	}
	switch (c) {
	case OPT_DURATION:
		if (!cli_parse_u32(optarg, &v, "--duration seconds"))
			return EXIT_USAGE;
		if (v == 0 || v > INT32_MAX) {
			p_err("--duration needs a positive number of seconds, not '%s'", optarg);
			return EXIT_USAGE;
		}
		o->duration = (int32_t)v;
		return EXIT_OK;
	case OPT_PID:
		if (!cli_parse_u32(optarg, &v, "a pid") || v == 0 || v > INT32_MAX)
			return EXIT_USAGE;
		if (o->n_pids == MAX_PIDS) {
			p_err("at most %d --pid options", MAX_PIDS);
			return EXIT_USAGE;
		}
		o->pids[o->n_pids++] = (pid_t)v;
		return EXIT_OK;
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
		return cli_parse_u32(optarg, &o->polled_atom, "an atom id") && o->polled_atom &&
		       o->polled_atom <= INT32_MAX ? EXIT_OK : EXIT_USAGE;
	case OPT_ATTACHED_ATOM:
	case OPT_ERROR_ATOM: {
		uint32_t *id = c == OPT_ATTACHED_ATOM ? &o->attached_atom : &o->error_atom;
		return cli_parse_u32(optarg, id, "an atom id") && *id && *id <= INT32_MAX
		       ? EXIT_OK : EXIT_USAGE;
	}
	case OPT_FLUSH:
		return cli_parse_u32(optarg, &o->flush_ms, "milliseconds") && o->flush_ms
		       ? EXIT_OK : EXIT_USAGE;
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
	if (sink_args_getopt(opts, n, max) < 0)
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
	case OPT_FORCE_RINGBUF: o->output_mode = OUTPUT_RINGBUF; return EXIT_OK;
	case OPT_FORCE_TRACEFS: o->force_tracefs = true; return EXIT_OK;
	case OPT_FORCE_PMU: o->force_pmu = true; return EXIT_OK;
	case OPT_EXIT_PROBES: o->exit_probes = true; return EXIT_OK;
	case OPT_UNSAFE_URETPROBE: o->unsafe_uretprobe = true; return EXIT_OK;
	case 'v': cli_set_verbose(true); return EXIT_OK;
	case 'h': return RUN_OPT_HELP;
	case '?': return EXIT_USAGE;
	}
	return parse_value_opt(c, o);
}

static int parse_run_opts(int argc, char **argv, struct run_opts *o)
{
	struct option long_opts[64];
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

/* ---- what the loop hands over ---- */

struct run_state {
	const struct plan *plan;
	struct session *session;
	struct sinks *sinks;
	struct accounting acct;      /* per probe: dropped at the sinks, pending */
	bool output_failed;          /* an output's write error was reported */
	int failed_exit;
	int32_t attached_atom;       /* self-metric atom ids (0: not sent) */
	int32_t error_atom;
	bool error_sent;
};

static void on_event(void *ctx, const struct event *ev)
{
	struct run_state *rs = ctx;

	accounting_event(&rs->acct, ev->probe, sinks_event(rs->sinks, ev));
}

/* After each batch: buffered output goes out.  When a write fails, the
 * events of the batch it carried are lost at the sink, and said once. */
static void on_flush(void *ctx)
{
	struct run_state *rs = ctx;
	struct err e = { 0 };
	bool failed = sinks_flush(rs->sinks, &e) < 0;

	accounting_flushed(&rs->acct, failed);
	if (failed && !rs->output_failed) {
		rs->output_failed = true;
		p_err("%s", e.msg);
	}
}

/* An atom comes right after the event of the same record (loop.c).  An
 * atom that cannot be encoded still goes out (as statsd's error event); one
 * statsd does not take is counted by on_statsd_drop when its batch goes. */
static void on_atom(void *ctx, const struct atom *a)
{
	struct run_state *rs = ctx;

	(void)sinks_atom(rs->sinks, a);
}

static void on_statsd_drop(void *ctx, const struct probe_desc *probe)
{
	struct run_state *rs = ctx;

	accounting_sink_drop(&rs->acct, probe);
}

static void on_notice(void *ctx, const char *msg)
{
	p_info("%s", msg);
}

/* Whether task ti's pid k appeared in an earlier task or earlier in ti. */
static bool pid_seen(const struct plan *plan, size_t ti, size_t k)
{
	pid_t pid = plan->tasks[ti].pids[k];

	for (size_t i = 0; i <= ti; i++)
		for (size_t j = 0; j < (i == ti ? k : plan->tasks[i].n_pids); j++)
			if (plan->tasks[i].pids[j] == pid)
				return true;
	return false;
}

static int start_probes(void *ctx, struct err *e)
{
	struct run_state *rs = ctx;
	int rc = session_attach(rs->session, e);

	if (rc < 0) {
		rs->failed_exit = (rc == -EPERM || rc == -EACCES) ? EXIT_PRIVILEGE : EXIT_RUNTIME;
		if (rs->error_atom)
			self_atoms_error(rs->sinks, rs->plan, rs->error_atom,
					 SELF_ERROR_TASK_EXECUTION_FAILED, SELF_FAILED_ATTACHING);
		rs->error_sent = true;
		return rc;
	}
	if (rs->attached_atom)
		self_atoms_attached(rs->sinks, rs->plan, rs->attached_atom);
	char procs[64];
	size_t n = 0;
	bool every = false, waiting = false;
	for (size_t i = 0; i < rs->plan->n_tasks; i++) {
		const struct plan_task *t = &rs->plan->tasks[i];
		every |= t->all_processes;
		waiting |= t->wait_for_start;
		for (size_t k = 0; k < t->n_pids; k++)
			n += !pid_seen(rs->plan, i, k);   /* processes, not task x pid */
	}
	if (every)
		snprintf(procs, sizeof(procs), "every process%s", n ? " and others" : "");
	else
		snprintf(procs, sizeof(procs), "%zu process(es)%s", n,
			 waiting ? " (more when they start)" : "");
	p_info("attached %zu probe(s) for %s in %zu place(s) via %s, %s output",
	       rs->plan->n_probes, procs, session_attachment_count(rs->session),
	       session_attach_mode(rs->session),
	       output_mode_name(session_output_mode(rs->session)));
	return 0;
}

/* ---- the run ---- */

/* A stop signal arrived (they are blocked until the loop reads them). */
static bool stop_signal_pending(void)
{
	sigset_t set;

	return sigpending(&set) == 0 &&
	       (sigismember(&set, SIGINT) || sigismember(&set, SIGTERM) ||
		sigismember(&set, SIGHUP));
}

static void block_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void raise_memlock(void)
{
	/* Kernels before 5.11 charge BPF maps to RLIMIT_MEMLOCK. */
	struct rlimit r = { RLIM_INFINITY, RLIM_INFINITY };
	setrlimit(RLIMIT_MEMLOCK, &r);
	/* Each probe holds its own object's descriptors (about 18 with exit
	 * probes: programs, links, maps): thousands of probes (trace) need far
	 * more than the usual 1024 (root may raise the hard limit too). */
	r = (struct rlimit){ 1u << 20, 1u << 20 };
	if (setrlimit(RLIMIT_NOFILE, &r) < 0 && getrlimit(RLIMIT_NOFILE, &r) == 0) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
}

static int open_sinks(const struct run_opts *o, FILE *out, FILE *trace, FILE *profile,
		      struct run_state *rs)
{
	struct sinks_options so = sink_args_options(&o->sinks, out, trace);
	struct err e = { 0 };

	so.profile = profile;
	so.statsd_dropped = on_statsd_drop;
	so.statsd_dropped_ctx = rs;
	if (sinks_open(&rs->sinks, &so, &e) < 0) {
		p_err("%s", e.msg);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

static void print_histograms(const struct plan *plan, const struct session *s)
{
	for (size_t i = 0; i < plan->n_probes; i++) {
		const struct plan_probe *p = plan->probe_by_id[i];
		uint64_t slots[UPS_HIST_SLOTS];
		char title[512];

		if (!p->prog->histogram || session_probe_histogram(s, (uint32_t)i, slots) < 0)
			continue;
		snprintf(title, sizeof(title), "latency of %s (task %u, probe %u):", p->desc.method,
			 p->desc.task_index, p->desc.probe_index);
		hist_print_log2(stderr, slots, title);
	}
}

static void send_atom(void *ctx, const struct atom *a)
{
	struct run_state *rs = ctx;

	sinks_atom(rs->sinks, a);
}

static int finish(struct run_state *rs, const struct loop_stats *st, bool quiet,
		  int32_t polled_atom)
{
	const struct plan *plan = rs->plan;
	uint64_t run_ns;
	struct probe_stats *rows = accounting_rows(&rs->acct, plan, rs->session, st, &run_ns);
	struct err e = { 0 };
	int rc;

	if (!rows)
		return EXIT_RUNTIME;
	if (polled_atom)
		accounting_polled_atoms(plan, st, polled_atom, send_atom, rs);
	rc = sinks_finish(rs->sinks, rows, plan->n_probes, run_ns, quiet ? NULL : stderr, &e);
	free(rows);
	if (!quiet)
		print_histograms(plan, rs->session);
	if (st->malformed)
		p_err("%" PRIu64 " records had the wrong size or an unknown kind and were not "
		      "decoded", st->malformed);
	if (st->lost)
		p_err("the perf buffers lost %" PRIu64 " records (make --ringbuf-size larger)",
		      st->lost);
	if (rc < 0 || rs->output_failed) {
		if (!rs->output_failed)
			p_err("%s", e.msg);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* A signal asks us to stop now: what is left in the buffers (up to a whole
 * ring buffer) goes to statsd without waiting for room in its queue, so a
 * slow statsd cannot hold up the exit.  Drops are counted and reported as
 * always.  A run that ends by itself still waits. */
static void on_ending(void *ctx, int sig)
{
	struct run_state *rs = ctx;

	if (sig)
		sinks_statsd_stop_waiting(rs->sinks);
}

static int run_loop(struct run_state *rs, const struct run_opts *o)
{
	struct loop_output lo = { .event = on_event, .atom = on_atom, .flush = on_flush,
				  .ending = on_ending, .ctx = rs };
	struct loop_opts lopts = { .flush_ms = o->flush_ms, .notice = on_notice,
				   .start = start_probes, .start_ctx = rs,
				   .android = o->on_android };
	struct loop_stats st;
	struct err e = { 0 };
	int rc, exit_rc;

	rc = loop_run(rs->plan, rs->session, &lopts, &lo, &st, &e);
	if (rc == -EINTR) {
		p_info("%s", e.msg);
		loop_stats_free(&st);
		return EXIT_OK;
	}
	if (rc < 0) {
		p_err("%s", e.msg);
		if (rs->error_atom && !rs->error_sent)
			self_atoms_error(rs->sinks, rs->plan, rs->error_atom,
					 SELF_ERROR_TASK_EXECUTION_FAILED, SELF_FAILED_POLLING);
		loop_stats_free(&st);
		return rs->failed_exit ? rs->failed_exit : EXIT_RUNTIME;
	}
	exit_rc = finish(rs, &st, o->quiet, (int32_t)o->polled_atom);
	for (size_t i = 0; i < rs->plan->n_tasks && exit_rc == EXIT_OK; i++) {
		if (st.tasks[i].end == TASK_END_NEVER_STARTED)
			exit_rc = EXIT_NO_TARGET;
		else if (st.tasks[i].end == TASK_END_ERROR)
			exit_rc = EXIT_RUNTIME;
	}
	loop_stats_free(&st);
	return exit_rc;
}

static FILE *open_output(const char *path, const char *what)
{
	FILE *f;

	if (!path)
		return stdout;
	f = fopen(path, "we");
	if (!f)
		p_err("%s %s: cannot open for writing: %s", what, path, strerror(errno));
	return f;
}

/* Before anything touches the kernel: may we?  A refusal is one line saying
 * what is missing and how to get it. */
int run_check_privileges(const struct android_info *android)
{
	struct priv_facts f;
	struct priv_report r;

	priv_gather(NULL, &f);
	priv_evaluate(&f, android, &r);
	if (r.verdict == PRIV_DENIED) {
		p_err("%s", r.line);
		return EXIT_PRIVILEGE;
	}
	if (r.verdict == PRIV_WARN)
		p_warn("%s", r.line);
	return EXIT_OK;
}

int run_plan(const struct plan *plan, const struct run_opts *o)
{
	struct session_opts so = { .ringbuf_bytes = o->ringbuf_size,
				   .bpf_pid_filter = o->bpf_pid_filter, .output = o->output_mode,
				   .force_tracefs = o->force_tracefs,
				   .force_pmu = o->force_pmu,
				   .interrupted = stop_signal_pending };
	struct run_state rs = { .plan = plan, .attached_atom = (int32_t)o->attached_atom,
				.error_atom = (int32_t)o->error_atom };
	FILE *out = NULL, *trace = NULL, *profile = NULL;
	struct err e = { 0 };
	int rc, acct_rc;

	raise_memlock();
	block_signals();
	if (session_open(plan, &so, &rs.session, &e) < 0) {
		p_err("%s", e.msg);
		return (e.code == -EPERM || e.code == -EACCES) ? EXIT_PRIVILEGE : EXIT_RUNTIME;
	}
	acct_rc = accounting_init(&rs.acct, plan->n_probes);
	out = open_output(o->sinks.output, "--output");
	trace = o->sinks.trace ? open_output(o->sinks.trace, "--trace") : NULL;
	profile = !o->sinks.profile ? NULL : !strcmp(o->sinks.profile, "-") ? stderr
		  : open_output(o->sinks.profile, "--profile");
	rc = (acct_rc < 0 || !out || (o->sinks.trace && !trace) || (o->sinks.profile && !profile))
		? EXIT_RUNTIME : open_sinks(o, out, trace, profile, &rs);
	if (rc == EXIT_OK)
		rc = run_loop(&rs, o);
	sinks_close(rs.sinks);
	session_close(rs.session);
	if (out && out != stdout)
		fclose(out);
	if (trace)
		fclose(trace);
	if (profile && profile != stderr)
		fclose(profile);
	accounting_free(&rs.acct);
	return rc;
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
				.duration_override = o.duration,
				.atom_int32_args = o.atom_int32_args, .exit_probes = o.exit_probes,
				.unsafe_uretprobe = o.unsafe_uretprobe };
	if (plan_build(cfg, &po, &plan, &e) < 0) {
		p_err("%s", e.msg);
		config_free(cfg);
		return e.code == -ESRCH ? EXIT_NO_TARGET
		       : e.code == PLAN_REFUSED ? EXIT_CONFIG : EXIT_RESOLVE;
	}
	for (size_t i = 0; i < plan->n_probes; i++)
		p_debug("probe %zu: %s +0x%" PRIx64 " (%s; %s)", i, plan->probe_by_id[i]->path,
			plan->probe_by_id[i]->offset, resolve_how_name(plan->probe_by_id[i]->how),
			plan->probe_by_id[i]->note);
	rc = run_check_privileges(&android);
	if (rc == EXIT_OK)
		rc = run_plan(plan, &o);
	plan_free(plan);
	config_free(cfg);
	return rc;
}
