#include "probe/intake.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "code/codecache.h"
#include "common/clock.h"
#include "sys/maps.h"
#include "sys/perf_mmap.h"
#include "probe/atoms.h"
#include "probe/legacy_str.h"
#include "probe/suspend_watch.h"
#include "records.h"
#include "stack/stacks.h"
#include "sys/name_cache.h"

void intake_refresh_clocks(struct intake *in)
{
	int64_t m1 = clock_ns(CLOCK_MONOTONIC);
	int64_t b = clock_ns(CLOCK_BOOTTIME);
	int64_t w = clock_ns(CLOCK_REALTIME);
	int64_t m2 = clock_ns(CLOCK_MONOTONIC);
	int64_t m = m1 + (m2 - m1) / 2;
	uint64_t at = 0;
	bool watched = in->suspend && suspend_watch_on(in->suspend);

	if (in->clocks_mono && b - m - in->mono_to_boot > INTAKE_SUSPEND_JUMP_NS &&
	    (!watched || suspend_watch_boundary(in->suspend, in->clocks_mono, (uint64_t)m, &at))) {
		/* the machine suspended since the last reading: records made before
		 * it are stamped before its machine_suspend event, else (no watch)
		 * before that reading, which is only a bound.  With the watch on and
		 * no such event the offset moved by a reading's noise (a reader
		 * descheduled between its clock reads), no suspend. */
		in->before_boot = in->mono_to_boot;
		in->before_wall = in->mono_to_wall;
		in->resumed_mono = watched ? at : in->clocks_mono + 1;
	}
	in->mono_to_boot = b - m;
	in->mono_to_wall = w - m;
	in->clocks_mono = (uint64_t)m;
}

/* The offsets of a record stamped mono: the last reading's, or, made
 * before the last suspend, the ones read before it. */
static int64_t boot_offset(const struct intake *in, uint64_t mono)
{
	return mono < in->resumed_mono ? in->before_boot : in->mono_to_boot;
}

static int64_t wall_offset(const struct intake *in, uint64_t mono)
{
	return mono < in->resumed_mono ? in->before_wall : in->mono_to_wall;
}

/* The known targets' mappings, read before the probes are attached and
 * again once they are (a read that fails, the target having exited, keeps
 * what was read before); after that the kernel's mapping records tell what
 * they map, so code a target maps at any time before a hit is known even if
 * it exits before its records are drained.  Without those records (the
 * kernel refused them) only the reads, and a read on a PC outside them. */
void intake_prime_stacks(struct intake *in)
{
	if (!in->stacks)
		return;
	for (size_t t = 0; t < in->plan->n_tasks; t++)
		for (size_t j = 0; j < in->plan->tasks[t].n_pids; j++) {
			uint32_t pid = (uint32_t)in->plan->tasks[t].pids[j];
			if (in->mmaps)
				code_cache_follow(in->code, pid);
			else
				stacks_prime(in->stacks, pid);
		}
}

/* The probed files (device, inode) a system-wide run looks for in the processes
 * that run already. */
#define MAX_PROBED_FILES 64
struct probed_files {
	dev_t dev[MAX_PROBED_FILES];
	ino_t ino[MAX_PROBED_FILES];
	size_t n;
};

static int maps_probed(void *ctx, const struct proc_mapping *m)
{
	const struct probed_files *pf = ctx;

	for (size_t i = 0; proc_mapping_exec(m) && i < pf->n; i++)
		if (m->dev == pf->dev[i] && m->inode == pf->ino[i])
			return 1;
	return 0;
}

/* A system-wide run: every process running now that maps a probed file can hit
 * it and exit before its records are read; its mappings are read now (the
 * records tell the rest).  Others are read when first heard of. */
