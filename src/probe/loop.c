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

#include "probe/atoms.h"
#include "probe/legacy_str.h"
#include "records.h"
#include "stack/stacks.h"
#include "sys/name_cache.h"
#include "sys/proc.h"

struct loop;

struct ring_ctx {
	struct loop *L;
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
	int64_t mono_to_boot;     /* CLOCK_BOOTTIME - CLOCK_MONOTONIC */
	int64_t mono_to_wall;     /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	size_t tasks_running;
	struct proc_watch *watches; /* per task; used while stats->tasks[i].waiting */
	struct name_cache *names;  /* pid -> process name for events */
	size_t tasks_waiting;
	int watch_fd;             /* timerfd armed while tasks wait */
	int tick_fd;              /* timerfd checking tasks when flush_ms > CHECK_MS */
	int64_t drain_until;      /* CLOCK_MONOTONIC_COARSE end of this drain's slice; 0: none */
	uint64_t *drops_seen;     /* per probe: kernel drops already written as drop records */
	int64_t drops_checked;    /* CLOCK_MONOTONIC of the last look at the counters */
	bool congested;           /* an output does not keep up: records wait in the kernel */
	struct stacks *stacks;    /* when a probe records stacks: the unwinder's caches */
	struct stack_trace *trace; /* the frames of the record being delivered */
	bool perf_cut;            /* a perf buffer's drain stopped at the slice's end */
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

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* bpf_ktime_get_ns() is CLOCK_MONOTONIC; statsd and traces want boot time.
 * The offsets only move across suspend, so refreshing them per tick is enough. */
static void refresh_clock_offsets(struct loop *L)
{
	int64_t m1 = clock_ns(CLOCK_MONOTONIC);
	int64_t b = clock_ns(CLOCK_BOOTTIME);
	int64_t w = clock_ns(CLOCK_REALTIME);
	int64_t m2 = clock_ns(CLOCK_MONOTONIC);
	int64_t m = m1 + (m2 - m1) / 2;

	L->mono_to_boot = b - m;
	L->mono_to_wall = w - m;
}

static void emit_atom(struct loop *L, const struct plan_probe *p, const struct event *ev,
		      uint32_t kind, const void *payload)
{
	const struct atom_src src = { .probe = p, .kind = kind, .payload = payload };
	struct atom_buf buf;
	struct atom atom;

	if (!L->out->atom || atoms_from_record(&src, &buf) <= 0)
		return;
	atom = (struct atom){
		.atom_id = buf.atom_id,
		.boot_ns = ev->boot_ns,
		.fields = buf.fields,
		.n_fields = buf.n_fields,
		.is_uid = buf.is_uid,
		.probe = &p->desc,
	};
	L->out->atom(L->out->ctx, &atom);
}

/* The record's envelope and kind when its length is exactly its kind's (and
 * its probe known); NULL (counted as malformed) otherwise. */
static const struct record_kind *check_record(struct loop *L, const void *data, size_t size,
					      struct ups_envelope *env)
{
	const struct record_kind *rk;

