#include "probe/loop.h"

#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "probe/intake.h"
#include "sys/name_cache.h"
#include "sys/proc.h"

struct ring_ctx {
	const struct session_ring *ring;
	struct perf_buffer *pb;   /* perf mode: this ring's buffer */
};

struct loop {
	const struct plan *plan;
	struct session *session;
	const struct loop_opts *opts;
	const struct loop_output *out;
	struct loop_stats *stats;
	struct ring_buffer *rb;
	struct ring_ctx *ring_ctxs;
	size_t n_rings;
	size_t tasks_running;
	struct proc_watch *watches; /* per task; used while stats->tasks[i].waiting */
	size_t tasks_waiting;
	int watch_fd;             /* timerfd armed while tasks wait */
	int tick_fd;              /* timerfd checking tasks when flush_ms > CHECK_MS */
	struct intake in;         /* the records: checked, decoded, handed to the outputs */
};

/* ring_buffer__consume() returns only once the ring is empty.  While a sink
 * is slower than the traced process (statsd waiting for room in its queue,
 * --statsd-wait), that may be never, and the loop would not see a signal or
 * the duration's end; so a drain hands control back after this long and the
 * loop resumes it right after looking at its other fds. */
#define DRAIN_SLICE_NS 100000000 /* 100 ms */

const char *task_end_name(enum task_end e)
{
	switch (e) {
	case TASK_RUNNING: return "running";
	case TASK_END_DURATION: return "duration";
	case TASK_END_TARGETS_EXITED: return "targets-exited";
	case TASK_END_SIGNAL: return "signal";
	case TASK_END_NEVER_STARTED: return "never-started";
	case TASK_END_ERROR: return "error";
	case TASK_END_OUTPUT_GONE: return "output-gone";
	}
	return "?";
}

static int setup_perf(struct loop *L, struct ring_ctx *c, struct err *err)
{
	/* Wake on a byte watermark, not per sample, as the ring buffer does. */
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_BPF_OUTPUT,
		.sample_type = PERF_SAMPLE_RAW,
		.sample_period = 1,
		.watermark = 1,
		.wakeup_watermark = c->ring->wakeup_bytes,
	};
	long page = sysconf(_SC_PAGESIZE);
	size_t pages = 1;
	LIBBPF_OPTS(perf_buffer_raw_opts, ro);

	/* Every CPU gets the whole size: a burst on one CPU (one thread, or
	 * threads the scheduler put there) fills that CPU's buffer alone, so
	 * splitting the size among the CPUs lost any burst larger than
	 * size / CPUs (3,017 of 20,000 records on one machine, none on one
	 * with fewer CPUs or a faster reader).  The memory is size x CPUs. */
	while (pages * (size_t)page < c->ring->bytes && pages < 4096)
		pages <<= 1;
	if (pages < 8)
		pages = 8;
	if (attr.wakeup_watermark > pages * (size_t)page / 2)
		attr.wakeup_watermark = (__u32)(pages * (size_t)page / 2);
	c->pb = perf_buffer__new_raw(c->ring->map_fd, pages, &attr, intake_perf_event, &L->in,
				     &ro);
	if (!c->pb)
		return err_set(err, -errno, "perf buffer %s: %s", c->ring->map, strerror(errno));
	return 0;
}

static int setup_rings(struct loop *L, struct err *err)
{
	size_t n = session_ring_count(L->session);

	L->ring_ctxs = calloc(n ? n : 1, sizeof(*L->ring_ctxs));
	if (!L->ring_ctxs)
		return err_set(err, -ENOMEM, "out of memory");
	L->n_rings = n;
	for (size_t i = 0; i < n; i++) {
		const struct session_ring *r = session_ring_at(L->session, i);
		L->ring_ctxs[i] = (struct ring_ctx){ .ring = r };
		if (r->perf) {
			int rc = setup_perf(L, &L->ring_ctxs[i], err);
			L->in.reorder_on = true;
			if (rc < 0)
				return rc;
		} else if (!L->rb) {
			L->rb = ring_buffer__new(r->map_fd, intake_record, &L->in, NULL);
			if (!L->rb)
				return err_set(err, -errno, "ring buffer %s: %s", r->map,
					       strerror(errno));
		} else if (ring_buffer__add(L->rb, r->map_fd, intake_record, &L->in) < 0) {
			return err_set(err, -errno, "ring buffer %s: %s", r->map, strerror(errno));
		}
	}
	return 0;
}

