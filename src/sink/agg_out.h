/* agg_out.h — printing in-kernel aggregations (probe/aggregate.h reads
 * them): per interval a text table per probe with its histograms as
 * bpftrace-style bars, or JSON Lines, one object per key per interval. */
#ifndef UPROBESTATS_SINK_AGG_OUT_H
#define UPROBESTATS_SINK_AGG_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vocab/outbuf.h"

/* Histogram buckets: [0], [1], then [2^(b-1), 2^b) for b = 2..64. */
#define AGG_BUCKETS 65

/* Key parts (the same bits as records.h enum ups_agg_by). */
enum agg_part {
	AGG_PART_PID = 1,
	AGG_PART_TID = 2,
	AGG_PART_UID = 4,
	AGG_PART_ARG = 8,
	AGG_PART_RET = 16,
	AGG_PART_COMM = 32,              /* the calling thread's comm */
	AGG_PART_PROCESS = 64,           /* the process's name (rows of one name merged) */
};

#define AGG_COMM_LEN 16                  /* the kernel's TASK_COMM_LEN */
#define AGG_NAME_LEN 96                  /* a process name, as sys/name_cache keeps it */

struct agg_row {
	uint32_t probe_id;
	uint32_t pid, tid, uid;
	uint64_t arg, ret;
	char comm[AGG_COMM_LEN];         /* AGG_PART_COMM; NUL-padded */
	char process[AGG_NAME_LEN];      /* AGG_PART_PROCESS: the name ("" when unknown) */
	uint64_t count;
	int64_t sum;
	uint64_t hist[AGG_BUCKETS];
	uint64_t hist_negative;          /* values below 0 */
};

/* How one probe's rows are labelled. */
struct agg_view {
	const char *method;
	uint32_t by;                     /* enum agg_part bits */
	const char *arg_name;            /* "arg2": the ARG key part */
	const char *sum_name;            /* "arg1", "ret", "latency_ns"; NULL: no sum */
	const char *hist_name;           /* NULL: no histogram */
	uint64_t dropped;                /* hits this interval whose key found the map full */
};

struct agg_interval {
	uint64_t seq;                    /* 1, 2, … */
	uint64_t ts_ns;                  /* CLOCK_REALTIME at the interval's end */
	uint64_t boot_ns;                /* CLOCK_BOOTTIME at the interval's end */
	uint64_t span_ns;                /* the interval's length */
	bool final;                      /* the last one, at exit */
	const struct agg_row *rows;      /* sorted by probe, then key */
	size_t n_rows;
	const struct agg_view *views;    /* by probe id; views[i].method NULL: not aggregating */
	size_t n_views;
};

void agg_print_text(struct outbuf *o, const struct agg_interval *iv);
void agg_print_jsonl(struct outbuf *o, const struct agg_interval *iv);
/* One histogram as bpftrace prints it (first to last used bucket). */
void agg_print_bars(struct outbuf *o, const uint64_t hist[AGG_BUCKETS], uint64_t negative);
/* "[0]", "[1]", "[4, 8)", "[1K, 2K)": bucket b's label into buf. */
const char *agg_bucket_label(unsigned b, char *buf, size_t size);

#endif
