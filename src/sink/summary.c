#include "sink/summary.h"

#include <inttypes.h>
#include <string.h>

#include "sink/jsonl_out.h"
#include "sink/probe_label.h"

enum { C_TASK, C_HITS, C_DELIV, C_DKERN, C_DSINK, C_DUR, C_PROBE, N_COLS };

static const char *const heads[N_COLS] = {
	"TASK", "HITS", "DELIVERED", "DROPPED_KERNEL", "DROPPED_SINK", "DURATION", "PROBE",
};

struct totals {
	uint64_t hits, delivered, dropped_kernel, dropped_sink, duration_ns;
	uint64_t unwound, untracked, unpaired;
	bool exit_probes, uretprobe;
};

struct cells {
	char c[N_COLS][256];
};

static void add(struct totals *t, const struct probe_stats *r)
{
	t->hits += r->hits;
	t->delivered += r->delivered;
	t->dropped_kernel += r->dropped_kernel;
	t->dropped_sink += r->dropped_sink;
	t->unwound += r->unwound;
	t->untracked += r->untracked;
	t->exit_probes |= r->exit_probes;
	t->unpaired += r->unpaired;
	t->uretprobe |= r->uretprobe;
	if (r->duration_ns > t->duration_ns)
		t->duration_ns = r->duration_ns;
}

static void fmt_dur(char *out, size_t cap, uint64_t ns)
{
	snprintf(out, cap, "%" PRIu64 ".%03" PRIu64 "s", ns / 1000000000u,
		 ns % 1000000000u / 1000000u);
}

static void fmt_task(char *out, size_t cap, const struct probe_desc *p)
{
	if (!p)
		snprintf(out, cap, "?");
	else if (p->task_id)
		snprintf(out, cap, "%" PRId64, p->task_id);
	else
		snprintf(out, cap, "#%u", p->task_index);
}

static void fill(struct cells *c, const char *task, const struct totals *t, const char *label)
{
	snprintf(c->c[C_TASK], sizeof(c->c[0]), "%s", task);
	snprintf(c->c[C_HITS], sizeof(c->c[0]), "%" PRIu64, t->hits);
	snprintf(c->c[C_DELIV], sizeof(c->c[0]), "%" PRIu64, t->delivered);
	snprintf(c->c[C_DKERN], sizeof(c->c[0]), "%" PRIu64, t->dropped_kernel);
	snprintf(c->c[C_DSINK], sizeof(c->c[0]), "%" PRIu64, t->dropped_sink);
	fmt_dur(c->c[C_DUR], sizeof(c->c[0]), t->duration_ns);
	snprintf(c->c[C_PROBE], sizeof(c->c[0]), "%s", label);
}

static void row_cells(struct cells *c, const struct probe_stats *r)
{
	struct totals t = { 0 };
	struct label l = probe_label(r->probe);
	char task[32], label[256];

	add(&t, r);
	fmt_task(task, sizeof(task), r->probe);
	snprintf(label, sizeof(label), "%.*s", (int)(l.n < 200 ? l.n : 200), l.s);
	fill(c, task, &t, label);
}

static bool same_task(const struct probe_stats *a, const struct probe_stats *b)
{
	return a->probe && b->probe && a->probe->task_index == b->probe->task_index;
}

/* A task's subtotal, printed after its last row when it has several probes. */
static bool task_subtotal(const struct probe_stats *rows, size_t n, size_t i, struct cells *c)
{
	struct totals t = { 0 };
	size_t count = 0;
	char task[32];

	for (size_t k = i + 1; k < n; k++)
		if (same_task(&rows[k], &rows[i]))
			return false; /* not this task's last row */
	for (size_t k = 0; k < n; k++) {
		if (same_task(&rows[k], &rows[i])) {
			add(&t, &rows[k]);
			count++;
		}
	}
	if (count < 2)
		return false;
	fmt_task(task, sizeof(task), rows[i].probe);
	fill(c, task, &t, "(task total)");
	return true;
}

static void print_cells(FILE *f, const struct cells *c, const size_t *w)
{
	for (int k = 0; k < N_COLS; k++) {
		bool left = k == C_TASK || k == C_PROBE;
		if (k == N_COLS - 1)
			fprintf(f, "%s\n", c->c[k]);
		else if (left)
			fprintf(f, "%-*s  ", (int)w[k], c->c[k]);
		else
			fprintf(f, "%*s  ", (int)w[k], c->c[k]);
	}
}

static void widen(size_t *w, const struct cells *c)
{
	for (int k = 0; k < N_COLS; k++)
		if (strlen(c->c[k]) > w[k])
			w[k] = strlen(c->c[k]);
}