static void notice(struct loop *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void notice(struct loop *L, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!L->opts->notice)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	L->opts->notice(L->opts->notice_ctx, msg);
}

static void stop_waiting(struct loop *L, size_t ti);

static void end_task(struct loop *L, size_t t, enum task_end why)
{
	struct loop_task_stats *ts = &L->stats->tasks[t];

	if (ts->end != TASK_RUNNING)
		return;
	stop_waiting(L, t);
	/* The last task: stop every program at once and leave the detaching to
	 * the run's end (session_detach_all), which may hand it to a process
	 * of its own; the others are detached here, while the rest run on. */
	if (L->tasks_running == 1)
		session_stop(L->session);
	else
		session_detach_task(L->session, (uint32_t)t);
	ts->end = why;
	ts->end_boot_ns = (uint64_t)clock_ns(CLOCK_BOOTTIME);
	L->tasks_running--;
}

static const char *proc_dir(const struct loop *L)
{
	return L->opts->proc_dir ? L->opts->proc_dir : "/proc";
}

static bool targets_alive(struct loop *L, size_t ti)
{
	const struct plan_task *t = &L->plan->tasks[ti];

	if (t->wait_for_start)
		return proc_alive(proc_dir(L), L->stats->tasks[ti].started_pid);
	for (size_t i = 0; i < t->n_pids; i++)
		if (proc_alive(proc_dir(L), t->pids[i]))
			return true;
	return false;
}

static void stop_waiting(struct loop *L, size_t ti)
{
	if (!L->stats->tasks[ti].waiting)
		return;
	L->stats->tasks[ti].waiting = false;
	proc_watch_free(&L->watches[ti]);
	L->tasks_waiting--;
}

/* A waiting task's process appeared: attach, and count its duration from now. */
static void task_process_started(struct loop *L, size_t ti, pid_t pid)
{
	struct loop_task_stats *ts = &L->stats->tasks[ti];
	uint64_t now = (uint64_t)clock_ns(CLOCK_BOOTTIME);
	struct err e = { 0 };

	stop_waiting(L, ti);
	ts->started_pid = pid;
	name_cache_get(L->in.names, pid, NULL, 0);
	if (session_attach_task_pid(L->session, (uint32_t)ti, pid, &e) < 0) {
		notice(L, "task %zu: process %d started but attaching failed: %s", ti, (int)pid,
		       e.msg);
		end_task(L, ti, TASK_END_ERROR);
		return;
	}
	notice(L, "task %zu: process %d started; attached %.1f ms after the run began", ti,
	       (int)pid, (double)(now - ts->start_boot_ns) / 1e6);
	ts->start_boot_ns = now;
}

static void watch_tasks(struct loop *L)
{
	for (size_t i = 0; i < L->plan->n_tasks && L->tasks_waiting; i++) {
		pid_t pid;
		if (!L->stats->tasks[i].waiting)
			continue;
		pid = proc_watch_poll(&L->watches[i]);
		if (pid > 0)
			task_process_started(L, i, pid);
	}
}

static void check_tasks(struct loop *L)
{
	uint64_t now = (uint64_t)clock_ns(CLOCK_BOOTTIME);

	for (size_t i = 0; i < L->plan->n_tasks; i++) {
		const struct plan_task *t = &L->plan->tasks[i];
		struct loop_task_stats *ts = &L->stats->tasks[i];
		if (ts->end != TASK_RUNNING)
			continue;
		if (t->duration_ms > 0 && now - ts->start_boot_ns >= t->duration_ms * 1000000ull) {
			if (ts->waiting) {
				end_task(L, i, TASK_END_NEVER_STARTED);
				notice(L, "task %zu: no %s%s%s started within %g s", i,
				       t->wait_name ? "process named '" : "app process",
				       t->wait_name ? t->wait_name : "", t->wait_name ? "'" : "",
				       (double)t->duration_ms / 1000);
				continue;
			}
			end_task(L, i, TASK_END_DURATION);
			notice(L, "task %zu: duration of %g s elapsed", i,
			       (double)t->duration_ms / 1000);
		} else if (!ts->waiting && !t->all_processes && !targets_alive(L, i)) {
			end_task(L, i, TASK_END_TARGETS_EXITED);
			notice(L, "task %zu: every target process has exited", i);
		}
	}
}

