#include "sink/agg_out.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sink/jsonl_out.h"
#include "vocab/json_out.h"

#define BAR_WIDTH 52   /* bpftrace's */

/* 2^n with bpftrace's suffixes: 1K, 2M, 4G, … */
static void pow2_label(unsigned n, char *buf, size_t size)
{
	static const char suffix[] = " KMGTPE";
	unsigned unit = n / 10;

	if (unit >= sizeof(suffix) - 1)
		unit = sizeof(suffix) - 2;
	if (!unit)
		snprintf(buf, size, "%llu", 1ULL << n);
	else
		snprintf(buf, size, "%llu%c", 1ULL << (n - unit * 10), suffix[unit]);
}

const char *agg_bucket_label(unsigned b, char *buf, size_t size)
{
	char lo[24], hi[24];

	if (b < 2) {
		snprintf(buf, size, "[%u]", b);
		return buf;
	}
	pow2_label(b - 1, lo, sizeof(lo));
	if (b == AGG_BUCKETS - 1) {
		snprintf(buf, size, "[%s, ...)", lo);
		return buf;
	}
	pow2_label(b, hi, sizeof(hi));
	snprintf(buf, size, "[%s, %s)", lo, hi);
	return buf;
}

static void bar_line(struct outbuf *o, const char *label, uint64_t n, uint64_t max)
{
	size_t stars = max ? (size_t)((double)n * BAR_WIDTH / (double)max) : 0;
	char bar[BAR_WIDTH + 1];

	memset(bar, '@', stars);
	bar[stars] = '\0';
	outbuf_printf(o, "%-16s %8" PRIu64 " |%-*s|\n", label, n, BAR_WIDTH, bar);
}

void agg_print_bars(struct outbuf *o, const uint64_t hist[AGG_BUCKETS], uint64_t negative)
{
	int first = -1, last = -1;
	uint64_t max = negative;
	char label[48];

	for (int b = 0; b < AGG_BUCKETS; b++) {
		if (!hist[b])
			continue;
		if (first < 0)
			first = b;
		last = b;
		if (hist[b] > max)
			max = hist[b];
	}
	if (negative)
		bar_line(o, "(..., 0)", negative, max);
	for (int b = first; b >= 0 && b <= last; b++)
		bar_line(o, agg_bucket_label((unsigned)b, label, sizeof(label)), hist[b], max);
}

static bool has_hist(const struct agg_row *r)
{
	if (r->hist_negative)
		return true;
	for (int b = 0; b < AGG_BUCKETS; b++)
		if (r->hist[b])
			return true;
	return false;
}

/* Appends ", name value" (without the comma first) to buf at *n. */
static void key_part(char *buf, size_t size, size_t *n, const char *name, int64_t v)
{
	int w;

	if (*n >= size)
		return;
	w = snprintf(buf + *n, size - *n, "%s%s %" PRId64, *n ? ", " : "", name, v);
	if (w > 0)
		*n += (size_t)w;
}

/* Appends ", name text" (a name part: comm, process). */
static void key_name(char *buf, size_t size, size_t *n, const char *name, const char *text,
		     size_t max)
{
	int w;

	if (*n >= size)
		return;
	w = snprintf(buf + *n, size - *n, "%s%s %.*s", *n ? ", " : "", name, (int)max, text);
	if (w > 0)
		*n += (size_t)w;
}

/* The key as "process com.example, pid 12, comm RenderThread, arg2 5" (or
 * "total" for a probe keyed by nothing).  A process whose name could not be
 * read at all (rows of it are never merged) is "process ? (pid 12)". */