	if (size < sizeof(*env)) {
		L->stats->malformed++;
		return NULL;
	}
	memcpy(env, data, sizeof(*env));
	rk = record_kind_get(env->kind);
	if (!rk || size < rk->size || size != record_kind_size(rk, data, size) ||
	    env->probe_id >= L->plan->n_probes) {
		L->stats->malformed++;
		return NULL;
	}
	return rk;
}

static int deliver(struct loop *L, const void *data, size_t size,
		   const struct stack_trace *stack);

/* A stack record: unwind it, then deliver the record it wraps (which must
 * be a plain record of the same probe, thread and time) with the frames. */
static int on_stack_record(struct loop *L, const void *data, size_t size)
{
	struct stack_record r;
	struct ups_envelope inner;
	struct stack_trace *st = L->trace;

	if (stack_record_parse(data, size, &r) < 0 || !L->stacks || !st) {
		L->stats->malformed++;
		return 0;
	}
	memcpy(&inner, r.inner, sizeof(inner));
	if (inner.kind == UPS_REC_STACK || inner.probe_id != r.hdr.env.probe_id ||
	    inner.tid != r.hdr.env.tid || inner.ktime_ns != r.hdr.env.ktime_ns) {
		L->stats->malformed++;
		return 0;
	}
	stacks_walk(L->stacks, &r, L->plan->probe_by_id[inner.probe_id < L->plan->n_probes
							? inner.probe_id : 0]->stack_frames, st);
	return deliver(L, r.inner, r.hdr.inner_len, st);
}

/* A legacy object's record, copied and with its raw UTF-16 Strings turned
 * into UTF-8 (probe/legacy_str.h); the string fields are the ones the
 * record's own decoder finds. */
static const void *legacy_record(const struct record_kind *rk, const void *data,
				 size_t size, char *copy, size_t cap)
{
	struct field f[CATALOG_MAX_FIELDS];
	size_t n;

	if (size > cap)
		return data;
	memcpy(copy, data, size);
	n = record_decode(rk, copy + sizeof(struct ups_envelope), f, CATALOG_MAX_FIELDS);
	legacy_str_fix_record(copy, size, f, n);
	return copy;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct ring_ctx *rc = ctx;
	struct ups_envelope env;
	const struct record_kind *rk = check_record(rc->L, data, size, &env);

	if (!rk)
		return 0;
	if (rk->wrapper)
		return on_stack_record(rc->L, data, size);
	return deliver(rc->L, data, size, NULL);
}

static int deliver(struct loop *L, const void *data, size_t size,
		   const struct stack_trace *stack)
{
	struct ups_envelope env;
	const struct record_kind *rk = check_record(L, data, size, &env);
	const struct plan_probe *p;
	struct field fields[CATALOG_MAX_FIELDS];
	struct event ev;
	char comm[UPS_COMM_LEN + 1];
	char legacy_copy[1024];   /* UPS_MAX_RECORD of a legacy object */
	const char *payload;

	if (!rk || rk->wrapper)
		return 0;
	if (session_legacy(L->session))
		data = legacy_record(rk, data, size, legacy_copy, sizeof(legacy_copy));
	payload = (const char *)data + sizeof(env);
	p = L->plan->probe_by_id[env.probe_id];
	memcpy(comm, env.comm, UPS_COMM_LEN);
	comm[UPS_COMM_LEN] = '\0';
	ev = (struct event){
		.kind = rk->is_return ? EVENT_RETURN : EVENT_RECORD,
		.boot_ns = env.ktime_ns + (uint64_t)L->mono_to_boot,
		.wall_ns = (int64_t)env.ktime_ns + L->mono_to_wall,
		.pid = env.pid,
		.tid = env.tid,
		.comm = comm,
		.process = name_cache_get(L->names, (pid_t)env.pid),
		.probe = &p->desc,
		.fields = fields,
		.n_fields = record_decode(rk, payload, fields, CATALOG_MAX_FIELDS),
		.duration_ns = record_duration(rk, payload),
		.stack = stack,
	};
	L->stats->delivered[env.probe_id]++;
	if (L->out->event)
		L->out->event(L->out->ctx, &ev);
	emit_atom(L, p, &ev, env.kind, payload);
	/* An output that does not keep up: the next records wait in the kernel. */
	if (L->out->congested && L->out->congested(L->out->ctx)) {
		L->congested = true;
		return -EAGAIN;
	}
	/* The record is consumed either way; -EAGAIN only stops this drain.  The
	 * coarse clock (a tick's resolution, plenty for 100 ms slices) costs a
	 * few ns from the vDSO, so it is read for every record: a sink may
	 * spend up to its wait budget on any one of them. */
	if (L->drain_until && clock_ns(CLOCK_MONOTONIC_COARSE) > L->drain_until)
		return -EAGAIN;
	return 0;
}

static void report_lost(struct loop *L, uint64_t lost)
{
	L->stats->lost += lost;
	if (L->out->event) {
		struct event ev = { .kind = EVENT_LOST, .n_lost = lost,
				    .boot_ns = (uint64_t)clock_ns(CLOCK_BOOTTIME) };
		L->out->event(L->out->ctx, &ev);
	}
}

/* Records the BPF programs could not reserve room for are counted per probe
 * in the kernel; each new count becomes a drop record, so the event stream
 * says where it has holes (the summary says how many).  A look costs a map
 * read per probe: once a second, and once more at the end. */
#define DROP_CHECK_NS 1000000000

static void report_drops(struct loop *L, bool now)
{
	int64_t t = clock_ns(CLOCK_MONOTONIC);

	if (!L->drops_seen || (!now && t - L->drops_checked < DROP_CHECK_NS))
		return;
	L->drops_checked = t;
	for (size_t i = 0; i < L->plan->n_probes; i++) {
		struct ups_probe_counters c;
		struct event ev;

		if (session_probe_counters(L->session, (uint32_t)i, &c) < 0 ||
		    c.drops <= L->drops_seen[i])
			continue;
		ev = (struct event){ .kind = EVENT_DROP, .n_lost = c.drops - L->drops_seen[i],
				     .boot_ns = (uint64_t)clock_ns(CLOCK_BOOTTIME),
				     .probe = &L->plan->probe_by_id[i]->desc };
		L->drops_seen[i] = c.drops;
		if (L->out->event)
			L->out->event(L->out->ctx, &ev);
	}
}

/* A raw perf record: PERF_RECORD_SAMPLE carries {u32 size; data[size]} with
 * the data padded to 8 bytes (trimmed back to the record's own size here);
 * PERF_RECORD_LOST carries {u64 id; u64 lost}. */
static enum bpf_perf_event_ret on_perf_event_raw(void *ctx, int cpu, struct perf_event_header *h)
{
	struct ring_ctx *rc = ctx;
	const uint8_t *p = (const uint8_t *)(h + 1);
	size_t avail = h->size >= sizeof(*h) ? h->size - sizeof(*h) : 0;

