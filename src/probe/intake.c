#include "probe/intake.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "probe/atoms.h"
#include "probe/legacy_str.h"
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

	in->mono_to_boot = b - m;
	in->mono_to_wall = w - m;
}

/* The known targets' mappings, read before the probes are attached and
 * again once they are (a read that fails, the target having exited, keeps
 * what was read before): code a target maps before its first hit is then
 * known even if it exits before its records are drained. */
void intake_prime_stacks(struct intake *in)
{
	if (!in->stacks)
		return;
	for (size_t t = 0; t < in->plan->n_tasks; t++)
		for (size_t j = 0; j < in->plan->tasks[t].n_pids; j++)
			stacks_prime(in->stacks, (uint32_t)in->plan->tasks[t].pids[j]);
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
			name_cache_get(in->names, plan->tasks[i].pids[j], NULL);
	for (size_t i = 0; i < plan->n_probes && !in->stacks; i++) {
		if (!plan->probe_by_id[i]->stack_mode)
			continue;
		in->stacks = stacks_new(session_code_cache(in->session));
		in->trace = malloc(sizeof(*in->trace));
		if (!in->stacks || !in->trace)
			return err_set(err, -ENOMEM, "out of memory");
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
	free(in->trace);
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
	stacks_walk(in->stacks, &r, in->plan->probe_by_id[id]->stack_frames, st);
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
	if (session_legacy(in->session))
		data = legacy_record(rk, data, size, legacy_copy, sizeof(legacy_copy));
	payload = (const char *)data + sizeof(env);
	p = in->plan->probe_by_id[env.probe_id];
	memcpy(comm, env.comm, UPS_COMM_LEN);
	comm[UPS_COMM_LEN] = '\0';
	ev = (struct event){
		.kind = rk->is_return ? EVENT_RETURN : EVENT_RECORD,
		.boot_ns = env.ktime_ns + (uint64_t)in->mono_to_boot,
		.wall_ns = (int64_t)env.ktime_ns + in->mono_to_wall,
		.pid = env.pid,
		.tid = env.tid,
		.comm = comm,
		.process = name_cache_get(in->names, (pid_t)env.pid, comm),
		.probe = &p->desc,
		.fields = fields,
		.n_fields = record_decode(rk, payload, fields, CATALOG_MAX_FIELDS),
		.duration_ns = record_duration(rk, payload),
		.stack = stack,
	};
	in->delivered[env.probe_id]++;
	if (in->out.event)
		in->out.event(in->out.ctx, &ev);
	emit_atom(in, p, &ev, env.kind, payload);
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

static void report_lost(struct intake *in, uint64_t lost)
{
	*in->lost += lost;
	if (in->out.event) {
		struct event ev = { .kind = EVENT_LOST, .n_lost = lost,
				    .boot_ns = (uint64_t)clock_ns(CLOCK_BOOTTIME) };
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