static void key_text(const struct agg_row *r, const struct agg_view *v, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	if ((v->by & AGG_PART_PROCESS) && r->process[0])
		key_name(buf, size, &n, "process", r->process, sizeof(r->process));
	else if (v->by & AGG_PART_PROCESS)
		n = (size_t)snprintf(buf, size, "process ? (pid %" PRIu32 ")", r->pid);
	if (v->by & AGG_PART_PID)
		key_part(buf, size, &n, "pid", r->pid);
	if (v->by & AGG_PART_COMM)
		key_name(buf, size, &n, "comm", r->comm, sizeof(r->comm));
	if (v->by & AGG_PART_TID)
		key_part(buf, size, &n, "tid", r->tid);
	if (v->by & AGG_PART_UID)
		key_part(buf, size, &n, "uid", r->uid);
	if (v->by & AGG_PART_ARG)
		key_part(buf, size, &n, v->arg_name, (int64_t)r->arg);
	if (v->by & AGG_PART_RET)
		key_part(buf, size, &n, "ret", (int64_t)r->ret);
	if (!n)
		snprintf(buf, size, "total");
}

static void print_header(struct outbuf *o, const struct agg_interval *iv)
{
	outbuf_printf(o, "=== %s interval %" PRIu64 " (%" PRIu64 ".%03u s, ending at %" PRIu64
		      ".%03u)\n", iv->final ? "final" : "aggregation", iv->seq,
		      iv->span_ns / 1000000000u, (unsigned)(iv->span_ns % 1000000000u / 1000000u),
		      iv->ts_ns / 1000000000u, (unsigned)(iv->ts_ns % 1000000000u / 1000000u));
}

static void print_probe_text(struct outbuf *o, const struct agg_interval *iv, uint32_t id,
			     size_t *i)
{
	const struct agg_view *v = &iv->views[id];
	char key[256];

	outbuf_printf(o, "%s [probe %" PRIu32 "]: count%s%s%s%s\n", v->method, id,
		      v->sum_name ? ", sum of " : "", v->sum_name ? v->sum_name : "",
		      v->hist_name ? ", histogram of " : "", v->hist_name ? v->hist_name : "");
	if (v->dropped)
		outbuf_printf(o, "  %" PRIu64 " hit(s) not (fully) counted: the aggregation map was "
			      "full (raise --agg-keys)\n", v->dropped);
	if (*i >= iv->n_rows || iv->rows[*i].probe_id != id)
		outbuf_puts(o, "  (no calls)\n");
	for (; *i < iv->n_rows && iv->rows[*i].probe_id == id; (*i)++) {
		const struct agg_row *r = &iv->rows[*i];
		key_text(r, v, key, sizeof(key));
		outbuf_printf(o, "  %-40s count %10" PRIu64, key, r->count);
		if (v->sum_name)
			outbuf_printf(o, "  sum %14" PRId64, r->sum);
		outbuf_putc(o, '\n');
		if (v->hist_name && has_hist(r))
			agg_print_bars(o, r->hist, r->hist_negative);
	}
}

void agg_print_text(struct outbuf *o, const struct agg_interval *iv)
{
	size_t i = 0;

	outbuf_event_begin(o);
	print_header(o, iv);
	for (uint32_t id = 0; id < iv->n_views; id++)
		if (iv->views[id].method)
			print_probe_text(o, iv, id, &i);
	outbuf_event_end(o, NULL);
}

/* "type":"aggregate" and the interval's end as an event row's time
 * (boot_ns, wall_ns, wall), and as "ts" (seconds since the epoch, ms). */
static void ts_field(struct json_out *j, const struct agg_interval *iv)
{
	uint64_t ns = iv->ts_ns;
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%" PRIu64 ".%03u", ns / 1000000000u,
			 (unsigned)(ns % 1000000000u / 1000000u));

	json_key(j, "type");
	json_cstring(j, "aggregate");
	json_key(j, "boot_ns");
	json_u64(j, iv->boot_ns);
	json_key(j, "wall_ns");
	json_i64(j, (int64_t)ns);
	json_key(j, "wall");
	jsonl_wall(j, (int64_t)ns);
	json_key(j, "ts");
	json_raw(j, buf, (size_t)n);
}