static int make_timer(uint32_t period_ms, struct err *err)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	struct itimerspec its = { 0 };

	if (fd < 0)
		return err_set(err, -errno, "timerfd_create: %s", strerror(errno));
	its.it_interval.tv_sec = period_ms / 1000;
	its.it_interval.tv_nsec = (long)(period_ms % 1000) * 1000000;
	its.it_value = its.it_interval;
	if (timerfd_settime(fd, 0, &its, NULL) < 0) {
		close(fd);
		return err_set(err, -errno, "timerfd_settime: %s", strerror(errno));
	}
	return fd;
}

static void disarm(int fd)
{
	struct itimerspec its = { 0 };
	timerfd_settime(fd, 0, &its, NULL);
}

static int make_signalfd(struct err *err)
{
	sigset_t set;
	int fd;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		return err_set(err, -errno, "signalfd: %s", strerror(errno));
	return fd;
}

static int epoll_add(int ep, int fd, uint32_t tag, struct err *err)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = tag };
	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
		return err_set(err, -errno, "epoll_ctl: %s", strerror(errno));
	return 0;
}

enum { TAG_RING = 1, TAG_TIMER, TAG_SIGNAL, TAG_WATCH, TAG_TICK, TAG_MMAP };

/* How often the duration and the targets are checked when --flush-ms is
 * longer: the duration always wins over the drain period. */
#define CHECK_MS 100
/* How often a congested output is offered more. */
#define CONGESTED_RETRY_MS 10

static int loop_init(struct loop *L, struct loop_stats *stats, struct err *err)
{
	uint64_t now = (uint64_t)clock_ns(CLOCK_BOOTTIME);
	int rc;

	memset(stats, 0, sizeof(*stats));
	stats->delivered = calloc(L->plan->n_probes ? L->plan->n_probes : 1, sizeof(uint64_t));
	stats->tasks = calloc(L->plan->n_tasks ? L->plan->n_tasks : 1, sizeof(*stats->tasks));
	if (!stats->delivered || !stats->tasks)
		return err_set(err, -ENOMEM, "out of memory");
	L->in = (struct intake){
		.plan = L->plan, .session = L->session,
		.out = { .event = L->out->event, .atom = L->out->atom,
			 .congested = L->out->congested, .ctx = L->out->ctx },
		.delivered = stats->delivered, .malformed = &stats->malformed,
		.lost = &stats->lost, .suspend = L->opts->suspend,
	};
	rc = intake_open(&L->in, proc_dir(L), err);
	if (rc < 0)
		return rc;
	L->watches = calloc(L->plan->n_tasks ? L->plan->n_tasks : 1, sizeof(*L->watches));
	if (!L->watches)
		return err_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < L->plan->n_tasks; i++) {
		const struct plan_task *t = &L->plan->tasks[i];
		stats->tasks[i].start_boot_ns = now;
		if (!t->wait_for_start)
			continue;
		/* Processes running now are not "starting": remember them first. */
		rc = proc_watch_init(&L->watches[i], proc_dir(L), t->wait_name, L->opts->android,
				     err);
		if (rc < 0)
			return rc;
		stats->tasks[i].waiting = true;
		L->tasks_waiting++;
	}
	L->tasks_running = L->plan->n_tasks;
	return setup_rings(L, err);
}

static int drain_signal(int sfd)
{
	struct signalfd_siginfo si;
	int sig = 0;
	while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		sig = (int)si.ssi_signo;
	return sig;
}

/* Consume what the buffers hold.  sliced: stop after DRAIN_SLICE_NS and
 * return 1 when records may be left (the caller comes back at once); else
 * run until the ring buffer is empty.  Perf buffers are read up to the head
 * seen at the start, into the reorder (probe/reorder.h), which hands out in
 * time order what was stamped before the drain began (less the margin);
 * the last drain (not sliced) hands out everything.  Returns 0, 1 or -errno. */