	if (h->type == PERF_RECORD_LOST && avail >= 16) {
		uint64_t lost;
		memcpy(&lost, p + 8, sizeof(lost));
		report_lost(rc->L, lost);
	} else if (h->type == PERF_RECORD_SAMPLE && avail >= 4) {
		uint32_t size;
		struct ups_envelope env;
		const struct record_kind *rk;

		memcpy(&size, p, sizeof(size));
		if (size > avail - 4) {
			rc->L->stats->malformed++;
			return LIBBPF_PERF_EVENT_CONT;
		}
		if (size >= sizeof(env)) {
			memcpy(&env, p + 4, sizeof(env));
			rk = record_kind_get(env.kind);
			size_t want = rk ? record_kind_size(rk, p + 4, size) : 0;
			if (want && size >= want && size - want < 8)
				size = (uint32_t)want;
		}
		int r = on_record(rc, (void *)(p + 4), size);

		/* The slice is over or an output does not keep up: leave the rest of
		 * this CPU's buffer for the next drain (a perf buffer read to its
		 * head could take as long as a slow sink needs for 4 MiB of records). */
		if (r == -EAGAIN || (r < 0 && rc->L->congested)) {
			rc->L->perf_cut = true;
			return LIBBPF_PERF_EVENT_DONE;
		}
	}
	return LIBBPF_PERF_EVENT_CONT;
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
	int ncpu = libbpf_num_possible_cpus();
	size_t pages = 1;
	LIBBPF_OPTS(perf_buffer_raw_opts, ro);