/* Two passes over the same rows: measure, then print. */
static void table(FILE *f, const struct probe_stats *rows, size_t n, struct totals *all)
{
	size_t w[N_COLS];
	struct cells c, head;

	for (int k = 0; k < N_COLS; k++) {
		snprintf(head.c[k], sizeof(head.c[k]), "%s", heads[k]);
		w[k] = strlen(heads[k]);
	}
	for (int pass = 0; pass < 2; pass++) {
		if (pass)
			print_cells(f, &head, w);
		for (size_t i = 0; i < n; i++) {
			row_cells(&c, &rows[i]);
			pass ? print_cells(f, &c, w) : widen(w, &c);
			if (task_subtotal(rows, n, i, &c))
				pass ? print_cells(f, &c, w) : widen(w, &c);
			if (!pass)
				add(all, &rows[i]);
		}
		fill(&c, "all", all, "(total)");
		pass ? print_cells(f, &c, w) : widen(w, &c);
	}
}

static void statsd_text(FILE *f, const struct sink_report *r)
{
	const struct statsd_writer_stats *s = &r->statsd;

	fprintf(f, "statsd %s: %" PRIu64 " atoms sent, %" PRIu64 " dropped", r->statsd_path,
		s->sent, s->dropped);
	if (s->dropped)
		fprintf(f, " (last: %s, atom %d)", strerror(-s->last_error), s->last_dropped_atom);
	fprintf(f, ", %" PRIu64 " reconnects, %" PRIu64 " drop reports and %" PRIu64
		   " loss atoms (752) sent\n", s->reconnects, s->drop_reports, s->loss_atoms);
	if (s->waited) {
		char dur[64];

		fmt_dur(dur, sizeof(dur), s->wait_ns);
		fprintf(f, "statsd: %" PRIu64 " datagrams found the queue full and waited for "
			   "room, %s in all\n", s->waited, dur);
	}
	if (r->statsd_invalid)
		fprintf(f, "statsd: %" PRIu64 " atoms could not be encoded (over 4064 bytes or "
			   "invalid) and were sent as statsd error events\n", r->statsd_invalid);
	if (r->statsd_unreported)
		fprintf(f, "statsd: %d dropped atoms could not be reported to statsd\n",
			r->statsd_unreported);
}

/* Exit probes: calls that never returned through an exit site, per probe
 * (only when there are any, so the table of other programs is unchanged). */
static void exit_probe_text(FILE *f, const struct probe_stats *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct label l = probe_label(rows[i].probe);
		char task[32];

		if (!rows[i].unwound && !rows[i].untracked)
			continue;
		fmt_task(task, sizeof(task), rows[i].probe);
		fprintf(f, "exit probes, task %s, %.*s: %" PRIu64 " calls unwound (left by an "
			   "exception or longjmp: no duration), %" PRIu64 " entries untracked "
			   "(pending stack full)\n", task, (int)(l.n < 200 ? l.n : 200), l.s,
			rows[i].unwound, rows[i].untracked);
	}
	for (size_t i = 0; i < n; i++) {
		struct label l = probe_label(rows[i].probe);
		char task[32];

		if (!rows[i].unpaired)
			continue;
		fmt_task(task, sizeof(task), rows[i].probe);
		fprintf(f, "uretprobe, task %s, %.*s: %" PRIu64 " returns had no entry time (a "
			   "recursive call overwrote it, the LRU map evicted it, or the call began "
			   "before attach): no record\n", task, (int)(l.n < 200 ? l.n : 200), l.s,
			rows[i].unpaired);
	}
}

void summary_text(FILE *f, const struct probe_stats *rows, size_t n,
		  const struct sink_report *r, uint64_t run_ns)
{
	struct totals all = { 0 };
	char dur[64];

	fmt_dur(dur, sizeof(dur), run_ns);
	fprintf(f, "uprobestats summary: %zu probes, ran %s\n", n, dur);
	table(f, rows, n, &all);
	if (r && r->statsd_on)
		statsd_text(f, r);
	if (r && r->trace_unclosed)
		fprintf(f, "trace: %" PRIu64 " slices were still open at exit; closed at the "
			   "last timestamp and marked unfinished\n", r->trace_unclosed);
	if (r && r->trace_orphan_exits)
		fprintf(f, "trace: %" PRIu64 " exits had no matching enter on their thread\n",
			r->trace_orphan_exits);
	if (r && r->sections.any)
		sections_report_text(f, &r->sections);
	exit_probe_text(f, rows, n);
	for (size_t i = 0; r && i < r->n_errors; i++)
		fprintf(f, "error: %s\n", r->errors[i]);
	if (all.dropped_kernel || all.dropped_sink)
		fprintf(f, "WARNING: %" PRIu64 " events lost (%" PRIu64 " in the kernel, %" PRIu64
			   " at the sinks)\n", all.dropped_kernel + all.dropped_sink,
			all.dropped_kernel, all.dropped_sink);
}