static int drain(struct loop *L, bool sliced)
{
	uint64_t start;
	int rc;

	if (L->in.congested && L->out->congested)
		L->in.congested = L->out->congested(L->out->ctx);
	if (L->in.congested)
		return 1;
	L->in.drain_until = sliced ? clock_ns(CLOCK_MONOTONIC_COARSE) + DRAIN_SLICE_NS : 0;
	/* The mappings first: a record read below may be of code mapped just now, by a
	 * process already gone. */
	start = (uint64_t)clock_ns(CLOCK_MONOTONIC);
	intake_drain_mmaps(&L->in);
	if (L->rb && (rc = ring_buffer__consume(L->rb)) < 0) {
		if (rc == -EAGAIN)
			return 1;
		if (rc != -EINTR)
			return rc;
	}
	L->in.perf_cut = false;
	for (size_t i = 0; i < L->n_rings && !L->in.congested && !L->in.perf_cut; i++)
		if (L->ring_ctxs[i].pb && (rc = perf_buffer__consume(L->ring_ctxs[i].pb)) < 0 &&
		    rc != -EINTR)
			return rc;
	if (L->in.reorder_on && !L->in.perf_cut &&
	    intake_release(&L->in, !sliced ? UINT64_MAX
			   : start > REORDER_MARGIN_NS ? start - REORDER_MARGIN_NS : 0) == -EAGAIN)
		L->in.perf_cut = true;
	if (L->in.congested || L->in.perf_cut)
		return 1;
	intake_drained(&L->in, (int64_t)start);
	return 0;
}

static void end_all(struct loop *L, enum task_end why)
{
	for (size_t t = 0; t < L->plan->n_tasks; t++)
		end_task(L, t, why);
}

