#include "probe/aggregate.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan/aggregation.h"
#include "probe/traffic_read.h"
#include "records.h"
#include "sink/agg_out.h"
#include "sink/sinks.h"
#include "sys/name_cache.h"

struct agg_entry {
	struct ups_agg_key key;
	struct ups_agg_value value;
};

struct agg_reader {
	const struct plan *plan;
	const struct session *s;
	int data_fd, gen_fd;
	uint32_t gen;                 /* the generation programs count in now */
	bool drain_due;               /* flipped: drain !gen at the next tick */
	uint64_t interval_ns, next_flip_ns, start_ns, flip_ns, flip_real_ns, flip_boot_ns;
	uint64_t seq;
	uint32_t max_keys;
	uint64_t *full_seen;          /* per probe: agg_full counted so far */
	uint64_t full_total;
	struct agg_view *views;       /* per probe id */
	char (*names)[3][24];         /* the views' arg/sum/hist names */
	struct agg_entry *entries;    /* drain scratch, max_keys */
	struct agg_row *rows;
	struct outbuf out;
	bool json;
	struct traffic_reader *tr;    /* uprobestats traffic's map, or NULL */
	struct sinks *sinks;          /* each interval's values as counters (a Perfetto trace) */
	uint64_t traffic_dropped;     /* this interval */
	struct name_cache *procs;     /* --by process: pid -> name, read once per pid */
	bool by_process;              /* some probe aggregates by process */
};

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void fill_view(struct agg_reader *r, const struct plan_probe *p)
{
	struct agg_view *v = &r->views[p->id];
	char(*n)[24] = r->names[p->id];

	v->method = p->desc.method && *p->desc.method ? p->desc.method : p->program_name;
	v->by = p->agg_by;
	v->arg_name = agg_value_name(UPS_AGG_VAL_ARG, p->agg_by_arg, n[0], sizeof(n[0]));
	v->sum_name = p->agg_sum ? agg_value_name(p->agg_sum, p->agg_sum_arg, n[1], sizeof(n[1]))
				 : NULL;
	v->hist_name = p->agg_hist ? agg_value_name(p->agg_hist, p->agg_hist_arg, n[2],
						    sizeof(n[2])) : NULL;
}

int agg_reader_open(const struct plan *plan, const struct session *s,
		    const struct agg_reader_opts *o, struct agg_reader **out, struct err *err)
{
	const struct plan_probe *first = NULL;
	struct agg_reader *r;
	size_t n = plan->n_probes ? plan->n_probes : 1;

	*out = NULL;
	for (size_t i = 0; i < plan->n_probes && !first; i++)
		if (plan->probe_by_id[i]->prog->aggregate || plan->probe_by_id[i]->prog->traffic)
			first = plan->probe_by_id[i];
	if (!first)
		return 0;
	r = calloc(1, sizeof(*r));
	if (!r)
		return err_set(err, -ENOMEM, "out of memory");
	r->plan = plan;
	r->s = s;
	r->json = o->json;
	r->sinks = o->sinks;
	r->max_keys = plan_agg_max_keys(plan);
	r->data_fd = session_map_fd(s, first->obj, CATALOG_MAP_AGG_DATA);
	r->gen_fd = session_map_fd(s, first->obj, CATALOG_MAP_AGG_GEN);
	r->full_seen = calloc(n, sizeof(*r->full_seen));
	r->views = calloc(n, sizeof(*r->views));
	r->names = calloc(n, sizeof(*r->names));
	r->entries = calloc(r->max_keys, sizeof(*r->entries));
	r->rows = calloc(r->max_keys, sizeof(*r->rows));
	r->procs = calloc(1, sizeof(*r->procs));
	if (!r->full_seen || !r->views || !r->names || !r->entries || !r->rows || !r->procs) {
		agg_reader_close(r, err);
		return err_set(err, -ENOMEM, "out of memory");
	}
	if (traffic_reader_open(plan, s, o->uid, o->sinks, o->traffic_atom, &r->tr, err) < 0) {
		agg_reader_close(r, err);
		return err->code;
	}
	if (r->data_fd < 0 || r->gen_fd < 0) {
		agg_reader_close(r, err);
		return err_set(err, -ENOENT, "the aggregation maps are missing from %s",
			       first->obj->name);
	}
	if (outbuf_init(&r->out, o->out, 0, o->json ? "json" : "text", err) < 0) {
		agg_reader_close(r, err);
		return err->code;
	}
	outbuf_set_drop_events(&r->out, true);
	name_cache_init(r->procs, NULL);
	for (size_t i = 0; i < plan->n_probes; i++)
		if (plan->probe_by_id[i]->prog->aggregate) {
			fill_view(r, plan->probe_by_id[i]);
			r->by_process |= (plan->probe_by_id[i]->agg_by & UPS_AGG_BY_PROCESS) != 0;
		}
	r->interval_ns = (uint64_t)o->interval_s * 1000000000u;
	r->start_ns = r->flip_ns = clock_ns(CLOCK_MONOTONIC);
	r->next_flip_ns = r->start_ns + r->interval_ns;
	*out = r;
	return 0;
}

