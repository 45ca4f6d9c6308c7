#include "sink/profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "sink/summary.h"
#include "vocab/json_out.h"
#include "vocab/outbuf.h"

#define MAX_SAMPLES (1u << 20)
#define MAX_PENDING 4096u
#define PROC_LEN 64

struct prof_row {
	const char *method;          /* the probe_desc's (lives as long as the sinks) */
	const char *file;
	uint32_t pid;
	char process[PROC_LEN];
	uint64_t entries, returns, unwound;
	uint64_t running;           /* calls entered and not left at exit */
	uint64_t total_ns, self_ns, max_ns;
	uint64_t *samples;           /* durations; at most MAX_SAMPLES */
	uint64_t n_samples, seen;
	bool used;
};

struct done_call {
	uint64_t entry_ns, dur_ns;
};

struct prof_thread {
	uint32_t tid;
	bool used;
	struct done_call *calls;     /* finished calls no traced caller has claimed */
	uint32_t n;
	size_t cap;
};

struct profile {
	struct outbuf o;
	bool json;
	struct prof_row *rows;
	size_t n_rows, cap_rows;     /* open-addressed; cap a power of two */
	struct prof_thread *threads;
	size_t n_threads, cap_threads;
	uint64_t rng;
	bool oom;
};

static uint64_t hash_str(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static uint64_t row_hash(const char *method, const char *file, uint32_t pid)
{
	return hash_str(hash_str(0xcbf29ce484222325ull ^ pid, method), file);
}

static struct prof_row *row_slot(struct prof_row *tab, size_t cap, const char *method,
				 const char *file, uint32_t pid)
{
	size_t i = (size_t)row_hash(method, file, pid) & (cap - 1);

	while (tab[i].used && !(tab[i].pid == pid && same(tab[i].method, method) &&
				same(tab[i].file, file)))
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static bool grow_rows(struct profile *p)
{
	size_t cap;
	struct prof_row *tab;

	if (grow_cap(p->cap_rows, p->cap_rows + 1, 256, sizeof(*tab), &cap) < 0 ||
	    !(tab = calloc(cap, sizeof(*tab))))
		return false;
	for (size_t i = 0; i < p->cap_rows; i++)
		if (p->rows[i].used)
			*row_slot(tab, cap, p->rows[i].method, p->rows[i].file,
				  p->rows[i].pid) = p->rows[i];
	free(p->rows);
	p->rows = tab;
	p->cap_rows = cap;
	return true;
}

static struct prof_row *row_for(struct profile *p, const struct probe_desc *d, uint32_t pid,
				const char *process)
{
	struct prof_row *r;

	if ((p->n_rows + 1) * 2 > p->cap_rows && !grow_rows(p))
		return NULL;
	r = row_slot(p->rows, p->cap_rows, d->method, d->file, pid);
	if (!r->used) {
		r->used = true;
		r->method = d->method;
		r->file = d->file;
		r->pid = pid;
		p->n_rows++;
	}
	if (!r->process[0] && process)
		snprintf(r->process, sizeof(r->process), "%s", process);
	return r;
}

static struct prof_thread *thread_slot(struct prof_thread *tab, size_t cap, uint32_t tid)
{
	size_t i = (size_t)(tid * 2654435761u) & (cap - 1);

	while (tab[i].used && tab[i].tid != tid)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static struct prof_thread *thread_for(struct profile *p, uint32_t tid)
{
	struct prof_thread *t;

	if ((p->n_threads + 1) * 2 > p->cap_threads) {
		size_t cap;
		struct prof_thread *tab;
		if (grow_cap(p->cap_threads, p->cap_threads + 1, 64, sizeof(*tab), &cap) < 0 ||
		    !(tab = calloc(cap, sizeof(*tab))))
			return NULL;
		for (size_t i = 0; i < p->cap_threads; i++)
			if (p->threads[i].used)
				*thread_slot(tab, cap, p->threads[i].tid) = p->threads[i];
		free(p->threads);
		p->threads = tab;
		p->cap_threads = cap;
	}
	t = thread_slot(p->threads, p->cap_threads, tid);
	if (!t->used) {
		t->used = true;
		t->tid = tid;
		p->n_threads++;
	}
	return t;
}

/* The call [entry, entry + dur) finished on t: returns its direct children's
 * time and keeps it for its own caller. */
static uint64_t nest(struct prof_thread *t, uint64_t entry, uint64_t dur)
{
	uint64_t children = 0;

	while (t->n && t->calls[t->n - 1].entry_ns >= entry)
		children += t->calls[--t->n].dur_ns;
	if (t->n == MAX_PENDING) {
		uint32_t half = MAX_PENDING / 2;
		for (uint32_t i = 1; i < half; i++)
			t->calls[0].dur_ns += t->calls[i].dur_ns;
		memmove(&t->calls[1], &t->calls[half], (t->n - half) * sizeof(t->calls[0]));
		t->n -= half - 1;
	}
	if (grow_array(&t->calls, &t->cap, (size_t)t->n + 1, 16) < 0)
		return children;
	t->calls[t->n++] = (struct done_call){ entry, dur };
	return children;
}

static void sample(struct profile *p, struct prof_row *r, uint64_t dur)
{
	uint64_t k;

	r->seen++;
	if (r->n_samples < MAX_SAMPLES) {
		/* the capacity is n_samples itself whenever that is 0 or a power of two */
		if (r->n_samples == 0 || !(r->n_samples & (r->n_samples - 1))) {
			size_t cap = r->n_samples;
			if (grow_array(&r->samples, &cap, (size_t)r->n_samples + 1, 16) < 0) {
				p->oom = true;
				return;
			}
		}
		r->samples[r->n_samples++] = dur;
		return;
	}
	/* Reservoir: the sample stays uniform over every call seen. */
	p->rng = p->rng * 6364136223846793005ull + 1442695040888963407ull;
	k = (p->rng >> 11) % r->seen;
	if (k < MAX_SAMPLES)
		r->samples[k] = dur;
}

static void profile_event(void *st, const struct event *ev)
{
	struct profile *p = st;
	struct prof_row *r;

	if ((ev->kind != EVENT_RECORD && ev->kind != EVENT_RETURN) || !ev->probe)
		return;
	r = row_for(p, ev->probe, ev->pid, ev->process);
	if (!r) {
		p->oom = true;
		return;
	}
	if (ev->kind == EVENT_RECORD) {
		r->entries++;
		return;
	}
	struct prof_thread *t = thread_for(p, ev->tid);
	uint64_t dur = ev->duration_ns, children;

	r->returns++;
	r->total_ns += dur;
	if (dur > r->max_ns)
		r->max_ns = dur;
	children = t ? nest(t, ev->boot_ns - dur, dur) : 0;
	r->self_ns += children < dur ? dur - children : 0;
	sample(p, r, dur);
}

/* Unwound calls are counted per probe in the kernel. */
static void profile_rows(void *st, const struct probe_stats *rows, size_t n)
{
	struct profile *p = st;

	for (size_t i = 0; i < n; i++) {
		struct prof_row *first = NULL;
		if ((!rows[i].unwound && !rows[i].running) || !rows[i].probe)
			continue;
		for (size_t k = 0; k < p->cap_rows && !first; k++)
			if (p->rows[k].used && same(p->rows[k].method, rows[i].probe->method) &&
			    same(p->rows[k].file, rows[i].probe->file))
				first = &p->rows[k];
		if (!first)
			first = row_for(p, rows[i].probe, 0, NULL);
		if (first) {
			first->unwound += rows[i].unwound;
			first->running += rows[i].running;
		}
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct prof_row *x = *(const struct prof_row *const *)a;
	const struct prof_row *y = *(const struct prof_row *const *)b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;   /* entries only: all 0, by calls */
	if (x->entries + x->returns != y->entries + y->returns)
		return x->entries + x->returns > y->entries + y->returns ? -1 : 1;
	return strcmp(x->method ? x->method : "", y->method ? y->method : "");
}

/* Nearest rank: the smallest sample with at least q% of them at or below. */
static uint64_t pct(const struct prof_row *r, unsigned q)
{
	uint64_t rank;

	if (!r->n_samples)
		return 0;
	rank = (r->n_samples * q + 99) / 100;
	return r->samples[rank ? rank - 1 : 0];
}

static uint64_t calls_of(const struct prof_row *r)
{
	return r->entries ? r->entries : r->returns + r->unwound + r->running;
}

static void text_row(struct outbuf *o, const struct prof_row *r)
{
	uint64_t mean = r->returns ? r->total_ns / r->returns : 0;

	outbuf_printf(o, "%10llu %12.3f %12.3f %10.1f %10.1f %10.1f %10.1f %8llu  %-7u %-15.15s "
		      "%s\n",
		      (unsigned long long)calls_of(r), r->total_ns / 1e6, r->self_ns / 1e6,
		      mean / 1e3, pct(r, 50) / 1e3, pct(r, 99) / 1e3, r->max_ns / 1e3,
		      (unsigned long long)r->unwound, r->pid,
		      r->process[0] ? r->process : "-", r->method ? r->method : "?");
	if (r->running)   /* on the method's line: no column for the rare case */
		outbuf_printf(o, "%10s %llu call(s) of %s still running at exit (no exit seen)\n",
			      "", (unsigned long long)r->running, r->method ? r->method : "?");
}

static void json_row(struct json_out *j, const struct prof_row *r)
{
	json_object_begin(j);
	json_key(j, "method"); json_cstring(j, r->method);
	json_key(j, "file"); json_cstring(j, r->file);
	json_key(j, "pid"); json_u64(j, r->pid);
	json_key(j, "process"); json_cstring(j, r->process[0] ? r->process : NULL);
	json_key(j, "calls"); json_u64(j, calls_of(r));
	json_key(j, "returns"); json_u64(j, r->returns);
	json_key(j, "total_ns"); json_u64(j, r->total_ns);
	json_key(j, "self_ns"); json_u64(j, r->self_ns);
	json_key(j, "mean_ns"); json_u64(j, r->returns ? r->total_ns / r->returns : 0);
	json_key(j, "p50_ns"); json_u64(j, pct(r, 50));
	json_key(j, "p99_ns"); json_u64(j, pct(r, 99));
	json_key(j, "max_ns"); json_u64(j, r->max_ns);
	json_key(j, "unwound"); json_u64(j, r->unwound);
	json_key(j, "running"); json_u64(j, r->running);
	json_key(j, "sampled"); json_bool(j, r->seen > r->n_samples);
	json_object_end(j);
}

static void profile_finish(void *st)
{
	struct profile *p = st;
	struct prof_row **order = calloc(p->n_rows ? p->n_rows : 1, sizeof(*order));
	size_t n = 0;

	if (!order)
		return;
	for (size_t i = 0; i < p->cap_rows; i++)
		if (p->rows[i].used) {
			order[n++] = &p->rows[i];
			if (p->rows[i].n_samples)
				qsort(p->rows[i].samples, p->rows[i].n_samples, sizeof(uint64_t),
				      cmp_u64);
		}
	qsort(order, n, sizeof(*order), cmp_rows);
	if (p->json) {
		struct json_out j;
		json_init(&j, &p->o);
		json_object_begin(&j);
		json_key(&j, "type"); json_cstring(&j, "profile");
		json_key(&j, "complete"); json_bool(&j, !p->oom);
		json_key(&j, "methods");
		json_array_begin(&j);
		for (size_t i = 0; i < n; i++)
			json_row(&j, order[i]);
		json_array_end(&j);
		json_object_end(&j);
		json_newline(&j);
	} else {
		/* entries only (no --ret): no time to show, only the counts */
		bool timed = false;
		for (size_t i = 0; i < n && !timed; i++)
			timed = order[i]->returns || order[i]->unwound || order[i]->running;
		outbuf_printf(&p->o, "profile: %zu method(s), by %s%s\n", n,
			      timed ? "total time" : "calls (entries only: --ret times them)",
			      p->oom ? " (incomplete: out of memory)" : "");
		if (timed)
			outbuf_printf(&p->o, "%10s %12s %12s %10s %10s %10s %10s %8s  %-7s %-15s "
				      "%s\n", "CALLS", "TOTAL_MS", "SELF_MS", "MEAN_US", "P50_US",
				      "P99_US", "MAX_US", "UNWOUND", "PID", "PROCESS", "METHOD");
		else
			outbuf_printf(&p->o, "%10s  %-7s %-15s %s\n", "CALLS", "PID", "PROCESS",
				      "METHOD");
		for (size_t i = 0; i < n; i++)
			if (timed)
				text_row(&p->o, order[i]);
			else
				outbuf_printf(&p->o, "%10llu  %-7u %-15.15s %s\n",
					      (unsigned long long)calls_of(order[i]), order[i]->pid,
					      order[i]->process[0] ? order[i]->process : "-",
					      order[i]->method ? order[i]->method : "?");
	}
	outbuf_flush(&p->o);
	free(order);
}

static bool profile_wanted(const struct sinks_options *o)
{
	return o->profile != NULL;
}

static int profile_open(void *st, const struct sinks_options *o, struct err *e)
{
	struct profile *p = st;

	p->json = o->profile_json;
	p->rng = 0x853c49e6748fea9bull;
	int rc = outbuf_init(&p->o, o->profile, 0, "profile", e);

	p->o.at_exit = true;
	return rc;
}

static struct outbuf *profile_output(void *st)
{
	return &((struct profile *)st)->o;
}

static void profile_close(void *st)
{
	struct profile *p = st;

	for (size_t i = 0; i < p->cap_rows; i++)
		free(p->rows[i].samples);
	for (size_t i = 0; i < p->cap_threads; i++)
		free(p->threads[i].calls);
	free(p->rows);
	free(p->threads);
	outbuf_free(&p->o);
}

const struct sink_ops profile_sink = {
	.name = "profile",
	.state_size = sizeof(struct profile),
	.wanted = profile_wanted,
	.open = profile_open,
	.event = profile_event,
	.output = profile_output,
	.own_losses = true,         /* written at exit only: no event of a probe is lost */
	.probe_rows = profile_rows,
	.finish = profile_finish,
	.close = profile_close,
};
