/* records.h — every record that crosses the kernel/user boundary, declared once
 * for both the BPF programs and user space.
 *
 * Each ring-buffer record is an envelope (who, when, which probe) followed by
 * the upstream UprobeStats payload, byte for byte as upstream lays it out
 * (uprobestats-upstream.md §3).  Upstream payloads carry no pid/tid/probe, which
 * a standalone tool needs to attribute events, hence the envelope.  Sizes are
 * asserted below; user space checks each record's length before decoding. */
#ifndef UPROBESTATS_BPF_RECORDS_H
#define UPROBESTATS_BPF_RECORDS_H

#ifdef __bpf__
#include <linux/types.h>
#else
#include <linux/types.h>
#endif

#define UPS_COMM_LEN 16
#define UPS_MAX_PROBES 4096

enum ups_record_kind {
	UPS_REC_CALL_DETAIL = 1,
	UPS_REC_CALL_TIMESTAMP = 2,
	UPS_REC_CALL_RETURN = 100,   /* beyond upstream: kinds >= 100 are ours */
};

#define UPS_HIST_SLOTS 64        /* log2(ns) buckets per probe */

struct ups_envelope {
	__u64 ktime_ns;          /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 pid;               /* tgid */
	__u32 tid;
	__u32 probe_id;          /* index into the run's probe table */
	__u32 kind;              /* enum ups_record_kind */
	char comm[UPS_COMM_LEN]; /* thread name */
};

/* GenericInstrumentation CallResult: pc, then the first ten argument
 * registers (x0..x9 on arm64; rdi, rsi, rdx, rcx, r8, r9 then zeros on
 * x86_64, which is both the C and the ART managed argument order there). */
struct call_result {
	__u64 pc;
	__u64 regs[10];
};

/* GenericInstrumentation CallTimestamp: event id from the program's suffix
 * (0 for call_timestamp, N for call_timestamp_N), monotonic ns. */
struct call_timestamp {
	__u32 event;
	__u32 pad;
	__u64 timestamp_ns;
};

/* Uprobestats (beyond upstream) call_return: one record per completed call,
 * from a uretprobe paired with an entry uprobe on the same function. */
struct call_return {
	__u64 return_value;      /* x0 / rax at return */
	__u64 duration_ns;       /* entry -> return, same thread */
	__u64 entry_ns;          /* monotonic time of the entry */
};

struct rec_call_return {
	struct ups_envelope env;
	struct call_return r;
};

/* Entry timestamps of calls in flight, keyed by thread and probe. */
struct ups_entry_key {
	__u32 tid;
	__u32 probe_id;
};

struct rec_call_detail {
	struct ups_envelope env;
	struct call_result r;
};

struct rec_call_timestamp {
	struct ups_envelope env;
	struct call_timestamp t;
};

/* Per-probe counters (a per-CPU array indexed by probe_id). */
struct ups_probe_counters {
	__u64 hits;              /* program invocations that passed the filters */
	__u64 drops;             /* ring-buffer reservations that failed */
};

/* The only read-only global of every program object, set per probe before
 * load.  Kept as one struct at offset 0 of .rodata so user space can fill it
 * without BTF. */
struct ups_prog_config {
	__u32 probe_id;
	__u32 wakeup_bytes;      /* force a consumer wakeup once this much is pending */
	__u32 filter_pids;       /* 1: only tgids present in the target_pids map */
	__u32 use_perfbuf;       /* 1: perf event array instead of ring buffer */
};

#define UPS_ASSERT_SIZE(type, size) \
	_Static_assert(sizeof(type) == (size), "unexpected size of " #type)

UPS_ASSERT_SIZE(struct ups_envelope, 40);
UPS_ASSERT_SIZE(struct call_result, 88);
UPS_ASSERT_SIZE(struct call_timestamp, 16);
UPS_ASSERT_SIZE(struct rec_call_detail, 128);
UPS_ASSERT_SIZE(struct rec_call_timestamp, 56);
UPS_ASSERT_SIZE(struct ups_probe_counters, 16);
UPS_ASSERT_SIZE(struct call_return, 24);
UPS_ASSERT_SIZE(struct rec_call_return, 64);
UPS_ASSERT_SIZE(struct ups_entry_key, 8);
UPS_ASSERT_SIZE(struct ups_prog_config, 16);

#endif