/* Collects every key of generation gen into entries[at..max_keys), then
 * reads and deletes each (the programs count in the other generation).
 * Returns the new end. */
static size_t collect(struct agg_reader *r, uint32_t gen, size_t at)
{
	struct ups_agg_key key, next, *prev = NULL;
	size_t n = at;

	if (r->tr)
		traffic_reader_collect(r->tr, gen);

	while (n < r->max_keys && bpf_map_get_next_key(r->data_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (next.gen != gen)
			continue;
		r->entries[n++].key = next;
	}
	for (size_t i = at; i < n; i++) {
		if (bpf_map_lookup_elem(r->data_fd, &r->entries[i].key, &r->entries[i].value) < 0) {
			r->entries[i].value = (struct ups_agg_value){ 0 };  /* a duplicate */
			continue;
		}
		bpf_map_delete_elem(r->data_fd, &r->entries[i].key);
	}
	return n;
}

static int key_cmp(const void *x, const void *y)
{
	const struct ups_agg_key *a = &((const struct agg_entry *)x)->key;
	const struct ups_agg_key *b = &((const struct agg_entry *)y)->key;

#define CMP(f) if (a->f != b->f) return a->f < b->f ? -1 : 1
	CMP(probe_id);
	CMP(pid);
	CMP(tid);
	CMP(uid);
	CMP(arg);
	CMP(ret);
#undef CMP
	if (memcmp(a->comm, b->comm, sizeof(a->comm)))
		return memcmp(a->comm, b->comm, sizeof(a->comm));
	return a->slot != b->slot ? (a->slot < b->slot ? -1 : 1) : 0;
}

static bool same_row(const struct agg_row *row, const struct ups_agg_key *k)
{
	return row->probe_id == k->probe_id && row->pid == k->pid && row->tid == k->tid &&
	       row->uid == k->uid && row->arg == k->arg && row->ret == k->ret &&
	       !memcmp(row->comm, k->comm, sizeof(row->comm));
}

/* --by process: the row's process named from /proc (the first time its pid
 * shows up, and again a second later while it lives: a reused pid or a
 * renamed app process; sys/name_cache keeps it after the process exits), else by the
 * comm its first hit recorded in the kernel (a process gone before the
 * flush).  Without --by pid too, the pid is dropped so that the rows of one
 * name merge (merge_processes); a row with no name at all keeps its pid. */
static void name_row(struct agg_reader *r, struct agg_row *row, const char *kernel_comm)
{
	char comm[AGG_COMM_LEN + 1];
	const char *name;

	snprintf(comm, sizeof(comm), "%.*s", AGG_COMM_LEN, kernel_comm);
	name = name_cache_get(r->procs, (pid_t)row->pid, comm,
			      clock_ns(CLOCK_MONOTONIC));
	snprintf(row->process, sizeof(row->process), "%s", name ? name : "");
	if (name && !(r->views[row->probe_id].by & AGG_PART_PID))
		row->pid = 0;
}

static int row_cmp(const void *x, const void *y)
{
	const struct agg_row *a = x, *b = y;
	int c;

#define CMP(f) if (a->f != b->f) return a->f < b->f ? -1 : 1
	CMP(probe_id);
	if ((c = strcmp(a->process, b->process)))
		return c;
	CMP(pid);
	CMP(tid);
	CMP(uid);
	CMP(arg);
	CMP(ret);
#undef CMP
	return memcmp(a->comm, b->comm, sizeof(a->comm));
}

/* --by process: rows sorted by name, and the rows of one name (pid 0, the
 * other key parts equal) added into one.  Returns the new row count. */
static size_t merge_processes(struct agg_reader *r, size_t n)
{
	size_t out = 0;

	if (!r->by_process || !n)
		return n;
	qsort(r->rows, n, sizeof(*r->rows), row_cmp);
	for (size_t i = 1; i < n; i++) {
		struct agg_row *to = &r->rows[out], *from = &r->rows[i];
		if (row_cmp(to, from)) {
			r->rows[++out] = *from;
			continue;
		}
		to->count += from->count;
		to->sum += from->sum;
		to->hist_negative += from->hist_negative;
		for (int b = 0; b < AGG_BUCKETS; b++)
			to->hist[b] += from->hist[b];
	}
	return out + 1;
}

/* Entries sorted by key become rows: a key's total and its histogram slots. */
static size_t build_rows(struct agg_reader *r, size_t n)
{
	size_t rows = 0;

	qsort(r->entries, n, sizeof(*r->entries), key_cmp);
	for (size_t i = 0; i < n; i++) {
		const struct ups_agg_key *k = &r->entries[i].key;
		const struct ups_agg_value *v = &r->entries[i].value;
		struct agg_row *row;

		if (k->probe_id >= r->plan->n_probes || !r->views[k->probe_id].method)
			continue;
		if (!rows || !same_row(&r->rows[rows - 1], k)) {
			row = &r->rows[rows++];
			*row = (struct agg_row){ .probe_id = k->probe_id, .pid = k->pid,
						 .tid = k->tid, .uid = k->uid, .arg = k->arg,
						 .ret = k->ret };
			memcpy(row->comm, k->comm, sizeof(row->comm));
			row->comm[sizeof(row->comm) - 1] = '\0';
			if (r->views[k->probe_id].by & AGG_PART_PROCESS)
				name_row(r, row, v->comm);
		}
		row = &r->rows[rows - 1];
		if (k->slot == UPS_AGG_TOTAL) {
			row->count += v->count;
			row->sum += (int64_t)v->sum;
		} else if (k->slot == UPS_AGG_NEGATIVE) {
			row->hist_negative += v->count;
		} else if (k->slot < AGG_BUCKETS) {
			row->hist[k->slot] += v->count;
		}
	}
	return merge_processes(r, rows);
}

/* Hits lost to a full map since the last look, per probe. */
static void read_full(struct agg_reader *r)
{
	r->traffic_dropped = 0;
	for (uint32_t id = 0; id < r->plan->n_probes; id++) {
		struct ups_probe_counters c;
		uint64_t n;
		bool traffic = r->plan->probe_by_id[id]->prog->traffic;

		if (!r->views[id].method && !traffic)
			continue;
		r->views[id].dropped = 0;
		if (session_probe_counters(r->s, id, &c) < 0 || c.agg_full <= r->full_seen[id])
			continue;
		n = c.agg_full - r->full_seen[id];
		r->full_seen[id] = c.agg_full;
		r->full_total += n;
		if (traffic)
			r->traffic_dropped += n;
		else
			r->views[id].dropped = n;
	}
}

static bool any_view(const struct agg_reader *r)
{
	for (size_t i = 0; i < r->plan->n_probes; i++)
		if (r->views[i].method)
			return true;
	return false;
}

/* "count ups_fn tid=5 arg2=7": the key parts but the pid (the track's process). */
static void counter_name(char *buf, size_t size, const char *what, const struct agg_view *v,
			 const struct agg_row *row)
{
	size_t n = (size_t)snprintf(buf, size, "%s %s", what, v->method);

	if (n < size && (v->by & AGG_PART_PROCESS))
		n += (size_t)snprintf(buf + n, size - n, " process=%s", row->process);
	if (n < size && (v->by & AGG_PART_COMM))
		n += (size_t)snprintf(buf + n, size - n, " comm=%s", row->comm);
	if (n < size && (v->by & AGG_PART_TID))
		n += (size_t)snprintf(buf + n, size - n, " tid=%u", row->tid);
	if (n < size && (v->by & AGG_PART_UID))
		n += (size_t)snprintf(buf + n, size - n, " uid=%u", row->uid);
	if (n < size && (v->by & AGG_PART_ARG))
		n += (size_t)snprintf(buf + n, size - n, " %s=%llu", v->arg_name,
				      (unsigned long long)row->arg);
	if (n < size && (v->by & AGG_PART_RET))
		snprintf(buf + n, size - n, " ret=%lld", (long long)row->ret);
}

/* Each key's count and sum of the interval as a counter at its end. */
static void send_counters(struct agg_reader *r, const struct agg_interval *iv, uint64_t mono_ns)
{
	char name[512];

	if (!r->sinks)
		return;
	for (size_t i = 0; i < iv->n_rows; i++) {
		const struct agg_row *row = &iv->rows[i];
		const struct agg_view *v = &r->views[row->probe_id];
		struct counter_sample c = { .name = name, .mono_ns = mono_ns,
					    .pid = (v->by & AGG_PART_PID) ? row->pid : 0 };

		if (!v->method)
			continue;
		counter_name(name, sizeof(name), "count", v, row);
		c.value = (int64_t)row->count;
		sinks_counter(r->sinks, &c);
		if (v->sum_name) {
			char what[48];
			snprintf(what, sizeof(what), "sum(%s)", v->sum_name);
			counter_name(name, sizeof(name), what, v, row);
			c.value = row->sum;
			sinks_counter(r->sinks, &c);
		}
	}
}

static void print_interval(struct agg_reader *r, size_t n_entries, uint64_t span_ns,
			   uint64_t real_ns, uint64_t boot_ns, uint64_t mono_ns, bool final)
{
	struct agg_interval iv = { .seq = ++r->seq, .ts_ns = real_ns, .boot_ns = boot_ns,
				   .span_ns = span_ns,
				   .final = final, .rows = r->rows, .views = r->views,
				   .n_views = r->plan->n_probes };

	iv.n_rows = build_rows(r, n_entries);
	read_full(r);
	send_counters(r, &iv, mono_ns);
	if (r->json && any_view(r))
		agg_print_jsonl(&r->out, &iv);
	else if (any_view(r))
		agg_print_text(&r->out, &iv);
	if (r->tr)
		traffic_reader_print(r->tr, &r->out, r->json, iv.seq, real_ns, mono_ns, span_ns,
				     final, r->traffic_dropped);
	outbuf_flush(&r->out);
}

static void set_gen(struct agg_reader *r, uint32_t gen)
{
	uint32_t zero = 0;

	r->gen = gen;
	bpf_map_update_elem(r->gen_fd, &zero, &gen, BPF_ANY);
}

size_t agg_reader_attached(struct agg_reader *r, const char *proc_dir)
{
	if (!r)
		return 0;
	/* --by process: the -p targets named now, so a target that exits
	 * before the first flush keeps its name (not a -c command: held before
	 * its exec, it would still bear our own name) */
	if (r->by_process && !r->plan->held) {
		name_cache_init(r->procs, proc_dir);
		for (size_t i = 0; i < r->plan->n_tasks; i++)
			for (size_t j = 0; j < r->plan->tasks[i].n_pids; j++)
				name_cache_get(r->procs, r->plan->tasks[i].pids[j], NULL, 0);
	}
	return traffic_reader_known_sockets(r->tr, r->plan, proc_dir);
}

void agg_reader_tick(struct agg_reader *r, uint64_t now_ns)
{
	if (!r)
		return;
	if (r->drain_due) {
		size_t n = collect(r, r->gen ^ 1, 0);
		r->drain_due = false;
		print_interval(r, n, r->flip_ns - r->start_ns, r->flip_real_ns, r->flip_boot_ns,
			       r->flip_ns, false);
		r->start_ns = r->flip_ns;
	}
	if (r->interval_ns && now_ns >= r->next_flip_ns) {
		r->flip_ns = now_ns;
		r->flip_real_ns = clock_ns(CLOCK_REALTIME);
		r->flip_boot_ns = clock_ns(CLOCK_BOOTTIME);
		set_gen(r, r->gen ^ 1);
		r->drain_due = true;
		while (r->next_flip_ns <= now_ns)
			r->next_flip_ns += r->interval_ns;
	}
}

uint64_t agg_reader_final(struct agg_reader *r, uint64_t now_ns)
{
	size_t n;

	if (!r)
		return 0;
	if (r->drain_due) {
		n = collect(r, r->gen ^ 1, 0);
		r->drain_due = false;
		print_interval(r, n, r->flip_ns - r->start_ns, r->flip_real_ns, r->flip_boot_ns,
			       r->flip_ns, false);
		r->start_ns = r->flip_ns;
	}
	/* Detached: both generations are final (the old one may hold a late hit). */
	n = collect(r, r->gen, 0);
	n = collect(r, r->gen ^ 1, n);
	print_interval(r, n, now_ns - r->start_ns, clock_ns(CLOCK_REALTIME),
		       clock_ns(CLOCK_BOOTTIME), now_ns, true);
	return r->full_total;
}

int agg_reader_close(struct agg_reader *r, struct err *e)
{
	int rc = 0;

	if (!r)
		return 0;
	if (r->out.buf) {
		outbuf_finish(&r->out, OUTBUF_CLOSE_WAIT_MS);
		rc = outbuf_check(&r->out, e);
		if (!rc && r->out.events_lost) /* never in silence */
			fprintf(stderr, "WARNING: %s output: %llu table(s) lost (out of memory "
				"for one, or its reader did not keep up)\n", r->out.name,
				(unsigned long long)r->out.events_lost);
		outbuf_free(&r->out);
	}
	traffic_reader_close(r->tr);
	free(r->full_seen);
	free(r->views);
	free(r->names);
	free(r->entries);
	free(r->rows);
	free(r->procs);
	free(r);
	return rc;
}
