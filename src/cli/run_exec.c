/* run_exec.c — what `run_plan` (cli/cmd_run.h) does once a plan exists: the sinks,
 * the session (load, then attach inside the loop's start hook), the loop with its
 * signals and limits, the aggregations, and the summary, profile and detaching at
 * the end.  Shared by run, trace, sections and traffic; cmd_run.c parses run's
 * options and checks its config. */
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
#include "cli/held_cmd.h"
#include "cli/self_atoms.h"
#include "common/grow.h"
#include "config/guardrail.h"
#include "plan/plan.h"
#include "probe/accounting.h"
#include "probe/closer.h"
#include "probe/loop.h"
#include "probe/session.h"
#include "probe/suspend_watch.h"
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
#include "sys/proc.h"
#include "sys/properties.h"
#include "vocab/outbuf.h"

/* The output files the run writes (NULL: not asked for; out is stdout
 * without --output, profile stderr with --profile -). */
struct run_files {
	FILE *out, *trace, *profile, *stacks;
};

/* ---- what the loop hands over ---- */

struct run_state {
	const struct plan *plan;
	struct session *session;
	struct sinks *sinks;
	struct accounting acct;      /* per probe: dropped at each output */
	bool output_failed;          /* an output's write error was reported */
	char failed_output[32];      /* the name of that output ("json") */
	int failed_exit;
	int32_t attached_atom;       /* self-metric atom ids (0: not sent) */
	int32_t error_atom;
	bool error_sent;
	struct agg_reader *agg;      /* the in-kernel aggregations (NULL: none) */
	bool trace_running;          /* --trace (any format): the calls running at exit too */
	struct suspend_watch suspend; /* where a suspend during the run was */
	struct suspend_source suspend_src;
	struct held_cmd *held;       /* -c: let go once attached, reaped when it exits */
};

/* Events an output loses (a full queue, a failed write) come back one by one
 * through on_stream_drop and on_statsd_drop, so nothing is counted here. */
static void on_event(void *ctx, const struct event *ev)
{
	struct run_state *rs = ctx;

	(void)sinks_event(rs->sinks, ev);
}

/* After each batch: buffered output goes out, as far as the outputs take it
 * now.  A failure is said once; a reader gone (EPIPE) is not a failure. */
static void on_flush(void *ctx)
{
	struct run_state *rs = ctx;
	struct err e = { 0 };

	if (sinks_flush(rs->sinks, &e) < 0 && !rs->output_failed && e.code != -EPIPE) {
		rs->output_failed = true;
		snprintf(rs->failed_output, sizeof(rs->failed_output), "%.*s",
			 (int)strcspn(e.msg, " "), e.msg);
		p_err("%s", e.msg);
	}
}

static bool on_outputs_gone(void *ctx)
{
	struct run_state *rs = ctx;

	return sinks_outputs_gone(rs->sinks);
}

static bool on_congested(void *ctx)
{
	struct run_state *rs = ctx;

	return sinks_congested(rs->sinks);
}

static void on_settle(void *ctx)
{
	struct run_state *rs = ctx;

	sinks_settle(rs->sinks, OUTBUF_CLOSE_WAIT_MS);
}

/* An atom comes right after the event of the same record (loop.c).  An
 * atom that cannot be encoded still goes out (as statsd's error event); one
 * statsd does not take is counted by on_statsd_drop when its batch goes. */
static void on_atom(void *ctx, const struct atom *a)
{
	struct run_state *rs = ctx;

	(void)sinks_atom(rs->sinks, a);
}

/* Loss is per output: an event statsd dropped may still be in the JSON
 * output.  A probe's dropped_sink is the most any one output lost. */
static void on_statsd_drop(void *ctx, const struct probe_desc *probe)
{
	struct run_state *rs = ctx;

	accounting_sink_drop(&rs->acct, probe);
}

