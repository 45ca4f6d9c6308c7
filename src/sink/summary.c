#include "sink/summary.h"

#include <inttypes.h>
#include <string.h>

#include "sink/jsonl_out.h"
#include "sink/probe_label.h"
#include "vocab/fmt_fast.h"

enum { C_TASK, C_HITS, C_DELIV, C_DKERN, C_DSINK, C_DUR, C_PROBE, N_COLS };

static const char *const heads[N_COLS] = {
	"TASK", "HITS", "DELIVERED", "DROPPED_KERNEL", "DROPPED_SINK", "DURATION", "PROBE",
};

struct totals {
	uint64_t hits, delivered, dropped_kernel, dropped_sink, duration_ns;
	uint64_t unwound, untracked, unpaired;
	bool exit_probes, uretprobe;
	size_t rows, in_kernel;      /* rows added, of them counted in the kernel */
};

/* A table row's cells, formatted without printf: a trace over 10,000
 * methods prints 10,000 rows twice over (measured, then printed), and
 * printf's were most of the time its exit took. */
struct cells {
	char c[N_COLS][256];
	size_t n[N_COLS];
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
	t->rows++;
	t->in_kernel += r->in_kernel;
	if (r->duration_ns > t->duration_ns)
		t->duration_ns = r->duration_ns;
}

static void fmt_dur(char *out, size_t cap, uint64_t ns)
{
	snprintf(out, cap, "%" PRIu64 ".%03" PRIu64 "s", ns / 1000000000u,
		 ns % 1000000000u / 1000000u);
}

static void set_text(struct cells *c, int k, const char *s, size_t n)
{
	c->n[k] = n < sizeof(c->c[k]) ? n : sizeof(c->c[k]) - 1;
	memcpy(c->c[k], s, c->n[k]);
}

static void set_u64(struct cells *c, int k, uint64_t v)
{
	c->n[k] = (size_t)(fmt_u64(c->c[k], v) - c->c[k]);
}

/* fmt_dur's "S.mmms" */
static void set_dur(struct cells *c, int k, uint64_t ns)
{
	char *p = fmt_u64(c->c[k], ns / 1000000000u);

	*p++ = '.';
	p = fmt_fixed(p, ns % 1000000000u / 1000000u, 3);
	*p++ = 's';
	c->n[k] = (size_t)(p - c->c[k]);
}

static void fill(struct cells *c, const char *task, const struct totals *t, const char *label,
		 size_t label_len)
{
	set_text(c, C_TASK, task, strlen(task));
	set_u64(c, C_HITS, t->hits);
	/* hits counted in the kernel deliver no event: not a loss */
	if (t->rows && t->in_kernel == t->rows && !t->delivered)
		set_text(c, C_DELIV, "in-kernel", 9);
	else
		set_u64(c, C_DELIV, t->delivered);
	set_u64(c, C_DKERN, t->dropped_kernel);
	set_u64(c, C_DSINK, t->dropped_sink);
	set_dur(c, C_DUR, t->duration_ns);
	set_text(c, C_PROBE, label, label_len);
}

/* The task column: its id, #index without one, ? without a probe (out: 32 bytes). */
static void task_text(char *out, const struct probe_desc *p)
{
	char *e = out;

	if (!p)
		*e++ = '?';
	else if (p->task_id)
		e = fmt_i64(e, p->task_id);
	else
		e = fmt_u64(FMT_LIT(e, "#"), p->task_index);
	*e = '\0';
}

static void row_cells(struct cells *c, const struct probe_stats *r)
{
	struct totals t = { 0 };
	struct label l = probe_label(r->probe);
	char task[32];

	add(&t, r);
	task_text(task, r->probe);
	fill(c, task, &t, l.s, l.n < 200 ? l.n : 200);
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
	task_text(task, rows[i].probe);
	fill(c, task, &t, "(task total)", strlen("(task total)"));
	return true;
}

/* One row, padded to the widths w (each at most a cell's 255), in one write. */
static void print_cells(FILE *f, const struct cells *c, const size_t *w)
{
	char line[N_COLS * (256 + 2)], *p = line;

	for (int k = 0; k < N_COLS; k++) {
		size_t pad = w[k] - c->n[k];
		bool left = k == C_TASK || k == C_PROBE;

		if (!left) {
			memset(p, ' ', pad);
			p += pad;
		}
		p = fmt_copy(p, c->c[k], c->n[k]);
		if (k == N_COLS - 1)
			break;
		if (left) {
			memset(p, ' ', pad);
			p += pad;
		}
		p = FMT_LIT(p, "  ");
	}
	*p++ = '\n';
	fwrite(line, 1, (size_t)(p - line), f);
}

