// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Uprobestats — programs beyond upstream.
 *
 * call_return: a uretprobe that records the return value and the entry ->
 * return duration of each call; its companion uprobe call_return_entry
 * stores the entry time per (thread, probe).
 * call_latency: the same pairing, but the duration only goes into an
 * in-kernel log2 histogram per probe (no record per call).
 * call_args: call_detail plus the text of up to four java.lang.String
 * arguments (which registers hold them is set per probe in ups_cfg). */
#include "ups_bpf.h"

UPS_OUTPUT(call_return_buf);
UPS_OUTPUT(call_args_buf);

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct ups_entry_key);
	__type(value, __u64);
} entry_times SEC(".maps");

/* probe_id * UPS_HIST_SLOTS + log2(duration) -> count; resized before load. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UPS_HIST_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} latency_hist SEC(".maps");

static __always_inline int store_entry(void)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct ups_entry_key key = { .tid = (__u32)pid_tgid, .probe_id = UPS_CFG(probe_id) };
	__u64 now, *slot;

	if (!ups_enter(pid_tgid))
		return 0;
	now = bpf_ktime_get_ns();
	/* A thread's slot stays in the map between calls (take_entry zeroes it
	 * instead of deleting): writing in place costs a lookup, where an
	 * update allocates an LRU node and a delete frees it, twice as much. */
	slot = bpf_map_lookup_elem(&entry_times, &key);
	if (slot)
		*slot = now;
	else
		bpf_map_update_elem(&entry_times, &key, &now, BPF_ANY);
	return 0;
}

/* Returns the entry time and forgets it; 0 when the entry was not seen
 * (attached mid-call, filtered, or evicted). */
static __always_inline __u64 take_entry(__u64 pid_tgid)
{
	struct ups_entry_key key = { .tid = (__u32)pid_tgid, .probe_id = UPS_CFG(probe_id) };
	__u64 *ts = bpf_map_lookup_elem(&entry_times, &key);
	__u64 entry;

	if (!ts)
		return 0;
	entry = *ts;
	*ts = 0;
	return entry;
}

SEC("uprobe/call_return_entry")
int call_return_entry(void *ctx)
{
	return store_entry();
}

SEC("uretprobe/call_return")
int call_return(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 entry = take_entry(pid_tgid);
	struct rec_call_return *rec;

	if (!entry)
		return 0;
	rec = UPS_RESERVE(call_return_buf, struct rec_call_return);
	if (!rec)
		return 0;
	ups_fill_envelope(&rec->env, pid_tgid, UPS_REC_CALL_RETURN);
	rec->r.return_value = UPS_RET(ctx);
	rec->r.entry_ns = entry;
	rec->r.duration_ns = rec->env.ktime_ns - entry;
	UPS_SUBMIT(ctx, call_return_buf, rec);
	return 0;
}

static __always_inline __u32 log2_slot(__u64 v)
{
	__u32 slot = 0;

#pragma unroll
	for (int shift = 32; shift > 0; shift >>= 1) {
		if (v >= (1ULL << shift)) {
			v >>= shift;
			slot += shift;
		}
	}
	return slot < UPS_HIST_SLOTS ? slot : UPS_HIST_SLOTS - 1;
}

SEC("uprobe/call_latency_entry")
int call_latency_entry(void *ctx)
{
	return store_entry();
}

SEC("uretprobe/call_latency")
int call_latency(void *ctx)
{
	__u64 entry = take_entry(bpf_get_current_pid_tgid());
	__u32 key;
	__u64 *count;

	if (!entry)
		return 0;
	key = UPS_CFG(probe_id) * UPS_HIST_SLOTS + log2_slot(bpf_ktime_get_ns() - entry);
	count = bpf_map_lookup_elem(&latency_hist, &key);
	if (count)
		*count += 1;
	return 0;
}

SEC("uprobe/call_args")
int call_args(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct rec_call_args *rec;

	if (!ups_enter(pid_tgid))
		return 0;
	rec = UPS_RESERVE(call_args_buf, struct rec_call_args);
	if (!rec)
		return 0;
	ups_fill_envelope(&rec->env, pid_tgid, UPS_REC_CALL_ARGS);
	rec->a.r.pc = UPS_PC(ctx);
#pragma unroll
	for (int i = 0; i < 10; i++)
		rec->a.r.regs[i] = i < UPS_NUM_ARG_REGS ? UPS_ARG(ctx, i) : 0;
	rec->a.pad = 0;
#pragma unroll
	for (int k = 0; k < UPS_ARG_STRINGS; k++) {
		/* Constants to the verifier: it prunes unused slots. */
		__u8 reg = UPS_CFG_AT(string_reg, k);
		rec->a.string_pos[k] = UPS_CFG_AT(string_pos, k);
		rec->a.strings[k][0] = 0;
		/* From the copied registers: indexing the context by a variable
		 * would be a modified-ctx dereference the verifier refuses. */
		if (reg < UPS_NUM_ARG_REGS)
			ups_read_jstring(rec->a.strings[k], UPS_ARG_STRING_LEN,
					 UPS_UNTAG(UPS_REF(rec->a.r.regs[reg])));
	}
	UPS_SUBMIT(ctx, call_args_buf, rec);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