	while (pages * (size_t)page * (size_t)(ncpu > 0 ? ncpu : 1) < c->ring->bytes &&
	       pages < 4096)
		pages <<= 1;
	if (pages < 8)
		pages = 8;
	if (attr.wakeup_watermark > pages * (size_t)page / 2)
		attr.wakeup_watermark = (__u32)(pages * (size_t)page / 2);
	c->pb = perf_buffer__new_raw(c->ring->map_fd, pages, &attr, on_perf_event_raw, c, &ro);
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
		L->ring_ctxs[i] = (struct ring_ctx){ .L = L, .ring = r };
		if (r->perf) {
			int rc = setup_perf(L, &L->ring_ctxs[i], err);
			if (rc < 0)
				return rc;
		} else if (!L->rb) {
			L->rb = ring_buffer__new(r->map_fd, on_record, &L->ring_ctxs[i], NULL);
			if (!L->rb)
				return err_set(err, -errno, "ring buffer %s: %s", r->map,
					       strerror(errno));
		} else if (ring_buffer__add(L->rb, r->map_fd, on_record, &L->ring_ctxs[i]) < 0) {
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
	name_cache_get(L->names, pid);
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
		if (t->duration_seconds > 0 &&
		    now - ts->start_boot_ns >= (uint64_t)t->duration_seconds * 1000000000ull) {
			if (ts->waiting) {
				end_task(L, i, TASK_END_NEVER_STARTED);
				notice(L, "task %zu: no %s%s%s started within %d s", i,
				       t->wait_name ? "process named '" : "app process",
				       t->wait_name ? t->wait_name : "", t->wait_name ? "'" : "",
				       t->duration_seconds);
				continue;
			}
			end_task(L, i, TASK_END_DURATION);
			notice(L, "task %zu: duration of %d s elapsed", i, t->duration_seconds);
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

enum { TAG_RING = 1, TAG_TIMER, TAG_SIGNAL, TAG_WATCH, TAG_TICK };

/* How often the duration and the targets are checked when --flush-ms is
 * longer: the duration always wins over the drain period. */
#define CHECK_MS 100
/* How often a congested output is offered more. */
#define CONGESTED_RETRY_MS 10

/* The known targets' mappings, read before the probes are attached and
 * again once they are (a read that fails, the target having exited, keeps
 * what was read before): code a target maps before its first hit is then
 * known even if it exits before its records are drained. */
static void prime_stacks(struct loop *L)
{
	if (!L->stacks)
		return;
	for (size_t t = 0; t < L->plan->n_tasks; t++)
		for (size_t j = 0; j < L->plan->tasks[t].n_pids; j++)
			stacks_prime(L->stacks, (uint32_t)L->plan->tasks[t].pids[j]);
}

static int loop_init(struct loop *L, struct loop_stats *stats, struct err *err)
{
	uint64_t now = (uint64_t)clock_ns(CLOCK_BOOTTIME);

	memset(stats, 0, sizeof(*stats));
	stats->delivered = calloc(L->plan->n_probes ? L->plan->n_probes : 1, sizeof(uint64_t));
	stats->tasks = calloc(L->plan->n_tasks ? L->plan->n_tasks : 1, sizeof(*stats->tasks));
	if (!stats->delivered || !stats->tasks)
		return err_set(err, -ENOMEM, "out of memory");
	L->watches = calloc(L->plan->n_tasks ? L->plan->n_tasks : 1, sizeof(*L->watches));
	L->drops_seen = calloc(L->plan->n_probes ? L->plan->n_probes : 1, sizeof(uint64_t));
	L->names = malloc(sizeof(*L->names));
	if (!L->watches || !L->names || !L->drops_seen)
		return err_set(err, -ENOMEM, "out of memory");
	name_cache_init(L->names, proc_dir(L));
	/* Known targets now, while they surely run: short-lived ones may be gone
	 * by the time their records are drained. */
	for (size_t i = 0; i < L->plan->n_tasks; i++)
		for (size_t j = 0; j < L->plan->tasks[i].n_pids; j++)
			name_cache_get(L->names, L->plan->tasks[i].pids[j]);
	for (size_t i = 0; i < L->plan->n_tasks; i++) {
		const struct plan_task *t = &L->plan->tasks[i];
		stats->tasks[i].start_boot_ns = now;
		if (!t->wait_for_start)
			continue;
		/* Processes running now are not "starting": remember them first. */
		int rc = proc_watch_init(&L->watches[i], proc_dir(L), t->wait_name,
					 L->opts->android, err);
		if (rc < 0)
			return rc;
		stats->tasks[i].waiting = true;
		L->tasks_waiting++;
	}
	for (size_t i = 0; i < L->plan->n_probes && !L->stacks; i++) {
		if (!L->plan->probe_by_id[i]->stack_mode)
			continue;
		L->stacks = stacks_new(session_code_cache(L->session));
		L->trace = malloc(sizeof(*L->trace));
		if (!L->stacks || !L->trace)
			return err_set(err, -ENOMEM, "out of memory");
		prime_stacks(L);
	}
	L->tasks_running = L->plan->n_tasks;
	refresh_clock_offsets(L);
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
 * seen at the start, and sliced the same way.  Returns 0, 1 or -errno. */
static int drain(struct loop *L, bool sliced)
{
	int rc;

	if (L->congested && L->out->congested)
		L->congested = L->out->congested(L->out->ctx);
	if (L->congested)
		return 1;
	L->drain_until = sliced ? clock_ns(CLOCK_MONOTONIC_COARSE) + DRAIN_SLICE_NS : 0;
	if (L->rb && (rc = ring_buffer__consume(L->rb)) < 0) {
		if (rc == -EAGAIN)
			return 1;
		if (rc != -EINTR)
			return rc;
	}
	L->perf_cut = false;
	for (size_t i = 0; i < L->n_rings && !L->congested && !L->perf_cut; i++)
		if (L->ring_ctxs[i].pb && (rc = perf_buffer__consume(L->ring_ctxs[i].pb)) < 0 &&
		    rc != -EINTR)
			return rc;
	return L->congested || L->perf_cut ? 1 : 0;
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
		int n = epoll_wait(ep, evs, 8, L->congested ? CONGESTED_RETRY_MS : rc > 0 ? 0 : -1);
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
				refresh_clock_offsets(L);
				check_tasks(L);
				if (L->opts->tick)
					L->opts->tick(L->opts->tick_ctx,
						      (uint64_t)clock_ns(CLOCK_MONOTONIC));
				want_drain |= evs[i].data.u32 == TAG_TIMER;
				report_drops(L, false);
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
	prime_stacks(&L);
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
	report_drops(&L, true);
	if (out->flush)
		out->flush(out->ctx);
out:
	if (L.rb)
		ring_buffer__free(L.rb);
	for (size_t i = 0; L.ring_ctxs && i < L.n_rings; i++)
		perf_buffer__free(L.ring_ctxs[i].pb);
	free(L.ring_ctxs);
	for (size_t i = 0; L.watches && i < plan->n_tasks; i++)
		stop_waiting(&L, i);
	free(L.watches);
	free(L.names);
	free(L.drops_seen);
	stacks_free(L.stacks);
	free(L.trace);
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