static void prime_running(struct intake *in, const char *proc_dir)
{
	struct probed_files pf = { .n = 0 };
	DIR *d;
	struct dirent *de;

	for (size_t i = 0; i < in->plan->n_probes && pf.n < MAX_PROBED_FILES; i++) {
		struct stat st;
		size_t k;
		if (stat(in->plan->probe_by_id[i]->path, &st) != 0)
			continue;
		for (k = 0; k < pf.n && (pf.dev[k] != st.st_dev || pf.ino[k] != st.st_ino); k++)
			;
		if (k == pf.n) {
			pf.dev[pf.n] = st.st_dev;
			pf.ino[pf.n++] = st.st_ino;
		}
	}
	if (!pf.n || !(d = opendir(proc_dir ? proc_dir : "/proc")))
		return;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		struct err e = { 0 };
		if (*end || pid <= 0)
			continue;
		if (proc_maps_read(proc_dir, (pid_t)pid, maps_probed, &pf, &e) == 1)
			code_cache_follow(in->code, (uint32_t)pid);
	}
	closedir(d);
}

/* Mapping records for the unwinder, opened before anything is attached: of
 * every process when a task traces all of them or waits for one to start,
 * else of the targets and their children. */
static void open_mmaps(struct intake *in, const char *proc_dir)
{
	struct err e = { 0 };
	bool all = false;

	in->code = session_code_cache(in->session);
	for (size_t t = 0; t < in->plan->n_tasks; t++)
		all |= in->plan->tasks[t].all_processes || in->plan->tasks[t].wait_for_start;
	if (perf_mmap_open(64, &in->mmaps, &e) < 0) {
		snprintf(in->mmap_error, sizeof(in->mmap_error),
			 "call stacks: no mapping records (%s): a process that exits before its "
			 "records are read may show its frames as unknown", e.msg);
		return;
	}
	if (all) {
		code_cache_follow_all(in->code);
		prime_running(in, proc_dir);
	}
}

size_t intake_mmap_fds(const struct intake *in, const int **fds)
{
	*fds = NULL;
	return in->mmaps ? perf_mmap_fds(in->mmaps, fds) : 0;
}

static void on_mmap_record(void *ctx, const struct perf_mmap_rec *r)
{
	code_cache_note(ctx, r);
}

void intake_drain_mmaps(struct intake *in)
{
	if (!in->mmaps)
		return;
	/* every mapping made before this time is in the rings now */
	in->mmaps_upto = (uint64_t)clock_ns(CLOCK_MONOTONIC);
	perf_mmap_drain(in->mmaps, on_mmap_record, in->code);
}

/* How long after a record's time the records it could need are kept: a
 * record is read after its time by at most a drain's lateness. */
#define FORGET_AFTER_NS 2000000000ll

void intake_drained(struct intake *in, int64_t began_ns)
{
	if (in->mmaps && began_ns > FORGET_AFTER_NS)
		code_cache_forget_before(in->code, (uint64_t)(began_ns - FORGET_AFTER_NS));
}

void intake_mmap_losses(const struct intake *in, struct intake_mmap_losses *out)
{
	struct perf_mmap_stats ps;
	struct code_cache_track_stats ts;

	memset(out, 0, sizeof(*out));
	if (!in->mmaps)
		return;
	perf_mmap_get_stats(in->mmaps, &ps);
	code_cache_get_track_stats(in->code, &ts);
	out->lost = ps.lost;
	out->malformed = ps.malformed + ps.dropped;
	out->not_kept = ts.mappings_not_kept + ts.procs_forgotten;
	out->files_unopened = ts.files_unopened;
}

int intake_open(struct intake *in, const char *proc_dir, struct err *err)
{
	const struct plan *plan = in->plan;

	in->drops_seen = calloc(plan->n_probes ? plan->n_probes : 1, sizeof(uint64_t));
	in->names = malloc(sizeof(*in->names));
	if (!in->names || !in->drops_seen)
		return err_set(err, -ENOMEM, "out of memory");
	name_cache_init(in->names, proc_dir);
	/* Known targets now, while they surely run: short-lived ones may be gone
	 * by the time their records are drained. */
	for (size_t i = 0; i < plan->n_tasks && !plan->held; i++)  /* -c: named after exec */
		for (size_t j = 0; j < plan->tasks[i].n_pids; j++)
			name_cache_get(in->names, plan->tasks[i].pids[j], NULL, 0);
	for (size_t i = 0; i < plan->n_probes && !in->stacks; i++) {
		if (!plan->probe_by_id[i]->stack_mode)
			continue;
		in->stacks = stacks_new(session_code_cache(in->session));
		in->trace = malloc(sizeof(*in->trace));
		if (!in->stacks || !in->trace)
			return err_set(err, -ENOMEM, "out of memory");
		open_mmaps(in, proc_dir);
		intake_prime_stacks(in);
	}
	intake_refresh_clocks(in);
	return 0;
}