static void counts_json(struct json_out *j, const struct totals *t)
{
	json_key(j, "hits");
	json_u64(j, t->hits);
	json_key(j, "delivered");
	json_u64(j, t->delivered);
	json_key(j, "dropped_kernel");
	json_u64(j, t->dropped_kernel);
	json_key(j, "dropped_sink");
	json_u64(j, t->dropped_sink);
	json_key(j, "duration_ns");
	json_u64(j, t->duration_ns);
	if (t->uretprobe) {
		json_key(j, "unpaired");
		json_u64(j, t->unpaired);
	}
	if (!t->exit_probes)
		return;
	json_key(j, "unwound");
	json_u64(j, t->unwound);
	json_key(j, "untracked");
	json_u64(j, t->untracked);
}

static void probe_json(struct json_out *j, const struct probe_stats *r)
{
	const struct probe_desc *p = r->probe;
	struct totals t = { 0 };
	struct label l = probe_label(p);

	add(&t, r);
	json_object_begin(j);
	json_key(j, "task_id");
	p ? json_i64(j, p->task_id) : json_null(j);
	json_key(j, "task_index");
	p ? json_u64(j, p->task_index) : json_null(j);
	json_key(j, "probe_index");
	p ? json_u64(j, p->probe_index) : json_null(j);
	json_key(j, "label");
	json_string(j, l.s, l.n);
	json_key(j, "probe");
	jsonl_probe(j, p);
	json_key(j, "program");
	json_cstring(j, p ? p->program : NULL);
	json_key(j, "map");
	json_cstring(j, p ? p->map : NULL);
	counts_json(j, &t);
	json_object_end(j);
}

static void tasks_json(struct json_out *j, const struct probe_stats *rows, size_t n)
{
	json_array_begin(j);
	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = same_task(&rows[k], &rows[i]);
		if (seen || !rows[i].probe)
			continue;
		struct totals t = { 0 };
		for (size_t k = i; k < n; k++)
			if (same_task(&rows[k], &rows[i]))
				add(&t, &rows[k]);
		json_object_begin(j);
		json_key(j, "task_id");
		json_i64(j, rows[i].probe->task_id);
		json_key(j, "task_index");
		json_u64(j, rows[i].probe->task_index);
		counts_json(j, &t);
		json_object_end(j);
	}
	json_array_end(j);
}

static void statsd_json(struct json_out *j, const struct sink_report *r)
{
	const struct statsd_writer_stats *s = &r->statsd;

	if (!r->statsd_on) {
		json_null(j);
		return;
	}
	json_object_begin(j);
	json_key(j, "path");
	json_cstring(j, r->statsd_path);
	json_key(j, "sent");
	json_u64(j, s->sent);
	json_key(j, "dropped");
	json_u64(j, s->dropped);
	json_key(j, "last_error");
	s->last_error ? json_cstring(j, strerror(-s->last_error)) : json_null(j);
	json_key(j, "reconnects");
	json_u64(j, s->reconnects);
	json_key(j, "drop_reports");
	json_u64(j, s->drop_reports);
	json_key(j, "loss_atoms");
	json_u64(j, s->loss_atoms);
	json_key(j, "waited");
	json_u64(j, s->waited);
	json_key(j, "wait_ns");
	json_u64(j, s->wait_ns);
	json_key(j, "invalid");
	json_u64(j, r->statsd_invalid);
	json_key(j, "unreported");
	json_i64(j, r->statsd_unreported);
	json_object_end(j);
}

void summary_json(struct json_out *j, const struct probe_stats *rows, size_t n,
		  const struct sink_report *r, uint64_t run_ns)
{
	struct totals all = { 0 };

	for (size_t i = 0; i < n; i++)
		add(&all, &rows[i]);
	all.duration_ns = run_ns;
	json_object_begin(j);
	json_key(j, "type");
	json_cstring(j, "summary");
	json_key(j, "schema_version");
	json_u64(j, JSONL_SCHEMA_VERSION);
	json_key(j, "duration_ns");
	json_u64(j, run_ns);
	json_key(j, "probes");
	json_array_begin(j);
	for (size_t i = 0; i < n; i++)
		probe_json(j, &rows[i]);
	json_array_end(j);
	json_key(j, "tasks");
	tasks_json(j, rows, n);
	json_key(j, "totals");
	json_object_begin(j);
	counts_json(j, &all);
	json_object_end(j);
	json_key(j, "statsd");
	statsd_json(j, r);
	json_key(j, "trace_unclosed");
	json_u64(j, r->trace_unclosed);
	json_key(j, "trace_orphan_exits");
	json_u64(j, r->trace_orphan_exits);
	if (r->sections.any) {
		json_key(j, "sections");
		sections_report_json(j, &r->sections);
	}
	json_key(j, "errors");
	json_array_begin(j);
	for (size_t i = 0; i < r->n_errors; i++)
		json_cstring(j, r->errors[i]);
	json_array_end(j);
	json_object_end(j);
}