static int run_epoll(struct loop *L, int ep, int tfd, int sfd, struct err *err)
{
	struct epoll_event evs[8];
	int rc = 0;

	while (L->tasks_running > 0) {
		/* a drain cut short: look at signals and timers, then go on with it */
		int n = epoll_wait(ep, evs, 8,
				   L->in.congested ? CONGESTED_RETRY_MS : rc > 0 ? 0 : -1);
		bool want_drain = rc > 0;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return err_set(err, -errno, "epoll_wait: %s", strerror(errno));
		}
		for (int i = 0; i < n; i++) {
			uint64_t ticks;
			switch (evs[i].data.u32) {
			case TAG_TIMER:
			case TAG_TICK:
				if (read(evs[i].data.u32 == TAG_TIMER ? tfd : L->tick_fd, &ticks,
					 sizeof(ticks)) < 0 && errno != EAGAIN)
					return err_set(err, -errno, "timerfd: %s", strerror(errno));
				intake_refresh_clocks(&L->in);
				check_tasks(L);
				if (L->opts->tick)
					L->opts->tick(L->opts->tick_ctx,
						      (uint64_t)clock_ns(CLOCK_MONOTONIC));
				want_drain |= evs[i].data.u32 == TAG_TIMER;
				intake_report_drops(&L->in, false);
				break;
			case TAG_WATCH:
				if (read(L->watch_fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
					return err_set(err, -errno, "timerfd: %s", strerror(errno));
				watch_tasks(L);
				if (!L->tasks_waiting)
					disarm(L->watch_fd);
				break;
			case TAG_SIGNAL:
				L->stats->signal = drain_signal(sfd);
				end_all(L, TASK_END_SIGNAL);
				break;
			default:
				want_drain = true;
				break;
			}
		}
		/* Wakeups come in batches; the timer drains what is left. */
		if (!want_drain)
			continue;
		rc = drain(L, true);
		if (rc < 0)
			return err_set(err, rc, "consuming event buffers: %s", strerror(-rc));
		if (L->out->flush)
			L->out->flush(L->out->ctx);
		if (L->out->outputs_gone && L->out->outputs_gone(L->out->ctx) &&
		    L->tasks_running) {
			end_all(L, TASK_END_OUTPUT_GONE);
			notice(L, "the output was closed by its reader: detached");
		}
	}
	return 0;
}

int loop_run(const struct plan *plan, struct session *s, const struct loop_opts *opts,
	     const struct loop_output *out, struct loop_stats *stats, struct err *err)
{
	struct loop L = { .plan = plan, .session = s, .opts = opts, .out = out, .stats = stats,
			  .watch_fd = -1, .tick_fd = -1 };
	int ep = -1, tfd = -1, sfd = -1, rc;

	rc = loop_init(&L, stats, err);
	if (rc < 0)
		goto out;
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0) {
		rc = err_set(err, -errno, "epoll_create1: %s", strerror(errno));
		goto out;
	}
	tfd = rc = make_timer(opts->flush_ms ? opts->flush_ms : 100, err);
	if (rc < 0)
		goto out;
	sfd = rc = make_signalfd(err);
	if (rc < 0)
		goto out;
	if ((rc = epoll_add(ep, tfd, TAG_TIMER, err)) < 0 ||
	    (rc = epoll_add(ep, sfd, TAG_SIGNAL, err)) < 0 ||
	    (L.rb && (rc = epoll_add(ep, ring_buffer__epoll_fd(L.rb), TAG_RING, err)) < 0))
		goto out;
	for (size_t i = 0; i < L.n_rings; i++)
		if (L.ring_ctxs[i].pb &&
		    (rc = epoll_add(ep, perf_buffer__epoll_fd(L.ring_ctxs[i].pb), TAG_RING,
				    err)) < 0)
			goto out;
	const int *mfds;
	size_t n_mfds = intake_mmap_fds(&L.in, &mfds);
	for (size_t i = 0; i < n_mfds; i++)
		if ((rc = epoll_add(ep, mfds[i], TAG_MMAP, err)) < 0)
			goto out;
	if (L.in.mmap_error[0])
		notice(&L, "%s", L.in.mmap_error);
	if (opts->flush_ms > CHECK_MS) {
		L.tick_fd = rc = make_timer(CHECK_MS, err);
		if (rc < 0 || (rc = epoll_add(ep, L.tick_fd, TAG_TICK, err)) < 0)
			goto out;
	}
	if (L.tasks_waiting) {
		L.watch_fd = rc = make_timer(opts->watch_ms ? opts->watch_ms : 10, err);
		if (rc < 0 || (rc = epoll_add(ep, L.watch_fd, TAG_WATCH, err)) < 0)
			goto out;
	}
	if (opts->start && (rc = opts->start(opts->start_ctx, err)) < 0)
		goto out;
	intake_prime_stacks(&L.in);
	/* Durations count from attach (or, for a waiting task, from now until
	 * its process starts, then again from its attach). */
	for (size_t i = 0; i < plan->n_tasks; i++)
		stats->tasks[i].start_boot_ns = (uint64_t)clock_ns(CLOCK_BOOTTIME);
	watch_tasks(&L);
	rc = run_epoll(&L, ep, tfd, sfd, err);
	/* Records submitted before the last detach are still in the buffers: all of
	 * them, however long a slow sink takes (bounded by the buffer size; after a
	 * signal, `ending` lets the run make its sinks stop waiting). */
	if (out->ending)
		out->ending(out->ctx, stats->signal);
	/* An output that does not keep up gets a bounded wait each round (its
	 * reader takes something, or it fails and its events are counted lost). */
	while (drain(&L, false) == 1 && out->settle)
		out->settle(out->ctx);
	intake_report_drops(&L.in, true);
	if (out->flush)
		out->flush(out->ctx);
out:
	{
		struct intake_mmap_losses ml;
		intake_mmap_losses(&L.in, &ml);
		stats->mmap_lost = ml.lost;
		stats->mmap_malformed = ml.malformed;
		stats->mmap_not_kept = ml.not_kept;
		stats->mmap_files_unopened = ml.files_unopened;
	}
	if (L.rb)
		ring_buffer__free(L.rb);
	for (size_t i = 0; L.ring_ctxs && i < L.n_rings; i++)
		perf_buffer__free(L.ring_ctxs[i].pb);
	free(L.ring_ctxs);
	for (size_t i = 0; L.watches && i < plan->n_tasks; i++)
		stop_waiting(&L, i);
	free(L.watches);
	intake_close(&L.in);
	if (L.watch_fd >= 0)
		close(L.watch_fd);
	if (L.tick_fd >= 0)
		close(L.tick_fd);
	if (ep >= 0)
		close(ep);
	if (tfd >= 0)
		close(tfd);
	if (sfd >= 0)
		close(sfd);
	return rc < 0 ? rc : 0;
}

void loop_stats_free(struct loop_stats *stats)
{
	free(stats->delivered);
	free(stats->tasks);
	memset(stats, 0, sizeof(*stats));
}