void intake_close(struct intake *in)
{
	free(in->names);
	free(in->drops_seen);
	stacks_free(in->stacks);
	perf_mmap_close(in->mmaps);
	free(in->trace);
	reorder_free(&in->held);
}

static void emit_atom(struct intake *in, const struct plan_probe *p, const struct event *ev,
		      uint32_t kind, const void *payload)
{
	const struct atom_src src = { .probe = p, .kind = kind, .payload = payload };
	struct atom_buf buf;
	struct atom atom;

	if (!in->out.atom || atoms_from_record(&src, &buf) <= 0)
		return;
	atom = (struct atom){
		.atom_id = buf.atom_id,
		.boot_ns = ev->boot_ns,
		.fields = buf.fields,
		.n_fields = buf.n_fields,
		.is_uid = buf.is_uid,
		.probe = &p->desc,
	};
	in->out.atom(in->out.ctx, &atom);
}

/* The record's envelope and kind when its length is exactly its kind's (and
 * its probe known); NULL (counted as malformed) otherwise. */
static const struct record_kind *check_record(struct intake *in, const void *data,
					      size_t size, struct ups_envelope *env)
{
	const struct record_kind *rk;

	if (size < sizeof(*env)) {
		(*in->malformed)++;
		return NULL;
	}
	memcpy(env, data, sizeof(*env));
	rk = record_kind_get(env->kind);
	if (!rk || size < rk->size || size != record_kind_size(rk, data, size) ||
	    env->probe_id >= in->plan->n_probes) {
		(*in->malformed)++;
		return NULL;
	}
	return rk;
}

static int deliver(struct intake *in, const void *data, size_t size,
		   const struct stack_trace *stack);

/* A stack record: unwind it, then deliver the record it wraps (which must
 * be a plain record of the same probe, thread and time) with the frames. */