static void json_hist(struct json_out *j, const struct agg_row *r)
{
	json_key(j, "hist");
	json_array_begin(j);
	if (r->hist_negative) {
		json_object_begin(j);
		json_key(j, "max");
		json_i64(j, -1);
		json_key(j, "count");
		json_u64(j, r->hist_negative);
		json_object_end(j);
	}
	for (unsigned b = 0; b < AGG_BUCKETS; b++) {
		if (!r->hist[b])
			continue;
		json_object_begin(j);
		json_key(j, "min");
		json_u64(j, b < 2 ? b : 1ULL << (b - 1));
		if (b < AGG_BUCKETS - 1) {
			json_key(j, "max");
			json_u64(j, b < 2 ? b : (1ULL << b) - 1);
		}
		json_key(j, "count");
		json_u64(j, r->hist[b]);
		json_object_end(j);
	}
	json_array_end(j);
}

/* A name of at most max bytes (NUL-padded), null when empty. */
static void json_name(struct json_out *j, const char *name, size_t max)
{
	if (name[0])
		json_string(j, name, strnlen(name, max));
	else
		json_null(j);
}

static void json_row(struct json_out *j, const struct agg_interval *iv, const struct agg_row *r)
{
	const struct agg_view *v = &iv->views[r->probe_id];

	json_object_begin(j);
	ts_field(j, iv);
	json_key(j, "interval");
	json_u64(j, iv->seq);
	json_key(j, "probe");
	json_u64(j, r->probe_id);
	json_key(j, "method");
	json_cstring(j, v->method);
#define KEY(bit, name, emit)                                                           \
	if (v->by & (bit)) {                                                           \
		json_key(j, name);                                                     \
		emit;                                                                  \
	}
	KEY(AGG_PART_PROCESS, "process", json_name(j, r->process, sizeof(r->process)));
	if ((v->by & AGG_PART_PID) || ((v->by & AGG_PART_PROCESS) && !r->process[0])) {
		json_key(j, "pid");
		json_u64(j, r->pid);
	}
	KEY(AGG_PART_COMM, "comm", json_name(j, r->comm, sizeof(r->comm)));
	KEY(AGG_PART_TID, "tid", json_u64(j, r->tid));
	KEY(AGG_PART_UID, "uid", json_u64(j, r->uid));
	KEY(AGG_PART_ARG, v->arg_name, json_i64(j, (int64_t)r->arg));
	KEY(AGG_PART_RET, "ret", json_i64(j, (int64_t)r->ret));
#undef KEY
	json_key(j, "count");
	json_u64(j, r->count);
	if (v->sum_name) {
		json_key(j, "sum");
		json_i64(j, r->sum);
		json_key(j, "sum_of");
		json_cstring(j, v->sum_name);
	}
	if (v->hist_name) {
		json_key(j, "hist_of");
		json_cstring(j, v->hist_name);
		json_hist(j, r);
	}
	json_object_end(j);
	json_newline(j);
}

/* A probe whose hits found the map full says so in its own line. */
static void json_dropped(struct json_out *j, const struct agg_interval *iv, uint32_t id)
{
	json_object_begin(j);
	ts_field(j, iv);
	json_key(j, "interval");
	json_u64(j, iv->seq);
	json_key(j, "probe");
	json_u64(j, id);
	json_key(j, "method");
	json_cstring(j, iv->views[id].method);
	json_key(j, "dropped_map_full");
	json_u64(j, iv->views[id].dropped);
	json_object_end(j);
	json_newline(j);
}

void agg_print_jsonl(struct outbuf *o, const struct agg_interval *iv)
{
	struct json_out j;

	json_init(&j, o);
	/* The interval's lines are one event: written whole or lost whole
	 * (counted), never cut at a queue that a table printed at once fills. */
	outbuf_event_begin(o);
	for (uint32_t id = 0; id < iv->n_views; id++)
		if (iv->views[id].method && iv->views[id].dropped)
			json_dropped(&j, iv, id);
	for (size_t i = 0; i < iv->n_rows; i++)
		json_row(&j, iv, &iv->rows[i]);
	outbuf_event_end(o, NULL);
}