static void on_stream_drop(void *ctx, const struct probe_desc *probe)
{
	struct run_state *rs = ctx;

	accounting_stream_drop(&rs->acct, probe);
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

/* Every probe and process holds a descriptor (a link or a perf event), each
 * program and map one more: say what the limit is and about how many. */
static void say_fd_limit(const struct plan *plan, struct err *e)
{
	struct rlimit r = { 0 };
	size_t need = 16;
	char msg[sizeof(e->msg)];

	for (size_t i = 0; i < plan->n_tasks; i++)
		need += plan->tasks[i].n_probes * 3 *
			(plan->tasks[i].n_pids ? plan->tasks[i].n_pids : 1);
	getrlimit(RLIMIT_NOFILE, &r);
	snprintf(msg, sizeof(msg), "%s; this run needs about %zu file descriptors and may "
		 "have %llu (hard limit %llu): raise it with ulimit -n or trace fewer probes "
		 "or processes", e->msg, need, (unsigned long long)r.rlim_cur,
		 (unsigned long long)r.rlim_max);
	snprintf(e->msg, sizeof(e->msg), "%s", msg);
}

static int start_probes(void *ctx, struct err *e)
{
	struct run_state *rs = ctx;
	int rc = session_attach(rs->session, e);

	if (rc < 0) {
		rs->failed_exit = (rc == -EPERM || rc == -EACCES) ? EXIT_PRIVILEGE
				  : rc == -ESRCH ? EXIT_NO_TARGET : EXIT_RUNTIME;
		if (rc == -EMFILE || rc == -ENFILE)
			say_fd_limit(rs->plan, e);
		if (rs->error_atom)
			self_atoms_error(rs->sinks, rs->plan, rs->error_atom,
					 SELF_ERROR_TASK_EXECUTION_FAILED, SELF_FAILED_ATTACHING);
		rs->error_sent = true;
		return rc;
	}
	if (rs->attached_atom)
		self_atoms_attached(rs->sinks, rs->plan, rs->attached_atom);
	held_cmd_go(rs->held);
	if (rs->agg) {
		size_t known = agg_reader_attached(rs->agg, NULL);
		if (known)
			p_debug("traffic: %zu socket(s) open before the attach", known);
	}
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
	char links[48] = "";
	size_t places = session_attachment_count(rs->session);
	size_t n_links = session_link_count(rs->session);
	if (n_links != places)  /* uprobe_multi links holding many places each */
		snprintf(links, sizeof(links), " (%zu)", n_links);
	p_info("attached %zu probe(s) for %s in %zu place(s) via %s%s, %s output%s",
	       rs->plan->n_probes, procs, places, session_attach_mode(rs->session), links,
	       output_mode_name(session_output_mode(rs->session)),
	       session_legacy(rs->session) ? ", legacy objects" : "");
	return 0;
}

/* ---- the run ---- */

/* The stop signals this process inherited ignored (cli_take_stop_signals). */
static const int stop_signals[] = { SIGINT, SIGTERM };
#define N_STOP_SIGNALS (sizeof(stop_signals) / sizeof(stop_signals[0]))
static bool inherited_ignored[N_STOP_SIGNALS];

void cli_take_stop_signals(void)
{
	for (size_t i = 0; i < N_STOP_SIGNALS; i++) {
		struct sigaction old;

		if (sigaction(stop_signals[i], NULL, &old) != 0 || old.sa_handler != SIG_IGN)
			continue;
		inherited_ignored[i] = true;
		signal(stop_signals[i], SIG_DFL);
	}
}

void cli_restore_inherited_signals(void)
{
	for (size_t i = 0; i < N_STOP_SIGNALS; i++)
		if (inherited_ignored[i])
			signal(stop_signals[i], SIG_IGN);
}

/* A stop signal arrived (they are blocked until the loop reads them). */
static bool stop_signal_pending(void)
{
	sigset_t set;

	return sigpending(&set) == 0 &&
	       (sigismember(&set, SIGINT) || sigismember(&set, SIGTERM) ||
		sigismember(&set, SIGHUP));
}

/* The stop signals, blocked: the loop reads them from its signalfd.  SIGHUP
 * stops a run too, unless it came ignored (nohup): blocked, a hangup would
 * be queued and read like any stop signal, so it stays unblocked and the
 * kernel discards it. */
static void block_signals(void)
{
	struct sigaction hup;
	sigset_t set, hup_set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigemptyset(&hup_set);
	sigaddset(&hup_set, SIGHUP);
	if (sigaction(SIGHUP, NULL, &hup) == 0 && hup.sa_handler == SIG_IGN)
		sigprocmask(SIG_UNBLOCK, &hup_set, NULL);
	else
		sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void raise_limits(void)
{
	/* Kernels before 5.11 charge BPF maps to RLIMIT_MEMLOCK. */
	struct rlimit r = { RLIM_INFINITY, RLIM_INFINITY };
	setrlimit(RLIMIT_MEMLOCK, &r);
	/* Each probe holds its own object's descriptors (about 18 with exit
	 * probes: programs, links, maps): thousands of probes (trace) need far
	 * more than the usual 1024 (root may raise the hard limit too). */
	rlim_t most = 1u << 20;   /* the kernel's default fs.nr_open, unless it says less */
	FILE *f = fopen("/proc/sys/fs/nr_open", "re");
	unsigned long nr_open;

	if (f) {
		if (fscanf(f, "%lu", &nr_open) == 1 && nr_open > 0 && nr_open < most)
			most = nr_open;
		fclose(f);
	}
	r = (struct rlimit){ most, most };
	if (setrlimit(RLIMIT_NOFILE, &r) < 0 && getrlimit(RLIMIT_NOFILE, &r) == 0) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
}

static int open_sinks(const struct run_opts *o, const struct run_files *f,
		      struct run_state *rs)
{
	struct sinks_options so = sink_args_options(&o->sinks, f->out, f->trace);
	struct err e = { 0 };

	so.profile = f->profile;
	so.no_events = plan_only_aggregates(rs->plan);
	so.statsd_dropped = on_statsd_drop;
	so.stream_dropped = on_stream_drop;
	so.statsd_dropped_ctx = rs;
	so.folded_stacks = f->stacks;
	so.folded_merge = o->stacks.folded_merge;
	so.suspend = &rs->suspend_src;
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

/* Each failed output once, as an error line, with its final counts: an
 * output that failed mid-run was said then (its name is in failed_output). */
static void report_output_errors(const struct run_state *rs, const struct err *first)
{
	struct sink_report r;
	size_t said = 0;

	sinks_report(rs->sinks, &r);
	for (size_t i = 0; i < r.n_errors; i++) {
		size_t n = strcspn(r.errors[i], " ");
		if (r.error_codes[i] == -EPIPE ||
		    (*rs->failed_output && !strncmp(r.errors[i], rs->failed_output, n) &&
		     !rs->failed_output[n]))
			continue;
		p_err("%s", r.errors[i]);
		said++;
	}
	if (!said && first && !*rs->failed_output)
		p_err("%s", first->msg);
}

struct running_list {
	const struct plan *plan;
	struct running_call *v;
	size_t n, cap;
	int64_t mono_to_boot;
};

/* c's thread's process and names from /proc, or from the call before it
 * when that was on the same thread (a thread's calls come together). */
static void running_thread_identity(struct running_list *l, struct running_call *c)
{
	long tgid;

	if (l->n > 1 && l->v[l->n - 2].tid == c->tid) {
		const struct running_call *prev = &l->v[l->n - 2];
		c->pid = prev->pid;
		memcpy(c->comm, prev->comm, sizeof(c->comm));
		memcpy(c->process, prev->process, sizeof(c->process));
		return;
	}
	if ((tgid = proc_tgid("/proc", (pid_t)c->tid)) <= 0)
		return;
	c->pid = (uint32_t)tgid;
	if (!proc_comm("/proc", (pid_t)c->tid, c->comm, sizeof(c->comm)))
		c->comm[0] = '\0';
	/* as the records' process names are (name_cache): argv[0], else comm */
	if (proc_argv0("/proc", (pid_t)tgid, c->process, sizeof(c->process)) < 0 &&
	    !proc_comm("/proc", (pid_t)tgid, c->process, sizeof(c->process)))
		c->process[0] = '\0';
}

static void add_running(void *ctx, uint32_t tid, uint32_t probe_id, uint64_t entry_ns,
			uint64_t entry_sp)
{
	struct running_list *l = ctx;
	const struct plan_probe *p = l->plan->probe_by_id[probe_id];

	/* only calls of probes that record their returns (call_return): the
	 * others' (call_latency) returned calls are in no trace either */
	if (!p->prog->is_return || !p->prog->record_kind)
		return;
	if (grow_array(&l->v, &l->cap, l->n + 1, 64) < 0)
		return;
	l->v[l->n++] = (struct running_call){
		.tid = tid, .probe = &p->desc,
		.enter_boot_ns = entry_ns + (uint64_t)l->mono_to_boot,
		.enter_mono_ns = entry_ns,
		.entry_sp = entry_sp,
	};
	running_thread_identity(l, &l->v[l->n - 1]);
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A trace ends the calls still running (exit probes): with an unroll (a
 * method trace), as a slice marked running_at_exit (the others). */
static void hand_running_calls(struct run_state *rs)
{
	uint64_t mono = now_ns(CLOCK_MONOTONIC), boot = now_ns(CLOCK_BOOTTIME);
	struct running_list l = { .plan = rs->plan, .mono_to_boot = (int64_t)(boot - mono) };

	if (!rs->trace_running)
		return;
	(void)session_pending_each(rs->session, add_running, &l);
	if (l.n)
		sinks_running_calls(rs->sinks, l.v, l.n, boot);
	free(l.v);
}

static bool plan_has_stacks(const struct plan *plan)
{
	for (size_t i = 0; i < plan->n_probes; i++)
		if (plan->probe_by_id[i]->stack_mode)
			return true;
	return false;
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
	hand_running_calls(rs);
	sinks_set_stack_mappings(rs->sinks, &(struct stack_mappings_report){
		.on = plan_has_stacks(plan), .lost = st->mmap_lost,
		.malformed = st->mmap_malformed, .not_kept = st->mmap_not_kept,
		.files_unopened = st->mmap_files_unopened });
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
	if (rc == -EPIPE && !rs->output_failed) {
		p_info("the output's reader has gone: what came after it is counted as dropped");
		return EXIT_OK;
	}
	if (rc < 0 || rs->output_failed) {
		report_output_errors(rs, rc < 0 ? &e : NULL);
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

/* Each tick: the aggregations' intervals; the -c command reaped once it
 * exits (its /proc entry then goes, which ends the run). */
static void on_tick(void *ctx, uint64_t now_ns)
{
	struct run_state *rs = ctx;

	if (rs->agg)
		agg_reader_tick(rs->agg, now_ns);
	held_cmd_poll(rs->held);
}

/* The last interval of the aggregations, once the probes are detached. */
static void finish_aggregations(struct run_state *rs)
{
	struct timespec ts;
	uint64_t full;

	if (!rs->agg)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	full = agg_reader_final(rs->agg, (uint64_t)ts.tv_sec * 1000000000u +
						 (uint64_t)ts.tv_nsec);
	if (full)
		p_warn("%" PRIu64 " hit(s) were not (fully) counted: the aggregation map was full (each "
		       "interval says how many; raise --agg-keys / max_keys, now %u)", full,
		       plan_agg_max_keys(rs->plan));
}

static int run_loop(struct run_state *rs, const struct run_opts *o)
{
	struct loop_output lo = { .event = on_event, .atom = on_atom, .flush = on_flush,
				  .ending = on_ending, .outputs_gone = on_outputs_gone,
				  .congested = on_congested, .settle = on_settle, .ctx = rs };
	struct loop_opts lopts = { .flush_ms = o->flush_ms, .notice = on_notice,
				   .start = start_probes, .start_ctx = rs,
				   .tick = rs->agg || rs->held ? on_tick : NULL, .tick_ctx = rs,
				   .android = o->on_android, .suspend = &rs->suspend };
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
	/* A reader that does not read gets a bounded wait; then its events are
	 * lost, and counted before the summary is made. */
	sinks_settle(rs->sinks, OUTBUF_CLOSE_WAIT_MS);
	on_flush(rs);
	finish_aggregations(rs);
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

/* An output file, open and proven to take writes (vocab/outbuf.h), or NULL
 * with the error said; stdout when path is NULL (its sink checks it). */
static FILE *open_output(const char *path, const char *what)
{
	FILE *f;
	int rc;

	if (!path)
		return stdout;
	f = fopen(path, "we");
	if (!f) {
		p_err("%s %s: cannot open for writing: %s", what, path, strerror(errno));
		return NULL;
	}
	if ((rc = outbuf_writable(fileno(f))) < 0) {
		p_err("%s %s: cannot write: %s", what, path, strerror(-rc));
		fclose(f);
		return NULL;
	}
	return f;
}

/* Two output files that are one file (the same device and inode: `X` and
 * `./X`, a hard link, a symlink; or stdout, where the events go without
 * --output: `--trace X > X`) would interleave there: EXIT_USAGE, said.
 * A character device (/dev/null, a terminal) may take several. */
static int check_distinct_outputs(const struct run_opts *o, const struct run_files *f)
{
	const struct {
		const char *opt, *path;
		FILE *file;
	} outs[] = {
		{ "--output", o->sinks.output, f->out != stdout ? f->out : NULL },
		{ "--trace", o->sinks.trace, f->trace },
		{ "--profile", o->sinks.profile, f->profile != stderr ? f->profile : NULL },
		{ "--stacks", o->stacks.folded, f->stacks },
		{ "stdout", "(the events' output without --output)",
		  f->out == stdout ? stdout : NULL },
	};
	struct stat st[5];
	size_t n = sizeof(outs) / sizeof(outs[0]);

	for (size_t i = 0; i < n; i++)
		if (outs[i].file && fstat(fileno(outs[i].file), &st[i]) < 0)
			return EXIT_OK;  /* no answer: nothing to compare */
	for (size_t i = 0; i < n; i++)
		for (size_t k = i + 1; k < n; k++) {
			if (!outs[i].file || !outs[k].file || S_ISCHR(st[i].st_mode) ||
			    st[i].st_dev != st[k].st_dev || st[i].st_ino != st[k].st_ino)
				continue;
			p_err("%s %s and %s %s are the same file: the two outputs would "
			      "interleave there; give each its own file", outs[i].opt,
			      outs[i].path, outs[k].opt, outs[k].path);
			return EXIT_USAGE;
		}
	return EXIT_OK;
}

/* The output files (--output, --trace, --profile, --stacks), each opened and
 * checked before anything is loaded or attached; EXIT_RUNTIME (said) when
 * one cannot be written, EXIT_USAGE when two are one file.  The caller
 * closes what was opened either way. */
static int open_outputs(const struct run_opts *o, struct run_files *f)
{
	if (!(f->out = open_output(o->sinks.output, "--output")))
		return EXIT_RUNTIME;
	if (o->sinks.trace && !(f->trace = open_output(o->sinks.trace, "--trace")))
		return EXIT_RUNTIME;
	if (o->sinks.profile &&
	    !(f->profile = strcmp(o->sinks.profile, "-") ? open_output(o->sinks.profile,
								       "--profile") : stderr))
		return EXIT_RUNTIME;
	if (o->stacks.folded && !(f->stacks = open_output(o->stacks.folded, "--stacks")))
		return EXIT_RUNTIME;
	return check_distinct_outputs(o, f);
}

static void close_outputs(const struct run_files *f)
{
	if (f->out && f->out != stdout)
		fclose(f->out);
	if (f->trace)
		fclose(f->trace);
	if (f->profile && f->profile != stderr)
		fclose(f->profile);
	if (f->stacks)
		fclose(f->stacks);
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

static void print_verifier_log(const char *prog, const char *log)
{
	p_debug("verifier log of %s:\n%s", prog, log);
}

/* The objects, output and attach path this kernel offers (probed), or, with
 * --target-kernel, only those a kernel of that version would also offer;
 * what that version cannot take at all is a usage error (EXIT_USAGE, said)
 * before anything is opened, as --force-ringbuf is. */
static int pick_kernel_path(const struct plan *plan, const struct run_opts *o,
			    struct session_opts *so)
{
	struct kfeatures k, t;
	enum kfeature why = KF_GLOBAL_DATA;

	kfeatures_probe(&k, NULL);   /* uprobe_multi: the session asks itself */
	if (o->target_kernel) {
		kfeatures_for_version(o->target_kernel, &t);
		kfeatures_intersect(&k, &t);
		if (!t.has[KF_RINGBUF]) {
			if (so->output == OUTPUT_RINGBUF) {
				p_err("--force-ringbuf: a %u.%u kernel has no BPF ring buffer "
				      "(5.8+)", KVER_MAJOR(o->target_kernel),
				      KVER_MINOR(o->target_kernel));
				return EXIT_USAGE;
			}
			so->output = OUTPUT_PERFBUF;
		}
		so->force_pmu |= !t.has[KF_UPROBE_MULTI];
		so->no_perf_link = o->target_kernel < KVER(5, 15);
		so->force_tracefs |= !t.has[KF_UPROBE_PMU];
	}
	so->legacy = kfeatures_need_legacy(&k, &why);
	if (so->legacy && o->target_kernel && plan_has_stacks(plan)) {
		p_err("call stacks (--stack, stack_frames) have no legacy form: a %u.%u kernel "
		      "takes only the legacy BPF objects (the normal ones need 5.5+)",
		      KVER_MAJOR(o->target_kernel), KVER_MINOR(o->target_kernel));
		return EXIT_USAGE;
	}
	if (so->legacy)
		p_debug("legacy BPF objects: %s has no %s", o->target_kernel ? "the target kernel"
			: "this kernel", kfeature_name(why));
	return EXIT_OK;
}

static int open_aggregations(const struct plan *plan, const struct run_opts *o, FILE *out,
			     struct run_state *rs)
{
	struct agg_reader_opts ao = {
		.out = out, .json = o->sinks.format && !strcmp(o->sinks.format, "json"),
		.interval_s = o->agg_interval ? o->agg_interval : plan_agg_interval(plan),
		.uid = o->has_traffic_uid ? (int64_t)o->traffic_uid : -1,
		.sinks = rs->sinks, .traffic_atom = o->traffic_atom,
	};
	struct err e = { 0 };

	if (agg_reader_open(plan, rs->session, &ao, &rs->agg, &e) < 0) {
		p_err("%s", e.msg);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

int cmd_closer(int argc, char **argv)
{
	return closer_main(argc, argv);
}

/* The probes left to a closer (probe/closer.h): the traced processes keep
 * a trap per hit on them until it is done, so say which process that is. */
static void detach_all(struct session *s)
{
	size_t n = s ? session_attachment_count(s) : 0;
	pid_t closer = s ? session_detach_all(s) : 0;

	if (closer > 0)
		p_info("detaching %zu probe(s) in the background (process %d): until it is "
		       "done each hit on them still costs the traced process a trap (no record)",
		       n, (int)closer);
}

void run_warn_unmapped(const struct plan *plan)
{
	for (size_t i = 0, said = 0; i < plan->n_probes && said < 10; i++)
		if (plan->probe_by_id[i]->unmapped && ++said)
			p_warn("%s", plan->probe_by_id[i]->note);
}

/* Nothing is left after a run but freeing memory (the callers free the
 * plan, the matches and the code cache, and main returns rc): the shipped
 * static builds exit here and the kernel takes the memory back in one go.
 * Freed block by block, a 10,000-probe run's took 0.2 s of its exit (musl
 * hands each freed group back to the kernel: a TLB flush each).  The glibc
 * host builds, which memcheck and ASan check for leaks, free everything. */
static void exit_unless_leak_checked(int rc)
{
#ifndef __GLIBC__
	exit(rc);
#else
	(void)rc;
#endif
}

static int suspend_at(const void *ctx, uint64_t after, uint64_t before, uint64_t *mono)
{
	if (!suspend_watch_on(ctx))
		return -1;
	return suspend_watch_boundary(ctx, after, before, mono) ? 1 : 0;
}

/* Best effort (a machine without tracefs instances runs on, its suspends
 * bounded by the clock readings): said with -v. */
static void open_suspend_watch(struct run_state *rs)
{
	struct err e = { 0 };

	rs->suspend_src = (struct suspend_source){ .at = suspend_at, .ctx = &rs->suspend };
	if (suspend_watch_open(&rs->suspend, NULL, "/proc", &e) < 0)
		p_debug("suspends not watched (records made just before one may take the "
			"clock offset of after it): %s", e.msg);
}

/* A method trace (--trace-format art or speedscope) is made of calls with
 * both ends: every probe must record its calls' returns (call_return). */
static int check_method_trace(const struct plan *plan, const struct run_opts *o)
{
	enum trace_format f = o->sinks.trace_format;

	if (!o->sinks.trace || (f != TRACE_FORMAT_ART && f != TRACE_FORMAT_SPEEDSCOPE))
		return EXIT_OK;
	for (size_t i = 0; i < plan->n_probes; i++) {
		const struct plan_probe *p = plan->probe_by_id[i];

		if (p->prog->is_return && p->prog->record_kind)
			continue;
		p_err("--trace-format %s writes a method trace, which needs each call's entry "
		      "and return: %s (%s) records %s; trace with --ret (call_return)",
		      f == TRACE_FORMAT_ART ? "art" : "speedscope",
		      p->desc.method && *p->desc.method ? p->desc.method : "?", p->program_name,
		      p->prog->record_kind ? "only its entry" : "no calls");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int run_plan(const struct plan *plan, const struct run_opts *o)
{
	struct session_opts so = { .ringbuf_bytes = o->ringbuf_size,
				   .bpf_pid_filter = o->bpf_pid_filter, .output = o->output_mode,
				   .force_tracefs = o->force_tracefs,
				   .force_pmu = o->force_pmu, .code = o->code,
				   .interrupted = stop_signal_pending,
				   .verifier_log = print_verifier_log };
	struct run_state rs = { .plan = plan, .attached_atom = (int32_t)o->attached_atom,
				.error_atom = (int32_t)o->error_atom, .held = o->held,
				.trace_running = o->sinks.trace != NULL };
	struct run_files files = { 0 };
	struct err e = { 0 };
	int rc, acct_rc;

	if ((rc = check_method_trace(plan, o)) != EXIT_OK)
		return rc;
	raise_limits();
	if ((rc = pick_kernel_path(plan, o, &so)) != EXIT_OK)
		return rc;
	if ((rc = open_outputs(o, &files)) != EXIT_OK) {
		close_outputs(&files);
		return rc;
	}
	block_signals();
	if (session_open(plan, &so, &rs.session, &e) < 0) {
		/* (not when the session counted them up front and said so) */
		if ((e.code == -EMFILE || e.code == -ENFILE) && !strstr(e.msg, "hard limit"))
			say_fd_limit(plan, &e);
		p_err("%s", e.msg);
		close_outputs(&files);
		return (e.code == -EPERM || e.code == -EACCES) ? EXIT_PRIVILEGE : EXIT_RUNTIME;
	}
	open_suspend_watch(&rs);
	acct_rc = accounting_init(&rs.acct, plan->n_probes);
	/* the sinks (statsd's socket, stdout) open before the loop attaches */
	rc = acct_rc < 0 ? EXIT_RUNTIME : open_sinks(o, &files, &rs);
	if (rc == EXIT_OK)
		rc = open_aggregations(plan, o, files.out, &rs);
	if (rc == EXIT_OK)
		rc = run_loop(&rs, o);
	if (agg_reader_close(rs.agg, &e) < 0 && rc == EXIT_OK) {
		p_err("%s", e.msg);
		rc = EXIT_RUNTIME;
	}
	sinks_close(rs.sinks);
	suspend_watch_close(&rs.suspend);
	detach_all(rs.session);
	session_close(rs.session);
	close_outputs(&files);
	accounting_free(&rs.acct);
	cli_code_cache_report(o->code);
	rc = held_cmd_finish(o->held, rc);
	exit_unless_leak_checked(rc);
	return rc;
}