static int on_stack_record(struct intake *in, const void *data, size_t size)
{
	struct stack_record r;
	struct ups_envelope inner;
	struct stack_trace *st = in->trace;
	uint32_t id;

	if (stack_record_parse(data, size, &r) < 0 || !in->stacks || !st) {
		(*in->malformed)++;
		return 0;
	}
	memcpy(&inner, r.inner, sizeof(inner));
	if (inner.kind == UPS_REC_STACK || inner.probe_id != r.hdr.env.probe_id ||
	    inner.tid != r.hdr.env.tid || inner.ktime_ns != r.hdr.env.ktime_ns) {
		(*in->malformed)++;
		return 0;
	}
	id = inner.probe_id < in->plan->n_probes ? inner.probe_id : 0;
	/* a hit after the last read of the mapping records: read them again (a
	 * mapping made before the hit is in them by now) */
	if (in->mmaps && r.hdr.env.ktime_ns >= in->mmaps_upto)
		intake_drain_mmaps(in);
	stacks_walk(in->stacks, &r, in->plan->probe_by_id[id]->stack_frames,
		    in->plan->probe_by_id[id]->stack_art_frames, st);
	return deliver(in, r.inner, r.hdr.inner_len, st);
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

int intake_record(void *ctx, void *data, size_t size)
{
	struct intake *in = ctx;
	struct ups_envelope env;
	const struct record_kind *rk = check_record(in, data, size, &env);

	if (!rk)
		return 0;
	if (rk->wrapper)
		return on_stack_record(in, data, size);
	return deliver(in, data, size, NULL);
}

/* After an event went out: -EAGAIN when this drain should stop (an output
 * does not keep up, or the slice is over), else 0. */
static int delivered(struct intake *in)
{
	/* An output that does not keep up: the next records wait in the kernel. */
	if (in->out.congested && in->out.congested(in->out.ctx)) {
		in->congested = true;
		return -EAGAIN;
	}
	/* The record is consumed either way; -EAGAIN only stops this drain.  The
	 * coarse clock (a tick's resolution, plenty for 100 ms slices) costs a
	 * few ns from the vDSO, so it is read for every record: a sink may
	 * spend up to its wait budget on any one of them. */
	if (in->drain_until && clock_ns(CLOCK_MONOTONIC_COARSE) > in->drain_until)
		return -EAGAIN;
	return 0;
}

/* A call_unwound record: one EVENT_UNWOUND per call it names, innermost
 * first, each found at the record's at_ns, with its entry sp.  No hit (not
 * counted as delivered), no atom. */
static int deliver_unwound(struct intake *in, const void *data, const struct ups_envelope *env)
{
	const struct plan_probe *p = in->plan->probe_by_id[env->probe_id];
	struct call_unwound u;
	char comm[UPS_COMM_LEN + 1];
	struct event ev;

	memcpy(&u, (const char *)data + sizeof(*env), sizeof(u));
	if (u.from > u.to || u.to > UPS_UNWOUND_MAX) {
		(*in->malformed)++;
		return 0;
	}
	memcpy(comm, env->comm, UPS_COMM_LEN);
	comm[UPS_COMM_LEN] = '\0';
	ev = (struct event){
		.kind = EVENT_UNWOUND,
		.boot_ns = u.at_ns + (uint64_t)boot_offset(in, u.at_ns),
		.mono_ns = u.at_ns,
		.wall_ns = (int64_t)u.at_ns + wall_offset(in, u.at_ns),
		.pid = env->pid,
		.tid = env->tid,
		.comm = comm,
		.process = name_cache_get(in->names, (pid_t)env->pid, comm, u.at_ns),
		.probe = &p->desc,
	};
	for (uint32_t i = u.to; i-- > u.from;) {
		uint64_t entry = u.calls[i].entry_ns;
		if (!entry || entry > u.at_ns)
			continue;   /* never a call that began after it was found */
		ev.duration_ns = u.at_ns - entry;
		ev.entry_sp = u.calls[i].sp;
		if (in->out.event)
			in->out.event(in->out.ctx, &ev);
	}
	return delivered(in);
}

static int deliver(struct intake *in, const void *data, size_t size,
		   const struct stack_trace *stack)
{
	struct ups_envelope env;
	const struct record_kind *rk = check_record(in, data, size, &env);
	const struct plan_probe *p;
	struct field fields[CATALOG_MAX_FIELDS];
	struct event ev;
	char comm[UPS_COMM_LEN + 1];
	char legacy_copy[1024];   /* UPS_MAX_RECORD of a legacy object */
	const char *payload;

	if (!rk || rk->wrapper)
		return 0;
	if (rk->unwound)
		return deliver_unwound(in, data, &env);
	if (session_legacy(in->session))
		data = legacy_record(rk, data, size, legacy_copy, sizeof(legacy_copy));
	payload = (const char *)data + sizeof(env);
	p = in->plan->probe_by_id[env.probe_id];
	memcpy(comm, env.comm, UPS_COMM_LEN);
	comm[UPS_COMM_LEN] = '\0';
	ev = (struct event){
		.kind = rk->is_return ? EVENT_RETURN : EVENT_RECORD,
		.boot_ns = env.ktime_ns + (uint64_t)boot_offset(in, env.ktime_ns),
		.mono_ns = env.ktime_ns,
		.wall_ns = (int64_t)env.ktime_ns + wall_offset(in, env.ktime_ns),
		.pid = env.pid,
		.tid = env.tid,
		.comm = comm,
		.process = name_cache_get(in->names, (pid_t)env.pid, comm, env.ktime_ns),
		.probe = &p->desc,
		.fields = fields,
		.n_fields = record_decode(rk, payload, fields, CATALOG_MAX_FIELDS),
		.duration_ns = record_duration(rk, payload),
		.entry_sp = record_entry_sp(rk, payload),
		.stack = stack,
	};
	in->delivered[env.probe_id]++;
	if (in->out.event)
		in->out.event(in->out.ctx, &ev);
	emit_atom(in, p, &ev, env.kind, payload);
	return delivered(in);
}

static void report_lost(struct intake *in, uint64_t lost)
{
	*in->lost += lost;
	if (in->out.event) {
		struct event ev = { .kind = EVENT_LOST, .n_lost = lost,
				    .boot_ns = (uint64_t)clock_ns(CLOCK_BOOTTIME),
				    .mono_ns = (uint64_t)clock_ns(CLOCK_MONOTONIC) };
		in->out.event(in->out.ctx, &ev);
	}
}

/* Records the BPF programs could not reserve room for are counted per probe
 * in the kernel; each new count becomes a drop record, so the event stream
 * says where it has holes (the summary says how many).  A look costs a map
 * read per probe: once a second, and once more at the end. */
#define DROP_CHECK_NS 1000000000

void intake_report_drops(struct intake *in, bool now)
{
	int64_t t = clock_ns(CLOCK_MONOTONIC);

	if (!in->drops_seen || (!now && t - in->drops_checked < DROP_CHECK_NS))
		return;
	in->drops_checked = t;
	struct ups_probe_counters *all = calloc(in->plan->n_probes ? in->plan->n_probes : 1,
						sizeof(*all));
	if (!all)
		return;
	session_all_counters(in->session, all);
	for (size_t i = 0; i < in->plan->n_probes; i++) {
		const struct ups_probe_counters c = all[i];
		struct event ev;

		if (c.drops <= in->drops_seen[i])
			continue;
		ev = (struct event){ .kind = EVENT_DROP, .n_lost = c.drops - in->drops_seen[i],
				     .boot_ns = (uint64_t)clock_ns(CLOCK_BOOTTIME),
				     .mono_ns = (uint64_t)clock_ns(CLOCK_MONOTONIC),
				     .probe = &in->plan->probe_by_id[i]->desc };
		in->drops_seen[i] = c.drops;
		if (in->out.event)
			in->out.event(in->out.ctx, &ev);
	}
	free(all);
}

/* A raw perf record: PERF_RECORD_SAMPLE carries {u32 size; data[size]} with
 * the data padded to 8 bytes (trimmed back to the record's own size here);
 * PERF_RECORD_LOST carries {u64 id; u64 lost}. */
enum bpf_perf_event_ret intake_perf_event(void *ctx, int cpu, struct perf_event_header *h)
{
	struct intake *in = ctx;
	const uint8_t *p = (const uint8_t *)(h + 1);
	size_t avail = h->size >= sizeof(*h) ? h->size - sizeof(*h) : 0;

	if (h->type == PERF_RECORD_LOST && avail >= 16) {
		uint64_t lost;
		memcpy(&lost, p + 8, sizeof(lost));
		report_lost(in, lost);
	} else if (h->type == PERF_RECORD_SAMPLE && avail >= 4) {
		uint32_t size;
		struct ups_envelope env;
		const struct record_kind *rk;

		memcpy(&size, p, sizeof(size));
		if (size > avail - 4) {
			(*in->malformed)++;
			return LIBBPF_PERF_EVENT_CONT;
		}
		if (size >= sizeof(env)) {
			memcpy(&env, p + 4, sizeof(env));
			rk = record_kind_get(env.kind);
			size_t want = rk ? record_kind_size(rk, p + 4, size) : 0;
			if (want && size >= want && size - want < 8)
				size = (uint32_t)want;
		}
		/* A copy that cannot be made is delivered at once: never lost. */
		if (in->reorder_on && reorder_push(&in->held, p + 4, size) == 0)
			return LIBBPF_PERF_EVENT_CONT;
		int r = intake_record(in, (void *)(p + 4), size);

		/* The slice is over or an output does not keep up: leave the rest of
		 * this CPU's buffer for the next drain (a perf buffer read to its
		 * head could take as long as a slow sink needs for 4 MiB of records). */
		if (r == -EAGAIN || (r < 0 && in->congested)) {
			in->perf_cut = true;
			return LIBBPF_PERF_EVENT_DONE;
		}
	}
	return LIBBPF_PERF_EVENT_CONT;
}

int intake_release(struct intake *in, uint64_t watermark)
{
	const struct reorder_item *it;

	while ((it = reorder_peek(&in->held, watermark))) {
		int r = intake_record(in, it->data, it->size);

		reorder_pop(&in->held);
		if (r == -EAGAIN || (r < 0 && in->congested))
			return -EAGAIN;
	}
	return 0;
}