static void widen(size_t *w, const struct cells *c)
{
	for (int k = 0; k < N_COLS; k++)
		if (c->n[k] > w[k])
			w[k] = c->n[k];
}

/* Two passes over the same rows: measure, then print. */
static void table(FILE *f, const struct probe_stats *rows, size_t n, struct totals *all)
{
	size_t w[N_COLS];
	struct cells c, head;

	for (int k = 0; k < N_COLS; k++) {
		set_text(&head, k, heads[k], strlen(heads[k]));
		w[k] = head.n[k];
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
		fill(&c, "all", all, "(total)", strlen("(total)"));
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
		task_text(task, rows[i].probe);
		fprintf(f, "exit probes, task %s, %.*s: %" PRIu64 " calls unwound (left by an "
			   "exception or longjmp: no duration), %" PRIu64 " entries untracked "
			   "(pending stack full)\n", task, (int)(l.n < 200 ? l.n : 200), l.s,
			rows[i].unwound, rows[i].untracked);
	}
	for (size_t i = 0; i < n; i++) {
		struct label l = probe_label(rows[i].probe);
		char task[32];

		if (!rows[i].running)
			continue;
		task_text(task, rows[i].probe);
		fprintf(f, "exit probes, task %s, %.*s: %" PRIu64 " call(s) still running at exit "
			   "(entered, no exit seen; the longest for %.3f s): no duration\n", task,
			(int)(l.n < 200 ? l.n : 200), l.s, rows[i].running,
			(double)rows[i].running_ns / 1e9);
	}
	for (size_t i = 0; i < n; i++) {
		struct label l = probe_label(rows[i].probe);
		char task[32];

		if (!rows[i].unpaired)
			continue;
		task_text(task, rows[i].probe);
		fprintf(f, "uretprobe, task %s, %.*s: %" PRIu64 " returns had no entry time (a "
			   "recursive call overwrote it, the LRU map evicted it, or the call began "
			   "before attach): no record\n", task, (int)(l.n < 200 ? l.n : 200), l.s,
			rows[i].unpaired);
	}
}

static void stack_mappings_text(FILE *f, const struct stack_mappings_report *m)
{
	if (m->lost || m->malformed || m->not_kept)
		fprintf(f, "WARNING: call stacks: %" PRIu64 " mapping records lost by the kernel, %"
			PRIu64 " malformed, %" PRIu64 " mappings or processes not kept: frames in "
			"them may read as unknown\n", m->lost, m->malformed, m->not_kept);
	if (m->files_unopened)
		fprintf(f, "WARNING: call stacks: %" PRIu64 " mapped files could not be opened "
			"before their process was gone: frames in them read as unknown\n",
			m->files_unopened);
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
	if (r)
		stack_mappings_text(f, &r->stack_mappings);
	exit_probe_text(f, rows, n);
	/* output errors: the caller says each once, as an error line */
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

static void stack_mappings_json(struct json_out *j, const struct stack_mappings_report *m)
{
	json_object_begin(j);
	json_key(j, "lost");
	json_u64(j, m->lost);
	json_key(j, "malformed");
	json_u64(j, m->malformed);
	json_key(j, "not_kept");
	json_u64(j, m->not_kept);
	json_key(j, "files_unopened");
	json_u64(j, m->files_unopened);
	json_object_end(j);
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
		  const struct sink_report *r, uint64_t run_ns, uint64_t boot_ns,
		  int64_t wall_ns)
{
	struct totals all = { 0 };

	for (size_t i = 0; i < n; i++)
		add(&all, &rows[i]);
	all.duration_ns = run_ns;
	json_object_begin(j);
	json_key(j, "type");
	json_cstring(j, "summary");
	json_key(j, "boot_ns");
	json_u64(j, boot_ns);
	json_key(j, "wall_ns");
	json_i64(j, wall_ns);
	json_key(j, "wall");
	jsonl_wall(j, wall_ns);
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
	if (r->stack_mappings.on) {
		json_key(j, "stack_mappings");
		stack_mappings_json(j, &r->stack_mappings);
	}
	json_key(j, "errors");
	json_array_begin(j);
	for (size_t i = 0; i < r->n_errors; i++)
		json_cstring(j, r->errors[i]);
	json_array_end(j);
	json_object_end(j);
}
